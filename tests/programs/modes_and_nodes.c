/* chmod, fchmod, fchmodat (with AT_SYMLINK_NOFOLLOW too: fchmodat2), mknod, mkfifo,
   getgroups, getrandom (chmod, mkdir -m, mkfifo -m, mknod, id, mktemp; they returned
   ENOSYS): modes change as stat then says, the umask
   applies to new nodes, a FIFO is a FIFO, and the kernel's errors; the same output natively
   (as root or not: nothing here needs privilege) and under symex. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

static void result(int r) { printf("%d/%d ", r, r < 0 ? errno : 0); }

static void mode(const char *path) {
  struct stat st;
  if (stat(path, &st) == 0)
    printf("%s:%o ", path, (unsigned)st.st_mode);
  else
    printf("%s:- ", path);
}

int main(void) {
  umask(022);
  int fd = open("file", O_RDWR | O_CREAT | O_TRUNC, 0600);
  result(chmod("file", 0640));
  mode("file");
  result(fchmod(fd, 0604));
  mode("file");
  result(fchmodat(AT_FDCWD, "file", 0755, 0));
  mode("file");
  result(chmod("missing", 0644));
  result(fchmod(99, 0644));
  result(fchmodat(AT_FDCWD, "file", 0700, AT_SYMLINK_NOFOLLOW));
  mode("file");
  result(fchmodat(AT_FDCWD, "file", 0700, 0x4000000));
  printf("\n");
  result(mkfifo("fifo", 0666));
  mode("fifo");
  result(mknod("plain", S_IFREG | 0666, 0));
  mode("plain");
  result(mknod("plain", S_IFREG | 0666, 0));
  result(mknod("nodir/x", S_IFIFO | 0666, 0));
  result(mknod("dir", S_IFDIR | 0755, 0));
  result(mknodat(AT_FDCWD, "fifo2", S_IFIFO | 0600, 0));
  mode("fifo2");
  printf("\n");
  gid_t groups[4];
  result(getgroups(-1, groups));
  unsigned char bytes[16];
  printf("%zd\n", getrandom(bytes, sizeof bytes, 0));
  return 0;
}
