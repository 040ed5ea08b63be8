/* The native side of the path-parity tests (tests/test_path_parity.py): runs a program,
 * built with -fsanitize-coverage=bb,trace-pc-guard and its main renamed parity_main, on
 * given inputs and prints a hash of the sequence of basic blocks each run entered (its
 * path).
 *
 *   driver enumerate N   every N-byte input (256^N runs); prints the distinct path hashes
 *   driver classes N HEX every N-byte input whose bytes are among HEX's bytes (one
 *                        representative per class of bytes the program cannot tell apart,
 *                        for programs that only compare bytes for equality with constants)
 *   driver replay        one hex input per line on stdin; prints each run's path hash
 *
 * klee_make_symbolic takes the input's next bytes; a failing klee_assume abandons the run
 * (the input is not one of the program's paths). */
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_INPUT 64

static unsigned char input[MAX_INPUT];
static size_t input_length, input_used;
static uint64_t path_hash;
static jmp_buf abandon;

int parity_main(void);

void klee_make_symbolic(void *address, size_t size, const char *name) {
  (void)name;
  for (size_t i = 0; i < size; i++)
    ((unsigned char *)address)[i] = input_used < input_length ? input[input_used++] : 0;
}

void klee_assume(uintptr_t condition) {
  if (!condition)
    longjmp(abandon, 1);
}

void __sanitizer_cov_trace_pc_guard_init(uint32_t *start, uint32_t *stop) {
  static uint32_t next;
  for (uint32_t *guard = start; guard < stop; guard++)
    *guard = ++next;
}

void __sanitizer_cov_trace_pc_guard(uint32_t *guard) {
  path_hash = (path_hash ^ *guard) * 0x100000001b3ULL;
}

/* the path hash of one run, or 0 when an assumption failed */
static uint64_t run(void) {
  input_used = 0;
  path_hash = 0xcbf29ce484222325ULL;
  if (setjmp(abandon))
    return 0;
  parity_main();
  return path_hash;
}

static int by_value(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Run every input of input_length bytes drawn from values[0..count); print distinct paths. */
static int enumerate(const unsigned char *values, size_t count) {
  size_t total = 1, found = 0;
  for (size_t i = 0; i < input_length; i++) {
    if (total > ((size_t)1 << 40) / count)
      return 2;
    total *= count;
  }
  uint64_t *hashes = malloc(total * sizeof *hashes);
  if (!hashes)
    return 2;
  for (size_t value = 0; value < total; value++) {
    size_t rest = value;
    for (size_t i = 0; i < input_length; i++) {
      input[i] = values[rest % count];
      rest /= count;
    }
    uint64_t hash = run();
    if (hash)
      hashes[found++] = hash;
  }
  qsort(hashes, found, sizeof *hashes, by_value);
  for (size_t i = 0; i < found; i++)
    if (i == 0 || hashes[i] != hashes[i - 1])
      printf("%016llx\n", (unsigned long long)hashes[i]);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "enumerate") == 0) {
    static unsigned char every[256];
    for (int i = 0; i < 256; i++)
      every[i] = (unsigned char)i;
    input_length = (size_t)atoi(argv[2]);
    return input_length > 3 ? 2 : enumerate(every, 256);
  }
  if (argc == 4 && strcmp(argv[1], "classes") == 0) {
    unsigned char values[256];
    size_t count = 0;
    for (const char *p = argv[3]; p[0] && p[1] && count < 256; p += 2) {
      unsigned byte;
      sscanf(p, "%2x", &byte);
      values[count++] = (unsigned char)byte;
    }
    input_length = (size_t)atoi(argv[2]);
    return input_length > MAX_INPUT || count == 0 ? 2 : enumerate(values, count);
  }
  if (argc == 2 && strcmp(argv[1], "replay") == 0) {
    char line[2 * MAX_INPUT + 2];
    while (fgets(line, sizeof line, stdin)) {
      input_length = 0;
      for (char *p = line; p[0] && p[1] && p[0] != '\n' && input_length < MAX_INPUT; p += 2) {
        unsigned byte;
        sscanf(p, "%2x", &byte);
        input[input_length++] = (unsigned char)byte;
      }
      printf("%016llx\n", (unsigned long long)run());
    }
    return 0;
  }
  fprintf(stderr, "usage: driver enumerate N | driver replay\n");
  return 2;
}
