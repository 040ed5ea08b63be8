/* stdio.h streams for programs under symex: FILE over the POSIX model's read/write
 * (unistd.c), as KLEE runs uclibc's stdio over its POSIX runtime. Streams are unbuffered:
 * every fputc/fwrite is one write() at once, so output keeps its order with printf/puts,
 * which are Python handlers writing to the same path output. A byte read is the byte the
 * model copied into memory, symbolic or not, so getchar() of symbolic stdin returns a
 * symbolic value and the program's own branches on it fork. printf-family formatting is not
 * here (Python handlers). Every definition is weak. */

#define WEAK __attribute__((weak))
typedef __SIZE_TYPE__ size_t;
typedef long ssize_t;
typedef long off_t;
#define NULL ((void *)0)
#define EOF (-1)
#define EINVAL 22
#define EBADF 9

/* glibc names its FILE "struct _IO_FILE"; programs only ever hold pointers to it */
/* Output is unbuffered, so it keeps its order with symex's Python printf/puts. Input is
   read READ_BUFFER bytes at a time: one read() and one call per byte made getchar loops 2.7x
   slower than the same loop over an array (benchmarks/posix_benchmarks.py). */
#define READ_BUFFER 256

typedef struct _IO_FILE {
  int fd;
  int unget;  /* a byte pushed back by ungetc, or EOF */
  int eof;
  int error;
  int owned;  /* allocated by fopen/fdopen (freed by fclose) */
  int rpos;   /* next unread byte of rbuf */
  int rlen;   /* bytes in rbuf */
  unsigned char rbuf[READ_BUFFER];
} FILE;

void *malloc(size_t size);
void free(void *p);
int *__errno_location(void);
int open(const char *path, int flags, ...);
int close(int fd);
ssize_t read(int fd, void *buf, size_t count);
ssize_t write(int fd, const void *buf, size_t count);
off_t lseek(int fd, off_t offset, int whence);

static FILE standard[3] = {{0, EOF, 0, 0, 0}, {1, EOF, 0, 0, 0}, {2, EOF, 0, 0, 0}};
WEAK FILE *stdin = &standard[0];
WEAK FILE *stdout = &standard[1];
WEAK FILE *stderr = &standard[2];

/* open(2) flags for an fopen mode, or -1 for a bad mode */
static int mode_flags(const char *mode) {
  int flags;
  switch (mode[0]) {
  case 'r': flags = 0; break;
  case 'w': flags = 01 | 0100 | 01000; break;   /* O_WRONLY | O_CREAT | O_TRUNC */
  case 'a': flags = 01 | 0100 | 02000; break;   /* O_WRONLY | O_CREAT | O_APPEND */
  default: return -1;
  }
  for (const char *m = mode + 1; *m; m++)
    if (*m == '+')
      flags = (flags & ~3) | 02;                /* O_RDWR */
  return flags;
}

static FILE *new_stream(int fd) {
  FILE *f = malloc(sizeof(FILE));
  if (f == NULL)
    return NULL;
  f->fd = fd;
  f->unget = EOF;
  f->eof = 0;
  f->error = 0;
  f->owned = 1;
  f->rpos = 0;
  f->rlen = 0;
  return f;
}

WEAK FILE *fopen(const char *path, const char *mode) {
  int flags = mode_flags(mode);
  if (flags < 0) {
    *__errno_location() = EINVAL;
    return NULL;
  }
  int fd = open(path, flags, 0666);
  if (fd < 0)
    return NULL;
  FILE *f = new_stream(fd);
  if (f == NULL)
    close(fd);
  return f;
}

WEAK FILE *fopen64(const char *path, const char *mode) { return fopen(path, mode); }

WEAK FILE *fdopen(int fd, const char *mode) {
  if (mode_flags(mode) < 0) {
    *__errno_location() = EINVAL;
    return NULL;
  }
  return new_stream(fd);
}

WEAK int fclose(FILE *f) {
  int status = close(f->fd);
  if (f->owned)
    free(f);
  return status < 0 ? EOF : 0;
}

WEAK int fileno(FILE *f) { return f->fd; }
WEAK int feof(FILE *f) { return f->eof; }
WEAK int ferror(FILE *f) { return f->error; }
WEAK void clearerr(FILE *f) { f->eof = 0; f->error = 0; }
WEAK int fflush(FILE *f) { (void)f; return 0; }  /* output is unbuffered; read-ahead stays */

/* the bytes read ahead but not consumed: the descriptor's offset is past them */
static long buffered(FILE *f) {
  return (long)(f->rlen - f->rpos) + (f->unget != EOF ? 1 : 0);
}

/* give back what was read ahead, so the descriptor's offset is the stream's position */
static void drop_read_ahead(FILE *f) {
  long ahead = f->rlen - f->rpos;
  if (ahead > 0)
    lseek(f->fd, -ahead, 1);
  f->rpos = f->rlen = 0;
}

WEAK int fgetc(FILE *f) {
  if (f->unget != EOF) {
    int c = f->unget;
    f->unget = EOF;
    return c;
  }
  if (f->rpos < f->rlen)
    return f->rbuf[f->rpos++];
  ssize_t n = read(f->fd, f->rbuf, READ_BUFFER);
  if (n <= 0) {
    if (n == 0)
      f->eof = 1;
    else
      f->error = 1;
    return EOF;
  }
  f->rlen = (int)n;
  f->rpos = 1;
  return f->rbuf[0];
}

WEAK int getc(FILE *f) { return fgetc(f); }
WEAK int getchar(void) { return fgetc(stdin); }
WEAK int getc_unlocked(FILE *f) { return fgetc(f); }
WEAK int getchar_unlocked(void) { return fgetc(stdin); }
WEAK int fgetc_unlocked(FILE *f) { return fgetc(f); }

WEAK int ungetc(int c, FILE *f) {
  if (c == EOF || f->unget != EOF)
    return EOF;
  f->unget = (unsigned char)c;
  f->eof = 0;
  return (unsigned char)c;
}

WEAK char *fgets(char *s, int size, FILE *f) {
  int n = 0;
  if (size <= 0)
    return NULL;
  while (n < size - 1) {
    int c = fgetc(f);
    if (c == EOF)
      break;
    s[n++] = (char)c;
    if (c == '\n')
      break;
  }
  if (n == 0)
    return NULL;
  s[n] = '\0';
  return s;
}

WEAK size_t fread(void *ptr, size_t size, size_t count, FILE *f) {
  size_t total = size * count, got = 0;
  unsigned char *out = ptr;
  if (total == 0)
    return 0;
  if (f->unget != EOF) {
    out[got++] = (unsigned char)f->unget;
    f->unget = EOF;
  }
  while (got < total && f->rpos < f->rlen)
    out[got++] = f->rbuf[f->rpos++];
  while (got < total) {
    ssize_t n = read(f->fd, out + got, total - got);
    if (n <= 0) {
      if (n == 0)
        f->eof = 1;
      else
        f->error = 1;
      break;
    }
    got += (size_t)n;
  }
  return got / size;
}

WEAK size_t fwrite(const void *ptr, size_t size, size_t count, FILE *f) {
  size_t total = size * count, done = 0;
  const unsigned char *in = ptr;
  if (total == 0)
    return 0;
  drop_read_ahead(f);
  while (done < total) {
    ssize_t n = write(f->fd, in + done, total - done);
    if (n <= 0) {
      f->error = 1;
      break;
    }
    done += (size_t)n;
  }
  return done / size;
}

WEAK int fputc(int c, FILE *f) {
  unsigned char byte = (unsigned char)c;
  drop_read_ahead(f);
  if (write(f->fd, &byte, 1) != 1) {
    f->error = 1;
    return EOF;
  }
  return byte;
}

WEAK int putc(int c, FILE *f) { return fputc(c, f); }
WEAK int putc_unlocked(int c, FILE *f) { return fputc(c, f); }
WEAK int fputc_unlocked(int c, FILE *f) { return fputc(c, f); }

WEAK int fputs(const char *s, FILE *f) {
  size_t n = 0;
  while (s[n])
    n++;
  return fwrite(s, 1, n, f) == n ? 1 : EOF;
}

WEAK int fseek(FILE *f, long offset, int whence) {
  if (whence == 1)
    offset -= buffered(f);   /* relative to the stream's position, not the descriptor's */
  f->rpos = f->rlen = 0;
  f->unget = EOF;
  if (lseek(f->fd, offset, whence) < 0)
    return -1;
  f->eof = 0;
  return 0;
}

WEAK long ftell(FILE *f) {
  long at = lseek(f->fd, 0, 1);
  if (at >= 0)
    at -= buffered(f);
  return at;
}

WEAK void rewind(FILE *f) {
  fseek(f, 0, 0);
  f->error = 0;
}

/* getline/getdelim: *line grows with malloc as needed, as glibc's does */
WEAK ssize_t getdelim(char **line, size_t *capacity, int delimiter, FILE *f) {
  size_t n = 0;
  if (line == NULL || capacity == NULL) {
    *__errno_location() = EINVAL;
    return -1;
  }
  for (;;) {
    int c = fgetc(f);
    if (c == EOF)
      break;
    if (*line == NULL || n + 2 > *capacity) {
      size_t grown = *capacity < 64 ? 128 : *capacity * 2;
      char *bigger = malloc(grown);
      if (bigger == NULL)
        return -1;
      for (size_t k = 0; k < n; k++)
        bigger[k] = (*line)[k];
      free(*line);
      *line = bigger;
      *capacity = grown;
    }
    (*line)[n++] = (char)c;
    if (c == delimiter)
      break;
  }
  if (n == 0)
    return -1;
  (*line)[n] = '\0';
  return (ssize_t)n;
}

WEAK ssize_t getline(char **line, size_t *capacity, FILE *f) {
  return getdelim(line, capacity, '\n', f);
}
