/* Out-of-bounds write to a heap buffer: 8 slots are malloc'd, but main's range check lets
 * slot 8 through, and record then writes one element past the end. */
#include <klee/klee.h>
#include <stdlib.h>
#include <string.h>

static void record(int *slots, unsigned slot, int value) {
  slots[slot] = value; /* BUG: slot 8 writes past the end of the 8-slot buffer */
}

int main(void) {
  unsigned slot;
  klee_make_symbolic(&slot, sizeof slot, "slot");
  int *slots = malloc(8 * sizeof *slots);
  if (slots == NULL)
    return 1;
  memset(slots, 0, 8 * sizeof *slots);
  if (slot <= 8) /* should be slot < 8 */
    record(slots, slot, 7);
  int total = slots[0] + slots[7];
  free(slots);
  return total;
}
