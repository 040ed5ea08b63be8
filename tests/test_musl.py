"""Programs linked with musl (libc="musl", `symex run --libc musl`): a real C library in IR,
with the environment modelled at its system calls. Each program is also built natively
against musl (zig cc -target x86_64-linux-musl: a static executable) and every test symex
generates is run on it: the same exit code and the same standard output.

The first test of a session builds musl's IR (about a minute on two cores; cached after).
musl's source comes from Debian's archive on first use: without the network, the tests skip."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import symex
from symex.core.shortfalls import ShortfallKind
from symex.errors import LoadError
from symex.ir.musl import CACHE_VARIABLE, musl_cache_root, musl_ir_files
from c_programs import COMPILERS

ROOT = Path(__file__).parent
REALISTIC = ROOT / "programs" / "libc" / "realistic.c"
ARGS = ["-u", "--pattern", "^H[a-z]+$", "one", "two"]


@pytest.fixture(scope="module", autouse=True)
def musl_built() -> None:
    try:
        musl_ir_files()
    except LoadError as exc:
        if "could not download" in str(exc):
            pytest.skip(f"musl's source is not available here: {exc}")
        raise


def native_build(source: Path, directory: Path) -> Path:
    executable = directory / source.stem
    proc = subprocess.run([sys.executable, "-m", "ziglang", "cc", "-target", "x86_64-linux-musl", "-O0",
                           str(source), "-o", str(executable)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return executable


def _beside_native(program: str, tmp_path: Path) -> tuple[symex.Result, bytes]:
    """tests/programs/PROGRAM explored with musl (one path) and what its native build prints,
    run in an empty directory of ``tmp_path`` (the files it makes land there)."""
    source = ROOT / "programs" / program
    result = symex.explore(symex.compile(source, libc="musl"))
    assert len(result.tests) == 1
    empty = tmp_path / "run"
    empty.mkdir()
    native = subprocess.run([str(native_build(source, tmp_path))], capture_output=True, cwd=empty, timeout=60)
    return result, native.stdout


def test_a_program_using_the_c_library_widely_matches_its_native_build(tmp_path: Path) -> None:
    program = symex.compile(REALISTIC, libc="musl")
    result = symex.explore(program, args=ARGS, sym_stdin=2)
    assert result.paths.partial == 0 and result.paths.errors == 0
    # the five modes (digit, letter, '.', '-', other) and both sides of the "other" mode's check
    assert result.paths.completed >= 6
    outputs = {test.stdout for test in result.tests}
    assert any(b"sorted: -7,0,3,19,19,42 (found 19, |-7| = 7)" in out for out in outputs)
    assert any(b"time: 1971-01-01 00:00:00 Fri Jan 001" in out for out in outputs)
    assert any(b"opendir: No such file or directory" in out for out in outputs)
    assert any(b"numbers: [ 0.25|12  |ff|ok] (16 chars)" in out for out in outputs)
    assert any(b"text: 4 words, first 'alpha', span 5/5, 'libx.a' '/usr/local/lib'" in out for out in outputs)
    assert any(b"bytes: 0101234789 9; scanned 3: 2026-11-24" in out for out in outputs)
    native = native_build(REALISTIC, tmp_path)
    for test in result.tests:
        run = subprocess.run([str(native), *ARGS], input=test.objects["stdin"], capture_output=True, timeout=60)
        assert (run.returncode, run.stdout) == (test.exit_code, test.stdout), test.objects["stdin"]


def test_output_is_flushed_at_exit_and_stderr_is_separate(tmp_path: Path) -> None:
    source = tmp_path / "streams.c"
    source.write_text('#include <stdio.h>\n#include <stdlib.h>\n'
                      'int main(void) { printf("buffered"); fputs("to stderr\\n", stderr);\n'
                      '  if (getchar() == \'x\') exit(4); printf(" and more\\n"); return 5; }\n')
    result = symex.explore(symex.compile(source, libc="musl"), sym_stdin=1)
    ends = sorted((test.exit_code, test.stdout, test.stderr) for test in result.tests)
    # stdout is fully buffered (not a terminal): everything is written at exit, after stderr
    assert ends == [(4, b"buffered", b"to stderr\n"), (5, b"buffered and more\n", b"to stderr\n")]


def test_unmodelled_system_calls_return_enosys_and_are_reported(tmp_path: Path) -> None:
    source = tmp_path / "calls.c"
    source.write_text('#include <errno.h>\n#include <stdio.h>\n#include <sys/file.h>\n'
                      'int main(void) {\n'
                      '  int r = flock(0, LOCK_EX);\n'
                      '  printf("%d %d\\n", r, errno == ENOSYS);\n'
                      '  return 0;\n}\n')
    result = symex.explore(symex.compile(source, libc="musl"))
    assert [test.stdout for test in result.tests] == [b"-1 1\n"]
    assert [(s.kind, s.what, s.site) for s in result.shortfalls] == [
        (ShortfallKind.UNMODELLED_SYSCALL, "flock", "calls.c:5")]


def test_symbolic_numbers_are_formatted_by_forking(tmp_path: Path) -> None:
    """musl's printf formats a symbolic number with the program's own arithmetic: each
    path's digits come from its inputs, and the test replays natively."""
    source = tmp_path / "digits.c"
    source.write_text('#include <stdio.h>\n#include <unistd.h>\n'
                      'int main(void) { unsigned char c; if (read(0, &c, 1) != 1) return 1;\n'
                      '  if (c < 100) return 2;\n  printf("[%u]\\n", c % 7); return 0; }\n')
    result = symex.explore(symex.compile(source, libc="musl"), sym_stdin=1)
    native = native_build(source, tmp_path)
    for test in result.tests:
        run = subprocess.run([str(native)], input=test.objects["stdin"], capture_output=True, timeout=60)
        assert (run.returncode, run.stdout) == (test.exit_code, test.stdout)
    assert {test.exit_code for test in result.tests} == {0, 2}


def test_the_command_line_takes_libc_musl(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "symex.cli", "run", "--libc", "musl", "--output-dir", "out",
                           str(REALISTIC), *ARGS, "--sym-stdin", "2"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "0 errors, 0 partial" in proc.stdout
    bad = subprocess.run([sys.executable, "-m", "symex.cli", "run", "--libc", "glibc", str(REALISTIC)],
                         cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "invalid choice: 'glibc'" in bad.stderr


def test_symex_cc_builds_for_musl_and_the_build_runs_with_musl(tmp_path: Path) -> None:
    """SYMEX_LIBC=musl symex cc: the native executable is a static musl program (zig's musl),
    the bitcode is compiled against musl's headers, and symex run links musl by itself."""
    env = {**os.environ, "SYMEX_LIBC": "musl"}
    build = subprocess.run([sys.executable, "-m", "symex.cli", "cc", "-O2", str(REALISTIC), "-o", "realistic"],
                           cwd=tmp_path, capture_output=True, text=True, timeout=600, env=env)
    assert build.returncode == 0, build.stderr
    native = tmp_path / "realistic"
    program = symex.load(native)  # no libc given: the IR names musl
    assert "__symex_start" in program.functions and "printf_core" in program.functions
    result = symex.explore(program, args=ARGS, sym_stdin=2)
    assert result.paths.partial == 0 and result.paths.errors == 0
    for test in result.tests:
        run = subprocess.run([str(native), *ARGS], input=test.objects["stdin"], capture_output=True, timeout=60)
        assert (run.returncode, run.stdout) == (test.exit_code, test.stdout), test.objects["stdin"]


@pytest.mark.parametrize("libc", ["symex", "musl"])
def test_the_allocators_other_entry_points(tmp_path: Path, libc: str) -> None:
    """posix_memalign, aligned_alloc and reallocarray over symex's malloc, with both libraries
    (coreutils calls them; the expected line is what glibc and musl print natively)."""
    source = tmp_path / "aligned.c"
    source.write_text('#include <errno.h>\n#include <stdio.h>\n#include <stdlib.h>\n'
                      'int main(void) { void *p; int r = posix_memalign(&p, 64, 10);\n'
                      '  int bad = posix_memalign(&p, 3, 10);\n'
                      '  int *a = reallocarray(NULL, 4, sizeof(int)); a[3] = 7;\n'
                      '  void *big = reallocarray(NULL, (size_t)-1 / 2 + 1, 2);\n'
                      '  void *q = aligned_alloc(4096, 100);\n'
                      '  printf("%d %d %d %d %d %d\\n", r, bad == EINVAL, (unsigned long)p % 64 == 0, a[3],\n'
                      '         big == NULL && errno == ENOMEM, (unsigned long)q % 4096 == 0);\n'
                      '  free(a); free(p); free(q); return 0; }\n')
    result = symex.explore(symex.compile(source, libc=libc))
    assert [(t.stdout, t.error) for t in result.tests] == [(b"0 1 1 7 1 1\n", None)]


@pytest.mark.parametrize("libc", ["symex", "musl"])
def test_klee_h_before_assert_h_compiles_and_asserts(tmp_path: Path, libc: str) -> None:
    """KLEE's tutorial programs include <klee/klee.h> before <assert.h>: klee.h's declaration
    of __assert_fail must be the C library's own (musl's line is an int, glibc's unsigned:
    with musl such a program did not compile), and both asserts report a failure."""
    source = tmp_path / "sorted.c"
    source.write_text('#include "klee/klee.h"\n#include <assert.h>\n'
                      'int main(void) { int a[2]; klee_make_symbolic(a, sizeof a, "a");\n'
                      '  if (a[0] > 5) klee_assert(a[1] != 7);\n'
                      '  assert(a[0] != 3);\n  return 0; }\n')
    result = symex.explore(symex.compile(source, libc=libc))
    failed = sorted((t.error.kind.value, t.error.location) for t in result.tests if t.error is not None)
    assert failed == [("assert", (str(source), 4)), ("assert", (str(source), 5))]


def test_statx_answers_from_the_model(tmp_path: Path) -> None:
    """statx, which programs configured against a newer musl call (gnulib's ls does), reports
    what stat does: here the size of an 8-byte symbolic file and that it is a regular file."""
    source = tmp_path / "statx.c"
    source.write_text('#include <fcntl.h>\n#include <stdint.h>\n#include <stdio.h>\n#include <sys/stat.h>\n'
                      'struct kernel_statx { uint32_t mask, blksize; uint64_t attributes; uint32_t nlink, uid, gid;\n'
                      '  uint16_t mode, pad0; uint64_t ino, size, blocks, attributes_mask; uint64_t times[8];\n'
                      '  uint32_t rdev_major, rdev_minor, dev_major, dev_minor; uint64_t pad1[14]; };\n'
                      'int statx(int, const char *, int, unsigned, struct kernel_statx *);\n'
                      'int main(void) { struct kernel_statx st;\n'
                      '  int r = statx(AT_FDCWD, "A", 0, 0x7ff, &st);\n'
                      '  int missing = statx(AT_FDCWD, "nope", 0, 0x7ff, &st);\n'
                      '  printf("%d %llu %d %d\\n", r, (unsigned long long)st.size, S_ISREG(st.mode), missing);\n'
                      '  return 0; }\n')
    result = symex.explore(symex.compile(source, libc="musl"), sym_files=(1, 8))
    assert {t.stdout for t in result.tests} == {b"0 8 1 -1\n"}


def test_cancellation_points_run_in_a_program_with_one_thread(tmp_path: Path) -> None:
    """pthread_testcancel (sbase's ed reaches it) returns: no thread is ever cancelled."""
    source = tmp_path / "cancel.c"
    source.write_text('#include <pthread.h>\n#include <stdio.h>\n'
                      'int main(void) { pthread_testcancel(); puts("still here"); return 0; }\n')
    result = symex.explore(symex.compile(source, libc="musl"))
    (test,) = result.tests
    assert test.stdout == b"still here\n" and test.exit_code == 0


def test_syscall_reads_only_the_arguments_the_call_takes(tmp_path: Path) -> None:
    """musl's syscall() reads six variadic arguments whatever the caller passed: under symex
    that read past the caller's five for renameat2 (gnulib's renameatu, in coreutils' mv) and
    was reported as an out-of-bounds read that never happens natively."""
    source = tmp_path / "sys.c"
    source.write_text('#define _GNU_SOURCE\n#include <fcntl.h>\n#include <stdio.h>\n'
                      '#include <sys/syscall.h>\n#include <unistd.h>\n'
                      'int main(void) {\n'
                      '  long r = syscall(SYS_renameat2, AT_FDCWD, "a", AT_FDCWD, "b", 0);\n'
                      '  printf("%d %d\\n", (int)r, syscall(SYS_getpid) > 0);\n'
                      '  return 0; }\n')
    result = symex.explore(symex.compile(source, libc="musl"))
    (test,) = result.tests
    assert result.paths.errors == 0
    # renameat2 is not modelled: ENOSYS, -1; getpid is
    assert test.stdout == b"-1 1\n"


def test_resource_limits_are_kept_per_path(tmp_path: Path) -> None:
    """getrlimit/setrlimit (memcached sets its open-file limit to its connection count before
    anything else, and exits when either call fails): the open-file limit is the model's
    descriptor table, 1024 soft and hard; lowering it is seen by the next getrlimit, raising
    the hard limit past it fails with EPERM, a soft limit above the hard one with EINVAL."""
    source = tmp_path / "limits.c"
    source.write_text('#include <errno.h>\n#include <stdio.h>\n#include <sys/resource.h>\n'
                      'int main(void) { struct rlimit r;\n'
                      '  if (getrlimit(RLIMIT_NOFILE, &r)) return 1;\n'
                      '  printf("%llu %llu\\n", (unsigned long long)r.rlim_cur, (unsigned long long)r.rlim_max);\n'
                      '  r.rlim_cur = r.rlim_max = 512;\n'
                      '  printf("%d ", setrlimit(RLIMIT_NOFILE, &r));\n'
                      '  getrlimit(RLIMIT_NOFILE, &r);\n'
                      '  printf("%llu %llu\\n", (unsigned long long)r.rlim_cur, (unsigned long long)r.rlim_max);\n'
                      '  r.rlim_max = 4096;\n'
                      '  printf("%d %d ", setrlimit(RLIMIT_NOFILE, &r), errno == EPERM);\n'
                      '  r.rlim_cur = 600; r.rlim_max = 512;\n'
                      '  printf("%d %d\\n", setrlimit(RLIMIT_NOFILE, &r), errno == EINVAL);\n'
                      '  getrlimit(RLIMIT_CORE, &r);\n'
                      '  printf("%d\\n", r.rlim_cur == 0 && r.rlim_max == RLIM_INFINITY);\n'
                      '  return 0; }\n')
    result = symex.explore(symex.compile(source, libc="musl"))
    (test,) = result.tests
    assert test.exit_code == 0
    assert test.stdout == b"1024 1024\n0 512 512\n-1 1 -1 1\n1\n"


def test_credentials_change_by_the_kernels_rules(tmp_path: Path) -> None:
    """setgid/setuid (memcached's -u drops root this way, through musl's __synccall): a root
    process may take any ids; once it is user 1000 it may not take root back (EPERM), and
    getuid/getgid report what was set."""
    source = tmp_path / "ids.c"
    source.write_text('#include <errno.h>\n#include <grp.h>\n#include <stdio.h>\n#include <unistd.h>\n'
                      'int main(void) {\n'
                      '  printf("%d %d ", (int)getuid(), (int)getgid());\n'
                      '  printf("%d %d %d ", setgroups(0, 0), setgid(100), setuid(1000));\n'
                      '  printf("%d %d %d ", (int)getuid(), (int)geteuid(), (int)getgid());\n'
                      '  printf("%d %d %d\\n", setuid(0), errno == EPERM, setuid(1000));\n'
                      '  return 0; }\n')
    result = symex.explore(symex.compile(source, libc="musl"))
    (test,) = result.tests
    assert test.exit_code == 0
    assert test.stdout == b"0 0 0 0 0 1000 1000 100 -1 1 0\n"


def test_an_eventfd_counts_and_wakes_a_blocked_thread(tmp_path: Path) -> None:
    """eventfd (memcached's main thread wakes each worker through one): writes add, a read
    takes the whole count (1 with EFD_SEMAPHORE) and blocks a thread while it is 0; poll
    sees it readable only then; a non-blocking read of 0 is EAGAIN; reads and writes of
    fewer than 8 bytes are EINVAL. The same output natively."""
    source = tmp_path / "eventfd.c"
    source.write_text('#include <errno.h>\n#include <poll.h>\n#include <pthread.h>\n#include <stdint.h>\n'
                      '#include <stdio.h>\n#include <sys/eventfd.h>\n#include <unistd.h>\n'
                      'static int efd;\n'
                      'static void *worker(void *arg) { uint64_t v = 0;\n'
                      '  if (read(efd, &v, 8) != 8) return 0;\n'
                      '  printf("worker %llu\\n", (unsigned long long)v); return 0; }\n'
                      'static int events(int fd) { struct pollfd p = {fd, POLLIN | POLLOUT, 0};\n'
                      '  poll(&p, 1, 0); return p.revents; }\n'
                      'int main(void) { pthread_t t; uint64_t v, one = 1, two = 2;\n'
                      '  efd = eventfd(0, EFD_CLOEXEC);\n'
                      '  printf("%d ", events(efd));\n'
                      '  write(efd, &one, 8); write(efd, &two, 8);\n'
                      '  printf("%d\\n", events(efd));\n'
                      '  pthread_create(&t, 0, worker, 0); pthread_join(t, 0);\n'
                      '  pthread_create(&t, 0, worker, 0); sleep(0);\n'
                      '  uint64_t five = 5; write(efd, &five, 8); pthread_join(t, 0);\n'
                      '  int s = eventfd(2, EFD_SEMAPHORE | EFD_NONBLOCK);\n'
                      '  int r1 = read(s, &v, 8); printf("%d %llu ", r1, (unsigned long long)v);\n'
                      '  read(s, &v, 8); int r3 = read(s, &v, 8); printf("%d %d ", r3, errno == EAGAIN);\n'
                      '  int r4 = read(efd, &v, 4); printf("%d %d ", r4, errno == EINVAL);\n'
                      '  int r5 = write(efd, &v, 4); printf("%d %d\\n", r5, errno == EINVAL);\n'
                      '  return 0; }\n')
    expected = b"4 5\nworker 3\nworker 5\n8 1 -1 1 -1 1 -1 1\n"
    result = symex.explore(symex.compile(source, libc="musl"))
    (test,) = result.tests
    assert test.exit_code == 0 and result.paths.errors == 0
    assert test.stdout == expected
    native = subprocess.run([str(native_build(source, tmp_path))], capture_output=True, timeout=60)
    assert native.stdout == expected


@pytest.mark.parametrize("compiler", COMPILERS)
def test_linux_kernel_headers_are_on_the_include_path_with_either_compiler(
        compiler: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # coreutils includes <linux/xattr.h>; zig cc finds Linux's headers behind musl's by
    # itself, clang with -nostdinc did not (its build stopped at lib/file-has-acl.c)
    monkeypatch.setenv("SYMEX_CC", compiler)
    source = tmp_path / "kernel.c"
    source.write_text("#include <linux/xattr.h>\n#include <linux/limits.h>\n"
                      "#include <asm/ioctls.h>\n#include <stdio.h>\n"
                      "int main(void) { printf(\"%d %d\\n\", XATTR_SIZE_MAX, XATTR_NAME_MAX);\n"
                      "  return TIOCGWINSZ == 0x5413 ? 0 : 1; }\n")
    result = symex.explore(symex.compile(source, libc="musl"))
    # Linux's values (include/uapi/linux/limits.h, asm-generic/ioctls.h on x86-64)
    assert [(t.exit_code, t.stdout) for t in result.tests] == [(0, b"65536 255\n")]


def test_file_system_questions_are_answered_as_natively(tmp_path: Path) -> None:
    """statfs/statvfs/fstatfs (``stat -f``; they returned ENOSYS): a file the model has lies on
    a file system with blocks, free space and 255-byte names; a missing path is ENOENT, a
    closed descriptor EBADF: what the same program prints natively."""
    result, native = _beside_native("file_systems.c", tmp_path)
    assert result.tests[0].stdout == native == b"0 1 1\n0 1\n-1 1\n0 1\n-1 1\n"


def test_file_advice_is_answered_as_natively(tmp_path: Path) -> None:
    """posix_fadvise (``cat``, the digest tools; it returned ENOSYS and was counted as
    unmodelled): 0 on a file, ESPIPE on a pipe, EBADF on a closed descriptor, EINVAL for an
    unknown advice or a negative length: what the same program prints natively."""
    result, native = _beside_native("file_advice.c", tmp_path)
    assert result.tests[0].stdout == native == b"0 0\n1\n1\n1 1\n"
    assert not result.shortfalls


def test_access_with_flags_is_answered_as_natively(tmp_path: Path) -> None:
    """faccessat with AT_EACCESS (``test -r``; musl asks faccessat2 first, which returned
    ENOSYS and was counted as unmodelled), and relative to a directory descriptor (which
    was EBADF), X_OK of a file without an execute bit (it said yes): what the same program
    prints natively."""
    result, native = _beside_native("access_flags.c", tmp_path)
    assert result.tests[0].stdout == native == b"0 -1 1 -1 1\n0 -1 1 -1 1\n-1 1 0 0\n"
    assert not result.shortfalls


def test_copy_file_range_copies_between_files_as_natively(tmp_path: Path) -> None:
    """copy_file_range (``cat``, ``cp``; it returned ENOSYS, so symex followed their
    fallbacks where the native run copies): at the descriptors' offsets and at given ones, to
    the input's end; EINVAL for a pipe or flags, EBADF for a closed descriptor: what the same
    program prints natively."""
    result, native = _beside_native("copy_range.c", tmp_path)
    assert result.tests[0].stdout == native == b"3 5 3 4 10 4 5 3\n4 6789\n-1 1 -1 1 -1 1\n"
    assert not result.shortfalls


def test_links_and_clock_resolutions_are_answered_as_natively(tmp_path: Path) -> None:
    """readlink/readlinkat (musl's realpath reads each component with them: with ENOSYS,
    ``realpath`` and ``readlink -f`` failed) and clock_getres: a file is no link, a missing
    path ENOENT, realpath of a file its absolute name; what the program prints natively."""
    result, native = _beside_native("links_and_clocks.c", tmp_path)
    assert result.tests[0].stdout == native == (b"-1 1 -1 1 -1 1\n1 1 /file\n1\n"
                                            b"0 0 1\n0 0 1\n0 0 4000000\n-1 7 7\n")
    assert not result.shortfalls



def test_numbers_without_digits_leave_errno_as_glibc_does(tmp_path: Path) -> None:
    """strtoimax/strtoumax of a string without digits: 0, parsing stopped at its start, and
    errno untouched, as glibc answers (musl's EINVAL made coreutils' ``printf %d ''`` fail
    under symex only); ERANGE past the largest value; what the program prints natively."""
    result, native = _beside_native("numbers_without_digits.c", tmp_path)
    assert result.tests[0].stdout == native
    lines = native.decode().splitlines()
    assert lines[:4] == ["'': 0 0, 0 0, stopped at 0", "'x': 0 0, 0 0, stopped at 0",
                         "'  -': 0 0, 0 0, stopped at 0", "'0x': 0 0, 0 0, stopped at 1"]
    assert lines[4] == "'42z': 42 0, 42 0, stopped at 2"
    assert lines[5] == "'99999999999999999999': 9223372036854775807 34, 18446744073709551615 34, stopped at 20"


def test_changing_owners_is_answered_as_natively(tmp_path: Path) -> None:
    """chown, fchown, lchown, fchownat (``cp -a`` failed on ENOSYS where it succeeds
    natively): success on a file, ENOENT, EBADF and EINVAL where Linux says so."""
    result, native = _beside_native("owners.c", tmp_path)
    assert result.tests[0].stdout == native == (b"chown 0 0\nfchown 0 0\nlchown 0 0\nfchownat 0 0\n"
                                            b"missing -1 2\nclosed -1 9\nflags -1 22\n")
    assert not result.shortfalls


def test_the_mount_table_lists_the_root_as_natively(tmp_path: Path) -> None:
    """/proc/self/mountinfo (coreutils' df reads it; without it every df failed with
    "cannot read table of mounted file systems"): a file system at the root."""
    result, native = _beside_native("mount_table.c", tmp_path)
    assert result.tests[0].stdout == native == b"root listed: 1, lines: 1\n"


def test_dev_null_is_answered_as_natively(tmp_path: Path) -> None:
    """/dev/null: writes vanish, reads end at once, a character device that fills a closed
    standard descriptor (gnulib's ``freopen_safer`` opens it; ``shuf -o`` failed with ENOENT
    when it was missing)."""
    source = ROOT / "programs" / "dev_null.c"
    (test,) = symex.explore(symex.compile(source, libc="musl")).tests
    native = subprocess.run([str(native_build(source, tmp_path))], capture_output=True, cwd=tmp_path,
                            timeout=60)
    assert test.stdout == native.stdout == b"wrote 6, read 0, stat 0, device 1\n"
    assert test.stderr == native.stderr == b"refilled 0, reopened 1\n"


def test_truncating_files_is_answered_as_natively(tmp_path: Path) -> None:
    """ftruncate and truncate (``split`` failed on ENOSYS, "error truncating", where it
    succeeds natively): cut, grown with zeros, and the errors Linux gives; with symex's
    library too."""
    result, native = _beside_native("truncation.c", tmp_path)
    assert result.tests[0].stdout == native
    assert native.splitlines()[:4] == [b"cut 0 0", b"grow 0 0", b"size 8, offset 6", b"read 8: abc 00000"]
    assert b"stdout -1 22" in native
    own = symex.explore(symex.compile(ROOT / "programs" / "truncation.c", libc="symex"))
    assert own.tests[0].stdout == native


def test_symbolic_links_are_made_read_and_followed_as_natively(tmp_path: Path) -> None:
    """symlink, readlink, lstat against stat, open through a link (and O_NOFOLLOW, O_EXCL),
    a dangling link written through, a relative target taken from the link's directory, a
    directory reached through a link, realpath, a loop (ELOOP), unlink, rename and mkdir
    acting on the link itself, a listing's DT_LNK: ``ln -s`` failed with ENOSYS before."""
    result, native = _beside_native("symbolic_links.c", tmp_path)
    assert result.tests[0].stdout == native
    lines = native.splitlines()
    assert lines[:4] == [b"symlink 0 0", b"again -1 17", b"empty -1 2", b"readlink to-data: 4 'data' 0"]
    assert b"to-data: stat 0 file 5, lstat 0 link 4" in lines
    assert b"to-sub/up: stat 0 file 5, lstat 0 link 7" in lines
    assert b"loop open -1 40" in lines and b"realpath data" in lines
    assert lines[-2:] == [b"listed 9, 4 links", b"rmdir link -1 20"]


def test_a_file_is_not_created_by_a_name_ending_in_a_slash(tmp_path: Path) -> None:
    """open("xaa9/", O_CREAT) is EISDIR, as Linux answers (the model made a file "xaa9"),
    while a directory opens and mkdir takes the slash."""
    result, native = _beside_native("trailing_slash.c", tmp_path)
    assert result.tests[0].stdout == native == b"create -1 21\nno file -1 2\nmkdir 0 0\nopen dir 0 0\n"


def test_the_machines_uptime_and_load_read_as_natively(tmp_path: Path) -> None:
    """/proc/uptime and /proc/loadavg (``uptime`` failed without the first)."""
    result, native = _beside_native("machine_files.c", tmp_path)
    assert result.tests[0].stdout == native == b"uptime: 2 fields, up 1\nloadavg: 3 fields, 1\n"

def test_setting_file_times_is_answered_as_natively(tmp_path: Path) -> None:
    """utimensat, futimens, utimes (``touch``, ``cp -p``; they returned ENOSYS, so touch
    reported a failure a native run never has): success on a file, ENOENT, EINVAL and EBADF
    where Linux says so; what the program prints natively."""
    result, native = _beside_native("file_times.c", tmp_path)
    assert result.tests[0].stdout == native == b"0 0 -1 1 -1 1\n0 -1 1 0\n"
    assert not result.shortfalls


def test_links_and_renames_change_names_as_natively(tmp_path: Path) -> None:
    """link/linkat and rename/renameat/renameat2 (``ln``, ``mv``; they returned ENOSYS): a
    hard link is a second name of one file, a directory moves whole, renameat2 refuses to
    replace or swaps, and each error is the kernel's: what the program prints natively."""
    result, native = _beside_native("names.c", tmp_path)
    assert result.tests[0].stdout == native == (
        b"0/0 a:two -1/17 -1/2 -1/2 -1/1 0/0 -1/22 \n"
        b"0/0 a:- c:two b:two 0/0 c:three -1/21 -1/20 -1/22 \n"
        b"0/0 moved/a:two -1 -1/39 -1/39 0/0 empty/x:x \n"
        b"-1/17 0/0 p:qq q:pp -1/2 0/0 r:qq 0/0 empty/r:qq \n")
    assert not result.shortfalls


@pytest.mark.parametrize("libc", ["symex", "musl"])
def test_rename_and_link_in_either_library(tmp_path: Path, libc: str) -> None:
    """symex's own library wraps the same declarations (ir/system_calls.py): rename and link
    there too; the line is what glibc and musl print natively."""
    source = tmp_path / "names.c"
    source.write_text('#include <fcntl.h>\n#include <stdio.h>\n#include <unistd.h>\n'
                      'int main(void) { close(open("a", O_WRONLY | O_CREAT, 0600));\n'
                      '  int r = rename("a", "b"), l = link("b", "c");\n'
                      '  printf("%d %d %d %d\\n", r, l, access("a", F_OK), access("c", F_OK));\n'
                      '  return 0; }\n')
    result = symex.explore(symex.compile(source, libc=libc))
    assert [t.stdout for t in result.tests] == [b"0 0 -1 0\n"]


def test_modes_nodes_groups_and_random_bytes_as_natively(tmp_path: Path) -> None:
    """chmod/fchmod/fchmodat, mknod/mknodat (mkfifo), getgroups and getrandom (chmod, mkdir
    -m, mkfifo, mknod, id, mktemp; they returned ENOSYS): what the program prints natively,
    and getrandom's bytes the same in two runs (runs repeat)."""
    result, native = _beside_native("modes_and_nodes.c", tmp_path)
    assert result.tests[0].stdout == native == (
        b"0/0 file:100640 0/0 file:100604 0/0 file:100755 -1/2 -1/9 0/0 file:100700 -1/22 \n"
        b"0/0 fifo:10644 0/0 plain:100644 -1/17 -1/2 -1/1 0/0 fifo2:10600 \n-1/22 16\n")
    assert not result.shortfalls


def test_random_bytes_repeat_from_run_to_run(tmp_path: Path) -> None:
    source = tmp_path / "random.c"
    source.write_text('#include <stdio.h>\n#include <sys/random.h>\n'
                      'int main(void) { unsigned char b[8] = {0};\n'
                      '  getrandom(b, sizeof b, GRND_NONBLOCK);\n'
                      '  for (int i = 0; i < 8; i++) printf("%02x", b[i]);\n'
                      '  return b[0] == b[1] && b[1] == b[2]; }\n')
    program = symex.compile(source, libc="musl")
    first, second = (symex.explore(program).tests for _ in range(2))
    assert [t.stdout for t in first] == [t.stdout for t in second]
    assert [t.exit_code for t in first] == [0]  # not a constant fill


def test_the_machine_has_one_processor(tmp_path: Path) -> None:
    """sched_getaffinity (nproc; it returned ENOSYS): one processor, CPU 0, in the kernel's
    8-byte mask, and sysconf agrees; a 4-byte buffer is EINVAL and another process ESRCH,
    as sched_getaffinity(2) says."""
    source = tmp_path / "cpus.c"
    source.write_text('#define _GNU_SOURCE\n#include <errno.h>\n#include <sched.h>\n#include <stdio.h>\n'
                      '#include <unistd.h>\n'
                      'int main(void) { cpu_set_t set; CPU_ZERO(&set);\n'
                      '  int r = sched_getaffinity(0, sizeof set, &set);\n'
                      '  printf("%d %d %d %ld ", r, CPU_COUNT(&set), CPU_ISSET(0, &set),\n'
                      '         sysconf(_SC_NPROCESSORS_ONLN));\n'
                      '  r = sched_getaffinity(0, 4, &set); printf("%d %d ", r, errno == EINVAL);\n'
                      '  r = sched_getaffinity(12345, sizeof set, &set); printf("%d %d\\n", r, errno == ESRCH);\n'
                      '  return 0; }\n')
    result = symex.explore(symex.compile(source, libc="musl"))
    assert [t.stdout for t in result.tests] == [b"0 1 1 1 -1 1 -1 1\n"]
    assert not result.shortfalls


@pytest.mark.parametrize("libc", ["symex", "musl"])
def test_an_empty_file_name_names_no_file(tmp_path: Path, libc: str) -> None:
    """open("") is ENOENT, with O_CREAT too (it made a file called "", so ``tee ""``
    never reached its error lines); the line is what glibc and musl print natively."""
    source = tmp_path / "empty.c"
    source.write_text('#include <errno.h>\n#include <stdio.h>\n'
                      'int main(void) { FILE *f = fopen("", "w");\n'
                      '  printf("%d %d\\n", f != NULL, f ? 0 : errno == ENOENT); return 0; }\n')
    result = symex.explore(symex.compile(source, libc=libc))
    assert [t.stdout for t in result.tests] == [b"0 1\n"]


def test_a_second_process_waits_for_the_first_ones_build_of_the_library(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two runs started at once after the glue changed both built all of musl's 1,141 files
    on every core. Now the build holds a lock on its directory: a run finding files missing
    while another builds them waits, then uses what the other built. Here the test is the
    other process: it holds the lock, and the missing file it writes is not built again."""
    built = musl_ir_files()
    real_root, real_ir = musl_cache_root(), built[0].parent
    root = tmp_path / "cache"
    root.mkdir()
    for entry in real_root.iterdir():
        if entry != real_ir:
            (root / entry.name).symlink_to(entry)
    ir = root / real_ir.name
    ir.mkdir()
    for path in built[1:]:
        (ir / path.name).symlink_to(path)
    monkeypatch.setenv(CACHE_VARIABLE, str(root))

    waiting = threading.Event()

    class Stderr:
        def write(self, text: str) -> int:
            if "waiting for another process" in text:
                waiting.set()
            return len(text)

        def flush(self) -> None:
            pass

    monkeypatch.setattr(sys, "stderr", Stderr())
    found: list[list[Path]] = []
    with open(ir / ".build-lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        second = threading.Thread(target=lambda: found.append(musl_ir_files()))
        second.start()
        while second.is_alive() and not waiting.wait(timeout=0.05):
            pass
        assert waiting.is_set(), "the second run did not wait for the lock"
        (ir / built[0].name).write_text("; written by the process holding the lock\n")
    second.join(timeout=600)
    assert found and found[0][0] == ir / built[0].name
    assert (ir / built[0].name).read_text() == "; written by the process holding the lock\n"
