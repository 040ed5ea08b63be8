/* A server in memcached's shape, for the model pieces memcached needs: the open-file limit
 * raised to the connection count, a non-blocking listening socket watched by select with a
 * set just big enough (as libevent allocates it), the accepted connection handed to a worker
 * thread woken through an eventfd, the request read there, and the reply written back as one
 * sendmsg of several buffers. The reply is also printed, so a test sees what was answered. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

static int notify = -1;
static int handoff = -1;

static void *worker(void *arg) {
  uint64_t count;
  if (read(notify, &count, sizeof count) != sizeof count)
    return 0;
  int connection = handoff;
  char request[16];
  ssize_t got = read(connection, request, sizeof request - 1);
  request[got > 0 ? got : 0] = 0;
  const char *reply = strncmp(request, "get ", 4) == 0 ? "END\r\n" : "ERROR\r\n";
  struct iovec parts[2] = {{"> ", 2}, {(void *)reply, strlen(reply)}};
  struct msghdr message = {0};
  message.msg_iov = parts;
  message.msg_iovlen = 2;
  if (sendmsg(connection, &message, 0) != (ssize_t)(2 + strlen(reply)))
    return 0;
  printf("> %s", reply);
  close(connection);
  return 0;
}

int main(void) {
  struct rlimit limit;
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0)
    return 71;
  limit.rlim_cur = limit.rlim_max = 64;
  if (setrlimit(RLIMIT_NOFILE, &limit) != 0)
    return 71;
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in address = {0};
  address.sin_family = AF_INET;
  address.sin_port = htons(11211);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(listener, (struct sockaddr *)&address, sizeof address) || listen(listener, 8))
    return 1;
  fcntl(listener, F_SETFL, fcntl(listener, F_GETFL) | O_NONBLOCK);
  notify = eventfd(0, EFD_CLOEXEC);
  pthread_t thread;
  pthread_create(&thread, 0, worker, 0);
  for (;;) {
    unsigned long *readable = calloc(1, sizeof *readable); /* one word: descriptors < 64 */
    *readable = 1ul << listener;
    if (select(listener + 1, (fd_set *)readable, 0, 0, 0) < 0)
      return 1;
    free(readable);
    int connection = accept(listener, 0, 0);
    if (connection < 0 && errno == EAGAIN)
      continue;
    handoff = connection;
    uint64_t one = 1;
    write(notify, &one, sizeof one);
    break;
  }
  pthread_join(thread, 0);
  return 0;
}
