/* Signal dispositions and masks for programs under symex. No signal is ever delivered in
 * the model (there is no kill, no clock for alarm, and a write to a closed pipe or socket
 * fails with EPIPE instead of raising SIGPIPE), so installing a handler or a mask is
 * accepted and changes nothing: a server's signal(SIGPIPE, SIG_IGN) runs as it does
 * natively. What was installed is not remembered: the previous disposition reads as the
 * default. Every definition is weak. */

#define WEAK __attribute__((weak))
#define SIGNALS 65
#define EINVAL 22
#define SIGSET_WORDS 16 /* glibc's sigset_t: 1024 bits */
#define SIGACTION_SIZE 152 /* glibc's struct sigaction on x86-64 */

typedef void (*handler_t)(int);
int *__errno_location(void);

static int bad_signal(int sig) {
  if (sig <= 0 || sig >= SIGNALS) {
    *__errno_location() = EINVAL;
    return 1;
  }
  return 0;
}

WEAK handler_t signal(int sig, handler_t handler) {
  if (bad_signal(sig))
    return (handler_t)-1; /* SIG_ERR */
  return (handler_t)0;  /* SIG_DFL */
}

WEAK handler_t sigset(int sig, handler_t handler) { return signal(sig, handler); }
WEAK handler_t bsd_signal(int sig, handler_t handler) { return signal(sig, handler); }

WEAK int sigaction(int sig, const void *action, void *old) {
  if (bad_signal(sig))
    return -1;
  if (old) {
    char *o = old;
    for (int i = 0; i < SIGACTION_SIZE; i++)
      o[i] = 0;
  }
  return 0;
}

WEAK int sigemptyset(void *set) {
  unsigned long *s = set;
  for (int i = 0; i < SIGSET_WORDS; i++)
    s[i] = 0;
  return 0;
}
WEAK int sigfillset(void *set) {
  unsigned long *s = set;
  for (int i = 0; i < SIGSET_WORDS; i++)
    s[i] = 0;
  s[0] = ~0UL; /* signals 1..64: bit sig - 1 */
  return 0;
}
WEAK int sigaddset(void *set, int sig) {
  if (bad_signal(sig))
    return -1;
  ((unsigned long *)set)[(sig - 1) / 64] |= 1UL << ((sig - 1) % 64);
  return 0;
}
WEAK int sigdelset(void *set, int sig) {
  if (bad_signal(sig))
    return -1;
  ((unsigned long *)set)[(sig - 1) / 64] &= ~(1UL << ((sig - 1) % 64));
  return 0;
}
WEAK int sigismember(const void *set, int sig) {
  if (bad_signal(sig))
    return -1;
  return (((const unsigned long *)set)[(sig - 1) / 64] >> ((sig - 1) % 64)) & 1;
}

static int no_mask(void *old) {
  if (old)
    sigemptyset(old);
  return 0;
}
WEAK int sigprocmask(int how, const void *set, void *old) { return no_mask(old); }
WEAK int pthread_sigmask(int how, const void *set, void *old) { return no_mask(old); }

/* no clock runs in the model: an alarm never goes off */
WEAK unsigned alarm(unsigned seconds) { return 0; }
