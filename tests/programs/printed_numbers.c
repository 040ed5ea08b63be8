/* Symbolic numbers printed by musl's printf (env/printed_values.py): a computed one to a
   stream (fixed to one value), one read as it is to a stream and a computed one formatted
   into memory (both fork on their number of digits). Exit status: the length of the
   string snprintf made. */
#include <stdio.h>
#include <string.h>
#include <klee/klee.h>

/* the bits of the computed number printed (fewer: fewer digit counts to fork on) */
#ifndef MIX_MASK
#define MIX_MASK 0xffffffffu
#endif

/* about 150 operations: a number computed from its input, as a checksum is */
static unsigned mix(unsigned v) {
  for (int i = 0; i < 48; i++)
    v = (v ^ (v << 3)) + 0x9e3779b9u;
  return v;
}

int main(void) {
  unsigned x, z;
  unsigned char y;
  char text[16];
  klee_make_symbolic(&x, sizeof x, "x");
  klee_make_symbolic(&y, sizeof y, "y");
  klee_make_symbolic(&z, sizeof z, "z");
  printf("%u\n", mix(x) & MIX_MASK);                   /* computed, to a stream: fixed */
  printf("%x\n", y);                                   /* as it is: 0, 1 or 2 digits */
  snprintf(text, sizeof text, "%x", mix(z) & 0xfff);   /* into memory: 0, 1, 2, 3 digits */
  return (int)strlen(text);
}
