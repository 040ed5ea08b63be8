/* Run-length decoding of a symbolic buffer (count, byte pairs; a zero count ends it),
 * then an Adler-32 checksum of the output with branches on the result. */
#include <klee/klee.h>

#define IN 8
#define OUT 16

int main(void) {
  unsigned char in[IN];
  unsigned char out[OUT];
  unsigned n = 0, i, j;
  klee_make_symbolic(in, sizeof in, "in");
  for (i = 0; i + 1 < IN; i += 2) {
    unsigned count = in[i];
    if (count == 0)
      break;
    if (count > 4)
      return 1; /* malformed run */
    if (n + count > OUT)
      return 2; /* output overflow */
    for (j = 0; j < count; j++)
      out[n++] = in[i + 1];
  }
  unsigned a = 1, b = 0;
  for (i = 0; i < n; i++) {
    a = (a + out[i]) % 65521;
    b = (b + a) % 65521;
  }
  unsigned adler = (b << 16) | a;
  if ((adler & 0xff) == 0x5a)
    return 3;
  if (adler == 0x06200100)
    klee_assert(0);
  return 0;
}
