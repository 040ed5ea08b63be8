"""Parallel exploration: the same paths, errors and coverage with any number of workers, in
this process or in worker processes; balancing moves work to idle workers; a killed worker
loses nothing; jobs rebuild their states by replay."""

from __future__ import annotations

import importlib.util
import multiprocessing
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

import symex
from symex.errors import ConfigError
from symex.output.ktest import read_ktest
from symex.parallel.balancing import LoadBalancer, Move
from symex.parallel.worker import StepOrder, Worker
from symex.description import RunDescription
from symex.memo import RecordedTree
from symex.memo.format import encode_varints
from symex.parallel.jobs import ROOT_JOB, Job

from c_programs import write

PROGRAMS = Path(__file__).parent / "programs"

#: 2^10 paths, one branch per input byte
EXHAUSTIVE = """
    #include <klee/klee.h>
    int main(void) {
      unsigned char b[10];
      klee_make_symbolic(b, sizeof b, "b");
      int n = 0;
      for (int i = 0; i < 10; i++)
        if (b[i] > 100)
          n++;
      return n;
    }
"""

#: all the work is below one side of the first branch: 2^9 paths under b[0] == 42
SKEWED = """
    #include <klee/klee.h>
    int main(void) {
      unsigned char b[10];
      klee_make_symbolic(b, sizeof b, "b");
      if (b[0] != 42)
        return 0;
      int n = 0;
      for (int i = 1; i < 10; i++)
        if (b[i] > 100)
          n++;
      return n;
    }
"""


def outcome(result: symex.Result) -> tuple[object, ...]:
    """What must not depend on the number of workers: the paths (decision sequences) with
    how each ended, the error sites and the coverage."""
    paths = sorted((t.path, t.status.value, t.error.kind.value if t.error else None)
                   for t in result.tests)
    errors = sorted((e.kind.value, e.site) for e in result.errors)
    return (paths, result.paths, errors, result.coverage.covered_lines,
            result.coverage.covered_branches, result.coverage.covered_instructions)


def no_duplicates(result: symex.Result) -> None:
    paths = [t.path for t in result.tests]
    assert len(paths) == len(set(paths))


@pytest.fixture(scope="module")
def exhaustive(tmp_path_factory: pytest.TempPathFactory) -> symex.Program:
    return symex.compile(write(tmp_path_factory.mktemp("exhaustive"), "exhaustive.c", EXHAUSTIVE))


@pytest.mark.parametrize("backend", ["in-process", "processes"])
@pytest.mark.parametrize("workers", [1, 2, 4])
def test_exhaustive_program_same_paths_with_any_number_of_workers(
        exhaustive: symex.Program, backend: str, workers: int) -> None:
    alone = symex.explore(exhaustive)
    assert alone.paths.completed == 2 ** 10
    split = symex.explore(exhaustive, workers=workers, parallel_backend=backend)
    assert outcome(split) == outcome(alone)
    no_duplicates(split)
    assert split.statistics.parallel is not None
    assert split.statistics.parallel.workers == workers
    assert split.statistics.parallel.backend == backend
    if workers > 1:
        # the tree was split: more than the root job ran, on more than one worker
        assert split.statistics.parallel.jobs > 1
        busy = [row for row in split.statistics.parallel.per_worker if row.instructions]
        assert len(busy) > 1


@pytest.mark.slow
@pytest.mark.parametrize("workers", [2, 4])
def test_regexp_same_paths_errors_and_coverage(workers: int) -> None:
    program = symex.compile(PROGRAMS / "regexp.c")
    alone = symex.explore(program)
    split = symex.explore(program, workers=workers)
    assert outcome(split) == outcome(alone)
    no_duplicates(split)
    assert alone.errors  # the matcher reads out of bounds: errors are compared, not absent


def test_every_fork_kind_and_concretized_values_replay_on_other_workers() -> None:
    # branches, an error check, a symbolic index, a switch and a printf of a symbolic byte:
    # moved states rebuild through every kind of recorded answer
    program = symex.compile(PROGRAMS / "memo" / "checks.c")
    alone = symex.explore(program)
    split = symex.explore(program, workers=3, parallel_backend="in-process", balance_ratio=1.0)
    assert outcome(split) == outcome(alone)
    assert split.statistics.parallel.jobs_moved > 0
    assert split.statistics.parallel.replayed_events > 0
    assert not [m for m in split.messages if "diverged" in m]


def test_sym_stdin_tokenizer_with_depth_limit_same_paths() -> None:
    program = symex.compile(PROGRAMS / "posix" / "tokens.c")
    alone = symex.explore(program, sym_stdin=4, max_depth=12)
    assert alone.paths.partial > 0  # the depth limit cuts paths: they must match too
    for backend in ("in-process", "processes"):
        split = symex.explore(program, sym_stdin=4, max_depth=12, workers=2,
                              parallel_backend=backend)
        assert outcome(split) == outcome(alone)
        no_duplicates(split)


def test_sigkill_of_a_worker_loses_no_path(exhaustive: symex.Program) -> None:
    alone = symex.explore(exhaustive)
    killed: list[int] = []

    def kill_one(test: symex.TestCase) -> None:
        # the hook runs in the coordinator: kill a worker process once 100 paths are in
        if not killed and len(seen) >= 100:
            worker = sorted(multiprocessing.active_children(), key=lambda p: p.name)[-1]
            killed.append(worker.pid)
            os.kill(worker.pid, signal.SIGKILL)
        seen.append(test)

    seen: list[symex.TestCase] = []
    split = symex.explore(exhaustive, workers=2, hooks=symex.Hooks(on_path_end=kill_one))
    assert killed
    assert split.statistics.parallel.lost_workers == 1
    assert outcome(split) == outcome(alone)
    no_duplicates(split)
    assert len(seen) == len(split.tests)  # a path reported twice reaches no hook twice
    assert any("was lost (killed by signal 9)" in m for m in split.messages)


def test_skewed_tree_moves_work_to_the_idle_worker(tmp_path: Path) -> None:
    program = symex.compile(write(tmp_path, "skewed.c", SKEWED))
    alone = symex.explore(program)
    split = symex.explore(program, workers=2, parallel_backend="in-process")
    assert outcome(split) == outcome(alone)
    stats = split.statistics.parallel
    assert stats.balancing_moves >= 1 and stats.jobs_moved >= 1
    rows = {row.worker: row for row in stats.per_worker}
    # worker 1 started with nothing: everything it did came by balancing
    assert rows[1].jobs >= 1 and rows[1].completed > 0
    assert rows[0].completed + rows[1].completed == alone.paths.completed


def test_a_job_rebuilds_its_state_by_replay_and_explores_only_below_it(
        exhaustive: symex.Program) -> None:
    settings = RunDescription()
    first = Worker(0, exhaustive, settings)
    second = Worker(1, exhaustive, settings)
    try:
        first.step(StepOrder(jobs=((0, ROOT_JOB),), seconds=0.05))
        report = first.step(StepOrder(give=1))
        (job,) = report.exported
        assert job.depth >= 1 and len(job.decisions()) == job.depth
        rebuilt = second.step(StepOrder(jobs=((1, job),), seconds=60.0))
        # everything below the job, nothing else: 2^(10 - depth) paths, each below it
        assert rebuilt.completed == 2 ** (10 - job.depth)
        assert all(t.path[:job.depth] == job.decisions() for t in rebuilt.tests)
        assert rebuilt.replayed_events >= job.depth
        assert rebuilt.finished_jobs == (1,)
    finally:
        first.close()
        second.close()


def test_initial_split_hands_the_first_forks_to_the_other_workers(
        exhaustive: symex.Program) -> None:
    # Cloud9's static split: the root explores until there is a state per worker, then all
    # but one go back as jobs; the four subtrees together are the whole tree, once
    first = Worker(0, exhaustive, RunDescription())
    second = Worker(1, exhaustive, RunDescription())
    try:
        split = first.step(StepOrder(jobs=((0, ROOT_JOB),), seconds=60.0, split=4))
        assert len(split.exported) == 3 and split.live == 1
        # one branch per byte, dfs: three forks down one path leave states of depth 1, 2,
        # 3 and 3; the three shallowest go
        assert sorted(job.depth for job in split.exported) == [1, 2, 3]
        rest = second.step(StepOrder(jobs=tuple(enumerate(split.exported, start=1)),
                                     seconds=60.0))
        own = first.step(StepOrder(seconds=60.0))
    finally:
        first.close()
        second.close()
    paths = [t.path for t in split.tests + rest.tests + own.tests]
    assert len(paths) == len(set(paths)) == 2 ** 10
    assert rest.finished_jobs == (1, 2, 3)


def test_replay_of_a_job_asks_the_solver_nothing(exhaustive: symex.Program) -> None:
    # the job "b[0..8] > 100", written by hand in the documented event format: at each of
    # the nine branches both sides were feasible (a split answer 2, tag 0), then the fork
    # took the true side (decision 1, tag 3)
    events = [2 << 2 | 0, 1 << 2 | 3] * 9
    job = Job(encode_varints(events), depth=9)
    assert job.decisions() == (1,) * 9
    settings = RunDescription.build(solver_chain=())
    worker = Worker(0, exhaustive, settings)
    try:
        report = worker.step(StepOrder(jobs=((7, job),), seconds=60.0))
    finally:
        worker.close()
    # the two paths below the job, and no others
    assert sorted(t.path for t in report.tests) == [(1,) * 9 + (0,), (1,) * 10]
    assert report.finished_jobs == (7,)
    assert report.replayed_events == 18
    # rebuilding nine forks asked nothing (without replay: a query per branch at least);
    # the tenth branch needs the state's inputs and the other side's: two queries
    assert report.solver_queries <= 2


def test_shared_solutions_answer_queries_a_worker_never_solved(exhaustive: symex.Program) -> None:
    # Cloud9's distributed cache of solutions: the second worker explores the same subtree as
    # the first, given the models the first one's solver found. Every query it asks is one
    # the first solved (the exploration is the same, and every query here is satisfiable:
    # each byte's branch is open both ways), so none reaches its own solver.
    settings = RunDescription()
    first = Worker(0, exhaustive, settings)
    second = Worker(1, exhaustive, settings)
    try:
        solved = first.step(StepOrder(jobs=((0, ROOT_JOB),), seconds=60.0))
        assert solved.completed == 2 ** 10 and solved.solver_queries > 0
        assert len(solved.solutions) == solved.solver_queries  # each model is offered
        answered = second.step(StepOrder(jobs=((0, ROOT_JOB),), seconds=60.0,
                                         solutions=solved.solutions))
    finally:
        first.close()
        second.close()
    assert answered.completed == 2 ** 10
    assert answered.solver_queries == 0
    assert answered.shared_hits == solved.solver_queries
    # the same tests: a model from elsewhere is the model the solver gave there
    assert [t.objects for t in answered.tests] == [t.objects for t in solved.tests]


#: one infeasible branch per byte: b[i] < 50 under b[i] > 100
REFUTED = """
    #include <klee/klee.h>
    int main(void) {
      unsigned char b[3];
      klee_make_symbolic(b, sizeof b, "b");
      int n = 0;
      for (int i = 0; i < 3; i++)
        if (b[i] > 100) {
          if (b[i] < 50)
            n += 100;
          n++;
        }
      return n;
    }
"""


def test_shared_refutations_answer_unsatisfiable_queries_a_worker_never_solved(
        tmp_path: Path) -> None:
    # a constraint set one worker's solver found unsatisfiable is unsatisfiable for every
    # worker: here {b[i] > 100, b[i] < 50} for each of the three bytes (independence slicing
    # leaves only the byte's own constraints, so each is solved once, whatever the prefix).
    # A worker told them, and the models, explores the same tree without its own solver.
    program = symex.compile(write(tmp_path, "refuted.c", REFUTED))
    settings = RunDescription()
    first = Worker(0, program, settings)
    second = Worker(1, program, settings)
    try:
        solved = first.step(StepOrder(jobs=((0, ROOT_JOB),), seconds=60.0))
        answered = second.step(StepOrder(jobs=((0, ROOT_JOB),), seconds=60.0,
                                         solutions=solved.solutions,
                                         refutations=solved.refutations))
    finally:
        first.close()
        second.close()
    assert solved.completed == 2 ** 3
    assert len(solved.refutations) == 3
    assert len(solved.solutions) + 3 == solved.solver_queries
    assert sorted(t.path for t in answered.tests) == sorted(t.path for t in solved.tests)
    assert answered.solver_queries == 0
    assert answered.shared_hits == solved.solver_queries


def test_a_refutation_is_used_only_for_a_query_that_holds_it() -> None:
    # a refuted set answers "unsatisfiable" only for a query holding those very expressions
    # (sent as expressions, not digests): a query over another byte, or a weaker bound, is not
    # refuted
    from symex import expr as E
    from symex.solvers.shared import SharedSolutions

    arrays: dict[str, E.Array] = {}

    def array_of(name: str, size: int, initial: bytes | None) -> E.Array:
        return arrays.setdefault(name, E.Array(name, size, initial))

    b = array_of("b", 2, None)

    def byte(i: int) -> E.Expr:
        return E.read(E.UpdateList(b), E.const(i, 32))

    sender = SharedSolutions()
    sender.publish_unsat([E.ugt(byte(0), E.const(100, 8)), E.ult(byte(0), E.const(50, 8))])
    receiver = SharedSolutions()
    receiver.add_refutations(sender.take_refuted(), array_of)
    above, below = E.ugt(byte(0), E.const(100, 8)), E.ult(byte(0), E.const(50, 8))
    assert receiver.refutes(frozenset({above, below, E.ugt(byte(1), E.const(3, 8))}))
    assert not receiver.refutes(frozenset({above, E.ult(byte(0), E.const(150, 8))}))
    assert not receiver.refutes(frozenset({E.ugt(byte(1), E.const(100, 8)),
                                           E.ult(byte(1), E.const(50, 8))}))
    assert receiver.refutation_hits == 1


def test_a_shared_solution_that_does_not_satisfy_the_query_is_not_used() -> None:
    # a digest collision or a same-named array must never give a wrong answer: the model
    # is checked by evaluation first
    from symex import expr as E
    from symex.solvers.shared import SharedSolutions

    shared = SharedSolutions()
    array = E.Array("b", 1)
    above = E.ugt(E.read(E.UpdateList(array), E.const(0, 32)), E.const(100, 8))
    key = shared.key([above])
    shared.add([(key, (("b", bytes([7])),))])  # 7 > 100 is false
    assert shared.lookup(key, [above], [array]) is None
    shared.add([(key + 1, (("b", bytes([200])),))])
    assert shared.lookup(key + 1, [above], [array]) == {array: bytes([200])}
    assert shared.hits == 1


def test_parallel_run_counts_shared_solutions(exhaustive: symex.Program) -> None:
    alone = symex.explore(exhaustive)
    split = symex.explore(exhaustive, workers=2, parallel_backend="in-process")
    assert outcome(split) == outcome(alone)
    stats = split.statistics.parallel
    assert stats.shared_solutions > 0
    assert stats.shared_cache_hits == sum(row.shared_hits for row in stats.per_worker)


def test_coverage_reached_elsewhere_is_not_new_to_a_worker(exhaustive: symex.Program) -> None:
    # global coverage: a worker told the blocks another reached neither reports them again
    # nor, with only_output_states_covering_new, writes tests for paths that cover nothing new
    settings = RunDescription.build(only_output_states_covering_new=True)
    first = Worker(0, exhaustive, settings)
    second = Worker(1, exhaustive, settings)
    try:
        reached = first.step(StepOrder(jobs=((0, ROOT_JOB),), seconds=60.0))
        told = second.step(StepOrder(jobs=((0, ROOT_JOB),), seconds=60.0,
                                     covered=tuple(sorted(reached.blocks))))
    finally:
        first.close()
        second.close()
    assert reached.tests and reached.blocks
    assert told.completed == 2 ** 10
    assert told.tests == () and told.blocks == frozenset()


@pytest.mark.parametrize("backend", ["in-process", "processes"])
def test_portfolio_of_strategies_finds_the_same_paths_and_reports_each(
        exhaustive: symex.Program, backend: str) -> None:
    alone = symex.explore(exhaustive)
    split = symex.explore(exhaustive, workers=3, parallel_backend=backend,
                          portfolio="dfs,random-path,nurs:covnew")
    assert outcome(split) == outcome(alone)
    stats = split.statistics.parallel
    assert [row.searcher for row in stats.per_worker] == ["dfs", "random-path", "nurs:covnew"]
    strategies = {row.searcher: row for row in stats.per_strategy}
    assert sorted(strategies) == ["dfs", "nurs:covnew", "random-path"]
    assert all(row.workers == 1 for row in stats.per_strategy)
    # every path is some strategy's (no worker was lost, so none was reported twice)
    assert sum(row.completed for row in stats.per_strategy) == 2 ** 10
    assert sum(row.instructions for row in stats.per_strategy) == split.statistics.instructions


def test_max_time_halts_every_worker_and_reports_open_paths_as_partial() -> None:
    # a time limit far below the run's length (regexp takes seconds): the run stops, every
    # open path ends as partial, nothing is lost; bfs keeps many paths open at once
    program = symex.compile(PROGRAMS / "regexp.c")
    result = symex.explore(program, workers=2, max_time=0.5, searcher="bfs")
    assert result.halted == "max-time reached"
    no_duplicates(result)
    assert result.paths.total == len(result.tests)
    assert result.paths.partial > 0
    # a partial path of the frontier carries the inputs that lead down its path
    assert all(t.objects for t in result.tests if t.status is symex.PathStatus.PARTIAL)


def finished(result: symex.Result) -> set[tuple[object, ...]]:
    """The paths that ended for good (not cut by a halt), with how they ended."""
    return {(t.path, t.status.value) for t in result.tests
            if not (t.status is symex.PathStatus.PARTIAL and t.reason == result.halted)}


@pytest.mark.parametrize("backend", ["in-process", "processes"])
def test_a_halted_run_resumes_from_its_journal(backend: str, tmp_path: Path) -> None:
    # a limit stops the first run; the second goes on from the journal's frontier:
    # together they find every path of one uninterrupted run, none twice. The limit is a
    # quarter of the work (not a second of time: two idle cores finished the run in one)
    program = symex.compile(PROGRAMS / "regexp.c")
    alone = symex.explore(program)
    journal = tmp_path / "jobs.db"
    first = symex.explore(program, workers=2, parallel_backend=backend,
                          max_instructions=alone.statistics.instructions // 4, journal=journal)
    assert first.halted == "max-instructions reached" and first.paths.partial > 0
    second = symex.explore(program, workers=2, parallel_backend=backend,
                           continue_with=journal)
    assert second.halted is None
    assert finished(first).isdisjoint(finished(second))
    assert finished(first) | finished(second) == finished(alone)
    assert first.paths.completed + second.paths.completed == alone.paths.completed
    assert any("resuming a parallel run" in m for m in second.messages)
    # the second run extended the journal in place: a third finds nothing left
    third = symex.explore(program, workers=2, parallel_backend=backend, continue_with=journal)
    assert third.paths.total == 0
    assert any("nothing is left to explore" in m for m in third.messages)


def test_a_journal_of_another_program_is_refused(exhaustive: symex.Program,
                                                 tmp_path: Path) -> None:
    with pytest.raises(symex.SymexError, match="does not exist"):
        symex.explore(exhaustive, workers=2, continue_with=tmp_path / "missing")
    symex.explore(exhaustive, workers=2, parallel_backend="in-process",
                  journal=tmp_path / "jobs.db")
    other = symex.compile(write(tmp_path, "skewed.c", SKEWED))
    with pytest.raises(symex.SymexError, match="belongs to another run"):
        symex.explore(other, workers=2, continue_with=tmp_path / "jobs.db")


def tree_by_path(path: Path) -> dict[tuple[int, ...], tuple[object, ...]]:
    """A recorded tree's nodes by their paths (node ids depend on the order rows were
    written): how each segment ended, where, after how many instructions, its digest, its
    children's decisions, and whether it holds test inputs. Not the answers a segment took
    nor the inputs' bytes: those come from models, and two solvers may find other ones."""
    with RecordedTree.open(path) as tree:
        return {node.path: (node.status, node.fork_kind, node.error_kind, node.exit_code,
                            node.reason, node.site, node.instructions, node.hash,
                            tuple(d for d, _ in node.children), tree.inputs_of(node) is not None)
                for node in tree.nodes()}


@pytest.mark.parametrize("backend", ["in-process", "processes"])
def test_a_parallel_run_records_the_tree_one_process_records(backend: str,
                                                            tmp_path: Path) -> None:
    # the tokenizer: answers (values read from stdin), errors of the model, depth-cut paths
    program = symex.compile(PROGRAMS / "posix" / "tokens.c")
    alone = symex.explore(program, sym_stdin=4, max_depth=12, record_tree=tmp_path / "one.db")
    split = symex.explore(program, sym_stdin=4, max_depth=12, workers=2,
                          parallel_backend=backend, record_tree=tmp_path / "split.db")
    assert outcome(split) == outcome(alone)
    expected = tree_by_path(tmp_path / "one.db")
    assert tree_by_path(tmp_path / "split.db") == expected
    assert split.statistics.memo is not None
    assert split.statistics.memo.tree_nodes == len(expected)
    # the workers' tree replays in one process exactly as recorded: no divergence
    again = symex.explore(program, sym_stdin=4, max_depth=12,
                          continue_with=tmp_path / "split.db", restart_all_states=True)
    assert again.paths == alone.paths
    assert again.statistics.memo.diverged_states == 0
    assert again.statistics.memo.new_instructions == 0


def test_a_halted_parallel_runs_tree_is_finished_by_one_process(tmp_path: Path) -> None:
    # states handed back at the halt leave their nodes open: a run in one process continues
    # the tree from there and finds exactly the paths the first run did not finish
    program = symex.compile(PROGRAMS / "regexp.c")
    first = symex.explore(program, workers=2, max_time=1.0, record_tree=tmp_path / "t.db")
    assert first.halted == "max-time reached"
    rest = symex.explore(program, continue_with=tmp_path / "t.db")
    assert rest.halted is None and rest.statistics.memo.diverged_states == 0
    done = {t.path for t in first.tests if t.status is not symex.PathStatus.PARTIAL}
    assert done.isdisjoint(t.path for t in rest.tests)
    assert len(done) + rest.paths.total == 5204  # regexp's paths (test_regexp_same_paths...)
    assert symex.explore(program, continue_with=tmp_path / "t.db").paths.total == 0


def test_a_lost_workers_rows_are_written_once(exhaustive: symex.Program,
                                              tmp_path: Path) -> None:
    # the jobs of a SIGKILLed worker run again elsewhere: the tree has each node once,
    # and is the tree of one process
    symex.explore(exhaustive, record_tree=tmp_path / "one.db")
    killed: list[int] = []

    def kill_one(test: symex.TestCase) -> None:
        if not killed and test.path[:1] == (1,):
            worker = sorted(multiprocessing.active_children(), key=lambda p: p.name)[-1]
            killed.append(worker.pid)
            os.kill(worker.pid, signal.SIGKILL)

    split = symex.explore(exhaustive, workers=2, record_tree=tmp_path / "split.db",
                          hooks=symex.Hooks(on_path_end=kill_one))
    assert killed and split.statistics.parallel.lost_workers == 1
    assert tree_by_path(tmp_path / "split.db") == tree_by_path(tmp_path / "one.db")


@pytest.mark.parametrize("backend", ["in-process", "processes"])
def test_a_resumed_parallel_run_goes_on_recording_the_tree(backend: str,
                                                           tmp_path: Path) -> None:
    # the journal's open jobs carry their nodes: the resumed run extends a copy of the
    # first run's tree, which ends up whole
    program = symex.compile(PROGRAMS / "regexp.c")
    first = symex.explore(program, workers=2, parallel_backend=backend, max_time=1.0,
                          journal=tmp_path / "jobs.db", record_tree=tmp_path / "t1.db")
    assert first.halted == "max-time reached"
    second = symex.explore(program, workers=2, parallel_backend=backend,
                           continue_with=tmp_path / "jobs.db", record_tree=tmp_path / "t2.db")
    assert second.halted is None
    nothing = symex.explore(program, continue_with=tmp_path / "t2.db")
    assert nothing.paths.total == 0
    assert any("fully explored" in m for m in nothing.messages)
    with RecordedTree.open(tmp_path / "t2.db") as tree:
        leaves = [n for n in tree.leaves()]
    assert len(leaves) == 5204 and len({n.path for n in leaves}) == 5204


def test_cli_workers_record_a_tree_one_process_continues(tmp_path: Path) -> None:
    source = write(tmp_path, "exhaustive.c", EXHAUSTIVE)
    proc = run_cli("run", "--workers", "2", "--record-tree", "-q", str(source), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "symex-out-0" / "tree.db").is_file()
    again = run_cli("run", "--continue-with", "symex-out-0", str(source), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "symex: explored 0 paths" in again.stdout
    assert "fully explored" in again.stderr + again.stdout
    # going on with workers from a run that recorded no tree cannot record one
    assert run_cli("run", "--workers", "2", "-q", str(source), cwd=tmp_path).returncode == 0
    refused = run_cli("run", "--workers", "2", "--continue-with", "symex-out-2",
                      "--record-tree", str(source), cwd=tmp_path)
    assert refused.returncode == 2
    assert "holds no tree.db" in refused.stderr


def regexp_run_with_1000_tests(tmp_path: Path) -> tuple[Path, Path, subprocess.Popen[str]]:
    """'symex run --workers 2' on regexp (5,204 paths) in the background, once 1,000 of its
    tests are written: the source, the output directory and the running process."""
    source = tmp_path / "regexp.c"
    source.write_text((PROGRAMS / "regexp.c").read_text())
    out = tmp_path / "symex-out-0"
    run = subprocess.Popen([sys.executable, "-m", "symex.cli", "run", "--workers", "2", "-q",
                            str(source)], cwd=tmp_path, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 600     # a safety net: the work is bounded (1,000 tests)
    try:
        while len(list(out.glob("*.ktest"))) < 1000:
            assert run.poll() is None, "the run ended before 1,000 tests"
            assert time.monotonic() < deadline
            time.sleep(0.05)
    except BaseException:
        run.kill()
        run.communicate()
        raise
    return source, out, run


@pytest.mark.slow
def test_cli_run_whose_coordinator_was_killed_resumes(tmp_path: Path) -> None:
    # SIGKILL of the coordinator process itself (its workers see the pipe close and exit);
    # --continue-with finds the rest: the journal's finished paths and the resumed run's
    # paths are all of regexp's 5,204 paths, none twice
    source, out, run = regexp_run_with_1000_tests(tmp_path)
    run.send_signal(signal.SIGKILL)
    # the workers hold the killed process's stdout: this returns once they have exited too
    # (no orphan left running), else it times out
    run.communicate(timeout=60)
    written = len(list(out.glob("*.ktest")))
    resumed = run_cli("run", "--workers", "2", "--continue-with", "symex-out-0", "-q",
                      str(source), cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    messages = (tmp_path / "symex-out-1" / "messages.txt").read_text()
    before = int(messages.split("open job(s), ")[1].split(" path(s)")[0])
    assert 0 < before <= written  # every path the journal calls finished has its test file
    line = next(row for row in resumed.stdout.splitlines() if row.startswith("symex: explored"))
    explored = int(line.split("explored ")[1].split(" paths")[0])
    assert before + explored == 5204


@pytest.mark.slow
def test_cli_ctrl_c_with_workers_stops_cleanly_and_the_run_resumes(tmp_path: Path) -> None:
    # Ctrl-C halts the run between two reports: every path the summary counts as completed
    # or failed is in the journal, the frontier's open paths are partial tests, and
    # --continue-with explores exactly the rest
    source, out, run = regexp_run_with_1000_tests(tmp_path)
    run.send_signal(signal.SIGINT)
    stdout, stderr = run.communicate(timeout=600)
    assert run.returncode == 130, stderr
    line = next(row for row in stdout.splitlines() if row.startswith("symex: explored"))
    completed = int(line.split(": ")[2].split(" completed")[0])
    errors = int(line.split("completed, ")[1].split(" errors")[0])
    partial = int(line.split("errors, ")[1].split(" partial")[0])
    assert partial > 0
    assert len(list(out.glob("*.ktest"))) == completed + errors + partial
    resumed = run_cli("run", "--workers", "2", "--continue-with", "symex-out-0", "-q",
                      str(source), cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    messages = (tmp_path / "symex-out-1" / "messages.txt").read_text()
    assert f"{completed + errors} path(s) finished before" in messages
    line = next(row for row in resumed.stdout.splitlines() if row.startswith("symex: explored"))
    assert completed + errors + int(line.split("explored ")[1].split(" paths")[0]) == 5204


def test_cli_continue_with_a_parallel_run_needs_workers(tmp_path: Path) -> None:
    source = write(tmp_path, "exhaustive.c", EXHAUSTIVE)
    assert run_cli("run", "--workers", "2", "-q", str(source), cwd=tmp_path).returncode == 0
    proc = run_cli("run", "--continue-with", "symex-out-0", str(source), cwd=tmp_path)
    assert proc.returncode == 2
    assert "continue it with --workers N" in proc.stderr
    again = run_cli("run", "--workers", "2", "--continue-with", "symex-out-0", str(source),
                    cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "symex: explored 0 paths" in again.stdout


@pytest.mark.parametrize("options, message", [
    ({"workers": 0}, "workers must be a whole number of at least 1"),
    ({"workers": 2, "parallel_backend": "mpi"}, "unknown parallel backend 'mpi'"),
    ({"workers": 2, "continue_with": "j.db", "restart_all_states": True},
     "restart_all_states is not available with parallel"),
    ({"workers": 2, "balance_ratio": 0.5}, "balance_ratio must be at least 1"),
    ({"workers": 2, "searcher": "sideways"}, "sideways"),
    ({"workers": 2, "portfolio": "dfs,sideways"}, "unknown searcher 'sideways'"),
    ({"workers": 2, "portfolio": "dfs,bfs,random-path"}, "needs at least 3 workers, not 2"),
    ({"workers": 2, "portfolio": ["dfs"], "searcher": "bfs"}, "not both"),
    ({"workers": 2, "portfolio": " , "}, "names no search strategy"),
])
def test_bad_parallel_options_are_refused(exhaustive: symex.Program, options: dict[str, object],
                                          message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        symex.explore(exhaustive, **options)


def test_cloud9_rule() -> None:
    balancer = LoadBalancer(ratio=10, max_jobs=None, low_water=0)  # Cloud9's, as published
    # an idle worker gets half of the loaded one's states
    assert balancer.moves({0: 8, 1: 0}) == [Move(0, 1, 4)]
    # 9 < 10 x 1: no transfer; 10 >= 10 x 1: a transfer of half the difference
    assert balancer.moves({0: 9, 1: 1}) == []
    assert balancer.moves({0: 10, 1: 1}) == [Move(0, 1, 4)]
    # most loaded with least loaded, second with second
    assert balancer.moves({0: 40, 1: 0, 2: 20, 3: 1}) == [Move(0, 1, 20), Move(2, 3, 9)]
    # a worker with one state keeps it
    assert balancer.moves({0: 1, 1: 0}) == []
    assert LoadBalancer(ratio=2, max_jobs=None, low_water=0).moves({0: 5, 1: 3}) == []


def test_default_balancing_moves_few_jobs_and_before_a_worker_runs_dry() -> None:
    balancer = LoadBalancer()
    # one job per move (the shallowest state holds most of the work under dfs)
    assert balancer.moves({0: 40, 1: 0, 2: 20, 3: 0}) == [Move(0, 1, 1), Move(2, 3, 1)]
    # a worker down to its last state counts as idle: 9 states are enough to give one
    assert balancer.moves({0: 9, 1: 1}) == [Move(0, 1, 1)]
    assert balancer.moves({0: 9, 1: 2}) == []  # 9 < 10 x 2
    assert balancer.moves({0: 1, 1: 0}) == []  # the giver keeps its last state


def test_a_portfolio_balances_within_a_strategy_and_crosses_only_to_an_idle_worker() -> None:
    balancer = LoadBalancer()
    dfs_and_random_path = {0: "dfs", 1: "random-path"}
    # a busy depth-first worker does not drain the random-path one (it made 9,000 states
    # and completed no path of its own: every state went to dfs)
    assert balancer.moves({0: 24, 1: 9000}, dfs_and_random_path) == []
    # an idle one still gets work from another strategy's
    assert balancer.moves({0: 0, 1: 9000}, dfs_and_random_path) == [Move(1, 0, 1)]
    # two workers of one strategy balance by the rule
    two_each = {0: "dfs", 1: "dfs", 2: "random-path", 3: "random-path"}
    assert balancer.moves({0: 15, 1: 2, 2: 5, 3: 4}, two_each) == []
    assert balancer.moves({0: 40, 1: 1, 2: 5, 3: 4}, two_each) == [Move(0, 1, 1)]
    # one strategy for all: the plain rule
    assert balancer.moves({0: 40, 1: 1}, {0: "dfs", 1: "dfs"}) == balancer.moves({0: 40, 1: 1})


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "symex.cli", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=300)


def test_cli_workers_write_one_output_directory_numbered_globally(tmp_path: Path) -> None:
    source = write(tmp_path, "exhaustive.c", EXHAUSTIVE)
    proc = run_cli("run", "--workers", "2", "-q", str(source), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "symex: explored 1024 paths: 1024 completed" in proc.stdout
    assert "symex: 2 workers (processes)" in proc.stdout
    out = tmp_path / "symex-out-0"
    names = sorted(p.name for p in out.glob("*.ktest"))
    # one directory, tests numbered 1..1024 without gaps, whichever worker found them
    assert names == [f"test{n:06d}.ktest" for n in range(1, 1025)]
    inputs = {read_ktest(out / name).objects[0].data for name in names}
    assert len(inputs) == 1024  # 1024 different paths need 1024 different inputs


def test_cli_portfolio_reports_each_strategy(tmp_path: Path) -> None:
    source = write(tmp_path, "exhaustive.c", EXHAUSTIVE)
    proc = run_cli("run", "--workers", "2", "--portfolio", "dfs,bfs", str(source), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "symex: explored 1024 paths: 1024 completed" in proc.stdout
    lines = [line for line in proc.stdout.splitlines() if line.startswith("symex:   ")]
    assert [line.split(" (")[0] for line in lines] == ["symex:   bfs", "symex:   dfs"]
    assert all("(1 worker)" in line for line in lines)
    completed = [int(line.split("): ")[1].split(" completed")[0]) for line in lines]
    assert sum(completed) == 1024
    # run.stats has a row per worker, read back by 'symex stats --workers'
    table = run_cli("stats", "--workers", "--csv", "symex-out-0", cwd=tmp_path)
    assert table.returncode == 0, table.stderr
    header, *rows = [line.split(",") for line in table.stdout.splitlines()]
    workers = [dict(zip(header, row)) for row in rows]
    assert [(w["Worker"], w["Searcher"]) for w in workers] == [("0", "dfs"), ("1", "bfs")]
    assert sum(int(w["Completed"]) for w in workers) == 1024
    totals = run_cli("stats", "--csv", "symex-out-0", cwd=tmp_path).stdout.splitlines()
    instructions = int(dict(zip(totals[0].split(","), totals[1].split(",")))["Instrs"])
    assert sum(int(w["Instrs"]) for w in workers) == instructions


@pytest.mark.parametrize("args, message", [
    (("--workers", "0"), "--workers 0: give at least 1 worker"),
    (("--workers", "2", "--continue-with", "x", "--stop-after-replay"),
     "not available with --workers yet"),
    (("--workers", "2", "--balance-ratio", "0.5"), "give a ratio of at least 1"),
    (("--workers", "2", "--portfolio", "dfs,bfs,random-path"), "needs at least 3 workers"),
])
def test_cli_bad_parallel_options_give_one_line_and_status_2(tmp_path: Path, args: tuple[str, ...],
                                                            message: str) -> None:
    source = write(tmp_path, "exhaustive.c", EXHAUSTIVE)
    proc = run_cli("run", *args, str(source), cwd=tmp_path)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("symex: error: ") and message in lines[0]
    assert not (tmp_path / "symex-out-0").exists()


needs_ray = pytest.mark.skipif(importlib.util.find_spec("ray") is None,
                               reason="Ray is not installed (pip install 'symex[ray]')")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@needs_ray
@pytest.mark.slow
def test_local_ray_instance_same_paths(exhaustive: symex.Program) -> None:
    alone = symex.explore(exhaustive)
    split = symex.explore(exhaustive, workers=2, cluster="auto")
    assert split.statistics.parallel.backend == "ray"
    assert outcome(split) == outcome(alone)
    no_duplicates(split)


@needs_ray
@pytest.mark.slow
def test_ray_cluster_started_on_loopback_runs_the_exhaustive_test(tmp_path: Path) -> None:
    # a real cluster: `ray start --head` on 127.0.0.1, then a separate process connects to it
    port = free_port()
    ray_cli = [sys.executable, "-c", "from ray.scripts.scripts import main; main()"]
    env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0")
    started = subprocess.run(
        ray_cli + ["start", "--head", "--node-ip-address", "127.0.0.1", "--port", str(port),
                   "--num-cpus", "2", "--include-dashboard", "false", "--disable-usage-stats"],
        capture_output=True, text=True, timeout=180, env=env)
    assert started.returncode == 0, started.stderr
    try:
        source = write(tmp_path, "exhaustive.c", EXHAUSTIVE)
        script = (
            "import symex, sys\n"
            f"p = symex.compile({str(source)!r})\n"
            "alone = symex.explore(p)\n"
            f"split = symex.explore(p, workers=2, cluster='127.0.0.1:{port}')\n"
            "key = lambda r: sorted((t.path, t.status.value) for t in r.tests)\n"
            "assert split.statistics.parallel.backend == 'ray'\n"
            "assert key(split) == key(alone) and split.paths == alone.paths, 'paths differ'\n"
            "print('same', split.paths.completed, split.statistics.parallel.jobs)\n")
        proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              timeout=300, env=env)
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert proc.stdout.startswith("same 1024 ")
    finally:
        subprocess.run(ray_cli + ["stop", "--force"], capture_output=True, timeout=120, env=env)


@needs_ray
def test_unreachable_cluster_is_one_clear_line(tmp_path: Path) -> None:
    source = write(tmp_path, "exhaustive.c", EXHAUSTIVE)
    proc = run_cli("run", "--workers", "2", "--cluster", f"127.0.0.1:{free_port()}",
                   str(source), cwd=tmp_path)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot reach the Ray cluster at '127.0.0.1:" in lines[0]


class _CoordinatorKilled(BaseException):
    """Stands for a SIGKILL of the coordinator, at a point the test chooses."""


def _killed_then_resumed(program: symex.Program, journal: Path, kill_after: int,
                         monkeypatch: pytest.MonkeyPatch,
                         checkpoint_seconds: float) -> tuple[int, symex.Result]:
    """Run with 2 in-process workers and a journal, stop dead (no halt, nothing more written)
    once ``kill_after`` paths are in, then resume: (the paths the journal had finished, the
    resumed run)."""
    monkeypatch.setenv("SYMEX_CHECKPOINT_SECONDS", str(checkpoint_seconds))
    seen: list[symex.TestCase] = []

    def path_ended(test: symex.TestCase) -> None:
        seen.append(test)
        if len(seen) == kill_after:
            raise _CoordinatorKilled

    with pytest.raises(_CoordinatorKilled):
        symex.explore(program, workers=2, parallel_backend="in-process", journal=journal,
                      hooks=symex.Hooks(on_path_end=path_ended))
    resumed = symex.explore(program, workers=2, parallel_backend="in-process",
                            continue_with=journal, journal=journal.with_name("resumed.db"))
    said = next(m for m in resumed.messages if "path(s) finished before" in m)
    finished = int(said.split("open job(s), ")[1].split(" path(s)")[0])
    # the paths of the report the kill interrupted were never committed
    assert kill_after - 200 < finished <= kill_after
    return finished, resumed


def test_a_resumed_run_starts_from_the_last_checkpoint_not_from_whole_jobs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Workers report their frontier (a checkpoint, here at every step); after a kill the
    journal holds those pieces instead of the jobs they came from, so the resumed run
    explores again only what the last report before the kill found."""
    program = symex.compile(PROGRAMS / "regexp.c")  # 5,204 paths
    (tmp_path / "every").mkdir()
    (tmp_path / "never").mkdir()
    before, resumed = _killed_then_resumed(program, tmp_path / "every" / "jobs.db", 2000,
                                           monkeypatch, checkpoint_seconds=0.0)
    # the paths the journal had when the run died, plus the resumed ones, are all of them
    assert resumed.paths.total + before == 5204
    no_duplicates(resumed)
    again = resumed.statistics.parallel.duplicate_paths
    # only the paths of the report the kill interrupted (2000 was in its middle), at most
    assert again < 200, again

    # without checkpoints the jobs the workers held run again whole
    before, whole_jobs = _killed_then_resumed(program, tmp_path / "never" / "jobs.db", 2000,
                                              monkeypatch, checkpoint_seconds=float("inf"))
    assert whole_jobs.paths.total + before == 5204
    assert whole_jobs.statistics.parallel.duplicate_paths > 5 * max(again, 100)


def test_checkpoints_with_a_recorded_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A checkpoint names the tree nodes its pieces are in without using up the workers'
    names for them (a state checkpointed, then handed over or ended, still finds its node);
    the tree is whole, and a resumed run's pieces continue it."""
    monkeypatch.setenv("SYMEX_CHECKPOINT_SECONDS", "0")
    program = symex.compile(PROGRAMS / "regexp.c")
    result = symex.explore(program, workers=2, parallel_backend="in-process",
                           journal=tmp_path / "jobs.db", record_tree=tmp_path / "tree.db")
    assert result.paths.total == 5204
    replayed = symex.explore(program, continue_with=tmp_path / "tree.db",
                             restart_all_states=True, stop_after_replay=True)
    assert replayed.paths.total == 5204
    assert replayed.statistics.memo is not None and replayed.statistics.memo.diverged_states == 0
