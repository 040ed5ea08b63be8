/* statfs, statvfs, fstatfs (stat -f, df): what a program checks of a file system, and the
   errors of a missing path and a closed descriptor; the same output natively and under
   symex (musl's glue.c answers them). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
int main(void) {
  struct statfs s;
  struct statvfs v;
  int r = statfs(".", &s);
  printf("%d %d %d\n", r, s.f_bsize > 0, s.f_namelen == 255);
  r = statvfs(".", &v);
  printf("%d %d\n", r, v.f_namemax == 255 && v.f_frsize > 0 && v.f_bavail <= v.f_blocks);
  r = statfs("no-such-file", &s);
  printf("%d %d\n", r, errno == ENOENT);
  r = fstatfs(open(".", O_RDONLY | O_DIRECTORY), &s);
  printf("%d %d\n", r, s.f_blocks > 0);
  r = fstatfs(99, &s);
  printf("%d %d\n", r, errno == EBADF);
  return 0;
}
