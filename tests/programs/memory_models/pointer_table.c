/* A table of pointers to strings of different lengths, read at a symbolic index and
   followed at a symbolic offset: past the shortest string's end is an error. */
#include <klee/klee.h>

static const char alpha[] = "alpha", beta[] = "be", gamma_[] = "gamma!";
static const char *const names[] = {alpha, beta, gamma_};

int main(void) {
    unsigned char i, j;
    klee_make_symbolic(&i, sizeof i, "i");
    klee_make_symbolic(&j, sizeof j, "j");
    if (i >= 3 || j > 4)
        return 0;
    const char *p = names[i];
    if (p[j] == 'm') /* error: ptr */
        return 2;
    if (p[0] == 'b')
        return 3;
    return 4;
}
