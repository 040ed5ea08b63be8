/* The working directory: it opens for reading, a read of it fails with EISDIR, it does not
   open for writing, and readdir lists ".", ".." and the files in it (the symbolic file A). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  FILE *f = fopen(".", "r");
  if (!f) {
    printf("fopen failed\n");
    return 1;
  }
  int c = fgetc(f);
  printf("read: %s\n", c == EOF && ferror(f) && errno == EISDIR ? "EISDIR" : "other");
  fclose(f);
  FILE *w = fopen(".", "w");
  printf("write: %s\n", !w && errno == EISDIR ? "EISDIR" : "other");
  DIR *d = opendir(".");
  if (!d) {
    printf("opendir failed\n");
    return 2;
  }
  int dots = 0, a = 0, others = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
      dots++;
    else if (!strcmp(e->d_name, "A") && e->d_type == DT_REG)
      a++;
    else
      others++;
  }
  closedir(d);
  printf("dots %d A %d others %d\n", dots, a, others);
  return 0;
}
