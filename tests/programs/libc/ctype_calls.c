/* Every ctype.h function symex's C library defines, on every character from -1 (EOF) to 255,
 * both through glibc's macros (table lookups) and as called functions; one line per
 * character, compared with the host C library's output. */
#include <ctype.h>
#include <stdio.h>

/* the function forms: parentheses around the name bypass a function-like macro */
static int classes(int c) {
  return (!!(isalpha)(c)) | (!!(isdigit)(c)) << 1 | (!!(isalnum)(c)) << 2 | (!!(isspace)(c)) << 3 |
         (!!(isupper)(c)) << 4 | (!!(islower)(c)) << 5 | (!!(isxdigit)(c)) << 6 |
         (!!(ispunct)(c)) << 7 | (!!(isprint)(c)) << 8 | (!!(iscntrl)(c)) << 9 |
         (!!(isgraph)(c)) << 10;
}

/* the macro forms (a table lookup under glibc's headers) */
static int classes_macro(int c) {
  return (!!isalpha(c)) | (!!isdigit(c)) << 1 | (!!isalnum(c)) << 2 | (!!isspace(c)) << 3 |
         (!!isupper(c)) << 4 | (!!islower(c)) << 5 | (!!isxdigit(c)) << 6 | (!!ispunct(c)) << 7 |
         (!!isprint(c)) << 8 | (!!iscntrl(c)) << 9 | (!!isgraph(c)) << 10;
}

int main(void) {
  for (int c = -1; c < 256; c++)
    printf("%d %x %x %d %d %d %d\n", c, classes(c), classes_macro(c), (toupper)(c), (tolower)(c),
           toupper(c), tolower(c));
  return 0;
}
