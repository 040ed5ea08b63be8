/* symex's replacement for musl's arch/x86_64/pthread_arch.h: no thread-pointer register;
 * the program's one thread block is glue.c's __symex_thread. */
extern struct __pthread __symex_thread; /* pthread_impl.h renames struct pthread so */
static inline uintptr_t __get_tp(void) { return (uintptr_t)&__symex_thread; }

#define MC_PC gregs[REG_RIP]
