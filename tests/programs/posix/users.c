/* Looks its argument up in the user database: exit 0 and "NAME UID GROUP" when it names
   a user, 1 when not. */
#include <pwd.h>
#include <grp.h>
#include <stdio.h>
int main(int argc, char **argv) {
  if (argc < 2) return 3;
  struct passwd *p = getpwnam(argv[1]);
  if (!p) { printf("no such user\n"); return 1; }
  struct group *g = getgrgid(p->pw_gid);
  printf("%s %d %s\n", p->pw_name, (int)p->pw_uid, g ? g->gr_name : "?");
  return 0;
}
