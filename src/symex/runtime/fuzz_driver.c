/*
 * fuzz_driver.c -- the main of a libFuzzer fuzz target under symex (symex run --fuzz-target,
 * symex.compile(..., fuzz_target=True)), and of its native replay (symex replay).
 *
 * As libFuzzer's driver does, it calls LLVMFuzzerInitialize once, when the target defines
 * it, then LLVMFuzzerTestOneInput on one input. The input comes from symex_fuzz_input:
 *
 *   - under symex, a buffer of up to --max-input symbolic bytes (object "fuzz-data") and a
 *     symbolic size no larger (object "fuzz-size", made first); a read at or past the size
 *     is out of bounds, as AddressSanitizer reports it under libFuzzer;
 *   - natively (replay_runtime.c, compiled with -DSYMEX_FUZZ_REPLAY), the test's two objects,
 *     copied into a heap buffer of exactly that size, so the sanitizers see its end.
 *
 * The input is const: a target that writes to it is reported, under symex as a write to a
 * read-only object and natively below, as libFuzzer reports "fuzz target overwrites its
 * const input".
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <symex.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv);

int main(int argc, char **argv) {
  size_t size = 0;
  const uint8_t *data;
  if (LLVMFuzzerInitialize)
    LLVMFuzzerInitialize(&argc, &argv);
  data = symex_fuzz_input(&size);
#ifdef SYMEX_FUZZ_REPLAY
  {
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy)
      return 2;
    memcpy(copy, data, size);
    LLVMFuzzerTestOneInput(data, size);
    if (memcmp(copy, data, size) != 0) {
      fprintf(stderr, "symex-replay: fuzz target overwrites its const input\n");
      abort();
    }
    free(copy);
  }
#else
  LLVMFuzzerTestOneInput(data, size);
#endif
  return 0;
}
