/* One branch site asked twelve hopeless questions on one path: is four rounds of BLAKE2b's
   mixing of two symbolic words equal to each of twelve constants? (z3 answers unknown after
   seconds, as in hard_branch.c.) The exit status counts the constants met: 0 on every
   path a solver could find. */
#include <stdint.h>
#include <klee/klee.h>

static uint64_t rotr(uint64_t x, int n) { return (x >> n) | (x << (64 - n)); }

int main(void) {
  uint64_t a, b;
  klee_make_symbolic(&a, sizeof a, "a");
  klee_make_symbolic(&b, sizeof b, "b");
  uint64_t v0 = a, v1 = b, v2 = 0x6a09e667f3bcc908ull, v3 = 0xbb67ae8584caa73bull;
  for (int round = 0; round < 4; round++) {
    v0 += v1; v3 = rotr(v3 ^ v0, 32); v2 += v3; v1 = rotr(v1 ^ v2, 24);
    v0 += v1; v3 = rotr(v3 ^ v0, 16); v2 += v3; v1 = rotr(v1 ^ v2, 63);
    uint64_t t = v0; v0 = v1; v1 = v2; v2 = v3; v3 = t;
  }
  uint64_t h = v0 ^ v1 ^ v2 ^ v3;
  int met = 0;
  for (uint64_t k = 1; k <= 12; k++)
    if (h == k * 0x9e3779b97f4a7c15ull)   /* the site */
      met++;
  return met;
}
