#include <klee/klee.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
int main(void) {
  double x, y;
  klee_make_symbolic(&x, sizeof x, "x");
  klee_make_symbolic(&y, sizeof y, "y");
  int sig = 0;
  if (isnan(x)) sig = 1;
  else if (isinf(x)) sig = x > 0 ? 2 : 3;
  else if (x == 0.0) sig = signbit(x) ? 4 : 5;
  else if (fabs(x) < 0x1p-1022) sig = 6;             /* subnormal */
  else if (x + y == x && y != 0.0) sig = 7;           /* y lost in the sum */
  else if (x * y > 1e300) sig = 8;
  else if (x / y < -2.5 && x - y > 0.0) sig = 9;
  else sig = 10;
  printf("sig %d\n", sig);
  return 0;
}
