/* Null dereference: a list of n nodes (n from the input) is built in an array; second_value
 * assumes the list has at least two nodes, so for n == 1 it follows a NULL next pointer. */
#include <klee/klee.h>
#include <stddef.h>

struct node {
  int value;
  struct node *next;
};

static int second_value(const struct node *list) {
  return list->next->value; /* BUG: list->next is NULL when the list has one node */
}

int main(void) {
  struct node nodes[3];
  unsigned char n;
  klee_make_symbolic(&n, sizeof n, "n");
  if (n < 1 || n > 3)
    return 0;
  for (int i = 0; i < n; i++) {
    nodes[i].value = 10 * i;
    nodes[i].next = i + 1 < n ? &nodes[i + 1] : NULL;
  }
  return second_value(nodes);
}
