/* A recursive-descent parser and evaluator for arithmetic expressions
 * (digits, + - *, parentheses) over a symbolic NUL-terminated buffer. */
#include <klee/klee.h>

#define SIZE 8

static const char *p;
static int error;

static int expr(int depth);

static int primary(int depth) {
  if (*p >= '0' && *p <= '9') {
    int v = 0;
    while (*p >= '0' && *p <= '9')
      v = v * 10 + (*p++ - '0');
    return v;
  }
  if (*p == '(' && depth < 3) {
    p++;
    int v = expr(depth + 1);
    if (*p != ')') {
      error = 1;
      return 0;
    }
    p++;
    return v;
  }
  if (*p == '-') {
    p++;
    return -primary(depth);
  }
  error = 1;
  return 0;
}

static int term(int depth) {
  int v = primary(depth);
  while (!error && *p == '*') {
    p++;
    v *= primary(depth);
  }
  return v;
}

static int expr(int depth) {
  int v = term(depth);
  while (!error && (*p == '+' || *p == '-')) {
    char op = *p++;
    int r = term(depth);
    v = op == '+' ? v + r : v - r;
  }
  return v;
}

int main(void) {
  char buf[SIZE];
  klee_make_symbolic(buf, sizeof buf, "buf");
  klee_assume(buf[SIZE - 1] == '\0');
  p = buf;
  error = 0;
  int v = expr(0);
  if (error || *p != '\0')
    return 1;
  if (v == 42)
    return 42;
  if (v < 0)
    return 2;
  return 0;
}
