/* A libFuzzer fuzz target whose crash needs a 4-byte value the target only compares after
 * hashing it (a multiplicative hash): a fuzzer's comparison tracing sees the hash, not the
 * value, while a solver inverts the multiplication. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint32_t word;
  if (size < 4)
    return 0;
  memcpy(&word, data, sizeof word);
  if (word * 2654435761u == 0x5eed1e55u)
    abort();
  return 0;
}
