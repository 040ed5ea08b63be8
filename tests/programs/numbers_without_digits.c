/* strtoimax and strtoumax (coreutils' printf, seq and expr parse with them) given strings
   without digits, and with too many: the value, where parsing stopped, and errno, as glibc
   answers where the tests replay (musl's own set EINVAL for no digits). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

static void parse(const char *text) {
  char *end;
  errno = 0;
  intmax_t value = strtoimax(text, &end, 0);
  int signed_errno = errno;
  errno = 0;
  uintmax_t unsigned_value = strtoumax(text, &end, 10);
  printf("'%s': %jd %d, %ju %d, stopped at %d\n", text, value, signed_errno, unsigned_value,
         errno, (int)(end - text));
}

int main(void) {
  parse("");
  parse("x");
  parse("  -");
  parse("0x");
  parse("42z");
  parse("99999999999999999999");
  return 0;
}
