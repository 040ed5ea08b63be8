/* link, linkat, rename, renameat, renameat2 (ln and mv; they returned ENOSYS): a hard link
   is a second name of one file, rename moves a file or a whole directory (replacing a file
   or an empty directory), renameat2 refuses to replace or swaps; the kernel's errors in its
   order. The same output natively and under symex. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static void put(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  write(fd, text, strlen(text));
  close(fd);
}

static void show(const char *path) {
  char text[16] = {0};
  int fd = open(path, O_RDONLY);
  if (fd < 0) {
    printf("%s:- ", path);
    return;
  }
  read(fd, text, sizeof text - 1);
  close(fd);
  printf("%s:%s ", path, text);
}

static void result(int r) { printf("%d/%d ", r, r ? errno : 0); }

int main(void) {
  put("a", "one");
  result(link("a", "b"));
  put("b", "two");
  show("a");
  result(link("a", "b"));                 /* EEXIST */
  result(link("missing", "c"));           /* ENOENT */
  result(link("a", "nodir/c"));           /* ENOENT */
  mkdir("d", 0755);
  result(link("d", "e"));                 /* EPERM */
  result(linkat(AT_FDCWD, "a", AT_FDCWD, "d/a", 0));
  result(linkat(AT_FDCWD, "a", AT_FDCWD, "d/x", 0x8));  /* EINVAL */
  printf("\n");
  result(rename("a", "c"));
  show("a"), show("c"), show("b");
  put("f", "three");
  result(rename("f", "c"));               /* replaces c */
  show("c");
  result(rename("c", "d"));               /* EISDIR */
  result(rename("d", "c"));               /* ENOTDIR */
  result(rename("d", "d/sub"));           /* EINVAL */
  printf("\n");
  result(rename("d", "moved"));
  show("moved/a");
  struct stat st;
  printf("%d ", stat("d", &st));
  mkdir("full", 0755);
  put("full/x", "x");
  mkdir("empty", 0755);
  result(rename("full", "moved"));        /* ENOTEMPTY */
  result(rename("empty", "full"));        /* ENOTEMPTY */
  result(rename("full", "empty"));        /* replaces the empty directory */
  show("empty/x");
  printf("\n");
  put("p", "pp");
  put("q", "qq");
  result(syscall(SYS_renameat2, AT_FDCWD, "p", AT_FDCWD, "q", 1));   /* RENAME_NOREPLACE: EEXIST */
  result(syscall(SYS_renameat2, AT_FDCWD, "p", AT_FDCWD, "q", 2));   /* RENAME_EXCHANGE */
  show("p"), show("q");
  result(syscall(SYS_renameat2, AT_FDCWD, "p", AT_FDCWD, "r", 2));   /* ENOENT */
  result(syscall(SYS_renameat2, AT_FDCWD, "p", AT_FDCWD, "r", 1));
  show("r");
  result(renameat(AT_FDCWD, "r", AT_FDCWD, "empty/r"));
  show("empty/r");
  printf("\n");
  return 0;
}
