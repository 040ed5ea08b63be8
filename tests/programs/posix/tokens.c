/* A tokenizer over standard input: numbers, identifiers, operators, parentheses, and
 * anything else as an error token. Prints one line per token. */
#include <ctype.h>
#include <stdio.h>

int main(void) {
  int c = getchar();
  while (c != EOF) {
    if (isspace(c)) {
      c = getchar();
    } else if (isdigit(c)) {
      while (c != EOF && isdigit(c))
        c = getchar();
      puts("NUMBER");
    } else if (isalpha(c) || c == '_') {
      while (c != EOF && (isalnum(c) || c == '_'))
        c = getchar();
      puts("IDENT");
    } else if (c == '+' || c == '-' || c == '*' || c == '/') {
      puts("OP");
      c = getchar();
    } else if (c == '(' || c == ')') {
      puts("PAREN");
      c = getchar();
    } else {
      puts("ERROR");
      c = getchar();
    }
  }
  puts("END");
  return 0;
}
