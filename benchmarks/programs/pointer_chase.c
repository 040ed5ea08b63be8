/* A linked list of NODES heap nodes whose links the input chooses, walked STEPS steps (the
   memory models' benchmark: pointer chasing through several objects). */
#include <klee/klee.h>
#include <assert.h>
#include <stdlib.h>

#ifndef NODES
#define NODES 6
#endif
#ifndef STEPS
#define STEPS 4
#endif

struct node {
    int value;
    struct node *next;
};

int main(void) {
    unsigned char links[NODES];
    klee_make_symbolic(links, sizeof links, "links");
    struct node *all[NODES];
    int value = 1;
    for (int n = 0; n < NODES; n++) {
        all[n] = malloc(sizeof *all[n]);
        all[n]->value = value;
        value *= 3;
    }
    for (int n = 0; n < NODES; n++)
        all[n]->next = all[links[n] % NODES];
    struct node *p = all[0];
    int sum = 0;
    for (int step = 0; step < STEPS; step++) {
        sum += p->value;
        p = p->next;
    }
    if (sum == 1 + 9 + 81 + 3) /* nodes 0, 2, 4, 1 */
        return 2;
    return sum % 3 == 1;
}
