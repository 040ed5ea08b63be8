/* Runs "shout WORD" through execvp in a forked child, its output through a pipe, and says
 * what it read (issue 44: execve of a program the run names, --program shout=...). The
 * child's environment is MODE=loud and the PATH this process has (none under symex, so
 * execvp searches the default directories; natively, where the test put shout). */
#include <klee/klee.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int main(void)
{
	char word[3];
	klee_make_symbolic(word, sizeof word, "word");
	word[2] = 0;
	int channel[2];
	if (pipe(channel) != 0)
		return 3;
	pid_t child = fork();
	if (child == 0) {
		static char search[512] = "PATH=";
		const char *path = getenv("PATH");
		char *env[] = {"MODE=loud", path ? strncat(search, path, 500) : NULL, NULL};
		char *args[] = {"shout", word, NULL};
		close(channel[0]);
		dup2(channel[1], 1);
		close(channel[1]);
		environ = env;
		execvp("shout", args);
		_exit(127);
	}
	close(channel[1]);
	char got[64] = {0};
	size_t used = 0;
	ssize_t n;
	while (used < sizeof got - 1 && (n = read(channel[0], got + used, sizeof got - 1 - used)) > 0)
		used += n;
	int status = 0;
	waitpid(child, &status, 0);
	printf("child said [%s], status %d\n", got, WEXITSTATUS(status));
	return strcmp(got, "YES\n") == 0 ? 10 : 0;
}
