/* Sockets, pipes, select, poll and fcntl for programs under symex: thin wrappers over the
 * model's handlers (env/network.py, named __symex_*), which return -errno on failure; here
 * errno is set and -1 returned. The byte-order functions are here too (glibc's headers call
 * them at -O0). Every definition is weak. */

#define WEAK __attribute__((weak))
typedef __SIZE_TYPE__ size_t;
typedef long ssize_t;
typedef unsigned int socklen_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;

int *__errno_location(void);

int __symex_socket(int family, int type, int protocol);
int __symex_socketpair(int family, int type, int protocol, int *fds);
int __symex_pipe(int *fds, int flags);
int __symex_bind(int fd, const void *address, socklen_t length);
int __symex_listen(int fd, int backlog);
int __symex_connect(int fd, const void *address, socklen_t length);
int __symex_accept(int fd, void *address, socklen_t *length, int flags);
int __symex_shutdown(int fd, int how);
int __symex_getsockname(int fd, void *address, socklen_t *length);
int __symex_getpeername(int fd, void *address, socklen_t *length);
int __symex_setsockopt(int fd, int level, int name, const void *value, socklen_t length);
int __symex_getsockopt(int fd, int level, int name, void *value, socklen_t *length);
long __symex_recvfrom(int fd, void *buffer, size_t length, int flags, void *address, socklen_t *address_length);
long __symex_sendto(int fd, const void *buffer, size_t length, int flags, const void *address, socklen_t address_length);
int __symex_fcntl(int fd, int command, long argument);
int __symex_poll(void *fds, unsigned long count, int timeout);
int __symex_select(int nfds, void *readfds, void *writefds, void *exceptfds, void *timeout);

static long result(long value) {
  if (value < 0) {
    *__errno_location() = (int)-value;
    return -1;
  }
  return value;
}

WEAK int socket(int family, int type, int protocol) { return (int)result(__symex_socket(family, type, protocol)); }
WEAK int socketpair(int family, int type, int protocol, int fds[2]) {
  return (int)result(__symex_socketpair(family, type, protocol, fds));
}
WEAK int pipe(int fds[2]) { return (int)result(__symex_pipe(fds, 0)); }
WEAK int pipe2(int fds[2], int flags) { return (int)result(__symex_pipe(fds, flags)); }
WEAK int bind(int fd, const void *address, socklen_t length) { return (int)result(__symex_bind(fd, address, length)); }
WEAK int listen(int fd, int backlog) { return (int)result(__symex_listen(fd, backlog)); }
WEAK int connect(int fd, const void *address, socklen_t length) {
  return (int)result(__symex_connect(fd, address, length));
}
WEAK int accept(int fd, void *address, socklen_t *length) { return (int)result(__symex_accept(fd, address, length, 0)); }
WEAK int accept4(int fd, void *address, socklen_t *length, int flags) {
  return (int)result(__symex_accept(fd, address, length, flags));
}
WEAK int shutdown(int fd, int how) { return (int)result(__symex_shutdown(fd, how)); }
WEAK int getsockname(int fd, void *address, socklen_t *length) {
  return (int)result(__symex_getsockname(fd, address, length));
}
WEAK int getpeername(int fd, void *address, socklen_t *length) {
  return (int)result(__symex_getpeername(fd, address, length));
}
WEAK int setsockopt(int fd, int level, int name, const void *value, socklen_t length) {
  return (int)result(__symex_setsockopt(fd, level, name, value, length));
}
WEAK int getsockopt(int fd, int level, int name, void *value, socklen_t *length) {
  return (int)result(__symex_getsockopt(fd, level, name, value, length));
}
WEAK ssize_t recv(int fd, void *buffer, size_t length, int flags) {
  return result(__symex_recvfrom(fd, buffer, length, flags, 0, 0));
}
WEAK ssize_t recvfrom(int fd, void *buffer, size_t length, int flags, void *address, socklen_t *address_length) {
  return result(__symex_recvfrom(fd, buffer, length, flags, address, address_length));
}
WEAK ssize_t send(int fd, const void *buffer, size_t length, int flags) {
  return result(__symex_sendto(fd, buffer, length, flags, 0, 0));
}
WEAK ssize_t sendto(int fd, const void *buffer, size_t length, int flags, const void *address,
                    socklen_t address_length) {
  return result(__symex_sendto(fd, buffer, length, flags, address, address_length));
}
/* the commands that take a third argument (an int) */
static int takes_argument(int command) {
  return command == 0 || command == 2 || command == 4 || command == 1030;
}

static int fcntl_arguments(int fd, int command, __builtin_va_list ap) {
  long argument = takes_argument(command) ? __builtin_va_arg(ap, int) : 0;
  return (int)result(__symex_fcntl(fd, command, argument));
}

WEAK int fcntl(int fd, int command, ...) {
  __builtin_va_list ap;
  __builtin_va_start(ap, command);
  int done = fcntl_arguments(fd, command, ap);
  __builtin_va_end(ap);
  return done;
}
WEAK int fcntl64(int fd, int command, ...) {
  __builtin_va_list ap;
  __builtin_va_start(ap, command);
  int done = fcntl_arguments(fd, command, ap);
  __builtin_va_end(ap);
  return done;
}
WEAK int poll(void *fds, unsigned long count, int timeout) { return (int)result(__symex_poll(fds, count, timeout)); }
WEAK int select(int nfds, void *readfds, void *writefds, void *exceptfds, void *timeout) {
  return (int)result(__symex_select(nfds, readfds, writefds, exceptfds, timeout));
}

WEAK uint16_t htons(uint16_t x) { return (uint16_t)(x << 8 | x >> 8); }
WEAK uint16_t ntohs(uint16_t x) { return (uint16_t)(x << 8 | x >> 8); }
WEAK uint32_t htonl(uint32_t x) {
  return x << 24 | (x & 0xff00) << 8 | (x >> 8 & 0xff00) | x >> 24;
}
WEAK uint32_t ntohl(uint32_t x) { return htonl(x); }

/* dotted IPv4 text to network order; -1 (INADDR_NONE) when malformed */
static long parse_ipv4(const char *text) {
  uint32_t value = 0;
  for (int part = 0; part < 4; part++) {
    if (*text < '0' || *text > '9')
      return -1;
    uint32_t octet = 0;
    while (*text >= '0' && *text <= '9') {
      octet = octet * 10 + (uint32_t)(*text++ - '0');
      if (octet > 255)
        return -1;
    }
    value = value << 8 | octet;
    if (part < 3 && *text++ != '.')
      return -1;
  }
  return *text ? -1 : (long)htonl(value);
}

WEAK uint32_t inet_addr(const char *text) { return (uint32_t)parse_ipv4(text); }
WEAK int inet_pton(int family, const char *text, void *out) {
  if (family != 2) {
    *__errno_location() = 97; /* EAFNOSUPPORT */
    return -1;
  }
  long value = parse_ipv4(text);
  if (value < 0)
    return 0;
  *(uint32_t *)out = (uint32_t)value;
  return 1;
}
WEAK int inet_aton(const char *text, void *out) { return inet_pton(2, text, out) == 1; }

/* sendmsg and recvmsg without control data (file descriptors, credentials): the buffers are
 * gathered into one send (a stream keeps it as one segment, a datagram socket as one message,
 * as the kernel does) and one receive is scattered over them. Control data ends the path
 * as unsupported. */
void __symex_unsupported(const char *what);
void *malloc(size_t size);
void free(void *pointer);

struct symex_iovec {
  void *base;
  size_t length;
};
struct symex_msghdr {
  void *name;
  socklen_t name_length;
  struct symex_iovec *iov;
  size_t iov_count;
  void *control;
  size_t control_length;
  int flags;
};

static size_t total_length(const struct symex_msghdr *m) {
  size_t total = 0;
  for (size_t i = 0; i < m->iov_count; i++)
    total += m->iov[i].length;
  return total;
}

WEAK ssize_t sendmsg(int fd, const void *message, int flags) {
  const struct symex_msghdr *m = message;
  if (m->control_length)
    __symex_unsupported("sendmsg with control data");
  if (m->iov_count == 1)
    return result(__symex_sendto(fd, m->iov[0].base, m->iov[0].length, flags, m->name, m->name_length));
  size_t total = total_length(m);
  char *gathered = malloc(total ? total : 1);
  if (!gathered)
    return result(-105); /* ENOBUFS */
  size_t at = 0;
  for (size_t i = 0; i < m->iov_count; i++)
    for (size_t k = 0; k < m->iov[i].length; k++)
      gathered[at++] = ((const char *)m->iov[i].base)[k];
  long sent = __symex_sendto(fd, gathered, total, flags, m->name, m->name_length);
  free(gathered);
  return result(sent);
}

WEAK ssize_t recvmsg(int fd, void *message, int flags) {
  struct symex_msghdr *m = message;
  if (m->control_length)
    __symex_unsupported("recvmsg with control data");
  m->flags = 0;
  if (m->iov_count == 1)
    return result(__symex_recvfrom(fd, m->iov[0].base, m->iov[0].length, flags, m->name,
                                   m->name ? &m->name_length : 0));
  size_t total = total_length(m);
  char *received = malloc(total ? total : 1);
  if (!received)
    return result(-105); /* ENOBUFS */
  long got = __symex_recvfrom(fd, received, total, flags, m->name, m->name ? &m->name_length : 0);
  long left = got;
  size_t at = 0;
  for (size_t i = 0; i < m->iov_count && left > 0; i++)
    for (size_t k = 0; k < m->iov[i].length && left > 0; k++, left--)
      ((char *)m->iov[i].base)[k] = received[at++];
  free(received);
  return result(got);
}
