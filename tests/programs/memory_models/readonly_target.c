/* A store through a pointer that may point into a string literal: an error on the inputs
   that choose it, and a change to the buffer on the others. */
#include <klee/klee.h>

char buffer[4] = "abc";

int main(void) {
    unsigned char k;
    klee_make_symbolic(&k, sizeof k, "k");
    char *targets[3] = {buffer, (char *)"xyz", buffer + 1};
    char *p = targets[k % 3];
    p[1] = 'q'; /* error: readonly */
    return buffer[1] == 'q' ? 1 : buffer[2] == 'q' ? 2 : 0;
}
