/* Walks a directory tree the program makes, choosing by a symbolic byte which entry to
 * descend into and what to remove (tests/test_directories.py). Prints what it sees, so a
 * native replay can be compared line by line. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <klee/klee.h>

static int count_entries(const char *path) {
    DIR *dir = opendir(path);
    if (!dir)
        return -1;
    int n = 0;
    struct dirent *entry;
    while ((entry = readdir(dir)))
        if (strcmp(entry->d_name, ".") && strcmp(entry->d_name, ".."))
            n++;
    closedir(dir);
    return n;
}

int main(void) {
    char pick;
    klee_make_symbolic(&pick, 1, "pick");
    if (mkdir("tree", 0755) || mkdir("tree/a", 0755) || mkdir("tree/b", 0755))
        return 10;
    if (mkdir("tree/a", 0755) == 0)
        return 11;                     /* exists: EEXIST */
    int fd = open("tree/a/file", O_WRONLY | O_CREAT, 0644);
    if (fd < 0 || write(fd, "data", 4) != 4 || close(fd))
        return 12;
    printf("tree: %d, a: %d, b: %d\n", count_entries("tree"), count_entries("tree/a"),
           count_entries("tree/b"));
    const char *into = "tree/b";
    if (pick == 'a')
        into = "tree/a";
    if (chdir(into))
        return 13;
    struct stat st;
    int here = stat("file", &st) == 0 && S_ISREG(st.st_mode);
    int up = stat("../a", &st) == 0 && S_ISDIR(st.st_mode);
    printf("in %c: file %d, ../a %d\n", pick == 'a' ? 'a' : 'b', here, up);
    if (chdir("../.."))
        return 14;
    if (rmdir("tree/a") == 0)
        return 15;                     /* not empty */
    if (pick == 'r') {
        unlink("tree/a/file");
        printf("removed a: %d\n", rmdir("tree/a") == 0 && count_entries("tree") == 1);
    }
    return 0;
}
