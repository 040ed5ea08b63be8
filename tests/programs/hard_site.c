/* One branch site asked twelve hopeless questions on one path: is four rounds of BLAKE2b's
   mixing of two symbolic words equal to each of twelve constants? (z3 answers unknown after
   seconds, as in hard_branch.c.) The exit status counts the constants met: 0 on every
   path a solver could find. */
#include <klee/klee.h>
#include "blake2b_mix.h"

int main(void) {
  uint64_t a, b;
  klee_make_symbolic(&a, sizeof a, "a");
  klee_make_symbolic(&b, sizeof b, "b");
  uint64_t h = blake2b_mix(a, b);
  int met = 0;
  for (uint64_t k = 1; k <= 12; k++)
    if (h == k * 0x9e3779b97f4a7c15ull)   /* the site */
      met++;
  return met;
}
