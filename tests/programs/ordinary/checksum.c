/* checksum: CRC-32 (as zlib and cksum -a crc32b compute it) and Adler-32 of standard input,
 * or of the file named by argv[1], printed in hex with the byte count. */
#include <stdio.h>
#include <stdlib.h>

static unsigned long crc_table[256];

static void make_crc_table(void) {
  for (unsigned long n = 0; n < 256; n++) {
    unsigned long c = n;
    for (int k = 0; k < 8; k++) {
      if (c & 1)
        c = 0xedb88320UL ^ (c >> 1);
      else
        c = c >> 1;
    }
    crc_table[n] = c;
  }
}

int main(int argc, char **argv) {
  FILE *in = stdin;
  if (argc > 1) {
    in = fopen(argv[1], "rb");
    if (in == NULL) {
      fprintf(stderr, "checksum: cannot open %s\n", argv[1]);
      return 1;
    }
  }
  make_crc_table();
  unsigned long crc = 0xffffffffUL;
  unsigned long a = 1, b = 0;
  unsigned long count = 0;
  unsigned char buffer[512];
  size_t got;
  while ((got = fread(buffer, 1, sizeof buffer, in)) > 0) {
    for (size_t i = 0; i < got; i++) {
      crc = crc_table[(crc ^ buffer[i]) & 0xff] ^ (crc >> 8);
      a = (a + buffer[i]) % 65521;
      b = (b + a) % 65521;
    }
    count += got;
  }
  crc ^= 0xffffffffUL;
  printf("crc32 %08lx adler32 %08lx bytes %lu\n", crc & 0xffffffffUL, (b << 16) | a, count);
  if (in != stdin)
    fclose(in);
  return 0;
}
