/* A symbolic time turned into a date by musl (env/printed_values.py): the program's own
   comparison of the time forks, the date it prints is of one time per path. */
#include <stdio.h>
#include <time.h>
#include <klee/klee.h>

int main(void) {
  time_t t;
  klee_make_symbolic(&t, sizeof t, "t");
  if (t < 0)
    return 2;
  if (t < 86400)
    puts("the first day");
  struct tm *tm = gmtime(&t);
  if (!tm)
    return 1;  /* a year past int's range */
  printf("%d-%02d-%02d %02d:%02d:%02d\n", tm->tm_year + 1900, tm->tm_mon + 1, tm->tm_mday,
         tm->tm_hour, tm->tm_min, tm->tm_sec);
  return 0;
}
