/* ctype.h for programs under symex, in the C locale.
 *
 * glibc's headers (clang here; zig's bundled ones for x86_64-linux-gnu) turn isdigit(c)
 * into a lookup in the table __ctype_b_loc() points to, and toupper/tolower (when inlined)
 * into __ctype_toupper_loc/__ctype_tolower_loc lookups: a symbolic character becomes a read
 * at a symbolic index, and the program's own branch on the result forks. The functions are
 * for calls that bypass the macros; each is one range test on the character, so a branch on
 * isdigit(c) forks in two, not once per comparison. */

#define WEAK __attribute__((weak))

/* glibc's bit for each class (bits/ctype.h, little-endian) */
#define UPPER 0x100
#define LOWER 0x200
#define ALPHA 0x400
#define DIGIT 0x800
#define XDIGIT 0x1000
#define SPACE 0x2000
#define PRINT 0x4000
#define GRAPH 0x8000
#define BLANK 0x1
#define CNTRL 0x2
#define PUNCT 0x4
#define ALNUM 0x8

#define IN(c, lo, hi) ((c) >= (lo) && (c) <= (hi))
#define C_UPPER(c) IN(c, 'A', 'Z')
#define C_LOWER(c) IN(c, 'a', 'z')
#define C_DIGIT(c) IN(c, '0', '9')
#define C_ALPHA(c) (C_UPPER(c) || C_LOWER(c))
#define C_SPACE(c) ((c) == ' ' || IN(c, '\t', '\r'))
#define C_PRINT(c) IN(c, 0x20, 0x7e)
#define C_GRAPH(c) IN(c, 0x21, 0x7e)
#define C_CNTRL(c) (IN(c, 0, 0x1f) || (c) == 0x7f)
#define C_PUNCT(c) (C_GRAPH(c) && !C_ALPHA(c) && !C_DIGIT(c))
#define C_XDIGIT(c) (C_DIGIT(c) || IN(c, 'a', 'f') || IN(c, 'A', 'F'))
#define C_BLANK(c) ((c) == ' ' || (c) == '\t')

#define BITS(c)                                                                          \
  (unsigned short)((C_UPPER(c) ? UPPER : 0) | (C_LOWER(c) ? LOWER : 0) |                \
                   (C_ALPHA(c) ? ALPHA : 0) | (C_DIGIT(c) ? DIGIT : 0) |                \
                   (C_XDIGIT(c) ? XDIGIT : 0) | (C_SPACE(c) ? SPACE : 0) |              \
                   (C_PRINT(c) ? PRINT : 0) | (C_GRAPH(c) ? GRAPH : 0) |                \
                   (C_BLANK(c) ? BLANK : 0) | (C_CNTRL(c) ? CNTRL : 0) |                \
                   (C_PUNCT(c) ? PUNCT : 0) | (C_ALPHA(c) || C_DIGIT(c) ? ALNUM : 0))
#define UP(c) (C_LOWER(c) ? (c) - 'a' + 'A' : (c))
#define DOWN(c) (C_UPPER(c) ? (c) - 'A' + 'a' : (c))

/* 384 entries for the characters -128..255 (a signed char indexes below zero) */
#define ROW(F, b) F(b), F(b + 1), F(b + 2), F(b + 3), F(b + 4), F(b + 5), F(b + 6), F(b + 7),   \
                  F(b + 8), F(b + 9), F(b + 10), F(b + 11), F(b + 12), F(b + 13), F(b + 14),     \
                  F(b + 15)
#define TABLE(F)                                                                         \
  ROW(F, -128), ROW(F, -112), ROW(F, -96), ROW(F, -80), ROW(F, -64), ROW(F, -48),        \
  ROW(F, -32), ROW(F, -16), ROW(F, 0), ROW(F, 16), ROW(F, 32), ROW(F, 48), ROW(F, 64),   \
  ROW(F, 80), ROW(F, 96), ROW(F, 112), ROW(F, 128), ROW(F, 144), ROW(F, 160),            \
  ROW(F, 176), ROW(F, 192), ROW(F, 208), ROW(F, 224), ROW(F, 240)

static const unsigned short class_table[384] = {TABLE(BITS)};
static const int upper_table[384] = {TABLE(UP)};
static const int lower_table[384] = {TABLE(DOWN)};
static const unsigned short *class_pointer = class_table + 128;
static const int *upper_pointer = upper_table + 128;
static const int *lower_pointer = lower_table + 128;

WEAK const unsigned short **__ctype_b_loc(void) { return &class_pointer; }
WEAK const int **__ctype_toupper_loc(void) { return &upper_pointer; }
WEAK const int **__ctype_tolower_loc(void) { return &lower_pointer; }

/* unsigned arithmetic: one comparison per range, so one fork per call site test */
#define RANGE(c, lo, n) ((unsigned)(c) - (lo) < (n))

WEAK int isupper(int c) { return RANGE(c, 'A', 26); }
WEAK int islower(int c) { return RANGE(c, 'a', 26); }
WEAK int isalpha(int c) { return RANGE((unsigned)c | 32, 'a', 26); }
WEAK int isdigit(int c) { return RANGE(c, '0', 10); }
WEAK int isalnum(int c) { return isalpha(c) | isdigit(c); }
WEAK int isxdigit(int c) { return isdigit(c) | RANGE((unsigned)c | 32, 'a', 6); }
WEAK int isspace(int c) { return (c == ' ') | RANGE(c, '\t', 5); }
WEAK int isblank(int c) { return (c == ' ') | (c == '\t'); }
WEAK int isprint(int c) { return RANGE(c, 0x20, 0x5f); }
WEAK int isgraph(int c) { return RANGE(c, 0x21, 0x5e); }
WEAK int iscntrl(int c) { return RANGE(c, 0, 0x20) | (c == 0x7f); }
WEAK int ispunct(int c) { return isgraph(c) & !isalnum(c); }
WEAK int toupper(int c) { return islower(c) ? c - 'a' + 'A' : c; }
WEAK int tolower(int c) { return isupper(c) ? c - 'A' + 'a' : c; }
