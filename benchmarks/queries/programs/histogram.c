/* Many writes at symbolic indices: a histogram of symbolic bytes' low bits
 * (counts[buf[i] & 7]++), then branches on the counts. */
#include <klee/klee.h>

#define N 5

int main(void) {
  unsigned char buf[N];
  unsigned char counts[8] = {0};
  int i;
  klee_make_symbolic(buf, sizeof buf, "buf");
  for (i = 0; i < N; i++)
    counts[buf[i] & 7]++;
  int shape = 0;
  for (i = 0; i < 8; i++) {
    if (counts[i] >= 3)
      return i + 1;
    if (counts[i] == 2)
      shape = shape * 3 + 2;
    else if (counts[i] == 1)
      shape = shape * 3 + 1;
  }
  if (shape == 0)
    return 30;
  if (counts[buf[0] & 7] == 2 && counts[buf[N - 1] & 7] == 1)
    return 20;
  return 0;
}
