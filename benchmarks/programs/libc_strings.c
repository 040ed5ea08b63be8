/* The C library does the branching: strlen, strchr, strcmp and memcmp on one symbolic
 * string. Each compares a byte at a time, and musl (symex --libc musl) and klee-uclibc
 * (klee --libc=uclibc) split every byte into the same cases (musl's string functions are
 * built byte-wise for symex; strncmp is left out: the two libraries test its bytes in
 * another order, which splits them differently), so both tools explore the same paths: a
 * comparison beside KLEE where the work is in the library on both sides. */
#include <klee/klee.h>
#include <string.h>

#ifndef SIZE
#define SIZE 8
#endif

int main(void) {
  char s[SIZE];
  klee_make_symbolic(s, sizeof s, "s");
  klee_assume(s[SIZE - 1] == '\0');
  int score = (int)strlen(s);
  const char *first_a = strchr(s, 'a');   /* where the first 'a', 'b', 'c' are: their */
  const char *first_b = strchr(s, 'b');   /* positions combine, so the paths multiply */
  const char *first_c = strchr(s, 'c');
  if (first_a && first_b && first_a < first_b)
    score += 10;
  if (first_c && strcmp(first_c, "cab") == 0)
    score += 20;
  if (memcmp(s, "ab", 2) == 0)
    score += 40;
  return score;
}
