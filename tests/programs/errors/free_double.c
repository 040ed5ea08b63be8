/* Double free: on the error path main already frees the message, and release frees it again. */
#include <klee/klee.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void release(char *message) {
  free(message); /* BUG: second free of message when mode is 'e' */
}

int main(void) {
  char mode;
  klee_make_symbolic(&mode, sizeof mode, "mode");
  char *message = malloc(6);
  if (message == NULL)
    return 1;
  memcpy(message, "hello", 6);
  puts(message);
  if (mode == 'e')
    free(message); /* the error path cleans up early ... */
  release(message);
  return 0;
}
