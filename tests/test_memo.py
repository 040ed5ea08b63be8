"""Memoized exploration: the execution tree recorded in SQLite, replayed, pruned and resumed.

The expected paths come from the programs themselves: branches.c has 2^N paths, one per
combination of its N independent comparisons, and exits with the number taken (decision 1 is
"b[i] > 100", so a path's exit code is the sum of its decisions); loop.c has one path per
string length, each one branch deeper than the last.
"""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

import symex
from symex.core.outcome import PathStatus
from symex.errors import SymexError
from symex.memo import RecordedTree, NodeStatus, TreeFileError
from symex.core.forks import ForkKind

PROGRAMS = Path(__file__).parent / "programs"
BRANCHES = PROGRAMS / "branches.c"
CHECKS = PROGRAMS / "memo" / "checks.c"
LOOP = PROGRAMS / "memo" / "loop.c"


def completed_paths(result: symex.Result) -> set[tuple[int, ...]]:
    """The decision sequences of the paths that ended normally."""
    return {t.path for t in result.tests if t.status is PathStatus.COMPLETED}


def cli(*args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``symex ARGS`` in a new process."""
    return subprocess.run([sys.executable, "-m", "symex.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout)


# -- recording and the reader ---------------------------------------------------------------

def test_the_reader_walks_a_recorded_tree(tmp_path: Path) -> None:
    program = symex.compile(BRANCHES, ["-DN=3"])
    result = symex.explore(program, record_tree=tmp_path / "tree.db")
    with RecordedTree.open(tmp_path / "tree.db") as tree:
        assert tree.program == "branches.c" and "entry main" in tree.inputs
        forks = [n for n in tree.nodes() if n.status is NodeStatus.FORK]
        leaves = list(tree.leaves())
        # 3 independent branches: a full binary tree of 7 forks and 8 paths
        assert len(forks) == 7 and len(leaves) == 8
        assert all(n.fork_kind is ForkKind.BRANCH and n.site.line == 12 for n in forks)
        assert {leaf.path for leaf in leaves} == {(a, b, c) for a in (0, 1) for b in (0, 1)
                                                 for c in (0, 1)}
        for leaf in leaves:
            assert leaf.status is NodeStatus.COMPLETED
            # count++ for each "b[i] > 100" taken: the exit code is the sum of the decisions
            assert leaf.exit_code == sum(leaf.path)
            (byte_values,) = tree.inputs_of(leaf).values()
            assert [int(v > 100) for v in byte_values] == list(leaf.path)
        root = tree.root
        assert root.parent is None and root.path == ()
        assert [c.decision for c in tree.children(root)] == [1, 0]
        assert sum(n.instructions for n in tree.nodes()) == result.statistics.instructions
    # the recorded paths are the explored ones
    assert {leaf.path for leaf in leaves} == completed_paths(result)


def test_the_tree_holds_every_kind_of_decision_and_how_each_path_ended(tmp_path: Path) -> None:
    result = symex.explore(symex.compile(CHECKS), record_tree=tmp_path / "tree.db")
    with RecordedTree.open(tmp_path) as tree:
        kinds = {n.fork_kind for n in tree.nodes() if n.status is NodeStatus.FORK}
        # b[i] > b[i+1]: branches; 100 / (b[1] - b[2]): an error check; table[b[3]]: a
        # symbolic pointer; switch (b[1] & 3): a switch
        assert kinds == {ForkKind.BRANCH, ForkKind.ERROR_CHECK, ForkKind.POINTER,
                         ForkKind.SWITCH}
        errors = {(n.path, n.error_kind) for n in tree.leaves() if n.status is NodeStatus.ERROR}
        assert errors == {(t.path, t.error.kind) for t in result.tests if t.error is not None}
        assert {kind.value for _, kind in errors} == {"div", "ptr"}
        # the symbolic index was resolved to an object chosen from the inputs: a VALUE answer
        # (an address: segment << 32) logged before the pointer fork
        pointer_forks = [n for n in tree.nodes() if n.fork_kind is ForkKind.POINTER]
        assert all(any(tag == "VALUE" and value >> 32 for tag, value in tree.answers_of(n))
                   for n in pointer_forks)
        exits = {n.path: n.exit_code for n in tree.leaves() if n.status is NodeStatus.COMPLETED}
        assert exits == {t.path: t.exit_code for t in result.tests
                         if t.status is PathStatus.COMPLETED}


def test_record_tree_refuses_an_existing_file(tmp_path: Path) -> None:
    program = symex.compile(BRANCHES, ["-DN=2"])
    symex.explore(program, record_tree=tmp_path / "tree.db")
    with pytest.raises(TreeFileError, match="already exists"):
        symex.explore(program, record_tree=tmp_path / "tree.db")


# -- resume -----------------------------------------------------------------------------------

def test_a_run_stopped_by_its_time_limit_is_continued_without_repeating_a_path(
        tmp_path: Path) -> None:
    program = symex.compile(BRANCHES, ["-DN=12"])  # 4,096 paths
    whole = symex.explore(program)
    first = symex.explore(program, record_tree=tmp_path / "tree.db", max_time=0.2)
    assert first.halted == "max-time reached"
    assert 0 < first.paths.completed < 4096
    second = symex.explore(program, continue_with=tmp_path / "tree.db")
    assert second.halted is None
    before, after = completed_paths(first), completed_paths(second)
    assert not before & after  # no path explored twice
    assert before | after == completed_paths(whole)
    assert len(completed_paths(whole)) == 4096
    # the paths the limit cut were resumed; finished subtrees were pruned, not re-run
    assert second.statistics.memo.pruned_states > 0
    assert second.statistics.instructions < whole.statistics.instructions
    # and now nothing is left
    third = symex.explore(program, continue_with=tmp_path / "tree.db")
    assert third.paths.total == 0
    assert any("fully explored" in m for m in third.messages)


@pytest.mark.slow
def test_sigkill_while_recording_loses_nothing_recorded(tmp_path: Path) -> None:
    (tmp_path / "branches.c").write_text(BRANCHES.read_text())
    process = subprocess.Popen(
        [sys.executable, "-m", "symex.cli", "run", "-q", "--record-tree", "--output-dir", "out",
         "-D", "N=15", "branches.c"], cwd=tmp_path, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)
    tree_file = tmp_path / "out" / "tree.db"
    deadline = time.monotonic() + 120
    # kill it once a good part of the tree is on disk, long before its 32,768 paths are done
    while time.monotonic() < deadline:
        time.sleep(0.2)
        if tree_file.exists():
            with sqlite3.connect(f"{tree_file.resolve().as_uri()}?mode=ro", uri=True) as db:
                try:
                    if db.execute("SELECT COUNT(*) FROM node").fetchone()[0] > 4000:
                        break
                except sqlite3.Error:
                    pass
    process.send_signal(signal.SIGKILL)
    process.wait()
    with RecordedTree.open(tmp_path / "out") as tree:
        recorded = {n.path for n in tree.leaves() if n.status is NodeStatus.COMPLETED}
        unexplored = [n for n in tree.leaves() if n.status is NodeStatus.OPEN]
    assert 1000 < len(recorded) < 32768
    assert unexplored  # paths that were running when the process died
    program = symex.compile(tmp_path / "branches.c", ["-DN=15"])
    rest = symex.explore(program, continue_with=tmp_path / "out")
    assert not completed_paths(rest) & recorded
    assert len(completed_paths(rest) | recorded) == 32768


def test_iterative_deepening_pays_only_for_the_new_levels(tmp_path: Path) -> None:
    program = symex.compile(LOOP)
    seen: set[tuple[int, ...]] = set()
    new_per_step = []
    for depth in (10, 15, 20):
        where = {"record_tree": tmp_path / "tree.db"} if depth == 10 else \
            {"continue_with": tmp_path / "tree.db"}
        step = symex.explore(program, max_depth=depth, **where)
        fresh = symex.explore(program, max_depth=depth)
        mine = completed_paths(step)
        assert not mine & seen
        seen |= mine
        # the union of the steps is what one run to this depth completes
        assert seen == completed_paths(fresh)
        new_per_step.append(len(mine))
        if depth > 10:
            memo = step.statistics.memo
            assert memo.replayed_instructions > 0
            # only the five new levels are executed anew
            assert memo.new_instructions < fresh.statistics.instructions / 2
    # a path per string length: lengths 0-9, then 10-14, then 15-19
    assert new_per_step == [10, 5, 5]


# -- replay -----------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("solver", ["z3", "bitwuzla", "cvc5"])
def test_pure_replay_in_a_new_process_writes_the_same_tests_without_a_query(
        tmp_path: Path, solver: str) -> None:
    (tmp_path / "checks.c").write_text(CHECKS.read_text())
    recorded = cli("run", "-q", "--solver", solver, "--record-tree", "--output-dir", "record",
                   "checks.c", cwd=tmp_path)
    assert recorded.returncode == 0, recorded.stderr
    replayed = cli("run", "-q", "--solver", solver, "--continue-with", "record",
                   "--restart-all-states", "--stop-after-replay", "--output-dir", "replay",
                   "checks.c", cwd=tmp_path)
    assert replayed.returncode == 0, replayed.stderr
    record, replay = tmp_path / "record", tmp_path / "replay"
    tests = sorted(p.name for p in record.glob("test*"))
    assert len([t for t in tests if t.endswith(".ktest")]) > 100
    assert any(t.endswith(".div.err") for t in tests) and any(t.endswith(".ptr.err") for t in tests)
    assert tests == sorted(p.name for p in replay.glob("test*"))
    for name in tests:
        assert (record / name).read_bytes() == (replay / name).read_bytes(), name
    with sqlite3.connect(replay / "run.stats") as db:
        queries, irepl, inew, qrepl = db.execute(
            "SELECT NumQueries, Irepl, Inew, Qrepl FROM stats ORDER BY Row DESC LIMIT 1").fetchone()
    assert queries == 0 and inew == 0 and irepl > 0 and qrepl > 0


def test_a_changed_constant_diverges_and_only_its_subtree_is_explored_again(
        tmp_path: Path) -> None:
    source = tmp_path / "prog.c"
    source.write_text("""\
#include <klee/klee.h>
int main(void) {
  unsigned char a[3];
  klee_make_symbolic(a, sizeof a, "a");
  int r = 0;
  if (a[0] > 10) {
    if (a[1] > LIMIT) r = 1; else r = 2;
    if (a[2] > 5) r += 4;
  } else {
    if (a[1] > 20) r = 3; else r = 4;
    if (a[2] > 5) r += 4;
  }
  return r;
}
""")
    first = symex.explore(symex.compile(source, ["-DLIMIT=30"]), record_tree=tmp_path / "tree.db")
    assert first.paths.completed == 8
    changed = symex.compile(source, ["-DLIMIT=60"])
    second = symex.explore(changed, continue_with=tmp_path / "tree.db")
    memo = second.statistics.memo
    assert memo.diverged_states == 1 and memo.lost_instructions > 0
    assert any("changed since" in m for m in second.messages)
    assert any("diverged from the recorded tree" in m and "prog.c:7" in m
               for m in second.messages)
    # the changed subtree (a[0] > 10) is explored again: its 4 paths, with inputs for the new
    # constant; the 4 paths of the other subtree are checked by replay and not explored again
    assert second.paths.completed == 4 and memo.pruned_states == 4
    for test in second.tests:
        a0, a1, _ = test.objects["a"]
        assert a0 > 10
        assert (a1 > 60) == (test.exit_code in (1, 5))
    # the tree now belongs to the changed program: nothing left to do
    third = symex.explore(changed, continue_with=tmp_path / "tree.db")
    assert third.paths.total == 0 and third.statistics.memo.diverged_states == 0


# -- the command line -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def recorded_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("memo_cli")
    (work / "branches.c").write_text(BRANCHES.read_text())
    (work / "other.c").write_text(BRANCHES.read_text())
    proc = cli("run", "-q", "--record-tree", "--max-instructions", "300", "-D", "N=6",
               "branches.c", "--sym-stdin", "4", cwd=work)
    assert proc.returncode == 0, proc.stderr
    return work


def test_cli_continue_extends_the_tree_and_stats_show_moklees_columns(recorded_dir: Path) -> None:
    work = recorded_dir
    before = RecordedTree.open(work / "symex-out-0")
    cut = [n for n in before.leaves() if n.status is NodeStatus.CUT]
    before.close()
    assert cut  # the instruction limit stopped some paths
    proc = cli("run", "-q", "--continue-with", "symex-out-0", "-D", "N=6", "branches.c",
               "--sym-stdin", "4", cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert "execution tree:" in proc.stdout
    assert not (work / "symex-out-1" / "tree.db").exists()  # extended in place
    with RecordedTree.open(work / "symex-out-0") as tree:
        assert not [n for n in tree.leaves() if n.status.resumable]
        assert len([n for n in tree.leaves() if n.status is NodeStatus.COMPLETED]) == 64
    stats = cli("stats", "--print-all", "--csv", "symex-out-0", "symex-out-1", cwd=work)
    assert stats.returncode == 0, stats.stderr
    header, first, second, _total = [line.split(",") for line in stats.stdout.splitlines()]
    columns = dict(zip(header, second))
    for name in ("Irepl", "Inew", "Ilost", "SDiv", "SPrepl", "Qrepl", "PTTime(s)", "TreeBytes",
                 "BytesPerNode"):
        assert name in header
    assert int(columns["Irepl"]) > 0 and int(columns["SPrepl"]) > 0
    assert int(dict(zip(header, first))["Irepl"]) == 0


def test_cli_record_tree_with_continue_copies_and_keeps_the_original(recorded_dir: Path) -> None:
    work = recorded_dir
    original = (work / "symex-out-0" / "tree.db").read_bytes()
    # the module's tree, extended or not by the test above (pytest-xdist may run that one
    # in another process, with a tree of its own)
    with RecordedTree.open(work / "symex-out-0") as before:
        recorded = len(before)
    proc = cli("run", "-q", "--continue-with", "symex-out-0", "--record-tree",
               "--restart-all-states", "--stop-after-replay", "--output-dir", "copy", "-D",
               "N=6", "branches.c", "--sym-stdin", "4", cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert (work / "symex-out-0" / "tree.db").read_bytes() == original
    with RecordedTree.open(work / "copy") as tree:
        assert len(tree) >= recorded > 10  # every recorded node, replayed into the copy


@pytest.mark.parametrize("case", ["garbage", "truncated", "newer", "older", "other-inputs",
                                  "other-program", "no-tree", "replay-without-tree"])
def test_cli_bad_trees_are_one_line_and_exit_2_and_nothing_is_written(
        recorded_dir: Path, tmp_path: Path, case: str) -> None:
    work = tmp_path
    (work / "branches.c").write_text(BRANCHES.read_text())
    (work / "other.c").write_text(BRANCHES.read_text())
    source = recorded_dir / "symex-out-0" / "tree.db"
    (work / "old").mkdir()
    tree = work / "old" / "tree.db"
    program, inputs = "branches.c", ["--sym-stdin", "4"]
    data = source.read_bytes()
    if case == "garbage":
        tree.write_bytes(b"this is not a database" * 100)
    elif case == "truncated":
        tree.write_bytes(data[:len(data) // 2])
    elif case in ("newer", "older"):
        tree.write_bytes(data)
        with sqlite3.connect(tree) as db:
            db.execute("UPDATE meta SET value = ? WHERE key = 'version'",
                       ("99" if case == "newer" else "1",))
    else:
        tree.write_bytes(data)
    if case == "other-inputs":
        inputs = ["--sym-stdin", "8"]
    if case == "other-program":
        program = "other.c"
    if case == "no-tree":
        tree.unlink()
    before = tree.read_bytes() if tree.exists() else None
    options = ["--continue-with", "old"]
    if case == "replay-without-tree":
        options = ["--stop-after-replay"]
    proc = cli("run", "-q", *options, "-D", "N=6", program, *inputs, cwd=work)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    message = proc.stderr.strip()
    assert "\n" not in message and message.startswith("symex: error:")
    expected = {"garbage": "not an execution tree", "truncated": "not an execution tree",
                "newer": "newer symex", "older": "record the tree again",
                "other-inputs": "--sym-stdin 4",
                "other-program": "branches.c", "no-tree": "holds no tree.db",
                "replay-without-tree": "--continue-with"}[case]
    assert expected in message
    if case == "other-inputs":
        assert "--sym-stdin 8" in message
    if case == "other-program":
        assert "other.c" in message
    assert not list(work.glob("symex-out-*"))
    if before is not None:
        assert tree.read_bytes() == before


def test_explore_checks_its_options() -> None:
    program = symex.compile(BRANCHES, ["-DN=2"])
    with pytest.raises(SymexError, match="continue_with"):
        symex.explore(program, stop_after_replay=True)
    with pytest.raises(SymexError, match="random-path"):
        symex.explore(program, continue_with="x", replay_searcher="random-path")


def test_new_node_ids_never_reuse_a_forks_unrecorded_child(tmp_path: Path) -> None:
    # a fork reserves an id per child; a child still open has no row, and a continuing run
    # must not give its id to another node (two rows would fight over one id)
    from symex.memo.store import TreeStore

    store = TreeStore.create(tmp_path / "tree.db", {"program": "p"})
    branch = int(ForkKind.BRANCH)
    # root forks into 2 and 3; 2 ended; 3 (the last child) has no row yet
    store.write_node((1, None, 0, int(NodeStatus.FORK), branch, None, None, 5, 0, 0, 0, 2,
                      None, None, None))
    store.write_node((2, 1, 1, int(NodeStatus.COMPLETED), None, 0, None, 3, 0, 0, 0, None,
                      None, None, None))
    store.flush()
    assert store.max_id() == 3
    store.close()


def test_a_tree_continued_after_a_change_of_compiler_says_so(tmp_path: Path) -> None:
    """The IR of the same source from another compiler differs (its !llvm.ident at least):
    the run names both compilers instead of calling the program changed."""
    from symex.ir.compile import compile_c

    ll = compile_c(BRANCHES, ["-DN=3"]).read_text()
    assert 'clang version' in ll and '!llvm.ident' in ll
    program = tmp_path / "branches.ll"
    program.write_text(ll)
    proc = cli("run", "-q", "--record-tree", "branches.ll", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    ident = next(line for line in ll.splitlines() if line.startswith("!") and '!{!"' in line
                 and "clang version" in line)
    before = ident.split('"')[1]
    # a version no machine has, so the test holds whichever clang compiled it
    other = "Debian clang version 1.0.0" if "1.0.0" not in before else "Debian clang version 2.0.0"
    program.write_text(ll.replace(ident, ident.replace(before, other)))
    proc = cli("run", "-q", "--continue-with", "symex-out-0", "branches.ll", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (f"branches.ll was compiled by {before} when symex-out-0/tree.db was recorded and "
            f"by {other} now, so its IR differs") in proc.stderr


def test_an_interrupt_while_rows_are_written_loses_none_and_the_tree_still_closes(
        tmp_path: Path) -> None:
    """A Ctrl-C lands in the middle of a flush (a run's last statistics, a scheduler's
    second SIGINT): the half-written transaction is rolled back, the rows stay queued, and
    closing writes them; before, the open statement made closing fail ("database table is
    locked") and the run ended in a traceback."""
    from symex.memo.store import TreeStore

    class InterruptedOnce:
        """A column value whose conversion is where the interrupt lands."""
        raised = False

        def __conform__(self, protocol: object) -> int:
            if not InterruptedOnce.raised:
                InterruptedOnce.raised = True
                raise KeyboardInterrupt
            return 4

    store = TreeStore.create(tmp_path / "tree.db", {"program": "p"})
    completed = int(NodeStatus.COMPLETED)
    store.write_node((1, None, 0, int(NodeStatus.FORK), int(ForkKind.BRANCH), None, None, 5,
                      0, 0, 0, 2, None, None, None))
    store.write_node((2, 1, 1, completed, None, 0, None, 3, 0, 0, 0, None, None, None, None))
    store.write_node((3, 1, 0, completed, None, 0, None, InterruptedOnce(), 0, 0, 0, None,
                      None, None, None))
    with pytest.raises(KeyboardInterrupt):
        store.flush()
    store.close()
    again = TreeStore.open(tmp_path / "tree.db", writable=False)
    try:
        rows = again._db.execute("SELECT id, instructions FROM node ORDER BY id").fetchall()
    finally:
        again.close()
    assert rows == [(1, 5), (2, 3), (3, 4)]
