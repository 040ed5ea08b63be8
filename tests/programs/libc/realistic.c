/* A program in the style of a small command-line tool, using the C library widely: stdio
 * (printf family with %s %d %x %f, snprintf, fputs, perror), strings, stdlib (strtol,
 * strtod, qsort, bsearch, atoi, abs, getenv), getopt_long, ctype, errno/strerror, time
 * formatting (gmtime, strftime, time), locale (setlocale), regex (regcomp/regexec),
 * directories (opendir) and wide characters (mbstowcs, wcslen, wcscmp, towupper, wctomb);
 * and the text utilities of show_text, for more than 60 library functions in all.
 *
 * Run by tests/test_musl.py with symex's musl and natively (zig cc -target x86_64-linux-musl):
 * every path's output must be the same. Standard input (two symbolic bytes) picks the mode. */
#include <ctype.h>
#include <dirent.h>
#include <fnmatch.h>
#include <libgen.h>
#include <strings.h>
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

static void show_text(void) {
    char line[] = "alpha, beta;gamma  delta";
    char *save = NULL, *copy = strdup(line), *part = strndup(line, 5);
    int words = 0;
    for (char *word = strtok_r(copy, ",; ", &save); word; word = strtok_r(NULL, ",; ", &save))
        words++;
    char path[] = "/usr/local/lib/libx.a", path2[] = "/usr/local/lib/libx.a";
    printf("text: %d words, first '%s', span %zu/%zu, '%s' '%s'\n", words, part, strspn(line, "abhlp"),
           strcspn(line, ","), basename(path), dirname(path2));
    printf("find: %s|%s|%s cmp %d %d %d\n", strchr(line, 'b'), strrchr(line, 'd'), strstr(line, "gam"),
           strncmp(line, "alps", 3) == 0, strcasecmp("DeLTa", "delta") == 0, memcmp("ab", "ac", 2) < 0);
    char moved[16] = "0123456789";
    memmove(moved + 2, moved, 5);
    const char *at = memchr(moved, '9', 10);
    int day, month, year, got = sscanf("24/11/2026", "%d/%d/%d", &day, &month, &year);
    char scratch[32];
    sprintf(scratch, "%04d-%02d-%02d", year, month, day);
    printf("bytes: %s %ld; scanned %d: %s\n", moved, at ? (long)(at - moved) : -1L, got, scratch);
    div_t q = div(17, 5);
    printf("numbers: %d r %d, %ld, %lu, %lld, %ld, %d%d%d%d%d\n", q.quot, q.rem, labs(-9L), strtoul("0x1f", NULL, 0),
           strtoll("-123456789012", NULL, 10), atol("77"), isspace(' ') != 0, isupper('Q') != 0,
           islower('q') != 0, isxdigit('f') != 0, isprint('\t') == 0);
    printf("match: %d %d\n", fnmatch("*.c", "main.c", 0) == 0, fnmatch("*.c", "main.h", 0) == 0);
    FILE *missing = fopen("/no/such/file", "r");
    char cwd[64];
    printf("files: fopen %s, access %d, cwd %s\n", missing ? "opened" : "failed",
           access("/no/such/file", R_OK) == 0, getcwd(cwd, sizeof cwd) ? "known" : "unknown");
    putchar('>');
    fwrite(" done", 1, 5, stdout);
    puts("");
    fflush(stdout);
    free(copy);
    free(part);
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
    } else if (mode[0] == '-') {
        show_text();
    } else {
        printf("mode %02x: nothing to do\n", mode[1] == '!' ? 0x21 : 0);
        return 1;
    }
    for (int i = optind; i < argc; i++)
        printf("operand %d: %s (%zu)\n", i - optind, argv[i], strlen(argv[i]));
    return 0;
}
