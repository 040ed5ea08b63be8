/* Four rounds of BLAKE2b's mixing function over two 64-bit words, folded to one: a value
   whose equality with a constant no solver decides quickly (hard_branch.c, hard_site.c;
   the tests compute it again in Python). */
#include <stdint.h>

static uint64_t rotr(uint64_t x, int n) { return (x >> n) | (x << (64 - n)); }

static uint64_t blake2b_mix(uint64_t a, uint64_t b) {
  uint64_t v0 = a, v1 = b, v2 = 0x6a09e667f3bcc908ull, v3 = 0xbb67ae8584caa73bull;
  for (int round = 0; round < 4; round++) {
    v0 += v1; v3 = rotr(v3 ^ v0, 32); v2 += v3; v1 = rotr(v1 ^ v2, 24);
    v0 += v1; v3 = rotr(v3 ^ v0, 16); v2 += v3; v1 = rotr(v1 ^ v2, 63);
    uint64_t t = v0; v0 = v1; v1 = v2; v2 = v3; v3 = t;
  }
  return v0 ^ v1 ^ v2 ^ v3;
}
