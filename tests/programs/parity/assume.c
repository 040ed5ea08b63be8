/* Assumptions prune paths: only inputs with 10 < x < 200 and y even exist. */
#include <klee/klee.h>

int main(void) {
  unsigned char x, y;
  klee_make_symbolic(&x, 1, "x");
  klee_make_symbolic(&y, 1, "y");
  klee_assume(x > 10);
  klee_assume(x < 200);
  klee_assume((y & 1) == 0);
  if (x < 20)
    return 1;
  if (y == 2 * x)
    return 2;
  if (x > 150 && y < 4)
    return 3;
  return 0;
}
