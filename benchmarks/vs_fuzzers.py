"""symex beside libFuzzer on real fuzz targets, for the same wall time (issue 45, part 5).

Three fuzz targets of Debian source packages (``apt-get source``, which needs a ``deb-src``
line), each as its project ships it:

- ``lz4-block``: lz4's ``ossfuzz/decompress_fuzzer.c`` (the block decompressor);
- ``lz4-frame``: lz4's ``ossfuzz/decompress_frame_fuzzer.c`` (the frame format: a magic
  number, flags and a header checksum before any data);
- ``cjson``: cJSON's ``fuzzing/cjson_read_fuzzer.c``.

Each is built three ways: the library with ``symex cc`` into an archive (the target itself is
compiled by ``symex run --fuzz-target``), with clang's ``-fsanitize=fuzzer,address``, and
with ``gcc --coverage`` and a driver that runs every file it is given. Then, for ``--time``
seconds each, one at a time on the machine:

- libFuzzer alone, from an empty corpus;
- symex alone (``--fuzz-target --corpus-out``);
- both: symex for the first half, then libFuzzer seeded with symex's corpus for the second.

The three run one after another, ``--repeat`` times (3): the figures are the medians, with
each repetition's beside them (libFuzzer is random; so is symex's default search).

Each run's corpus (crash files included) is replayed on the coverage build, one process per
input, and gcov counts the lines and branches of the library's own files. Not a test:
figures go to docs/benchmarks.md.

    python benchmarks/vs_fuzzers.py --time 120 --work /tmp/vs-fuzzers
    python benchmarks/vs_fuzzers.py --targets cjson --time 30
"""

from __future__ import annotations

import argparse
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

import attrs

from symex.replay import libfuzzer_clang

SYMEX = [sys.executable, "-m", "symex.cli"]

#: the driver of the coverage build: every file named on its command line, one after another
_COVERAGE_MAIN = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv);
int main(int argc, char **argv) {
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  for (int i = 1; i < argc; i++) {
    FILE *f = fopen(argv[i], "rb");
    long n;
    uint8_t *buffer;
    if (!f) continue;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buffer = malloc(n ? (size_t)n : 1);
    if (fread(buffer, 1, (size_t)n, f) != (size_t)n) n = 0;
    fclose(f);
    LLVMFuzzerTestOneInput(buffer, (size_t)n);
    free(buffer);
  }
  return 0;
}
"""


@attrs.frozen
class Target:
    """A fuzz target of a Debian source package."""

    package: str
    target: str
    """The target's file, relative to the source tree."""
    library: tuple[str, ...]
    """The other C files it links with (the library, the project's fuzzing helpers)."""
    measured: tuple[str, ...]
    """The library files whose coverage is counted."""
    includes: tuple[str, ...]
    max_input: int


TARGETS = {
    "lz4-block": Target("lz4", "ossfuzz/decompress_fuzzer.c",
                        ("ossfuzz/fuzz_data_producer.c", "lib/lz4.c"), ("lib/lz4.c",),
                        ("lib", "ossfuzz"), 64),
    "lz4-frame": Target("lz4", "ossfuzz/decompress_frame_fuzzer.c",
                        ("ossfuzz/fuzz_data_producer.c", "ossfuzz/lz4_helpers.c", "lib/lz4.c",
                         "lib/lz4hc.c", "lib/lz4frame.c", "lib/xxhash.c"), ("lib/lz4frame.c",),
                        ("lib", "ossfuzz"), 64),
    "cjson": Target("cjson", "fuzzing/cjson_read_fuzzer.c", ("cJSON.c",), ("cJSON.c",), (".",), 64),
}


def source_tree(package: str, work: Path) -> Path:
    """Debian's source of ``package``, unpacked under ``work`` (once)."""
    found = sorted(p for p in work.glob(f"{package}-*") if p.is_dir())
    if not found:
        subprocess.run(["apt-get", "source", "-q", package], cwd=work, check=True, capture_output=True)
        found = sorted(p for p in work.glob(f"{package}-*") if p.is_dir())
    if not found:
        sys.exit(f"apt-get source {package} left no tree in {work} (is there a deb-src line?)")
    return found[0]


def build(target: Target, tree: Path, out: Path) -> tuple[Path, Path, Path]:
    """The three builds: symex's archive of the library, libFuzzer's binary, the coverage
    build (its objects in ``out/cov``)."""
    includes = [f"-I{tree / d}" for d in target.includes]
    out.mkdir(parents=True, exist_ok=True)
    objects = []
    for source in target.library:
        obj = out / "symex" / (Path(source).stem + ".o")
        obj.parent.mkdir(exist_ok=True)
        subprocess.run([*SYMEX, "cc", "-c", *includes, str(tree / source), "-o", str(obj)],
                       check=True, capture_output=True)
        objects.append(str(obj))
    archive = out / "symex" / "library.a"
    archive.unlink(missing_ok=True)
    subprocess.run(["ar", "rcs", str(archive), *objects], check=True)
    fuzzer = out / "fuzzer"
    clang = libfuzzer_clang()
    if clang is None:
        sys.exit("no clang here links libFuzzer (-fsanitize=fuzzer): apt-get install clang")
    subprocess.run([clang, "-g", "-O1", "-fsanitize=fuzzer,address", *includes, str(tree / target.target),
                    *(str(tree / s) for s in target.library), "-o", str(fuzzer)],
                   check=True, capture_output=True)
    cov = out / "cov"
    cov.mkdir(exist_ok=True)
    main = cov / "coverage_main.c"
    main.write_text(_COVERAGE_MAIN)
    linked = []
    for part in (tree / target.target, *(tree / s for s in target.library), main):
        obj = cov / (part.stem + ".o")
        subprocess.run(["gcc", "-O0", "-g", "--coverage", "-c", *includes, str(part), "-o", str(obj)],
                       check=True, capture_output=True)
        linked.append(str(obj))
    replayer = cov / "replay"
    subprocess.run(["gcc", "--coverage", *linked, "-o", str(replayer)], check=True, capture_output=True)
    return archive, fuzzer, replayer


def run_libfuzzer(fuzzer: Path, corpus: Path, seconds: float, max_len: int,
                  seeds: Path | None = None) -> None:
    """libFuzzer for ``seconds`` into ``corpus`` (reading ``seeds`` too); crash files stay
    there (``-artifact_prefix``), and it goes on after one (``-fork`` is not used: one core)."""
    corpus.mkdir(parents=True, exist_ok=True)
    command = [str(fuzzer), f"-max_total_time={max(1, int(seconds))}", f"-max_len={max_len}",
               "-rss_limit_mb=2048", f"-artifact_prefix={corpus}/", "-print_final_stats=1",
               str(corpus)]
    if seeds is not None:
        command.append(str(seeds))
    deadline = time.monotonic() + seconds
    # a crash stops libFuzzer: start it again until the time is spent (its corpus grows on)
    while time.monotonic() < deadline - 1:
        left = deadline - time.monotonic()
        command[1] = f"-max_total_time={max(1, int(left))}"
        subprocess.run(command, capture_output=True, timeout=left + 60)


def run_symex(target: Target, tree: Path, archive: Path, corpus: Path, seconds: float) -> dict[str, str]:
    """symex for ``seconds`` into ``corpus``: its summary lines."""
    with tempfile.TemporaryDirectory() as scratch:
        ran = subprocess.run([*SYMEX, "run", "--fuzz-target", "--max-input", str(target.max_input),
                              "--max-time", f"{seconds:g}", "--corpus-out", str(corpus), "-q",
                              "--output-dir", str(Path(scratch) / "out"),
                              *(f"-I{tree / d}" for d in target.includes),
                              str(tree / target.target), str(archive)],
                             capture_output=True, text=True)
    if ran.returncode != 0:
        sys.exit(f"symex run failed: {ran.stderr[-2000:]}")
    explored = [line for line in ran.stderr.splitlines() if line.startswith("symex: explored")]
    return {"summary": explored[0] if explored else ""}


def coverage(replayer: Path, corpora: list[Path], measured: tuple[str, ...], tree: Path) -> dict[str, object]:
    """Lines and branches of the ``measured`` files the corpora's inputs execute."""
    cov = replayer.parent
    for stale in cov.glob("*.gcda"):
        stale.unlink()
    inputs = [p for corpus in corpora for p in sorted(corpus.iterdir()) if p.is_file()]
    for path in inputs:  # one process each: a crashing input loses only its own counts
        subprocess.run([str(replayer), str(path)], capture_output=True, timeout=60, cwd=cov)
    lines = branches = total_lines = total_branches = 0
    for name in measured:
        source = tree / name
        obj = cov / (source.stem + ".o")
        ran = subprocess.run(["gcov", "-b", "-n", "-o", str(obj), str(source)], capture_output=True,
                             text=True, cwd=cov)
        block = ran.stdout.split(f"File '{source}'", 1)[-1]
        line = re.search(r"Lines executed:([\d.]+)% of (\d+)", block)
        taken = re.search(r"Taken at least once:([\d.]+)% of (\d+)", block)
        if line:
            total_lines += int(line.group(2))
            lines += round(float(line.group(1)) * int(line.group(2)) / 100)
        if taken:
            total_branches += int(taken.group(2))
            branches += round(float(taken.group(1)) * int(taken.group(2)) / 100)
    return {"inputs": len(inputs), "lines": lines, "total_lines": total_lines,
            "branches": branches, "total_branches": total_branches}


def run_once(target: Target, tree: Path, builds: tuple[Path, Path, Path], runs: Path,
             seconds: float) -> dict[str, dict[str, object]]:
    """One repetition of the three configurations on one target: coverage of each."""
    archive, fuzzer, replayer = builds
    shutil.rmtree(runs, ignore_errors=True)
    run_libfuzzer(fuzzer, runs / "libfuzzer", seconds, target.max_input)
    alone = run_symex(target, tree, archive, runs / "symex", seconds)
    first = run_symex(target, tree, archive, runs / "both-symex", seconds / 2)
    run_libfuzzer(fuzzer, runs / "both-libfuzzer", seconds / 2, target.max_input,
                  seeds=runs / "both-symex")
    return {"libfuzzer": coverage(replayer, [runs / "libfuzzer"], target.measured, tree),
            "symex": {**coverage(replayer, [runs / "symex"], target.measured, tree), **alone},
            "both": {**coverage(replayer, [runs / "both-symex", runs / "both-libfuzzer"],
                                target.measured, tree), "symex_half": first}}


CONFIGS = ("libfuzzer", "symex", "both")


def median_row(name: str, seconds: float, repetitions: list[dict[str, dict[str, object]]]) -> dict[str, object]:
    """A target's figures over its repetitions: per configuration the median lines, branches
    and inputs, with every repetition's lines and branches beside them."""
    row: dict[str, object] = {"target": name, "seconds": seconds, "repetitions": len(repetitions)}
    for config in CONFIGS:
        runs = [r[config] for r in repetitions]
        row[config] = {
            **{key: statistics.median_low(int(r[key]) for r in runs)  # type: ignore[call-overload]
               for key in ("lines", "branches", "inputs")},
            "total_lines": runs[0]["total_lines"], "total_branches": runs[0]["total_branches"],
            "each_lines": [r["lines"] for r in runs], "each_branches": [r["branches"] for r in runs]}
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--targets", default=",".join(TARGETS), help="comma-separated: " + ", ".join(TARGETS))
    parser.add_argument("--time", type=float, default=120.0, help="seconds per configuration (120)")
    parser.add_argument("--repeat", type=int, default=3,
                        help="repetitions of the three configurations, one after another (3): "
                             "medians are reported")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "symex-vs-fuzzers")
    options = parser.parse_args()
    work = options.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    for name in options.targets.split(","):
        target = TARGETS[name]
        tree = source_tree(target.package, work)
        builds = build(target, tree, work / name)
        repetitions = []
        for index in range(options.repeat):
            once = run_once(target, tree, builds, work / name / "runs", options.time)
            print(json.dumps({"target": name, "repetition": index + 1, **once}), flush=True)
            repetitions.append(once)
        row = median_row(name, options.time, repetitions)
        rows.append(row)
        print(json.dumps(row), flush=True)
    print(f"\nmedians of {options.repeat} repetitions, {options.time:g} s each")
    print(f"{'target':10} {'config':10} {'lines':>14} {'branches':>14} {'inputs':>7}  lines each")
    for row in rows:
        for config in CONFIGS:
            c = row[config]
            assert isinstance(c, dict)
            print(f"{row['target']:10} {config:10} {c['lines']:>6}/{c['total_lines']:<7} "
                  f"{c['branches']:>6}/{c['total_branches']:<7} {c['inputs']:>7}  {c['each_lines']}")
    (work / "summary.json").write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("ASAN_OPTIONS", "detect_leaks=0")
    sys.exit(main())
