/* strtod, strtof and atof for programs under symex. A decimal number of at most 19 digits
 * whose digits fit the format's significand exactly and whose power of ten is exact too
 * (Clinger's fast path) is computed with one multiplication or division, which IEEE
 * arithmetic rounds correctly: the very value the C library's strtod returns, and from a
 * symbolic string a symbolic number, which the program's branches fork on. Every other form
 * (hexadecimal, inf, nan, more digits, a larger exponent) is read by the host's strtod after
 * the string is fixed to one of its values (a shortfall the run reports). Weak definitions:
 * a program's own strtod wins, and musl's where musl's strtod.c comes in for strtold. */

#define WEAK __attribute__((weak))
#define ERANGE 34

int *__errno_location(void);

/* The host's reading of s (env/strtod.py): its value (as a float when single), how many
 * bytes it took, and whether it was out of range. */
double __symex_host_strtod(const char *s, int single, long *used, int *out_of_range);

static int space(int c) { return c == ' ' || (unsigned)c - '\t' < 5; }

static int digit(int c) { return (unsigned)c - '0' < 10; }

/* the powers of ten a double (a float) holds exactly: 10^22 (10^10) is the last */
static const double powers[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                  1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                  1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
static const float powers_f[11] = {1e0f, 1e1f, 1e2f, 1e3f, 1e4f, 1e5f,
                                   1e6f, 1e7f, 1e8f, 1e9f, 1e10f};

/* A decimal number at s: its sign, digits (as an integer) and power of ten, and where it
 * ends. 0 when s holds something else (no digits, hexadecimal, more than 19 digits). */
static int scan(const char *s, const char **end, int *negative, unsigned long long *digits,
                int *scale) {
  const char *p = s;
  while (space(*p))
    p++;
  *negative = 0;
  if (*p == '-' || *p == '+')
    *negative = *p++ == '-';
  if (p[0] == '0' && (p[1] | 32) == 'x')
    return 0;
  unsigned long long value = 0;
  int count = 0, power = 0;
  for (; digit(*p); p++) {
    if (++count > 19)
      return 0;
    value = value * 10 + (unsigned)(*p - '0');
  }
  if (*p == '.') {
    const char *q = p + 1;
    for (; digit(*q); q++) {
      if (++count > 19)
        return 0;
      value = value * 10 + (unsigned)(*q - '0');
      power--;
    }
    if (count)
      p = q;
  }
  if (!count)
    return 0;
  if ((*p | 32) == 'e') {
    const char *q = p + 1;
    int minus = 0, exponent = 0;
    if (*q == '-' || *q == '+')
      minus = *q++ == '-';
    if (digit(*q)) {
      for (; digit(*q); q++)
        if (exponent < 100000)
          exponent = exponent * 10 + (*q - '0');
      power += minus ? -exponent : exponent;
      p = q;
    }
  }
  *end = p;
  *digits = value;
  *scale = power;
  return 1;
}

/* What the host's strtod makes of s, with end and errno set as strtod sets them. */
static double host(const char *s, char **end, int single) {
  long used = 0;
  int out_of_range = 0;
  double value = __symex_host_strtod(s, single, &used, &out_of_range);
  if (end)
    *end = (char *)s + used;
  if (out_of_range)
    *__errno_location() = ERANGE;
  return value;
}

/* scan, and whether the number is in the fast path of a format whose significand holds
 * integers up to most and whose powers of ten are exact up to 10^widest */
static int fast_path(const char *s, const char **stop, int *negative, unsigned long long *digits,
                     int *scale, unsigned long long most, int widest) {
  return scan(s, stop, negative, digits, scale) && *digits <= most && *scale >= -widest &&
         *scale <= widest;
}

WEAK double strtod(const char *s, char **end) {
  const char *stop;
  int negative, scale;
  unsigned long long digits;
  if (!fast_path(s, &stop, &negative, &digits, &scale, 1ULL << 53, 22))
    return host(s, end, 0);
  double value = (double)digits;
  value = scale < 0 ? value / powers[-scale] : value * powers[scale];
  if (end)
    *end = (char *)stop;
  return negative ? -value : value;
}

WEAK float strtof(const char *s, char **end) {
  const char *stop;
  int negative, scale;
  unsigned long long digits;
  if (!fast_path(s, &stop, &negative, &digits, &scale, 1ULL << 24, 10))
    return (float)host(s, end, 1);
  float value = (float)digits;
  value = scale < 0 ? value / powers_f[-scale] : value * powers_f[scale];
  if (end)
    *end = (char *)stop;
  return negative ? -value : value;
}

WEAK double atof(const char *s) { return strtod(s, 0); }
