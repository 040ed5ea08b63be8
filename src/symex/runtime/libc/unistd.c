/* The system calls for programs under symex: thin wrappers over the POSIX model's handlers
 * (env/posix.py, named __symex_*), which return -errno on failure; here errno is set and -1
 * returned, so errno stays this library's own variable. time() and getcwd() are
 * fixed values, so every path sees the same clock and directory. Every definition is weak. */

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

int __symex_open(const char *path, int flags, int mode);
int __symex_openat(int dirfd, const char *path, int flags, int mode);
int __symex_close(int fd);
long __symex_read(int fd, void *buf, size_t count);
long __symex_write(int fd, const void *buf, size_t count);
long __symex_lseek(int fd, long offset, int whence);
int __symex_stat(const char *path, struct stat *buf);
int __symex_fstat(int fd, struct stat *buf);
int __symex_access(const char *path, int mode);
int __symex_isatty(int fd);
int __symex_dup(int fd);
int __symex_dup2(int fd, int target);
int __symex_unlink(const char *path);

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

WEAK int close(int fd) { return (int)result(__symex_close(fd)); }
WEAK ssize_t read(int fd, void *buf, size_t count) { return result(__symex_read(fd, buf, count)); }
WEAK ssize_t write(int fd, const void *buf, size_t count) {
  return result(__symex_write(fd, buf, count));
}
WEAK off_t lseek(int fd, off_t offset, int whence) {
  return result(__symex_lseek(fd, offset, whence));
}
WEAK off_t lseek64(int fd, off_t offset, int whence) {
  return result(__symex_lseek(fd, offset, whence));
}
WEAK int stat(const char *path, struct stat *buf) { return (int)result(__symex_stat(path, buf)); }
WEAK int lstat(const char *path, struct stat *buf) { return (int)result(__symex_stat(path, buf)); }
WEAK int fstat(int fd, struct stat *buf) { return (int)result(__symex_fstat(fd, buf)); }
WEAK int stat64(const char *path, struct stat *buf) { return (int)result(__symex_stat(path, buf)); }
WEAK int lstat64(const char *path, struct stat *buf) { return (int)result(__symex_stat(path, buf)); }
WEAK int fstat64(int fd, struct stat *buf) { return (int)result(__symex_fstat(fd, buf)); }
/* glibc before 2.33 (and headers that still route through them) call the versioned forms */
WEAK int __xstat(int version, const char *path, struct stat *buf) { return stat(path, buf); }
WEAK int __lxstat(int version, const char *path, struct stat *buf) { return stat(path, buf); }
WEAK int __fxstat(int version, int fd, struct stat *buf) { return fstat(fd, buf); }
WEAK int __xstat64(int version, const char *path, struct stat *buf) { return stat(path, buf); }
WEAK int __lxstat64(int version, const char *path, struct stat *buf) { return stat(path, buf); }
WEAK int __fxstat64(int version, int fd, struct stat *buf) { return fstat(fd, buf); }
WEAK int access(const char *path, int mode) { return (int)result(__symex_access(path, mode)); }
WEAK int isatty(int fd) { return result(__symex_isatty(fd)) < 0 ? 0 : 1; }
WEAK int dup(int fd) { return (int)result(__symex_dup(fd)); }
WEAK int dup2(int fd, int target) { return (int)result(__symex_dup2(fd, target)); }
WEAK int unlink(const char *path) { return (int)result(__symex_unlink(path)); }

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
  if (size < 2) {
    *__errno_location() = ERANGE;
    return NULL;
  }
  buf[0] = '/';
  buf[1] = '\0';
  return buf;
}
