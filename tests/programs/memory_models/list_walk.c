/* A linked list whose links the input chooses, walked three steps: pointer chasing through
   heap objects. One walk's sum fails an assertion; with the high bit of the first link the
   last node is freed first, and a walk that reaches it reads freed memory. */
#include <klee/klee.h>
#include <assert.h>
#include <stdlib.h>

struct node {
    int value;
    struct node *next;
};

int main(void) {
    unsigned char links[4];
    klee_make_symbolic(links, sizeof links, "links");
    struct node *all[4];
    for (int n = 0; n < 4; n++) {
        all[n] = malloc(sizeof *all[n]);
        all[n]->value = n == 0 ? 1 : n == 1 ? 10 : n == 2 ? 100 : 1000;
    }
    for (int n = 0; n < 4; n++)
        all[n]->next = all[links[n] & 3];
    if (links[0] & 0x80)
        free(all[3]);
    struct node *p = all[0];
    int sum = 0;
    for (int step = 0; step < 3; step++) {
        sum += p->value; /* error: ptr */
        p = p->next;
    }
    assert(sum != 1101); /* error: assert */
    return sum > 100;
}
