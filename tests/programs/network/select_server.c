/* A server that serves two forked clients from one select() loop; each client sends a tag
 * and one symbolic byte, and exits with the server's verdict on it (1: a digit). */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include "klee/klee.h"

static void client(struct sockaddr_in *address, char tag) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  if (connect(s, (struct sockaddr *)address, sizeof *address)) _exit(1);
  char request[2] = {tag, 0};
  klee_make_symbolic(&request[1], 1, "digit");
  send(s, request, 2, 0);
  char reply[8];
  int n = recv(s, reply, sizeof reply, 0);
  _exit(n == 2 && reply[0] == tag ? reply[1] : 100);
}

int main(void) {
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in address = {0};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(listener, (struct sockaddr *)&address, sizeof address);
  socklen_t length = sizeof address;
  getsockname(listener, (struct sockaddr *)&address, &length);
  listen(listener, 8);
  pid_t a = fork();
  if (a == 0) client(&address, 'a');
  pid_t b = fork();
  if (b == 0) client(&address, 'b');
  int clients[2], count = 0, served = 0;
  while (served < 2) {
    fd_set readable;
    FD_ZERO(&readable);
    int top = listener;
    FD_SET(listener, &readable);
    for (int i = 0; i < count; i++) {
      if (clients[i] >= 0) {
        FD_SET(clients[i], &readable);
        if (clients[i] > top)
          top = clients[i];
      }
    }
    if (select(top + 1, &readable, 0, 0, 0) <= 0) return 2;
    if (FD_ISSET(listener, &readable) && count < 2) clients[count++] = accept(listener, 0, 0);
    for (int i = 0; i < count; i++) {
      if (clients[i] >= 0 && FD_ISSET(clients[i], &readable)) {
        char request[2];
        if (recv(clients[i], request, 2, 0) != 2) return 3;
        char reply[2] = {request[0], 0};
        if (request[1] >= '0' && request[1] <= '9')
          reply[1] = 1;
        send(clients[i], reply, 2, 0);
        close(clients[i]);
        clients[i] = -1;
        served++;
      }
    }
  }
  int sa, sb;
  waitpid(a, &sa, 0);
  waitpid(b, &sb, 0);
  printf("a %d b %d\n", WEXITSTATUS(sa), WEXITSTATUS(sb));
  return 0;
}
