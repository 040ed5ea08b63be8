/* strtod, strtof and atof of a command-line argument: the program branches on the number
 * read and prints its bits exactly, where the parse stopped and errno, so a native run of
 * each test case must print the same line. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long long bits(double d) {
    unsigned long long b;
    memcpy(&b, &d, sizeof b);
    return b;
}

/* what the number is, decided by branches on it (before printf fixes it) */
static int classify(double d, float f, const char *text, int stopped) {
    if (stopped == 0)
        return 2;                       /* no number */
    if (d != atof(text))
        return 8;                       /* never: atof is strtod */
    if (d < 0)
        return 3;
    if (d == 0.5)
        return 4;
    if (d >= 100)
        return 5;
    if ((double)f != d)
        return 6;                       /* a double no float holds: 0.1, 0.3 ... */
    return d > 2.5;
}

int main(int argc, char **argv) {
    if (argc < 2)
        return 9;
    char *end;
    errno = 0;
    double d = strtod(argv[1], &end);
    int stopped = (int)(end - argv[1]), error = errno;
    float f = strtof(argv[1], 0);
    int kind = classify(d, f, argv[1], stopped);
#ifndef QUIET /* musl's printf formats a fixed number with much code: slow to interpret */
    printf("%d %llx %llx %d %d\n", kind, bits(d), bits((double)f), stopped, error);
#endif
    return kind;
}
