/* A two-character string compared, measured and classified with the C library (symex's
 * string.h and ctype.h under symex; the same functions natively in the parity test). */
#include <ctype.h>
#include <string.h>
#include <klee/klee.h>

int main(void) {
  char s[3];
  klee_make_symbolic(s, 2, "s");
  s[2] = '\0';
  if (strcmp(s, "ok") == 0)
    return 1;
  size_t n = strlen(s);
  if (n == 2 && isdigit((unsigned char)s[0]) && isalpha((unsigned char)s[1]))
    return 2;
  if (n == 1 && isspace((unsigned char)s[0]))
    return 3;
  return strchr(s, 'x') ? 4 : 0;
}
