/* What joins musl (built into IR by ir/musl.py) to symex: the program's start, its one thread
 * block, and every system call, answered by symex's POSIX model (env/posix.py and
 * env/network.py, the __symex_* handlers, which return -errno as the kernel does).
 *
 * A system call the model does not answer returns -ENOSYS and is reported once per program
 * line (__symex_unmodelled_syscall); the path goes on, as under KLEE's POSIX runtime. */

#define _GNU_SOURCE /* AT_EMPTY_PATH */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <signal.h>
#include <time.h>
#include "libc.h"
#include "pthread_impl.h"
#include "syscall.h"
#include "symex_system_calls.h" /* generated: symex/ir/system_calls.py */

int __symex_waitpid(int pid, int *status, int options);
int __symex_socket(int family, int type, int protocol);
int __symex_socketpair(int family, int type, int protocol, int *fds);
int __symex_pipe(int *fds, int flags);
int __symex_eventfd(unsigned value, int flags);
int __symex_bind(int fd, const void *address, unsigned length);
int __symex_listen(int fd, int backlog);
int __symex_connect(int fd, const void *address, unsigned length);
int __symex_accept(int fd, void *address, unsigned *length, int flags);
int __symex_shutdown(int fd, int how);
int __symex_getsockname(int fd, void *address, unsigned *length);
int __symex_getpeername(int fd, void *address, unsigned *length);
int __symex_setsockopt(int fd, int level, int name, const void *value, unsigned length);
int __symex_getsockopt(int fd, int level, int name, void *value, unsigned *length);
long __symex_recvfrom(int fd, void *buffer, size_t length, int flags, void *address, unsigned *address_length);
long __symex_sendto(int fd, const void *buffer, size_t length, int flags, const void *address,
                    unsigned address_length);
int __symex_fcntl(int fd, int command, long argument);
int __symex_poll(void *fds, unsigned long count, int timeout);
int __symex_select(int nfds, void *readfds, void *writefds, void *exceptfds, void *timeout);
long __symex_unmodelled_syscall(long number);
_Noreturn void _exit(int status);
int getpid(void);
int getppid(void);
extern char **__environ;

/* when every path starts (runtime/libc/unistd.c's time() too): 2020-01-01 00:00:00 UTC */
#define SYMEX_TIME 1577836800L

/* the program's one thread block: errno lives in symex's own library, locale is C */
struct pthread __symex_thread = {
	.self = &__symex_thread,
	.tid = 1,
	.locale = &libc.global_locale,
};

static size_t no_auxv[2];


void __libc_exit_fini(void) {}

int main();

/* What __libc_start_main does before main, without the TLS and auxiliary vector a kernel
 * would have made. */
static void start_up(int argc, char **argv, char **envp)
{
	__environ = envp;
	libc.auxv = no_auxv;
	libc.page_size = 4096;
	if (argc > 0 && argv[0]) {
		char *name = argv[0];
		__progname = __progname_full = name;
		for (; *name; name++)
			if (*name == '/')
				__progname = name + 1;
	}
}

/* The entry symex starts the program at: start-up, then exit(main(...)) so atexit handlers
 * run and stdio's buffers are flushed. */
void __symex_start(int argc, char **argv, char **envp)
{
	start_up(argc, argv, envp);
	exit(main(argc, argv, envp));
}

/* The entry of a program execve runs (symex/env/execve.py): its main is linked into the same
 * module under another name, and the new process image starts here. */
void __symex_exec_start(int (*entry)(int, char **, char **), int argc, char **argv, char **envp)
{
	start_up(argc, argv, envp);
	exit(entry(argc, argv, envp));
}

static long vector_io(long fd, const struct iovec *vector, long count, int writing)
{
	long total = 0;
	for (long i = 0; i < count; i++) {
		if (!vector[i].iov_len)
			continue;
		long done = writing ? __symex_write(fd, vector[i].iov_base, vector[i].iov_len)
		                    : __symex_read(fd, vector[i].iov_base, vector[i].iov_len);
		if (done < 0)
			return total ? total : done;
		total += done;
		if ((size_t)done < vector[i].iov_len)
			break;
	}
	return total;
}

static long fstatat_call(long dirfd, const char *path, struct stat *buf, long flags)
{
	if (flags & AT_EMPTY_PATH && !*path)
		return __symex_fstat(dirfd, buf);
	return __symex_fstatat(dirfd, path, buf, flags & AT_SYMLINK_NOFOLLOW);
}

/* copy_file_range (cat and cp try it before read and write): between two regular files, the
 * model's reads and writes, at the descriptors' offsets or at *off_in and *off_out (those
 * descriptors' offsets then left where they were); anything else is EINVAL, as Linux answers
 * for what is not a regular file, and the caller falls back to read and write itself */
static long copy_range(long in, long long *off_in, long out, long long *off_out, size_t length,
                       unsigned long flags)
{
	struct stat source, target;
	long r = __symex_fstat(in, &source);
	if (r < 0)
		return r;
	r = __symex_fstat(out, &target);
	if (r < 0)
		return r;
	if (flags || !S_ISREG(source.st_mode) || !S_ISREG(target.st_mode))
		return -EINVAL;
	long in_was = off_in ? __symex_lseek(in, 0, SEEK_CUR) : 0;
	long out_was = off_out ? __symex_lseek(out, 0, SEEK_CUR) : 0;
	if (off_in)
		__symex_lseek(in, *off_in, SEEK_SET);
	if (off_out)
		__symex_lseek(out, *off_out, SEEK_SET);
	char buffer[4096];
	long total = 0;
	while (length > 0) {
		long got = __symex_read(in, buffer, length < sizeof buffer ? length : sizeof buffer);
		if (got <= 0) {
			if (!total)
				total = got;
			break;
		}
		long put = __symex_write(out, buffer, got);
		if (put <= 0) {
			if (!total)
				total = put;
			break;
		}
		total += put;
		length -= put;
		if (put < got)
			break;
	}
	if (off_in) {
		__symex_lseek(in, in_was, SEEK_SET);
		if (total > 0)
			*off_in += total;
	}
	if (off_out) {
		__symex_lseek(out, out_was, SEEK_SET);
		if (total > 0)
			*off_out += total;
	}
	return total;
}

/* 0 where the file a call on metadata the model does not keep names exists (the path from
 * dirfd, or the descriptor dirfd itself when path is NULL), else its lookup's error; an
 * unknown flag is EINVAL first, as Linux checks */
static long metadata_target(long dirfd, const char *path, long flags)
{
	struct stat st;
	if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
		return -EINVAL;
	long r = path ? __symex_fstatat(dirfd, path, &st, flags & AT_SYMLINK_NOFOLLOW) : __symex_fstat(dirfd, &st);
	return r < 0 ? r : 0;
}

/* utimensat (touch, cp -p; musl's futimens and utimes come here too): the model keeps no
 * file times (a symbolic file's are its free stat object's, the others' 0), so setting them
 * checks what Linux checks (flags, nanoseconds, the file) and changes nothing */
static long utimens_call(long dirfd, const char *path, const struct timespec *times, long flags)
{
	/* a bad time and a bad flag are both EINVAL, so the order of the checks is Linux's */
	for (int i = 0; times && i < 2; i++) {
		long ns = times[i].tv_nsec;
		if (ns != UTIME_NOW && ns != UTIME_OMIT && (ns < 0 || ns > 999999999))
			return -EINVAL;
	}
	return metadata_target(dirfd, path, flags);
}

/* statfs and fstatfs: every file of the model lies on one ext4 file system of 1 GiB, half
 * of it free (a path or descriptor the model has not: its stat error) */
static long statfs_call(long stat_result, struct statfs *buf)
{
	if (stat_result < 0)
		return stat_result;
	memset(buf, 0, sizeof *buf);
	buf->f_type = 0xEF53; /* EXT4_SUPER_MAGIC */
	buf->f_bsize = buf->f_frsize = 4096;
	buf->f_blocks = 262144;
	buf->f_bfree = buf->f_bavail = 131072;
	buf->f_files = 65536;
	buf->f_ffree = 32768;
	buf->f_namelen = 255;
	buf->f_flags = 0x20; /* ST_VALID: the kernel says f_flags is filled in */
	return 0;
}

static long uname_call(struct utsname *name)
{
	memset(name, 0, sizeof *name);
	strcpy(name->sysname, "Linux");
	strcpy(name->nodename, "symex");
	strcpy(name->release, "6.1.0");
	strcpy(name->version, "#1 SMP");
	strcpy(name->machine, "x86_64");
	return 0;
}

/* The process's credentials (real, effective, saved), kept per path like the resource
 * limits below: root at start, as the model's files assume; setuid and friends change them
 * with the kernel's rules (an effective root may set any id, anyone else only one of the
 * three it has). Supplementary groups are accepted and not kept. */
static unsigned user_ids[3], group_ids[3];

/* getrandom's generator (a global of the program's, so each path draws its own sequence) */
static unsigned long long random_state = 0x5eed;

static long get_ids(const unsigned *ids, unsigned *real, unsigned *effective, unsigned *saved)
{
	*real = ids[0];
	*effective = ids[1];
	*saved = ids[2];
	return 0;
}

static int unchanged(long id)
{
	return id == -1 || (unsigned)id == 0xffffffffu;
}

/* setres[ug]id: -1 leaves an id as it is; without an effective root, each new id must be
 * one the process already has */
static long set_ids(unsigned *ids, long real, long effective, long saved)
{
	long wanted[3] = {real, effective, saved};
	for (int i = 0; i < 3; i++)
		if (!unchanged(wanted[i]) && user_ids[1] != 0 && (unsigned)wanted[i] != ids[0] &&
		    (unsigned)wanted[i] != ids[1] && (unsigned)wanted[i] != ids[2])
			return -EPERM;
	for (int i = 0; i < 3; i++)
		if (!unchanged(wanted[i]))
			ids[i] = (unsigned)wanted[i];
	return 0;
}

/* set[ug]id: all three ids for an effective root, the effective one for anyone else */
static long set_id(unsigned *ids, long id)
{
	return user_ids[1] == 0 ? set_ids(ids, id, id, id) : set_ids(ids, -1, id, -1);
}

/* musl's set*id run their system call on every thread through __synccall; the model's
 * credentials belong to the process, so once is every thread's */
void __synccall(void (*function)(void *), void *context)
{
	function(context);
}

/* Resource limits, kept per path (a global of the program's, so forked paths each have
 * their own): what a fresh Linux process has, except the open-file limit, which is the
 * model's descriptor table (1,024 entries) soft and hard; raising a hard limit past that
 * fails with EPERM, as for a process without CAP_SYS_RESOURCE. */
static struct rlimit resource_limits[RLIM_NLIMITS] = {
	[0 ... RLIM_NLIMITS - 1] = {RLIM_INFINITY, RLIM_INFINITY},
	[RLIMIT_STACK] = {8 << 20, RLIM_INFINITY},
	[RLIMIT_CORE] = {0, RLIM_INFINITY},
	[RLIMIT_NOFILE] = {1024, 1024},
	[RLIMIT_MEMLOCK] = {8 << 20, 8 << 20},
};

static long prlimit_call(long pid, long resource, const struct rlimit *wanted, struct rlimit *old)
{
	if (pid != 0 && pid != getpid())
		return -ESRCH;
	if (resource < 0 || resource >= RLIM_NLIMITS)
		return -EINVAL;
	struct rlimit *limit = &resource_limits[resource];
	if (wanted) {
		if (wanted->rlim_cur > wanted->rlim_max)
			return -EINVAL;
		if (wanted->rlim_max > limit->rlim_max)
			return -EPERM;
	}
	if (old)
		*old = *limit;
	if (wanted)
		*limit = *wanted;
	return 0;
}

long __symex_syscall(long n, long a, long b, long c, long d, long e, long f)
{
	switch (n) {
	SYMEX_KERNEL_CASES /* the table's: read, write, open, stat, mkdir, chdir ... */
	case SYS_copy_file_range:
		return copy_range(a, (long long *)b, c, (long long *)d, e, f);
	case SYS_readv: return vector_io(a, (const struct iovec *)b, c, 0);
	case SYS_writev: return vector_io(a, (const struct iovec *)b, c, 1);
	case SYS_newfstatat: return fstatat_call(a, (const char *)b, (struct stat *)c, d);
	/* faccessat with flags (test -r's euidaccess asks with AT_EACCESS; musl tries this call
	 * first): faccessat's answer, the model's access not depending on ids */
	case SYS_faccessat2:
		if (d & ~(AT_EACCESS | AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
			return -EINVAL;
		return __symex_faccessat(a, (const char *)b, c);
	case SYS_unlinkat: return __symex_unlinkat(a, (const char *)b, c);
	/* fchmodat with flags (lchmod: mkfifo -m): not following a link is fchmodat of what is
	 * not a link, and EOPNOTSUPP for a link (a link's mode is always 0777), as Linux answers;
	 * another flag is EINVAL */
	case SYS_fchmodat2: {
		struct stat st;
		if (d & ~AT_SYMLINK_NOFOLLOW)
			return -EINVAL;
		if (d) {
			long r = __symex_fstatat(a, (const char *)b, &st, AT_SYMLINK_NOFOLLOW);
			if (r < 0)
				return r;
			if (S_ISLNK(st.st_mode))
				return -EOPNOTSUPP;
		}
		return __symex_fchmodat(a, (const char *)b, c);
	}
	case SYS_renameat: return __symex_renameat2(a, (const char *)b, c, (const char *)d, 0);
	case SYS_dup3: return a == b ? -EINVAL : __symex_dup2(a, b);
	case SYS_fcntl: return __symex_fcntl(a, b, c);
	case SYS_ioctl:
		/* isatty() asks for the window size: no descriptor is a terminal in the model */
		if (b == TIOCGWINSZ) {
			long r = __symex_isatty(a);
			return r > 0 ? 0 : r;
		}
		return -ENOTTY;
	case SYS_pipe: return __symex_pipe((int *)a, 0);
	case SYS_pipe2: return __symex_pipe((int *)a, b);
	case SYS_eventfd2: return __symex_eventfd(a, b);
	case SYS_eventfd: return __symex_eventfd(a, 0);
	case SYS_socket: return __symex_socket(a, b, c);
	case SYS_socketpair: return __symex_socketpair(a, b, c, (int *)d);
	case SYS_bind: return __symex_bind(a, (const void *)b, c);
	case SYS_listen: return __symex_listen(a, b);
	case SYS_connect: return __symex_connect(a, (const void *)b, c);
	case SYS_accept: return __symex_accept(a, (void *)b, (unsigned *)c, 0);
	case SYS_accept4: return __symex_accept(a, (void *)b, (unsigned *)c, d);
	case SYS_shutdown: return __symex_shutdown(a, b);
	case SYS_getsockname: return __symex_getsockname(a, (void *)b, (unsigned *)c);
	case SYS_getpeername: return __symex_getpeername(a, (void *)b, (unsigned *)c);
	case SYS_setsockopt: return __symex_setsockopt(a, b, c, (const void *)d, e);
	case SYS_getsockopt: return __symex_getsockopt(a, b, c, (void *)d, (unsigned *)e);
	case SYS_recvfrom: return __symex_recvfrom(a, (void *)b, c, d, (void *)e, (unsigned *)f);
	case SYS_sendto: return __symex_sendto(a, (const void *)b, c, d, (const void *)e, f);
	case SYS_poll: return __symex_poll((void *)a, b, c);
	case SYS_select: return __symex_select(a, (void *)b, (void *)c, (void *)d, (void *)e);
	case SYS_wait4: return __symex_waitpid(a, (int *)b, c);
	case SYS_exit:
	case SYS_exit_group: _exit(a);
	case SYS_getpid: return getpid();
	case SYS_getppid: return getppid();
	case SYS_gettid: return 1;
	case SYS_set_tid_address: return 1;
	case SYS_getuid: return user_ids[0];
	case SYS_geteuid: return user_ids[1];
	case SYS_getgid: return group_ids[0];
	case SYS_getegid: return group_ids[1];
	case SYS_getresuid: return get_ids(user_ids, (unsigned *)a, (unsigned *)b, (unsigned *)c);
	case SYS_getresgid: return get_ids(group_ids, (unsigned *)a, (unsigned *)b, (unsigned *)c);
	case SYS_setuid: return set_id(user_ids, a);
	case SYS_setgid: return set_id(group_ids, a);
	case SYS_setreuid: return set_ids(user_ids, a, b, -1);
	case SYS_setregid: return set_ids(group_ids, a, b, -1);
	case SYS_setresuid: return set_ids(user_ids, a, b, c);
	case SYS_setresgid: return set_ids(group_ids, a, b, c);
	case SYS_setgroups: return user_ids[1] ? -EPERM : 0;
	/* one processor, CPU 0 (nproc; musl's sysconf counts the mask's bits); the kernel's
	 * mask is 8 bytes, and a shorter or unaligned buffer EINVAL */
	case SYS_sched_getaffinity:
		if (a != 0 && a != getpid())
			return -ESRCH;
		if (b < 8 || b & 7)
			return -EINVAL;
		memset((void *)c, 0, 8);
		*(unsigned char *)c = 1;
		return 8;
	/* no supplementary groups: setgroups from root is accepted and keeps none */
	case SYS_getgroups: return a < 0 ? -EINVAL : 0;
	/* getrandom (mktemp's names, hash seeds): the same bytes on every run, so that runs
	 * repeat (a native run's differ, as two native runs' do) */
	case SYS_getrandom:
		if (c & ~(GRND_NONBLOCK | GRND_RANDOM | GRND_INSECURE))
			return -EINVAL;
		for (long i = 0; i < b; i++) {
			random_state = random_state * 6364136223846793005ULL + 1442695040888963407ULL;
			((unsigned char *)a)[i] = random_state >> 56;
		}
		return b;
	case SYS_umask: return 022;
	case SYS_uname: return uname_call((struct utsname *)a);
	case SYS_statfs: {
		struct stat st;
		return statfs_call(__symex_fstatat(AT_FDCWD, (const char *)a, &st, 0), (struct statfs *)b);
	}
	case SYS_fstatfs: {
		struct stat st;
		return statfs_call(__symex_fstat(a, &st), (struct statfs *)b);
	}
	case SYS_utimensat: return utimens_call(a, (const char *)b, (const struct timespec *)c, d);
	/* fchown, chown, lchown, fchownat (cp -a and -p, install -o): the model keeps no owners
	 * (every file is root's, and the process is root, which may give a file to anyone), so
	 * the call checks what Linux checks and changes nothing (ENOSYS failed cp -a) */
	case SYS_fchown: return metadata_target(a, 0, 0);
	case SYS_chown: return metadata_target(AT_FDCWD, (const char *)a, 0);
	case SYS_lchown: return metadata_target(AT_FDCWD, (const char *)a, AT_SYMLINK_NOFOLLOW);
	case SYS_fchownat: return metadata_target(a, (const char *)b, e);
	/* the clocks a process may read tick in nanoseconds, the coarse ones at 250 Hz (gnulib's
	 * gettime_res asks); the alarm clocks need an RTC device: none, as in a VM */
	case SYS_clock_getres:
		if (a < 0 || a > CLOCK_TAI || a == 8 || a == 9 || a == 10)
			return -EINVAL;
		if (b) {
			((struct timespec *)b)->tv_sec = 0;
			((struct timespec *)b)->tv_nsec = a == CLOCK_REALTIME_COARSE || a == CLOCK_MONOTONIC_COARSE
			                                  ? 4000000 : 1;
		}
		return 0;
	/* every clock starts at SYMEX_TIME and ticks a microsecond at each reading after the
	 * first: a path's readings differ as they do natively (musl's __randname draws the names
	 * of mkstemp's and mkdtemp's files from them: a second temporary file gets a second name),
	 * and every run of the path reads the same times */
	case SYS_clock_gettime: {
		static long readings;
		struct timespec *now = (struct timespec *)b;
		long elapsed = readings++ * 1000L;
		now->tv_sec = SYMEX_TIME + elapsed / 1000000000L;
		now->tv_nsec = elapsed % 1000000000L;
		return 0;
	}
	case SYS_rt_sigaction: case SYS_rt_sigprocmask: return 0; /* no signal is ever delivered */
	case SYS_prlimit64: return prlimit_call(a, b, (const struct rlimit *)c, (struct rlimit *)d);
	case SYS_getrlimit: return prlimit_call(0, a, 0, (struct rlimit *)b);
	case SYS_setrlimit: return prlimit_call(0, a, (const struct rlimit *)b, 0);
	case SYS_brk: return 0;
	case SYS_mmap: return -ENOMEM;
	case SYS_munmap: case SYS_mprotect: case SYS_madvise: return 0;
	/* a kernel without statx: musl's statx() then answers from fstatat, as symex wants */
	case SYS_statx: return -ENOSYS;
	/* posix_fadvise (cat and the digest tools advise sequential reads) is advice only; what
	 * Linux checks: a closed descriptor is EBADF, a pipe ESPIPE, a negative length or an
	 * unknown advice EINVAL */
	case SYS_fadvise64: {
		struct stat st;
		long r = __symex_fstat(a, &st);
		if (r < 0)
			return r;
		if (S_ISFIFO(st.st_mode))
			return -ESPIPE;
		return c < 0 || d < 0 || d > POSIX_FADV_NOREUSE ? -EINVAL : 0;
	}
	/* every page of the program is resident (gnulib's stack-overflow check asks) */
	case SYS_mincore:
		if (a & 4095)
			return -EINVAL;
		memset((void *)c, 1, (b + 4095) / 4096);
		return 0;
	/* no alternate signal stack, and setting one is accepted (gnulib's c-stack): no
	 * signal is ever delivered */
	case SYS_sigaltstack:
		if (b) {
			stack_t *old = (stack_t *)b;
			old->ss_sp = 0;
			old->ss_size = 0;
			old->ss_flags = SS_DISABLE;
		}
		return 0;
	}
	return __symex_unmodelled_syscall(n);
}

/* musl's code reads errno through this hidden alias of __errno_location, which is symex's
 * (runtime/libc/errno.c: the thread scheduler saves and restores errno's variable) */
int *__errno_location(void);
hidden int *___errno_location(void) { return __errno_location(); }


/* syscall(2). musl's reads six arguments whatever the caller passed (on x86-64 the rest are
 * registers, so nothing happens natively; under symex it reads past the end of the call's
 * variadic arguments: coreutils' mv passes renameat2 five). Read as many as the call takes;
 * six for a call not listed. */
static int syscall_arity(long n)
{
	switch (n) {
	case SYS_getpid: case SYS_gettid: case SYS_getuid: case SYS_geteuid: case SYS_getgid:
	case SYS_getegid: case SYS_getppid: case SYS_sched_yield:
		return 0;
	case SYS_close: case SYS_exit: case SYS_exit_group: case SYS_dup: case SYS_umask:
		return 1;
	case SYS_fstat: case SYS_stat: case SYS_lstat: case SYS_access: case SYS_dup2:
	case SYS_clock_gettime: case SYS_getcwd: case SYS_pipe2:
		return 2;
	case SYS_read: case SYS_write: case SYS_open: case SYS_lseek: case SYS_ioctl: case SYS_fcntl:
	case SYS_getrandom: case SYS_readv: case SYS_writev: case SYS_dup3: case SYS_getdents64:
		return 3;
	case SYS_openat: case SYS_renameat: case SYS_newfstatat: case SYS_faccessat: case SYS_wait4:
		return 4;
	case SYS_renameat2: case SYS_statx:
		return 5;
	default:
		return 6;
	}
}

#undef syscall  /* musl's internal syscall.h makes it a macro */
long syscall(long n, ...)
{
	long x[6] = {0, 0, 0, 0, 0, 0};
	int count = syscall_arity(n);
	va_list ap;
	va_start(ap, n);
	for (int i = 0; i < count; i++)
		x[i] = va_arg(ap, long);
	va_end(ap);
	return __syscall_ret(__symex_syscall(n, x[0], x[1], x[2], x[3], x[4], x[5]));
}
