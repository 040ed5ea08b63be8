/* A path ending in a slash names a directory: creating a file by such a name is EISDIR (split
   --additional-suffix=9/ made a file "xaa9" under symex and failed natively), opening a
   directory so works, and mkdir takes the slash. The same natively. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

static void say(const char *call, int result) {
  printf("%s %d %d\n", call, result < 0 ? -1 : 0, result < 0 ? errno : 0);
  errno = 0;
}

int main(void) {
  say("create", open("xaa9/", O_WRONLY | O_CREAT | O_TRUNC, 0644));
  say("no file", access("xaa9", F_OK));
  say("mkdir", mkdir("made/", 0755));
  int fd = open("made/", O_RDONLY | O_DIRECTORY);
  say("open dir", fd);
  close(fd);
  rmdir("made");
  return 0;
}
