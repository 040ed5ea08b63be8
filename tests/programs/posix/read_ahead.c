/* Reading and writing one FILE: positions must be the stream's, not the read-ahead's. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void) {
  FILE *f = fopen("scratch.txt", "w+");
  if (f == NULL)
    return 1;
  fputs("abcdefgh\n", f);
  rewind(f);
  int a = fgetc(f), b = fgetc(f), c = fgetc(f);
  printf("%c%c%c at %ld\n", a, b, c, ftell(f));
  fseek(f, -1, SEEK_CUR);
  long at = ftell(f);
  printf("back to %ld: %c\n", at, fgetc(f));
  ungetc('Z', f);
  printf("after ungetc at %ld\n", ftell(f));
  fgetc(f);
  fputc('X', f);           /* overwrites 'd' at offset 3 */
  printf("wrote at %ld\n", ftell(f) - 1);
  fseek(f, 0, SEEK_SET);
  char line[32];
  if (fgets(line, sizeof line, f) == NULL)
    return 2;
  printf("now: %s", line);
  char rest[8];
  size_t n = fread(rest, 1, sizeof rest, f);
  printf("rest %zu eof %d\n", n, feof(f));
  fclose(f);
  unlink("scratch.txt");
  int d = getchar();
  char tail[16];
  size_t m = fread(tail, 1, sizeof tail, stdin);
  printf("stdin %c then %zu bytes: %.*s\n", d, m, (int)m, tail);
  return 0;
}
