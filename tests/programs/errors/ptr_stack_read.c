/* Out-of-bounds read of a stack array: the range check in main is off by one, so
 * index 8 reads one element past the end of `table` (in pick). */
#include <klee/klee.h>

static int pick(const int *table, unsigned char index) {
  return table[index]; /* BUG: index 8 is past the end of the 8-element table */
}

int main(void) {
  int table[8];
  unsigned char index;
  klee_make_symbolic(table, sizeof table, "table");
  klee_make_symbolic(&index, sizeof index, "index");
  if (index > 8) /* should be index >= 8 */
    return 1;
  return pick(table, index) > 0 ? 2 : 0;
}
