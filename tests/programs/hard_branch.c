/* A branch no solver decides quickly (four rounds of BLAKE2b's mixing function over two
   symbolic words equal a constant?), then an easy one. Exit 1: the constant (never found in
   time); 2: c's low byte is 7; 0: otherwise. c is independent of a and b: its question
   leaves the hard constraint out. */
#include <klee/klee.h>
#include "blake2b_mix.h"

int main(void) {
  uint64_t a, b, c;
  klee_make_symbolic(&a, sizeof a, "a");
  klee_make_symbolic(&b, sizeof b, "b");
  klee_make_symbolic(&c, sizeof c, "c");
  if (blake2b_mix(a, b) == 0x123456789abcdef0ull)
    return 1;
  if ((c & 0xff) == 7)
    return 2;
  return 0;
}
