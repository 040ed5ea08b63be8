/* A tiny key-value server and its client in one program: the client is a forked process
 * that sends two requests; the server parses them. Planted bug: a SET with key length 7
 * writes one byte past the key table. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include "klee/klee.h"

#define REQUEST 4
#define SLOTS 4
static int table[SLOTS];

/* A request is 4 bytes: command ('S'et or 'G'et), slot, value, and a terminating ';'. */
static int handle(const unsigned char *req, int n, char *reply) {
  if (n != REQUEST || req[3] != ';')
    return sprintf(reply, "ERR format\n");
  int slot = req[1];
  if (slot > SLOTS)  /* the planted bug: slot 4 passes */
    return sprintf(reply, "ERR slot\n");
  if (req[0] == 'S') {
    table[slot] = req[2];
    return sprintf(reply, "OK\n");
  }
  if (req[0] == 'G')
    return sprintf(reply, "V %d\n", table[slot]);
  return sprintf(reply, "ERR command\n");
}

int main(void) {
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in addr;
  memset(&addr, 0, sizeof addr);
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (bind(listener, (struct sockaddr *)&addr, sizeof addr) || listen(listener, 4)) return 2;
  socklen_t len = sizeof addr;
  getsockname(listener, (struct sockaddr *)&addr, &len);
#ifndef SERVER_ONLY
  pid_t client = fork();
  if (client == 0) {
    close(listener);
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(s, (struct sockaddr *)&addr, sizeof addr)) return 3;
    unsigned char request[2][REQUEST];
    klee_make_symbolic(request, sizeof request, "requests");
    char reply[32];
    for (int i = 0; i < 2; i++) {
      send(s, request[i], REQUEST, 0);
      recv(s, reply, sizeof reply, 0);
    }
    close(s);
    return 0;
  }
#endif
  int c = accept(listener, 0, 0);
  unsigned char req[REQUEST];
  char reply[32];
  for (int i = 0; i < 2; i++) {
    int n = recv(c, req, sizeof req, 0);
    if (n <= 0) break;
    int m = handle(req, n, reply);
    send(c, reply, m, 0);
  }
  close(c);
#ifndef SERVER_ONLY
  waitpid(client, 0, 0);
#endif
  return 0;
}
