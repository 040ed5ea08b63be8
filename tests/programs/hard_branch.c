/* A branch no solver decides quickly (four rounds of BLAKE2b's mixing function over two
   symbolic words equal a constant?), then an easy one. Exit 1: the constant (never found in
   time); 2: c's low byte is 7; 0: otherwise. c is independent of a and b: its question
   leaves the hard constraint out. */
#include <stdint.h>
#include <klee/klee.h>

static uint64_t rotr(uint64_t x, int n) { return (x >> n) | (x << (64 - n)); }

int main(void) {
  uint64_t a, b, c;
  klee_make_symbolic(&a, sizeof a, "a");
  klee_make_symbolic(&b, sizeof b, "b");
  klee_make_symbolic(&c, sizeof c, "c");
  uint64_t v0 = a, v1 = b, v2 = 0x6a09e667f3bcc908ull, v3 = 0xbb67ae8584caa73bull;
  for (int round = 0; round < 4; round++) {
    v0 += v1; v3 = rotr(v3 ^ v0, 32); v2 += v3; v1 = rotr(v1 ^ v2, 24);
    v0 += v1; v3 = rotr(v3 ^ v0, 16); v2 += v3; v1 = rotr(v1 ^ v2, 63);
    uint64_t t = v0; v0 = v1; v1 = v2; v2 = v3; v3 = t;
  }
  if ((v0 ^ v1 ^ v2 ^ v3) == 0x123456789abcdef0ull)
    return 1;
  if ((c & 0xff) == 7)
    return 2;
  return 0;
}
