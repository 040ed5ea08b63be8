"""Directories in the world model (issue 44): mkdir, rmdir, chdir, opendir/readdir
(getdents64), stat of a directory, relative and absolute paths, on both C libraries; and the
same output natively."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import immutables
import pytest

import symex
from symex.env.world import ELOOP, MAX_LINKS, S_IFDIR, S_IFLNK, FileNode, PosixWorld, lookup, resolve
from symex.errors import ConfigError
from symex.symargs import ArgvSpec
from symex.output.ktest import KTest, KTestObject, write_ktest
from symex.replay import build_native

PROGRAMS = Path(__file__).parent / "programs"


def test_a_program_walking_its_tree_completes_every_path_and_replays_natively(tmp_path: Path) -> None:
    source = PROGRAMS / "directory_walk.c"
    program = symex.compile(source)
    assert program.library == "musl"  # opendir: musl's
    result = symex.explore(program)
    assert result.tests and all(t.status.value == "completed" and t.exit_code == 0 for t in result.tests)
    outputs = {t.objects["pick"]: t.stdout for t in result.tests}
    # the three outcomes: into a, into b (any byte but 'a' and 'r'), and removing a
    assert sorted(outputs.values()) == sorted([
        b"tree: 2, a: 1, b: 0\nin a: file 1, ../a 1\n",
        b"tree: 2, a: 1, b: 0\nin b: file 0, ../a 1\n",
        b"tree: 2, a: 1, b: 0\nin b: file 0, ../a 1\nremoved a: 1\n"])
    native = build_native(source, out_dir=tmp_path / "build")
    for pick, output in outputs.items():
        work = tmp_path / f"run-{pick.hex()}"
        work.mkdir()
        write_ktest(work / "t.ktest", KTest(args=[], objects=[KTestObject("pick", pick)]))
        ran = subprocess.run([str(native)], cwd=work, capture_output=True, timeout=60,
                             env={**os.environ, "KTEST_FILE": str(work / "t.ktest")})
        assert (ran.returncode, ran.stdout) == (0, output), ran.stderr


@pytest.mark.parametrize("libc", ["symex", "musl"])
def test_directories_answer_as_linux_does(tmp_path: Path, libc: str) -> None:
    source = tmp_path / "calls.c"
    source.write_text(r'''
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
int main(void) {
  char cwd[32];
  printf("%d", mkdir("d", 0700));
  printf(" %d/%d", mkdir("d", 0700), errno == EEXIST);
  printf(" %d/%d", mkdir("no/such", 0700), errno == ENOENT);
  int fd = open("f", O_WRONLY | O_CREAT, 0600); close(fd);
  printf(" %d/%d", mkdir("f/x", 0700), errno == ENOTDIR);
  printf(" %d/%d", chdir("f"), errno == ENOTDIR);
  printf(" %d %s", chdir("/d"), getcwd(cwd, sizeof cwd));
  printf(" %d/%d", open("sub", O_RDONLY | O_DIRECTORY), errno == ENOENT);
  printf(" %d %s", chdir(".."), getcwd(cwd, sizeof cwd));
  printf(" %d/%d", unlink("d"), errno == EISDIR);
  struct stat st;
  printf(" %d %d", stat("/d/.", &st), S_ISDIR(st.st_mode));
  printf(" %d/%d", rmdir("f"), errno == ENOTDIR);
  printf(" %d %d/%d\n", rmdir("d"), stat("d", &st), errno == ENOENT);
  return 0;
}
''')
    (result_test,) = symex.explore(symex.compile(source, libc=libc)).tests
    assert result_test.stdout == b"0 -1/1 -1/1 -1/1 -1/1 0 /d -1/1 0 / -1/1 0 1 -1/1 0 -1/1\n"



HOST_TMP = r"""
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
int main(void) {
  char dir[] = "/tmp/symex-test-XXXXXX", file[] = "/tmp/symex-test-XXXXXX";
  char missing[] = "no-such-dir/XXXXXX", missing_file[] = "no-such-dir/XXXXXX";
  struct stat st;
  int got = stat("/tmp", &st);  /* each call before its result is read: gcc evaluates */
  printf("%d %d", got, S_ISDIR(st.st_mode));  /* printf's arguments right to left */
  printf(" %d", mkdtemp(dir) != NULL);
  int fd = mkstemp(file);
  printf(" %d", fd >= 0);
  got = mkdtemp(missing) == NULL;
  printf(" %d/%d", got, errno == ENOENT);
  got = mkstemp(missing_file) < 0;
  printf(" %d/%d", got, errno == ENOENT);
  int listed = 0;
  DIR *here = opendir(".");
  for (struct dirent *entry; (entry = readdir(here));)
    listed += !strcmp(entry->d_name, "tmp") || !strcmp(entry->d_name, "etc");
  closedir(here);
  printf(" %d\n", listed);
  if (fd >= 0) {  /* natively: leave the host's /tmp as it was */
    close(fd);
    unlink(file);
  }
  rmdir(dir);
  return 0;
}
"""


def test_temporary_files_are_made_in_the_hosts_tmp_which_the_root_does_not_list(tmp_path: Path) -> None:
    # mktemp, mkstemp and mkdtemp make their files in /tmp, which every host has: a run
    # where they failed would not replay natively (the gap that hid mktemp's failure lines)
    source = tmp_path / "tmp.c"
    source.write_text(HOST_TMP)
    (result_test,) = symex.explore(symex.compile(source)).tests
    expected = b"0 1 1 1 1/1 1/1 0\n"
    assert result_test.stdout == expected
    native = build_native(source, out_dir=tmp_path / "build")
    work = tmp_path / "work"
    work.mkdir()
    ran = subprocess.run([str(native)], cwd=work, capture_output=True, timeout=60)
    assert (ran.returncode, ran.stdout) == (0, expected), ran.stderr


SERVER = r'''
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
/* serves htdocs/NAME for the request NAME in argv[1], as a small web server does */
int main(int argc, char **argv) {
  char path[64], body[8];
  if (argc < 2 || strchr(argv[1], '/'))
    return 2;
  strcpy(path, "htdocs/");
  strncat(path, argv[1], sizeof path - 8);
  int fd = open(path, O_RDONLY);
  if (fd < 0) {
    puts("404");
    return 1;
  }
  long n = read(fd, body, sizeof body);
  printf("200 %ld\n", n);
  return 0;
}
'''


@pytest.mark.parametrize("libc", ["symex", "musl"])
def test_a_symbolic_file_under_sym_dir_is_served(tmp_path: Path, libc: str) -> None:
    source = tmp_path / "server.c"
    source.write_text(SERVER)
    spec = ArgvSpec.parse(["--sym-arg", "1", "--sym-files", "1", "4", "--sym-dir", "htdocs"])
    result = symex.explore(symex.compile(source, libc=libc), sym_args=spec)
    served = [t for t in result.tests if t.stdout == b"200 4\n"]
    assert served and all(t.objects["arg00"][:2] == b"A\0" for t in served)
    assert any(t.stdout == b"404\n" for t in result.tests)
    assert spec.words() == ("--sym-arg", "1", "--sym-files", "1", "4", "--sym-dir", "htdocs")


def test_a_web_server_serves_its_file_under_htdocs_to_a_symbolic_request() -> None:
    """network/web_server.c over a socket, as issue 44 asks: one symbolic packet, the
    symbolic file under htdocs; the method is matched with musl's strncasecmp (auto picks
    musl), and a request for A gets A's bytes."""
    program = symex.compile(PROGRAMS / "network" / "web_server.c")
    assert program.library == "musl"
    spec = ArgvSpec.parse(["--sym-files", "1", "4", "--sym-dir", "htdocs"])
    result = symex.explore(program, sym_packets=(1, 8), sym_args=spec)
    assert all(t.status.value == "completed" and t.exit_code == 0 for t in result.tests)
    served = [t for t in result.tests if t.stdout == b"200 htdocs/A 4\n"]
    assert served
    for test in served:
        request = test.objects["packet-0"]
        assert request[:5].upper() == b"GET /" and request[5:6] == b"A" and request[6:7] in b" \0"
    missing = [t for t in result.tests if t.stdout.startswith(b"404 ")]
    assert missing and all(t.objects["packet-0"][5:].split(b"\0")[0].split(b" ")[0] != b"A"
                           for t in missing)


def test_sym_dir_must_be_a_relative_directory() -> None:
    for bad in ("/srv", "../up", "a//b", ""):
        with pytest.raises(ConfigError, match="--sym-dir takes a relative directory"):
            ArgvSpec.parse(["--sym-dir", bad])


def test_replay_makes_the_sym_dir_files_where_the_run_had_them(tmp_path: Path) -> None:
    from symex.replay import replay_environment, run_test

    source = tmp_path / "show.c"
    source.write_text('#include <stdio.h>\nint main(void) { FILE *f = fopen("www/A", "r");'
                      ' int c = f ? fgetc(f) : -2; printf("%d\\n", c); return 0; }\n')
    ktest = KTest(args=["show", "--sym-files", "1", "1", "--sym-dir", "www"],
                  objects=[KTestObject("A-data", b"Z"), KTestObject("A-data-stat", bytes(144))])
    assert replay_environment(ktest).files == (("www/A", b"Z"),)
    write_ktest(tmp_path / "t.ktest", ktest)
    outcome = run_test(build_native(source, out_dir=tmp_path / "build"), tmp_path / "t.ktest", ktest)
    assert (outcome.exit_code, outcome.stdout) == (0, "90\n")


def test_a_symbolic_path_from_a_directory_descriptor_leaves_every_fork_where_it_was(tmp_path: Path) -> None:
    """openat(dirfd, argv[1]) forks on "is it A" inside that directory; the path that goes
    on without a match still resolves later relative paths from the working directory."""
    source = tmp_path / "at.c"
    source.write_text('#include <fcntl.h>\n#include <stdio.h>\n'
                      'int main(int argc, char **argv) {\n'
                      '  int dir = open("d", O_RDONLY | O_DIRECTORY);\n'
                      '  int at = openat(dir, argv[1], O_RDONLY);\n'
                      '  printf("%d %d\\n", at >= 0, open("d/A", O_RDONLY) >= 0);\n  return 0;\n}\n')
    spec = ArgvSpec.parse(["--sym-arg", "1", "--sym-files", "1", "2", "--sym-dir", "d"])
    outputs = sorted(t.stdout for t in symex.explore(symex.compile(source, libc="musl"), sym_args=spec).tests)
    assert b"1 1\n" in outputs and b"0 1\n" in outputs and all(o.endswith(b" 1\n") for o in outputs)


def _world_with_links(links: dict[str, str]) -> PosixWorld:
    """A world with directories ``d`` and ``d/e``, the file ``d/e/f`` and ``links`` (key ->
    target)."""
    names: dict[str, int] = {".": 1, "d": 2, "d/e": 3, "d/e/f": 4}
    nodes: dict[int, FileNode] = {1: FileNode((), mode=S_IFDIR | 0o755), 2: FileNode((), mode=S_IFDIR | 0o755),
                                  3: FileNode((), mode=S_IFDIR | 0o755), 4: FileNode(tuple(b"text"))}
    for key, target in links.items():
        names[key] = len(nodes) + 1
        nodes[len(nodes) + 1] = FileNode(tuple(target.encode()), mode=S_IFLNK | 0o777)
    return PosixWorld(immutables.Map(names), immutables.Map(nodes), immutables.Map(), immutables.Map(),
                      len(nodes) + 1, 3, linked=bool(links))


def test_a_path_is_looked_up_through_its_links_as_the_kernel_does() -> None:
    """Links in the middle of a path are always followed, the last only when asked (or when
    a slash ends the path); a relative target starts at the link's directory, an absolute
    one at the root; ``..`` after a link leaves the link's target, not its name."""
    world = _world_with_links({"l": "d/e", "d/up": "..", "d/abs": "/d/e/f", "d/e/rel": "f"})
    assert lookup(world, ".", "l/f") == "d/e/f"
    assert lookup(world, ".", "l") == "d/e"
    assert lookup(world, ".", "l", follow=False) == "l"
    assert lookup(world, ".", "l/", follow=False) == "d/e"
    assert lookup(world, ".", "l/..") == "d"  # lexically it would be the root
    assert lookup(world, "d", "up/d/e/rel") == "d/e/f"
    assert lookup(world, "d/e", "../abs") == "d/e/f"
    assert lookup(world, "d/e", "rel", follow=False) == "d/e/rel"
    assert lookup(world, ".", "/missing/../l/f") == "d/e/f"


def test_a_loop_of_links_is_eloop_and_a_world_without_links_is_read_by_spelling() -> None:
    looped = _world_with_links({"a": "b", "b": "a", "self": "self/x"})
    assert lookup(looped, ".", "a") == -ELOOP
    assert lookup(looped, ".", "self") == -ELOOP
    assert lookup(looped, ".", "a", follow=False) == "a"
    plain = _world_with_links({})
    assert lookup(plain, ".", "d/../d/e/./f") == "d/e/f" == resolve(".", "d/../d/e/./f")
    # a chain of 40 links resolves; 41 is ELOOP, as on Linux
    chain = {f"c{i}": f"c{i + 1}" for i in range(MAX_LINKS - 1)}
    assert lookup(_world_with_links({**chain, f"c{MAX_LINKS - 1}": "d"}), ".", "c0") == "d"
    chain[f"c{MAX_LINKS - 1}"] = f"c{MAX_LINKS}"
    assert lookup(_world_with_links({**chain, f"c{MAX_LINKS}": "d"}), ".", "c0") == -ELOOP
