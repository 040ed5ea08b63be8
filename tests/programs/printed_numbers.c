/* A symbolic number printed to stdout, and the same number formatted into memory: musl's
   printf forks on the number of digits in both unless the printed one is fixed
   (env/printed_values.py). Exit status: the length of the string snprintf made. */
#include <stdio.h>
#include <string.h>
#include <klee/klee.h>

int main(int argc, char **argv) {
  unsigned x, y;
  char text[16];
  klee_make_symbolic(&x, sizeof x, "x");
  klee_make_symbolic(&y, sizeof y, "y");
  printf("%u\n", x);                       /* to a stream */
  snprintf(text, sizeof text, "%x", y);    /* into memory, read back below */
  return (int)strlen(text);
}
