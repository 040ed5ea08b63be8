/* Three paths (x < 0, x == 0, x > 0); two print a symbolic x at line 18 (on the x == 0
 * path x is known), and the x > 0 one then calls a function nothing defines (line 20). */
#include <stdio.h>
#include <klee/klee.h>

int not_defined_anywhere(int);

int main(void) {
    int x;
    klee_make_symbolic(&x, sizeof x, "x");
    int sign;
    if (x < 0)
        sign = -1;
    else if (x == 0)
        sign = 0;
    else
        sign = 1;
    printf("%d\n", x);
    if (sign > 0)
        return not_defined_anywhere(x);
    return 0;
}
