/* /dev/null: writes vanish, reads find its end, it is a character device, and it fills a
   closed standard descriptor as gnulib's *_safer functions fill one (shuf -o failed there
   when it was missing). The same natively. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

int main(void) {
  int sink = open("/dev/null", O_WRONLY | O_TRUNC);
  long wrote = write(sink, "vanish", 6);
  int source = open("/dev/null", O_RDONLY);
  char byte;
  long got = read(source, &byte, 1);
  struct stat st;
  int status = stat("/dev/null", &st);
  printf("wrote %ld, read %ld, stat %d, device %d\n", wrote, got, status, S_ISCHR(st.st_mode));
  close(sink);
  close(source);
  close(0);
  int refilled = open("/dev/null", O_RDONLY);
  FILE *out = fopen("out.txt", "w");
  int reopened = freopen("out.txt", "w", stdout) != NULL;
  fprintf(stderr, "refilled %d, reopened %d\n", refilled, reopened);
  if (out)
    fclose(out);
  unlink("out.txt");
  return 0;
}
