/* A fuzz target that parses a small header: a length byte and that many bytes of payload.
 * It checks the header against the input's size but trusts the length byte, so a payload
 * longer than the input is read past its end (a heap-buffer-overflow under libFuzzer). */
#include <stddef.h>
#include <stdint.h>

static int initialized;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  initialized = 1;
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  unsigned sum = 0;
  if (!initialized)
    __builtin_trap();  /* the driver calls LLVMFuzzerInitialize first */
  if (size < 2 || data[0] != 'H')
    return 0;
  for (unsigned i = 0; i < data[1] && i < 3; i++)
    sum += data[2 + i];  /* past the end when data[1] > size - 2 */
  return sum == 7 ? 1 : 0;
}
