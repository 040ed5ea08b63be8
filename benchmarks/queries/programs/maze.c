/* KLEE's maze: a symbolic sequence of moves (w/a/s/d) over a small char grid.
 * Walls ('+', '-', '|') end the game; reaching the exit '#' fails klee_assert. */
#include <klee/klee.h>

#define H 7
#define W 11
#define ITERS 28

static char maze[H][W + 1] = {
    "+-+---+---+",
    "| |     |#|",
    "| | --+ | |",
    "| |   | | |",
    "| +-- | | |",
    "|     |   |",
    "+-----+---+",
};

int main(void) {
  int x = 1, y = 1, ox, oy, i;
  char program[ITERS];
  klee_make_symbolic(program, sizeof program, "program");
  maze[y][x] = 'X';
  for (i = 0; i < ITERS; i++) {
    ox = x;
    oy = y;
    switch (program[i]) {
    case 'w': y--; break;
    case 's': y++; break;
    case 'a': x--; break;
    case 'd': x++; break;
    default: return 1; /* wrong command */
    }
    if (maze[y][x] == '#') {
      klee_assert(0); /* the exit: a winning move sequence */
      return 2;
    }
    if (maze[y][x] != ' ' && !((y == 2 && maze[y][x] == '|' && x > 0 && x < W))) {
      x = ox;
      y = oy;
      return 3; /* hit a wall or own trail */
    }
    maze[y][x] = 'X';
  }
  return 0;
}
