"""The caches kept to a size (ir/cache_size.py): the least recently used files go first, a
lookup marks its file used, what a process adds is kept, and a bad limit says what to give."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from symex.errors import ConfigError
from symex.ir.cache_size import CACHE_MB_VARIABLE, cache_limit, trim
from symex.ir.compile import compile_c

PROGRAM = "int main(void) { return %d; }\n"


def _file(path: Path, size: int, age: float) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)
    when = time.time() - age
    os.utime(path, (when, when))
    return path


def test_the_least_recently_used_files_go_first_and_other_folders_stay(tmp_path: Path) -> None:
    oldest = _file(tmp_path / "a-1.ll", 1000, age=300)
    old_program = _file(tmp_path / "programs" / "k1.pickle", 1000, age=200)
    recent = _file(tmp_path / "b-2.ll", 1000, age=100)
    newest_program = _file(tmp_path / "programs" / "k2.pickle", 1000, age=10)
    musl = _file(tmp_path / "musl-1.2.5" / "ir-1" / "libc.ll", 5000, age=1000)
    writing = _file(tmp_path / ".c-3.ll.x1y2", 10, age=5)  # another process's, unfinished
    abandoned = _file(tmp_path / ".c-3.ll.z9", 10, age=7200)  # a killed process's
    removed = trim(tmp_path, 2000)
    assert removed == 2010
    assert not oldest.exists() and not old_program.exists() and not abandoned.exists()
    assert recent.exists() and newest_program.exists() and musl.exists() and writing.exists()
    assert trim(tmp_path, 2000) == 0  # within the limit: nothing more goes


def test_a_lookup_marks_its_ir_used_so_a_trim_keeps_it(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first, second = tmp_path / "first.c", tmp_path / "second.c"
    first.write_text(PROGRAM % 1)
    second.write_text(PROGRAM % 2)
    first_ir = Path(compile_c(first, cache_dir=cache))
    second_ir = Path(compile_c(second, cache_dir=cache))
    long_ago = time.time() - 1000
    for path in cache.iterdir():
        os.utime(path, (long_ago, long_ago))
    assert Path(compile_c(first, cache_dir=cache)) == first_ir  # a hit: used now
    kept = sum(p.stat().st_size for p in cache.iterdir() if p.name.startswith("first-"))
    trim(cache, kept)
    assert first_ir.exists() and not second_ir.exists()
    assert Path(compile_c(first, cache_dir=cache)) == first_ir  # still a hit
    assert Path(compile_c(second, cache_dir=cache)).is_file()  # built again


def test_a_process_keeps_the_cache_to_its_limit_and_what_it_added(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    for k in range(3):
        _file(cache / f"old{k}-{k:032x}.ll", 400_000, age=1000 - k)
    source = tmp_path / "prog.c"
    source.write_text(PROGRAM % 3)
    environment = {**os.environ, "SYMEX_CACHE_DIR": str(cache), CACHE_MB_VARIABLE: "0.5"}
    ran = subprocess.run([sys.executable, "-m", "symex.cli", "run", "--quiet", "--output-dir",
                          str(tmp_path / "out"), str(source)],
                         env=environment, capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr
    left = sorted(p.name for p in cache.iterdir() if p.is_file())
    assert [name for name in left if name.startswith("old")] == ["old2-" + f"{2:032x}.ll"]
    assert any(name.startswith("prog-") and name.endswith(".ll") for name in left)


@pytest.mark.parametrize("text", ["lots", "-5", "nan"])
def test_a_limit_that_is_not_a_size_says_what_to_give(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    monkeypatch.setenv(CACHE_MB_VARIABLE, text)
    with pytest.raises(ConfigError, match=f"{CACHE_MB_VARIABLE}=2048"):
        cache_limit()


def test_the_limit_is_read_in_megabytes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(CACHE_MB_VARIABLE, raising=False)
    assert cache_limit() == 2048 * 2 ** 20
    monkeypatch.setenv(CACHE_MB_VARIABLE, "1.5")
    assert cache_limit() == 3 * 2 ** 19
