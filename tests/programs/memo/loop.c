/* A loop over a symbolic string: one path per length (25 in all), each one symbolic branch
 * deeper than the last, so --max-depth D leaves D paths completed and the rest cut. */
#include <klee/klee.h>

int main(void) {
  char s[24];
  klee_make_symbolic(s, sizeof s, "s");
  int n = 0;
  while (n < 24 && s[n] != 0)
    n++;
  return n;
}
