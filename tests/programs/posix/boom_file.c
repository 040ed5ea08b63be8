/* Reads the first line of file A and aborts on "boom". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
  char line[32];
  FILE *f = fopen("A", "r");
  if (f == NULL) {
    puts("no file");
    return 2;
  }
  if (fgets(line, sizeof line, f) == NULL) {
    puts("empty");
    fclose(f);
    return 1;
  }
  fclose(f);
  if (strcmp(line, "boom\n") == 0)
    abort();
  puts("ok");
  return 0;
}
