"""Queries where real programs spend their time: a branch site whose queries time out gets
less time for its next (core/site_budgets.py), and numbers musl's printf writes to a stream
are fixed instead of forked on digit by digit (env/printed_values.py)."""

from __future__ import annotations

import datetime
import subprocess
import sys
from pathlib import Path

import symex
from symex.core.shortfalls import ShortfallKind
from symex.core.site_budgets import MIN_BUDGET, PROBE_EVERY, SHRINK, SiteBudgets

PROGRAMS = Path(__file__).parent / "programs"
HARD_SITE = PROGRAMS / "hard_site.c"
PRINTED = PROGRAMS / "printed_numbers.c"
DATED = PROGRAMS / "dated.c"
SITE = (1, 2, 3, 4)


def test_a_timed_out_site_gets_an_eighth_then_nothing_then_probes() -> None:
    budgets = SiteBudgets(1.0)
    assert budgets.budget(SITE) is None  # no time-out yet: the run's limit
    budgets.timed_out(SITE, None)
    assert budgets.budget(SITE) == 1.0 / SHRINK
    budgets.timed_out(SITE, 1.0 / SHRINK)
    assert 1.0 / SHRINK**2 < MIN_BUDGET  # so the next step is: not asked
    asked = [budgets.budget(SITE) for _ in range(2 * PROBE_EVERY)]
    assert asked.count(MIN_BUDGET) == 2 and asked.count(0.0) == 2 * PROBE_EVERY - 2
    assert budgets.budget((9, 9, 9, 9)) is None  # other sites keep the run's limit


def test_an_answered_query_gives_the_site_its_time_back() -> None:
    budgets = SiteBudgets(1.0)
    budgets.timed_out(SITE, None)
    budgets.timed_out(SITE, 1.0 / SHRINK)
    budgets.answered(SITE)  # a probe answered in time
    assert budgets.budget(SITE) == MIN_BUDGET * SHRINK
    budgets.answered(SITE)  # 8 x 0.16 s is past the limit: the site is like any other
    assert budgets.budget(SITE) is None


def _hard_site_run(site_budgets: bool) -> symex.Result:
    return symex.explore(symex.compile(HARD_SITE), solver_timeout=0.3, site_budgets=site_budgets)


def test_a_hopeless_site_stops_holding_the_limit() -> None:
    budgeted, every = _hard_site_run(True), _hard_site_run(False)
    for result in (budgeted, every):
        # one path, every question left undecided, its side assumed: nothing else changes
        assert result.paths.completed == 1 and len(result.tests) == 1
        assert result.tests[0].exit_code == 0
        undecided = [s for s in result.shortfalls if s.kind is ShortfallKind.UNDECIDED]
        assert [(s.site, s.count) for s in undecided] == [("hard_site.c:15", 12)]
    assert budgeted.tests[0].objects.keys() == every.tests[0].objects.keys()
    # every question reached z3 without budgets; with them, 0.3 s, then 0.0375 s, then none
    assert every.statistics.solver_queries >= 12
    assert budgeted.statistics.solver_queries <= 4


def _mix(v: int) -> int:
    """What the program computes before printing."""
    for _ in range(48):
        v = ((v ^ (v << 3)) + 0x9E3779B9) & 0xFFFFFFFF
    return v


def _printed(concretize: bool, flags: tuple[str, ...] = ()) -> symex.Result:
    return symex.explore(symex.compile(PRINTED, list(flags), libc="musl"),
                         concretize_printed=concretize)


def test_a_computed_number_printed_is_fixed_and_the_others_are_not() -> None:
    result = _printed(True)
    # y's "%x" forks on its digits (0 apart, 1, 2), and so does snprintf's "%x" of
    # mix(z) & 0xfff (0 apart, 1, 2, 3: into memory); mix(x) was fixed once, before them
    assert result.paths.completed == 3 * 4
    assert sorted(t.exit_code for t in result.tests) == sorted([1, 1, 2, 3] * 3)
    for test in result.tests:
        x, y, z = (int.from_bytes(test.objects[n], "little") for n in "xyz")
        assert test.exit_code == len(f"{_mix(z) & 0xFFF:x}")
        assert test.stdout == f"{_mix(x)}\n{y:x}\n".encode()  # what the test's input prints
    assert {len(f"{int.from_bytes(t.objects['y'], 'little'):x}") for t in result.tests} == {1, 2}
    fixed = [s for s in result.shortfalls if s.what == "printed number"]
    assert [(s.kind, s.site, s.count) for s in fixed] == [(ShortfallKind.CONCRETIZED, "printed_numbers.c:28", 1)]


def test_a_time_turned_into_a_date_is_fixed_where_it_is_converted() -> None:
    """gmtime's 64-bit divisions of a symbolic time are not asked about: the time is fixed
    where musl converts it, after the program's own comparisons of it (which fork)."""
    result = symex.explore(symex.compile(DATED, libc="musl"))
    # t < 0 (2), t < 86400, and a later time: its date, or none past int's years (1)
    assert len(result.tests) == 3 and {2, 0} <= {t.exit_code for t in result.tests}
    for test in result.tests:
        t = int.from_bytes(test.objects["t"], "little", signed=True)
        if test.exit_code == 2:
            assert t < 0
        elif test.exit_code == 1:
            assert t > (2**31 - 1) * 365 * 86400
        else:
            date = datetime.datetime(1970, 1, 1) + datetime.timedelta(seconds=t)  # gmtime's
            first = b"the first day\n" if t < 86400 else b""
            assert test.stdout == first + date.strftime("%Y-%m-%d %H:%M:%S\n").encode()
    fixed = [s for s in result.shortfalls if s.what == "time turned into a date"]
    assert [(s.kind, s.count) for s in fixed] == [(ShortfallKind.CONCRETIZED, 2)]


def test_without_it_printf_forks_on_every_digit_count() -> None:
    # mix(x)'s low 16 bits printed (all 32 bits: 132 paths, each a preimage to solve)
    result = _printed(False, ("-DMIX_MASK=0xffff",))
    # 0 and 1 to 5 decimal digits of mix(x) & 0xffff, times y's 3, times snprintf's 4
    assert result.paths.completed == 6 * 3 * 4
    digits = {len(str(_mix(int.from_bytes(t.objects["x"], "little")) & 0xFFFF))
              for t in result.tests}
    assert digits == set(range(1, 6))
    assert not [s for s in result.shortfalls if s.what == "printed number"]


def test_the_command_line_switches(tmp_path: Path) -> None:
    # the computed number's low 8 bits printed: 0, or 1 to 3 digits, so 4 x 3 x 4 paths
    # forked (12 with the number fixed; 132 with all 32 bits)
    proc = subprocess.run([sys.executable, "-m", "symex.cli", "run", "--libc", "musl",
                           "--no-concretize-printed", "--max-solver-time", "5",
                           "--no-site-budgets", "-D", "MIX_MASK=0xff", "--output-dir",
                           str(tmp_path / "out"), str(PRINTED)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "explored 48 paths: 48 completed" in proc.stdout


def test_a_pointer_fixed_by_a_hash_is_read_at_a_symbolic_offset_not_asked_about() -> None:
    """Whether a pointer can be other than the inputs' value only saves work (the read is
    then at one number): where the path fixes it through a hash (cksum's table read at a
    checksum pinned by its printing), the question is a preimage no solver answers in the
    run's limit, and it is cut short, the path going on with the general read. Before, it
    held the whole limit and ended the path as partial."""
    result = symex.explore(symex.compile(PROGRAMS / "pinned_pointer.c"), solver_timeout=20)
    assert (result.paths.completed, result.paths.partial) == (1, 0)
    a = int.from_bytes(result.tests[0].objects["a"], "little")
    assert result.tests[0].exit_code == ((a & 255) * 37 + 11) & 255  # the table's byte
