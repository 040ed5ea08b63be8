/* Socket and pipe calls whose results the model must give as Linux gives them; the test
 * compares this program's output under symex with its native output. No addresses or port
 * numbers are printed (the kernel picks other ephemeral ports). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static void show(const char *what, long result) {
  if (result < 0)
    printf("%s: -1 errno %d\n", what, errno);
  else
    printf("%s: %ld\n", what, result);
}

static struct sockaddr_in loopback(int port) {
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = inet_addr("127.0.0.1");
  return a;
}

int main(void) {
  char buffer[32];
  int sv[2];

  /* socketpair, partial reads across sends, MSG_PEEK, non-blocking reads, shutdown */
  show("socketpair", socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
  show("send", send(sv[0], "hello", 5, 0));
  show("send", send(sv[0], " world", 6, 0));
  show("peek", recv(sv[1], buffer, 3, MSG_PEEK));
  show("recv 3", recv(sv[1], buffer, 3, 0));
  show("recv rest", recv(sv[1], buffer, sizeof buffer, 0));
  buffer[8] = 0;
  printf("data %.8s\n", buffer);
  show("recv empty nonblocking", recv(sv[1], buffer, sizeof buffer, MSG_DONTWAIT));
  int flags = fcntl(sv[1], F_GETFL);
  show("set nonblocking", fcntl(sv[1], F_SETFL, flags | O_NONBLOCK));
  printf("nonblocking flag %d\n", (fcntl(sv[1], F_GETFL) & O_NONBLOCK) != 0);
  show("read empty", read(sv[1], buffer, sizeof buffer));

  /* select and poll */
  fd_set readable;
  struct timeval zero = {0, 0};
  FD_ZERO(&readable);
  FD_SET(sv[1], &readable);
  show("select nothing", select(sv[1] + 1, &readable, 0, 0, &zero));
  send(sv[0], "x", 1, 0);
  FD_ZERO(&readable);
  FD_SET(sv[0], &readable);
  FD_SET(sv[1], &readable);
  show("select one", select(sv[1] + 1, &readable, 0, 0, &zero));
  printf("which %d %d\n", FD_ISSET(sv[0], &readable) != 0, FD_ISSET(sv[1], &readable) != 0);
  struct pollfd p[2] = {{sv[0], POLLIN, 0}, {sv[1], POLLIN, 0}};
  show("poll", poll(p, 2, 0));
  printf("revents %d %d\n", p[0].revents & (POLLIN | POLLHUP), p[1].revents & (POLLIN | POLLHUP));
  recv(sv[1], buffer, 1, 0);
  show("shutdown", shutdown(sv[0], SHUT_WR));
  show("read after shutdown", read(sv[1], buffer, sizeof buffer));
  close(sv[0]);
  p[0].fd = sv[1];
  show("poll closed peer", poll(p, 1, 0));
  printf("revents %d\n", p[0].revents & (POLLIN | POLLHUP));
  show("send to closed peer", send(sv[1], "z", 1, MSG_NOSIGNAL));
  int copy = fcntl(sv[1], F_DUPFD, 10);
  show("dupfd", copy);
  show("close copy", close(copy));
  close(sv[1]);
  show("close closed", close(sv[1]));

  /* pipes */
  int fds[2];
  show("pipe", pipe(fds));
  show("write", write(fds[1], "pipe data", 9));
  show("read end write", write(fds[0], "x", 1));
  close(fds[1]);
  show("read", read(fds[0], buffer, sizeof buffer));
  show("read eof", read(fds[0], buffer, sizeof buffer));
  close(fds[0]);

  /* TCP on loopback: bind to port 0, listen, connect, accept, talk */
  int server = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in address = loopback(0);
  show("bind", bind(server, (struct sockaddr *)&address, sizeof address));
  socklen_t length = sizeof address;
  show("getsockname", getsockname(server, (struct sockaddr *)&address, &length));
  printf("family %d port nonzero %d\n", address.sin_family, address.sin_port != 0);
  int other = socket(AF_INET, SOCK_STREAM, 0);
  show("bind same port", bind(other, (struct sockaddr *)&address, sizeof address));
  close(other);
  show("listen", listen(server, 4));
  int client = socket(AF_INET, SOCK_STREAM, 0);
  show("connect", connect(client, (struct sockaddr *)&address, sizeof address));
  struct sockaddr_in peer;
  length = sizeof peer;
  int accepted = accept(server, (struct sockaddr *)&peer, &length);
  printf("accepted %d family %d\n", accepted > 0, peer.sin_family);
  show("client send", send(client, "ping", 4, 0));
  show("server recv", recv(accepted, buffer, sizeof buffer, 0));
  show("server send", send(accepted, "pong!", 5, 0));
  show("client recv", recv(client, buffer, sizeof buffer, 0));
  printf("data %.5s\n", buffer);
  close(client);
  show("recv after client closed", recv(accepted, buffer, sizeof buffer, 0));
  close(accepted);
  int refused = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in nobody = loopback(1);
  show("connect refused", connect(refused, (struct sockaddr *)&nobody, sizeof nobody));
  close(refused);
  close(server);

  /* UDP: messages keep their boundaries and are cut to the buffer */
  int receiver = socket(AF_INET, SOCK_DGRAM, 0);
  struct sockaddr_in udp = loopback(0);
  bind(receiver, (struct sockaddr *)&udp, sizeof udp);
  length = sizeof udp;
  getsockname(receiver, (struct sockaddr *)&udp, &length);
  int sender = socket(AF_INET, SOCK_DGRAM, 0);
  show("sendto", sendto(sender, "first message", 13, 0, (struct sockaddr *)&udp, sizeof udp));
  show("sendto", sendto(sender, "second", 6, 0, (struct sockaddr *)&udp, sizeof udp));
  struct sockaddr_in from;
  length = sizeof from;
  show("recvfrom cut", recvfrom(receiver, buffer, 5, 0, (struct sockaddr *)&from, &length));
  printf("from family %d\n", from.sin_family);
  show("recvfrom", recvfrom(receiver, buffer, sizeof buffer, 0, 0, 0));
  printf("data %.6s\n", buffer);
  show("recv nonblocking", recv(receiver, buffer, sizeof buffer, MSG_DONTWAIT));
  close(sender);
  close(receiver);
  struct sockaddr_un box;
  memset(&box, 0, sizeof box);
  box.sun_family = AF_UNIX;
  strcpy(box.sun_path, "symex-dgram.sock");
  unlink(box.sun_path);
  int mailbox = socket(AF_UNIX, SOCK_DGRAM, 0);
  show("bind unix datagram", bind(mailbox, (struct sockaddr *)&box, sizeof box));
  int poster = socket(AF_UNIX, SOCK_DGRAM, 0);
  show("sendto unix", sendto(poster, "letter", 6, 0, (struct sockaddr *)&box, sizeof box));
  struct sockaddr_un sent_from;
  socklen_t from_length = sizeof sent_from;
  show("recvfrom unix", recvfrom(mailbox, buffer, sizeof buffer, 0, (struct sockaddr *)&sent_from,
                                 &from_length));
  close(poster);
  close(mailbox);
  unlink(box.sun_path);
  show("datagram socketpair", socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
  send(sv[0], "one", 3, 0);
  send(sv[0], "three", 5, 0);
  show("recv one", recv(sv[1], buffer, sizeof buffer, 0));
  show("recv three", recv(sv[1], buffer, sizeof buffer, 0));
  show("send back", send(sv[1], "back", 4, 0));
  show("recv back", recv(sv[0], buffer, sizeof buffer, 0));
  close(sv[0]);
  close(sv[1]);

  /* AF_UNIX stream socket at a path, between two processes */
  struct sockaddr_un local;
  memset(&local, 0, sizeof local);
  local.sun_family = AF_UNIX;
  strcpy(local.sun_path, "symex-test.sock");
  unlink(local.sun_path);
  int listener = socket(AF_UNIX, SOCK_STREAM, 0);
  show("bind unix", bind(listener, (struct sockaddr *)&local, sizeof local));
  show("listen unix", listen(listener, 1));
  pid_t child = fork();
  if (child == 0) {
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    if (connect(s, (struct sockaddr *)&local, sizeof local))
      _exit(9);
    send(s, "from child", 10, 0);
    recv(s, buffer, sizeof buffer, 0);
    _exit(buffer[0] == 'k' ? 7 : 8);
  }
  int connection = accept(listener, 0, 0);
  int got = 0, n;
  while (got < 10 && (n = recv(connection, buffer + got, sizeof buffer - got, 0)) > 0)
    got += n;
  printf("parent got %d: %.10s\n", got, buffer);
  send(connection, "k", 1, 0);
  int status;
  show("waitpid", waitpid(child, &status, 0) == child);
  printf("child exited %d status %d\n", WIFEXITED(status), WEXITSTATUS(status));
  show("waitpid none", waitpid(-1, &status, WNOHANG));
  close(connection);
  close(listener);
  unlink(local.sun_path);
  return 0;
}
