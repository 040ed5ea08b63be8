/* Reads and writes through pointers into arrays at symbolic indices, then branches on what
 * was read. */
#include <klee/klee.h>

static const int table[8] = {3, 1, 4, 1, 5, 9, 2, 6};

int main(void) {
  unsigned char in[2];
  klee_make_symbolic(in, sizeof in, "in");
  int buffer[4] = {0, 0, 0, 0};
  const int *p = &table[in[0] & 7];
  buffer[in[1] & 3] = *p;
  int *q = buffer + (in[0] >> 6);
  if (*q > 4)
    return 1;
  if (*q == 1)
    return 2;
  return buffer[0] == 0 ? 3 : 4;
}
