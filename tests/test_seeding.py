"""Seeds (KLEE's --seed-file): the paths of concrete inputs run first, every branch they do
not take is explored afterwards, and the exploration as a whole stays the same."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import symex
from symex.core.outcome import PathStatus
from symex.errors import ConfigError
from symex.output.ktest import KTest, KTestObject, read_ktest, write_ktest
from c_programs import write

# A command parser shaped like memcached's text protocol: a command ends at the first
# newline, splits at spaces, and its first word is compared with each command's name. The
# handlers are far from the root of the tree: dfs and coverage-guided search spend their
# time on junk commands first.
COMMANDS = r"""
#include <string.h>
#include <stdio.h>
#include <klee/klee.h>

void handle_incr(const char *key) { printf("incr %s\n", key); }
void handle_delete(const char *key) { printf("delete %s\n", key); }

int main(void) {
    char packet[24];
    klee_make_symbolic(packet, sizeof packet, "packet");
    packet[23] = 0;
    char *end = memchr(packet, '\n', 23);
    if (!end) { puts("no command"); return 0; }
    *end = 0;
    char *space = strchr(packet, ' ');
    if (!space) { puts("ERROR"); return 0; }
    *space = 0;
    if (strcmp(packet, "incr") == 0) handle_incr(space + 1);
    else if (strcmp(packet, "delete") == 0) handle_delete(space + 1);
    else puts("ERROR");
    return 0;
}
"""

# small enough to explore whole, with and without seeds
THREE_BYTES = r"""
#include <stdio.h>
#include <klee/klee.h>

int main(void) {
    unsigned char b[3];
    klee_make_symbolic(b, sizeof b, "b");
    if (b[0] == 'x') {
        if (b[1] > 100) puts("x big"); else puts("x small");
    } else if (b[2] == b[1]) {
        puts("equal");
    } else {
        puts("other");
    }
    return 0;
}
"""


def _commands(tmp_path: Path) -> symex.Program:
    return symex.compile(write(tmp_path, "commands.c", COMMANDS))


def test_a_seeded_path_reaches_a_deep_handler_before_any_other_path_ends(tmp_path: Path) -> None:
    program = _commands(tmp_path)
    seeded = symex.explore(program, searcher="dfs", max_time=60, stop_at="handle_delete",
                           seeds=[{"packet": b"delete k1\n"}])
    assert seeded.halted is not None and "handle_delete" in seeded.halted
    # the seed's path ran first, to the handler: no other path had ended before it, and its
    # test is the seed (the key the handler printed is the seed's, not the solver's choice)
    ended = [t for t in seeded.tests if t.status is not PathStatus.PARTIAL]
    assert [t.stdout for t in ended] == [b"delete k1\n"]
    assert ended[0].objects["packet"].startswith(b"delete k1\n")
    # without the seed, dfs ends junk commands first
    plain = symex.explore(program, searcher="dfs", max_time=60, stop_at="handle_delete",
                          max_instructions=200_000)
    assert [t for t in plain.tests if t.status is PathStatus.COMPLETED]


def test_the_branches_a_seed_does_not_take_are_explored_after_it(tmp_path: Path) -> None:
    program = _commands(tmp_path)
    result = symex.explore(program, searcher="dfs", max_time=60,
                           seeds=[{"packet": b"incr a\n"}], max_instructions=400_000)
    outputs = [t.stdout for t in result.tests]
    # the first path is the seed's own
    assert outputs[0] == b"incr a\n"
    # then the forks beside it: other keys for incr, the same handler with other input
    assert sum(1 for o in outputs if o.startswith(b"incr ")) > 1
    assert any(o == b"ERROR\n" for o in outputs)


def test_seeds_change_the_order_of_the_paths_not_the_paths(tmp_path: Path) -> None:
    program = symex.compile(write(tmp_path, "three.c", THREE_BYTES))
    plain = symex.explore(program, searcher="bfs", max_time=60)
    seeded = symex.explore(program, searcher="bfs", max_time=60,
                           seeds=[{"b": b"q77"}, {"b": b"xz"}])
    assert sorted(t.stdout for t in plain.tests) == sorted(t.stdout for t in seeded.tests)
    assert len(plain.tests) == 4
    # bfs alone ends the shallowest path first; the seeds' paths come first instead, in turn
    # the newest seeded state first: both seeds share the root, "xz" forks off at b[0]
    first_two = [t.stdout for t in seeded.tests[:2]]
    assert sorted(first_two) == [b"equal\n", b"x big\n"]


def test_bytes_a_seed_lacks_read_as_zero_and_unknown_objects_are_ignored(tmp_path: Path) -> None:
    program = symex.compile(write(tmp_path, "three.c", THREE_BYTES))
    # "b" is one byte short ("x" then 0 then 0: not > 100), "c" names no object
    result = symex.explore(program, searcher="bfs", max_time=60,
                           seeds=[{"b": "x", "c": b"ignored"}])
    assert result.tests[0].stdout == b"x small\n"
    assert len(result.tests) == 4


def test_an_object_made_later_takes_the_seeds_value_where_it_is_concretized(tmp_path: Path) -> None:
    program = symex.compile(write(tmp_path, "later.c", r"""
        #include <stdio.h>
        #include <klee/klee.h>
        int main(void) {
            char c;
            klee_make_symbolic(&c, 1, "c");
            if (c != 'y') return 1;
            int n;                       /* made after the first branch */
            klee_make_symbolic(&n, sizeof n, "n");
            printf("%d\n", n);          /* concretized at once, in the same time slice */
            return 0;
        }
    """))
    result = symex.explore(program, searcher="dfs", max_time=60,
                           seeds=[{"c": b"y", "n": (4242).to_bytes(4, "little")}])
    assert result.tests[0].stdout == b"4242\n"
    assert result.tests[0].objects == {"c": b"y", "n": (4242).to_bytes(4, "little")}


INFEASIBLE_SIDE = r"""
#include <stdio.h>
#include <klee/klee.h>
int main(void) {
    int x;
    klee_make_symbolic(&x, sizeof x, "x");
    if (x > 10) {
        if (x < 5)
            puts("impossible");
        else
            puts("big");
    } else {
        puts("small");
    }
    return 0;
}
"""


def test_a_side_left_unchecked_off_a_seeds_path_that_is_infeasible_is_no_path(tmp_path: Path) -> None:
    # the seed (x = 20) takes both branches' first sides without asking the solver; the
    # sides it leaves are checked when picked: "small" is a path, "impossible" (x > 10 and
    # x < 5) is none, and its line and branch outcome do not count as covered
    program = symex.compile(write(tmp_path, "sides.c", INFEASIBLE_SIDE))
    seeded = symex.explore(program, searcher="dfs", max_time=60,
                           seeds=[{"x": (20).to_bytes(4, "little")}])
    plain = symex.explore(program, searcher="dfs", max_time=60)
    assert [t.stdout for t in seeded.tests] == [b"big\n", b"small\n"]
    assert sorted(t.stdout for t in plain.tests) == [b"big\n", b"small\n"]
    assert seeded.coverage.covered_lines == plain.coverage.covered_lines
    assert seeded.coverage.covered_branches == plain.coverage.covered_branches
    assert any("1 sides of forks off the seeds' paths were infeasible" in m
               for m in seeded.messages)
    impossible = 9
    assert ("sides.c", impossible) not in {(Path(f).name, n) for f, n in seeded.coverage.covered_lines}


def test_seeds_name_packets_that_arrive_during_the_run(tmp_path: Path) -> None:
    # the key-value server alone, two symbolic packets from a client outside: the packets'
    # objects are made when they are sent, in the middle of the run
    server = symex.compile(Path(__file__).parent / "programs" / "network" / "kv_server.c",
                           ["-DSERVER_ONLY"])
    seed = {"packet-0": b"S\x02A;", "packet-1": b"G\x02\x00;"}
    seeded = symex.explore(server, searcher="dfs", max_time=120, sym_packets=(2, 4), seeds=[seed])
    plain = symex.explore(server, searcher="dfs", max_time=120, sym_packets=(2, 4))
    assert seeded.tests[0].objects == seed
    assert seeded.tests[0].error is None
    # the whole tree is explored either way: the same paths, errors at the same sites
    assert len(seeded.tests) == len(plain.tests)
    assert sorted(e.site for e in seeded.errors) == sorted(e.site for e in plain.errors)


def test_seeds_with_workers_explore_the_same_paths(tmp_path: Path) -> None:
    program = symex.compile(write(tmp_path, "three.c", THREE_BYTES))
    seeds = [{"b": b"q77"}, {"b": b"xz\x01"}]
    result = symex.explore(program, searcher="bfs", max_time=60, workers=2,
                           parallel_backend="in-process", seeds=seeds)
    assert sorted(t.stdout for t in result.tests) == [b"equal\n", b"other\n", b"x big\n",
                                                      b"x small\n"]
    # the paths the seeds took have the seeds as their tests
    assert {t.objects["b"] for t in result.tests} >= {b"q77", b"xz\x01"}


def test_seeds_are_checked(tmp_path: Path) -> None:
    program = symex.compile(write(tmp_path, "three.c", THREE_BYTES))
    with pytest.raises(ConfigError, match="mapping"):
        symex.explore(program, seeds=[b"x"])  # type: ignore[list-item]


def _symex(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "symex.cli", *args], capture_output=True, text=True,
                          timeout=300)


def test_the_command_line_takes_seed_files_and_an_earlier_runs_tests(tmp_path: Path) -> None:
    source = write(tmp_path, "commands.c", COMMANDS)
    seed = tmp_path / "delete.ktest"
    write_ktest(seed, KTest((), (KTestObject("packet", b"delete zz\n"),)))
    out = tmp_path / "out"
    done = _symex("run", "-q", "--output-dir", str(out), "--seed-file", str(seed),
                  "--stop-at", "handle_delete", str(source))
    assert done.returncode == 0, done.stderr
    # the run stopped on the seed's path, the first to end (its test is the seed)
    first = read_ktest(out / "test000001.ktest")
    assert first.objects[0].data.startswith(b"delete zz\n")
    assert (out / "tests.csv").read_text().splitlines()[1].startswith("1,completed,")
    assert "stopped: reached handle_delete" in (out / "info").read_text()

    # an earlier run's output directory seeds a new run: the first path to end is one of
    # that run's tests, input for input
    earlier = {read_ktest(p).objects[0].data for p in out.glob("*.ktest")}
    again = tmp_path / "again"
    done = _symex("run", "-q", "--output-dir", str(again), "--seed-dir", str(out),
                  "--max-instructions", "20000", str(source))
    assert done.returncode == 0, done.stderr
    assert read_ktest(again / "test000001.ktest").objects[0].data in earlier

    missing = _symex("run", "-q", "--seed-file", str(tmp_path / "nope.ktest"), str(source))
    assert missing.returncode == 2
    assert "nope.ktest" in missing.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    none = _symex("run", "-q", "--seed-dir", str(empty), str(source))
    assert none.returncode == 2
    assert "no .ktest files" in none.stderr
