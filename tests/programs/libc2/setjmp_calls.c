/* setjmp/longjmp across frames: an error handler style unwinding, a longjmp with 0 (setjmp
 * returns 1), a jump within one function, and nested jmp_bufs. */
#include <setjmp.h>
#include <stdio.h>

static jmp_buf outer, inner;
static int depth_reached;

static void dive(int depth, int fail_at) {
  char local[16];
  snprintf(local, sizeof local, "d%d", depth);
  depth_reached = depth;
  if (depth == fail_at)
    longjmp(outer, depth * 100);
  dive(depth + 1, fail_at);
  printf("not reached %s\n", local);
}

static int try_inner(int value) {
  int r = setjmp(inner);
  if (r == 0) {
    printf("inner armed\n");
    longjmp(inner, value);
  }
  return r;
}

int main(void) {
  volatile int rounds = 0;
  int r = setjmp(outer);
  printf("setjmp returned %d after %d rounds (depth %d)\n", r, rounds, depth_reached);
  if (rounds < 3) {
    rounds++;
    dive(1, rounds + 1);
  }
  printf("inner gives %d\n", try_inner(0));
  printf("inner gives %d\n", try_inner(42));
  sigjmp_buf sig;
  if (sigsetjmp(sig, 1) == 0) {
    printf("sig armed\n");
    siglongjmp(sig, 5);
  }
  printf("done\n");
  return 0;
}
