"""The testing service: a job's overhead against ``symex run``, and 50 jobs at once.

    python benchmarks/service_benchmarks.py [--repeat N] [--jobs N] [--max-running N]

1. Overhead: the same program and budget run by ``symex run`` in a subprocess (on a fresh
   copy of the source, so that it compiles it as a job does) and submitted to a ``symex
   serve`` on loopback (submit to ``done``, the native replay of its crashes
   included), alternated, ``--repeat`` times; the ratio of the medians. Two programs: regexp
   (5,204 paths, two crashes to replay) and neighbours N=11 (2,048 paths, none).
2. Load: ``--jobs`` small jobs (the two-bug program) submitted at once; every job must end
   ``done``; the latency of ``GET /api/jobs/{id}`` (p50, p99) measured by a client polling
   all of them while they run, and the time until the last one ends.
"""

from __future__ import annotations

import argparse
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from test_workflow import TWO_BUGS  # noqa: E402

REGEXP = ROOT / "tests" / "programs" / "regexp.c"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def symex(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "symex.cli", *args], cwd=cwd,
                          capture_output=True, text=True, check=True)


def serve(root: Path, max_running: int) -> tuple[subprocess.Popen[bytes], str, str]:
    """A server in ``root`` and a tenant's token."""
    token = symex("tenant", "add", "bench", "--db", str(root / "s.db"), cwd=root).stdout.strip()
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "symex.cli", "serve", "--db",
                                str(root / "s.db"), "--port", str(port), "--max-running",
                                str(max_running)], cwd=root, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            httpx.get(f"{url}/openapi.json", timeout=1).raise_for_status()
            return process, url, token
        except httpx.HTTPError:
            time.sleep(0.1)
    raise SystemExit("symex serve did not start")


def wait(client: httpx.Client, job: int) -> dict:
    while True:
        state = client.get(f"/api/jobs/{job}").json()
        if state["status"] in ("done", "failed", "cancelled"):
            return state
        time.sleep(0.05)


#: (name, source, compile flags, paths): regexp has 2 crashes the service replays natively,
#: neighbours none
OVERHEAD_PROGRAMS = [
    ("regexp (5,204 paths, 2 crashes)", REGEXP, "", 5204),
    ("neighbours N=11 (2,048 paths, no crash)", ROOT / "benchmarks" / "programs" / "neighbours.c",
     "-DN=11", 2048),
]


def overhead(client: httpx.Client, root: Path, repeat: int) -> None:
    print("## 1. A job through the service against symex run")
    for name, source, flags, paths in OVERHEAD_PROGRAMS:
        direct, served = [], []
        for k in range(repeat):
            # a fresh copy each time, as every job is: both compile it (the IR cache is keyed
            # by the source's path)
            fresh = root / f"direct-{source.stem}-{k}"
            fresh.mkdir()
            shutil.copy(source, fresh / source.name)
            started = time.perf_counter()
            symex("run", "-q", "--record-tree", "--output-dir", str(fresh / "out"),
                  "--max-time", "600", *flags.split(), str(fresh / source.name), cwd=fresh)
            direct.append(time.perf_counter() - started)
            started = time.perf_counter()
            job = client.post("/api/jobs", files={"program": (source.name, source.read_bytes())},
                              data={"max_time": "600", "flags": flags}).json()["id"]
            state = wait(client, job)
            served.append(time.perf_counter() - started)
            assert state["status"] == "done" and state["summary"]["paths"] == paths, state
        ratio = statistics.median(served) / statistics.median(direct)
        print(f"{name}: symex run {statistics.median(direct):.2f} s, service "
              f"{statistics.median(served):.2f} s (medians of {repeat}): overhead "
              f"{100 * (ratio - 1):.1f} %")
    print()


def load(client: httpx.Client, jobs: int) -> None:
    print(f"## 2. {jobs} small jobs submitted at once (the two-bug program)")
    started = time.perf_counter()
    ids = [client.post("/api/jobs", files={"program": ("two_bugs.c", TWO_BUGS.encode())},
                       data={"max_time": "60"}).json()["id"] for _ in range(jobs)]
    submitted = time.perf_counter() - started
    latencies: list[float] = []
    states: dict[int, str] = {}
    while True:
        for job in ids:
            t = time.perf_counter()
            states[job] = client.get(f"/api/jobs/{job}").json()["status"]
            latencies.append(time.perf_counter() - t)
        if all(s in ("done", "failed", "cancelled") for s in states.values()):
            break
        time.sleep(0.05)
    total = time.perf_counter() - started
    done = sum(1 for s in states.values() if s == "done")
    latencies.sort()
    p50 = latencies[len(latencies) // 2] * 1e3
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1e3
    print(f"submitted in {submitted:.2f} s; {done} of {jobs} done after {total:.1f} s; "
          f"GET /api/jobs/ID latency over {len(latencies)} requests: p50 {p50:.1f} ms, "
          f"p99 {p99:.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=50)
    parser.add_argument("--max-running", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="symex-service-bench-") as scratch:
        root = Path(scratch)
        process, url, token = serve(root, args.max_running)
        try:
            with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"},
                              timeout=60) as client:
                overhead(client, root, args.repeat)
                load(client, args.jobs)
        finally:
            process.terminate()
            process.wait(30)


if __name__ == "__main__":
    main()
