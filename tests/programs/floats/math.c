/* The C math functions the floating-point theory computes exactly, on symbolic inputs from
 * the SV-COMP input functions (one chain of tests per input, so paths add, not multiply). */
#include <math.h>
#include <stdio.h>
#include <symex.h>
int main(void) {
  double x = __VERIFIER_nondet_double();
  float y = __VERIFIER_nondet_float();
  if (!(x > -100.0 && x < 100.0)) return 1;
  if (floor(x) == 3.0 && ceil(x) == 4.0) printf("between 3 and 4\n");
  else if (round(x) == -2.0 && trunc(x) == -2.0 && x != -2.0) printf("near -2\n");
  else if (sqrt(x) == 5.0) printf("twenty-five\n");
  else if (lrint(x) == 7) printf("rints to 7\n");
  else if (copysign(1.0, x) < 0.0 && fabs(x) == 0.0) printf("negative zero\n");
  else if (fmin(x, (double)y) == (double)y && y < -1000.0f) printf("y smaller\n");
  if (fmodf(y, 2.0f) == -1.5f) printf("fmod\n");
  else if (fmaf(y, y, 1.0f) == 2.0f) printf("fma\n");
  else if (rintf(y) == 0.5f) printf("never: rint gives an integer\n");
  else if (fpclassify(y) == FP_SUBNORMAL) printf("subnormal y\n");
  return 0;
}
