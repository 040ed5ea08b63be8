"""The portfolio racer: same answers as one solver, the fast member's speed, prompt unknowns,
and no worker process left behind."""

from __future__ import annotations

import gc
import multiprocessing
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import symex.expr as E
from solver_examples import EXAMPLES, Example
from symex.errors import SolverUnknown
from symex.solvers import Query, create_solver
from symex.solvers.configured import SessionSolver
from symex.solvers.portfolio import PortfolioSolver


def worker_pids() -> set[int]:
    """Live children of this process that are spawned multiprocessing workers (a /proc scan,
    independent of multiprocessing's own bookkeeping; its resource tracker is not a worker)."""
    me = os.getpid()
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        # Fields after the parenthesised command name: state, ppid, ...
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        if int(ppid) == me and state != "Z" and b"spawn_main" in cmdline:
            found.add(int(entry.name))
    return found


@pytest.fixture(autouse=True)
def no_workers_left() -> Iterator[None]:
    yield
    gc.collect()
    deadline = time.monotonic() + 5
    while (multiprocessing.active_children() or worker_pids()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert multiprocessing.active_children() == []
    assert worker_pids() == set()


# -- queries ----------------------------------------------------------------------------------

INPUT = E.Array("input", 16)


def byte(i: int) -> E.Expr:
    return E.read(E.UpdateList(INPUT), E.const(i, 32))


def index16(offset: int) -> E.Expr:
    return E.zext(E.concat(byte(offset + 1), byte(offset)), 32)


TABLE = E.Array("table", 4096, bytes((i * 37 + 11) % 256 for i in range(4096)))


def table_lookup_query(reads: int) -> tuple[E.Expr, ...]:
    """Symbolic-index reads of a 4 KiB constant table must hit given values.

    Satisfiable: the table holds (37 i + 11) mod 256, a permutation pattern that takes every
    byte value. Measured in this repository: z3 with the array-assert encoding (the table
    read as an if-then-else over its 256 values) answers in a tenth of a second; with the
    nested-write encoding (the table as 4,096 stores) z3 needs more than 20 s, bitwuzla
    seconds and cvc5 minutes.
    """
    constraints = []
    for k in range(reads):
        i = index16(2 * k)
        constraints.append(E.ult(i, E.const(4096, 32)))
        constraints.append(E.eq(E.read(E.UpdateList(TABLE), i), E.const(200 + k, 8)))
    return tuple(constraints)


def holds(example_constraints: tuple[E.Expr, ...], arrays: tuple[E.Array, ...],
          contents: list[bytes]) -> bool:
    assignment = E.Assignment(dict(zip(arrays, contents)))
    return all(assignment.evaluate(c) == 1 for c in example_constraints)


def answers(solver: object, examples: list[Example]) -> list[tuple[bool, bool]]:
    got = []
    for ex in examples:
        q = Query(ex.constraints, ex.query)
        got.append((solver.may_be_true(q), solver.must_be_true(q)))  # type: ignore[attr-defined]
    return got


# -- answers ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "members",
    [
        # z3 races in threads, with two sessions keeping incremental state.
        ["z3", "z3:nested-write:pushpop", "z3:ite:assumptions(5)"],
        # Only worker processes: every answer crosses the wire, incremental state lives in
        # the workers between queries.
        ["cvc5:array-assert:pushpop", "bitwuzla:nested-write:assumptions(3)"],
    ],
    ids=["threads", "processes"],
)
def test_answers_equal_a_single_z3_and_models_satisfy(members: list[str]) -> None:
    reference = SessionSolver("z3")
    portfolio = PortfolioSolver(members, timeout=30)
    try:
        assert portfolio.wait_ready(60)
        expected = answers(reference, EXAMPLES)
        assert expected == [(ex.satisfiable, ex.valid) for ex in EXAMPLES]
        assert answers(portfolio, EXAMPLES) == expected
        for ex in EXAMPLES:
            if not ex.satisfiable:
                continue
            facts = (*ex.constraints, ex.query)
            contents = portfolio.get_initial_values(facts, ex.arrays)
            assert [len(c) for c in contents] == [a.size for a in ex.arrays]
            assert holds(facts, ex.arrays, contents), ex.name
        wins = sum(m.wins for m in portfolio.statistics.members.values())
        stats = portfolio.statistics
        assert wins == stats.queries == stats.sat + stats.unsat
        assert stats.unknown == 0
    finally:
        portfolio.close()
        reference.close()


def test_get_value_and_range_through_the_wire() -> None:
    # x = input[0] with 10 < x < 20 and x odd: the range is [11, 19].
    x = byte(0)
    constraints = (E.ult(E.const(10, 8), x), E.ult(x, E.const(20, 8)),
                   E.eq(E.extract(x, 0, 1), E.const(1, 1)))
    portfolio = PortfolioSolver(["bitwuzla"], timeout=30)
    try:
        assert portfolio.wait_ready(60)
        value = portfolio.get_value(Query(constraints, x))
        assert 10 < value < 20 and value % 2 == 1
        assert portfolio.get_range(Query(constraints, x)) == (11, 19)
    finally:
        portfolio.close()


# -- speed ------------------------------------------------------------------------------------


def timed_check(solver: object, constraints: tuple[E.Expr, ...]) -> tuple[bool, float]:
    started = time.perf_counter()
    sat = solver._check(constraints, None)  # type: ignore[attr-defined]
    return sat, time.perf_counter() - started


def test_slow_worker_loses_is_killed_and_restarted() -> None:
    query = table_lookup_query(2)
    single = SessionSolver("z3")
    sat, fast = timed_check(single, query)
    single.close()
    assert sat
    portfolio = PortfolioSolver(["cvc5:nested-write", "z3"], timeout=60)
    try:
        assert portfolio.wait_ready(60)
        sat, raced = timed_check(portfolio, query)
        assert sat
        # cvc5 needs minutes here (see table_lookup_query); the race takes about as long as
        # z3 alone.
        assert raced < fast + 1.5, (raced, fast)
        cvc5 = portfolio.statistics.members["cvc5:nested-write:pushpop"]
        z3 = portfolio.statistics.members["z3:hybrid:pushpop"]
        assert (z3.wins, cvc5.wins) == (1, 0)
        assert cvc5.cancellations == 1
        # The loser is given a quarter of a second to finish; cvc5 needs minutes, so it is
        # killed and a new worker is started, which then answers later queries again.
        assert portfolio.wait_ready(60)
        assert cvc5.restarts == 1
        x = byte(0)
        assert portfolio.must_be_true(Query((E.ult(x, E.const(3, 8)),), E.ule(x, E.const(2, 8))))
        assert cvc5.queries == 2
    finally:
        portfolio.close()


def test_loser_that_finishes_soon_is_kept_and_sees_only_new_constraints() -> None:
    # Raced from the start (stagger=0), both members answer these small queries within
    # milliseconds, so whichever loses finishes
    # within its grace and keeps its worker (and its incremental session): no restarts. Each
    # query extends the previous path, so after the first one a worker receives only the new
    # constraint -- and its answers must still be those of the whole path.
    x, y = byte(0), byte(1)
    sum16 = E.add(E.zext(x, 16), E.zext(y, 16))
    # Only the first two constraints bound x and y: a worker that dropped them would find
    # sums up to 510.
    path: tuple[E.Expr, ...] = (E.ult(x, E.const(50, 8)), E.ult(y, E.const(50, 8)))
    portfolio = PortfolioSolver(["bitwuzla", "cvc5"], timeout=60, stagger=0)
    try:
        assert portfolio.wait_ready(60)
        for top in range(49, 39, -1):
            assert portfolio.may_be_true(Query(path, E.eq(sum16, E.const(2 * top, 16))))
            assert not portfolio.may_be_true(Query(path, E.eq(sum16, E.const(2 * top + 1, 16))))
            path = (*path, E.not_(E.eq(x, E.const(top, 8))), E.not_(E.eq(y, E.const(top, 8))))
            time.sleep(0.01)
        assert portfolio.wait_ready(60)
        members = portfolio.statistics.members.values()
        assert sum(m.restarts for m in members) == 0
        assert sum(m.cancellations for m in members) > 0
    finally:
        portfolio.close()


def test_slow_thread_member_is_interrupted() -> None:
    query = table_lookup_query(3)
    single = SessionSolver("z3")
    sat, fast = timed_check(single, query)
    single.close()
    # the first z3 member runs in a thread, the second in a worker process
    portfolio = PortfolioSolver(["z3:nested-write", "z3"], timeout=60, stagger=0)
    try:
        assert portfolio.wait_ready(60)
        sat, raced = timed_check(portfolio, query)
        assert sat
        assert raced < fast + 1.5, (raced, fast)
        slow = portfolio.statistics.members["z3:nested-write:pushpop"]
        assert (slow.wins, slow.cancellations, slow.restarts) == (0, 1, 0)
        # The loser may go on for its grace (a quarter of a second); a race after that
        # interrupts it first, and it takes part: interrupted, not stuck.
        time.sleep(0.3)
        x = byte(0)
        assert not portfolio.may_be_true(Query((E.ult(x, E.const(3, 8)),), E.eq(x, E.const(9, 8))))
        assert slow.queries == 2
    finally:
        portfolio.close()


def test_all_members_timing_out_raise_unknown_with_every_reason_promptly() -> None:
    query = table_lookup_query(3)
    portfolio = PortfolioSolver(["z3:nested-write", "cvc5:nested-write",
                                 "bitwuzla:nested-write"], timeout=0.3)
    try:
        assert portfolio.wait_ready(60)
        started = time.perf_counter()
        with pytest.raises(SolverUnknown) as caught:
            portfolio._check(query, None)
        elapsed = time.perf_counter() - started
        # the limit, then the race's end: room for a machine three times as loaded
        assert elapsed < 0.3 + 3.0, elapsed
        reason = caught.value.reason
        for label in ("z3:nested-write:pushpop", "cvc5:nested-write:pushpop",
                      "bitwuzla:nested-write:pushpop"):
            assert label in reason
        assert portfolio.statistics.unknown == 1
        # Still usable afterwards (within the next race's own time limit).
        assert portfolio.wait_ready(60)
        x = byte(0)
        assert portfolio.may_be_true(Query((), E.eq(x, E.const(9, 8))))
    finally:
        portfolio.close()


# -- lifetime ---------------------------------------------------------------------------------


def test_close_stops_every_worker_and_the_solver_refuses_queries() -> None:
    portfolio = create_solver("portfolio(z3, cvc5, bitwuzla:ite:pushpop)", timeout=10)
    assert isinstance(portfolio, PortfolioSolver)
    assert portfolio.wait_ready(60)
    assert len(worker_pids()) == 2
    portfolio.close()
    assert multiprocessing.active_children() == []
    assert worker_pids() == set()
    with pytest.raises(Exception, match="closed"):
        portfolio.may_be_true(Query((), E.eq(byte(0), E.const(1, 8))))


def test_garbage_collection_stops_workers() -> None:
    portfolio = PortfolioSolver(["cvc5", "z3"], timeout=10)
    assert portfolio.wait_ready(60)
    assert len(worker_pids()) == 1
    del portfolio
    gc.collect()
    assert worker_pids() == set()


def test_interpreter_exit_leaves_no_worker(tmp_path: Path) -> None:
    script = tmp_path / "leave_open.py"
    script.write_text(textwrap.dedent("""
        import os
        from symex.solvers.portfolio import PortfolioSolver

        def worker_of_mine(p):
            try:  # another process of the machine may end while it is read
                parent = open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()[1]
                return parent == str(os.getpid()) and \
                    b"spawn_main" in open(f"/proc/{p}/cmdline", "rb").read()
            except OSError:
                return False

        if __name__ == "__main__":
            solver = PortfolioSolver(["cvc5", "bitwuzla"], timeout=5)
            assert solver.wait_ready(60)
            children = [p for p in os.listdir("/proc") if p.isdigit() and worker_of_mine(p)]
            print(" ".join(children), flush=True)
            # no close(): exit must stop the workers anyway
    """))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    pids = [int(p) for p in done.stdout.split()]
    assert len(pids) == 2
    deadline = time.monotonic() + 5
    while any(Path(f"/proc/{p}").exists() for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(Path(f"/proc/{p}").exists() for p in pids)


def test_member_statistics_include_session_resets_and_cache_hits() -> None:
    # a thread member (z3) and a process member (bitwuzla), both with fresh-context sessions,
    # so every query is one reset; the same constraint three times gives cache hits in pushpop
    x = byte(0)
    pc = (E.ugt(x, E.const(5, 8)),)
    portfolio = PortfolioSolver(["z3:array-assert:none", "bitwuzla:array-assert:none"], timeout=30,
                                stagger=0)
    try:
        portfolio.wait_ready(60)
        for bound in (10, 20, 30):
            assert portfolio.may_be_true(Query(pc, E.ugt(x, E.const(bound, 8))))
        # a member that lost a race reports its counters when it finishes
        assert portfolio.wait_ready(60)
        members = portfolio.statistics.members
        z3_member = members["z3:array-assert:none"]
        assert z3_member.queries == 3 and z3_member.resets >= 3
        d = portfolio.statistics.as_dict()
        assert any(key.endswith(".resets") for key in d) and any(key.endswith(".cache_hits") for key in d)
    finally:
        portfolio.close()


def test_stagger_leader_runs_alone_and_a_slow_leader_hands_over() -> None:
    x = byte(0)
    small = Query((E.ugt(x, E.const(5, 8)),), E.ugt(x, E.const(10, 8)))
    # Both answer these in milliseconds, far within a one-second head start: every query is
    # answered by its leader alone, no race, nobody cancelled.
    portfolio = PortfolioSolver(["z3", "bitwuzla"], timeout=30, stagger=1.0)
    try:
        assert portfolio.wait_ready(60)
        for _ in range(5):
            assert portfolio.may_be_true(small)
        members = portfolio.statistics.members.values()
        assert sum(m.queries for m in members) == 5
        assert sum(m.cancellations for m in members) == 0
    finally:
        portfolio.close()
    # z3:nested-write needs seconds on the table lookup (see table_lookup_query): as the
    # first member it leads the first race (in the caller's thread); after its 0.2 s head
    # start plain z3 (a worker process) joins and wins, and the leader is interrupted.
    single = SessionSolver("z3")
    _, fast_alone = timed_check(single, table_lookup_query(3))
    single.close()
    portfolio = PortfolioSolver(["z3:nested-write", "z3"], timeout=60, stagger=0.2)
    try:
        assert portfolio.wait_ready(60)
        for _ in range(2):
            sat, raced = timed_check(portfolio, table_lookup_query(3))
            assert sat and raced < fast_alone + 1.5, (raced, fast_alone)
        slow = portfolio.statistics.members["z3:nested-write:pushpop"]
        fast = portfolio.statistics.members["z3:hybrid:pushpop"]
        assert (slow.wins, fast.wins) == (0, 2)
        # the interrupted leader answers the next query correctly (a fresh context)
        assert portfolio.may_be_true(small)
        assert not portfolio.may_be_true(Query((E.ult(x, E.const(3, 8)),), E.eq(x, E.const(9, 8))))
    finally:
        portfolio.close()
