#include <strings.h>
#include "classify.h"

/* strcasecmp: a function symex's small library lacks and musl has */
int classify(const char *word) {
    if (strcasecmp(word, "ab") == 0)
        return 1;
    if (word[0] == 'z')
        return 2;
    return 3;
}
