/* Opens the file its argument names: the symbolic file A when the argument is "A".
   Exit 1: A starts with 'x'; 0: it does not; 2: no such file. */
#include <fcntl.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc < 2)
    return 3;
  int fd = open(argv[1], O_RDONLY);
  if (fd < 0)
    return 2;
  char c;
  if (read(fd, &c, 1) == 1 && c == 'x')
    return 1;
  return 0;
}
