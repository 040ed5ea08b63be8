/* Division by zero: the average of an empty set of samples divides by count == 0. */
#include <klee/klee.h>

static unsigned average(unsigned total, unsigned count) {
  return total / count; /* BUG: count is 0 when there are no samples */
}

int main(void) {
  unsigned total, count;
  klee_make_symbolic(&total, sizeof total, "total");
  klee_make_symbolic(&count, sizeof count, "count");
  return average(total, count) > 100;
}
