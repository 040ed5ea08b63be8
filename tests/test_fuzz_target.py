"""libFuzzer fuzz targets as they are (issue 45): ``--fuzz-target`` runs
``LLVMFuzzerTestOneInput`` on a symbolic input of up to ``--max-input`` bytes with a
symbolic length; reads past the length are out of bounds, as AddressSanitizer reports them
under libFuzzer; each test's input is written as a raw corpus file (``crash-SHA1`` for a
failing one) that libFuzzer's own driver and ``symex replay`` both reproduce; a fuzzer's
corpus seeds a run."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

import symex
from symex.core.outcome import ErrorKind, PathStatus
from symex.env.fuzz_input import FUZZ_DATA, FUZZ_SIZE, raw_input
from symex.errors import ConfigError, LoadError
from symex.output.corpus import corpus_name
from symex.replay import libfuzzer_clang

FUZZ = Path(__file__).parent / "programs" / "fuzz"
MAGIC, HEADER, OVERWRITE = FUZZ / "magic_hash.c", FUZZ / "header.c", FUZZ / "overwrite.c"


def _symex(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "symex.cli", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=600)


def test_the_magic_value_behind_a_hash_is_found_and_reproduces_everywhere(tmp_path: Path) -> None:
    """The crash needs the one 32-bit value whose multiplicative hash matches: symex solves
    for it, writes the input as crash-SHA1, and both symex replay and libFuzzer's driver
    crash on it."""
    out, corpus = tmp_path / "out", tmp_path / "corpus"
    # symex's options after the target, as a fuzzer's follow it
    ran = _symex("run", str(MAGIC), "--fuzz-target", "--max-input", "16", "--output-dir", str(out),
                 "--corpus-out", str(corpus), cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    crashes = sorted(corpus.glob("crash-*"))
    assert len(crashes) == 1, sorted(p.name for p in corpus.iterdir())
    data = crashes[0].read_bytes()
    assert crashes[0].name == "crash-" + hashlib.sha1(data).hexdigest()
    assert len(data) >= 4 and (int.from_bytes(data[:4], "little") * 2654435761) % 2**32 == 0x5EED1E55
    # every other input is in the corpus under its SHA-1, the empty one among them
    names = {p.name for p in corpus.iterdir()}
    assert hashlib.sha1(b"").hexdigest() in names and len(names) >= 3
    replayed = _symex("replay", str(MAGIC), str(out), cwd=tmp_path)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "1 of 1 error reproduced" in replayed.stdout
    clang = libfuzzer_clang()
    if clang is None:
        pytest.skip("no clang with libFuzzer (-fsanitize=fuzzer) here: Debian's clang has it")
    fuzzer = tmp_path / "fuzzer"
    subprocess.run([clang, "-g", "-fsanitize=fuzzer,address", str(MAGIC), "-o", str(fuzzer)],
                   check=True, capture_output=True)
    crashed = subprocess.run([str(fuzzer), str(crashes[0])], capture_output=True, text=True, timeout=120)
    assert crashed.returncode != 0 and "deadly signal" in crashed.stderr
    for clean in sorted(p for p in corpus.iterdir() if not p.name.startswith("crash-")):
        passed = subprocess.run([str(fuzzer), str(clean)], capture_output=True, text=True, timeout=120)
        assert passed.returncode == 0, passed.stderr
    # symex replay builds the same and says so per test
    through = _symex("replay", "--libfuzzer", str(MAGIC), str(out), cwd=tmp_path)
    assert through.returncode == 0 and "1 of 1 error reproduced" in through.stdout, through.stdout


def test_reads_past_the_length_are_reported_where_asan_reports_them(tmp_path: Path) -> None:
    """header.c trusts its length byte: every length that reads past the input is an error,
    every other path completes; natively (symex replay, AddressSanitizer on an exactly
    sized copy) each test ends the same way, and LLVMFuzzerInitialize ran first."""
    program = symex.compile(HEADER, fuzz_target=True)
    result = symex.explore(program, fuzz_target=True, max_input=8, emit_all_errors=True)
    errors = [t for t in result.tests if t.error is not None]
    assert errors and all(t.error.kind is ErrorKind.PTR for t in errors)
    for test in result.tests:
        data = raw_input(test.objects)
        assert data is not None and len(data) <= 8
        overread = len(data) >= 2 and data[0] == ord("H") and 2 + min(data[1], 3) > len(data)
        assert (test.error is not None) == overread, (data, test.error)
        if test.error is not None:
            assert "past its length" in test.error.message
    assert all(t.status is not PathStatus.PARTIAL for t in result.tests)
    out = tmp_path / "out"
    ran = _symex("run", "--fuzz-target", "--max-input", "8", "--emit-all-errors", "--output-dir",
                 str(out), str(HEADER), cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    replayed = _symex("replay", str(HEADER), str(out), cwd=tmp_path)
    assert replayed.returncode == 0, replayed.stdout
    assert "failed natively without a symex error" not in replayed.stdout


def test_the_length_never_exceeds_max_input() -> None:
    """A target that fails only on inputs longer than --max-input never fails."""
    program = symex.compile(HEADER, fuzz_target=True)
    result = symex.explore(program, fuzz_target=True, max_input=1)
    assert all(len(raw_input(t.objects) or b"") <= 1 for t in result.tests)
    assert not [t for t in result.tests if t.error is not None]  # two bytes needed to read past
    sizes = {int.from_bytes(t.objects[FUZZ_SIZE], "little") for t in result.tests}
    assert sizes <= {0, 1} and all(len(t.objects[FUZZ_DATA]) == 1 for t in result.tests)


def test_writing_to_the_const_input_is_an_error_that_reproduces(tmp_path: Path) -> None:
    out = tmp_path / "out"
    ran = _symex("run", "--fuzz-target", "--max-input", "2", "--output-dir", str(out), str(OVERWRITE),
                 cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert [p.name.split(".", 1)[1] for p in out.glob("*.err")] == ["readonly.err"]
    replayed = _symex("replay", str(OVERWRITE), str(out), cwd=tmp_path)
    assert replayed.returncode == 0 and "reproduces readonly error" in replayed.stdout, replayed.stdout
    if libfuzzer_clang() is not None:  # libFuzzer checks its const input too
        through = _symex("replay", "--libfuzzer", str(OVERWRITE), str(out), cwd=tmp_path)
        assert "reproduces readonly error" in through.stdout, through.stdout


def test_a_fuzzers_corpus_seeds_the_run(tmp_path: Path) -> None:
    """The seed's path runs first: with exit-on-error, the crash the corpus holds is the
    run's first test, found without searching."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    word = 0x5EED1E55 * pow(2654435761, -1, 2**32) % 2**32
    crash = word.to_bytes(4, "little") + b"tail"
    (corpus / corpus_name(crash)).write_bytes(crash)
    (corpus / ".state").mkdir()  # AFL++'s bookkeeping is skipped
    out = tmp_path / "out"
    ran = _symex("run", "--fuzz-target", "--max-input", "16", "--seed-corpus", str(corpus),
                 "--exit-on-error", "--search", "bfs", "--output-dir", str(out), str(MAGIC),
                 cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert sorted(p.name for p in out.glob("*.ktest")) == ["test000001.ktest"]
    assert (out / "test000001.abort.err").is_file()


def test_a_target_links_with_its_library_built_by_symex_cc(tmp_path: Path) -> None:
    """``symex run target.c lib.a --fuzz-target``: the library built for musl by symex cc,
    the target compiled against the same headers, the library's bug found through it."""
    library = tmp_path / "parse.c"
    library.write_text("#include <string.h>\n"
                       "int parse(const unsigned char *p, unsigned long n) {\n"
                       "  if (n >= 3 && memcmp(p, \"BAD\", 3) == 0)\n"
                       "    return p[n];  /* one past the end */\n"
                       "  return 0;\n}\n")
    target = tmp_path / "target.c"
    target.write_text("#include <stddef.h>\n#include <stdint.h>\n"
                      "int parse(const unsigned char *p, unsigned long n);\n"
                      "int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return parse(d, n); }\n")
    built = _symex("cc", "-c", str(library), "-o", str(tmp_path / "parse.o"), cwd=tmp_path)
    assert built.returncode == 0, built.stderr
    subprocess.run(["ar", "rcs", str(tmp_path / "libparse.a"), str(tmp_path / "parse.o")], check=True)
    program = symex.compile([target, tmp_path / "libparse.a"], fuzz_target=True)
    assert program.library == "musl"
    result = symex.explore(program, fuzz_target=True, max_input=4)
    errors = [t for t in result.tests if t.error is not None]
    assert errors and all(raw_input(t.objects)[:3] == b"BAD" and t.error.kind is ErrorKind.PTR
                          for t in errors if t.error is not None)


def test_a_target_of_two_files_replays_with_both(tmp_path: Path) -> None:
    """``symex replay target.c parse.c OUT``: the files after the target link with it, with
    symex's driver and with libFuzzer's."""
    (tmp_path / "parse.c").write_text("int parse(const unsigned char *p, unsigned long n) {\n"
                                      "  return n == 2 && p[0] == 'Z' ? p[n] : 0;  /* past the end */\n}\n")
    (tmp_path / "target.c").write_text("#include <stddef.h>\n#include <stdint.h>\n"
                                       "int parse(const unsigned char *p, unsigned long n);\n"
                                       "int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) "
                                       "{ return parse(d, n); }\n")
    ran = _symex("run", "--fuzz-target", "--max-input", "4", "--output-dir", "out", "target.c",
                 "parse.c", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    replayed = _symex("replay", "target.c", "parse.c", "out", cwd=tmp_path)
    assert replayed.returncode == 0 and "1 of 1 error reproduced" in replayed.stdout, \
        replayed.stdout + replayed.stderr
    if libfuzzer_clang() is not None:
        through = _symex("replay", "--libfuzzer", "target.c", "parse.c", "out", cwd=tmp_path)
        assert "1 of 1 error reproduced" in through.stdout, through.stdout + through.stderr


def test_bad_fuzz_target_input_is_refused_with_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(LoadError, match="defines no LLVMFuzzerTestOneInput"):
        symex.compile(FUZZ / "not_a_target.c", fuzz_target=True)
    cxx = tmp_path / "target.cc"
    cxx.write_text("extern \"C\" int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }\n")
    with pytest.raises(LoadError, match="C\\+\\+"):
        symex.compile(cxx, fuzz_target=True)
    plain = symex.compile(FUZZ / "not_a_target.c")
    with pytest.raises(ConfigError, match="not a libFuzzer fuzz target"):
        symex.explore(plain, fuzz_target=True, entry="parse")
    with pytest.raises(ConfigError, match="max_input"):
        symex.explore(plain, max_input=0, entry="parse")
    # a target run as a program is told about --fuzz-target
    ran = _symex("run", str(MAGIC), cwd=tmp_path)
    assert ran.returncode == 2 and "add --fuzz-target" in ran.stderr
    ran = _symex("run", "--corpus-out", str(tmp_path / "c"), str(FUZZ / "not_a_target.c"), cwd=tmp_path)
    assert ran.returncode == 2 and "add --fuzz-target" in ran.stderr
    ran = _symex("run", "--fuzz-target", "--seed-corpus", str(tmp_path / "none"), str(MAGIC), cwd=tmp_path)
    assert ran.returncode == 2 and "not a directory" in ran.stderr
