/* Division by zero on a path where a switch case fixes the divisor: for command 8 the
 * divisor command - 8 is 0. (At -O2 the compiler deletes the undefined division, so this
 * program is only meaningful at -O0.) */
#include <klee/klee.h>

static int scale(int command, int value) {
  switch (command) {
  case 4:
    return value / (command - 2);
  case 8:
    return value / (command - 8); /* BUG: command - 8 is 0 in this case */
  }
  return value;
}

int main(void) {
  int command;
  klee_make_symbolic(&command, sizeof command, "command");
  return scale(command, 1000) == 500;
}
