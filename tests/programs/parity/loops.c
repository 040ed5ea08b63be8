/* Loops whose trip counts and exits depend on the input. */
#include <klee/klee.h>

int main(void) {
  unsigned char in[2];
  klee_make_symbolic(in, sizeof in, "in");
  int steps = 0;
  for (int i = 0; i < (in[0] & 7); i++) {
    if (i == (in[1] & 3))
      break;
    steps += i;
  }
  int j = 0;
  while (j < 3 && in[1] > 40 * j)
    j++;
  return steps + j;
}
