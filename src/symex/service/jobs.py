"""What a job is: its checked specification, the run it becomes, and its results.

A job runs in a process of its own (:mod:`symex.service.job_process`), so a job that crashes
or is killed never takes the server with it; the process gets a :class:`JobOrder` (the
program and the run's frozen :class:`~symex.description.RunDescription`) and writes the run's
directory as ``symex run`` does (tests, ``.err`` reports, coverage, run.stats, the recorded
tree), which is the job's result. Only what a :class:`JobSpec` checked reaches the order, and
every path in it is inside the job's own directory.
"""

from __future__ import annotations

import enum
import hashlib
import io
import os
import pickle
import re
import shlex
import sqlite3
import zipfile
from pathlib import Path
from typing import Any

import attrs

from symex.core.memory.models import DEFAULT_MEMORY_MODEL, memory_model_name
from symex.description import RunDescription
from symex.engine import writing_into
from symex.errors import ConfigError
from symex.output.atomic_write import write_atomically
from symex.output.ktest import KTest, KTestError, read_seeds
from symex.output.rendering import shown_objects
from symex.output.testcomp import metadata_xml, nondet_inputs, testcase_xml
from symex.replay import NativeSandbox
from symex.service.job_files import JobRun, read_job_bytes
from symex.symargs import ArgvSpec

__all__ = ["MAX_NAME_CHARS", "MAX_PROGRAM_BYTES", "MAX_SEEDS", "MAX_SEED_BYTES", "SEEDS_DIRECTORY",
           "Crash", "Goal", "JobSpec", "Policy", "crashes", "latest_progress",
           "JobOrder", "job_order", "progress", "tests_zip", "without_job_paths"]

#: seconds between two rows of a job's progress (its run.stats)
PROGRESS_SECONDS = 1.0
#: the largest program a job may upload
MAX_PROGRAM_BYTES = 16 << 20
#: a job's seeds (.ktest files whose paths run first): at most this many, each this large
MAX_SEEDS = 64
MAX_SEED_BYTES = 1 << 20
#: where in a job's directory its seeds are kept (``symex run --seed-dir``)
SEEDS_DIRECTORY = "seeds"
#: the longest budget a job may ask for, in seconds
MAX_JOB_SECONDS = 24 * 3600
#: the most workers a job may ask for
MAX_JOB_WORKERS = 256
#: error kinds by severity, most severe first (memory errors can be exploited; a hang denies
#: service; a failed assertion is the program's own check; a user-reported error is the
#: harness's)
SEVERITY: tuple[str, ...] = ("ptr", "free", "readonly", "exec", "hang", "overshift", "div",
                             "abort", "assert", "reach_error", "user")
_PROGRAM_SUFFIXES = (".c", ".ll", ".bc")
_DEFINE = re.compile(r"^-D[A-Za-z_][A-Za-z0-9_]*(=[A-Za-z0-9_.+-]*)?$")
_OPTIMIZE = re.compile(r"^-O[0-3s]$")
_COUNT = re.compile(r"^[0-9]{1,9}$")
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
_LOCATION = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*(:[0-9]{1,9})?$")
_FRAME_PATH = re.compile(r" at (?:\S*/)?([^/\s]+:\d+)$")


class Policy(enum.Enum):
    """What to do when a job's goal and its budget conflict (Cloud9's resource policy)."""

    BUDGET_FIRST = "budget-first"
    """The budget is a hard limit: the job stops when it is spent, goal reached or not."""
    GOAL_FIRST = "goal-first"
    """The goal matters more: the job may run on past its budget, up to ``max_time``, and
    reports how far over the budget it went."""


class Goal(enum.Enum):
    """When a job has done what it was asked (else its budget stops it)."""

    ALL_PATHS = "all-paths"
    """Every path explored."""
    CRASHES = "crashes"
    """Every distinct crash (by kind and stack) the budget finds, or every one there is."""
    FIRST_CRASH = "first-crash"
    """The first error found: the job stops there."""
    LINE_COVERAGE = "line-coverage"
    """``line-coverage:N``: N % of the program's lines covered."""
    BRANCH_COVERAGE = "branch-coverage"
    """``branch-coverage:N``: N % of its branches covered."""
    REACH = "reach"
    """``reach:FUNCTION`` or ``reach:FILE:LINE``: a path reaches it."""

    @property
    def takes_percent(self) -> bool:
        """Whether the goal is written ``NAME:N``."""
        return self in (Goal.LINE_COVERAGE, Goal.BRANCH_COVERAGE)


#: how a goal is written, for error messages
GOAL_FORMS = ("all-paths, crashes, first-crash, line-coverage:N, branch-coverage:N (N a "
              "percentage), reach:FUNCTION or reach:FILE:LINE")


@attrs.frozen
class JobSpec:
    """A job's checked specification (built from the request by :meth:`parse`)."""

    goal: Goal
    target: float | None
    """The percentage of a coverage goal (None for the others)."""
    max_time: float
    workers: int
    flags: tuple[str, ...]
    """Compiler flags: ``-DNAME[=VALUE]`` and ``-O LEVEL`` only."""
    inputs: tuple[str, ...]
    """KLEE's input options: ``--sym-arg N``, ``--sym-args MIN MAX N``, ``--sym-files N
    SIZE``, ``--sym-stdin N``, and Cloud9's ``--sym-packets N SIZE``."""
    location: str | None = None
    """What a reach goal must reach (``FUNCTION`` or ``FILE:LINE``)."""
    budget: float | None = None
    """Worker-seconds the job may use (None: ``workers x max_time``)."""
    policy: Policy = attrs.field(default=None, converter=lambda p: p or Policy.BUDGET_FIRST)
    """What wins when goal and budget conflict."""
    arguments: tuple[str, ...] = ()
    """The program's own concrete arguments (a server's ``-p 11211 -u root``), after it."""
    max_sym_array_size: int = 0
    """``--max-sym-array-size``: symbolic offsets into bigger objects are fixed (0: never)."""
    entry: str = "main"
    """The function the run starts from."""
    memory_model: str = DEFAULT_MEMORY_MODEL
    """``--memory-model``: how a symbolic pointer is resolved (symex's models or an
    installed plug-in's)."""

    @property
    def time_limit(self) -> float:
        """The run's wall-clock limit: ``max_time``, and under the budget-first policy no
        longer than the budget lasts with the job's workers."""
        if self.budget is None or self.policy is Policy.GOAL_FIRST:
            return self.max_time
        return min(self.max_time, self.budget / self.workers)

    @property
    def reserved(self) -> float:
        """The worker-seconds the job may use at most."""
        return self.workers * self.time_limit

    @classmethod
    def parse(cls, goal: str, max_time: float, workers: int, flags: str,
              inputs: str, budget: float | None = None,
              policy: str = "budget-first", arguments: str = "",
              max_sym_array_size: int = 0, entry: str = "main",
              memory_model: str = DEFAULT_MEMORY_MODEL) -> JobSpec:
        """Check a request's fields; ConfigError says what is wrong and what to send."""
        try:
            parsed_policy = Policy(policy)
        except ValueError:
            raise ConfigError(f"unknown policy {policy!r}; choose budget-first (stop when the "
                              f"budget is spent) or goal-first (run on to max_time for the "
                              f"goal)") from None
        if budget is not None and not 0 < budget <= MAX_JOB_SECONDS * MAX_JOB_WORKERS:
            raise ConfigError("budget (worker-seconds) must be above 0")
        name, _, percent = goal.partition(":")
        try:
            parsed_goal = Goal(name)
        except ValueError:
            raise ConfigError(f"unknown goal {goal!r}; choose one of {GOAL_FORMS}") from None
        target = None
        location = None
        if parsed_goal is Goal.REACH:
            if not _LOCATION.match(percent):
                raise ConfigError(f"goal {goal!r} needs a location: reach:FUNCTION or "
                                  f"reach:FILE:LINE (letters, digits, '_', '.', '-')")
            location = percent
        elif parsed_goal.takes_percent:
            try:
                target = float(percent)
            except ValueError:
                target = -1.0
            if not 0 < target <= 100:
                raise ConfigError(f"goal {goal!r} needs a percentage above 0 and at most 100, "
                                  f"e.g. {name}:90")
        elif percent:
            raise ConfigError(f"goal {name!r} takes no percentage; goals are {GOAL_FORMS}")
        if not 0 < max_time <= MAX_JOB_SECONDS:
            raise ConfigError(f"max_time must be above 0 and at most {MAX_JOB_SECONDS} s")
        if not 1 <= workers <= MAX_JOB_WORKERS:
            raise ConfigError(f"workers must be 1 to {MAX_JOB_WORKERS}")
        if not 0 <= max_sym_array_size < 1 << 32:
            raise ConfigError("max_sym_array_size must be 0 (never) or a size in bytes")
        if not _IDENTIFIER.match(entry or ""):
            raise ConfigError(f"entry {entry!r} is not a C function's name: send the name of "
                              f"the function the run starts from (letters, digits, '_')")
        memory_model_name(memory_model)  # an unknown name: a ConfigError listing the models
        flag_words = tuple(flags.split())
        for word in flag_words:
            if not (_DEFINE.match(word) or _OPTIMIZE.match(word)):
                raise ConfigError(f"flag {word!r} is not allowed; a job takes -DNAME[=VALUE] "
                                  f"and -O0..-O3/-Os")
        return cls(parsed_goal, target, float(max_time), int(workers), flag_words,
                   _check_inputs(inputs.split()), location,
                   float(budget) if budget is not None else None, parsed_policy,
                   _check_arguments(arguments), int(max_sym_array_size), entry, memory_model)

    def goal_reached(self, row: dict[str, float]) -> str | None:
        """For a coverage goal, what a progress row says when it meets it (else None)."""
        if self.target is None:
            return None
        kind = "line" if self.goal is Goal.LINE_COVERAGE else "branch"
        total = row.get(f"total_{kind}s") or 0
        percent = 100.0 * (row.get(f"covered_{kind}s") or 0) / total if total else 0.0
        if percent + 1e-9 < self.target:
            return None
        return f"goal reached: {kind} coverage {percent:.1f} % >= {self.target:g} %"

    @property
    def input_bytes(self) -> int:
        """The symbolic bytes of data the job's input options make at most."""
        return ArgvSpec.parse(list(self.inputs)).input_bytes

    @property
    def goal_text(self) -> str:
        """The goal as the request wrote it."""
        if self.location is not None:
            return f"{self.goal.value}:{self.location}"
        return self.goal.value if self.target is None else f"{self.goal.value}:{self.target:g}"

    def as_json(self) -> dict[str, Any]:
        """The specification as stored."""
        return {"goal": self.goal_text, "max_time": self.max_time, "workers": self.workers,
                "budget": self.budget, "policy": self.policy.value,
                "flags": list(self.flags), "inputs": list(self.inputs),
                "arguments": list(self.arguments), "max_sym_array_size": self.max_sym_array_size,
                "entry": self.entry, "memory_model": self.memory_model}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> JobSpec:
        """The specification stored by :meth:`as_json`."""
        goal, _, rest = data["goal"].partition(":")
        reach = Goal(goal) is Goal.REACH
        return cls(Goal(goal), float(rest) if rest and not reach else None,
                   float(data["max_time"]), int(data["workers"]), tuple(data["flags"]),
                   tuple(data["inputs"]), rest if reach else None, data.get("budget"),
                   Policy(data.get("policy", Policy.BUDGET_FIRST.value)),
                   tuple(data.get("arguments", ())), int(data.get("max_sym_array_size", 0)),
                   str(data.get("entry", "main")),
                   str(data.get("memory_model", DEFAULT_MEMORY_MODEL)))


#: at most this many program arguments, each at most this long
MAX_ARGUMENTS, MAX_ARGUMENT_CHARS = 64, 256


def _check_inputs(words: list[str]) -> tuple[str, ...]:
    """The symbolic-input options, read as ``symex run`` reads them (``ArgvSpec``: KLEE's
    syntax); anything else, the program's own arguments included, is refused."""
    try:
        items = ArgvSpec.parse(words).items
    except ConfigError as exc:
        hint = "" if "--sym-dir" in str(exc) else " (a number of at most 9 digits)"
        raise ConfigError(f"inputs: {exc}{hint}") from None
    stray = next((item for item in items if isinstance(item, str)), None)
    if stray is not None:
        raise ConfigError(f"input option {stray!r} is not known; use --sym-arg N, "
                          f"--sym-args MIN MAX N, --sym-files N SIZE, --sym-stdin N, "
                          f"--sym-stdout, --sym-packets N SIZE, --sym-fragments N, "
                          f"--sym-dir DIR or --max-fail N (the program's own arguments go in "
                          f"'arguments')")
    # --sym-dir's directory is checked by SymDir; every other word is an option or a count
    directories = {k + 1 for k, word in enumerate(words) if word in ("--sym-dir", "-sym-dir")}
    if any(not word.startswith("-") and not _COUNT.match(word)
           for k, word in enumerate(words) if k not in directories):
        raise ConfigError("the numbers of the input options have at most 9 digits")
    return tuple(words)


def _check_arguments(text: str) -> tuple[str, ...]:
    """The program's arguments, split as a shell would (quotes group words; nothing is run
    through a shell: they are argv)."""
    try:
        words = tuple(shlex.split(text))
    except ValueError as exc:
        raise ConfigError(f"arguments: {exc}; quote words the shell way ('a b' or \"a b\")") from None
    if len(words) > MAX_ARGUMENTS or any(len(w) > MAX_ARGUMENT_CHARS or "\0" in w for w in words):
        raise ConfigError(f"arguments: at most {MAX_ARGUMENTS} words of at most "
                          f"{MAX_ARGUMENT_CHARS} characters each")
    return words


#: the longest name an upload may have
MAX_NAME_CHARS = 100
#: a name the job's directory can hold and no command line mistakes for an option: a letter,
#: digit or '_' first, no '..', a known suffix after a stem
_PROGRAM_NAME = re.compile(r"^(?!.*\.\.)[A-Za-z0-9_][A-Za-z0-9_.-]*\.(?:c|ll|bc)$")


def check_program_name(name: str) -> str:
    """The upload's file name, reduced to its base name, checked: at most
    :data:`MAX_NAME_CHARS` characters, starting with a letter, digit or '_', then letters,
    digits, '_', '-' and '.', never '..', ending in .c, .ll or .bc after a stem."""
    base = (name or "").replace("\\", "/").rsplit("/", 1)[-1]
    if len(base) > MAX_NAME_CHARS:
        raise ConfigError(f"the program's file name has {len(base)} characters; send one of at "
                          f"most {MAX_NAME_CHARS}")
    if not _PROGRAM_NAME.match(base):
        raise ConfigError("the program must be a .c, .ll or .bc file with a plain name: a "
                          "letter, digit or '_' first, then letters, digits, '_', '-' and "
                          "'.' (no '..'), e.g. two_bugs.c")
    return base


@attrs.frozen
class JobOrder:
    """What a job's process runs (:mod:`symex.service.job_process`): the program (a path in
    the job's directory, where the process runs), its compile flags, the run's frozen
    description, and the output directory; the scheduler writes it as a pickle beside the
    output directory (``run-N.order``)."""

    program: str
    flags: tuple[str, ...]
    description: RunDescription
    out_dir: str
    replay: NativeSandbox = NativeSandbox()
    """How its crashes are built and replayed natively."""

    def write(self, path: Path) -> None:
        """Save the order for the job's process (renamed into place: whatever stands there
        in the job's directory is replaced, not followed)."""
        write_atomically(path, pickle.dumps(self))

    @staticmethod
    def read(path: Path) -> JobOrder:
        """The order the scheduler saved (it writes only files of the job's own)."""
        order = pickle.loads(path.read_bytes())
        if not isinstance(order, JobOrder):
            raise ConfigError(f"{path} holds no job order; the scheduler writes them")
        return order


def job_order(spec: JobSpec, program: Path, out_dir: Path,
              continue_with: Path | None = None, cluster: str | None = None,
              seeds: Path | None = None, *, root: Path = Path("."),
              replay: NativeSandbox = NativeSandbox(),
              max_memory: float | None = None) -> JobOrder:
    """What a job's process runs for ``spec``: the tree recorded into ``out_dir`` (with
    workers, the coordinator's journal too), the workers on the Ray cluster at ``cluster``
    when given, the seeds in the directory ``seeds`` when given, and, continuing an earlier
    attempt's tree, every recorded path replayed (without the solver), so that this
    attempt's directory holds all the job's tests, not only those explored since; its run
    within ``max_memory`` MB, its crashes replayed as ``replay`` says. Paths
    stay as given (relative to the job's directory ``root``, where the process runs; the
    seeds are read now, from there)."""
    inputs = ArgvSpec.parse(list(spec.inputs)).items
    seeded = [attrs.evolve(seed, origin=os.path.relpath(seed.origin, root))
              for seed in read_seeds(directories=[root / seeds])] if seeds is not None else []
    description = RunDescription.build(
        max_time=spec.time_limit, workers=spec.workers, cluster=cluster,
        exit_on_error=spec.goal is Goal.FIRST_CRASH,
        # every error path gets its report: crashes() tells them apart by kind and stack
        emit_all_errors=spec.goal is Goal.CRASHES,
        stop_at=() if spec.location is None else (spec.location,),
        seeds=seeded,
        max_sym_array_size=spec.max_sym_array_size,
        continue_with=continue_with, restart_all_states=continue_with is not None,
        sym_args=ArgvSpec(inputs + ArgvSpec.parse(list(spec.arguments)).items),
        progress_interval=PROGRESS_SECONDS, max_memory=max_memory, entry=spec.entry,
        memory_model=spec.memory_model)
    return JobOrder(os.fspath(program), spec.flags, writing_into(description, out_dir),
                    os.fspath(out_dir), replay)


@attrs.frozen
class Crash:
    """One error a job found, as the API reports it."""

    kind: str
    message: str
    location: str
    stack: tuple[str, ...]
    """Frames, innermost first: ``function at file:line``, then the source line."""
    test: str
    """The ``.ktest`` file that reproduces it."""
    input: dict[str, str]
    """The test's objects, name -> hex bytes."""
    replayed: bool | None = None
    """Whether the native build of the program failed the same way (None: not tried)."""
    shown: dict[str, str] = attrs.field(factory=dict)
    """The test's objects as ``symex run`` shows them (a number, text or cut hex), name ->
    value (:func:`symex.output.rendering.show_object`)."""
    not_replayed: str | None = None
    """Why ``replayed`` is None, once the job has ended: ``not replayed: no sandbox (...)``,
    the upload was IR, the native build failed."""

    def as_json(self) -> dict[str, Any]:
        """The crash as the API shows it."""
        return attrs.asdict(self)


def crashes(run: JobRun) -> list[Crash]:
    """The distinct errors of a finished run (one per kind and stack), most severe first,
    then in the order found."""
    found = []
    seen: set[tuple[str, tuple[str, ...]]] = set()
    files = run.files()
    for name in (n for n in files if _ERR_FILE.fullmatch(n)):
        test_name, kind, _ = name.split(".", 2)
        lines = (run.read_text(name) or "").splitlines()
        fields = dict(line.split(": ", 1) for line in lines if ": " in line
                      and not line.startswith("\t"))
        # files by their names: the server's directories are none of the tenant's business
        stack = tuple(_FRAME_PATH.sub(r" at \1", line.strip())
                      for line in lines if line.startswith("\t"))
        key = (kind, tuple(frame for frame in stack if frame.startswith("#")))
        if key in seen:
            continue  # the same crash on another path (with --emit-all-errors)
        seen.add(key)
        ktest = f"{test_name}.ktest"
        objects = _objects(run.read_bytes(ktest))
        found.append(Crash(kind, fields.get("Error", ""),
                           f"{Path(fields.get('File', '?')).name}:{fields.get('Line', '?')}",
                           stack, ktest, {n: d.hex() for n, d in objects.items()},
                           shown=shown_objects(objects)))
    rank = {kind: i for i, kind in enumerate(SEVERITY)}
    return sorted(found, key=lambda c: rank.get(c.kind, len(SEVERITY)))


_ERR_FILE = re.compile(r"test[0-9]+\.[a-z_]+\.err")
_KTEST_FILE = re.compile(r"test[0-9]+\.ktest")


def _objects(data: bytes | None) -> dict[str, bytes]:
    """A test's objects by name ({} for a missing or damaged ``.ktest``)."""
    try:
        return {o.name: o.data for o in KTest.from_bytes(data).objects} if data else {}
    except KTestError:
        return {}


def without_job_paths(text: str, job_dir: Path) -> str:
    """``text`` with the job's directory taken out of the paths it names (the program's file
    by its name): no server path leaves the job."""
    for directory in {str(job_dir), str(job_dir.resolve())}:
        text = text.replace(directory + os.sep, "").replace(directory, ".")
    return text


def test_suite_zip(run: JobRun, program_name: str) -> bytes:
    """The run's tests as a Test-Comp suite (``metadata.xml`` and one ``testNNNNNN.xml`` a
    test, the values of its ``__VERIFIER_nondet_*`` calls), made from its ``.ktest`` files
    when asked for (writing it during the run cost a file per path), in memory: a run of
    7,000 tests is zipped in well under a second."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        # the program as the job holds it, by its name: no server path leaves the job
        program = read_job_bytes(run.where, program_name) or b""
        archive.writestr("test-suite/metadata.xml",
                         metadata_xml(program_name, hashlib.sha256(program).hexdigest()))
        files = run.files()
        reached = {name for name in files if name.endswith(".reach_error.err")}
        count = 0
        for name, data in run.read_files(n for n in files if _KTEST_FILE.fullmatch(n)):
            try:
                objects = {o.name: o.data for o in KTest.from_bytes(data or b"").objects}
            except KTestError:
                continue
            count += 1
            covers_error = f"{name[:-len('.ktest')]}.reach_error.err" in reached
            archive.writestr(f"test-suite/test{count:06d}.xml",
                             testcase_xml(nondet_inputs(objects), covers_error=covers_error))
    return buffer.getvalue()


def tests_zip(run: JobRun) -> bytes:
    """Every ``.ktest`` of a run (and its ``.err`` reports, the job's directory taken out of
    their paths) as a zip file."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        wanted = (n for n in run.files() if _KTEST_FILE.fullmatch(n) or _ERR_FILE.fullmatch(n))
        for name, data in run.read_files(wanted):
            if data is None:
                continue
            if name.endswith(".err"):
                text = data.decode("utf-8", "replace")   # as read_text reads it
                archive.writestr(name, without_job_paths(text, run.where))
            else:
                archive.writestr(name, data)
    return buffer.getvalue()


#: run.stats column -> the name a progress row has in the API
_PROGRESS_COLUMNS = {"WallTime": "elapsed", "CompletedPaths": "completed",
                     "ErrorPaths": "errors", "PartialPaths": "partial",
                     "CoveredLines": "covered_lines", "TotalLines": "total_lines",
                     "CoveredBranches": "covered_branches", "TotalBranches": "total_branches",
                     "SolverTime": "solver_time", "NumStates": "live_states",
                     "Instructions": "instructions"}


def progress(run: JobRun) -> list[dict[str, float]]:
    """The progress rows a run has written so far (one a second), oldest first."""
    return _progress_rows(run, "ORDER BY Row")


def latest_progress(run: JobRun) -> dict[str, float] | None:
    """The last progress row a run has written (None: none yet), without reading the others:
    the job list asks for it every second."""
    rows = _progress_rows(run, "ORDER BY Row DESC LIMIT 1")
    return rows[0] if rows else None


def _progress_rows(run: JobRun, order: str) -> list[dict[str, float]]:
    try:
        with run.database("run.stats") as db:
            if db is None:
                return []
            rows = db.execute(f"SELECT {', '.join(_PROGRESS_COLUMNS)} FROM stats "
                              f"{order}").fetchall()
    except sqlite3.Error:
        return []  # being created: no row yet
    return [dict(zip(_PROGRESS_COLUMNS.values(), row)) for row in rows]
