/* string.h for programs under symex, written byte by byte (as klee-libc is) so symbolic
 * bytes flow through the interpreter: every loop test on a symbolic byte is a branch, so
 * strlen of a symbolic string forks once per possible length.  Every definition is weak:
 * a program that defines its own strlen keeps it. */

#define WEAK __attribute__((weak))
typedef __SIZE_TYPE__ size_t;
#define NULL ((void *)0)

void *malloc(size_t size);

WEAK size_t strlen(const char *s) {
  const char *p = s;
  while (*p)
    p++;
  return (size_t)(p - s);
}

WEAK size_t strnlen(const char *s, size_t max) {
  size_t n = 0;
  while (n < max && s[n])
    n++;
  return n;
}

WEAK int strcmp(const char *a, const char *b) {
  const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;
  while (*x && *x == *y) {
    x++;
    y++;
  }
  return *x - *y;
}

WEAK int strncmp(const char *a, const char *b, size_t n) {
  const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;
  for (; n; n--, x++, y++) {
    if (*x != *y)
      return *x - *y;
    if (!*x)
      return 0;
  }
  return 0;
}

WEAK char *strcpy(char *dst, const char *src) {
  char *d = dst;
  while ((*d++ = *src++))
    ;
  return dst;
}

WEAK char *strncpy(char *dst, const char *src, size_t n) {
  size_t i = 0;
  for (; i < n && src[i]; i++)
    dst[i] = src[i];
  for (; i < n; i++)
    dst[i] = 0;
  return dst;
}

WEAK char *strcat(char *dst, const char *src) {
  strcpy(dst + strlen(dst), src);
  return dst;
}

WEAK char *strncat(char *dst, const char *src, size_t n) {
  char *d = dst + strlen(dst);
  while (n-- && *src)
    *d++ = *src++;
  *d = 0;
  return dst;
}

WEAK char *strchr(const char *s, int c) {
  char ch = (char)c;
  for (;; s++) {
    if (*s == ch)
      return (char *)s;
    if (!*s)
      return NULL;
  }
}

WEAK char *strrchr(const char *s, int c) {
  char ch = (char)c;
  const char *last = NULL;
  for (;; s++) {
    if (*s == ch)
      last = s;
    if (!*s)
      return (char *)last;
  }
}

WEAK char *strstr(const char *haystack, const char *needle) {
  if (!*needle)
    return (char *)haystack;
  for (; *haystack; haystack++) {
    const char *h = haystack, *n = needle;
    while (*n && *h == *n) {
      h++;
      n++;
    }
    if (!*n)
      return (char *)haystack;
  }
  return NULL;
}

WEAK size_t strspn(const char *s, const char *accept) {
  size_t n = 0;
  for (; s[n]; n++) {
    const char *a = accept;
    while (*a && *a != s[n])
      a++;
    if (!*a)
      break;
  }
  return n;
}

WEAK size_t strcspn(const char *s, const char *reject) {
  size_t n = 0;
  for (; s[n]; n++) {
    const char *r = reject;
    while (*r && *r != s[n])
      r++;
    if (*r)
      break;
  }
  return n;
}

WEAK char *strpbrk(const char *s, const char *accept) {
  s += strcspn(s, accept);
  return *s ? (char *)s : NULL;
}

static char *strtok_saved;

WEAK char *strtok_r(char *s, const char *delim, char **saved) {
  if (!s)
    s = *saved;
  if (!s)
    return NULL;
  s += strspn(s, delim);
  if (!*s) {
    *saved = NULL;
    return NULL;
  }
  char *end = s + strcspn(s, delim);
  if (*end) {
    *end = 0;
    *saved = end + 1;
  } else {
    *saved = NULL;
  }
  return s;
}

WEAK char *strtok(char *s, const char *delim) { return strtok_r(s, delim, &strtok_saved); }

WEAK char *strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *copy = malloc(n);
  if (!copy)
    return NULL;
  for (size_t i = 0; i < n; i++)
    copy[i] = s[i];
  return copy;
}

WEAK char *strndup(const char *s, size_t max) {
  size_t n = strnlen(s, max);
  char *copy = malloc(n + 1);
  if (!copy)
    return NULL;
  for (size_t i = 0; i < n; i++)
    copy[i] = s[i];
  copy[n] = 0;
  return copy;
}

WEAK void *memcpy(void *dst, const void *src, size_t n) {
  char *d = dst;
  const char *s = src;
  while (n--)
    *d++ = *s++;
  return dst;
}

WEAK void *memmove(void *dst, const void *src, size_t n) {
  char *d = dst;
  const char *s = src;
  if (d == s)
    return dst;
  /* a forward copy is wrong only when the destination starts inside the source */
  if ((unsigned long)d - (unsigned long)s < n) {
    while (n--)
      d[n] = s[n];
  } else {
    while (n--)
      *d++ = *s++;
  }
  return dst;
}

WEAK void *memset(void *dst, int c, size_t n) {
  unsigned char *d = dst;
  while (n--)
    *d++ = (unsigned char)c;
  return dst;
}

WEAK int memcmp(const void *a, const void *b, size_t n) {
  const unsigned char *x = a, *y = b;
  for (; n; n--, x++, y++)
    if (*x != *y)
      return *x - *y;
  return 0;
}

WEAK void *memchr(const void *s, int c, size_t n) {
  const unsigned char *p = s;
  for (; n; n--, p++)
    if (*p == (unsigned char)c)
      return (void *)p;
  return NULL;
}
