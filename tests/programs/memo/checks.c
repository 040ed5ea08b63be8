/* Every kind of decision a recorded tree holds: branches between symbolic bytes (solver
 * queries), an error check (division by zero), a symbolic index into an array (bounds
 * check), a switch, and a printf of a symbolic value (a value concretized from the inputs). */
#include <stdio.h>
#include <klee/klee.h>

static int table[8] = {1, 2, 3, 4, 5, 6, 7, 8};

int main(void) {
  unsigned char b[4];
  klee_make_symbolic(b, sizeof b, "b");
  int r = 0;
  for (int i = 0; i < 3; i++)
    if (b[i] > b[i + 1])
      r++;
  if (b[0] == 7)
    r = 100 / (b[1] - b[2]);
  if (b[3] < 10)
    r += table[b[3]];
  switch (b[1] & 3) {
  case 0: r += 10; break;
  case 1: r += 20; break;
  default: break;
  }
  if (r == 3)
    printf("%d\n", b[2]);
  return r & 0xff;
}
