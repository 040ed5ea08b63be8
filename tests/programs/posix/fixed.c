/* Prints the process facts symex fixes: the time, the process id and the directory. */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

int main(void) {
  char cwd[16];
  time_t now;
  time_t returned = time(&now);
  printf("time %ld %ld\n", (long)returned, (long)now);
  printf("pid %d\n", (int)getpid());
  printf("cwd %s\n", getcwd(cwd, sizeof cwd));
  printf("small buffer %s\n", getcwd(cwd, 1) == NULL ? "NULL" : "set");
  return 0;
}
