/* A stand-in for /bin/sh in tests/test_execve.py: prints its arguments, exits 3. */
#include <stdio.h>
int main(int argc, char **argv) {
  printf("sh");
  for (int i = 1; i < argc; i++) printf(" [%s]", argv[i]);
  printf("\n");
  return 3;
}
