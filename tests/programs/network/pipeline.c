/* Three processes joined by pipes: a producer writes words, a filter upper-cases them
 * (its stdin and stdout moved onto the pipes with dup2), and the parent counts and prints. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
  int first[2], second[2];
  if (pipe(first) || pipe(second)) return 1;
  pid_t producer = fork();
  if (producer == 0) {
    close(first[0]); close(second[0]); close(second[1]);
    const char *words[] = {"alpha ", "beta ", "gamma\n"};
    for (int i = 0; i < 3; i++) write(first[1], words[i], strlen(words[i]));
    close(first[1]);
    return 0;
  }
  pid_t filter = fork();
  if (filter == 0) {
    dup2(first[0], 0); dup2(second[1], 1);
    close(first[0]); close(first[1]); close(second[0]); close(second[1]);
    int c;
    while ((c = getchar()) != EOF) putchar(toupper(c));
    return 0;
  }
  close(first[0]); close(first[1]); close(second[1]);
  char buffer[64];
  int total = 0, n;
  while ((n = read(second[0], buffer + total, sizeof buffer - 1 - total)) > 0) total += n;
  buffer[total] = 0;
  int status1, status2;
  waitpid(producer, &status1, 0);
  waitpid(filter, &status2, 0);
  printf("%d bytes: %s", total, buffer);
  printf("children exited %d %d\n", WEXITSTATUS(status1), WEXITSTATUS(status2));
  return 0;
}
