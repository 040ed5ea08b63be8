/* chown, fchown, lchown and fchownat (cp -a, cp -p, install -o): a file's owner given back
   to its own user succeeds, a missing file is ENOENT, a closed descriptor EBADF, an unknown
   flag EINVAL; the same natively, whoever runs it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

static void say(const char *call, int result) {
  printf("%s %d %d\n", call, result, result < 0 ? errno : 0);
  errno = 0;
}

int main(void) {
  int fd = open("owned", O_WRONLY | O_CREAT | O_TRUNC, 0600);
  uid_t user = getuid();
  gid_t group = getgid();
  say("chown", chown("owned", user, group));
  say("fchown", fchown(fd, user, -1));
  say("lchown", lchown("owned", -1, group));
  say("fchownat", fchownat(AT_FDCWD, "owned", user, group, AT_SYMLINK_NOFOLLOW));
  say("missing", chown("missing", user, group));
  say("closed", fchown(99, user, group));
  say("flags", fchownat(AT_FDCWD, "owned", user, group, 0x40000));
  close(fd);
  unlink("owned");
  return 0;
}
