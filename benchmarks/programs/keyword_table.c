/* A word of the input compared with the keyword a symbolic index chooses from a table of
   pointers to strings (the memory models' benchmark: one pointer into several objects,
   read byte by byte). */
#include <klee/klee.h>
#include <string.h>

static const char *const keywords[] = {"break", "case", "char", "const", "continue",
                                       "default", "do", "double"};

int main(void) {
    unsigned char i;
    char word[6];
    klee_make_symbolic(&i, sizeof i, "i");
    klee_make_symbolic(word, sizeof word, "word");
    word[5] = 0;
    if (i >= sizeof keywords / sizeof keywords[0])
        return 0;
    const char *k = keywords[i];
    if (strcmp(k, word) == 0)
        return 1;
    return 2 + (k[0] == word[0]);
}
