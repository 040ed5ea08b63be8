/* Exercises the system calls on a file "data.txt" (holding "0123456789\n") and files it
 * creates itself; prints what each call returned. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void show(const char *what, long value) { printf("%s: %ld\n", what, value); }

int main(void) {
  char buf[32];
  struct stat st;

  int fd = open("data.txt", O_RDONLY);
  show("open data.txt >= 3", fd >= 3);
  long n = read(fd, buf, 5);
  buf[n] = '\0';
  printf("read %ld: %s\n", n, buf);
  show("lseek set 2", lseek(fd, 2, SEEK_SET));
  n = read(fd, buf, 3);
  buf[n] = '\0';
  printf("read %ld: %s\n", n, buf);
  show("lseek cur", lseek(fd, 0, SEEK_CUR));
  show("lseek end", lseek(fd, 0, SEEK_END));
  show("read at end", read(fd, buf, 4));
  show("fstat", fstat(fd, &st));
  show("fstat size", (long)st.st_size);
  show("fstat regular", S_ISREG(st.st_mode));
  int copy = dup(fd);
  lseek(fd, 7, SEEK_SET);
  n = read(copy, buf, 2);
  buf[n] = '\0';
  printf("dup shares the offset: %s\n", buf);
  show("close copy", close(copy));
  show("close", close(fd));
  show("close again", close(fd));
  show("close again errno EBADF", errno == EBADF);
  show("read closed", read(fd, buf, 1));

  show("stat", stat("data.txt", &st));
  show("stat size", (long)st.st_size);
  show("lstat", lstat("data.txt", &st));
  errno = 0;
  show("stat missing", stat("missing.txt", &st));
  show("stat missing errno ENOENT", errno == ENOENT);
  show("open missing", open("missing.txt", O_RDONLY));
  show("open missing errno ENOENT", errno == ENOENT);
  show("access data.txt", access("data.txt", R_OK));
  show("access missing", access("missing.txt", F_OK));

  fd = openat(AT_FDCWD, "data.txt", O_RDONLY);
  n = read(fd, buf, 3);
  buf[n] = '\0';
  printf("openat read: %s\n", buf);
  close(fd);

  fd = open("out.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  show("write", write(fd, "hello", 5));
  show("write more", write(fd, " world", 6));
  show("read from write-only", read(fd, buf, 1));
  close(fd);
  fd = open("out.txt", O_WRONLY | O_APPEND);
  lseek(fd, 0, SEEK_SET);
  show("append", write(fd, "!", 1));
  close(fd);
  fd = open("out.txt", O_RDWR);
  n = read(fd, buf, sizeof buf - 1);
  buf[n] = '\0';
  printf("read back %ld: %s\n", n, buf);

  int saved = dup(1);
  show("dup2", dup2(fd, 1) == 1);
  write(1, "<redirected>", 12);
  dup2(saved, 1);
  close(saved);
  lseek(fd, -12, SEEK_END);
  n = read(fd, buf, 12);
  buf[n] = '\0';
  printf("redirected write landed in the file: %s\n", buf);
  close(fd);

  show("unlink", unlink("out.txt"));
  show("open unlinked", open("out.txt", O_RDONLY));
  show("unlink again", unlink("out.txt"));
  show("unlink again errno ENOENT", errno == ENOENT);
  show("open excl", open("data.txt", O_WRONLY | O_CREAT | O_EXCL, 0644));
  show("open excl errno EEXIST", errno == EEXIST);
  show("isatty stdin", isatty(0));
  show("isatty bad fd", isatty(99));
  write(2, "to stderr\n", 10);
  return 0;
}
