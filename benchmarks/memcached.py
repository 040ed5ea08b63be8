"""memcached with symbolic packets, as in Cloud9's memcached case study: Debian's memcached
1.6 on libevent 2.1, both built whole with `symex cc` on musl, then run two ways:

- the server alone (`memcached -p 11211 -U 0 -t 1 -u root`): nothing else exists in the
  closed universe, so nobody ever connects;
- the server with two symbolic packets from a client outside (`--sym-packets 2 64`);
- the same, seeded (`--seed-dir`): one seed per pair of text commands (`set` then `get`,
  `add` then `incr`, ...), so every command's handler is reached first and the forks beside
  each seed explore it (without seeds the tree's breadth is junk commands: a 64-byte packet
  is a run of short `\n`-terminated commands, and `get` needs a 3-byte word, a space and a
  key before the first `\n`).

Both symbolic runs take `--max-sym-array-size 4096` (see MAX_SYM_ARRAY_SIZE): the keys'
hashes index a 40 KB table of locks and a 512 KB hash table.

    python benchmarks/memcached.py                       # 300 s for the symbolic run
    python benchmarks/memcached.py --time 120 --work /tmp/mc

The sources come from Debian (`apt-get source memcached libevent`, into --work: a deb-src
line is needed, see benchmarks/coreutils.py). libevent is configured static, and its
config.h is edited to leave select() as its only back end (no epoll, poll, eventfd or
timerfd), as Cloud9's tutorial does. Debian's patches touch Makefile.am (a linker flag for
shared libraries, which are not built here); its date is put back so that make does not
want automake. memcached is configured without SASL, docs, dtrace or extstore.

For each run: paths, errors and their native replay (`symex replay`), how the paths ended,
line coverage of proto_text.c (the text protocol) and of proto_bin.c (the binary protocol,
spoken by a packet starting with the byte 0x80, as Cloud9's were), and which of each
protocol's command handlers some test reached. Not a test: figures go to docs/benchmarks.md with the command.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from coreutils import line_hits, run_or_exit, run_tool  # noqa: E402
from symex.output.ktest import KTest, KTestObject, write_ktest  # noqa: E402

SERVER_ARGUMENTS = ("-p", "11211", "-U", "0", "-t", "1", "-u", "root")
#: libevent's back ends other than select(), off in its config.h
NOT_SELECT = ("HAVE_EPOLL", "HAVE_EPOLL_CREATE1", "HAVE_EPOLL_CTL", "HAVE_EVENTFD", "HAVE_POLL",
              "HAVE_SYS_EPOLL_H", "HAVE_SYS_EVENTFD_H", "HAVE_SYS_TIMERFD_H", "HAVE_TIMERFD_CREATE")
#: the text protocol's file, whose coverage is reported
PROTOCOL = "proto_text.c"
#: the binary protocol's (a packet whose first byte is 0x80 speaks it; Cloud9's did)
BINARY_PROTOCOL = "proto_bin.c"
#: bytes in each symbolic packet
PACKET = 64
#: the seeds of the seeded run: the two packets of a client, one pair of commands each.
#: Each is padded to the packet's size with spaces: what follows a command in a packet is the
#: start of the next one, and memcached's tokenizer skips spaces (zeros, the default for
#: missing bytes, would make the next command an empty string: "ERROR")
SEED_PACKETS = (
    ("set k 0 0 1\r\nv\r\n", "get k\r\n"),
    ("add n 0 0 1\r\n5\r\n", "incr n 2\r\n"),
    ("replace k 0 0 1\r\nv\r\n", "delete k\r\n"),
    ("append k 0 0 1\r\nw\r\n", "prepend k 0 0 1\r\nu\r\n"),
    ("gets k\r\n", "cas k 0 0 1 1\r\nv\r\n"),
    ("decr n 1\r\n", "touch k 10\r\n"),
    ("stats\r\n", "version\r\n"),
    ("flush_all\r\n", "verbosity 1\r\n"),
    ("gat 10 k\r\n", "quit\r\n"),
    ("ms k 1\r\nv\r\n", "mg k v\r\n"),
    ("ma n\r\n", "md k\r\n"),
    ("mn\r\n", "me k\r\n"),
    ("cache_memlimit 100\r\n", "slabs automove 1\r\n"),
    ("lru mode flat\r\n", "lru_crawler metadump all\r\n"),
    ("shutdown\r\n", "watch\r\n"),  # last on a connection: a watcher only listens
)
#: the symbolic runs fix symbolic offsets into bigger objects than this (--max-sym-array-size;
#: symex fixes the bytes they are computed from): the 40 KB table of item locks and the 512 KB
#: hash table at hash(key), the 16 KB read buffer at a key length read from a binary header,
#: 1 MB slab pages. With 65536 (the read buffer and the locks symbolic), 84 % of a plain
#: run's time went to queries that carried both: 2,202 paths in 120 s against 32,719
MAX_SYM_ARRAY_SIZE = 4096


def fetch(work: Path, package: str, pattern: str) -> Path:
    """A Debian source tree (``apt-get source PACKAGE`` into ``work``, once)."""
    existing = sorted(work.glob(f"{pattern}/configure"))
    if existing:
        return existing[0].parent
    work.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(["apt-get", "source", package], cwd=work, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"apt-get source {package} failed: {proc.stderr.strip()}\n"
                 "add a deb-src line (see benchmarks/coreutils.py) and run apt-get update")
    return sorted(work.glob(f"{pattern}/configure"))[0].parent


def _keep_makefile_am(tree: Path) -> None:
    """Debian's patches leave Makefile.am newer than Makefile.in, and make would run automake."""
    configure_ac = tree / "configure.ac"
    stamp = configure_ac.stat().st_mtime
    os.utime(tree / "Makefile.am", (stamp, stamp))


def build_libevent(tree: Path, install: Path, env: dict[str, str], jobs: int) -> None:
    """libevent, static, select() only; headers and archives copied to ``install``."""
    if (install / "lib" / "libevent.a").is_file():
        return
    cc = f"{sys.executable} -m symex.cli cc"
    print("libevent: configure ...", flush=True)
    run_or_exit(["./configure", f"CC={cc}", "--disable-shared", "--enable-static", "--disable-openssl",
                 "--disable-libevent-regress", "--disable-samples", "--disable-debug-mode"], tree, env)
    config = tree / "config.h"
    text = config.read_text()
    for name in NOT_SELECT:
        text = re.sub(rf"^#define {name} 1$", f"/* {name}: off, select() only */", text, flags=re.M)
    config.write_text(text)
    _keep_makefile_am(tree)
    print("libevent: make ...", flush=True)
    run_or_exit(["make", f"-j{jobs}"], tree, env)
    (install / "lib").mkdir(parents=True, exist_ok=True)
    run_or_exit(["cp", "-r", "include", str(install)], tree)
    for archive in ("libevent.a", "libevent_core.a"):
        run_or_exit(["cp", f".libs/{archive}", str(install / "lib")], tree)


def build_memcached(tree: Path, libevent: Path, env: dict[str, str], jobs: int) -> Path:
    """memcached against that libevent; the executable."""
    executable = tree / "memcached"
    if executable.is_file():
        return executable
    cc = f"{sys.executable} -m symex.cli cc"
    print("memcached: configure ...", flush=True)
    run_or_exit(["./configure", f"CC={cc}", "--disable-sasl", "--disable-docs", "--disable-dtrace",
                 "--enable-64bit", "--disable-coverage", "--disable-extstore",
                 f"--with-libevent={libevent}"], tree, env)
    _keep_makefile_am(tree)
    print("memcached: make ...", flush=True)
    run_or_exit(["make", f"-j{jobs}", "memcached"], tree, env)
    return executable


def write_seeds(directory: Path) -> Path:
    """The seeds of :data:`SEED_PACKETS` as ``.ktest`` files (objects ``packet-0`` and
    ``packet-1``, as ``--sym-packets 2 64`` names them)."""
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    for i, (first, second) in enumerate(SEED_PACKETS):
        write_ktest(directory / f"seed{i:02d}.ktest",
                    KTest((), (KTestObject("packet-0", first.encode().ljust(PACKET, b" ")),
                               KTestObject("packet-1", second.encode().ljust(PACKET, b" ")))))
    return directory


def handlers_reached(source: Path, out: Path) -> dict[str, bool | None]:
    """For each ``process_*`` function of the protocol file ``source``: whether a test ran
    one of its lines (None: the build has none of its lines: compiled out, e.g. under
    ``#ifdef TLS``)."""
    lines = source.read_text().splitlines()
    starts = [(n, m[1]) for n, line in enumerate(lines, 1)
              if (m := re.match(r"(?:static )?(?:inline )?[\w\s*]*?\b(process_\w+)\(", line)) and
              not line.rstrip().endswith(";")]
    hits = line_hits(out, source.name)
    executed = {n for n, count in hits.items() if count > 0}
    reached: dict[str, bool | None] = {}
    for k, (start, name) in enumerate(starts):
        end = starts[k + 1][0] if k + 1 < len(starts) else len(lines) + 1
        if not any(start <= n < end for n in hits):
            reached[name] = None
        else:
            reached[name] = any(start <= n < end for n in executed)
    return reached


def endings(out: Path) -> dict[str, int]:
    """How the run's paths ended (tests.csv): status and the first words of the reason."""
    counts: Counter[str] = Counter()
    index = out / "tests.csv"
    if index.is_file():
        with open(index, newline="") as handle:
            for entry in csv.DictReader(handle):
                reason = entry["reason"].split(":")[0] if entry["reason"] else entry["error"]
                counts[f"{entry['status']} ({reason})" if reason else entry["status"]] += 1
    return dict(counts.most_common())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=Path.home() / ".cache" / "symex" / "bench" / "memcached")
    parser.add_argument("--time", type=float, default=300.0, help="seconds for the symbolic run (300)")
    parser.add_argument("--alone-time", type=float, default=120.0, help="seconds for the server alone (120)")
    parser.add_argument("--idle", type=int, default=16,
                        help="--max-idle-time-outs for the symbolic run (16: a path ends soon "
                        "after the client is served)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    options = parser.parse_args()
    work = options.work.resolve()
    env = {**os.environ, "SYMEX_LIBC": "musl"}
    libevent_tree = fetch(work, "libevent", "libevent-2*")
    memcached_tree = fetch(work, "memcached", "memcached-1*")
    started = time.monotonic()
    libevent = work / "libevent-install"
    build_libevent(libevent_tree, libevent, env, options.jobs)
    executable = build_memcached(memcached_tree, libevent, env, options.jobs)
    print(f"built in {time.monotonic() - started:.0f} s: {executable}", flush=True)
    results = work / "results"
    searched = ("--search", "random-path", "--search", "nurs:covnew",
                "--max-idle-time-outs", str(options.idle),
                "--max-sym-array-size", str(MAX_SYM_ARRAY_SIZE))
    seeds = write_seeds(work / "seeds")
    runs = [
        ("alone", SERVER_ARGUMENTS, options.alone_time, ()),
        ("sym-packets", SERVER_ARGUMENTS + ("--sym-packets", "2", str(PACKET)), options.time, searched),
        ("seeded", SERVER_ARGUMENTS + ("--sym-packets", "2", str(PACKET)), options.time,
         searched + ("--seed-dir", str(seeds))),
    ]
    for name, arguments, seconds, extra in runs:
        shutil.rmtree(results / name, ignore_errors=True)  # a run's directory must be new
        row = run_tool(executable, PROTOCOL, results, seconds, arguments, name=name, options=extra)
        out = results / name
        row["endings"] = endings(out)
        binary = line_hits(out, BINARY_PROTOCOL)
        row["binary_lines"] = f"{sum(1 for c in binary.values() if c)}/{len(binary)}"
        for prefix, protocol in (("", PROTOCOL), ("binary_", BINARY_PROTOCOL)):
            reached = handlers_reached(memcached_tree / protocol, out)
            row[f"{prefix}handlers_reached"] = sorted(n for n, hit in reached.items() if hit)
            row[f"{prefix}handlers_not_reached"] = sorted(n for n, hit in reached.items()
                                                          if hit is False)
            row[f"{prefix}handlers_not_built"] = sorted(n for n, hit in reached.items()
                                                        if hit is None)
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
