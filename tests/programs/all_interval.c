/* An all-interval series: N distinct notes 0..N-1 whose N-1 neighbour distances are
 * distinct too (a constraint puzzle, as SV-COMP's AllInterval tasks). Each distance's sign
 * is a branch, so a path is a pattern of rises and falls; a pattern no series follows is
 * an infeasible side that needs a proof of unsatisfiability over every constraint at once. */
#include <klee/klee.h>

#ifndef N
#define N 7
#endif

int main(void) {
    int note[N];
    int distance[N - 1];
    int rises = 0;
    klee_make_symbolic(note, sizeof note, "note");
    for (int i = 0; i < N; i++)
        klee_assume((note[i] >= 0) & (note[i] < N));
    for (int i = 0; i < N; i++)
        for (int j = i + 1; j < N; j++)
            klee_assume(note[i] != note[j]);
    for (int i = 0; i + 1 < N; i++) {
        int step = note[i + 1] - note[i];
        if (step >= 0) {
            distance[i] = step;
            rises++;
        } else {
            distance[i] = -step;
        }
        for (int j = 0; j < i; j++)
            klee_assume(distance[i] != distance[j]);
    }
    return rises;
}
