"""What processes, threads and sockets cost in the model, and how long the key-value server's
bug takes to find (issue 13's performance figures).

    python benchmarks/network_benchmarks.py            # the run behind docs/benchmarks.md
    python benchmarks/network_benchmarks.py --quick    # one repeat, a smoke run

Switch and round-trip costs: three concrete programs run in one process, alternating, each
``--rounds`` times through the same loop body:

- ``alone``: one process writes a byte into a pipe and reads it back, twice (the same
  model calls as one round below, no switch);
- ``processes``: a parent and a forked child bounce a byte over two pipes (each round: two
  writes, two reads, two process switches, since every read blocks until the other side
  writes);
- ``threads``: the same with two threads of one process;
- ``sockets``: the same as ``processes`` over a socket pair.

The cost of a switch is (processes - alone) / (2 x rounds): the blocked read that runs again
and the switch itself. A socket round trip is sockets / rounds. Times are medians of the
repeats, in the same run, as ratios to ``alone``.

Time to the bug: ``tests/programs/network/kv_server.c`` explored with dfs: seconds until the
first ``ptr`` error and until the whole tree is explored, and the same with ``--sym-packets``
on the server alone.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import symex
from symex.results import Hooks

NETWORK = Path(__file__).resolve().parent.parent / "tests" / "programs" / "network"

PROGRAMS = {
    "alone": r"""
#include <unistd.h>
int main(void) {
  int p[2]; char c = 'x';
  pipe(p);
  for (int i = 0; i < ROUNDS; i++) {
    write(p[1], &c, 1); read(p[0], &c, 1); write(p[1], &c, 1); read(p[0], &c, 1);
  }
  return c == 'x' ? 0 : 1;
}
""",
    "processes": r"""
#include <sys/wait.h>
#include <unistd.h>
int main(void) {
  int there[2], back[2]; char c = 'x';
  pipe(there); pipe(back);
  if (fork() == 0) {
    for (int i = 0; i < ROUNDS; i++) { read(there[0], &c, 1); write(back[1], &c, 1); }
    return 0;
  }
  for (int i = 0; i < ROUNDS; i++) { write(there[1], &c, 1); read(back[0], &c, 1); }
  wait(0);
  return c == 'x' ? 0 : 1;
}
""",
    "threads": r"""
#include <pthread.h>
#include <unistd.h>
static int there[2], back[2];
static void *echo(void *arg) {
  char c;
  for (int i = 0; i < ROUNDS; i++) { read(there[0], &c, 1); write(back[1], &c, 1); }
  return 0;
}
int main(void) {
  char c = 'x'; pthread_t t;
  pipe(there); pipe(back);
  pthread_create(&t, 0, echo, 0);
  for (int i = 0; i < ROUNDS; i++) { write(there[1], &c, 1); read(back[0], &c, 1); }
  pthread_join(t, 0);
  return c == 'x' ? 0 : 1;
}
""",
    "sockets": r"""
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
int main(void) {
  int sv[2]; char c = 'x';
  socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
  if (fork() == 0) {
    for (int i = 0; i < ROUNDS; i++) { recv(sv[1], &c, 1, 0); send(sv[1], &c, 1, 0); }
    return 0;
  }
  for (int i = 0; i < ROUNDS; i++) { send(sv[0], &c, 1, 0); recv(sv[0], &c, 1, 0); }
  wait(0);
  return c == 'x' ? 0 : 1;
}
""",
}


def switch_costs(rounds: int, repeats: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        programs = {}
        for name, text in PROGRAMS.items():
            path = Path(tmp) / f"{name}.c"
            path.write_text(text)
            programs[name] = symex.compile(path, flags=[f"-DROUNDS={rounds}"])
        times: dict[str, list[float]] = {name: [] for name in programs}
        instructions: dict[str, int] = {}
        for _ in range(repeats):
            for name, program in programs.items():
                started = time.perf_counter()
                result = symex.explore(program)
                times[name].append(time.perf_counter() - started)
                (test,) = result.tests
                assert test.exit_code == 0, (name, test.reason)
                instructions[name] = result.statistics.instructions
    median = {name: statistics.median(values) for name, values in times.items()}
    base = median["alone"]
    print(f"switch and round-trip costs, {rounds} rounds, median of {repeats}:")
    for name in programs:
        print(f"  {name:10s} {median[name]:7.3f} s  {median[name] / base:5.2f}x alone  "
              f"{instructions[name]:>9,} instructions")
    for name in ("processes", "threads"):
        per_switch = (median[name] - base) / (2 * rounds) * 1e6
        print(f"  {name}: {per_switch:6.1f} µs per switch (the blocked read run again "
              f"included), over alone")
    print(f"  socket round trip (send, recv, both ways, two switches): "
          f"{median['sockets'] / rounds * 1e6:6.1f} µs; two pipe writes and reads alone: "
          f"{base / rounds * 1e6:6.1f} µs")


def time_to_bug(repeats: int) -> None:
    source = NETWORK / "kv_server.c"
    cases = [("client and server", [], {}),
             ("server alone, --sym-packets 2 4", ["-DSERVER_ONLY"], {"sym_packets": (2, 4)})]
    for label, flags, options in cases:
        program = symex.compile(source, flags=flags)
        firsts, totals = [], []
        paths = 0
        for _ in range(repeats):
            found: list[float] = []
            started = time.perf_counter()

            def on_error(error: object, test: object, found: list[float] = found,
                         started: float = started) -> None:
                if not found:
                    found.append(time.perf_counter() - started)
            result = symex.explore(program, hooks=Hooks(on_error=on_error), **options)
            totals.append(time.perf_counter() - started)
            firsts.append(found[0])
            paths = len(result.tests)
        print(f"key-value server ({label}): first ptr error after "
              f"{statistics.median(firsts):.3f} s, whole tree ({paths} paths) "
              f"{statistics.median(totals):.3f} s, median of {repeats}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one repeat, fewer rounds")
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    options = parser.parse_args()
    repeats = 1 if options.quick else options.repeats
    rounds = 200 if options.quick else options.rounds
    print(f"python {sys.version.split()[0]}")
    switch_costs(rounds, repeats)
    time_to_bug(repeats)


if __name__ == "__main__":
    main()
