/* symex's replacement for musl's arch/x86_64/syscall_arch.h: a system call is a call into
 * the model (glue.c's __symex_syscall), not inline assembly. No vDSO: clock_gettime makes
 * the system call, which the model answers. */
#define __SYSCALL_LL_E(x) (x)
#define __SYSCALL_LL_O(x) (x)

long __symex_syscall(long, long, long, long, long, long, long);

static __inline long __syscall0(long n) { return __symex_syscall(n, 0, 0, 0, 0, 0, 0); }
static __inline long __syscall1(long n, long a) { return __symex_syscall(n, a, 0, 0, 0, 0, 0); }
static __inline long __syscall2(long n, long a, long b) { return __symex_syscall(n, a, b, 0, 0, 0, 0); }
static __inline long __syscall3(long n, long a, long b, long c) { return __symex_syscall(n, a, b, c, 0, 0, 0); }
static __inline long __syscall4(long n, long a, long b, long c, long d)
{
	return __symex_syscall(n, a, b, c, d, 0, 0);
}
static __inline long __syscall5(long n, long a, long b, long c, long d, long e)
{
	return __symex_syscall(n, a, b, c, d, e, 0);
}
static __inline long __syscall6(long n, long a, long b, long c, long d, long e, long f)
{
	return __symex_syscall(n, a, b, c, d, e, f);
}

#define IPC_64 0
