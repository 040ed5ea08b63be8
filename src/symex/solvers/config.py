"""Solver configuration strings: ``BACKEND[:ENCODING[:SESSION]]``, ``portfolio(CONFIG, ...)``
and ``choose(CONFIG, ...)``.

Every place that takes a solver (the Python API, ``symex run --solver``) takes the same string,
so it is parsed here once into frozen values that the solver factory and the portfolio racer
share (and that cross process boundaries unchanged: they are plain picklable values).
"""

from __future__ import annotations

import enum
import re

import attrs

from symex.encodings import ENCODINGS
from symex.errors import ConfigError
from symex.plugins import PluginKind, plugin_names
from symex.solvers.backends import BACKEND_NAMES, BACKENDS

__all__ = [
    "DEFAULT_ASSUMPTION_THRESHOLD",
    "DEFAULT_ENCODING",
    "DEFAULT_STAGGER",
    "GRAMMAR",
    "ChoiceConfig",
    "KNOWN_ENCODINGS",
    "PortfolioConfig",
    "SessionKind",
    "SolverConfig",
    "parse_config",
]

#: How many guard literals an assumptions session creates before it resets (the seed's 50).
DEFAULT_ASSUMPTION_THRESHOLD = 50
#: Seconds a portfolio's recently fastest member runs alone before the others join the race
#: (measured on benchmarks/queries: see docs/solver.md).
DEFAULT_STAGGER = 0.005

#: The encodings a configuration may name: those :mod:`symex.encodings` defines.
KNOWN_ENCODINGS: tuple[str, ...] = tuple(ENCODINGS)
#: The encoding a configuration without one gets: ``hybrid`` (small memory objects as
#: ``ite``, other arrays as ``array-assert``). Measured end to end with
#: benchmarks/solver_default.py over the five corpus programs: z3 0.83x of array-assert's
#: time in geometric mean (histogram 0.40x, the others 0.99x), bitwuzla 0.97x, cvc5 1.00x on
#: the three it finished (docs/benchmarks.md, "KLEE parity and speed").
DEFAULT_ENCODING = "hybrid"

#: The grammar every configuration error quotes, so the user sees what is accepted.
GRAMMAR = (
    "BACKEND[:ENCODING[:SESSION]], portfolio(CONFIG, CONFIG, ...[, stagger=SECONDS]) or "
    "choose(CONFIG, CONFIG, ...), where BACKEND is one of "
    f"{', '.join(BACKEND_NAMES)} (or an installed plug-in's); ENCODING is one of "
    f"{', '.join([f'{DEFAULT_ENCODING} (default)', *(e for e in ENCODINGS if e != DEFAULT_ENCODING)])}; "
    "SESSION is none, pushpop (default), "
    "assumptions or assumptions(N) with N >= 1 (default 50); "
    "e.g. 'z3', 'bitwuzla:ite', 'z3:array-assert:assumptions(50)', "
    "'portfolio(z3, z3:array-assert:pushpop)', 'portfolio(z3, bitwuzla, stagger=0)', "
    "'choose(z3, bitwuzla)'"
)


class SessionKind(enum.Enum):
    """How a solver context is reused between queries."""

    NONE = "none"
    """A fresh context per query."""
    PUSHPOP = "pushpop"
    """The context follows the path with push/pop, one level per constraint."""
    ASSUMPTIONS = "assumptions"
    """Each constraint asserted once behind a guard literal; checks under the query's guards."""


def _positive(instance: object, attribute: attrs.Attribute[int], value: int) -> None:
    if value < 1:
        raise ConfigError(f"{attribute.name} must be at least 1, got {value}; {GRAMMAR}")


@attrs.frozen
class SolverConfig:
    """One solver configuration: which package, which memory encoding, which session."""

    backend: str = "z3"
    """A backend name of :data:`symex.solvers.backends.BACKENDS` (``pysmt`` may be
    ``pysmt-SOLVER``)."""
    encoding: str = DEFAULT_ENCODING
    """One of :data:`KNOWN_ENCODINGS`."""
    # push/pop by default: on symex's own workloads (the engine's one query per symbolic
    # branch along a growing path) it was 6x faster than a fresh z3 context per query
    # (tests/programs/branches.c, N=10: 0.94 s against 5.93 s) and, unlike reusing one context
    # without push/pop, its answers do not depend on earlier runs
    session: SessionKind = SessionKind.PUSHPOP
    """How the context is reused between queries."""
    threshold: int = attrs.field(default=DEFAULT_ASSUMPTION_THRESHOLD, validator=_positive)
    """For assumption sessions: guards created before the context is reset."""

    def __str__(self) -> str:
        """The canonical configuration string (parses back to an equal value)."""
        session = self.session.value
        if self.session is SessionKind.ASSUMPTIONS:
            session = f"assumptions({self.threshold})"
        return f"{self.backend}:{self.encoding}:{session}"


@attrs.frozen
class PortfolioConfig:
    """Several configurations raced on every query; the first definite answer wins."""

    members: tuple[SolverConfig, ...]
    """The racing configurations, in the order they were written (at least one)."""
    stagger: float = DEFAULT_STAGGER
    """Seconds the recently fastest member runs alone before the others join (0: all
    start together). Most queries are answered within it, without paying for a race."""

    def __str__(self) -> str:
        """The canonical configuration string (parses back to an equal value)."""
        members = ", ".join(str(m) for m in self.members)
        if self.stagger != DEFAULT_STAGGER:
            members += f", stagger={self.stagger:g}"
        return f"portfolio({members})"


@attrs.frozen
class ChoiceConfig:
    """Several configurations, one of which answers each query: the one that has cost least on
    this run's queries so far (:class:`symex.solvers.choice.ChoosingSolver`)."""

    members: tuple[SolverConfig, ...]
    """The configurations to choose from, in the order they were written (at least two; the
    first answers first, while nothing is known yet)."""

    def __str__(self) -> str:
        """The canonical configuration string (parses back to an equal value)."""
        return "choose(" + ", ".join(str(m) for m in self.members) + ")"


_SESSION_RE = re.compile(r"^assumptions\s*\(\s*(\d+)\s*\)$")
_LIST_RE = re.compile(r"^(portfolio|choose)\s*\((.*)\)$", re.DOTALL)


def _bad(text: str, why: str) -> ConfigError:
    return ConfigError(f"invalid solver configuration {text!r}: {why}; expected {GRAMMAR}")


def _parse_single(text: str, whole: str) -> SolverConfig:
    parts = [p.strip() for p in text.split(":")]
    if len(parts) > 3 or not parts[0]:
        raise _bad(whole, f"'{text}' is not BACKEND[:ENCODING[:SESSION]]")
    backend = parts[0].lower()
    base, _, option = backend.partition("-")
    if (base not in BACKENDS or (option and base != "pysmt")) \
            and backend not in plugin_names(PluginKind.BACKEND):
        raise _bad(whole, f"unknown backend '{parts[0]}'")
    encoding = parts[1].lower() if len(parts) > 1 else DEFAULT_ENCODING
    if encoding not in KNOWN_ENCODINGS:
        raise _bad(whole, f"unknown encoding '{parts[1]}'")
    session_text = parts[2].lower() if len(parts) > 2 else "pushpop"
    threshold = DEFAULT_ASSUMPTION_THRESHOLD
    if session_text in ("none", "pushpop", "assumptions"):
        session = SessionKind(session_text)
    else:
        match = _SESSION_RE.match(session_text)
        if match is None:
            raise _bad(whole, f"unknown session '{parts[2]}'")
        session = SessionKind.ASSUMPTIONS
        threshold = int(match.group(1))
        if threshold < 1:
            raise _bad(whole, f"the assumption threshold must be at least 1, got {threshold}")
    return SolverConfig(backend, encoding, session, threshold)


def parse_config(
    text: str | SolverConfig | PortfolioConfig | ChoiceConfig,
) -> SolverConfig | PortfolioConfig | ChoiceConfig:
    """The configuration a string names (values are returned unchanged).

    Raises :class:`symex.errors.ConfigError` quoting the grammar for anything else.
    """
    if isinstance(text, (SolverConfig, PortfolioConfig, ChoiceConfig)):
        return text
    if not isinstance(text, str):
        raise ConfigError(f"a solver configuration must be a string, got {type(text).__name__}; "
                          f"expected {GRAMMAR}")
    stripped = text.strip()
    match = _LIST_RE.match(stripped)
    if match is None:
        if "," in stripped:
            raise _bad(text, "only portfolio(...) and choose(...) take a list of configurations")
        return _parse_single(stripped, text)
    kind, inner = match.group(1), match.group(2)
    if "portfolio" in inner or "choose" in inner:
        raise _bad(text, f"a {kind}(...) cannot contain a portfolio(...) or choose(...)")
    members = _split_members(inner)
    if not any(m.strip() for m in members):
        raise _bad(text, f"{kind}(...) needs at least one configuration")
    if any(not m.strip() for m in members):
        raise _bad(text, f"empty configuration in the {kind}(...) list")
    if kind == "choose":
        if len(members) < 2:
            raise _bad(text, "choose(...) needs at least two configurations to choose from")
        return ChoiceConfig(tuple(_parse_single(m.strip(), text) for m in members))
    stagger = DEFAULT_STAGGER
    if members[-1].strip().lower().startswith("stagger"):
        option = members.pop().strip()
        name, _, value = option.partition("=")
        try:
            stagger = float(value)
        except ValueError:
            stagger = -1.0
        if name.strip().lower() != "stagger" or not 0 <= stagger < float("inf"):
            raise _bad(text, f"'{option}' is not stagger=SECONDS with SECONDS >= 0")
        if not members:
            raise _bad(text, "a portfolio needs at least one configuration")
    return PortfolioConfig(tuple(_parse_single(m.strip(), text) for m in members), stagger)


def _split_members(inner: str) -> list[str]:
    """``inner`` split on the commas outside parentheses (assumptions(N) is the only nested
    form)."""
    members: list[str] = []
    depth = 0
    current: list[str] = []
    for ch in inner:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            members.append("".join(current))
            current = []
        else:
            current.append(ch)
    members.append("".join(current))
    return members
