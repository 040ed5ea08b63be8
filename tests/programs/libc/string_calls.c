/* Calls every string.h function symex's C library defines on fixed inputs and prints the
 * results; the test compares this output with the host C library's (gcc, natively). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int sign(int x) { return x < 0 ? -1 : x > 0; }

/* where p points in base, -1 for NULL */
static int show(const void *base, const void *p) { return p ? (int)((const char *)p - (const char *)base) : -1; }

int main(void) {
  const char *s = "hello, world";
  printf("strlen %d %d\n", (int)strlen(s), (int)strlen(""));
  printf("strnlen %d %d\n", (int)strnlen(s, 5), (int)strnlen(s, 50));
  printf("strcmp %d %d %d %d\n", sign(strcmp("abc", "abd")), sign(strcmp("abc", "abc")),
         sign(strcmp("b", "abc")), sign(strcmp("ab", "abc")));
  printf("strcmp-high %d\n", sign(strcmp("\xff", "a")));
  printf("strncmp %d %d %d\n", sign(strncmp("abcx", "abcy", 3)), sign(strncmp("abcx", "abcy", 4)),
         sign(strncmp("a", "a", 10)));
  char buf[64];
  strcpy(buf, "foo");
  printf("strcpy %s\n", buf);
  strcat(buf, "bar");
  printf("strcat %s\n", buf);
  strncat(buf, "bazqux", 3);
  printf("strncat %s\n", buf);
  char small[8];
  memset(small, 'x', sizeof small);
  strncpy(small, "ab", 5);
  printf("strncpy %d %d %d %d %c\n", small[0], small[2], small[3], small[4], small[5]);
  strncpy(small, "abcdefgh", 3);
  printf("strncpy2 %c%c%c %d\n", small[0], small[1], small[2], small[3]);
  printf("strchr %d %d %d\n", show(s, strchr(s, 'o')), show(s, strchr(s, 'z')), show(s, strchr(s, 0)));
  printf("strrchr %d %d\n", show(s, strrchr(s, 'o')), show(s, strrchr(s, 'q')));
  printf("strstr %d %d %d\n", show(s, strstr(s, "wor")), show(s, strstr(s, "")), show(s, strstr(s, "worlds")));
  printf("strspn %d %d\n", (int)strspn("aabbcd", "ab"), (int)strspn("xyz", "ab"));
  printf("strcspn %d %d\n", (int)strcspn("hello, world", ", "), (int)strcspn("abc", "xyz"));
  printf("strpbrk %d %d\n", show(s, strpbrk(s, "wl")), show(s, strpbrk(s, "XYZ")));
  char text[] = "  one,two;;three  ";
  for (char *t = strtok(text, " ,;"); t; t = strtok(NULL, " ,;"))
    printf("strtok [%s]\n", t);
  char *d = strdup("copied");
  printf("strdup %s %d\n", d, d != 0);
  free(d);
  char *n = strndup("truncate me", 5);
  printf("strndup [%s]\n", n);
  free(n);
  char area[16] = "0123456789";
  memcpy(area + 10, "abc", 4);
  printf("memcpy %s\n", area);
  memmove(area + 2, area, 6);
  printf("memmove-up %s\n", area);
  memmove(area, area + 3, 5);
  printf("memmove-down %s\n", area);
  memset(area, '-', 3);
  printf("memset %s\n", area);
  printf("memcmp %d %d %d\n", sign(memcmp("abc", "abd", 3)), sign(memcmp("abc", "abd", 2)),
         sign(memcmp("\x80", "\x01", 1)));
  printf("memchr %d %d\n", show(area, memchr(area, '9', 16)), show(area, memchr(area, 'Q', 10)));
  return 0;
}
