/* No bug: klee_assume pins the index to 1, so the write stays inside the 4-byte array. */
#include <klee/klee.h>

int main(void) {
  char text[4] = "xyz";
  int index;
  klee_make_symbolic(&index, sizeof index, "index");
  klee_assume(index == 1);
  text[index] = 'q';
  return text[1] == 'q' ? 5 : 6;
}
