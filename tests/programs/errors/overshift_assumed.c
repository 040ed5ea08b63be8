/* Oversized shift after klee_assume pins the shift amount: width is assumed to be 32, and
 * low_mask shifts a 32-bit value by it. */
#include <klee/klee.h>

static unsigned low_mask(unsigned width) {
  return (1u << width) - 1u; /* BUG: width is 32, the full width of unsigned */
}

int main(void) {
  unsigned width;
  klee_make_symbolic(&width, sizeof width, "width");
  klee_assume(width == 32);
  return low_mask(width) != 0;
}
