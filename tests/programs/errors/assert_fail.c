/* Failing assert(): withdraw asserts there is enough money, but main never checks. */
#include <assert.h>
#include <klee/klee.h>

static int withdraw(int balance, int amount) {
  assert(amount <= balance); /* BUG: fails when amount exceeds balance */
  return balance - amount;
}

int main(void) {
  int amount;
  klee_make_symbolic(&amount, sizeof amount, "amount");
  if (amount < 0)
    return 1;
  return withdraw(100, amount) == 0;
}
