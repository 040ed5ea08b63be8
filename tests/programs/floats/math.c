/* The C math functions the floating-point theory computes exactly, on symbolic inputs from
 * the SV-COMP input functions (one chain of tests per input; a match of the first ends the
 * path, so paths add, not multiply). */
#include <math.h>
#include <stdio.h>
#include <symex.h>
int main(void) {
  double x = __VERIFIER_nondet_double();
  float y = __VERIFIER_nondet_float();
  if (!(x > -100.0 && x < 100.0)) return 1;
  if (floor(x) == 3.0 && ceil(x) == 4.0) return printf("between 3 and 4\n") < 0;
  else if (round(x) == -2.0 && trunc(x) == -2.0 && x != -2.0) return printf("near -2\n") < 0;
  else if (sqrt(x) == 5.0) return printf("twenty-five\n") < 0;
  else if (lrint(x) == 7) return printf("rints to 7\n") < 0;
  else if (copysign(1.0, x) < 0.0 && fabs(x) == 0.0) return printf("negative zero\n") < 0;
  else if (fmin(x, (double)y) == (double)y && y < -1000.0f) return printf("y smaller\n") < 0;
  if (fmodf(y, 2.0f) == -1.5f) printf("fmod\n");
  else if (fmaf(y, y, 1.0f) == 2.0f) printf("fma\n");
  else if (rintf(y) == 0.5f) printf("never: rint gives an integer\n");
  else if (fpclassify(y) == FP_SUBNORMAL) printf("subnormal y\n");
  return 0;
}
