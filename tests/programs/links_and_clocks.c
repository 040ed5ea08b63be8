/* readlink and readlinkat (realpath, readlink -f: musl's realpath reads each component
   with readlink, which returned ENOSYS, so realpath failed) and clock_getres (gnulib's
   gettime_res): a file is not a link (EINVAL), a missing path is ENOENT, realpath of a file
   is its absolute name; the clocks' resolutions; the same output natively and under symex. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
int main(void) {
  char buffer[PATH_MAX], here[PATH_MAX];
  close(open("file", O_WRONLY | O_CREAT | O_TRUNC, 0600));
  ssize_t r = readlink("file", buffer, sizeof buffer);
  printf("%zd %d ", r, errno == EINVAL);
  r = readlink("missing", buffer, sizeof buffer);
  printf("%zd %d ", r, errno == ENOENT);
  r = readlinkat(AT_FDCWD, "file", buffer, sizeof buffer);
  printf("%zd %d\n", r, errno == EINVAL);
  char *resolved = realpath("./file", buffer);
  size_t length = strlen(getcwd(here, sizeof here));
  printf("%d %d %s\n", resolved != NULL, resolved && strncmp(resolved, here, length) == 0,
         resolved ? strrchr(resolved, '/') : "-");
  printf("%d\n", realpath("missing", buffer) == NULL && errno == ENOENT);
  clockid_t clocks[] = {CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_MONOTONIC_COARSE, 10};
  for (int i = 0; i < 4; i++) {
    struct timespec t = {7, 7};
    int got = clock_getres(clocks[i], &t);
    printf("%d %ld %ld\n", got, (long)t.tv_sec, t.tv_nsec);
  }
  return 0;
}
