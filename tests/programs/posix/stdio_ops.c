/* An ordinary stdio program: numbers the lines of standard input into a file, then reads the
 * file back with fgetc/ungetc/fread and reports on it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
  char line[64];
  int number = 0;
  FILE *out = fopen("numbered.txt", "w");
  if (out == NULL)
    return 1;
  while (fgets(line, sizeof line, stdin) != NULL) {
    number++;
    fputc('0' + number % 10, out);
    fputs(": ", out);
    fwrite(line, 1, strlen(line), out);
  }
  fclose(out);
  printf("%d lines\n", number);

  FILE *in = fopen("numbered.txt", "r");
  int first = fgetc(in);
  ungetc(first, in);
  printf("first byte %c, again %c\n", first, fgetc(in));
  char rest[256];
  size_t got = fread(rest, 1, sizeof rest - 1, in);
  rest[got] = '\0';
  printf("fread %zu bytes, eof %d, error %d, fileno>2 %d\n", got, feof(in) != 0, ferror(in),
         fileno(in) > 2);
  fputs(rest, stdout);
  fclose(in);

  in = fopen("numbered.txt", "r");
  char *text = NULL;
  size_t capacity = 0;
  long length;
  int longest = 0;
  while ((length = getline(&text, &capacity, in)) > 0)
    if (length > longest)
      longest = (int)length;
  free(text);
  fclose(in);
  printf("longest line %d\n", longest);

  in = fopen("numbered.txt", "r");
  fseek(in, 3, SEEK_SET);
  long at = ftell(in);
  printf("ftell %ld, getc %c\n", at, getc(in));
  rewind(in);
  printf("after rewind %c\n", getc(in));
  fseek(in, 0, SEEK_END);
  int last = getc(in);
  printf("at end getc %d, eof %d\n", last, feof(in) != 0);
  clearerr(in);
  printf("cleared eof %d\n", feof(in));
  fclose(in);
  fflush(stdout);
  FILE *again = fdopen(1, "w");
  putc('#', again);
  fflush(again);
  putc('\n', stdout);
  fputs("done\n", stderr);
  FILE *missing = fopen("no-such-file", "r");
  printf("missing file: %s\n", missing == NULL ? "NULL" : "opened");
  return 0;
}
