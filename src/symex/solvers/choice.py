"""``ChoosingSolver``: each query answered by one of several configurations, the one that has
been fastest on this run's own queries (a bandit over configurations, as MedleySolver
chooses, here without query features), instead of racing them all
(:mod:`symex.solvers.portfolio`) or always asking one.

Why: no configuration is fastest everywhere. On the query corpora (docs/solver.md) bitwuzla
answers regexp, maze, histogram and PCRE 2.5-15x faster than z3, and z3 answers expr_parser,
rle_adler and EXE's 1.3-7x faster than bitwuzla; which one a program needs shows in its
first queries. Racing costs more than it wins where queries take a millisecond (a process
crossing per query, an incremental loser losing its history); choosing costs a few probes.

How it chooses:

- every member is a :class:`~symex.solvers.configured.SessionSolver` in this process (one
  runs at a time, so a backend holding the GIL costs nothing);
- one member, the *leader*, answers every query (the first written, until another beats it);
- a *probe* asks the leader's next :data:`PROBE` queries of another member too, after the
  leader has answered them, and compares the two times query by query (the same queries:
  path conditions grow along a run, so times on different queries say little). The first
  probed query is not counted: it pays for bringing an incremental session to the path. A
  probed query taking :data:`PROBE_CAP` times the leader's is cut, and the probe lost;
- the member probed takes the lead when its total time on the counted queries was below
  :data:`SWITCH_RATIO` times the leader's (totals, not a mean of ratios: a run's time is a
  sum, and a few slow queries dominate it), and the old leader is probed again soon
  (:data:`RECHECK_INTERVAL`), as a switch on noise costs every query until then. A member
  found slower is probed again after as many queries as keep its probes under
  :data:`PROBE_SHARE` of the leader's time, given how much slower it was (from
  :data:`FIRST_INTERVAL` to :data:`LAST_INTERVAL` queries). Every other member is probed at
  the start. A program whose queries change character is followed;
- the leader's query is cut at :data:`TAIL_FACTOR` times its typical time (a geometric mean,
  at least :data:`SOFT_FLOOR`) and asked of the others, each with the solver's whole limit,
  then of the leader again with its whole limit: one backend's pathological query is often
  another's easy one, and a leader chosen on typical queries must not pay for the tail. A
  cut that did not pay (the others took longer than the leader had spent) quarters how
  often the leader is cut; one that paid doubles it back;
- a member that answers unknown (its time limit, a failure) is charged twice its limit (as
  PAR-2 charges a time-out); when the leader does, the query goes on to the other members,
  so no path is lost to one backend's weakness.

Which member leads depends on measured times, so two runs of one program may choose
differently and write different (equally valid) tests; a run that must repeat exactly names
one configuration.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

import attrs

from symex.errors import SolverError, SolverUnknown
from symex.solvers.base import SolverBase, SolverStatistics
from symex.solvers.config import ChoiceConfig, SolverConfig, parse_config
from symex.solvers.configured import SessionSolver

if TYPE_CHECKING:
    from symex.expr import Array, Expr

__all__ = ["FIRST_INTERVAL", "LAST_INTERVAL", "PROBE", "PROBE_CAP", "PROBE_SHARE",
           "RECHECK_INTERVAL", "SOFT_FLOOR", "SWITCH_RATIO", "TAIL_FACTOR", "TYPICAL_AFTER",
           "TYPICAL_WEIGHT", "ChoiceStatistics", "ChoosingSolver"]

#: queries a probe lasts (the first, where the probed session catches up, is not counted)
PROBE = 6
#: a probed member takes the lead when its time over the leader's is below this (a clear win:
#: a switch on noise costs every query until the old leader is probed again)
SWITCH_RATIO = 0.8
#: the fewest queries between two probes of a member found slower
FIRST_INTERVAL = 32
#: queries before a leader that lost the lead is probed again (a switch is checked soon)
RECHECK_INTERVAL = 16
#: a probed member's query is cut at this many times the leader's time on it (at least
#: :data:`SOFT_FLOOR`), and the probe ends: it lost
PROBE_CAP = 10.0
#: the longest interval between two probes of a member that stays slower
LAST_INTERVAL = 4096
#: at most this share of the leader's time goes to probing a member found slower: one whose
#: probe cost ten times what the leader spent on its queries is probed again after
#: ``PROBE * 10 / PROBE_SHARE`` queries (one about as fast, often: a wrong lead between near
#: equals is found soon)
PROBE_SHARE = 0.1
#: a leader's query is cut at this many times its typical time (and the others asked): one
#: backend's pathological query is often another's easy one (EXE's array writes: bitwuzla
#: 0.1-0.5 s where z3 takes 1-13 ms)
TAIL_FACTOR = 20.0
#: the least soft limit, seconds
SOFT_FLOOR = 0.05
#: answers a leader gives before its typical time sets a soft limit
TYPICAL_AFTER = 8
#: the weight of a new answer in a member's typical time, once it has given enough
TYPICAL_WEIGHT = 0.05

_T = TypeVar("_T")


class _Member:
    """One configuration, its solver and when it is probed next."""

    __slots__ = ("config", "name", "solver", "next_probe", "answered", "typical", "tail")

    def __init__(self, config: SolverConfig, solver: SessionSolver) -> None:
        self.config = config
        self.name = str(config)
        """The configuration string, the member's key in :class:`ChoiceStatistics`."""
        self.solver = solver
        self.answered = 0
        """Queries whose answer this member gave."""
        self.typical = 0.0
        """The log of its typical seconds per query as the leader (a moving average of logs:
        a geometric mean, which a few slow queries do not drag up)."""
        self.tail = TAIL_FACTOR
        """Its soft limit over its typical time: quartered each time a cut did not pay (the
        others took longer than it had already spent), halved back when one did."""
        self.next_probe = 0
        """The query number from which this member is probed (again), while it does not lead."""


@attrs.define
class ChoiceStatistics(SolverStatistics):
    """:class:`SolverStatistics` plus what the choosing did."""

    switches: int = 0
    """Times another member took the lead."""
    probes: int = 0
    """Probes of a member that did not lead."""
    probe_seconds: float = 0.0
    """Seconds spent on the probed members' answers (which are not used)."""
    fallbacks: int = 0
    """Times a query was passed on to another member after one answered unknown."""
    cut: int = 0
    """Queries the leader's soft limit cut (:data:`TAIL_FACTOR`)."""
    answered: dict[str, int] = attrs.field(factory=dict)
    """Queries each member (configuration string) answered."""

    def as_dict(self) -> dict[str, float]:
        """The counters as a plain mapping, e.g. for a JSON run summary."""
        counters = super().as_dict()
        counters["switches"] = self.switches
        counters["probes"] = self.probes
        counters["probe_seconds"] = self.probe_seconds
        counters["fallbacks"] = self.fallbacks
        counters["cut"] = self.cut
        for name, count in self.answered.items():
            counters[f"answered[{name}]"] = count
        return counters


class ChoosingSolver(SolverBase):
    """Answers each query with one member configuration, chosen by time (see the module).

    ``ChoosingSolver(["z3", "bitwuzla"], timeout=10)``; ``timeout`` limits each member's check.
    """

    statistics: ChoiceStatistics

    def __init__(self, members: Sequence[str | SolverConfig], *,
                 timeout: float | None = None) -> None:
        """Build a solver of every member configuration (at least two)."""
        configs = [parse_config(m) for m in members]
        if len(configs) < 2 or not all(isinstance(c, SolverConfig) for c in configs):
            raise SolverError("a ChoosingSolver needs at least two single configurations "
                              f"(BACKEND[:ENCODING[:SESSION]]), got {list(members)!r}")
        super().__init__()
        self.timeout = timeout
        self.statistics = ChoiceStatistics()
        self._members: list[_Member] = []
        try:
            for config in configs:
                assert isinstance(config, SolverConfig)
                self._members.append(_Member(config, SessionSolver(config, timeout=timeout)))
        except BaseException:
            self.close()
            raise
        self.statistics.answered = {m.name: 0 for m in self._members}
        self._leader = self._members[0]
        self._asked = 0
        self._probing: _Member | None = None
        self._probe_asked = 0
        self._probe_sums = [0.0, 0.0, 0.0, 0.0]
        """The leader's and the probed member's seconds on the probe's counted queries, then
        on all its queries (the first, where the probed session catches up, included)."""
        self._running: _Member | None = None

    @property
    def config(self) -> ChoiceConfig:
        """The configuration this solver runs."""
        return ChoiceConfig(tuple(m.config for m in self._members))

    @property
    def leader(self) -> SolverConfig:
        """The configuration answering queries now."""
        return self._leader.config

    # -- primitives ----------------------------------------------------------------------

    def _check(self, constraints: tuple[Expr, ...], extra: Expr | None) -> bool:
        """Whether ``constraints`` and ``extra`` are satisfiable together."""
        return self._ask(lambda solver: solver._check(constraints, extra))

    def _model(
        self, constraints: tuple[Expr, ...], exprs: Sequence[Expr], arrays: Sequence[Array]
    ) -> tuple[list[int], list[bytes]] | None:
        """Values of ``exprs`` and contents of ``arrays`` in one model of ``constraints``."""
        return self._ask(lambda solver: solver._model(constraints, exprs, arrays))

    # -- choosing ------------------------------------------------------------------------

    def _ask(self, question: Callable[[SessionSolver], _T]) -> _T:
        self._asked += 1
        probing = self._probing or self._due_probe()
        stats = self.statistics
        stats.queries += 1
        started = time.perf_counter()
        try:
            leader = self._leader
            reasons: list[str] = []
            soft = self._soft_limit(leader)
            try:
                answer, lead_seconds = self._timed(leader, question, soft)
            except SolverUnknown as exc:
                if self.past_deadline():
                    stats.unknown += 1
                    raise
                reasons.append(f"{leader.config}: {exc}")
                if soft is None:
                    lead_seconds = self._charge(time.perf_counter() - started)
                    answer, answered_by = self._fall_back(question, reasons, False)
                else:
                    # cut short, not failed: the query cost what it took to get an answer
                    stats.cut += 1
                    cut_at = time.perf_counter()
                    answer, answered_by = self._fall_back(question, reasons, True)
                    lead_seconds = time.perf_counter() - started
                    if lead_seconds - (cut_at - started) < soft:
                        leader.tail = max(TAIL_FACTOR, leader.tail / 2)
                    else:
                        leader.tail *= 4
                    probing = None  # a cut query compares nothing
            else:
                answered_by = leader
                leader.answered += 1
                leader.typical += (math.log(max(lead_seconds, 1e-6)) - leader.typical) * (
                    1.0 / leader.answered if leader.answered < 1 / TYPICAL_WEIGHT
                    else TYPICAL_WEIGHT)
            stats.answered[answered_by.name] += 1
            if answered_by is not leader:
                answered_by.answered += 1
            stats.unsat += answer is None or answer is False
            stats.sat += not (answer is None or answer is False)
            if probing is not None:
                self._probe(probing, question, lead_seconds, answered_by is probing)
            return answer
        finally:
            stats.time += time.perf_counter() - started

    def _due_probe(self) -> _Member | None:
        """The member whose probe starts with this query, if one is due."""
        for member in self._members:
            if member is not self._leader and self._asked > member.next_probe:
                self._probing, self._probe_asked = member, 0
                self._probe_sums = [0.0, 0.0, 0.0, 0.0]
                self.statistics.probes += 1
                return member
        return None

    def _probe(self, member: _Member, question: Callable[[SessionSolver], _T],
               lead_seconds: float, asked_already: bool) -> None:
        """Time ``member`` on the query the leader answered in ``lead_seconds``; at the
        probe's end, give it the lead or schedule its next probe."""
        self._probe_asked += 1
        sums = self._probe_sums
        if not asked_already:
            # a member this much slower than the leader on one query will not take the lead;
            # waiting for its answer would only make the probe cost what racing costs
            limit = max(SOFT_FLOOR, PROBE_CAP * lead_seconds)
            if self.timeout is not None:
                limit = min(limit, self.timeout)
            started = time.perf_counter()
            lost = False
            try:
                _, seconds = self._timed(member, question, limit)
            except SolverUnknown:
                seconds, lost = limit, True
            self.statistics.probe_seconds += time.perf_counter() - started
            sums[2] += lead_seconds
            sums[3] += seconds
            if self._probe_asked > 1 or lost:
                sums[0] += lead_seconds
                sums[1] += seconds
            if lost:
                self._probe_asked = max(self._probe_asked, PROBE)  # the probe ends
        if self._probe_asked < PROBE or self.past_deadline():
            return
        self._probing = None
        if sums[1] < sums[0] * SWITCH_RATIO:
            old, self._leader = self._leader, member
            self.statistics.switches += 1
            old.next_probe = self._asked + RECHECK_INTERVAL
        else:
            # as many queries as keep what this probe cost (catching up included) under
            # PROBE_SHARE of what the leader spends on them
            per_query = sums[2] / self._probe_asked
            wanted = sums[3] / (PROBE_SHARE * per_query) if per_query > 0 else FIRST_INTERVAL
            interval = min(max(FIRST_INTERVAL, math.ceil(wanted)), LAST_INTERVAL)
            member.next_probe = self._asked + interval

    def _soft_limit(self, leader: _Member) -> float | None:
        """The leader's limit for one query: its tail factor (:data:`TAIL_FACTOR` at first)
        times its typical time (at least :data:`SOFT_FLOOR`), when it has answered enough to know and that is below the
        solver's own limit; else None (the solver's limit)."""
        if leader.answered < TYPICAL_AFTER:
            return None
        soft = max(SOFT_FLOOR, leader.tail * math.exp(leader.typical))
        return soft if self.timeout is None or soft < self.timeout else None

    def _fall_back(self, question: Callable[[SessionSolver], _T], reasons: list[str],
                   leader_was_cut: bool) -> tuple[_T, _Member]:
        """The first answer of another member than the leader (the probed one first), or at
        last of the leader again with its whole limit when its soft limit had cut it."""
        others = [m for m in self._members if m is not self._leader]
        others.sort(key=lambda m: m is not self._probing)
        if leader_was_cut:
            others.append(self._leader)
        for member in others:
            self.statistics.fallbacks += 1
            try:
                return self._timed(member, question)[0], member
            except SolverUnknown as exc:
                reasons.append(f"{member.config}: {exc}")
                if self.past_deadline():
                    break
        self.statistics.unknown += 1
        raise SolverUnknown(f"every configuration of {self.config} failed: "
                            + "; ".join(reasons))

    def _timed(self, member: _Member, question: Callable[[SessionSolver], _T],
               limit: float | None = None) -> tuple[_T, float]:
        """``question``'s answer from ``member`` (within ``limit`` seconds, when given, else
        the solver's limit) and the seconds it took."""
        self._running = member
        solver = member.solver
        if limit is not None:
            solver.timeout = limit
        started = time.perf_counter()
        try:
            return question(solver), time.perf_counter() - started
        finally:
            self._running = None
            solver.timeout = self.timeout

    def _charge(self, seconds: float) -> float:
        """What an unknown answer costs: twice the limit (PAR-2), or twice what it took."""
        return 2 * (self.timeout if self.timeout is not None else seconds)

    # -- control -------------------------------------------------------------------------

    def set_deadline(self, deadline: float | None) -> None:
        """Cut every member's checks at ``deadline`` too."""
        super().set_deadline(deadline)
        for member in self._members:
            member.solver.set_deadline(deadline)

    def interrupt(self) -> None:
        """Stop the check running in another thread, if its backend allows it."""
        running = self._running
        if running is not None:
            running.solver.interrupt()

    @property
    def can_interrupt(self) -> bool:
        """True when every member's backend can be interrupted."""
        return all(m.solver.can_interrupt for m in self._members)

    def reset(self) -> None:
        """Drop every member's incremental state."""
        for member in self._members:
            member.solver.reset()

    def close(self) -> None:
        """Release every member's backend; the solver must not be used afterwards."""
        members, self._members = self._members, []
        for member in members:
            member.solver.close()

    def __repr__(self) -> str:
        """Name the configuration."""
        return f"ChoosingSolver({str(self.config)!r}, timeout={self.timeout!r})"
