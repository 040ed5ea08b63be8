/* Invalid free: short requests use a stack buffer, long ones a heap buffer, but release
 * always calls free. */
#include <klee/klee.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void release(char *buffer) {
  free(buffer); /* BUG: buffer is the stack array `local` when length <= 16 */
}

int main(void) {
  char local[16];
  unsigned length;
  klee_make_symbolic(&length, sizeof length, "length");
  char *buffer = local;
  if (length > sizeof local) {
    buffer = malloc(64);
    if (buffer == NULL)
      return 1;
  }
  memset(buffer, 'x', 8);
  buffer[8] = '\0';
  puts(buffer);
  release(buffer);
  return 0;
}
