/* Provably false klee_assume: on the path where x > 100, x < 50 cannot hold. */
#include <klee/klee.h>

static int clamp_small(int x) {
  if (x > 100)
    klee_assume(x < 50); /* BUG: contradicts x > 100 */
  return x;
}

int main(void) {
  int x;
  klee_make_symbolic(&x, sizeof x, "x");
  return clamp_small(x) == 7;
}
