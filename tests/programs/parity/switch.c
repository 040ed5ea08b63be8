/* A switch with shared cases, fall-through and a default, then a second switch on a value
 * computed from the first. */
#include <klee/klee.h>

int main(void) {
  unsigned char c;
  klee_make_symbolic(&c, sizeof c, "c");
  int kind;
  switch (c) {
  case 'a': case 'e': case 'i': case 'o': case 'u':
    kind = 1;
    break;
  case '0':
    kind = 2;
    /* fall through */
  case '1':
    kind = 3;
    break;
  case 200:
    return 7;
  default:
    kind = c < 'a' ? 4 : 5;
  }
  switch (kind) {
  case 1: return 10;
  case 3: return c == '0' ? 30 : 31;
  default: return kind;
  }
}
