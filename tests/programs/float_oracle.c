#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
/* reads lines "op width a b c" (hex bits), prints the result bits in hex */
static float f32(uint64_t b) { uint32_t x = (uint32_t)b; float f; memcpy(&f, &x, 4); return f; }
static double f64(uint64_t b) { double d; memcpy(&d, &b, 8); return d; }
static uint64_t b32(float f) { uint32_t x; memcpy(&x, &f, 4); return x; }
static uint64_t b64(double d) { uint64_t x; memcpy(&x, &d, 8); return x; }
int main(void) {
  char op[16]; int w; unsigned long long a, b, c;
  while (scanf("%15s %d %llx %llx %llx", op, &w, &a, &b, &c) == 5) {
    uint64_t r = 0;
    if (w == 32) {
      volatile float x = f32(a), y = f32(b), z = f32(c);
      if (!strcmp(op, "fadd")) r = b32(x + y);
      else if (!strcmp(op, "fsub")) r = b32(x - y);
      else if (!strcmp(op, "fmul")) r = b32(x * y);
      else if (!strcmp(op, "fdiv")) r = b32(x / y);
      else if (!strcmp(op, "frem")) r = b32(fmodf(x, y));
      else if (!strcmp(op, "sqrt")) r = b32(sqrtf(x));
      else if (!strcmp(op, "fma")) r = b32(fmaf(x, y, z));
      else if (!strcmp(op, "fmin")) r = b32(fminf(x, y));
      else if (!strcmp(op, "fmax")) r = b32(fmaxf(x, y));
      else if (!strcmp(op, "floor")) r = b32(floorf(x));
      else if (!strcmp(op, "ceil")) r = b32(ceilf(x));
      else if (!strcmp(op, "trunc")) r = b32(truncf(x));
      else if (!strcmp(op, "rint")) r = b32(rintf(x));
      else if (!strcmp(op, "round")) r = b32(roundf(x));
      else if (!strcmp(op, "ext")) r = b64((double)x);
      else if (!strcmp(op, "tosi32")) { volatile int32_t v = (int32_t)x; r = (uint32_t)v; }
      else if (!strcmp(op, "tosi64")) { volatile int64_t v = (int64_t)x; r = (uint64_t)v; }
      else if (!strcmp(op, "toui32")) { volatile uint32_t v = (uint32_t)x; r = v; }
      else if (!strcmp(op, "toui64")) { volatile uint64_t v = (uint64_t)x; r = v; }
      else if (!strcmp(op, "olt")) r = x < y;
      else if (!strcmp(op, "oeq")) r = x == y;
      else if (!strcmp(op, "une")) r = x != y;
      else if (!strcmp(op, "sitofp32")) { volatile float v = (float)(int32_t)(uint32_t)a; r = b32(v); }
      else if (!strcmp(op, "sitofp64")) { volatile float v = (float)(int64_t)a; r = b32(v); }
      else if (!strcmp(op, "uitofp64")) { volatile float v = (float)(uint64_t)a; r = b32(v); }
    } else {
      volatile double x = f64(a), y = f64(b), z = f64(c);
      if (!strcmp(op, "fadd")) r = b64(x + y);
      else if (!strcmp(op, "fsub")) r = b64(x - y);
      else if (!strcmp(op, "fmul")) r = b64(x * y);
      else if (!strcmp(op, "fdiv")) r = b64(x / y);
      else if (!strcmp(op, "frem")) r = b64(fmod(x, y));
      else if (!strcmp(op, "sqrt")) r = b64(sqrt(x));
      else if (!strcmp(op, "fma")) r = b64(fma(x, y, z));
      else if (!strcmp(op, "fmin")) r = b64(fmin(x, y));
      else if (!strcmp(op, "fmax")) r = b64(fmax(x, y));
      else if (!strcmp(op, "floor")) r = b64(floor(x));
      else if (!strcmp(op, "ceil")) r = b64(ceil(x));
      else if (!strcmp(op, "trunc")) r = b64(trunc(x));
      else if (!strcmp(op, "rint")) r = b64(rint(x));
      else if (!strcmp(op, "round")) r = b64(round(x));
      else if (!strcmp(op, "trunc32")) r = b32((float)x);
      else if (!strcmp(op, "tosi32")) { volatile int32_t v = (int32_t)x; r = (uint32_t)v; }
      else if (!strcmp(op, "tosi64")) { volatile int64_t v = (int64_t)x; r = (uint64_t)v; }
      else if (!strcmp(op, "toui32")) { volatile uint32_t v = (uint32_t)x; r = v; }
      else if (!strcmp(op, "toui64")) { volatile uint64_t v = (uint64_t)x; r = v; }
      else if (!strcmp(op, "olt")) r = x < y;
      else if (!strcmp(op, "oeq")) r = x == y;
      else if (!strcmp(op, "une")) r = x != y;
      else if (!strcmp(op, "sitofp32")) { volatile double v = (double)(int32_t)(uint32_t)a; r = b64(v); }
      else if (!strcmp(op, "sitofp64")) { volatile double v = (double)(int64_t)a; r = b64(v); }
      else if (!strcmp(op, "uitofp64")) { volatile double v = (double)(uint64_t)a; r = b64(v); }
    }
    printf("%llx\n", (unsigned long long)r);
  }
  return 0;
}
