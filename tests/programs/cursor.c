/* A pointer moved by conditions (expr's argument cursor: args += matched): its offset into
   the array takes three values, so reading through it chooses between three reads
   (core/access.py, expr/value_sets.py) instead of reading a symbolic array. Exit status:
   which word the cursor found. */
#include <string.h>
#include <klee/klee.h>

int main(void) {
  char in[2];
  klee_make_symbolic(in, sizeof in, "in");
  const char *words[4] = {"alpha", "beta", "gamma", "delta"};
  const char **cursor = words;
  cursor += in[0] == '+';
  cursor += in[1] == '+';
  const char *word = *cursor;
  if (strcmp(word, "gamma") == 0)
    return 3;
  if (word[0] == 'b')
    return 2;
  return 1;
}
