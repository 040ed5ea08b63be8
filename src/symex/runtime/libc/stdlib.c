/* stdlib.h for programs under symex: number parsing, sorting and searching, abs, getenv.
 * Plain C, digit by digit, so a symbolic string parses into a symbolic number and the
 * program's branches on it fork (heap, exit and abort stay Python handlers: they talk to
 * the interpreter). Every definition is weak. */

#define WEAK __attribute__((weak))
typedef __SIZE_TYPE__ size_t;
#define NULL ((void *)0)
#define ERANGE 34
#define EINVAL 22

int *__errno_location(void);

static int space(int c) { return c == ' ' || (unsigned)c - '\t' < 5; }

/* the value of a digit in any base up to 36, or 36 when c is no digit */
static int digit_value(int c) {
  if ((unsigned)c - '0' < 10)
    return c - '0';
  if ((unsigned)c - 'a' < 26)
    return c - 'a' + 10;
  if ((unsigned)c - 'A' < 26)
    return c - 'A' + 10;
  return 36;
}

/* strtoull's work: the magnitude (saturated at limit, *overflow set), the sign, and where
 * parsing stopped. No digits: end = s and the result 0. */
static unsigned long long parse(const char *s, char **end, int base, unsigned long long limit,
                                int *negative, int *overflow) {
  const char *p = s;
  *negative = 0;
  *overflow = 0;
  if (base < 0 || base == 1 || base > 36) {
    *__errno_location() = EINVAL;
    if (end)
      *end = (char *)s;
    return 0;
  }
  while (space(*p))
    p++;
  if (*p == '-' || *p == '+')
    *negative = *p++ == '-';
  if ((base == 0 || base == 16) && p[0] == '0' && (p[1] | 32) == 'x' && digit_value(p[2]) < 16) {
    p += 2;
    base = 16;
  } else if (base == 0) {
    base = *p == '0' ? 8 : 10;
  }
  const char *digits = p;
  unsigned long long value = 0;
  for (;; p++) {
    int d = digit_value(*p);
    if (d >= base)
      break;
    if (*overflow)
      continue;
    if (value > (limit - d) / base) {
      *overflow = 1;
      value = limit;
    } else {
      value = value * base + d;
    }
  }
  if (end)
    *end = (char *)(p == digits ? s : p);
  return value;
}

WEAK unsigned long long strtoull(const char *s, char **end, int base) {
  int negative, overflow;
  unsigned long long v = parse(s, end, base, ~0ULL, &negative, &overflow);
  if (overflow) {
    *__errno_location() = ERANGE;
    return ~0ULL;
  }
  return negative ? -v : v;
}

WEAK unsigned long strtoul(const char *s, char **end, int base) {
  return (unsigned long)strtoull(s, end, base);
}

WEAK long long strtoll(const char *s, char **end, int base) {
  int negative, overflow;
  unsigned long long max = 0x7fffffffffffffffULL;
  unsigned long long v = parse(s, end, base, max + 1, &negative, &overflow);
  if (overflow || (!negative && v > max)) {
    *__errno_location() = ERANGE;
    return negative ? (long long)(max + 1) : (long long)max;
  }
  return negative ? (long long)-v : (long long)v;
}

WEAK long strtol(const char *s, char **end, int base) { return (long)strtoll(s, end, base); }

/* intmax_t is 64 bits wide on every target symex runs. Here and not musl's: musl's set errno
 * to EINVAL for a string without digits, glibc's (where tests replay) leave errno alone, so
 * coreutils' printf '%d' '' failed under symex and succeeded natively */
WEAK long strtoimax(const char *s, char **end, int base) { return (long)strtoll(s, end, base); }
WEAK unsigned long strtoumax(const char *s, char **end, int base) {
  return (unsigned long)strtoull(s, end, base);
}

/* glibc 2.38's headers send C23 programs to these names */
WEAK long __isoc23_strtol(const char *s, char **end, int base) { return strtol(s, end, base); }
WEAK unsigned long __isoc23_strtoul(const char *s, char **end, int base) { return strtoul(s, end, base); }
WEAK long long __isoc23_strtoll(const char *s, char **end, int base) { return strtoll(s, end, base); }
WEAK unsigned long long __isoc23_strtoull(const char *s, char **end, int base) {
  return strtoull(s, end, base);
}

/* atoi as C programs expect: no errno, wrap-around on overflow (undefined in C) */
WEAK long long atoll(const char *s) {
  while (space(*s))
    s++;
  int negative = 0;
  if (*s == '-' || *s == '+')
    negative = *s++ == '-';
  unsigned long long value = 0;
  for (; (unsigned)*s - '0' < 10; s++)
    value = value * 10 + (unsigned)(*s - '0');
  return negative ? (long long)-value : (long long)value;
}

WEAK long atol(const char *s) { return (long)atoll(s); }
WEAK int atoi(const char *s) { return (int)atoll(s); }

WEAK int abs(int x) { return x < 0 ? -x : x; }
WEAK long labs(long x) { return x < 0 ? -x : x; }
WEAK long long llabs(long long x) { return x < 0 ? -x : x; }

/* The environment symex gives the program (explore(environ=...), symex run --environ
 * FILE; empty by default): the engine points this at main's envp. A C library that
 * defines its own __environ (musl) takes its place. */
WEAK char **__environ;
extern char **environ __attribute__((weak, alias("__environ")));

WEAK char *getenv(const char *name) {
  size_t length = 0;
  while (name[length] && name[length] != '=')
    length++;
  if (name[length] || !__environ)
    return NULL;
  for (char **entry = __environ; *entry; entry++) {
    size_t i = 0;
    while (i < length && (*entry)[i] == name[i])
      i++;
    if (i == length && (*entry)[i] == '=')
      return *entry + length + 1;
  }
  return NULL;
}

static void swap(char *a, char *b, size_t size) {
  while (size--) {
    char t = *a;
    *a++ = *b;
    *b++ = t;
  }
}

/* insertion sort: few comparisons on short arrays, stable, no recursion */
WEAK void qsort(void *base, size_t count, size_t size, int (*compare)(const void *, const void *)) {
  char *array = base;
  for (size_t i = 1; i < count; i++)
    for (size_t j = i; j > 0 && compare(array + (j - 1) * size, array + j * size) > 0; j--)
      swap(array + (j - 1) * size, array + j * size, size);
}

WEAK void *bsearch(const void *key, const void *base, size_t count, size_t size,
                   int (*compare)(const void *, const void *)) {
  const char *array = base;
  size_t low = 0, high = count;
  while (low < high) {
    size_t middle = low + (high - low) / 2;
    int order = compare(key, array + middle * size);
    if (order == 0)
      return (void *)(array + middle * size);
    if (order < 0)
      high = middle;
    else
      low = middle + 1;
  }
  return NULL;
}

/* atexit's table. The executor reads it (by these names) when exit() is called and when main
 * returns, and calls the handlers last first before the path ends (core/interpreter/executor.py,
 * Executor.next_exit_handler). POSIX asks for room for at least 32. */
#define ATEXIT_MAX 32
WEAK void (*__symex_atexit_handlers[ATEXIT_MAX])(void);
WEAK int __symex_atexit_count;

WEAK int atexit(void (*handler)(void)) {
  if (__symex_atexit_count == ATEXIT_MAX)
    return -1;
  __symex_atexit_handlers[__symex_atexit_count++] = handler;
  return 0;
}

/* The allocator's other entry points, over symex's malloc (a Python handler: every object
 * gets its own bounds). Every object starts at a multiple of 2^38, so any alignment holds. */
#define ENOMEM 12
void *malloc(size_t size);
void *realloc(void *pointer, size_t size);

WEAK int posix_memalign(void **out, size_t alignment, size_t size) {
  if (alignment % sizeof(void *) || (alignment & (alignment - 1)))
    return EINVAL;
  void *pointer = malloc(size);
  if (pointer == NULL && size)
    return ENOMEM;
  *out = pointer;
  return 0;
}
WEAK void *aligned_alloc(size_t alignment, size_t size) {
  if (alignment == 0 || (alignment & (alignment - 1))) {
    *__errno_location() = EINVAL;
    return NULL;
  }
  return malloc(size);
}
WEAK void *memalign(size_t alignment, size_t size) { return aligned_alloc(alignment, size); }
WEAK void *valloc(size_t size) { return malloc(size); }
WEAK void *reallocarray(void *pointer, size_t count, size_t size) {
  if (count && size > (size_t)-1 / count) {
    *__errno_location() = ENOMEM;
    return NULL;
  }
  return realloc(pointer, count * size);
}
