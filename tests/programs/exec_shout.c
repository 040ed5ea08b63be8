/* The program exec_parent.c runs: YES when its argument is "y", NO otherwise, exit 4; exit 1
 * unless MODE is in its environment and it has exactly one argument. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	if (!getenv("MODE") || argc != 2)
		return 1;
	puts(strcmp(argv[1], "y") == 0 ? "YES" : "NO");
	return 4;
}
