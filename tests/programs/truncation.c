/* ftruncate and truncate (split, dd of=, shred): a file cut and grown with zero bytes, the
   offset kept; a negative length or a descriptor not open for writing EINVAL, a closed one
   EBADF, a missing path ENOENT, a directory EISDIR, a pipe (stdout here) EINVAL. The same
   natively. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

static void say(const char *call, int result) {
  printf("%s %d %d\n", call, result, result < 0 ? errno : 0);
  errno = 0;
}

static long size_of(int fd) {
  struct stat st;
  return fstat(fd, &st) == 0 ? (long)st.st_size : -1;
}

int main(void) {
  int fd = open("grown", O_RDWR | O_CREAT | O_TRUNC, 0600);
  write(fd, "abcdef", 6);
  say("cut", ftruncate(fd, 3));
  say("grow", ftruncate(fd, 8));
  printf("size %ld, offset %ld\n", size_of(fd), (long)lseek(fd, 0, SEEK_CUR));
  char bytes[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  lseek(fd, 0, SEEK_SET);
  long got = read(fd, bytes, sizeof bytes);
  printf("read %ld: %c%c%c %d%d%d%d%d\n", got, bytes[0], bytes[1], bytes[2], bytes[3], bytes[4],
         bytes[5], bytes[6], bytes[7]);
  say("negative", ftruncate(fd, -1));
  int reading = open("grown", O_RDONLY);
  say("read-only", ftruncate(reading, 0));
  say("closed", ftruncate(99, 0));
  say("path", truncate("grown", 2));
  printf("size %ld\n", size_of(fd));
  say("missing", truncate("missing", 0));
  mkdir("directory", 0700);
  say("directory", truncate("directory", 0));
  say("stdout", ftruncate(1, 0));
  close(fd);
  close(reading);
  unlink("grown");
  rmdir("directory");
  return 0;
}
