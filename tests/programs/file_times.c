/* utimensat, futimens, utimes (touch, cp -p; they returned ENOSYS): setting a file's times
   succeeds, a missing file is ENOENT, nanoseconds out of range EINVAL, a closed descriptor
   EBADF; the same output natively and under symex (whose model keeps no times). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>
int main(void) {
  int fd = open("file", O_RDWR | O_CREAT | O_TRUNC, 0600);
  struct timespec times[2] = {{1000, 0}, {2000, UTIME_OMIT}};
  printf("%d ", utimensat(AT_FDCWD, "file", times, 0));
  printf("%d ", utimensat(AT_FDCWD, "file", NULL, 0));
  int r = utimensat(AT_FDCWD, "missing", NULL, 0);
  printf("%d %d ", r, errno == ENOENT);
  times[0].tv_nsec = 1000000000;
  r = utimensat(AT_FDCWD, "file", times, 0);
  printf("%d %d\n", r, errno == EINVAL);
  printf("%d ", futimens(fd, NULL));
  r = futimens(99, NULL);
  printf("%d %d ", r, errno == EBADF);
  struct timeval old[2] = {{1, 0}, {2, 0}};
  printf("%d\n", utimes("file", old));
  return 0;
}
