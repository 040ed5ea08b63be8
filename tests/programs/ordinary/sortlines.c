/* sort: reads lines from standard input (or the file named by argv[1]) into malloc'd
 * strings, sorts them with qsort and strcmp, and prints them. A last line without a
 * newline gets one, as sort does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int compare_lines(const void *a, const void *b) {
  const char *const *x = a;
  const char *const *y = b;
  return strcmp(*x, *y);
}

int main(int argc, char **argv) {
  FILE *in = stdin;
  if (argc > 1) {
    in = fopen(argv[1], "r");
    if (in == NULL) {
      fprintf(stderr, "sort: cannot read: %s\n", argv[1]);
      return 2;
    }
  }
  size_t count = 0, capacity = 4;
  char **lines = malloc(capacity * sizeof *lines);
  if (lines == NULL)
    return 2;
  char buffer[256];
  while (fgets(buffer, sizeof buffer, in) != NULL) {
    size_t length = strlen(buffer);
    if (length > 0 && buffer[length - 1] == '\n')
      buffer[--length] = '\0';
    if (count == capacity) {
      capacity *= 2;
      char **bigger = realloc(lines, capacity * sizeof *lines);
      if (bigger == NULL)
        return 2;
      lines = bigger;
    }
    lines[count] = malloc(length + 1);
    if (lines[count] == NULL)
      return 2;
    memcpy(lines[count], buffer, length + 1);
    count++;
  }
  qsort(lines, count, sizeof *lines, compare_lines);
  for (size_t i = 0; i < count; i++) {
    printf("%s\n", lines[i]);
    free(lines[i]);
  }
  free(lines);
  if (in != stdin)
    fclose(in);
  return 0;
}
