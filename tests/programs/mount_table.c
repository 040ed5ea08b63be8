/* The mount table df reads (gnulib mountlist): it opens, and lists a file system mounted at
   the root, as on every Linux. */
#include <stdio.h>
#include <string.h>
int main(void) {
  FILE *table = fopen("/proc/self/mountinfo", "re");
  if (!table) { puts("no table"); return 1; }
  char line[4096], root[4096], target[4096];
  int listed = 0, lines = 0;
  while (fgets(line, sizeof line, table)) {
    lines++;
    if (sscanf(line, "%*u %*u %*u:%*u %4095s %4095s", root, target) == 2 && !strcmp(target, "/"))
      listed = 1;
  }
  fclose(table);
  printf("root listed: %d, lines: %d\n", listed, lines > 0);
  return 0;
}
