/* N independent symbolic comparisons: exactly 2^N paths. */
#include <klee/klee.h>
#ifndef N
#define N 8
#endif

int main(void) {
  unsigned char b[N];
  int count = 0;
  klee_make_symbolic(b, sizeof b, "b");
  for (int i = 0; i < N; i++) {
    if (b[i] > 100)
      count++;
  }
  return count;
}
