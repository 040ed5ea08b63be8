/* klee_report_error: the balance check reports an error when a payment overdraws. */
#include <klee/klee.h>

static int pay(int balance, int amount) {
  if (amount > balance)
    klee_report_error(__FILE__, __LINE__, "overdrawn", "user"); /* BUG: overdraft reported */
  return balance - amount;
}

int main(void) {
  int amount;
  klee_make_symbolic(&amount, sizeof amount, "amount");
  if (amount < 0)
    return 1;
  return pay(50, amount) == 0;
}
