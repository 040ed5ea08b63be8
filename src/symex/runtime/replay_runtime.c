/*
 * replay_runtime.c -- native implementations of the klee.h / symex.h functions that
 * replay one symex/KLEE test case.
 *
 * Link this file (compiled with gcc, typically under ASan/UBSan) with the program under
 * test and set KTEST_FILE to a .ktest file. Every call that KLEE/symex would have made
 * symbolic -- klee_make_symbolic, klee_int, klee_range, __VERIFIER_nondet_* -- takes the
 * NEXT object of the test case, in order. Names are not matched, because the engine names
 * objects as it likes but always creates them in program order.
 *
 * SYMEX_REPLAY_FIRST_OBJECT=K skips the first K objects: those that built the command line
 * (n_args, argNN of --sym-arg/--sym-args), which symex replay turned into argv already.
 *
 * symex cc also links it, compiled with -DSYMEX_REPLAY_INTRINSICS_ONLY into an archive, into
 * every native executable it builds, so a harness calling klee_make_symbolic links and runs
 * natively as with KLEE's libkleeRuntest (KTEST_FILE names the test; without one, every
 * input is zero, with a warning).
 *
 * Exit codes that symex.replay recognises (together with the stderr markers):
 *   86  "symex-replay: klee_assume failed"  (the test case does not satisfy an assumption)
 *   87  "symex-replay: user error: ..."      (klee_report_error)
 *   88  "symex-replay: reach_error"          (__VERIFIER_error / default reach_error)
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <netinet/in.h>

/* Included so the compiler checks these definitions against the declarations programs see. */
#include <symex.h>

#define REPLAY_EXIT_ASSUME 86
#define REPLAY_EXIT_USER 87
#define REPLAY_EXIT_REACH 88

struct replay_object {
  char *name;
  unsigned char *data;
  uint32_t size;
};

static struct replay_object *replay_objects;
static uint32_t replay_count;
static uint32_t replay_next;
static int replay_loaded;

/* Output of the program must not be lost when we leave through _exit. */
__attribute__((noreturn)) static void replay_exit(int status) {
  fflush(NULL);
  _exit(status);
}

__attribute__((noreturn)) static void replay_fatal(const char *what) {
  fprintf(stderr, "symex-replay: cannot replay: %s\n", what);
  /* 2 is not one of the marker codes: a broken setup must not look like a program error. */
  replay_exit(2);
}

static uint32_t read_u32(FILE *f) {
  unsigned char b[4];
  if (fread(b, 1, 4, f) != 4)
    replay_fatal("truncated .ktest file");
  return ((uint32_t)b[0] << 24) | ((uint32_t)b[1] << 16) | ((uint32_t)b[2] << 8) | (uint32_t)b[3];
}

static unsigned char *read_bytes(FILE *f, uint32_t n) {
  unsigned char *buf = malloc((size_t)n + 1);
  if (!buf)
    replay_fatal("out of memory reading .ktest file");
  if (n && fread(buf, 1, n, f) != n)
    replay_fatal("truncated .ktest file");
  buf[n] = 0;
  return buf;
}

static void replay_load(void) {
  const char *path, *skip;
  FILE *f;
  char magic[5];
  uint32_t version, i, n;

  if (replay_loaded)
    return;
  replay_loaded = 1;
  path = getenv("KTEST_FILE");
  if (!path || !*path) {
    fprintf(stderr, "symex-replay: warning: KTEST_FILE is not set; every input is zero\n");
    return;
  }
  f = fopen(path, "rb");
  if (!f)
    replay_fatal("KTEST_FILE cannot be opened");
  if (fread(magic, 1, 5, f) != 5 || (memcmp(magic, "KTEST", 5) != 0 && memcmp(magic, "BOUT\n", 5) != 0))
    replay_fatal("KTEST_FILE is not a .ktest file");
  version = read_u32(f);
  if (version < 1 || version > 3)
    replay_fatal("unsupported .ktest version");
  n = read_u32(f);
  for (i = 0; i < n; i++)
    free(read_bytes(f, read_u32(f)));
  if (version >= 2) {
    (void)read_u32(f);
    (void)read_u32(f);
  }
  replay_count = read_u32(f);
  if (replay_count) {
    replay_objects = calloc(replay_count, sizeof *replay_objects);
    if (!replay_objects)
      replay_fatal("out of memory reading .ktest file");
  }
  for (i = 0; i < replay_count; i++) {
    replay_objects[i].name = (char *)read_bytes(f, read_u32(f));
    replay_objects[i].size = read_u32(f);
    replay_objects[i].data = read_bytes(f, replay_objects[i].size);
  }
  fclose(f);
  skip = getenv("SYMEX_REPLAY_FIRST_OBJECT");
  if (skip && *skip) {
    unsigned long first = strtoul(skip, NULL, 10);
    replay_next = first < replay_count ? (uint32_t)first : replay_count;
  }
}

/* Fill the nbytes at addr with the next object of the test case. */
static void replay_fill(void *addr, size_t nbytes, const char *name) {
  const struct replay_object *obj;
  size_t n;

  replay_load();
  if (!name)
    name = "(unnamed)";
  if (replay_next >= replay_count) {
    fprintf(stderr,
            "symex-replay: warning: test case has only %u objects; '%s' (%zu bytes) is zero\n",
            (unsigned)replay_count, name, nbytes);
    memset(addr, 0, nbytes);
    return;
  }
  obj = &replay_objects[replay_next++];
  n = obj->size < nbytes ? obj->size : nbytes;
  if (obj->size != nbytes)
    fprintf(stderr,
            "symex-replay: warning: object %u ('%s') has %u bytes but '%s' needs %zu; "
            "copying %zu, rest zero\n",
            (unsigned)(replay_next - 1), obj->name, (unsigned)obj->size, name, nbytes, n);
  memcpy(addr, obj->data, n);
  if (n < nbytes)
    memset((unsigned char *)addr + n, 0, nbytes - n);
}

void klee_make_symbolic(void *addr, size_t nbytes, const char *name) { replay_fill(addr, nbytes, name); }

/* A fuzz target's input (runtime/fuzz_driver.c): the objects fuzz-size and fuzz-data, the
 * first fuzz-size bytes of the data copied into a heap buffer of exactly that size, so that
 * AddressSanitizer reports a read past it, as under libFuzzer. */
const unsigned char *symex_fuzz_input(size_t *size) {
  uint64_t wanted = 0;
  size_t n = 0;
  unsigned char *data;
  const struct replay_object *obj = NULL;
  replay_fill(&wanted, sizeof wanted, "fuzz-size");
  if (replay_next < replay_count)
    obj = &replay_objects[replay_next++];
  if (obj)
    n = wanted < obj->size ? (size_t)wanted : obj->size;
  data = malloc(n ? n : 1);
  if (!data)
    replay_fatal("out of memory for the fuzz input");
  if (n)
    memcpy(data, obj->data, n);
  *size = n;
  return data;
}

#ifndef SYMEX_REPLAY_INTRINSICS_ONLY
/* (left out of the archive symex cc links into native executables: there the C library's
 * close and accept stay the program's own) */
/* --sym-packets: under symex, the first accept() that finds no connection waiting gets one
 * from a client outside the program, which sends the packets (objects packet-0, packet-1...,
 * made at that accept) and closes. Natively the same accept gets one end of a socket pair
 * whose other end has sent the test's packets and shut down for writing. Every other accept is the
 * kernel's (through the system call: this definition takes the place of the C library's). */
static int replay_packets_delivered;
/* the program's end of the socket pair, until it closes it */
static int replay_packets_fd = -1;

/* Under symex, a --sym-packets path ends ("connection closed") once the program has closed
 * the client's connection and every thread waits: a server then waits for a next client
 * that never comes. Natively it would wait forever and every such test would time out; so
 * the process ends, exit 0, one second after that close (what the close set off in other
 * threads runs meanwhile). The second is counted by alarm(): a program's own SIGALRM
 * handler and alarm are replaced from then on. */
static void replay_session_over(int signal_number) {
  (void)signal_number;
  _exit(0);
}

int close(int fd) {
  if (fd >= 0 && fd == replay_packets_fd) {
    replay_packets_fd = -1;
    signal(SIGALRM, replay_session_over);
    alarm(1);
  }
  return (int)syscall(SYS_close, fd);
}

static int replay_accept(int fd, struct sockaddr *address, socklen_t *length, int flags) {
  replay_load();
  if (!replay_packets_delivered && replay_next < replay_count &&
      strncmp(replay_objects[replay_next].name, "packet-", 7) == 0) {
    struct pollfd pending = {fd, POLLIN, 0};
    if (poll(&pending, 1, 0) <= 0) {
      int pair[2];
      replay_packets_delivered = 1;
      if (socketpair(AF_UNIX, SOCK_STREAM, 0, pair))
        replay_fatal("socketpair for --sym-packets failed");
      while (replay_next < replay_count && strncmp(replay_objects[replay_next].name, "packet-", 7) == 0) {
        const struct replay_object *obj = &replay_objects[replay_next++];
        if (write(pair[1], obj->data, obj->size) != (ssize_t)obj->size)
          replay_fatal("writing --sym-packets to the socket pair failed");
      }
      /* the client has sent everything; what the program sends it is read by nobody (as
       * under symex, where it is dropped): its end stays open so sends do not fail */
      shutdown(pair[1], SHUT_WR);
      if (address && length) {
        struct sockaddr_in outside;
        memset(&outside, 0, sizeof outside);
        outside.sin_family = AF_INET;
        outside.sin_port = htons(40000);
        outside.sin_addr.s_addr = htonl(0x0A000002); /* 10.0.0.2, as the model's */
        memcpy(address, &outside, *length < sizeof outside ? *length : sizeof outside);
        *length = sizeof outside;
      }
      replay_packets_fd = pair[0];
      return pair[0];
    }
  }
  return (int)syscall(SYS_accept4, fd, address, length, flags);
}

int accept(int fd, struct sockaddr *address, socklen_t *length) { return replay_accept(fd, address, length, 0); }
int accept4(int fd, struct sockaddr *address, socklen_t *length, int flags) {
  return replay_accept(fd, address, length, flags);
}

#endif

int klee_int(const char *name) {
  int x;
  replay_fill(&x, sizeof x, name);
  return x;
}

int klee_range(int begin, int end, const char *name) {
  int x;
  replay_fill(&x, sizeof x, name);
  if (x < begin || x >= end)
    fprintf(stderr, "symex-replay: warning: klee_range(%d, %d, \"%s\") replays out-of-range value %d\n",
            begin, end, name ? name : "", x);
  return x;
}

void klee_assume(uintptr_t condition) {
  if (!condition) {
    fprintf(stderr, "symex-replay: klee_assume failed\n");
    replay_exit(REPLAY_EXIT_ASSUME);
  }
}

unsigned klee_is_symbolic(uintptr_t n) {
  (void)n;
  return 0;
}

int32_t klee_get_value_i32(int32_t x) { return x; }
int64_t klee_get_value_i64(int64_t x) { return x; }
float klee_get_value_f(float x) { return x; }
double klee_get_value_d(double x) { return x; }
long klee_get_value_l(long x) { return x; }
long long klee_get_value_ll(long long x) { return x; }
float klee_get_valuef(float x) { return x; }
double klee_get_valued(double x) { return x; }
long klee_get_valuel(long x) { return x; }
long long klee_get_valuell(long long x) { return x; }

__attribute__((noreturn)) void klee_silent_exit(int status) { replay_exit(status); }

__attribute__((noreturn)) void klee_report_error(const char *file, int line, const char *message,
                                                 const char *suffix) {
  fprintf(stderr, "symex-replay: user error: %s\n", message ? message : "");
  fprintf(stderr, "symex-replay: at %s:%d (%s)\n", file ? file : "?", line, suffix ? suffix : "");
  replay_exit(REPLAY_EXIT_USER);
}

void klee_warning(const char *message) { fprintf(stderr, "symex-replay: warning: %s\n", message); }

void klee_warning_once(const char *message) {
  /* "once" per call site string; a small table is enough for the few distinct warnings a program has. */
  static const char *seen[64];
  static unsigned nseen;
  unsigned i;
  for (i = 0; i < nseen; i++)
    if (seen[i] == message)
      return;
  if (nseen < sizeof seen / sizeof seen[0])
    seen[nseen++] = message;
  klee_warning(message);
}

void klee_print_expr(const char *msg, ...) {
  /* The argument types are unknown here, so only the message is printed. */
  fprintf(stderr, "symex-replay: %s\n", msg);
}

__attribute__((noreturn)) void klee_abort(void) { abort(); }

void klee_prefer_cex(void *object, uintptr_t condition) {
  (void)object;
  (void)condition;
}

#define REPLAY_NONDET(suffix, type)                                                                \
  type __VERIFIER_nondet_##suffix(void) {                                                          \
    type x;                                                                                        \
    replay_fill(&x, sizeof x, "__VERIFIER_nondet_" #suffix);                                       \
    return x;                                                                                      \
  }

REPLAY_NONDET(char, char)
REPLAY_NONDET(uchar, unsigned char)
REPLAY_NONDET(short, short)
REPLAY_NONDET(ushort, unsigned short)
REPLAY_NONDET(int, int)
REPLAY_NONDET(uint, unsigned int)
REPLAY_NONDET(long, long)
REPLAY_NONDET(ulong, unsigned long)
REPLAY_NONDET(float, float)
REPLAY_NONDET(double, double)

_Bool __VERIFIER_nondet_bool(void) {
  unsigned char x;
  /* Any non-zero byte is true; reading it as _Bool directly would be undefined for values > 1. */
  replay_fill(&x, sizeof x, "__VERIFIER_nondet_bool");
  return x != 0;
}

void __VERIFIER_assume(int cond) { klee_assume((uintptr_t)(cond != 0)); }

__attribute__((noreturn)) void __VERIFIER_error(void) {
  fprintf(stderr, "symex-replay: reach_error\n");
  replay_exit(REPLAY_EXIT_REACH);
}

/* Weak: an SV-COMP program's own reach_error (usually an assert(0)) takes precedence. */
__attribute__((weak, noreturn)) void reach_error(void) { __VERIFIER_error(); }

/* A program run from another function than main (the service's entry field, explore's
 * entry=NAME): build_native defines SYMEX_REPLAY_ENTRY, and this main calls that function
 * as symex started it, with no arguments. */
#ifdef SYMEX_REPLAY_ENTRY
extern int SYMEX_REPLAY_ENTRY();
int main(void) { return SYMEX_REPLAY_ENTRY(); }
#endif
