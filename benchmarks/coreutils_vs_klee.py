"""GNU coreutils 9.1 under symex and KLEE 3.2 in the same run: the same tools, the same
arguments, the same search and the same time, and line coverage of each tool's own source
file measured the same way for both, by gcov on a native gcc build that replays each tool's
test cases with KLEE's own klee-replay (symex writes KLEE's .ktest format).

    source ~/klee/ENV          # KLEE_BIN, KLEE_CLANG: from ../shared/tools/build-klee.sh
    python benchmarks/coreutils_vs_klee.py --source coreutils-9.1 --time 60
    python benchmarks/coreutils_vs_klee.py --source coreutils-9.1 --tools echo,wc --time 10
    python benchmarks/coreutils_vs_klee.py --source coreutils-9.1 --tools od --seed 1 --seed 2 --seed 3

--source is coreutils 9.1 as benchmarks/coreutils.py builds it (`apt-get source coreutils`,
then `symex cc` on musl); the `.dsc` that `apt-get source` left beside it is unpacked twice
more under --work: once built as KLEE's tutorial builds it (wllvm on KLEE_CLANG, `-O1 -Xclang
-disable-llvm-passes`, `extract-bc` per tool), once with `gcc --coverage` for the measure.
Each tool runs in both tools at once, one core each, for --time seconds:

- KLEE with the options of its coreutils tutorial (uclibc, POSIX runtime, random-path
  interleaved with nurs:covnew, batching, only tests that cover new code);
- symex with the same search (`--search random-path --search nurs:covnew`), the same
  query limit (`--max-solver-time 30s`) and `--only-output-states-covering-new`; KLEE's
  batches of 10,000 instructions only with `--batch-instructions 10000` here (with them
  symex gained on tr and printf and lost most of date and seq: docs/benchmarks.md).

Both get an empty environment. Then each tool's tests are replayed on the gcov build as an
unprivileged user (tools such as mkdir and mv act on the paths in their arguments), each
engine's counters in their own directory (GCOV_PREFIX), and `gcov` reads the lines of
src/TOOL.c they executed. symex's reported errors are also replayed on its own build (`symex
replay`), as benchmarks/coreutils.py does, and each symex test's native exit status is
compared with the one its run recorded: a difference is a place where symex's model of the
system and Linux part (its lines may then count for neither), reported per tool. With
``--seed`` (repeatable) each tool runs once per seed, KLEE with ``--rng-initial-seed`` and
symex with ``--seed`` set to it, and a tool's figure is the median over its seeds (both
searches are random: one run of od spread 8 points over two seeds). Not a test: figures go to docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import csv
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from coreutils import KLEE_ARGUMENTS, SOURCES, build, run_or_exit, run_tool, tools  # noqa: E402

#: instructions a chosen state runs before the next choice: KLEE's tutorial's batch (symex's
#: only with ``--batch-instructions``: docs/benchmarks.md, "KLEE's batching search")
BATCH_INSTRUCTIONS = 10_000

#: KLEE's coreutils tutorial (klee.github.io/tutorials/testing-coreutils), less its test
#: output extras (--write-cvcs, --write-cov) and with --max-time from --time
KLEE_OPTIONS = (
    "--simplify-sym-indices", "--output-module", "--max-memory=1000", "--disable-inlining",
    "--optimize", "--use-forked-solver", "--use-cex-cache", "--libc=uclibc", "--posix-runtime",
    "--external-calls=all", "--only-output-states-covering-new", "--max-sym-array-size=4096",
    "--max-solver-time=30s", "--watchdog", "--max-memory-inhibit=false",
    "--max-static-fork-pct=1", "--max-static-solve-pct=1", "--max-static-cpfork-pct=1",
    "--switch-type=internal", "--search=random-path", "--search=nurs:covnew",
    "--use-batching-search", f"--batch-instructions={BATCH_INSTRUCTIONS}",
)

#: symex's options for the same run (and ``--batch-instructions``, from the command line)
SYMEX_OPTIONS = ("--search", "random-path", "--search", "nurs:covnew", "--only-output-states-covering-new",
                 "--max-solver-time", "30s")

#: KLEE's tutorial's CFLAGS for coreutils
KLEE_CFLAGS = "-g -O1 -Xclang -disable-llvm-passes -D__NO_STRING_INLINES -D_FORTIFY_SOURCE=0 -U__OPTIMIZE__"


def unpack(source: Path, target: Path) -> Path:
    """A fresh tree of the same Debian source package as ``source`` (its .dsc beside it)."""
    if (target / "configure").is_file():
        return target
    descriptions = sorted(source.parent.glob("coreutils_9.1*.dsc"))
    if not descriptions:
        sys.exit(f"no coreutils_9.1*.dsc beside {source}: run `apt-get source coreutils` in "
                 f"{source.parent} (see benchmarks/coreutils.py)")
    target.parent.mkdir(parents=True, exist_ok=True)
    run_or_exit(["dpkg-source", "-x", str(descriptions[0]), str(target)], target.parent)
    return target


def build_for_klee(tree: Path, clang: str, jobs: int) -> None:
    """configure and make with wllvm on KLEE's clang, as KLEE's tutorial does."""
    if (tree / "src" / "echo").is_file():
        return
    compiler = Path(shutil.which(clang) or clang)
    version = compiler.name.rpartition("-")[2] if "-" in compiler.name else ""
    suffix = f"-{version}" if version.isdigit() else ""
    env = {**os.environ, "LLVM_COMPILER": "clang", "LLVM_COMPILER_PATH": str(compiler.parent),
           "LLVM_CC_NAME": compiler.name, "LLVM_CXX_NAME": f"clang++{suffix}",
           "LLVM_LINK_NAME": f"llvm-link{suffix}", "LLVM_AR_NAME": f"llvm-ar{suffix}",
           "FORCE_UNSAFE_CONFIGURE": "1"}
    print(f"KLEE's build: configure and make in {tree} ...", flush=True)
    run_or_exit(["./configure", "CC=wllvm", "--disable-nls", f"CFLAGS={KLEE_CFLAGS}"], tree, env)
    run_or_exit(["make", f"-j{jobs}"], tree, env)
    (tree / "wllvm.env").write_text(json.dumps({k: env[k] for k in env if k.startswith("LLVM_")}))


def klee_bitcode(tree: Path, tool: str, directory: Path) -> Path:
    """The tool's whole-program bitcode (wllvm's extract-bc), once."""
    target = directory / f"{tool}.bc"
    if not target.is_file():
        directory.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, **json.loads((tree / "wllvm.env").read_text())}
        run_or_exit(["extract-bc", "-o", str(target), str(tree / "src" / tool)], tree, env)
    return target


def build_for_gcov(tree: Path, jobs: int) -> None:
    """configure and make with gcc --coverage, the native build both engines' tests run on."""
    if (tree / "src" / "echo").is_file():
        return
    print(f"gcov build: configure and make in {tree} ...", flush=True)
    env = {**os.environ, "FORCE_UNSAFE_CONFIGURE": "1"}
    run_or_exit(["./configure", "CC=gcc", "--disable-nls", "CFLAGS=-g -O0 --coverage",
                 "LDFLAGS=--coverage"], tree, env)
    run_or_exit(["make", f"-j{jobs}"], tree, env)


def run_klee(klee: str, bitcode: Path, out: Path, seconds: float, sandbox: Path,
             environment: Path, seed: int | None = None) -> dict[str, object]:
    """One KLEE run (``seed``: of its random searches, else KLEE's default): its paths, tests
    and errors."""
    shutil.rmtree(out, ignore_errors=True)
    seeded = [] if seed is None else [f"--rng-initial-seed={seed}"]
    command = [klee, *KLEE_OPTIONS, *seeded, f"--max-time={seconds:g}s", f"--output-dir={out}",
               f"--run-in-dir={sandbox}", f"--env-file={environment}", str(bitcode), *KLEE_ARGUMENTS]
    started = time.monotonic()
    try:
        # the tool's own output passes through KLEE's stderr: any bytes
        proc = subprocess.run(command, capture_output=True, text=True, errors="replace",
                              timeout=seconds * 2 + 120)
    except subprocess.TimeoutExpired:
        return {"failure": "did not stop", "seconds": round(time.monotonic() - started, 1)}
    row: dict[str, object] = {"seconds": round(time.monotonic() - started, 1), "status": proc.returncode}
    for label, key in (("completed paths", "paths"), ("generated tests", "tests")):
        found = re.search(rf"KLEE: done: {label} = (\d+)", proc.stderr)
        row[key] = int(found[1]) if found else None
    if row["paths"] is None:
        row["failure"] = (proc.stderr.strip().splitlines() or ["no summary"])[-1]
    kinds: dict[str, int] = {}
    for report in out.glob("*.err"):
        kind = report.name.split(".")[1]  # test000001.ptr.err
        kinds[kind] = kinds.get(kind, 0) + 1
    row["errors"] = sum(kinds.values())
    row["error_kinds"] = kinds
    return row


def native_exits(notes: str) -> dict[str, int | str]:
    """Each test's native exit in klee-replay's notes (its stderr), by the test's file name:
    the exit code, or how it ended otherwise ("CRASHED signal 11", "TIMED OUT")."""
    exits: dict[str, int | str] = {}
    test = None
    for line in notes.splitlines():
        if "KLEE-REPLAY: NOTE: Test file: " in line:
            test = Path(line.split("Test file: ", 1)[1].strip()).name
        elif test is not None and "EXIT STATUS: " in line and "PTY MASTER" not in line:
            status = line.split("EXIT STATUS: ", 1)[1].split(" (", 1)[0].strip()
            abnormal = re.fullmatch(r"ABNORMAL (\d+)", status)
            exits[test] = 0 if status == "NORMAL" else int(abnormal.group(1)) if abnormal else status
            test = None
    return exits


def exits_differing(results: Path, exits: dict[str, int | str]) -> list[str]:
    """symex's completed tests in ``results`` whose native exit is not the one symex's run
    recorded (tests.csv): each a place where its model of the system and Linux part."""
    differing: list[str] = []
    table = results / "tests.csv"
    if not table.is_file():
        return differing
    with table.open() as rows:
        for row in csv.DictReader(rows):
            name = f"test{int(row['test']):06d}.ktest"
            if row["status"] == "completed" and row["exit_code"] and name in exits \
                    and exits[name] != int(row["exit_code"]):
                differing.append(f"{name}: {row['exit_code']} natively {exits[name]}")
    return differing


def gcov_coverage(gcov_tree: Path, tool: str, own: str, tests: list[Path], counters: Path,
                  replay: str) -> tuple[int, int, dict[str, int | str]]:
    """(executed, total) lines of ``own`` when ``tests`` run on the gcov build's tool, and
    each test's native exit (:func:`native_exits`)."""
    shutil.rmtree(counters, ignore_errors=True)
    counters.mkdir(parents=True)
    as_nobody = os.geteuid() == 0
    if as_nobody:
        os.chmod(counters, 0o777)
    env = {"GCOV_PREFIX": str(counters), "KLEE_REPLAY_TIMEOUT": "5", "PATH": "/usr/bin:/bin"}
    executable = gcov_tree / "src" / tool
    user = {"user": "nobody", "group": "nogroup", "extra_groups": []} if as_nobody else {}

    def replay_some(batch: list[Path]) -> dict[str, int | str]:
        ran = subprocess.run([replay, str(executable), *map(str, batch)], env=env, cwd="/tmp",
                             capture_output=True, text=True, errors="replace", timeout=3600,
                             **user)  # type: ignore[call-overload]
        return native_exits(ran.stderr)

    # klee-replay mostly waits (on its pseudo-terminal and pipes): batches run side by side,
    # each in its own directory; gcov's runtime merges the counters under a file lock
    batches = [tests[start:start + 10] for start in range(0, len(tests), 10)]
    exits: dict[str, int | str] = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        for found in pool.map(replay_some, batches):
            exits.update(found)
    executed = total = 0
    for counts in counters.rglob("src/*.gcda"):
        notes = Path("/" + str(counts.relative_to(counters))).with_suffix(".gcno")
        if notes.is_file():
            shutil.copyfile(notes, counts.with_suffix(".gcno"))
            for lines, done in _gcov_lines(gcov_tree, counts.with_suffix(".gcno"), own):
                if lines > total:
                    executed, total = done, lines
    if total == 0:
        # nothing ran: the file's executable lines from its notes alone
        for notes in sorted((gcov_tree / "src").glob(f"*{Path(own).stem}.gcno"))[:1]:
            total = max((lines for lines, _ in _gcov_lines(gcov_tree, notes, own)), default=0)
    return executed, total, exits


def _gcov_lines(gcov_tree: Path, notes: Path, own: str) -> list[tuple[int, int]]:
    """(lines, executed) of each source file ending in ``own`` that gcov reports for the
    object whose notes (and counters, if any, beside them) are ``notes``."""
    proc = subprocess.run(["gcov", "-n", "-o", str(notes.parent), notes.stem + ".c"],
                          cwd=gcov_tree, capture_output=True, text=True)
    return [(int(lines), round(float(percent) * int(lines) / 100))
            for name, percent, lines in re.findall(r"File '([^']+)'\nLines executed:([\d.]+)% of (\d+)",
                                                   proc.stdout)
            if name.endswith(own)]


def run_label(tool: str, seed: int | None) -> str:
    """The name of a tool's run (its results and counters directories, after the engine's)."""
    return tool if seed is None else f"{tool}-seed{seed}"


def run_both(tool: str, symex_tree: Path, klee_tree: Path, work: Path, seconds: float,
             klee: str, seed: int | None = None, solver: str | None = None,
             batch_instructions: int = 0,
             solver_chain: str | None = None) -> tuple[dict[str, object], dict[str, object]]:
    """Both engines on one tool at once, one core each: KLEE's row and symex's."""
    own = f"src/{SOURCES.get(tool, tool)}.c"
    bitcode = klee_bitcode(klee_tree, tool, work / "bitcode")
    sandbox = work / "sandbox"
    sandbox.mkdir(exist_ok=True)
    environment = work / "empty.env"
    environment.write_text("")
    results = work / "results"
    results.mkdir(exist_ok=True)
    label = run_label(tool, seed)
    shutil.rmtree(results / f"symex-{label}", ignore_errors=True)
    options = SYMEX_OPTIONS if seed is None else (*SYMEX_OPTIONS, "--seed", str(seed))
    if solver is not None:
        options = (*options, "--solver", solver)
    if batch_instructions:
        options = (*options, "--batch-instructions", str(batch_instructions))
    if solver_chain is not None:
        options = (*options, "--solver-chain", solver_chain)
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        klee_run = pool.submit(run_klee, klee, bitcode, results / f"klee-{label}", seconds, sandbox,
                               environment, seed)
        symex_run = pool.submit(run_tool, symex_tree / "src" / tool, own, results, seconds,
                                KLEE_ARGUMENTS, None, f"symex-{label}", options)
        return klee_run.result(), symex_run.result()


def measure(tool: str, rows: tuple[dict[str, object], dict[str, object]], gcov_tree: Path,
            work: Path, replay: str, seed: int | None = None) -> dict[str, object]:
    """Both engines' tests replayed on the gcov build: the tool's row."""
    own = f"src/{SOURCES.get(tool, tool)}.c"
    for engine, row in zip(("klee", "symex"), rows):
        label = run_label(tool, seed)
        tests = sorted((work / "results" / f"{engine}-{label}").glob("*.ktest"))
        executed, total, exits = gcov_coverage(gcov_tree, tool, own, tests, work / "gcda" / engine / label,
                                               replay)
        row["gcov_lines"] = f"{executed}/{total}"
        row["gcov_coverage"] = round(100 * executed / total, 1) if total else None
        if engine == "symex":
            differing = exits_differing(work / "results" / f"symex-{label}", exits)
            row["native_exit_differs"] = len(differing)
            row["native_exit_examples"] = differing[:5]
    return {"tool": tool, "seed": seed, "klee": rows[0], "symex": rows[1]}


def summarize(rows: list[dict[str, object]], results: Path) -> None:
    """Medians of both engines' coverage, and on how many tools symex covers at least as much;
    a tool run with several seeds counts with the median of its runs (and its spread shown)."""
    per_tool: dict[str, tuple[list[float], list[float]]] = {}
    for r in rows:
        klee, ours = r["klee"].get("gcov_coverage"), r["symex"].get("gcov_coverage")  # type: ignore[attr-defined]
        if klee is not None and ours is not None:
            theirs_list, ours_list = per_tool.setdefault(str(r["tool"]), ([], []))
            theirs_list.append(float(klee))
            ours_list.append(float(ours))
    if not per_tool:
        print("no tool measured")
        return
    for tool, (theirs_list, ours_list) in per_tool.items():
        if len(ours_list) > 1:
            print(f"{tool}: symex median {statistics.median(ours_list):.1f}% ({min(ours_list):.1f}-"
                  f"{max(ours_list):.1f}), KLEE median {statistics.median(theirs_list):.1f}% "
                  f"({min(theirs_list):.1f}-{max(theirs_list):.1f}) over {len(ours_list)} seeds")
    theirs = [statistics.median(k) for k, _ in per_tool.values()]
    ours = [statistics.median(s) for _, s in per_tool.values()]
    at_least = sum(s >= k for k, s in zip(theirs, ours))
    print(f"{len(per_tool)} tools: median own-code line coverage (gcov) symex {statistics.median(ours):.1f}%, "
          f"KLEE {statistics.median(theirs):.1f}%; mean symex {sum(ours) / len(ours):.1f}%, KLEE "
          f"{sum(theirs) / len(theirs):.1f}%; symex covers at least KLEE's lines on {at_least}")
    differing = {str(r["tool"]): r["symex"].get("native_exit_differs", 0) for r in rows}  # type: ignore[attr-defined]
    if any(differing.values()):
        print(f"symex tests whose native exit status differs from symex's: {sum(differing.values())} "
              f"({', '.join(f'{tool} {count}' for tool, count in differing.items() if count)})")
    (results / "summary.json").write_text(json.dumps(rows, indent=1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, required=True,
                        help="coreutils 9.1 built by benchmarks/coreutils.py (symex cc, musl)")
    # replays run as nobody when we are root: the builds, the tests and klee-replay must be
    # readable by all, so the default is not under a home directory
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "symex-vs-klee")
    parser.add_argument("--tools", help="comma-separated tools (default: all benchmarks/coreutils.py runs)")
    parser.add_argument("--time", type=float, default=60.0, help="seconds per tool and engine (60)")
    parser.add_argument("--seed", type=int, action="append",
                        help="seed of both engines' random searches; repeat to run each tool once "
                             "per seed (default: one run, each engine's own default seed)")
    parser.add_argument("--solver", help="symex's solver configuration (default: symex's own), "
                                         "e.g. 'choose(z3, bitwuzla)'; KLEE keeps z3")
    parser.add_argument("--solver-chain", help="symex's solver chain layers, comma-separated (default: "
                        "symex's own; e.g. trivial,independence,cache,cex,search)")
    parser.add_argument("--batch-instructions", type=int, default=0,
                        help=f"symex's --batch-instructions (default 0: symex chooses a state at "
                             f"every fork; KLEE's here is {BATCH_INSTRUCTIONS}); KLEE keeps its own")
    options = parser.parse_args()
    klee = os.environ.get("KLEE_BIN")
    if not klee:
        sys.exit("set KLEE_BIN (and KLEE_CLANG): source the ENV file ../shared/tools/build-klee.sh wrote")
    clang = os.environ.get("KLEE_CLANG", "clang-14")
    jobs = os.cpu_count() or 2
    source = options.source.resolve()
    build(source, jobs)
    work = options.work.resolve()
    (work / "bin").mkdir(parents=True, exist_ok=True)
    replay = str(shutil.copy2(Path(klee).with_name("klee-replay"), work / "bin" / "klee-replay"))
    klee_tree = unpack(source, work / "klee-build")
    gcov_tree = unpack(source, work / "gcov-build")
    build_for_klee(klee_tree, clang, jobs)
    build_for_gcov(gcov_tree, jobs)
    chosen = tools(source, options.tools.split(",") if options.tools else None)
    seeds: list[int | None] = list(options.seed or [None])
    print(f"coreutils: {len(chosen)} tools, {options.time:g} s each in symex and in KLEE at once"
          f"{f', seeds {seeds}' if options.seed else ''}", flush=True)
    rows = []
    runs: list[tuple[str, int | None] | None] = [(tool, seed) for tool in chosen for seed in seeds]
    # a tool's replays (mostly waiting on klee-replay's terminal) overlap the next tool's runs
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as measuring:
        pending: concurrent.futures.Future[dict[str, object]] | None = None
        for run in [*runs, None]:
            ran = run_both(run[0], source, klee_tree, work, options.time, klee, run[1],
                           options.solver, options.batch_instructions, options.solver_chain) if run else None
            if pending is not None:
                rows.append(pending.result())
                print(json.dumps(rows[-1]), flush=True)
            if run is not None and ran is not None:
                pending = measuring.submit(measure, run[0], ran, gcov_tree, work, replay, run[1])
    summarize(rows, work / "results")
    return 0


if __name__ == "__main__":
    sys.exit(main())
