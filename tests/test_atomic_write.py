"""Output files are never seen half written: a new file is named only once it is whole, an
existing one is replaced by a rename, and a run killed at any moment leaves whole tests."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from symex.output import atomic_write
from symex.output.atomic_write import write_atomically
from symex.output.ktest import read_ktest

ROOT = Path(__file__).parents[1]


def _umask() -> int:
    current = os.umask(0o022)
    os.umask(current)
    return current


@pytest.fixture(params=["unnamed first", "renamed"])
def way(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both ways of writing: the unnamed file where Linux has it, and the rename that every
    system has (what a system without O_TMPFILE or /proc gets)."""
    if request.param == "renamed":
        monkeypatch.setattr(atomic_write, "_UNNAMED_FIRST", [False])
    return str(request.param)


def test_a_new_file_has_its_bytes_and_the_usual_mode(tmp_path: Path, way: str) -> None:
    target = tmp_path / "test000001.ktest"
    payload = bytes(range(256)) * 300  # more than one write of a pipe's or page's size
    write_atomically(target, payload)
    assert target.read_bytes() == payload
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~_umask()
    assert [p.name for p in tmp_path.iterdir()] == ["test000001.ktest"]


def test_an_existing_file_is_replaced_whole(tmp_path: Path, way: str) -> None:
    target = tmp_path / "info"
    write_atomically(target, "first version, longer than the second\n")
    write_atomically(target, "second\n")
    assert target.read_text() == "second\n"
    assert [p.name for p in tmp_path.iterdir()] == ["info"]


def test_a_missing_directory_is_an_error(tmp_path: Path, way: str) -> None:
    with pytest.raises(FileNotFoundError):
        write_atomically(tmp_path / "gone" / "info", "x")


def test_a_run_killed_at_any_moment_leaves_only_whole_tests(tmp_path: Path) -> None:
    # 2^20 paths: far more than a run writes before the kills below, which land after 1,
    # 40 and 150 tests (counted, not timed: a loaded machine only makes them later)
    source = tmp_path / "many.c"
    source.write_text((ROOT / "tests" / "programs" / "branches.c").read_text())
    warm = subprocess.run([sys.executable, "-m", "symex.cli", "run", "--quiet",
                           "--max-instructions", "1", "-D", "N=20", "--output-dir", "warm",
                           "many.c"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert warm.returncode == 0, warm.stderr  # compiled once: the kills land in exploration
    for number, at_least in enumerate((1, 40, 150)):
        out = tmp_path / f"out{number}"
        proc = subprocess.Popen([sys.executable, "-m", "symex.cli", "run", "--quiet", "-D",
                                 "N=20", "--output-dir", out.name, "many.c"], cwd=tmp_path,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline and proc.poll() is None:
                if out.is_dir() and len(os.listdir(out)) >= at_least + 6:
                    break
                time.sleep(0.01)
            proc.send_signal(signal.SIGKILL)
        finally:
            proc.wait(timeout=60)
        names = os.listdir(out)
        ktests = [n for n in names if n.endswith(".ktest")]
        assert len(ktests) >= at_least
        assert not [n for n in names if n.endswith(".tmp")]
        for name in ktests:  # every one whole: its 20 input bytes and the command line
            test = read_ktest(out / name)
            assert [len(o.data) for o in test.objects] == [20]
