/* Ordinary C exercising the IR clang emits: run natively and under symex, outputs must match. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct point { int x, y; };
struct packet { uint8_t kind; uint16_t len; uint32_t crc; char name[5]; struct point at; };
union word { uint32_t u; uint8_t bytes[4]; float f; };
struct flags { unsigned a : 3; unsigned b : 5; signed c : 4; };

static const char *names[] = {"zero", "one", "two", "three"};
static int table[8] = {3, 1, 4, 1, 5, 9, 2, 6};
static int *middle = &table[4];
static struct point origin = {7, -7};

static int add(int a, int b) { return a + b; }
static int mul(int a, int b) { return a * b; }
static int (*ops[])(int, int) = {add, mul};

static long sum(int count, ...) {
  va_list ap, copy;
  va_start(ap, count);
  va_copy(copy, ap);
  long total = 0;
  for (int i = 0; i < count; i++)
    total += va_arg(ap, long);
  long first = count ? va_arg(copy, long) : 0;
  va_end(copy);
  va_end(ap);
  return total * 10 + first;
}

static double average(int count, ...) {
  va_list ap;
  va_start(ap, count);
  double total = 0;
  for (int i = 0; i < count; i++)
    total += va_arg(ap, double);
  va_end(ap);
  return total / count;
}

static int classify(int v) {
  switch (v) {
  case 0: return 100;
  case 1: case 2: return 200;
  case 7: return 300;
  case -5: return 400;
  default: return -1;
  }
}

static unsigned fib(unsigned n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

static void sort(int *a, int n) {
  for (int i = 1; i < n; i++) {
    int v = a[i], j = i - 1;
    while (j >= 0 && a[j] > v) { a[j + 1] = a[j]; j--; }
    a[j + 1] = v;
  }
}

int main(void) {
  /* integer arithmetic at several widths, signed and unsigned */
  int32_t s = -17; uint32_t u = 4000000000u; int64_t big = -123456789012345LL;
  int8_t c8 = -128; uint16_t h = 65535;
  printf("div %d %d %d %d\n", s / 5, s % 5, -s / 5, s / -5);
  printf("udiv %u %u\n", u / 7u, u % 7u);
  printf("shift %d %u %lld %d\n", s >> 2, u >> 3, (long long)(big >> 9), (int)((uint32_t)s << 4));
  printf("wrap %d %u %d %u\n", (int8_t)(c8 - 1), (unsigned)(uint16_t)(h + 1), (int)(int16_t)h, u * 3u);
  printf("cmp %d %d %d %d %d %d\n", s < 3, u > 3u, (uint32_t)s > u, big < 0, s <= -17, h >= 65535);
  printf("bits %x %x %d %d %d %d\n", u & 0xff00ff, u ^ 0xffff, __builtin_popcount(u),
         __builtin_clz(1234u), __builtin_ctz(1024u), __builtin_bswap32(0x11223344u) == 0x44332211u);
  int ov; int of = __builtin_add_overflow(2147483647, 1, &ov);
  unsigned uo; int uf = __builtin_mul_overflow(65536u, 65536u, &uo);
  printf("overflow %d %d %d %u\n", of, ov, uf, uo);
  printf("abs %d %ld\n", abs(-42), labs(-7L));

  /* control flow */
  int acc = 0;
  for (int i = -6; i < 9; i++) acc += classify(i);
  printf("switch %d\n", acc);
  printf("fib %u\n", fib(15));
  printf("ptrs %d %d\n", ops[0](6, 7), ops[1](6, 7));
  printf("varargs %ld %ld %.3f\n", sum(3, 1L, 2L, 3L), sum(0), average(4, 1.5, 2.5, 3.0, 5.0));
  int x = table[3] ? table[2] : table[1];
  printf("select %d %s\n", x, names[table[1] + 1]);

  /* memory: globals, structs, unions, bitfields, heap, 2-D arrays */
  printf("globals %d %d %d %d\n", *middle, middle[-1], origin.x, origin.y);
  struct packet p = {1, 512, 0xdeadbeef, "abcd", {3, 4}};
  struct packet q;
  memcpy(&q, &p, sizeof p);
  q.at.y += 10;
  printf("struct %u %u %x %s %d %d %zu\n", q.kind, q.len, q.crc, q.name, q.at.x, q.at.y, sizeof q);
  union word w; w.u = 0x41424344u;
  printf("union %c%c%c%c\n", w.bytes[0], w.bytes[1], w.bytes[2], w.bytes[3]);
  w.f = 1.0f;
  printf("float bits %x\n", w.u);
  struct flags fl = {5, 17, -3};
  fl.a += 3; fl.c -= 1;
  printf("bitfields %u %u %d\n", fl.a, fl.b, fl.c);
  int *heap = malloc(10 * sizeof *heap);
  for (int i = 0; i < 10; i++) heap[i] = (i * 7919) % 31;
  heap = realloc(heap, 20 * sizeof *heap);
  for (int i = 10; i < 20; i++) heap[i] = -i;
  sort(heap, 20);
  long hsum = 0;
  for (int i = 0; i < 20; i++) hsum = hsum * 3 + heap[i];
  printf("heap %d %d %ld\n", heap[0], heap[19], hsum);
  free(heap);
  int grid[4][5];
  memset(grid, 0, sizeof grid);
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 5; j++) grid[i][j] = i * j;
  int gsum = 0, gmax = 0;
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 5; j++) { gsum += grid[i][j]; gmax = grid[i][j] > gmax ? grid[i][j] : gmax; }
  printf("grid %d %d\n", gsum, gmax);
  char buf[32];
  for (int i = 0; i < 26; i++) buf[i] = (char)('a' + (i * 5) % 26);
  buf[26] = 0;
  printf("chars %s\n", buf);

  /* floating point (concrete) */
  double d = 3.75; float f = 2.5f;
  printf("float %.4f %.4f %d %u %.2f\n", d * f, d / 3.0, (int)(d * -2.0), (unsigned)(f * 4.0f), (double)(float)(1.0 / 3.0));
  return acc & 0x7f;
}
