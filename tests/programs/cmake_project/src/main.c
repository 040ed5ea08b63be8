#include <klee/klee.h>

int sign(int x);

int main(void) {
    int x;
    klee_make_symbolic(&x, sizeof x, "x");
    return sign(x) + 1;   /* 0, 1 or 2 */
}
