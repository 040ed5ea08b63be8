/* Use after free: the command 'q' logs the session out (freeing it), but main still asks
 * for the session's user afterwards. */
#include <klee/klee.h>
#include <stdlib.h>

struct session {
  int user;
  int active;
};

/* the logged-in session, shared with the rest of the program (volatile: an optimiser must not
 * assume it still knows what it points to, so the bug survives -O2 with any LLVM) */
static struct session *volatile current;

static void logout(struct session *s) { free(s); }

static int current_user(const struct session *s) {
  return s->user; /* BUG: reads a freed session after logout */
}

int main(void) {
  char command;
  klee_make_symbolic(&command, sizeof command, "command");
  struct session *s = malloc(sizeof *s);
  if (s == NULL)
    return 1;
  s->user = 42;
  s->active = 1;
  current = s;
  if (command == 'q')
    logout(s);
  int user = current_user(current);
  if (command != 'q')
    free(s);
  return user == 42 ? 0 : 1;
}
