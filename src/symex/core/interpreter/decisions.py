"""The executor's decisions: what the solver says about a path's conditions and values, and
the forks they lead to (branches, error checks, several values, seeded sides).

A mixin of :class:`~symex.core.interpreter.executor.Executor`, written against the
:class:`~symex.core.interpreter.machine.Machine` it is part of."""

from __future__ import annotations

import time
from typing import Any
from collections.abc import Callable, Sequence


from symex import expr as E
from symex.core.forks import (
    SPLIT_BOTH,
    SPLIT_FALSE_ONLY,
    SPLIT_TRUE_ONLY,
    DecisionTag,
    ForkKind,
)
from symex.core.outcome import (
    TIME_LIMIT_REASON,
    ErrorKind,
    Forked,
    PathStatus,
    PathTerminated,
)
from symex.core.shortfalls import ShortfallKind
from symex.core.site_budgets import site_key
from symex.core.state import NO_MODEL, Frame, State
from symex.core.constraints import substitute
from symex.errors import SolverError, SolverUnknown
from symex.expr.reads import read_elements
from symex.ir.program import (
    Edge,
)
from symex.solvers.base import Query, Validity
from symex.core.interpreter.machine import Machine

#: values concretize() fixes without counting a shortfall: the path ends with them
_NOT_SHORTFALLS = frozenset({"exit code", "exit status"})
#: Decisions._run_deadline while no site budget has brought the solver's deadline forward
_NO_BUDGET: Any = object()
#: Decisions._solve_within's answer for a question not answered in its time
_CUT: Any = object()
#: the longest a question whose answer only saves work may take (can a pointer be other than
#: the inputs' value? cksum's table read at a checksum fixed by its printing: a CRC preimage,
#: 30 s unanswered); unanswered, the work is done the general way
OPTIONAL_QUESTION_TIME = 1.0
#: rewrites a state remembers under one set of equalities (Executor.simplify)
SIMPLIFIED_LIMIT = 4096
#: Executor.split's answer for each replayed SPLIT answer (0 false only, 1 true only, 2 both)
_REPLAYED_SPLITS = ((None, NO_MODEL), (NO_MODEL, None), (NO_MODEL, NO_MODEL))


class Decisions(Machine):
    """Conditions and values on a path: simplification under its equalities, the solver's
    questions (one per symbolic branch, about the constraint groups the condition reads),
    and the forks that follow."""

    #: the run's deadline while a site's budget brought the solver's forward for one query
    _run_deadline: Any = _NO_BUDGET

    # -- solver -------------------------------------------------------------------------

    def simplify(self, state: State, condition: E.Expr) -> E.Expr:
        """``condition`` rewritten with the equalities the path already implies. A loop
        compares the same symbolic bytes again on every iteration, so the rewrites made
        under the path's current equalities are remembered (``State.simplified``) until it
        learns another one."""
        equalities = state.equalities
        if not equalities or condition.op is E.Op.CONST:
            return condition
        if not self.memos:
            return substitute(condition, equalities)
        memo = state.simplified
        if memo is None or memo[0] is not equalities:
            memo = state.simplified = (equalities, {})
        done = memo[1]
        found = done.get(condition)
        if found is None:
            if len(done) >= SIMPLIFIED_LIMIT:
                done.clear()  # a long loop over ever new conditions: keep memory bounded
            found = done[condition] = self._rewrite(state, condition)
        return found

    def _rewrite(self, state: State, condition: E.Expr) -> E.Expr:
        """``condition`` under the path's equalities. Paths meet the same few conditions
        under ever other equalities (regexp: 49 conditions rewritten 102,177 times), but
        the constraints on the bytes a condition reads are often the same: the rewrite is
        remembered with them, for every path that holds them (``ConstraintGroups.rewrites_of``)."""
        groups = state.groups
        elements = read_elements(condition)
        if groups.independent_of(elements):
            return condition  # every equality's left side reads bytes a constraint reads
        shared = groups.rewrites_of(elements)
        if shared is None:
            return substitute(condition, state.equalities)
        found = shared.get(condition)
        if found is None:
            if len(shared) >= SIMPLIFIED_LIMIT:
                shared.clear()
            found = shared[condition] = substitute(condition, state.equalities)
        return found

    def solve(self, state: State, extra: tuple[E.Expr, ...]) -> dict[E.Array, bytes] | None:
        """Inputs satisfying the state's constraints plus ``extra``, or None if there are none."""
        arrays = [s.array for s in state.symbolics]
        values = self._initial_values(state, state.constraints + extra, arrays)
        return None if values is None else dict(zip(arrays, values))

    def _initial_values(self, state: State, constraints: tuple[E.Expr, ...],
                        arrays: Sequence[E.Array]) -> list[bytes] | None:
        """The solver's contents of ``arrays`` under ``constraints`` (None: unsatisfiable)."""
        started = time.perf_counter() if self.memo is not None else 0.0
        try:
            return self.solver.get_initial_values(constraints, arrays)
        except SolverUnknown as exc:
            raise self.unanswered(exc) from None
        except SolverError:
            return None  # get_initial_values raises exactly when the constraints are unsatisfiable
        finally:
            if self.memo is not None:
                self.memo.solver_used(state, time.perf_counter() - started)

    def solve_beside(self, state: State, model: dict[E.Array, bytes],
                     condition: E.Expr) -> dict[E.Array, bytes] | None:
        """Inputs satisfying the state's constraints and ``condition``, or None, where
        ``model`` satisfies the constraints: only the constraints sharing bytes with the
        condition (transitively: core.independence) go to the solver, and its answer for
        their bytes replaces those of ``model``; every other constraint reads other bytes,
        which keep satisfying it. Without a partition (symbolic indices), :meth:`solve`."""
        elements = read_elements(condition)
        needed = state.groups.slice(elements) if self.independent_splits else None
        if needed is None:
            return self.solve(state, (condition,))
        constraints = needed.constraints + (condition,)
        group_model = self.group_model
        if group_model is not None:
            # the slice and the condition share bytes, transitively: one group, which the
            # chain need not partition again
            started = time.perf_counter() if self.memo is not None else 0.0
            try:
                answer = group_model(constraints, model)
            except SolverUnknown as exc:
                raise self.unanswered(exc) from None
            finally:
                if self.memo is not None:
                    self.memo.solver_used(state, time.perf_counter() - started)
            if answer is None:
                return None
        else:
            arrays = needed.arrays(elements)
            values = self._initial_values(state, constraints, arrays)
            if values is None:
                return None
            answer = dict(zip(arrays, values))
        touched: dict[E.Array, list[int]] = {}
        for array, index in needed.elements.union(elements):
            touched.setdefault(array, []).append(index)  # type: ignore[arg-type]  # exact
        merged = dict(model)
        for array, indices in touched.items():
            before = merged.get(array)
            mixed = bytearray(before if before is not None else bytes(array.size))
            data = answer.get(array, b"")
            for index in indices:
                if index < array.size:
                    mixed[index] = data[index] if index < len(data) else 0
            merged[array] = bytes(mixed)
        return merged

    def unanswered(self, exc: SolverUnknown) -> PathTerminated:
        """How a path ends when the solver could not answer for it: at the run's time limit
        (the deadline cut the query; resumable later), else as partial, saying why."""
        run_deadline = self._run_deadline
        if run_deadline is not _NO_BUDGET:
            # a site's budget cut the query: the run's own deadline says whether time is up
            if run_deadline is not None and time.monotonic() >= run_deadline:
                return PathTerminated(PathStatus.PARTIAL, TIME_LIMIT_REASON, limit=True)
            return PathTerminated(PathStatus.PARTIAL, f"solver: {exc.reason}")
        past_deadline = getattr(self.solver, "past_deadline", None)
        if past_deadline is not None and past_deadline():
            return PathTerminated(PathStatus.PARTIAL, TIME_LIMIT_REASON, limit=True)
        return PathTerminated(PathStatus.PARTIAL, f"solver: {exc.reason}")

    def model_of(self, state: State) -> dict[E.Array, bytes]:
        """The state's satisfying inputs, computed if unknown."""
        if state.model is None:
            model = self.solve(state, ())
            if model is None:
                raise PathTerminated(PathStatus.PARTIAL, "the path condition became unsatisfiable")
            state.model = model
        return state.model

    def split(self, state: State, condition: E.Expr) -> tuple[Any, Any]:
        """Inputs taking the path with ``condition`` true, and with it false (None where that
        is impossible; ``NO_MODEL`` where it is possible, as a replayed path knows, but the
        inputs are not known). The state's model decides one side; at most one solver query."""
        if condition.op is E.Op.CONST:
            # no question to ask: the state's inputs (known or not) stay as they are
            known = state.model if state.model is not None else NO_MODEL
            return (known, None) if condition.value else (None, known)
        memo = self.memo
        if memo is not None:
            replayed = memo.replayed_answer(state, DecisionTag.SPLIT, condition)
            if replayed is not None:
                return _REPLAYED_SPLITS[replayed]
        model = self.model_of(state)
        sides: tuple[Any, Any]
        holds = bool(E.Assignment(model).evaluate(condition))
        other = self._other_side(state, model, condition, holds)
        sides = (model, other) if holds else (other, model)
        if memo is not None:
            memo.note_answer(state, DecisionTag.SPLIT, condition,
                             SPLIT_BOTH if sides[0] is not None and sides[1] is not None
                             else SPLIT_TRUE_ONLY if sides[0] is not None else SPLIT_FALSE_ONLY)
        return sides

    def _undecided(self, state: State, condition: E.Expr, holds: bool,
                   model: dict[E.Array, bytes]) -> None:
        """The other side of ``condition`` was not decided in time (``--max-solver-time`` or
        its site's budget): the side the inputs take is feasible, so the path goes on there,
        assuming it (callers treat a one-sided answer as implied); KLEE ends the whole path
        instead."""
        state.add_constraint(condition if holds else E.bool_not(condition), model=model)
        self.shortfalls.add(ShortfallKind.UNDECIDED, "branch", self.program_site(state))
        # the chain's cex cache learns the inputs, or every later question of this path
        # would ask the solver about the same undecidable constraint again
        assume_model = getattr(self.solver, "assume_model", None)
        if assume_model is not None:
            assume_model(state.constraints, model)

    def _other_side(self, state: State, model: dict[E.Array, bytes], condition: E.Expr,
                    holds: bool) -> Any:
        """Inputs taking the side of ``condition`` that ``model`` does not take (None: none,
        or not decided in time: :meth:`_undecided`)."""
        other = self._solve_within(state, model, E.bool_not(condition) if holds else condition)
        if other is _CUT:
            self._undecided(state, condition, holds, model)
            return None
        return other

    def _solve_within(self, state: State, model: dict[E.Array, bytes], condition: E.Expr,
                      cap: float | None = None) -> Any:
        """:meth:`solve_beside` in the time the state's site has left (core.site_budgets)
        and at most ``cap`` seconds: the solver's deadline is brought forward for the one
        query, and put back after it. ``_CUT`` where the question was not answered in
        that time (the site learns it); the run's own deadline ends the path as before."""
        budgets = self.site_budgets
        site = site_key(state) if budgets is not None else None
        budget = budgets.budget(site) if budgets is not None and site is not None else None
        if budget == 0.0:
            return _CUT
        if cap is not None and (budget is None or budget > cap):
            budget = cap
        set_deadline: Callable[[float | None], None] | None = getattr(self.solver, "set_deadline", None)
        run_deadline = getattr(self.solver, "deadline", None)
        if set_deadline is None:
            budget = None  # a solver object without deadlines: the run's limit only
        elif budget is not None:
            cut = time.monotonic() + budget
            set_deadline(cut if run_deadline is None else min(cut, run_deadline))
            self._run_deadline = run_deadline
        try:
            found = self.solve_beside(state, model, condition)
        except PathTerminated as ended:
            if ended.limit:
                raise  # the run's own deadline: the path is cut, to be resumed
            if budgets is not None and site is not None:
                budgets.timed_out(site, budget)
            return _CUT
        finally:
            if budget is not None and set_deadline is not None:
                set_deadline(run_deadline)
                self._run_deadline = _NO_BUDGET
        if budgets is not None and site is not None:
            budgets.answered(site)
        return found

    def evaluate(self, state: State, condition: E.Expr) -> Validity:
        """Validity of a width-1 condition on the state's path."""
        condition = self.simplify(state, condition)
        if condition.op is E.Op.CONST:
            return Validity.TRUE if condition.value else Validity.FALSE
        if_true, if_false = self.split(state, condition)
        if if_false is None:
            return Validity.TRUE
        if if_true is None:
            return Validity.FALSE
        return Validity.UNKNOWN

    def inputs_for(self, state: State, condition: E.Expr) -> Any:
        """Inputs taking the path where the width-1 ``condition`` holds: a model, ``NO_MODEL``
        (possible, inputs not known: a replayed path) or None (impossible). The queries of
        :meth:`evaluate`, whose answers a caller that forks on several conditions (a switch)
        keeps as its states' models, instead of solving again for each path's test."""
        return self.split(state, self.simplify(state, condition))[0]

    def get_value(self, state: State, value: E.Expr) -> int:
        """Some value of ``value`` on the state's path (from the state's model: no query)."""
        value = self.simplify(state, value)
        if value.op is E.Op.CONST:
            return value.value
        memo = self.memo
        if memo is not None:
            replayed = memo.replayed_answer(state, DecisionTag.VALUE, value)
            if replayed is not None:
                return replayed
        result = E.Assignment(self.model_of(state)).evaluate(value)
        if memo is not None:
            memo.note_answer(state, DecisionTag.VALUE, value, result)
        return result

    def concretize(self, state: State, value: Any, width: int, why: str) -> int:
        """Fix a symbolic value to one possible value, recording the choice as a constraint.
        ``why`` names the value in the run's shortfalls (except an exit status: the path
        ends there, so no code goes unexplored)."""
        value = self.settled(state, value)
        if type(value) is int:
            return value
        v = self.get_value(state, value)
        state.add_constraint(E.eq(E.const(v, width), value), model=state.model)
        if why not in _NOT_SHORTFALLS:
            self.shortfalls.add(ShortfallKind.CONCRETIZED, why, self.program_site(state))
        return v

    def settled(self, state: State, value: Any) -> Any:
        """``value`` as a number where the path's equalities settle it (then it is not a
        choice, and not a shortfall), else simplified on the path."""
        if type(value) is int:
            return value
        value = self.simplify(state, value)
        return value.value if value.op is E.Op.CONST else value

    def holds_or_retry(self, state: State, condition: E.Expr, kind: ForkKind) -> bool:
        """Whether ``condition`` holds on ``state`` (assumed when it does). Where both sides
        are feasible it holds here, and a child takes the negation and runs the current
        instruction again (:meth:`fork_to_retry`); past ``max_forks`` the state's inputs
        decide, without a fork."""
        condition = self.simplify(state, condition)
        if condition.op is E.Op.CONST:
            return bool(condition.value)
        if self.forks_exhausted():
            return self.follow_model(state, condition)
        if_true, if_false = self.split(state, condition)
        if if_true is None:
            return False  # the path already implies the negation
        if if_false is not None:
            self.fork_to_retry(state, condition, kind, if_true, if_false)
        else:
            state.add_constraint(condition, model=if_true)
        return True

    def fork_to_retry(self, state: State, condition: E.Expr, kind: ForkKind,
                      if_true: Any = None, if_false: Any = None) -> State:
        """Split ``state`` on ``condition``, both sides feasible: it goes on with the condition
        true (decision 1); a child takes it false (decision 0) and runs the current
        instruction again, now knowing that (the child is returned). ``if_true``/``if_false``:
        inputs of each side, where known (see :meth:`split`)."""
        child = self.fork(state)
        child.add_constraint(E.bool_not(condition), model=if_false)
        child.decide(0)
        state.decide(1)
        state.add_constraint(condition, model=if_true)
        self.record_fork(kind, condition, [state, child])
        child.frame.pc -= 1
        return child

    def fork_on_values(self, state: State, value: E.Expr, width: int,
                       choose: Callable[[State, E.Expr], list[int]]) -> int:
        """Fix a symbolic value to each of the values ``choose(state, value)`` picks (feasible
        ones, the first first; an unknown answer of the solver while it picks ends the path
        as :meth:`unanswered` says): this state takes the first and the others get a state
        each, which runs the instruction again with its value (``ForkKind.VALUES``). The
        values are recorded as answers, so a replay forks the same way without the solver.
        With no forks left, only the first value is kept."""
        value = self.simplify(state, value)
        if value.op is E.Op.CONST:
            return value.value
        values = self._replayed_values(state, value)
        if values is None:
            try:
                values = choose(state, value)
            except SolverUnknown as exc:
                raise self.unanswered(exc) from None
            self._note_values(state, value, values)
        if len(values) == 1 or self.forks_exhausted():
            state.add_constraint(E.eq(E.const(values[0], width), value))
            return values[0]
        states = [state] + [self.fork(state) for _ in values[1:]]
        for index, (v, each) in enumerate(zip(values, states)):
            each.add_constraint(E.eq(E.const(v, width), value))
            each.decide(index)
        self.record_fork(ForkKind.VALUES, value, states)
        for child in states[1:]:
            child.frame.pc -= 1  # runs the instruction again, with its value
        return values[0]

    def values_of(self, state: State, value: E.Expr, most: int) -> list[int]:
        """Distinct values ``value`` can take on the state's path, the state's inputs' first,
        then one solver question each, until there are no more or ``most`` of them: a list
        of ``most`` may leave others out. Nothing is assumed or forked. The values are
        recorded as answers, so a replay gets the same ones without the solver."""
        value, values = self._known_values(state, value)
        if values is not None:
            return values
        model = self.model_of(state)
        values = [E.Assignment(model).evaluate(value)]
        while len(values) < most:
            other = E.TRUE
            for v in values:
                other = E.bool_and(other, E.ne(value, E.const(v, value.width)))
            found = self.solve_beside(state, model, self.simplify(state, other))
            if found is None:
                break
            values.append(E.Assignment(found).evaluate(value))
        self._note_values(state, value, values)
        return values

    def unique_value(self, state: State, value: E.Expr) -> tuple[int, bool]:
        """The state's inputs' value of ``value`` and whether the path allows no other: one
        question, as KLEE's toUnique asks, whose answer only saves work (a pointer read as
        one number), so it gets at most OPTIONAL_QUESTION_TIME and its site's budget; not
        answered in time, another value may exist. Recorded as :meth:`values_of` records
        (a question cut is noted as two values, the inputs' twice), so a replay answers
        the same without the solver."""
        value, values = self._known_values(state, value)
        if values is None:
            model = self.model_of(state)
            first = E.Assignment(model).evaluate(value)
            other = self._solve_within(state, model, self.simplify(state, E.ne(value, E.const(first, value.width))),
                                       OPTIONAL_QUESTION_TIME)
            values = ([first] if other is None else [first, first] if other is _CUT
                      else [first, E.Assignment(other).evaluate(value)])
            self._note_values(state, value, values)
        return values[0], len(values) == 1

    def _known_values(self, state: State, value: E.Expr) -> tuple[E.Expr, list[int] | None]:
        """``value`` simplified on the path, and its values where no question is needed: a
        constant's one, or those a recorded tree holds for this point (else None)."""
        value = self.simplify(state, value)
        if value.op is E.Op.CONST:
            return value, [value.value]
        return value, self._replayed_values(state, value)

    def _replayed_values(self, state: State, value: E.Expr) -> list[int] | None:
        """The values of ``value`` a recorded tree holds for this point (a count, then each
        value), or None: not replaying, or the recording diverged."""
        memo = self.memo
        count = None if memo is None else memo.replayed_answer(state, DecisionTag.VALUE, value)
        if count is None:
            return None
        values = []
        for _ in range(count):
            recorded = memo.replayed_answer(state, DecisionTag.VALUE, value)  # type: ignore[union-attr]
            if recorded is None:  # the recording diverged: choose afresh
                return None
            values.append(recorded)
        return values

    def _note_values(self, state: State, value: E.Expr, values: list[int]) -> None:
        """Tell the memo the values chosen for ``value`` (see :meth:`_replayed_values`)."""
        memo = self.memo
        if memo is not None:
            memo.note_answer(state, DecisionTag.VALUE, value, len(values))
            for v in values:
                memo.note_answer(state, DecisionTag.VALUE, value, v)

    def value_range(self, state: State, value: E.Expr, cap: int) -> tuple[int, int]:
        """The least value ``value`` can take on the state's path, and the greatest one not
        above ``cap`` (the least again when every value is above it). For a ``choose`` of
        :meth:`fork_on_values`, which turns SolverUnknown into the path's end."""
        capped = E.ule(value, E.const(cap, value.width))
        if self.solver.may_be_true(Query(state.constraints, capped)):
            return self.solver.get_range(Query(state.constraints + (capped,), value))
        low = self.solver.get_range(Query(state.constraints, value))[0]
        return low, low

    def forks_exhausted(self) -> bool:
        """Whether no state splits any more: ``max_forks`` forks happened, or the run is near
        its memory cap (``memory_inhibited``, :mod:`symex.memory_cap`)."""
        return self.memory_inhibited or (self.max_forks is not None and self.forks >= self.max_forks)

    def follow_model(self, state: State, condition: E.Expr) -> bool:
        """Decide a symbolic condition without forking: take the side the state's model
        satisfies (feasible by construction, and no solver query) and assume it."""
        memo = self.memo
        replayed = None if memo is None else memo.replayed_answer(state, DecisionTag.SPLIT,
                                                                  condition)
        if replayed is not None:
            holds = replayed == SPLIT_TRUE_ONLY
        else:
            holds = bool(E.Assignment(self.model_of(state)).evaluate(condition))
            if memo is not None:
                memo.note_answer(state, DecisionTag.SPLIT, condition,
                                 SPLIT_TRUE_ONLY if holds else SPLIT_FALSE_ONLY)
        state.add_constraint(condition if holds else E.bool_not(condition), model=state.model)
        return holds

    def choose_option(self, state: State, options: list[E.Expr]) -> int:
        """The index of the first of ``options`` (width-1 conditions, one of which the inputs
        satisfy) that the state's inputs satisfy; it is assumed. No fork, no query."""
        memo = self.memo
        key = options[0]
        replayed = None if memo is None else memo.replayed_answer(state, DecisionTag.OPTION, key)
        if replayed is not None:
            chosen = replayed
        else:
            assignment = E.Assignment(self.model_of(state))
            chosen = next(i for i, hit in enumerate(options) if assignment.evaluate(hit))
            if memo is not None:
                memo.note_answer(state, DecisionTag.OPTION, key, chosen)
        state.add_constraint(options[chosen], model=state.model)
        return chosen


    def branch(self, state: State, frame: Frame, condition: E.Expr, true_edge: Edge,
               false_edge: Edge, fcode: list[list[Any]], outcomes: bytearray | None = None,
               slot: int = 0) -> None:
        """A conditional branch on a symbolic condition: follow it, or fork. ``outcomes`` and
        ``slot`` say where the branch records its outcomes (true at ``slot``, false after)."""
        condition = self.simplify(state, condition)
        fn = frame.function
        # one side only: a constant condition, no forks left (follow the inputs), or a side
        # the solver found infeasible
        follow: bool | None = None
        if_true = if_false = None
        unchecked = False
        if condition.op is E.Op.CONST:
            follow = bool(condition.value)
        elif self.forks_exhausted():
            follow = self.follow_model(state, condition)
        elif (seeded_sides := self.seeded_sides(state, condition)) is not None:
            unchecked = True
            if_true, if_false = seeded_sides
        else:
            if_true, if_false = self.split(state, condition)
            if if_false is None:
                follow = True
            elif if_true is None:
                follow = False
        if follow is not None:
            self.take_outcome(fn, outcomes, slot if follow else slot + 1)
            self.jump(state, frame, true_edge if follow else false_edge, fcode)
            return
        child = self.fork(state)
        state.add_constraint(condition, model=if_true)
        child.add_constraint(E.bool_not(condition), model=if_false,
                             elements=read_elements(condition))
        state.decide(1)
        child.decide(0)
        state.depth += 1
        child.depth += 1
        self.record_fork(ForkKind.BRANCH, condition, [state, child])
        if unchecked:
            # the seed's side goes on; the other waits, its outcome counted once checked
            if if_true is not NO_MODEL:
                self.take_outcome(fn, outcomes, slot)
                self.jump(state, frame, true_edge, fcode)
                self._jump_unchecked(child, false_edge, fcode, outcomes, slot + 1)
            else:
                self.take_outcome(fn, outcomes, slot + 1)
                self.jump(child, child.frame, false_edge, fcode)
                self._jump_unchecked(state, true_edge, fcode, outcomes, slot)
            raise Forked()
        self.take_outcome(fn, outcomes, slot)
        self.take_outcome(fn, outcomes, slot + 1)
        self.jump(state, frame, true_edge, fcode)
        self.jump(child, child.frame, false_edge, fcode)
        raise Forked()

    def seeded_sides(self, state: State, condition: E.Expr) -> tuple[Any, Any] | None:
        """For a state following a seed: the sides of ``condition`` as :meth:`split` gives
        them, without the solver: the seed's side with the seed's inputs, the other
        ``NO_MODEL``, to be left unchecked until the searcher picks it (Kuchta and Cadar's
        pending states), so a seed's path never waits on the solver (memcached's keys
        through murmur3 took seconds a query). None for other states, with a recorded tree
        (it wants every answer at the fork) or with ``defer_seeded_forks`` off."""
        if (state.seeds is None or condition.op is E.Op.CONST or self.memo is not None
                or not self.defer_seeded_forks):
            return None
        model = self.model_of(state)
        if E.Assignment(model).evaluate(condition):
            return model, NO_MODEL
        return NO_MODEL, model

    def _jump_unchecked(self, state: State, edge: Edge, fcode: list[list[Any]],
                        outcomes: bytearray | None, slot: int) -> None:
        """``jump`` for the side of a fork nobody checked (see ``branch``): the registers
        move now, the coverage waits until :meth:`checked` finds the side feasible (an
        infeasible side must not count as covered)."""
        frame = state.frame
        covered = self.coverage[frame.function.name]
        target = edge.target
        new = not covered[target]
        if new:
            covered[target] = 1  # so that jump does not count the block
        self.jump(state, frame, edge, fcode)
        if new:
            covered[target] = 0
        state.unchecked = (frame.function, outcomes, slot)

    def checked(self, state: State) -> bool:
        """Check an unchecked state (``State.unchecked``) before it runs: whether its path is
        feasible (then it counts its branch outcome and block, and has inputs); False: it is
        no path (the caller drops it)."""
        assert state.unchecked is not None, "only an unchecked state is checked"
        if state.model is None:
            model = self.solve(state, ())
            if model is None:
                return False
            state.model = model
        pending = state.unchecked
        state.unchecked = None
        if pending:  # a branch side: its outcome and block count now
            fn, outcomes, slot = pending
            self.take_outcome(fn, outcomes, slot)
            block = state.frame.block.index
            if not self.coverage[fn.name][block]:
                self.reach_new_block(state, fn, block)
        return True


    def check_fault(self, state: State, bad: Any, kind: ErrorKind, message: str) -> None:
        """If ``bad`` (width-1 value) can hold, report ``kind``: on this state when it must hold,
        else on a forked sibling, while this state continues under ``not bad``."""
        if type(bad) is int:
            if bad:
                self.fail(state, kind, message)
            return
        bad = self.simplify(state, bad)
        if bad.op is not E.Op.CONST and self.forks_exhausted():
            if self.follow_model(state, bad):
                self.fail(state, kind, message)
            return
        if_bad, if_ok = self.split(state, bad)
        if if_bad is None:
            return
        if if_ok is None:
            self.fail(state, kind, message)
        error = self.make_error(state, kind, message)
        child = self.fork(state)
        self.new_states.remove(child)
        child.add_constraint(bad, model=if_bad)
        state.add_constraint(E.bool_not(bad), model=if_ok)
        child.decide(1)
        state.decide(0)
        self.record_fork(ForkKind.ERROR_CHECK, bad, [state, child])
        self.ended.append((child, PathTerminated(PathStatus.ERROR, message, error)))

