/* A pointer the path has fixed in a way no solver sees quickly: h, a hash of a and b, is
   pinned to the inputs' value (as cksum's checksum is, printed), so a's low byte, which
   indexes the table, is fixed too, but proving it is a preimage question. Asking whether
   the pointer can be another number only saves work, so the question is cut short and the
   read is made at a symbolic offset; the path completes. Exit status: the byte read. */
#include <klee/klee.h>
#include "blake2b_mix.h"

static unsigned char table[256];

int main(void) {
  uint64_t a, b;
  klee_make_symbolic(&a, sizeof a, "a");
  klee_make_symbolic(&b, sizeof b, "b");
  for (int i = 0; i < 256; i++)
    table[i] = (unsigned char)(i * 37 + 11);
  uint64_t h = blake2b_mix(a, b);
  klee_assume(h == klee_get_value_i64(h));
  return table[a & 255];
}
