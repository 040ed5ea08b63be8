#include <klee/klee.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
int main(void) {
  float f;
  int i;
  klee_make_symbolic(&f, sizeof f, "f");
  klee_make_symbolic(&i, sizeof i, "i");
  double d = f;                       /* fpext */
  if (!(fabsf(f) < 2147483648.0f)) { printf("out of int range\n"); return 1; }
  int t = (int)f;                     /* fptosi, in range */
  if (t == 2147483520) printf("largest float below 2^31\n");
  else if (t == -7 && f != -7.0f) printf("truncated toward zero\n");
  unsigned u = (unsigned)fabsf(f);
  if (u > 4000000000u) printf("never\n");
  float g = (float)i;                 /* sitofp rounds */
  if ((int)g != i && i > 0) printf("int not exact in float\n");
  double back = (double)(float)(d * 3.0);   /* fptrunc */
  if (back != d * 3.0 && d > 1.0) printf("rounded\n");
  uint32_t bits;
  memcpy(&bits, &f, sizeof bits);     /* the bytes are the IEEE bits */
  if (bits == 0x3f800001u) printf("one ulp above 1\n");
  float arr[2] = {f, -f};
  if (arr[i & 1] < 0.0f) printf("negative pick\n");
  return 0;
}
