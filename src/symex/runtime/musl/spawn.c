/* posix_spawn as fork and execve, so system(), popen() and posix_spawnp() run the programs
 * a run names (--program, symex/env/execve.py). musl's own clones a child that shares the
 * parent's memory (CLONE_VM | CLONE_VFORK), which symex does not model; a forked child that
 * applies the file actions and then executes the program is what posix_spawn means.
 * Unlike musl's, an exec that fails is not reported to the caller (that takes a pipe closed
 * on exec, and FD_CLOEXEC is not modelled): the child exits with status 127, as a shell
 * reports a command it cannot run. Signal masks and defaults are not modelled either. */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <unistd.h>
#include "fdop.h"

static void apply(const struct fdop *op)
{
	int fd;
	switch (op->cmd) {
	case FDOP_CLOSE:
		close(op->fd);
		return;
	case FDOP_DUP2:
		if (op->srcfd != op->fd && dup2(op->srcfd, op->fd) < 0)
			_exit(127);
		return;
	case FDOP_OPEN:
		fd = open(op->path, op->oflag, op->mode);
		if (fd < 0)
			_exit(127);
		if (fd != op->fd) {
			if (dup2(fd, op->fd) < 0)
				_exit(127);
			close(fd);
		}
		return;
	case FDOP_CHDIR:
		if (chdir(op->path))
			_exit(127);
		return;
	case FDOP_FCHDIR:
		if (fchdir(op->fd))
			_exit(127);
		return;
	}
}

int posix_spawn(pid_t *restrict res, const char *restrict path,
	const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *restrict attr,
	char *const argv[restrict], char *const envp[restrict])
{
	pid_t pid = fork();
	if (pid < 0)
		return errno;
	if (pid) {
		if (res)
			*res = pid;
		return 0;
	}
	int flags = attr ? attr->__flags : 0;
	if ((flags & POSIX_SPAWN_SETSID) && setsid() < 0)
		_exit(127);
	if ((flags & POSIX_SPAWN_SETPGROUP) && setpgid(0, attr->__pgrp))
		_exit(127);
	if (fa && fa->__actions) {
		const struct fdop *op;
		/* the actions were added at the head of the list: apply them oldest first */
		for (op = fa->__actions; op->next; op = op->next);
		for (; op; op = op->prev)
			apply(op);
	}
	int (*exec)(const char *, char *const *, char *const *) =
		attr && attr->__fn ? (int (*)(const char *, char *const *, char *const *))attr->__fn : execve;
	exec(path, argv, envp);
	_exit(127);
}
