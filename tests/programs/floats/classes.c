/* A float (or, with -DWIDE, a double) made of 16 symbolic high bits: every class of float in
 * 65,536 inputs, few enough to enumerate natively. With -DENUMERATE, main runs classify() on
 * every input and prints each outcome reached and how often; without, on one symbolic input. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#ifdef WIDE
typedef double real;
typedef uint64_t word;
#else
typedef float real;
typedef uint32_t word;
#endif

static int classify(uint16_t high) {
  word bits = (word)high << (8 * sizeof(word) - 16);
  real f;
  memcpy(&f, &bits, sizeof f);
  if (f != f) return 1;
  if (f * 2 == f) {                          /* zeros and infinities */
    if (f != 0) return 4;
    if (signbit(f)) return 2;
    return 3;
  }
  if (f + 1 == f) return 5;                  /* 1 is lost in the sum */
  if (f * f == 0) return 6;                  /* the square underflows */
  if ((int)f == 3) return 7;
  if (f / 3 > (real)1e30) return 8;          /* unreachable for float: 5 took them */
  if (isinf(f * f * f)) return 9;            /* the cube overflows */
  if (f < -1) return 10;
  if (f > 0 && f < 1e-30) return 11;
  return 12;
}

#ifdef ENUMERATE
int main(void) {
  static int seen[13];
  for (uint32_t high = 0; high < 65536; high++)
    seen[classify((uint16_t)high)]++;
  for (int outcome = 0; outcome < 13; outcome++)
    if (seen[outcome]) printf("%d %d\n", outcome, seen[outcome]);
  return 0;
}
#else
#include <klee/klee.h>
int main(void) {
  uint16_t high;
  klee_make_symbolic(&high, sizeof high, "high");
  printf("%d\n", classify(high));
  return 0;
}
#endif
