/* Nested and recursive calls whose depth and results depend on the input. */
#include <klee/klee.h>

static int digits(unsigned v) {
  if (v < 10)
    return 1;
  return 1 + digits(v / 10);
}

static int classify(int a, int b) {
  if (a == b)
    return 0;
  return a < b ? -1 : 1;
}

int main(void) {
  unsigned char in[2];
  klee_make_symbolic(in, sizeof in, "in");
  int d = digits(in[0]);
  int c = classify(d, digits(in[1]));
  if (c == 0 && in[0] == in[1])
    return 5;
  return c + d;
}
