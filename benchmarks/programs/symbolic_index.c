/* Increments at symbolic indices of one array (the memory models' benchmark: a symbolic
   pointer into a single object, where the models must cost the same). */
#include <klee/klee.h>

int main(void) {
    unsigned char at[3];
    int counts[8] = {0};
    klee_make_symbolic(at, sizeof at, "at");
    for (int n = 0; n < 3; n++)
        counts[at[n] % 8]++;
    int most = 0;
    for (int n = 0; n < 8; n++)
        if (counts[n] > most)
            most = counts[n];
    return most;
}
