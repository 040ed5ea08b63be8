#include <klee/klee.h>
#include "classify.h"

int main(void) {
    char word[3];
    klee_make_symbolic(word, sizeof word, "word");
    word[2] = 0;
    return classify(word);
}
