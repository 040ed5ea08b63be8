#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int main(void) {
    char buf[4];
    int fd = open("A", O_RDONLY);
    if (fd < 0)
        return 1;
    if (read(fd, buf, sizeof buf) < 0) {
        printf("read failed: %d\n", errno == EIO);
        return 2;
    }
    if (close(fd) != 0) {
        printf("close failed: %d\n", errno == EIO);
        return 3;
    }
    return 0;
}
