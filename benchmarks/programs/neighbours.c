/* 2^N paths whose branches compare neighbouring symbolic bytes, b[i] > b[i+1]: unlike
 * independent branches, no branch is decided by a simple range check, so every query
 * reaches the solver (the third KLEE comparison program in docs/benchmarks.md). */
#include <klee/klee.h>
#ifndef N
#define N 10
#endif

int main(void) {
  unsigned char b[N + 1];
  int count = 0;
  klee_make_symbolic(b, sizeof b, "b");
  for (int i = 0; i < N; i++) {
    if (b[i] > b[i + 1])
      count++;
  }
  return count;
}
