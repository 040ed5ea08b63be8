/* __builtin_unreachable() reached: fail() was meant to stop the program, but it returns. */
#include <klee/klee.h>
#include <stdio.h>

static void fail(const char *why) { printf("error: %s\n", why); }

static int checked_digit(char c) {
  if (c < '0' || c > '9') {
    fail("not a digit");
    __builtin_unreachable(); /* BUG: fail() returns, so this point is reached */
  }
  return c - '0';
}

int main(void) {
  char c;
  klee_make_symbolic(&c, sizeof c, "c");
  return checked_digit(c);
}
