/* calc: evaluates one integer expression per line of standard input (or of the file named by
 * argv[1]): + - * / %, unary minus, parentheses. Prints each result, or an error message on
 * stderr for a bad line; the exit status is 1 if any line was bad. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *pos;
static const char *error;

static long expression(void);

static void skip_spaces(void) {
  while (isspace((unsigned char)*pos))
    pos++;
}

static long primary(void) {
  skip_spaces();
  if (*pos == '(') {
    pos++;
    long value = expression();
    skip_spaces();
    if (*pos != ')') {
      if (!error)
        error = "missing )";
      return 0;
    }
    pos++;
    return value;
  }
  if (*pos == '-') {
    pos++;
    return -primary();
  }
  if (isdigit((unsigned char)*pos)) {
    char *end;
    long value = strtol(pos, &end, 10);
    pos = end;
    return value;
  }
  if (!error)
    error = "expected a number";
  return 0;
}

static long term(void) {
  long value = primary();
  for (;;) {
    skip_spaces();
    char op = *pos;
    if (op != '*' && op != '/' && op != '%')
      return value;
    pos++;
    long right = primary();
    if (error)
      return 0;
    if (op == '*') {
      value *= right;
    } else if (right == 0) {
      error = "division by zero";
      return 0;
    } else if (op == '/') {
      value /= right;
    } else {
      value %= right;
    }
  }
}

static long expression(void) {
  long value = term();
  for (;;) {
    skip_spaces();
    char op = *pos;
    if (op != '+' && op != '-')
      return value;
    pos++;
    long right = term();
    if (op == '+')
      value += right;
    else
      value -= right;
  }
}

int main(int argc, char **argv) {
  FILE *in = stdin;
  if (argc > 1) {
    in = fopen(argv[1], "r");
    if (in == NULL) {
      fprintf(stderr, "calc: cannot open %s\n", argv[1]);
      return 2;
    }
  }
  char line[256];
  int bad = 0, number = 0;
  while (fgets(line, sizeof line, in) != NULL) {
    number++;
    line[strcspn(line, "\n")] = '\0';
    pos = line;
    skip_spaces();
    if (*pos == '\0')
      continue;
    error = NULL;
    long value = expression();
    skip_spaces();
    if (!error && *pos != '\0')
      error = "unexpected character";
    if (error) {
      fprintf(stderr, "line %d: %s at column %d\n", number, error, (int)(pos - line) + 1);
      bad = 1;
    } else {
      printf("%ld\n", value);
    }
  }
  if (in != stdin)
    fclose(in);
  return bad;
}
