/* faccessat with flags (test -r's euidaccess passes AT_EACCESS; musl asks the kernel's
   faccessat2 first, which returned ENOSYS): an existing file is accessible, a missing one
   ENOENT, an unknown flag EINVAL; and relative to a directory descriptor (it was EBADF under
   symex); X_OK needs an execute bit, even for root (test -x said yes to every file): the
   same output natively and under symex. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
int main(void) {
  close(open("present", O_WRONLY | O_CREAT | O_TRUNC, 0600));
  printf("%d ", faccessat(AT_FDCWD, "present", R_OK | W_OK, AT_EACCESS));
  int r = faccessat(AT_FDCWD, "absent", R_OK, AT_EACCESS);
  printf("%d %d ", r, errno == ENOENT);
  r = faccessat(AT_FDCWD, "present", R_OK, 0x4000000);
  printf("%d %d\n", r, errno == EINVAL);
  mkdir("dir", 0700);
  close(open("dir/inside", O_WRONLY | O_CREAT | O_TRUNC, 0600));
  int dir = open("dir", O_RDONLY | O_DIRECTORY);
  printf("%d ", faccessat(dir, "inside", R_OK | W_OK, 0));
  r = faccessat(dir, "absent", F_OK, AT_EACCESS);
  printf("%d %d ", r, errno == ENOENT);
  r = faccessat(99, "inside", F_OK, 0);
  printf("%d %d\n", r, errno == EBADF);
  r = access("present", X_OK);
  printf("%d %d ", r, errno == EACCES);
  chmod("present", 0610);
  printf("%d %d\n", access("present", X_OK), access("dir", X_OK));
  return 0;
}
