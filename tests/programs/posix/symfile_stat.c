/* read, lseek and fstat on a symbolic file A of 8 bytes. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

int main(void) {
  struct stat st;
  char buf[8];
  int fd = open("A", O_RDONLY);
  if (fd < 0)
    return 1;
  if (fstat(fd, &st) != 0 || st.st_size != 8)
    return 2;
  if (lseek(fd, 6, SEEK_SET) != 6)
    return 3;
  long n = read(fd, buf, sizeof buf);
  if (n != 2)
    return 4;
  if (buf[0] == 'x' && buf[1] == 'y') {
    lseek(fd, 0, SEEK_SET);
    read(fd, buf, 1);
    if (buf[0] == '!')
      return 10;
    return 11;
  }
  return 0;
}
