/* copy_file_range (cat and cp try it before read and write; it returned ENOSYS): between two
   files at the descriptors' offsets and at given ones (those descriptors' offsets then left
   alone), to the end of the input; EINVAL for a pipe or unknown flags, EBADF for a closed
   descriptor; the same output natively and under symex (musl's glue.c answers). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
int main(void) {
  int in = open("source", O_RDWR | O_CREAT | O_TRUNC, 0600);
  int out = open("target", O_RDWR | O_CREAT | O_TRUNC, 0600);
  int p[2];
  if (in < 0 || out < 0 || pipe(p) != 0 || write(in, "0123456789", 10) != 10)
    return 1;
  lseek(in, 2, SEEK_SET);
  printf("%zd ", copy_file_range(in, NULL, out, NULL, 3, 0));
  printf("%ld %ld ", (long)lseek(in, 0, SEEK_CUR), (long)lseek(out, 0, SEEK_CUR));
  off_t from = 6, to = 0;
  ssize_t copied = copy_file_range(in, &from, out, &to, 100, 0);
  printf("%zd %ld %ld ", copied, (long)from, (long)to);
  printf("%ld %ld\n", (long)lseek(in, 0, SEEK_CUR), (long)lseek(out, 0, SEEK_CUR));
  char text[16] = {0};
  lseek(out, 0, SEEK_SET);
  printf("%zd %s\n", read(out, text, sizeof text - 1), text);
  ssize_t r = copy_file_range(p[0], NULL, out, NULL, 4, 0);
  printf("%zd %d ", r, errno == EINVAL);
  r = copy_file_range(in, NULL, out, NULL, 4, 1);
  printf("%zd %d ", r, errno == EINVAL);
  r = copy_file_range(99, NULL, out, NULL, 4, 0);
  printf("%zd %d\n", r, errno == EBADF);
  return 0;
}
