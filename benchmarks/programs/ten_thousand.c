/* Exactly 10,000 paths (2^4 x 5^4), each a test: four two-way and four five-way branches on
 * independent symbolic bytes. The yardstick of what writing a test costs (benchmarks/vs_klee.py
 * "per test"): the same 10,000 tests on both sides. */
#include <klee/klee.h>

int main(void) {
  unsigned char b[8];
  int count = 0;
  klee_make_symbolic(b, sizeof b, "b");
  for (int i = 0; i < 4; i++) {
    if (b[i] > 100)
      count++;
  }
  for (int i = 4; i < 8; i++) {
    switch (b[i] % 5) {
    case 0: count += 1; break;
    case 1: count += 2; break;
    case 2: count += 3; break;
    case 3: count += 4; break;
    default: count += 5; break;
    }
  }
  return count;
}
