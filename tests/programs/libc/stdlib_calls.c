/* Every stdlib.h function symex's C library defines, on fixed inputs; the output is
 * compared with the host C library's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

static int compare_ints(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

static void show_strtol(const char *s, int base) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, base);
  printf("strtol(\"%s\", %d) = %ld end +%d errno %d\n", s, base, v, (int)(end - s), errno);
}

static void show_strtoul(const char *s, int base) {
  char *end;
  errno = 0;
  unsigned long v = strtoul(s, &end, base);
  printf("strtoul(\"%s\", %d) = %lu end +%d errno %d\n", s, base, v, (int)(end - s), errno);
}

int main(void) {
  const char *numbers[] = {"42", "  -17xyz", "+8", "", "abc", "2147483647", "-2147483648", "007", " \t\n12"};
  for (int i = 0; i < (int)(sizeof numbers / sizeof numbers[0]); i++)
    printf("atoi(\"%s\") = %d atol = %ld atoll = %lld\n", numbers[i], atoi(numbers[i]),
           atol(numbers[i]), atoll(numbers[i]));
  show_strtol("123", 10);
  show_strtol("  -0x1f!", 16);
  show_strtol("0x1f", 0);
  show_strtol("0777", 0);
  show_strtol("0x", 0);
  show_strtol("zz", 36);
  show_strtol("9223372036854775807", 10);
  show_strtol("9223372036854775808", 10);
  show_strtol("-9223372036854775808", 10);
  show_strtol("-9223372036854775809", 10);
  show_strtol("   ", 10);
  show_strtol("101", 2);
  show_strtoul("18446744073709551615", 10);
  show_strtoul("18446744073709551616", 10);
  show_strtoul("-1", 10);
  show_strtoul("ff", 16);
  char *end;
  errno = 0;
  long long ll = strtoll("-123456789012", &end, 10);
  printf("strtoll %lld %d\n", ll, errno);
  unsigned long long ull = strtoull("0xffffffffffffffff", &end, 0);
  printf("strtoull %llu %d\n", ull, errno);
  printf("abs %d %d %d\n", abs(-5), abs(5), abs(0));
  printf("labs %ld %ld\n", labs(-5000000000L), labs(7L));
  printf("llabs %lld\n", llabs(-9000000000LL));
  printf("getenv %d\n", getenv("SYMEX_SURELY_UNSET_VARIABLE") == NULL);
  int values[] = {5, -3, 9, 0, 5, 12, -7, 1};
  qsort(values, 8, sizeof values[0], compare_ints);
  for (int i = 0; i < 8; i++)
    printf("%d ", values[i]);
  printf("\n");
  for (int key = -8; key <= 13; key += 3) {
    int *hit = bsearch(&key, values, 8, sizeof values[0], compare_ints);
    printf("bsearch %d -> %d\n", key, hit ? (int)(hit - values) : -1);
  }
  int one = 9;
  printf("bsearch-empty %d\n", bsearch(&one, values, 0, sizeof values[0], compare_ints) == NULL);
  return 0;
}
