"""Plug-ins (symex.plugins): a package installed beside symex adds a searcher, a solver backend,
a model of an external function and a memory model through entry points of the group
``symex.plugins``, and runs use them without editing symex: in one process and with
workers."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parent / "plugin_package"

#: sensor_read() is the plug-in's model: a value in [0, 100]; 3 paths (v > 50 with x == 7 or
#: not, and v <= 50, where v == 100 cannot hold)
PROGRAM = textwrap.dedent("""\
    #include <klee/klee.h>
    int sensor_read(void);
    int main(void) {
      int v = sensor_read();
      int x;
      klee_make_symbolic(&x, sizeof x, "x");
      if (v > 50) {
        if (x == 7)
          return 3;
        return 2;
      }
      return v == 100;
    }
    """)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The plug-in package, installed by pip into a directory of its own (put on PYTHONPATH
    by the runs that should see it), which others may read (pip makes it so; pytest's
    temporary directories are private: a service run as root could not show it to jobs)."""
    target = tmp_path_factory.mktemp("site") / "packages"
    ran = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                          "--target", str(target), str(PACKAGE)],
                         capture_output=True, text=True, timeout=600)
    if ran.returncode != 0:
        pytest.skip(f"pip could not install tests/plugin_package here (it builds with "
                    f"setuptools from the package index): {ran.stderr.strip()[-300:]}")
    return target


#: a table of three pointers read at a symbolic index and followed: the forking model makes a
#: path per string (exit 1, 2, 3 and the index out of range's 0), a model that fixes the
#: pointer one path past the range check
POINTERS = textwrap.dedent("""\
    #include <klee/klee.h>
    static const char *const words[] = {"one", "two", "six"};
    int main(void) {
      unsigned char i;
      klee_make_symbolic(&i, sizeof i, "i");
      if (i >= 3)
        return 0;
      const char *w = words[i];
      return w[0] == 'o' ? 1 : w[1] == 'w' ? 2 : 3;
    }
    """)


def _run(tmp_path: Path, site: Path | None, *flags: str,
         source: str = PROGRAM) -> subprocess.CompletedProcess[str]:
    program = tmp_path / "sensor.c"
    program.write_text(source)
    env = dict(os.environ, SYMEX_TEST_PLUGIN_COUNT=str(tmp_path / "checks.log"))
    if site is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
    out = tmp_path / f"out{len(list(tmp_path.glob('out*')))}"
    return subprocess.run([sys.executable, "-m", "symex.cli", "run", *flags, "--output-dir",
                           str(out), str(program)],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path, env=env)


def _exit_codes(stdout: str) -> list[int]:
    return sorted(int(code) for code in re.findall(r"completed exit (\d+)", stdout))


@pytest.mark.parametrize("workers", [1, 2])
def test_a_plugin_package_adds_a_searcher_a_backend_and_a_model(installed: Path, tmp_path: Path,
                                                                 workers: int) -> None:
    ran = _run(tmp_path, installed, "--search", "newest-last", "--solver", "counting-z3",
               "--workers", str(workers))
    assert ran.returncode == 0, ran.stderr
    assert "explored 3 paths: 3 completed" in ran.stdout, ran.stdout
    assert _exit_codes(ran.stdout) == [0, 2, 3]   # the model's value decided the branches
    # the plug-in's backend answered the queries, in the process that ran the paths
    checks = (tmp_path / "checks.log").read_text().split()
    assert checks
    if workers > 1:
        assert str(os.getpid()) not in checks


@pytest.mark.parametrize("workers", [1, 2])
def test_a_plugin_memory_model_decides_what_a_symbolic_pointer_does(installed: Path, tmp_path: Path,
                                                                    workers: int) -> None:
    forking = _run(tmp_path, installed, "--workers", str(workers), source=POINTERS)
    assert forking.returncode == 0, forking.stderr
    assert _exit_codes(forking.stdout) == [0, 1, 2, 3]
    fixed = _run(tmp_path, installed, "--memory-model", "concretizing", "--workers", str(workers),
                 source=POINTERS)
    assert fixed.returncode == 0, fixed.stderr
    # the in-range path read one string, the one the path's inputs chose
    codes = _exit_codes(fixed.stdout)
    assert len(codes) == 2 and codes[0] == 0 and codes[1] in (1, 2, 3), fixed.stdout
    assert "pointer fixed by the concretizing model" in fixed.stdout + fixed.stderr, fixed.stderr


def test_names_to_choose_from_include_the_plugins(installed: Path, tmp_path: Path) -> None:
    ran = _run(tmp_path, installed, "--search", "nosuch")
    assert ran.returncode == 2
    assert "unknown searcher 'nosuch'" in ran.stderr and "newest-last" in ran.stderr
    ran = _run(tmp_path, installed, "--solver", "nosuch")
    assert ran.returncode == 2 and "unknown backend 'nosuch'" in ran.stderr, ran.stderr
    ran = _run(tmp_path, installed, "--memory-model", "nosuch")
    assert ran.returncode == 2, ran.stderr
    assert "unknown memory model 'nosuch'" in ran.stderr and "concretizing" in ran.stderr


def test_without_the_package_the_function_is_unmodelled_and_the_names_unknown(tmp_path: Path) -> None:
    ran = _run(tmp_path, None)
    assert ran.returncode == 0, ran.stderr
    assert "call to external function 'sensor_read'" in ran.stdout + ran.stderr
    ran = _run(tmp_path, None, "--search", "newest-last")
    assert ran.returncode == 2 and "unknown searcher 'newest-last'" in ran.stderr


#: POINTERS behind the sensor's model: the model's value > 50 ends one path
#: (exit 9); past it, the index out of range (exit 0) and, under the forking model, a path per
#: string (exit 1, 2, 3), under the plug-in's concretizing model one string
SERVICE_PROGRAM = POINTERS.replace("int main(void) {\n", """\
int sensor_read(void);
int main(void) {
  if (sensor_read() > 50)
    return 9;
""")


def test_the_service_runs_jobs_with_the_plugins_it_sees(installed: Path, tmp_path: Path) -> None:
    """A server that sees the package (installed with ``pip --target``, on its PYTHONPATH)
    runs its jobs with the plug-ins: inside each job's sandbox too."""
    pytest.importorskip("httpx")
    pytest.importorskip("fastapi")
    from symex.sandbox import sandbox_problem
    if sandbox_problem() is not None:
        pytest.skip(f"no sandbox can be made here: {sandbox_problem()}")
    from test_service import Service, _submit, _wait

    path = os.pathsep.join(filter(None, [str(installed), os.environ.get("PYTHONPATH")]))
    service = Service(tmp_path, environment={"PYTHONPATH": path})
    try:
        with service.client(service.alice) as alice:
            fixed = _wait(alice, _submit(alice, SERVICE_PROGRAM, memory_model="concretizing"))
            forking = _wait(alice, _submit(alice, SERVICE_PROGRAM))
            unknown = alice.post("/api/jobs", files={"program": ("p.c", SERVICE_PROGRAM.encode())},
                                 data={"memory_model": "nosuch"})
    finally:
        service.stop()
    assert fixed["status"] == "done", fixed.get("reason")
    # the job says which model it ran with (the page's jobs table shows it)
    assert (fixed["memory_model"], forking["memory_model"]) == ("concretizing", "forking")
    assert (fixed["summary"]["paths"], fixed["summary"]["errors"]) == (3, 0), fixed
    assert forking["status"] == "done", forking
    assert (forking["summary"]["paths"], forking["summary"]["errors"]) == (5, 0), forking
    assert unknown.status_code == 400 and "concretizing" in unknown.text, unknown.text
