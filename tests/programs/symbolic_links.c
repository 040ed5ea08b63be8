/* Symbolic links (ln -s, readlink, realpath, ls -l, cp -P): made, read, followed by open and
   stat and not by lstat, unlink, rename and mkdir; a link to a missing file, one through a
   directory, a relative target taken from the link's directory, a loop (ELOOP), O_NOFOLLOW,
   a listing's d_type, lchmod (EOPNOTSUPP on a link). The same natively, run in an empty
   directory. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void say(const char *call, long result) {
  printf("%s %ld %d\n", call, result, result < 0 ? errno : 0);
  errno = 0;
}

static void target_of(const char *path) {
  char buffer[64];
  memset(buffer, 'x', sizeof buffer);
  long got = readlink(path, buffer, sizeof buffer);
  printf("readlink %s: %ld '%.*s' %d\n", path, got, got > 0 ? (int)got : 0, buffer, got < 0 ? errno : 0);
  errno = 0;
}

/* a file's or link's size (a directory's differs between file systems) */
static long size_of(int failed, const struct stat *st) {
  return failed || S_ISDIR(st->st_mode) ? -1L : (long)st->st_size;
}

static void kinds(const char *path) {
  struct stat followed, own;
  int s = stat(path, &followed), l = lstat(path, &own);
  printf("%s: stat %d %s %ld, lstat %d %s %ld\n", path, s, s ? "-" : S_ISREG(followed.st_mode) ? "file"
         : S_ISDIR(followed.st_mode) ? "dir" : "other", size_of(s, &followed), l,
         l ? "-" : S_ISLNK(own.st_mode) ? "link" : "not-link", size_of(l, &own));
  errno = 0;
}

int main(void) {
  int fd = open("data", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  write(fd, "hello", 5);
  close(fd);
  say("symlink", symlink("data", "to-data"));
  say("again", symlink("data", "to-data"));
  say("empty", symlink("", "empty-target"));
  target_of("to-data");
  target_of("data");
  target_of("missing");
  char small[3];
  say("cut", readlink("to-data", small, sizeof small));
  kinds("to-data");
  char text[8] = {0};
  fd = open("to-data", O_RDONLY);
  say("read through", read(fd, text, sizeof text - 1));
  printf("read '%s'\n", text);
  close(fd);
  say("nofollow", open("to-data", O_RDONLY | O_NOFOLLOW));
  say("lchmod link", fchmodat(AT_FDCWD, "to-data", 0600, AT_SYMLINK_NOFOLLOW));
  say("lchmod file", fchmodat(AT_FDCWD, "data", 0600, AT_SYMLINK_NOFOLLOW));
  say("excl", open("to-data", O_WRONLY | O_CREAT | O_EXCL, 0644));
  /* a dangling link: stat fails, lstat does not; writing through it makes the target */
  say("dangling", symlink("later", "to-later"));
  kinds("to-later");
  fd = open("to-later", O_WRONLY | O_CREAT, 0644);
  say("create through", fd);
  write(fd, "abc", 3);
  close(fd);
  kinds("later");
  /* a relative target is taken from the link's own directory */
  mkdir("sub", 0755);
  say("in sub", symlink("../data", "sub/up"));
  kinds("sub/up");
  say("to dir", symlink("sub", "to-sub"));
  kinds("to-sub/up");
  kinds("to-sub");
  say("chdir", chdir("to-sub"));
  kinds("up");
  say("chdir back", chdir(".."));
  char resolved[PATH_MAX];
  printf("realpath %s\n", realpath("to-sub/up", resolved) ? resolved + strlen(resolved) - 4 : "failed");
  /* loops */
  symlink("loop-b", "loop-a");
  symlink("loop-a", "loop-b");
  say("loop open", open("loop-a", O_RDONLY));
  kinds("loop-a");
  /* names, not targets */
  say("mkdir on link", mkdir("to-later", 0755));
  say("rename", rename("to-later", "moved"));
  kinds("moved");
  say("unlink", unlink("moved"));
  kinds("later");
  int entries = 0, links = 0;
  DIR *listing = opendir(".");
  for (struct dirent *entry; (entry = readdir(listing));) {
    entries++;
    links += entry->d_type == DT_LNK;
  }
  closedir(listing);
  printf("listed %d, %d links\n", entries, links);
  say("rmdir link", rmdir("to-sub"));
  unlink("to-data");
  unlink("to-sub");
  unlink("sub/up");
  rmdir("sub");
  unlink("loop-a");
  unlink("loop-b");
  unlink("later");
  unlink("data");
  return 0;
}
