/* Oversized shift: low_bits(v, 32) shifts a 32-bit value by 32 (the check allows bits == 32). */
#include <klee/klee.h>

static unsigned low_bits(unsigned value, unsigned bits) {
  return value & ((1u << bits) - 1u); /* BUG: bits == 32 shifts by the full width */
}

int main(void) {
  unsigned value, bits;
  klee_make_symbolic(&value, sizeof value, "value");
  klee_make_symbolic(&bits, sizeof bits, "bits");
  if (bits > 32) /* should be bits >= 32 */
    return 1;
  return low_bits(value, bits) == 0x5au;
}
