/* fprintf through stdio.c's FILE: stdout, stderr and a file written then read back. */
#include <stdio.h>
#include <string.h>
int main(void) {
  fputs("start\n", stdout);
  fprintf(stderr, "err %d\n", 1);
  FILE *f = fopen("out.txt", "w");
  if (!f) { printf("no fopen\n"); return 1; }
  int n = fprintf(f, "line %d %s\n", 7, "x");
  fclose(f);
  char buf[32] = {0};
  f = fopen("out.txt", "r");
  if (!f) { printf("no reopen\n"); return 2; }
  fgets(buf, sizeof buf, f);
  printf("wrote %d, read back [%s]\n", n, buf);
  return 0;
}
