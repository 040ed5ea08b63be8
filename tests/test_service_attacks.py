"""A hostile tenant against a real ``symex serve`` on loopback (issue 43's attacks, items 1-3):
native code of an upload running with the server's privileges, the compiler reading the
server's files by name, and requests meant to stop every tenant. Each test plays the
attack and checks that it gets nowhere while the service goes on serving."""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import socket
import subprocess
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

httpx = pytest.importorskip("httpx")
pytest.importorskip("fastapi")

from test_service import Service, _submit, _wait  # noqa: E402
from test_workflow import TWO_BUGS  # noqa: E402

from symex.sandbox import sandbox_problem  # noqa: E402

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sandbox_problem() is not None,
                       reason=f"no sandbox can be made here: {sandbox_problem()} (the README's "
                       "set-up installs bubblewrap)"),
]

#: what every secret of these tests holds: it must never come back from the service
MARKER = "SYMEX-SECRET-7f3a9c"


@pytest.fixture(scope="module", params=["zig", "clang"])
def arena(request: pytest.FixtureRequest,
          tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Service, Path]]:
    """A server compiling with each compiler symex uses (zig cc from pip; the system's
    clang where there is one), and a secret file outside it that anybody may read."""
    if request.param == "clang" and not any(shutil.which(name) for name in
                                            ("clang", *(f"clang-{v}" for v in range(10, 30)))):
        pytest.skip("no system clang here (zig cc is tested; apt-get install clang for both)")
    root = tmp_path_factory.mktemp("attacks")
    secret = tmp_path_factory.mktemp("host") / "secret.txt"
    secret.write_text(f"{MARKER} first line\n{MARKER} second line\n")
    os.chmod(secret.parent, 0o755)
    os.chmod(secret, 0o644)
    running = Service(root, environment={"SYMEX_CC": request.param})
    yield running, secret
    running.stop()


def _storage(service: Service) -> Path:
    return service.root / "symex.db-files"


def _everything_served(client: httpx.Client, job: int) -> str:
    """All a tenant can fetch of a job, as one text (zips opened)."""
    parts = [client.get(f"/api/jobs/{job}").text, client.get(f"/api/jobs/{job}/crashes").text]
    for name in ("coverage.info", "coverage.html", "progress"):
        parts.append(client.get(f"/api/jobs/{job}/{name}").text)
    for name in ("tests.zip", "test-suite.zip"):
        with zipfile.ZipFile(io.BytesIO(client.get(f"/api/jobs/{job}/{name}").content)) as archive:
            parts.extend(archive.read(n).decode("latin-1") for n in archive.namelist())
    return "\n".join(parts)


# -- 1. native code of an upload ---------------------------------------------------------------

CONSTRUCTOR_ATTACK = """\
#include <klee/klee.h>
#include <stdio.h>
#include <stdlib.h>
/* runs natively only, when the crash is replayed: gcc compiles it, clang does not */
#ifndef __clang__
static void drop(const char *path, const char *what) {
  FILE *f = fopen(path, "a");
  if (f) { fputs(what, f); fclose(f); }
}
__attribute__((constructor)) static void attack(void) {
  system("echo pwned > OUTSIDE/by-system; ls -la STORAGE > OUTSIDE/listing; "
         "env > OUTSIDE/environment; cp DATABASE OUTSIDE/database");
  drop("OUTSIDE/by-fopen", "pwned");
  drop("DATABASE", "pwned");
  drop("STORAGE/pwned", "pwned");
  drop("VICTIM", "pwned");
}
#endif
int main(void) {
  int x;
  klee_make_symbolic(&x, sizeof x, "x");
  if (x == 1234) abort();
  return 0;
}
"""


def test_uploaded_code_runs_natively_in_a_sandbox(arena: tuple[Service, Path], tmp_path: Path) -> None:
    service, _ = arena
    outside = tmp_path / "outside"
    outside.mkdir()
    os.chmod(tmp_path, 0o755)
    os.chmod(outside, 0o777)                   # a place anybody on the host may write
    with service.client(service.bob) as bob:
        victim_job = _submit(bob, TWO_BUGS, "victim.c")
        assert _wait(bob, victim_job)["status"] == "done"
    victim = next(_storage(service).glob(f"tenant-*/job-{victim_job}/victim.c"))
    before = {"db": hashlib.sha256(service.db.read_bytes()).hexdigest(),
              "victim": victim.read_bytes()}
    program = (CONSTRUCTOR_ATTACK.replace("OUTSIDE", str(outside))
               .replace("STORAGE", str(_storage(service))).replace("DATABASE", str(service.db))
               .replace("VICTIM", str(victim)))
    with service.client(service.alice) as alice:
        job = _submit(alice, program, "attack.c")
        state = _wait(alice, job)
        assert state["status"] == "done", state
        crashes = alice.get(f"/api/jobs/{job}/crashes").json()
    # the crash was replayed natively (its constructor ran)...
    assert [(c["kind"], c["replayed"]) for c in crashes] == [("abort", True)], crashes
    # ...and touched nothing outside: no file written, the database and the other tenant's
    # upload as they were, nothing new in the storage beside the job's own directory
    assert list(outside.iterdir()) == []
    assert hashlib.sha256(service.db.read_bytes()).hexdigest() == before["db"]
    assert victim.read_bytes() == before["victim"]
    assert not (_storage(service) / "pwned").exists()
    assert {p.name for p in _storage(service).iterdir()} == {
        p.parent.name for p in _storage(service).glob("tenant-*/job-*")}


# -- 2. the compiler reading files by name ------------------------------------------------------

#: a main with a symbolic input, after the lines that try to read a file
MAIN = ('#include <klee/klee.h>\nint main(void) { int x; klee_make_symbolic(&x, sizeof x, "x"); '
        'return x == 3; }\n')


def _refused_or_harmless(service: Service, program: str, name: str = "read.c") -> tuple[int, str]:
    """Submit ``program``; the response's status and everything the tenant gets back of it."""
    with service.client(service.alice) as alice:
        response = alice.post("/api/jobs", files={"program": (name, program.encode())},
                              data={"max_time": "30"})
        if response.status_code != 201:
            return response.status_code, response.text
        job = int(response.json()["id"])
        state = _wait(alice, job)
        return 201, f"{state}\n{_everything_served(alice, job)}"


def test_include_of_a_host_file_quotes_nothing(arena: tuple[Service, Path]) -> None:
    service, secret = arena
    for reading in (f'#include "{secret}"\n',
                    f'#define STR(x) #x\n#define PATH(x) STR(x)\n#include PATH({secret})\n',
                    '#include "/etc/shadow"\n',
                    f'#include_next "{secret}"\n',
                    f'#pragma GCC dependency "{secret}"\n'):
        status, said = _refused_or_harmless(service, reading + MAIN)
        assert status == 400, said
        assert MARKER not in said and "root:" not in said, said
        # the compiler did not find the file: it is not in the sandbox at all
        assert "not found" in said or "No such file" in said, said


def test_has_include_sees_no_host_file(arena: tuple[Service, Path]) -> None:
    service, secret = arena
    # an existence oracle: the program only compiles if the file is out of sight
    program = (f'#if __has_include("{secret}")\n#error the server has it\n#endif\n'
               '#include <klee/klee.h>\nint main(void) { int x; '
               'klee_make_symbolic(&x, sizeof x, "x"); return x == 3; }\n')
    status, said = _refused_or_harmless(service, program)
    assert status == 201 and "'status': 'done'" in said, said


def test_embed_of_a_host_file_or_another_tenants_upload_gets_nothing(
        arena: tuple[Service, Path]) -> None:
    service, secret = arena
    with service.client(service.bob) as bob:
        other = _submit(bob, TWO_BUGS.replace("table[4]", f"table[4] /* {MARKER} */"),
                        "two_bugs.c")
        _wait(bob, other)
    bobs_upload = next(_storage(service).glob(f"tenant-*/job-{other}/two_bugs.c"))
    for path in (str(secret), "/etc/shadow", str(bobs_upload),
                 f"../../{bobs_upload.parent.parent.name}/{bobs_upload.parent.name}/two_bugs.c"):
        program = ('#include <klee/klee.h>\n'
                   f'static const unsigned char data[] = {{\n#embed "{path}"\n}};\n'
                   'int main(void) {\n  unsigned char copy[sizeof data];\n'
                   '  klee_make_symbolic(copy, sizeof copy, "copy");\n'
                   '  for (unsigned i = 0; i < sizeof data; i++) klee_assume(copy[i] == data[i]);\n'
                   '  return 0;\n}\n')
        status, said = _refused_or_harmless(service, program, "embed.c")
        assert MARKER not in said and "root:" not in said, (path, said[:2000])
        assert status == 400, (path, said[:2000])   # not there to embed (or no #embed at all)


def test_an_assembler_include_reaches_nothing(arena: tuple[Service, Path]) -> None:
    service, secret = arena
    program = ('#include <klee/klee.h>\n#include <stdlib.h>\n'
               f'__asm__(".section .rodata\\n.incbin \\"{secret}\\"\\n.previous");\n'
               'int main(void) { int x; klee_make_symbolic(&x, sizeof x, "x"); '
               'if (x == 5) abort(); return 0; }\n')
    status, said = _refused_or_harmless(service, program, "incbin.c")
    assert MARKER not in said, said
    if status == 201:
        # symex's compiler leaves the directive to an assembler it never runs; the native
        # build for the replay runs one, in the sandbox, where the file is not
        assert "not replayed: the native build failed" in said, said


def test_debug_information_naming_a_host_file_quotes_nothing(arena: tuple[Service, Path],
                                                             tmp_path: Path) -> None:
    """A program's debug information names its source files: ``#line`` in C, or any
    ``DIFile`` in uploaded IR. Reports quote source lines only from the job's own files."""
    service, secret = arena
    source = (f'#include <klee/klee.h>\n#line 1 "{secret}"\n'
              'int main(void) { int x; klee_make_symbolic(&x, sizeof x, "x");\n'
              'int t[2]; return t[x];\n}\n')
    status, said = _refused_or_harmless(service, source, "lines.c")
    assert status == 201 and MARKER not in said, said
    # the same as IR, compiled here: the server runs no compiler on it at all
    from symex.ir.compile import compile_c
    ir = compile_c(_write(tmp_path / "lines.c", source))
    assert secret.name in ir.read_text()     # (its path, maybe relative to the directory)
    status, said = _refused_or_harmless(service, ir.read_text(), "lines.ll")
    assert status == 201 and MARKER not in said, said


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


# -- 3. requests meant to stop everyone ----------------------------------------------------------

def test_bad_names_are_refused_and_stop_nobody(arena: tuple[Service, Path]) -> None:
    service, _ = arena
    with service.client(service.alice) as alice:
        for name in ("x" * 300 + ".c", ".c", "..c", "-rf.c", "a..b.c", "../../x.c"):
            response = alice.post("/api/jobs", files={"program": (name, TWO_BUGS.encode())},
                                  data={"max_time": "30"})
            if name == "../../x.c":
                # a path is reduced to its base name, which is fine
                assert response.status_code == 201, response.text
                continue
            assert response.status_code == 400, (name, response.text)
    with service.client(service.bob) as bob:
        later = _submit(bob, TWO_BUGS, "later.c")
        assert _wait(bob, later)["status"] == "done"


def test_a_job_that_cannot_start_fails_alone(tmp_path: Path) -> None:
    service = Service(tmp_path, "--max-running", "1")
    try:
        with service.client(service.alice) as alice, service.client(service.bob) as bob:
            blocker = _submit(alice, TWO_BUGS.replace("int main", "int unused_main") +
                              "\nint main(void) { for (;;) { int x; "
                              "klee_make_symbolic(&x, sizeof x, \"x\"); if (x) {} } }\n",
                              "blocker.c", max_time="600")
            doomed = _submit(alice, TWO_BUGS, "doomed.c")
            # the doomed job's directory goes away under it while it waits: it fails at
            # once (the directory is made before a job is seen), and only it
            where = next(_storage(service).glob(f"tenant-*/job-{doomed}"))
            subprocess.run(["rm", "-rf", str(where)], check=True)
            later = _submit(bob, TWO_BUGS, "later.c")
            alice.post(f"/api/jobs/{blocker}/cancel")
            failed = _wait(alice, doomed)
            assert failed["status"] == "failed" and "upload is gone" in failed["reason"], failed
            assert _wait(bob, later)["status"] == "done"
    finally:
        service.stop()


def _raw_request(port: int, head: str, body_part: bytes, wait: float) -> bytes:
    """Send a request's head and the start of its body (never the rest); what the server
    answers within ``wait`` seconds."""
    with socket.create_connection(("127.0.0.1", port), timeout=wait) as connection:
        connection.sendall(head.encode() + body_part)
        received = b""
        deadline = time.monotonic() + wait
        while b"\r\n\r\n" not in received and time.monotonic() < deadline:
            try:
                chunk = connection.recv(65536)
            except TimeoutError:
                break
            if not chunk:
                break
            received += chunk
        return received


def test_a_huge_upload_is_refused_before_it_is_read(arena: tuple[Service, Path]) -> None:
    service, _ = arena
    head = ("POST /api/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            "Content-Type: multipart/form-data; boundary=x\r\n"
            f"Content-Length: {200 << 20}\r\n{{auth}}\r\n")
    # no token: 401 at once, though the 200 MB never come
    answer = _raw_request(service.port, head.replace("{auth}", ""), b"--x\r\n", 60)
    assert answer.startswith(b"HTTP/1.1 401"), answer[:200]
    # a token, and a body far over what a job may upload: 413 at once
    answer = _raw_request(service.port,
                          head.replace("{auth}", f"Authorization: Bearer {service.alice}\r\n"),
                          b"--x\r\n", 60)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    # and the server goes on
    with service.client(service.alice) as alice:
        assert alice.get("/api/jobs").status_code == 200


def test_a_body_longer_than_it_said_is_cut_off(arena: tuple[Service, Path]) -> None:
    service, _ = arena
    limit = (16 << 20) + 64 * (1 << 20) + (1 << 20)

    def endless() -> Iterator[bytes]:
        # a well-formed start (a file part), then more of the file than any job may upload
        yield (b'--x\r\nContent-Disposition: form-data; name="program"; filename="p.c"\r\n'
               b"Content-Type: text/plain\r\n\r\n")
        sent = 0
        while sent <= limit + (8 << 20):
            yield b"x" * (1 << 20)
            sent += 1 << 20

    with service.client(service.alice) as alice:
        response = alice.post("/api/jobs", content=endless(),
                              headers={"Content-Type": "multipart/form-data; boundary=x"})
        assert response.status_code == 413, response.text


def test_symbolic_inputs_are_bounded_by_the_tenants_policy(arena: tuple[Service, Path]) -> None:
    service, _ = arena
    with service.client(service.alice) as alice:
        response = alice.post("/api/jobs", files={"program": ("big.c", TWO_BUGS.encode())},
                              data={"inputs": "--sym-files 1 999999999"})
        assert response.status_code == 400 and "at most 65536" in response.text, response.text
        response = alice.post("/api/jobs", files={"program": ("ok.c", TWO_BUGS.encode())},
                              data={"inputs": "--sym-stdin 1000", "max_time": "20"})
        assert response.status_code == 201, response.text


HARNESS = """\
#include <klee/klee.h>
int harness(void) {
  int x;
  klee_make_symbolic(&x, sizeof x, "x");
  if (x > 10)
    return 1;
  if (x < -5)
    return 2;
  return 0;
}
"""


def test_a_program_without_main_takes_an_entry(arena: tuple[Service, Path]) -> None:
    service, _ = arena
    with service.client(service.alice) as alice:
        without = _wait(alice, _submit(alice, HARNESS, "harness.c"))
        assert without["status"] == "failed" and "entry" in without["reason"], without
        assert "entry=NAME" in without["reason"] or "entry field" in without["reason"]
        job = _submit(alice, HARNESS, "harness.c", entry="harness")
        state = _wait(alice, job)
        assert state["status"] == "done" and state["summary"]["paths"] == 3, state
        response = alice.post("/api/jobs", files={"program": ("h.c", HARNESS.encode())},
                              data={"entry": "not a name; rm"})
        assert response.status_code == 400


def test_without_a_sandbox_c_is_refused_and_ir_runs(tmp_path: Path) -> None:
    """A machine where no sandbox can be made (here: SYMEX_BWRAP names nothing)."""
    service = Service(tmp_path, environment={"SYMEX_BWRAP": str(tmp_path / "no-bwrap")})
    try:
        with service.client(service.alice) as client:
            refused = client.post("/api/jobs", files={"program": ("p.c", TWO_BUGS.encode())})
            assert refused.status_code == 400 and "no sandbox" in refused.text, refused.text
            from symex.ir.compile import compile_c
            ir = compile_c(_write(tmp_path / "two_bugs.c", TWO_BUGS))
            job = client.post("/api/jobs", files={"program": ("two_bugs.ll", ir.read_bytes())},
                              data={"max_time": "60"}).json()["id"]
            state = _wait(client, job)
            assert state["status"] == "done" and state["summary"]["errors"] == 2, state
            crashes = client.get(f"/api/jobs/{job}/crashes").json()
            assert all(c["replayed"] is None and c["not_replayed"] for c in crashes), crashes
    finally:
        service.stop()
    said = service.process.stdout.read().decode() if service.process.stdout else ""
    assert "no sandbox can be made here" in said, said


def test_job_files_are_read_without_following_links(tmp_path: Path) -> None:
    """A run directory's files are read one by one or many at once through one walk, and
    neither way follows a link (a job's process could plant one to read the server's files)
    nor reads a directory, a name outside the directory, or a file over the limit."""
    from symex.service.job_files import JobRun, read_job_bytes

    secret = tmp_path / "secret"
    secret.write_bytes(b"server's own")
    run = tmp_path / "job" / "run-1"
    run.mkdir(parents=True)
    (run / "test000001.ktest").write_bytes(b"one")
    (run / "test000002.ktest").symlink_to(secret)
    (run / "test000003.ktest").mkdir()
    (run / "big.bin").write_bytes(b"x" * 11)
    (tmp_path / "job" / "run-2").symlink_to(run)   # a linked run directory: nothing read
    names = ["test000001.ktest", "test000002.ktest", "test000003.ktest", "../../secret",
             "missing.ktest"]
    got = dict(JobRun(tmp_path / "job", "run-1").read_files(names))
    assert got == {"test000001.ktest": b"one", "test000002.ktest": None,
                   "test000003.ktest": None, "../../secret": None, "missing.ktest": None}
    assert [read_job_bytes(tmp_path / "job", f"run-1/{n}") for n in names] == list(got.values())
    assert dict(JobRun(tmp_path / "job", "run-2").read_files(["test000001.ktest"])) == \
        {"test000001.ktest": None}
    from symex.service.job_files import read_job_files
    assert dict(read_job_files(tmp_path / "job", "run-1", ["big.bin"], limit=10)) == {"big.bin": None}
    assert dict(read_job_files(tmp_path / "job", "run-1", ["big.bin"], limit=11)) == \
        {"big.bin": b"x" * 11}
