/* No bug: classifies a byte; every path exits normally with its class as the exit code. */
#include <klee/klee.h>
#include <stdio.h>

static int classify(unsigned char c) {
  if (c >= '0' && c <= '9')
    return 1;
  if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z')
    return 2;
  return 0;
}

int main(void) {
  unsigned char c;
  int counts[3] = {0, 0, 0};
  klee_make_symbolic(&c, sizeof c, "c");
  int k = classify(c);
  counts[k]++;
  printf("class %d\n", k);
  return k + counts[k];
}
