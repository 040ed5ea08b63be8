/* symex's strtod (runtime/libc/strtod.c, built natively with its names prefixed by sx_)
 * against the C library's, on pseudo-random strings over the characters numbers are made
 * of: the same bits, the same end, the same errno, or the first string that differs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double sx_strtod(const char *s, char **end);
float sx_strtof(const char *s, char **end);
double sx_atof(const char *s);

/* the host reading symex's strtod falls back on (env/strtod.py does this in symex) */
double __symex_host_strtod(const char *s, int single, long *used, int *out_of_range) {
    char *end;
    errno = 0;
    double value = single ? strtof(s, &end) : strtod(s, &end);
    *used = end - s;
    *out_of_range = errno == ERANGE;
    return value;
}

int main(int argc, char **argv) {
    static const char alphabet[] = "0123456789012345678901234567890123456789...eE+--  x5i";
    long count = argc > 1 ? atol(argv[1]) : 100000;
    unsigned long long state = 12345;
    for (long n = 0; n < count; n++) {
        char s[32];
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        int length = (int)((state >> 33) % 25);
        for (int i = 0; i < length; i++) {
            state = state * 6364136223846793005ULL + 1442695040888963407ULL;
            s[i] = alphabet[(state >> 33) % (sizeof alphabet - 1)];
        }
        s[length] = 0;
        char *native_end, *symex_end;
        errno = 0;
        double native = strtod(s, &native_end);
        int native_errno = errno;
        errno = 0;
        double mine = sx_strtod(s, &symex_end);
        if (memcmp(&native, &mine, sizeof native) || native_end != symex_end || errno != native_errno
            || memcmp(&mine, &(double){sx_atof(s)}, sizeof mine)) {
            printf("strtod differs on \"%s\"\n", s);
            return 1;
        }
        errno = 0;
        float native_f = strtof(s, &native_end);
        native_errno = errno;
        errno = 0;
        float mine_f = sx_strtof(s, &symex_end);
        if (memcmp(&native_f, &mine_f, sizeof native_f) || native_end != symex_end
            || errno != native_errno) {
            printf("strtof differs on \"%s\"\n", s);
            return 1;
        }
    }
    printf("%ld strings agree\n", count);
    return 0;
}
