"""Native replay in a sandbox (what the testing service does with uploaded programs, and
``symex replay --sandbox``): a real program built with gcc and AddressSanitizer tries what a
hostile upload would (read the host's files, write outside its directory, look at the
environment, reach the network, fork without end, take memory, write a huge file), and each
attempt is stopped."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from symex.output.ktest import KTest, KTestObject, write_ktest
from symex.replay import NativeSandbox, build_native, run_native
from symex.sandbox import python_paths, sandbox_problem

pytestmark = [
    pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed"),
    pytest.mark.skipif(sandbox_problem() is not None,
                       reason=f"no sandbox can be made here: {sandbox_problem()}"),
]

PROGRAM = """\
#include <klee/klee.h>
#include <arpa/inet.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int main(void) {
  int what, port;
  char path[200];
  klee_make_symbolic(&what, sizeof what, "what");
  klee_make_symbolic(&port, sizeof port, "port");
  klee_make_symbolic(path, sizeof path, "path");
  path[sizeof path - 1] = 0;
  if (what == 1) {                      /* write 8 MiB to a file */
    FILE *f = fopen("big", "w");
    static char block[1 << 20];
    for (int i = 0; i < 8; i++)
      if (fwrite(block, 1, sizeof block, f) != sizeof block) return 4;
    fclose(f);
    return 0;
  }
  if (what == 2) {                      /* take 400 MiB and touch it */
    char *p = malloc(400u << 20);
    memset(p, 1, 400u << 20);
    return p[12345] == 1 ? 0 : 5;
  }
  if (what == 3) {                      /* connect to 127.0.0.1:port */
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons((unsigned short)port);
    a.sin_addr.s_addr = htonl(0x7f000001);
    return connect(s, (struct sockaddr *)&a, sizeof a) == 0 ? 0 : 3;
  }
  if (what == 4) {                      /* read a file: print its first bytes */
    FILE *f = fopen(path, "r");
    if (!f) { printf("cannot read %s\\n", path); return 6; }
    char line[64] = {0};
    fgets(line, sizeof line, f);
    printf("read: %s\\n", line);
    return 0;
  }
  if (what == 5) {                      /* create a file */
    FILE *f = fopen(path, "w");
    if (!f) { printf("cannot write %s\\n", path); return 7; }
    fputs("pwned", f);
    fclose(f);
    printf("wrote %s\\n", path);
    return 0;
  }
  if (what == 6) {                      /* who am I, what is around me */
    printf("uid %d\\n", (int)getuid());
    for (char **e = environ; *e; e++) printf("env %s\\n", *e);
    DIR *d = opendir(path);
    struct dirent *entry;
    while (d && (entry = readdir(d))) printf("entry %s\\n", entry->d_name);
    return 0;
  }
  if (what == 7) {                      /* fork 200 children */
    int made = 0;
    for (int i = 0; i < 200; i++) {
      pid_t child = fork();
      if (child == 0) { sleep(2); _exit(0); }
      if (child > 0) made++;
    }
    printf("forked %d\\n", made);
    while (wait(NULL) > 0) {}
    return 0;
  }
  return 0;
}
"""


@pytest.fixture(scope="module")
def executable(tmp_path_factory: pytest.TempPathFactory) -> Path:
    source = tmp_path_factory.mktemp("sandbox") / "sandboxed.c"
    source.write_text(PROGRAM)
    return build_native(source)


def _test(what: int, port: int = 0, path: str = "") -> KTest:
    return KTest((), (KTestObject("what", what.to_bytes(4, "little")),
                      KTestObject("port", port.to_bytes(4, "little")),
                      KTestObject("path", path.encode().ljust(200, b"\0"))))


def test_a_big_file_is_stopped_by_the_file_size_limit(executable: Path) -> None:
    assert run_native(executable, _test(1), sandbox=NativeSandbox(file_size_mb=64)).exit_code == 0
    limited = run_native(executable, _test(1), sandbox=NativeSandbox(file_size_mb=1))
    # SIGXFSZ at the first write past 1 MiB (or a short write, if it is ignored)
    assert limited.signal == signal.SIGXFSZ or limited.exit_code == 4, limited


def test_memory_above_the_limit_stops_the_program(executable: Path) -> None:
    assert run_native(executable, _test(2), timeout=60).exit_code == 0
    limited = run_native(executable, _test(2), timeout=60, sandbox=NativeSandbox(memory_mb=100))
    # AddressSanitizer's own limit, or the sandbox's watch on all its processes
    assert limited.exit_code != 0, limited
    assert "rss" in limited.stderr.lower() or limited.over_memory, limited
    assert limited.kind is None     # running out of memory is not a bug the program has


def test_no_network_means_no_connection(executable: Path) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        assert run_native(executable, _test(3, port)).exit_code == 0   # it can connect
        assert run_native(executable, _test(3, port), sandbox=NativeSandbox()).exit_code == 3


def test_the_host_files_are_out_of_sight(executable: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("the server's secret\n")
    os.chmod(tmp_path, 0o755)
    # without a sandbox the program reads it (it is the user's own program, run as the user)
    assert "the server's secret" in run_native(executable, _test(4, path=str(secret))).stdout
    for path in (str(secret), "/etc/passwd", "/etc/hostname", "/root/.bashrc"):
        sandboxed = run_native(executable, _test(4, path=path), sandbox=NativeSandbox())
        assert sandboxed.exit_code == 6 and "read:" not in sandboxed.stdout, (path, sandboxed)


def test_nothing_outside_the_scratch_directory_is_written(executable: Path, tmp_path: Path) -> None:
    os.chmod(tmp_path, 0o777)   # even where the host would let anybody write
    for target in (tmp_path / "pwned", Path("/tmp") / f"symex-pwned-{os.getpid()}"):
        sandboxed = run_native(executable, _test(5, path=str(target)), sandbox=NativeSandbox())
        assert not target.exists(), sandboxed
    inside = run_native(executable, _test(5, path="here"), sandbox=NativeSandbox())
    assert inside.exit_code == 0 and "wrote here" in inside.stdout   # its own directory works


def test_an_unprivileged_user_in_an_empty_world(executable: Path) -> None:
    ran = run_native(executable, _test(6, path="/"), sandbox=NativeSandbox())
    lines = ran.stdout.splitlines()
    uid = int(next(line for line in lines if line.startswith("uid "))[4:])
    assert uid != 0 and (os.geteuid() != 0 or uid == NativeSandbox().uid), ran.stdout
    # the environment: what replay itself sets, and nothing of ours
    names = {line[4:].split("=", 1)[0] for line in lines if line.startswith("env ")}
    assert names <= {"PATH", "HOME", "TMPDIR", "LANG", "PWD", "KTEST_FILE", "ASAN_OPTIONS",
                     "UBSAN_OPTIONS", "SYMEX_REPLAY_FIRST_OBJECT"}, names
    entries = {line[6:] for line in lines if line.startswith("entry ")}
    assert {"usr", "tmp", "proc", "dev"} <= entries
    assert not entries & {"home", "srv", "var", "opt", "mnt", "boot"}, entries
    # a home directory shows only the way to what the sandbox binds (Python, the program)
    home = Path.home().resolve()
    listed = run_native(executable, _test(6, path=str(home)), sandbox=NativeSandbox())
    bound = [p for p in (*python_paths(), executable.resolve()) if p.is_relative_to(home)]
    allowed = {".", ".."} | {p.relative_to(home).parts[0] for p in bound}
    assert {line[6:] for line in listed.stdout.splitlines()
            if line.startswith("entry ")} <= allowed, listed.stdout


def test_processes_are_limited(executable: Path) -> None:
    ran = run_native(executable, _test(7), timeout=60, sandbox=NativeSandbox(processes=16))
    made = int(ran.stdout.split("forked ")[1].split()[0])
    assert made < 16, ran.stdout


ATTACK = textwrap.dedent("""\
    #include <klee/klee.h>
    #include <stdlib.h>
    #include <stdio.h>
    /* runs natively only: gcc compiles the constructor, clang (symex's compiler) does not */
    #ifndef __clang__
    __attribute__((constructor)) static void attack(void) {
      system("echo pwned > TARGET; ls / > TARGET.listing");
      FILE *f = fopen("TARGET.direct", "w");
      if (f) { fputs("pwned", f); fclose(f); }
    }
    #endif
    int main(void) {
      int x;
      klee_make_symbolic(&x, sizeof x, "x");
      if (x == 7) abort();
      return 0;
    }
    """)


def test_symex_replay_sandbox_runs_an_attack_harmlessly(tmp_path: Path) -> None:
    os.chmod(tmp_path, 0o755)    # the sandbox's user reads what anybody may
    target = tmp_path / "outside" / "pwned"
    target.parent.mkdir()
    os.chmod(target.parent, 0o777)
    source = tmp_path / "attack.c"
    source.write_text(ATTACK.replace("TARGET", str(target)))
    test = tmp_path / "test000001.ktest"
    write_ktest(test, KTest((), (KTestObject("x", (7).to_bytes(4, "little")),)))
    (tmp_path / "test000001.abort.err").write_text("Error: abort\n")
    command = [sys.executable, "-m", "symex.cli", "replay", "--sandbox", str(source), str(test)]
    ran = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "reproduces abort error" in ran.stdout
    assert list(target.parent.iterdir()) == []       # the constructor ran, and wrote nothing
    # without --sandbox the same constructor does write (it is the user's own program)
    plain = subprocess.run(command[:4] + command[5:], capture_output=True, text=True, timeout=600)
    assert plain.returncode == 0 and Path(f"{target}.direct").is_file(), plain.stderr


def test_without_a_sandbox_nothing_runs(tmp_path: Path) -> None:
    # a machine without bubblewrap: SYMEX_BWRAP names the sandbox's tool
    code = (
        "from symex.replay import NativeSandbox, build_native\n"
        "from symex.sandbox import SandboxUnavailable, sandbox_problem\n"
        f"print(sandbox_problem())\n"
        "try:\n"
        f"    build_native({str(tmp_path / 'p.c')!r}, sandbox=NativeSandbox())\n"
        "except SandboxUnavailable as exc:\n"
        "    print('refused:', exc)\n")
    (tmp_path / "p.c").write_text("int main(void) { return 0; }\n")
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "SYMEX_BWRAP": str(tmp_path / "no-such-bwrap"),
                              "SYMEX_CACHE_DIR": str(tmp_path / "cache")}, timeout=120)
    assert "bubblewrap" in ran.stdout and "refused: no sandbox can be made" in ran.stdout, \
        ran.stdout + ran.stderr
