/* sin has no floating-point theory: its argument is fixed to one value the path allows. */
#include <klee/klee.h>
#include <math.h>
#include <stdio.h>
int main(void) {
  double x;
  klee_make_symbolic(&x, sizeof x, "x");
  if (x > 1.0 && x < 2.0) {
    if (sin(x) > 0.95) printf("high\n");
    else printf("low\n");
  }
  return 0;
}
