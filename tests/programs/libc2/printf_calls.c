/* The printf family on concrete values: symex must print what the host C library prints. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static char line[256];

/* a program's own variadic wrapper: the va_list symex's va_start built reaches vsnprintf */
static int logf_(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  printf("log[%d]: %s\n", n, line);
  return n;
}

static void vprint(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  va_start(ap, fmt);
  vfprintf(stdout, fmt, ap);
  va_end(ap);
}

int main(void) {
  char buf[64];
  int n;
  printf("[%d] [%i] [%5d] [%-5d|] [%05d] [%+d] [% d] [%.3d] [%8.3d] [%-8.3d|]\n",
         42, -7, 42, 42, -42, 5, 5, 7, -7, 7);
  printf("[%u] [%x] [%X] [%o] [%#x] [%#X] [%#o] [%#x] [%#o] [%08x]\n",
         4000000000u, 0xbeefu, 0xbeefu, 8u, 255u, 255u, 8u, 0u, 0u, 0xabcu);
  printf("[%ld] [%lld] [%lu] [%llx] [%zu] [%hd] [%hhd] [%hu] [%hhu] [%jd] [%td]\n",
         -1234567890123L, -9000000000000000000LL, 18446744073709551615UL,
         0x123456789abcdefULL, (size_t)77, (short)-3, (signed char)-2, (unsigned short)65535,
         (unsigned char)200, (long long)-5, (long)12);
  printf("[%c] [%3c] [%-3c|] [%s] [%8s] [%-8s|] [%.2s] [%8.3s] [%%] [%s]\n",
         'A', 'b', 'c', "text", "right", "left", "cut", "precise", "");
  printf("[%*d] [%-*d|] [%.*d] [%*.*s] [%*d]\n", 6, 12, 6, 12, 4, 3, 7, 2, "star", -4, 9);
  printf("[%.0d] [%.0x] [%5.0d] [%d] [%d]\n", 0, 0, 0, -2147483647 - 1, 2147483647);
  printf("[%f] [%.2f] [%10.3f] [%-10.1f|] [%e] [%.3E] [%g] [%g] [%G] [%+.1f] [%08.2f]\n",
         3.14159, 2.675, -1.5, 0.25, 123456.789, 0.000123, 0.0001, 1e20, 1e-10, 2.0, -3.5);
  printf("[%a] [%.2a] [%Lf]\n", 3.0, 1.0, (long double)1.25);

  n = sprintf(buf, "%s-%d-%c", "abc", 123, 'z');
  printf("sprintf %d [%s]\n", n, buf);
  n = snprintf(buf, 8, "%s", "0123456789");
  printf("snprintf %d [%s]\n", n, buf);
  memset(buf, 'x', sizeof buf);
  n = snprintf(buf, 0, "%d", 123456);
  printf("snprintf0 %d [%c]\n", n, buf[0]);
  n = snprintf(NULL, 0, "%05d|%s", 42, "abc");
  printf("snprintf NULL %d\n", n);
  n = snprintf(buf, sizeof buf, "%d%%", 99);
  printf("snprintf %d [%s]\n", n, buf);
  int count = 0;
  printf("abc%n|def\n", &count);
  printf("count %d\n", count);

  logf_("%s=%d (%x) %ld %.1f", "key", 17, 255, 1L << 40, 0.5);
  logf_("%d %d %d %d %d %d %d %d", 1, 2, 3, 4, 5, 6, 7, 8);
  logf_("%f %f %f %f %f %f %f %f %f %f", 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.5);
  vprint("v %s %d\n", "print", 3);

  n = fprintf(stdout, "fprintf %s %d\n", "to stdout", 1);
  printf("fprintf returned %d\n", n);
  return 0;
}
