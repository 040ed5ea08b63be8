/* The system calls for programs under symex: thin wrappers over the POSIX model's handlers
 * (env/posix.py, named __symex_*), which return -errno on failure; here errno is set and -1
 * returned, so errno stays this library's own variable. time() is a fixed value, so every
 * path sees the same clock. Every definition is weak. The plain wrappers come from the
 * system-call table (symex/ir/system_calls.py, SYMEX_LIBRARY_WRAPPERS). */

#define WEAK __attribute__((weak))
typedef __SIZE_TYPE__ size_t;
typedef long ssize_t;
typedef long off_t;
typedef long time_t;
typedef int pid_t;
struct stat;
#define NULL ((void *)0)
#define ERANGE 34
#define EINVAL 22

int *__errno_location(void);

#include "symex_system_calls.h" /* generated: symex/ir/system_calls.py */

static long result(long value) {
  if (value < 0) {
    *__errno_location() = (int)-value;
    return -1;
  }
  return value;
}

/* O_CREAT and O_TMPFILE are the flags that come with a mode argument */
#define O_CREAT 0100
#define O_TMPFILE 020200000

WEAK int open(const char *path, int flags, ...) {
  int mode = 0;
  if (flags & O_CREAT || (flags & O_TMPFILE) == O_TMPFILE) {
    __builtin_va_list ap;
    __builtin_va_start(ap, flags);
    mode = __builtin_va_arg(ap, int);
    __builtin_va_end(ap);
  }
  return (int)result(__symex_open(path, flags, mode));
}

WEAK int open64(const char *path, int flags, ...) {
  int mode = 0;
  if (flags & O_CREAT) {
    __builtin_va_list ap;
    __builtin_va_start(ap, flags);
    mode = __builtin_va_arg(ap, int);
    __builtin_va_end(ap);
  }
  return (int)result(__symex_open(path, flags, mode));
}

WEAK int openat(int dirfd, const char *path, int flags, ...) {
  int mode = 0;
  if (flags & O_CREAT) {
    __builtin_va_list ap;
    __builtin_va_start(ap, flags);
    mode = __builtin_va_arg(ap, int);
    __builtin_va_end(ap);
  }
  return (int)result(__symex_openat(dirfd, path, flags, mode));
}

WEAK int creat(const char *path, int mode) {
  return (int)result(__symex_open(path, 01 | O_CREAT | 01000, mode));
}

/* close, read, write, lseek, stat, fstat, access, dup, dup2, unlink, mkdir, rmdir, chdir ... */
SYMEX_LIBRARY_WRAPPERS
/* glibc before 2.33 (and headers that still route through them) call the versioned forms */
WEAK int __xstat(int version, const char *path, struct stat *buf) { return stat(path, buf); }
WEAK int __lxstat(int version, const char *path, struct stat *buf) { return lstat(path, buf); }
WEAK int __fxstat(int version, int fd, struct stat *buf) { return fstat(fd, buf); }
WEAK int __xstat64(int version, const char *path, struct stat *buf) { return stat(path, buf); }
WEAK int __lxstat64(int version, const char *path, struct stat *buf) { return lstat(path, buf); }
WEAK int __fxstat64(int version, int fd, struct stat *buf) { return fstat(fd, buf); }
WEAK int isatty(int fd) { return result(__symex_isatty(fd)) < 0 ? 0 : 1; }

/* a fixed clock: 2020-01-01 00:00:00 UTC */
#define SYMEX_TIME 1577836800L

WEAK time_t time(time_t *out) {
  if (out)
    *out = SYMEX_TIME;
  return SYMEX_TIME;
}

/* fork, getpid and getppid are the model's (env/threads.py) */
int __symex_waitpid(pid_t pid, int *status, int options);

WEAK pid_t waitpid(pid_t pid, int *status, int options) {
  return (pid_t)result(__symex_waitpid(pid, status, options));
}
WEAK pid_t wait(int *status) { return (pid_t)result(__symex_waitpid(-1, status, 0)); }

WEAK char *getcwd(char *buf, size_t size) {
  if (buf == NULL || size == 0) {
    *__errno_location() = EINVAL; /* glibc would allocate for NULL; this model does not */
    return NULL;
  }
  return result(__symex_getcwd(buf, size)) < 0 ? NULL : buf;
}
