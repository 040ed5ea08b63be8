/* abort(): parse_digit aborts on anything that is not a decimal digit. */
#include <klee/klee.h>
#include <stdlib.h>

static int parse_digit(char c) {
  if (c < '0' || c > '9')
    abort(); /* BUG: non-digit input aborts the program */
  return c - '0';
}

int main(void) {
  char c;
  klee_make_symbolic(&c, sizeof c, "c");
  return parse_digit(c);
}
