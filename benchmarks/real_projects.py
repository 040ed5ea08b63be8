"""Real C projects built the way their users build them, with ``symex cc`` (issue 44).

``explore``: fetch a project (``apt-get source``), build it with nothing but
``CC="symex cc"`` and the project's own configure or cmake options, count the implicit
declarations in the build's log (none may be left: each is a C library function the IR got
wrong), then run each of its tools for ``--time`` seconds with KLEE's coreutils arguments:
paths, errors and whether each reproduces natively (``symex replay`` on the build), paths
that ended partial and why, and line coverage of the project's own files (every source file
under its tree that the run's coverage.info lists).

    python benchmarks/real_projects.py explore --project sed --time 60
    python benchmarks/real_projects.py explore --project bc,cjson --time 60 --work /tmp/rp

``configure``: the time of a project's ``./configure`` with ``CC="symex cc"`` against the
same ``configure`` with the compiler beneath it (zig cc for musl, as symex cc's native
side), each on a fresh unpack, in paired runs (A, B, A, B, ...), and whether both wrote the
same config.h (what configure learnt about the C library). Sources come from Debian
(``apt-get source``, which needs a ``deb-src`` line) or ``--tarball``.

    python benchmarks/real_projects.py configure --package sed --repeat 3

Prints each run, the median of the paired ratios and their spread. Needs make and a shell;
nothing here is a test.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from symex.ir.compile import zig_executable
from symex.ir.musl import MUSL_TARGET

sys.path.insert(0, str(Path(__file__).parent))
from coreutils import KLEE_ARGUMENTS, file_line_hits, run_tool  # noqa: E402  (the same runs as coreutils.py's)


class Project:
    """How one project is fetched, built and run."""

    def __init__(self, package: str, build: str, options: tuple[str, ...],
                 tools: tuple[tuple[str, str], ...], needs: tuple[str, ...] = ()) -> None:
        self.package = package
        #: programs its build runs besides the compiler (Debian's build dependencies)
        self.needs = needs
        #: "autotools" (./configure && make) or "cmake" (cmake in build/, then make)
        self.build = build
        #: the project's own configure or cmake options
        self.options = options
        #: the executables to explore, relative to the build directory, each with the prefix
        #: of its own sources in the tree (its directory, or the library it exercises)
        self.tools = tools


PROJECTS = {
    "sed": Project("sed", "autotools", ("--disable-nls",), (("sed/sed", "sed/"),)),
    "bc": Project("bc", "autotools", (), (("bc/bc", "bc/"), ("dc/dc", "dc/")),
                  needs=("makeinfo", "ed")),
    # a static library (its CMake default is shared), and the fuzz target's file driver;
    # without its -std=c89 -pedantic -Werror: musl's isnan macro spells 1ULL, an error there
    # (zig cc -target x86_64-linux-musl alone stops the same way)
    "cjson": Project("cjson", "cmake", ("-DBUILD_SHARED_LIBS=Off", "-DENABLE_CJSON_TEST=On",
                                        "-DENABLE_CUSTOM_COMPILER_FLAGS=Off"),
                     (("fuzzing/fuzz_main", "cJSON.c"),)),
}


def _step(command: list[str], where: Path, log: Path, env: dict[str, str]) -> str:
    """Run a build step, appending its output to ``log``; exit with its end on failure."""
    proc = subprocess.run(command, cwd=where, env=env, capture_output=True, text=True,
                          errors="replace", stdin=subprocess.DEVNULL)
    with open(log, "a") as handle:
        handle.write(f"$ {' '.join(command)}\n{proc.stdout}{proc.stderr}")
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed in {where} (log: {log}):\n"
                         f"{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return proc.stdout + proc.stderr


def build_project(project: Project, tree: Path, jobs: int) -> tuple[Path, dict[str, object]]:
    """Build ``tree`` with symex cc; the directory the tools are in and the build's facts:
    its seconds and the implicit declarations make's log shows (configure's own checks,
    which compile such calls on purpose, are not counted)."""
    symex = Path(sys.executable).parent / "symex"
    env = {**os.environ, "CC": f"{symex} cc", "FORCE_UNSAFE_CONFIGURE": "1"}
    log = tree / "symex-build.log"
    started = time.monotonic()
    if project.build == "autotools":
        build_dir = tree
        _step(["./configure", f"CC={symex} cc", *project.options], tree, log, env)
    else:
        if shutil.which("cmake") is None:
            raise SystemExit(f"{project.package} builds with cmake: install it (Debian: cmake)")
        build_dir = tree / "build"
        build_dir.mkdir()
        _step(["cmake", "..", *project.options], build_dir, log, env)
    made = _step(["make", f"-j{jobs}"], build_dir, log, env)
    implicit = sorted(set(re.findall(r"implicit declaration of function '([^']+)'", made)))
    return build_dir, {"build_seconds": round(time.monotonic() - started, 1),
                       "implicit_declarations": implicit, "warnings": made.count("warning:")}


def project_coverage(out: Path, tree: Path, prefix: str = "") -> tuple[int, int]:
    """(covered, total) lines of the project's own files (under ``tree``, and there under
    ``prefix``) in the run's lcov file."""
    root = os.path.join(str(tree.resolve()), prefix)
    hits = file_line_hits(out, lambda path: path.startswith(root))
    return sum(count > 0 for count in hits.values()), len(hits)


def explore_projects(options: argparse.Namespace) -> None:
    work = Path(options.work or tempfile.mkdtemp(prefix="symex-projects-"))
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    for name in options.project.split(","):
        project = PROJECTS[name]
        missing = [tool for tool in project.needs if shutil.which(tool) is None]
        if missing:
            raise SystemExit(f"{name}'s build runs {', '.join(missing)}: install them (Debian: "
                             f"apt-get build-dep {project.package}, or texinfo for makeinfo)")
        tree = unpack(debian_tarball(project.package, work), work / f"{name}-{int(time.time())}")
        build_dir, facts = build_project(project, tree, options.jobs)
        print(json.dumps({"project": name, **facts}), flush=True)
        results = work / f"{name}-results"
        results.mkdir(exist_ok=True)
        for tool, sources in project.tools:
            executable = build_dir / tool
            row = run_tool(executable, tool, results, options.time, KLEE_ARGUMENTS,
                           name=executable.name)
            out = results / executable.name
            covered, total = project_coverage(out, tree)
            own_covered, own_total = project_coverage(out, tree, sources)
            row.update(project=name, project_lines=f"{covered}/{total}",
                       project_coverage=round(100 * covered / total, 1) if total else None,
                       own=sources, own_lines=f"{own_covered}/{own_total}",
                       own_coverage=round(100 * own_covered / own_total, 1) if own_total else None,
                       **facts)
            row.pop("unmodelled_reasons", None)
            rows.append(row)
            print(json.dumps(row), flush=True)
    (work / "summary.json").write_text(json.dumps(rows, indent=1))
    print(f"rows in {work / 'summary.json'}")


def debian_tarball(package: str, work: Path) -> Path:
    """The upstream tarball of Debian's source package ``package``, downloaded into ``work``."""
    subprocess.run(["apt-get", "source", "-q", "--download-only", package], cwd=work, check=True,
                   capture_output=True)
    found = [Path(p) for p in glob.glob(str(work / f"{package}_*.orig.tar.*"))]
    if not found:
        raise SystemExit(f"apt-get source {package} left no .orig tarball in {work}")
    return found[0]


def unpack(tarball: Path, into: Path) -> Path:
    into.mkdir(parents=True)
    with tarfile.open(tarball) as archive:
        archive.extractall(into, filter="data")
    (tree,) = [p for p in into.iterdir() if p.is_dir()]
    return tree


def configure(tree: Path, compiler: str) -> float:
    """Seconds ``./configure CC=compiler`` took in ``tree`` (it must succeed)."""
    start = time.perf_counter()
    proc = subprocess.run(["./configure", "-q", f"CC={compiler}"], cwd=tree, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"configure CC={compiler!r} failed in {tree}:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return elapsed


def config_facts(tree: Path) -> list[str]:
    """config.h without its comments: what configure decided."""
    text = (tree / "config.h").read_text(errors="replace")
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.DOTALL)
    return [line.strip() for line in text.splitlines() if line.strip()]


def configure_speed(options: argparse.Namespace) -> None:
    zig = zig_executable()
    symex = Path(sys.executable).parent / "symex"
    if zig is None or not symex.is_file():
        raise SystemExit("needs the ziglang package and the symex script beside this Python")
    plain = f"{zig} cc -target {MUSL_TARGET}"
    with_symex = f"{symex} cc"
    work = Path(tempfile.mkdtemp(prefix="symex-configure-"))
    try:
        tarball = Path(options.tarball) if options.tarball else debian_tarball(options.package, work)
        # one warm-up of each: zig's cache of musl's start files, symex cc's recorded scripts
        for name, compiler in (("plain", plain), ("symex", with_symex)):
            configure(unpack(tarball, work / f"warm-{name}"), compiler)
        ratios, facts = [], {}
        for run in range(options.repeat):
            seconds = {}
            for name, compiler in (("plain", plain), ("symex", with_symex)):
                tree = unpack(tarball, work / f"{name}-{run}")
                seconds[name] = configure(tree, compiler)
                facts[name] = config_facts(tree)
            ratios.append(seconds["symex"] / seconds["plain"])
            print(f"run {run + 1}: zig cc {seconds['plain']:.1f} s, symex cc {seconds['symex']:.1f} s, "
                  f"ratio {ratios[-1]:.2f}", flush=True)
        same = facts["plain"] == facts["symex"]
        print(f"{tarball.name}: configure with symex cc / with zig cc (-target {MUSL_TARGET}): median "
              f"{statistics.median(ratios):.2f}x over {len(ratios)} paired runs "
              f"(from {min(ratios):.2f} to {max(ratios):.2f}); config.h "
              f"{'the same' if same else 'DIFFERS'} ({len(facts['plain'])} lines)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    speed = commands.add_parser("configure", help="configure's time with symex cc against zig cc")
    speed.add_argument("--package", default="sed", help="a Debian source package with a configure (sed)")
    speed.add_argument("--tarball", help="a source tarball instead of Debian's package")
    speed.add_argument("--repeat", type=int, default=3)
    explore = commands.add_parser("explore", help="build projects with symex cc and explore their tools")
    explore.add_argument("--project", default="sed,bc,cjson", help=f"comma-separated: {', '.join(PROJECTS)}")
    explore.add_argument("--time", type=float, default=60.0, help="seconds per tool (60)")
    explore.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="make's jobs")
    explore.add_argument("--work", help="where sources, builds and runs go (default: a new temporary directory)")
    options = parser.parse_args()
    os.environ.setdefault("MAKEFLAGS", "")
    if options.command == "configure":
        configure_speed(options)
    else:
        explore_projects(options)


if __name__ == "__main__":
    main()
