/* KLEE-tutorial-style matcher, 7-byte symbolic pattern; -DASSUME_TERMINATED: last byte NUL; -DEND_OF_PATTERN=0: the end of a pattern is no match, as in KLEE's copy. */
#include <klee/klee.h>
#ifndef END_OF_PATTERN
#define END_OF_PATTERN 1
#endif
static int matchhere(char *re, char *text);

static int matchstar(int c, char *re, char *text) {
  do {
    if (matchhere(re, text))
      return 1;
  } while (*text != '\0' && (*text++ == c || c == '.'));
  return 0;
}

static int matchhere(char *re, char *text) {
  if (re[0] == '\0')
    return END_OF_PATTERN;
  if (re[1] == '*')
    return matchstar(re[0], re + 2, text);
  if (re[0] == '$' && re[1] == '\0')
    return *text == '\0';
  if (*text != '\0' && (re[0] == '.' || re[0] == *text))
    return matchhere(re + 1, text + 1);
  return 0;
}

int match(char *re, char *text) {
  if (re[0] == '^')
    return matchhere(re + 1, text);
  do {
    if (matchhere(re, text))
      return 1;
  } while (*text++ != '\0');
  return 0;
}

#ifndef SIZE
#define SIZE 7
#endif

int main(void) {
  char re[SIZE];
  klee_make_symbolic(re, sizeof re, "re");
#ifdef ASSUME_TERMINATED
  klee_assume(re[SIZE - 1] == '\0');
#endif
  match(re, "hello");
  return 0;
}
