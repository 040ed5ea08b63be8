"""Native replay in a sandbox (what the testing service uses for uploaded programs): file
size, memory and network limits, on real programs built with gcc and AddressSanitizer."""

from __future__ import annotations

import os
import shutil
import signal
import socket
from pathlib import Path

import pytest

from symex.errors import SymexError
from symex.output.ktest import KTest, KTestObject
from symex.replay import NativeSandbox, build_native, run_native

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")

PROGRAM = """\
#include <klee/klee.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(void) {
  int what, port;
  klee_make_symbolic(&what, sizeof what, "what");
  klee_make_symbolic(&port, sizeof port, "port");
  if (what == 1) {                      /* write 8 MiB to a file */
    FILE *f = fopen("big", "w");
    static char block[1 << 20];
    for (int i = 0; i < 8; i++)
      if (fwrite(block, 1, sizeof block, f) != sizeof block) return 4;
    fclose(f);
    return 0;
  }
  if (what == 2) {                      /* take 400 MiB and touch it */
    char *p = malloc(400u << 20);
    memset(p, 1, 400u << 20);
    return p[12345] == 1 ? 0 : 5;
  }
  if (what == 3) {                      /* connect to 127.0.0.1:port */
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons((unsigned short)port);
    a.sin_addr.s_addr = htonl(0x7f000001);
    return connect(s, (struct sockaddr *)&a, sizeof a) == 0 ? 0 : 3;
  }
  return 0;
}
"""


@pytest.fixture(scope="module")
def executable(tmp_path_factory: pytest.TempPathFactory) -> Path:
    source = tmp_path_factory.mktemp("sandbox") / "sandboxed.c"
    source.write_text(PROGRAM)
    return build_native(source)


def _test(what: int, port: int = 0) -> KTest:
    return KTest((), (KTestObject("what", what.to_bytes(4, "little")),
                      KTestObject("port", port.to_bytes(4, "little"))))


def test_a_big_file_is_stopped_by_the_file_size_limit(executable: Path) -> None:
    assert run_native(executable, _test(1), sandbox=NativeSandbox()).exit_code == 0
    limited = run_native(executable, _test(1), sandbox=NativeSandbox(file_size_mb=1))
    # SIGXFSZ at the first write past 1 MiB (or a short write, if it is ignored)
    assert limited.signal == signal.SIGXFSZ or limited.exit_code == 4, limited


def test_memory_above_the_limit_stops_the_program(executable: Path) -> None:
    assert run_native(executable, _test(2), timeout=60).exit_code == 0
    limited = run_native(executable, _test(2), timeout=60, sandbox=NativeSandbox(memory_mb=100))
    assert limited.exit_code != 0 and "rss" in limited.stderr.lower(), limited


def test_no_network_means_no_connection(executable: Path) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        assert run_native(executable, _test(3, port)).exit_code == 0   # it can connect
        try:
            isolated = run_native(executable, _test(3, port), sandbox=NativeSandbox(no_network=True))
        except SymexError as exc:
            assert os.geteuid() != 0, exc       # only without root may this be refused
            assert "without the network" in str(exc)
            return
        assert isolated.exit_code == 3, isolated
