/* atexit: handlers run last registered first, at exit() and at main's return, and what they
 * print is part of the output. The argument picks how the program ends. */
#include <stdio.h>
#include <stdlib.h>

static int counter;

static void first(void) { printf("first handler, counter %d\n", counter); }
static void second(void) { counter += 10; printf("second handler, counter %d\n", counter); }
static void third(void) { counter++; printf("third handler\n"); }

static void finish(int how) {
  if (how == 1)
    exit(3);
}

int main(int argc, char **argv) {
  int how = argc > 1 ? atoi(argv[1]) : 0;
  int a = atexit(first);
  int b = atexit(second);
  int c = atexit(third);
  printf("register %d %d %d\n", a, b, c);
  printf("registered twice: %d\n", atexit(third));
  counter = 5;
  finish(how);
  printf("main returns\n");
  return 7;
}
