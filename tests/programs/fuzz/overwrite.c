/* A fuzz target that writes to its const input (libFuzzer reports "fuzz target overwrites
 * its const input"). */
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 0 && data[0] == '!')
    ((uint8_t *)data)[0] = '?';
  return 0;
}
