/* Unbounded recursion: nesting() forgets to advance past '(' and recurses on the same text
 * forever when the input starts with '('. */
#include <klee/klee.h>

static int nesting(const char *text) {
  if (text[0] != '(')
    return 0;
  int inner = nesting(text); /* BUG: should be text + 1; recursion never ends */
  return inner > 0 ? 2 * inner + text[1] : 1;
}

int main(void) {
  char text[4];
  klee_make_symbolic(text, sizeof text, "text");
  text[3] = '\0';
  return nesting(text) > 2;
}
