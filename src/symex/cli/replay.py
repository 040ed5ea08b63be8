"""``symex replay PROGRAM TEST.ktest|OUTDIR``: run test cases on the natively compiled program.

The program is built by gcc with sanitizers and the replay runtime (:mod:`symex.replay`), then
run once per test case with a time limit. Each test gets one line: how the run ended (``exit
N``, ``signal N (NAME)``, ``timeout``) and, for a test whose path symex saw end in an error
(``tests.csv``; in a directory without it, a ``.KIND.err`` file), whether the native run
fails the same way. This is the check that reported bugs are real.

Exit status: 0 when every error test reproduces, 1 when some does not, 2 for bad input
(missing program, not a ``.ktest`` file, gcc missing or failing).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TextIO

from symex.env.fuzz_input import FUZZ_SIZE, raw_input
from symex.errors import ConfigError, SymexError, error_text
from symex.ir.whole_program import is_native_build
from symex.output.ktest import read_ktest
from symex.replay import (NativeSandbox, build_libfuzzer, build_native, describe_outcome, find_replay_targets,
                          reproduces, run_libfuzzer, run_test)
from symex.symargs import FAILURE_OBJECTS

__all__ = ["add_parser", "main"]


def add_parser(commands: argparse._SubParsersAction) -> None:
    """Declare ``symex replay`` and its options."""
    parser = commands.add_parser(
        "replay", help="run test cases on the natively compiled program and confirm its errors",
        description="Build PROGRAM natively (gcc, AddressSanitizer, UBSan) with a runtime that "
                    "feeds it the objects of a .ktest file, run every test, and check that each "
                    "error test fails natively the same way.")
    parser.add_argument("program", help="the C source file the tests were generated from, or the "
                        "executable symex cc built (run as it is)")
    parser.add_argument("tests", metavar="TEST", nargs="+",
                        help="a .ktest file or an output directory (symex-out-N); several may "
                        "be given. C files, objects and archives before them are linked "
                        "with PROGRAM (symex replay target.c lib.c symex-last)")
    parser.add_argument("--timeout", type=float, default=10.0, metavar="SECONDS",
                        help="time limit of each native run (default 10)")
    parser.add_argument("--sandbox", action="store_true",
                        help="build and run in a sandbox (bubblewrap): the program sees the "
                        "system's toolchain and its own directory read-only, writes only a "
                        "scratch directory, has no network and an empty environment, runs "
                        "as an unprivileged user, with limits of memory, processes and file "
                        "size; for a program one does not trust")
    parser.add_argument("--memory-mb", type=int, metavar="MB",
                        help=f"with --sandbox: stop a native run above this resident memory "
                        f"(default {NativeSandbox().memory_mb})")
    parser.add_argument("--file-size-mb", type=int, metavar="MB",
                        help=f"with --sandbox: the largest file a native run may write "
                        f"(default {NativeSandbox().file_size_mb})")
    parser.add_argument("--libfuzzer", action="store_true",
                        help="tests of a fuzz target (symex run --fuzz-target): build it with "
                        "libFuzzer's own driver (clang -fsanitize=fuzzer,address,undefined) and "
                        "run each test's input through it, as ./fuzzer INPUT does")
    parser.add_argument("-O", dest="optimize", metavar="LEVEL", help="gcc optimisation level (e.g. -O2)")
    parser.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=VALUE]")
    parser.add_argument("-I", dest="includes", action="append", default=[], metavar="DIR")


def main(options: argparse.Namespace, out: TextIO | None = None) -> int:
    """Run ``symex replay`` with parsed ``options``; the exit status."""
    write = (out if out is not None else sys.stdout).write
    if options.timeout <= 0:
        sys.stderr.write("symex replay: --timeout must be positive (e.g. --timeout 10)\n")
        return 2
    if (options.memory_mb is not None and options.memory_mb < 1) or \
            (options.file_size_mb is not None and options.file_size_mb < 1):
        sys.stderr.write("symex replay: --memory-mb and --file-size-mb must be at least 1\n")
        return 2
    sandbox = None
    if options.sandbox:
        sandbox = NativeSandbox(**{name: value for name, value in
                                   (("memory_mb", options.memory_mb),
                                    ("file_size_mb", options.file_size_mb)) if value is not None})
    elif options.memory_mb is not None or options.file_size_mb is not None:
        sys.stderr.write("symex replay: --memory-mb and --file-size-mb are limits of the "
                         "sandbox: add --sandbox\n")
        return 2
    if options.libfuzzer and options.sandbox:
        sys.stderr.write("symex replay: --libfuzzer runs outside a sandbox; drop --sandbox or "
                         "--libfuzzer\n")
        return 2
    if options.program.endswith((".ll", ".bc")):
        sys.stderr.write(f"symex replay: {options.program} is LLVM IR; native replay needs the C source "
                         "(pass the .c file the IR was compiled from)\n")
        return 2
    flags = [f"-D{d}" for d in options.defines] + [f"-I{i}" for i in options.includes]
    # the program's other parts, as symex run takes them: C files, objects, archives
    parts = []
    while options.tests and options.tests[0].endswith((".c", ".o", ".a")) and \
            os.path.isfile(options.tests[0]):
        parts.append(os.path.abspath(options.tests.pop(0)))
    if not options.tests:
        sys.stderr.write("symex replay: no test given after the program's files; name a .ktest "
                         "file or an output directory\n")
        return 2
    if options.optimize:
        flags.append(f"-O{options.optimize}")
    try:
        targets = [target for tests in options.tests for target in find_replay_targets(tests)]
        # Read every test before building, so a malformed file is reported before gcc runs.
        ktests = [read_ktest(target.path) for target in targets]
        if (not options.program.endswith(".c") and os.path.isfile(options.program)
                and is_native_build(options.program)):
            # built by symex cc: the executable itself is what runs natively
            executable = Path(options.program).resolve()
        else:
            # tests of a fuzz target (symex run --fuzz-target) run through symex's driver
            fuzz_target = any(obj.name == FUZZ_SIZE for ktest in ktests for obj in ktest.objects)
            if options.libfuzzer:
                if not fuzz_target:
                    raise ConfigError("--libfuzzer replays a fuzz target's tests; these come from "
                                      "a run without --fuzz-target")
                executable = build_libfuzzer([options.program, *parts], flags)
            else:
                executable = build_native(options.program, [*flags, *parts], sandbox=sandbox,
                                          fuzz_target=fuzz_target)
    except SymexError as exc:
        sys.stderr.write(error_text("symex replay", exc))
        return 2

    clean = crashed = cut_short = reproduced = timeouts = 0
    not_reproduced: list[str] = []
    for target, ktest in zip(targets, ktests):
        try:
            if options.libfuzzer:
                data = raw_input({obj.name: obj.data for obj in ktest.objects}) or b""
                outcome = run_libfuzzer(executable, data, timeout=options.timeout)
            else:
                outcome = run_test(executable, target.path, ktest, timeout=options.timeout,
                                   sandbox=sandbox)
        except SymexError as exc:
            sys.stderr.write(error_text("symex replay", exc))
            return 2
        how = describe_outcome(outcome)
        name = target.path.name
        timeouts += outcome.timed_out
        if target.expected is not None:
            if reproduces(target.expected, outcome):
                reproduced += 1
                write(f"{name}: {how}, reproduces {target.expected} error\n")
            else:
                not_reproduced.append(name)
                native = how if outcome.kind is None else f"{how}, {outcome.kind} error"
                write(f"{name}: DOES NOT REPRODUCE (expected {target.expected}, native run: {native})\n")
        elif outcome.kind is not None and target.cut_short is not None:
            # symex stopped this path early (a limit, --exit-on-error): the native run goes on
            cut_short += 1
            write(f"{name}: {how} ({outcome.kind} error natively, past where symex stopped "
                  f"the path: {target.cut_short})\n")
        elif outcome.kind is not None:
            # symex saw no error on this path but the native run fails: worth knowing, though
            # not a broken promise (e.g. a sanitizer stricter than symex's memory model)
            crashed += 1
            write(f"{name}: {how} ({outcome.kind} error natively; symex reported none)\n")
        else:
            clean += not outcome.timed_out
            write(f"{name}: {how}\n")

    total = len(targets)
    errors = reproduced + len(not_reproduced)
    summary = (f"symex replay: {total} test{'s' if total != 1 else ''}: "
               f"{reproduced} of {errors} error{'s' if errors != 1 else ''} reproduced")
    if not_reproduced:
        summary += f", {len(not_reproduced)} did not reproduce ({', '.join(not_reproduced)})"
    summary += f"; {clean} clean"
    if crashed:
        summary += f", {crashed} failed natively without a symex error"
    if cut_short:
        summary += (f", {cut_short} partial path{'s' if cut_short != 1 else ''} failed natively "
                    f"past where symex stopped {'them' if cut_short != 1 else 'it'}")
    if timeouts:
        summary += f", {timeouts} timed out"
    write(summary + "\n")
    if any(obj.name in FAILURE_OBJECTS for ktest in ktests for obj in ktest.objects):
        write("symex replay: these tests were made with --max-fail: a native run makes no "
              "read, write or close fail, so a path that took an injected failure runs "
              "differently here\n")
    return 1 if not_reproduced else 0
