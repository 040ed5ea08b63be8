/* errno for programs under symex: glibc's headers (clang here, and zig's bundled ones for
 * x86_64-linux-gnu) read errno through __errno_location(). Memory is per path, so one
 * variable serves every path; each thread has its own errno, because the scheduler saves
 * and restores this variable (named in core/threads/scheduling.py) when it switches threads. */

int __symex_errno_value;

__attribute__((weak)) int *__errno_location(void) { return &__symex_errno_value; }
