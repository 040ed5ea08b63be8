/* Concrete, loop-heavy work for measuring raw interpretation speed: fill an array of
 * COUNT ints from a linear congruential generator, insertion-sort it and fold a checksum,
 * ROUNDS times (argv[1], default 1; every round sorts the same numbers). No symbolic input,
 * so every instruction runs on concrete values. The round count comes from argv so that one
 * .ll file serves both symex (1-2 rounds) and lli (hundreds): the instruction count grows
 * exactly linearly in the rounds. */
#ifndef COUNT
#define COUNT 400
#endif

static unsigned next_random(unsigned *seed) {
  *seed = *seed * 1103515245u + 12345u;
  return (*seed >> 16) & 0x7fff;
}

static unsigned sort_round(unsigned seed) {
  int a[COUNT];
  for (int i = 0; i < COUNT; i++)
    a[i] = (int)next_random(&seed);
  for (int i = 1; i < COUNT; i++) {
    int key = a[i];
    int j = i - 1;
    while (j >= 0 && a[j] > key) {
      a[j + 1] = a[j];
      j--;
    }
    a[j + 1] = key;
  }
  unsigned checksum = 0;
  for (int i = 0; i < COUNT; i++) {
    if (i > 0 && a[i - 1] > a[i])
      return 0xffffffffu; /* not sorted: would be an engine bug */
    checksum = checksum * 31u + (unsigned)a[i];
  }
  return checksum;
}

int main(int argc, char **argv) {
  int rounds = 0;
  if (argc > 1)
    for (const char *p = argv[1]; *p >= '0' && *p <= '9'; p++)
      rounds = rounds * 10 + (*p - '0');
  else
    rounds = 1;
  unsigned checksum = 0;
  for (int r = 0; r < rounds; r++) {
    unsigned round_sum = sort_round(42u);
    if (round_sum == 0xffffffffu)
      return 255;
    checksum = checksum * 31u + round_sum;
  }
  return (int)(checksum & 0x7f);
}
