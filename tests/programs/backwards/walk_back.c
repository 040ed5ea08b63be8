/* Pointers and indices walked backwards with offsets of every width, and negative constants
   in every place a constant operand is read: clang emits `p--` at -O0 as a GEP by `i32 -1`,
   struct fields and switch cases as i32, `(signed char)` and `short` indices are sign-extended.
   Its output is compared with the native build's at -O0 and -O2. */
#include <stdio.h>
#include <stdint.h>

struct pair { short a; long long b; };

static volatile int sink;

static long long walk_chars(void) {
  char buf[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  long long s = 0;
  for (char *p = buf + 7; p >= buf; p--) s = s * 3 + *p;
  char *q = buf + 7;
  q -= 5;
  s += *q;            /* buf[2] */
  s += q[-1];         /* buf[1] */
  s += *(q - 2);      /* buf[0] */
  return s;
}

static long long walk_shorts(void) {
  short buf[6] = {10, -20, 30, -40, 50, -60};
  long long s = 0;
  for (short *p = &buf[5]; p != buf - 1; --p) s = s * 5 + *p;
  short *end = buf + 6;
  s += end[-6] + end[-1];
  return s;
}

static long long walk_ints(void) {
  int buf[5] = {7, 11, 13, 17, 19};
  long long s = 0;
  int *p = buf + 5;
  while (p > buf) s = s * 7 + *--p;
  for (int i = 4; i >= 0; i--) s += buf[i] * (i + 1);
  for (signed char c = 4; c >= 0; c--) s ^= buf[c];
  for (short h = 4; h > -1; h -= 2) s += buf[h];
  for (long long l = 4; l >= 0; l -= 3) s -= buf[l];
  return s;
}

static long long walk_wide(void) {
  long long buf[4] = {1000000007LL, -3, 5, -7000000000LL};
  long long s = 0;
  for (long long *p = buf + 3; p >= buf; p -= 1) s = s * 2 + *p;
  struct pair pairs[3] = {{1, 2}, {3, 4}, {5, 6}};
  for (struct pair *p = pairs + 2; p >= pairs; p--) s = s * 3 + p->a - p->b;
  return s;
}

static int classify(int x) {
  switch (x) {
    case -1: return 100;
    case -128: return 200;
    case -32768: return 300;
    case -2147483647 - 1: return 400;
    case 5: return 500;
    default: return x < -5 ? 600 : 700;
  }
}

static long long constants(void) {
  long long s = 0;
  int xs[] = {-1, -128, -32768, -2147483647 - 1, 5, -6, -5, 0};
  for (unsigned i = 0; i < sizeof xs / sizeof xs[0]; i++) {
    sink = xs[i];
    int x = sink;
    s = s * 11 + classify(x);
    signed char c = (signed char)x;      /* trunc */
    short h = (short)x;
    s += c + h + (x < -2) + (x >= -128) + ((unsigned)x > 0xFFFFFF80u);
    long long wide = x;                 /* sext */
    s += wide >> 40;
    s += (int8_t)-3 * (int16_t)-300 + (int64_t)(int32_t)-7;
  }
  return s;
}

int main(void) {
  long long results[] = {walk_chars(), walk_shorts(), walk_ints(), walk_wide(), constants()};
  for (int i = 4; i >= 0; i--) printf("%d: %lld\n", i, results[i]);
  return (int)(results[0] & 0x7f);
}
