/* posix_fadvise (cat and the digest tools advise sequential reads; it returned ENOSYS):
   0 on a file, ESPIPE on a pipe, EBADF on a closed descriptor, EINVAL for an unknown advice
   or a negative length; the same output natively and under symex (musl's glue.c answers). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

/* POSIX (and musl's source, which symex runs) returns the error number; the musl that zig
   links natively has its own posix_fadvise, which returns -1 and sets errno */
static int advise(int fd, off_t offset, off_t length, int advice) {
  int r = posix_fadvise(fd, offset, length, advice);
  return r == -1 ? errno : r;
}

int main(void) {
  int fd = open("advised", O_RDWR | O_CREAT | O_TRUNC, 0600);
  int p[2];
  if (fd < 0 || pipe(p) != 0)
    return 1;
  printf("%d %d\n", advise(fd, 0, 0, POSIX_FADV_SEQUENTIAL), advise(fd, 4096, 8192, POSIX_FADV_DONTNEED));
  printf("%d\n", advise(p[0], 0, 0, POSIX_FADV_SEQUENTIAL) == ESPIPE);
  printf("%d\n", advise(99, 0, 0, POSIX_FADV_NORMAL) == EBADF);
  printf("%d %d\n", advise(fd, 0, 0, 42) == EINVAL, advise(fd, 0, -1, POSIX_FADV_NORMAL) == EINVAL);
  return 0;
}
