/* A store through a pointer that may point into any of three arrays (two globals and a
   local) must change exactly one element of one of them. */
#include <klee/klee.h>
#include <stdlib.h>

int a[4], b[4];

int main(void) {
    int c[4] = {0, 0, 0, 0};
    unsigned char k, v;
    klee_make_symbolic(&k, sizeof k, "k");
    klee_make_symbolic(&v, sizeof v, "v");
    int *targets[3] = {a, b, c};
    if (k >= 3)
        return 0;
    int *p = targets[k] + (v & 3);
    *p = 7;
    int sum = 0;
    for (int n = 0; n < 4; n++)
        sum += a[n] + b[n] + c[n];
    if (sum != 7)
        abort(); /* never */
    if (a[v & 3] == 7)
        return 1;
    if (b[v & 3] == 7)
        return 2;
    return 3 + (c[3] == 7);
}
