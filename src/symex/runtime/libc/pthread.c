/* Mutexes, condition variables, semaphores and pthread_once for programs under symex, over
 * one blocking primitive of the model: __symex_wait_while(word, value) blocks the calling
 * thread while *word == value (a futex wait; env/threads.py). Threads are scheduled
 * cooperatively (core/threads/scheduling.py): a thread runs until it blocks, so a check and the
 * store after it happen together, and none of this needs atomic instructions.
 *
 * The layouts are glibc's x86-64 ones, so the static initializers of <pthread.h> work:
 * a mutex is { int lock; unsigned count; int owner; unsigned nusers; int kind; ... },
 * a condition variable's first word counts signals, a semaphore's first word is its value,
 * a pthread_once_t is an int; read-write locks and barriers are described where they are
 * defined. Every definition is weak. */

#define WEAK __attribute__((weak))
#define EBUSY 16
#define EPERM 1
#define EDEADLK 35
#define EAGAIN 11
#define EINVAL 22
#define ETIMEDOUT 110
#define MUTEX_RECURSIVE 1
#define MUTEX_ERRORCHECK 2

typedef unsigned long pthread_t;
int __symex_wait_while(int *word, int value);
int __symex_wait_while_timed(int *word, int value);
pthread_t pthread_self(void);
int *__errno_location(void);

WEAK int pthread_mutexattr_init(void *attr) { *(int *)attr = 0; return 0; }
WEAK int pthread_mutexattr_destroy(void *attr) { return 0; }
WEAK int pthread_mutexattr_settype(void *attr, int kind) {
  if (kind < 0 || kind > 3)
    return EINVAL;
  *(int *)attr = kind;
  return 0;
}
WEAK int pthread_mutexattr_gettype(const void *attr, int *kind) { *kind = *(const int *)attr; return 0; }

WEAK int pthread_mutex_init(void *mutex, const void *attr) {
  int *m = mutex;
  for (int i = 0; i < 10; i++)
    m[i] = 0;
  if (attr)
    m[4] = *(const int *)attr;
  return 0;
}

WEAK int pthread_mutex_destroy(void *mutex) { return ((int *)mutex)[0] ? EBUSY : 0; }

WEAK int pthread_mutex_lock(void *mutex) {
  int *m = mutex;
  int self = (int)pthread_self();
  if (m[0] && m[2] == self) {
    if (m[4] == MUTEX_RECURSIVE) {
      m[1]++;
      return 0;
    }
    if (m[4] == MUTEX_ERRORCHECK)
      return EDEADLK;
    /* a normal mutex locked twice by its owner deadlocks, as under glibc */
  }
  while (m[0])
    __symex_wait_while(&m[0], m[0]);
  m[0] = 1;
  m[1] = 1;
  m[2] = self;
  return 0;
}

WEAK int pthread_mutex_trylock(void *mutex) {
  int *m = mutex;
  if (m[0]) {
    if (m[4] == MUTEX_RECURSIVE && m[2] == (int)pthread_self()) {
      m[1]++;
      return 0;
    }
    return EBUSY;
  }
  m[0] = 1;
  m[1] = 1;
  m[2] = (int)pthread_self();
  return 0;
}

WEAK int pthread_mutex_unlock(void *mutex) {
  int *m = mutex;
  if (m[4] == MUTEX_ERRORCHECK || m[4] == MUTEX_RECURSIVE) {
    if (!m[0] || m[2] != (int)pthread_self())
      return EPERM;
    if (m[4] == MUTEX_RECURSIVE && --m[1] > 0)
      return 0;
  }
  m[0] = 0;
  m[1] = 0;
  m[2] = 0;
  return 0;
}

WEAK int pthread_condattr_init(void *attr) { return 0; }
WEAK int pthread_condattr_destroy(void *attr) { return 0; }
WEAK int pthread_cond_init(void *cond, const void *attr) {
  int *c = cond;
  for (int i = 0; i < 12; i++)
    c[i] = 0;
  return 0;
}
WEAK int pthread_cond_destroy(void *cond) { return 0; }

/* Every waiter wakes on a signal (POSIX allows such spurious wake-ups; correct programs
 * wait in a loop). */
WEAK int pthread_cond_signal(void *cond) {
  ((int *)cond)[0]++;
  return 0;
}
WEAK int pthread_cond_broadcast(void *cond) {
  ((int *)cond)[0]++;
  return 0;
}

WEAK int pthread_cond_wait(void *cond, void *mutex) {
  int *c = cond;
  int seen = c[0];
  pthread_mutex_unlock(mutex);
  while (c[0] == seen)
    __symex_wait_while(&c[0], seen);
  return pthread_mutex_lock(mutex);
}

/* no clock runs in the model: the wait times out when no other thread can run */
WEAK int pthread_cond_timedwait(void *cond, void *mutex, const void *abstime) {
  int *c = cond;
  int seen = c[0];
  int timed_out = 0;
  pthread_mutex_unlock(mutex);
  while (c[0] == seen && !timed_out)
    timed_out = __symex_wait_while_timed(&c[0], seen) == ETIMEDOUT;
  pthread_mutex_lock(mutex);
  return timed_out ? ETIMEDOUT : 0;
}

WEAK int pthread_once(int *once, void (*init)(void)) {
  if (*once == 0) {
    *once = 1;
    init();
    *once = 2;
  }
  while (*once == 1)
    __symex_wait_while(once, 1);
  return 0;
}

WEAK int pthread_attr_init(void *attr) { return 0; }
WEAK int pthread_attr_destroy(void *attr) { return 0; }
WEAK int pthread_attr_setdetachstate(void *attr, int state) { return 0; }
WEAK int pthread_attr_setstacksize(void *attr, unsigned long size) { return 0; }

WEAK int sem_init(void *sem, int shared, unsigned value) {
  ((int *)sem)[0] = (int)value;
  return 0;
}
WEAK int sem_destroy(void *sem) { return 0; }
WEAK int sem_post(void *sem) {
  ((int *)sem)[0]++;
  return 0;
}
WEAK int sem_wait(void *sem) {
  int *s = sem;
  while (s[0] == 0)
    __symex_wait_while(&s[0], 0);
  s[0]--;
  return 0;
}
WEAK int sem_trywait(void *sem) {
  int *s = sem;
  if (s[0] == 0) {
    *__errno_location() = EAGAIN;
    return -1;
  }
  s[0]--;
  return 0;
}
WEAK int sem_getvalue(void *sem, int *value) {
  *value = ((int *)sem)[0];
  return 0;
}

/* Read-write locks: { int readers; int writer; ... } at the start of glibc's 56 bytes.
 * Writers do not get preference: a reader gets in whenever no writer holds the lock. */
WEAK int pthread_rwlock_init(void *lock, const void *attr) {
  int *l = lock;
  for (int i = 0; i < 14; i++)
    l[i] = 0;
  return 0;
}
WEAK int pthread_rwlock_destroy(void *lock) { return 0; }
WEAK int pthread_rwlock_rdlock(void *lock) {
  int *l = lock;
  while (l[1])
    __symex_wait_while(&l[1], 1);
  l[0]++;
  return 0;
}
WEAK int pthread_rwlock_tryrdlock(void *lock) {
  int *l = lock;
  if (l[1])
    return EBUSY;
  l[0]++;
  return 0;
}
WEAK int pthread_rwlock_wrlock(void *lock) {
  int *l = lock;
  while (l[1] || l[0]) {
    if (l[1])
      __symex_wait_while(&l[1], 1);
    else
      __symex_wait_while(&l[0], l[0]);
  }
  l[1] = 1;
  return 0;
}
WEAK int pthread_rwlock_trywrlock(void *lock) {
  int *l = lock;
  if (l[1] || l[0])
    return EBUSY;
  l[1] = 1;
  return 0;
}
WEAK int pthread_rwlock_unlock(void *lock) {
  int *l = lock;
  if (l[1])
    l[1] = 0;
  else if (l[0])
    l[0]--;
  else
    return EPERM;
  return 0;
}

/* Barriers: { int count; int arrived; int generation; } at the start of glibc's 32 bytes. */
#define BARRIER_SERIAL_THREAD (-1)
WEAK int pthread_barrier_init(void *barrier, const void *attr, unsigned count) {
  int *b = barrier;
  if (count == 0)
    return EINVAL;
  b[0] = (int)count;
  b[1] = 0;
  b[2] = 0;
  return 0;
}
WEAK int pthread_barrier_destroy(void *barrier) { return 0; }
WEAK int pthread_barrier_wait(void *barrier) {
  int *b = barrier;
  int generation = b[2];
  if (++b[1] == b[0]) {
    b[1] = 0;
    b[2]++;
    return BARRIER_SERIAL_THREAD;
  }
  while (b[2] == generation)
    __symex_wait_while(&b[2], generation);
  return 0;
}

/* Thread names (memcached names each of its threads): checked as Linux checks them (at most
 * 15 bytes and the terminator), not kept; a thread's name reads as empty. */
#define ERANGE 34
WEAK int pthread_setname_np(pthread_t thread, const char *name) {
  unsigned long length = 0;
  while (name[length])
    length++;
  return length > 15 ? ERANGE : 0;
}
WEAK int pthread_getname_np(pthread_t thread, char *name, unsigned long size) {
  if (size < 1)
    return ERANGE;
  name[0] = 0;
  return 0;
}
