/* base64 -d: decodes standard input (or the file named by argv[1]) to standard output.
 * Whitespace is skipped; any other character outside the alphabet, or padding in the wrong
 * place, is an error: a message on stderr and exit status 1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int value_of(int c) {
  if (c >= 'A' && c <= 'Z')
    return c - 'A';
  if (c >= 'a' && c <= 'z')
    return c - 'a' + 26;
  if (c >= '0' && c <= '9')
    return c - '0' + 52;
  if (c == '+')
    return 62;
  if (c == '/')
    return 63;
  return -1;
}

int main(int argc, char **argv) {
  FILE *in = stdin;
  if (argc > 1) {
    in = fopen(argv[1], "r");
    if (in == NULL) {
      fprintf(stderr, "base64: %s: cannot open\n", argv[1]);
      return 1;
    }
  }
  int quad[4];
  int n = 0, padding = 0, c;
  while ((c = fgetc(in)) != EOF) {
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
      continue;
    if (c == '=') {
      if (n < 2) {
        fprintf(stderr, "base64: invalid input\n");
        return 1;
      }
      padding++;
      quad[n++] = 0;
    } else {
      int v = value_of(c);
      if (v < 0 || padding > 0) {
        fprintf(stderr, "base64: invalid input\n");
        return 1;
      }
      quad[n++] = v;
    }
    if (n == 4) {
      unsigned long bits = ((unsigned long)quad[0] << 18) | (quad[1] << 12) |
                           (quad[2] << 6) | quad[3];
      putchar((int)(bits >> 16) & 0xff);
      if (padding < 2)
        putchar((int)(bits >> 8) & 0xff);
      if (padding < 1)
        putchar((int)bits & 0xff);
      if (padding > 0)
        break;
      n = 0;
    }
  }
  if (n != 0 && n != 4) {
    fprintf(stderr, "base64: truncated input\n");
    return 1;
  }
  if (in != stdin)
    fclose(in);
  return 0;
}
