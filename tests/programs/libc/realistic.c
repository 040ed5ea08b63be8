/* A program in the style of a small command-line tool, using the C library widely: stdio
 * (printf family with %s %d %x %f, snprintf, fputs, perror), strings, stdlib (strtol,
 * strtod, qsort, bsearch, atoi, abs, getenv), getopt_long, ctype, errno/strerror, time
 * formatting (gmtime, strftime, time), locale (setlocale), regex (regcomp/regexec),
 * directories (opendir) and wide characters (mbstowcs, wcslen, wcscmp, towupper, wctomb).
 *
 * Run by tests/test_musl.py with symex's musl and natively (zig cc -target x86_64-linux-musl):
 * every path's output must be the same. Standard input (two symbolic bytes) picks the mode. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <locale.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>
#include <wctype.h>

static int compare_ints(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static void show_sorted(void) {
    int values[] = {42, -7, 19, 0, 3, 19};
    size_t count = sizeof values / sizeof values[0];
    qsort(values, count, sizeof values[0], compare_ints);
    for (size_t i = 0; i < count; i++)
        printf("%s%d", i ? "," : "sorted: ", values[i]);
    int key = 19;
    int *found = bsearch(&key, values, count, sizeof values[0], compare_ints);
    printf(" (found %d, |-7| = %d)\n", found ? *found : -1, abs(-7));
}

static void show_numbers(void) {
    char *end;
    long hex = strtol("ff", &end, 16);
    double ratio = strtod("2.5e-1", &end);
    char buffer[64];
    int written = snprintf(buffer, sizeof buffer, "%5.2f|%-4d|%x|%s", ratio, atoi("12"), (unsigned)hex, "ok");
    printf("numbers: [%s] (%d chars)\n", buffer, written);
}

static void show_time(void) {
    time_t when = 86400 * 365; /* 1971-01-01 */
    struct tm *tm = gmtime(&when);
    char text[64];
    strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S %a %b %j", tm);
    printf("time: %s\n", text);
}

static void show_regex(const char *pattern, const char *subject) {
    regex_t compiled;
    int status = regcomp(&compiled, pattern, REG_EXTENDED | REG_NOSUB);
    if (status != 0) {
        char message[128];
        regerror(status, &compiled, message, sizeof message);
        printf("regex: bad pattern: %s\n", message);
        return;
    }
    printf("regex: '%s' %s '%s'\n", subject, regexec(&compiled, subject, 0, NULL, 0) == 0 ? "matches" : "does not match", pattern);
    regfree(&compiled);
}

static void show_wide(const char *text) {
    wchar_t wide[32];
    size_t length = mbstowcs(wide, text, 32);
    for (size_t i = 0; i < length; i++)
        wide[i] = towupper(wide[i]);
    char narrow[8];
    int bytes = wctomb(narrow, wide[0]);
    printf("wide: %zu characters, first %d byte(s), upper equal %d\n", wcslen(wide), bytes,
           wcscmp(wide, L"HEY") == 0);
}

static void show_errors(void) {
    DIR *directory = opendir("/no/such/directory");
    if (directory == NULL) {
        int saved = errno;
        fprintf(stdout, "opendir: %s\n", strerror(saved));
    }
    errno = ERANGE;
    perror("perror says");
    fputs(getenv("SYMEX_NO_SUCH_VARIABLE") ? "variable set\n" : "variable unset\n", stdout);
}

int main(int argc, char **argv) {
    static const struct option options[] = {
        {"upper", no_argument, NULL, 'u'},
        {"pattern", required_argument, NULL, 'p'},
        {NULL, 0, NULL, 0},
    };
    const char *pattern = "^h[a-z]+$";
    int upper = 0, option;
    setlocale(LC_ALL, "C");
    while ((option = getopt_long(argc, argv, "up:", options, NULL)) != -1) {
        if (option == 'u')
            upper = 1;
        else if (option == 'p')
            pattern = optarg;
        else
            return 2;
    }
    unsigned char mode[2];
    if (read(0, mode, sizeof mode) != 2)
        return 3;
    if (isdigit(mode[0])) {
        show_numbers();
        show_sorted();
    } else if (isalpha(mode[0])) {
        char word[4] = {(char)(upper ? toupper(mode[0]) : tolower(mode[0])), 'e', 'y', 0};
        show_regex(pattern, word);
        show_wide(word);
    } else if (mode[0] == '.') {
        show_time();
        show_errors();
    } else {
        printf("mode %02x: nothing to do\n", mode[1] == '!' ? 0x21 : 0);
        return 1;
    }
    for (int i = optind; i < argc; i++)
        printf("operand %d: %s (%zu)\n", i - optind, argv[i], strlen(argv[i]));
    return 0;
}
