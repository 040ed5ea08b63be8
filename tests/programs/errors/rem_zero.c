/* Remainder by zero: a hash table with zero buckets computes key % 0. */
#include <klee/klee.h>

static unsigned bucket_of(unsigned key, unsigned buckets) {
  return key % buckets; /* BUG: buckets may be 0 */
}

int main(void) {
  unsigned key, buckets;
  klee_make_symbolic(&key, sizeof key, "key");
  klee_make_symbolic(&buckets, sizeof buckets, "buckets");
  return bucket_of(key, buckets) == 3;
}
