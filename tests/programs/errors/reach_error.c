/* SV-COMP property: reach_error() must never be called, but check() calls it for v == 9. */
#include <symex.h>

extern void reach_error(void);

static void check(int v) {
  if (v * 3 == 27)
    reach_error(); /* BUG: reachable with v == 9 */
}

int main(void) {
  int v = __VERIFIER_nondet_int();
  check(v);
  return 0;
}
