"""``symex tenant``: the testing service's tenants.

``symex tenant add NAME`` adds one and prints its token (once: only its hash is stored);
``symex tenant set NAME --max-jobs N --worker-seconds S --max-input-bytes B`` changes the
quotas given (``none`` lifts one) and says what changed; ``symex tenant list`` shows every tenant, its quotas and
its jobs.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from symex.errors import SymexError, error_text
from symex.service import DEFAULT_MAX_INPUT_BYTES

__all__ = ["add_parser", "main"]

#: an option that was not given (None means "no limit")
_NOT_GIVEN: Any = object()


def _quota(kind: type) -> Any:
    def parse(text: str) -> Any:
        if text.lower() == "none":
            return None
        try:
            return kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"invalid quota {text!r} (give a number, or 'none' for no limit)") from None
    return parse


def add_parser(commands: Any) -> None:
    """Declare ``symex tenant``."""
    parser = commands.add_parser(
        "tenant", help="manage the testing service's tenants",
        description="Add a tenant to the service's database (its API token is printed once: "
                    "only its hash is stored), change its quotas, or list the tenants.")
    parser.add_argument("action", choices=("add", "set", "list"),
                        help="add: a new tenant (its token is printed); set: change its "
                        "quotas; list: every tenant with its quotas and jobs")
    parser.add_argument("name", nargs="?", help="the tenant's name (add, set)")
    parser.add_argument("--db", default="symex.db", metavar="FILE",
                        help="the service's database (default: symex.db)")
    parser.add_argument("--max-jobs", type=_quota(int), default=_NOT_GIVEN, metavar="N",
                        help="jobs of the tenant that run at once ('none': no limit; add: "
                        "none unless given; set: unchanged unless given)")
    parser.add_argument("--worker-seconds", type=_quota(float), default=_NOT_GIVEN,
                        metavar="S",
                        help="worker-seconds its jobs may use in all ('none': no limit; "
                        "add: none unless given; set: unchanged unless given)")
    parser.add_argument("--max-input-bytes", type=_quota(int), default=_NOT_GIVEN,
                        metavar="B",
                        help=f"symbolic bytes of data one job's input options may make "
                        f"(arguments, files, stdin, packets; 'none': no limit; add: "
                        f"{DEFAULT_MAX_INPUT_BYTES} unless given; set: unchanged unless given)")


def _limit(value: float | None) -> str:
    return "no limit" if value is None else f"{value:g}"


def main(options: argparse.Namespace) -> int:
    """Carry out ``symex tenant ACTION``."""
    from symex.service.store import ServiceStore
    if options.action != "list" and not options.name:
        sys.stderr.write(f"symex tenant: error: '{options.action}' needs the tenant's name "
                         f"(see 'symex tenant --help')\n")
        return 2
    max_jobs = None if options.max_jobs is _NOT_GIVEN else options.max_jobs
    worker_seconds = None if options.worker_seconds is _NOT_GIVEN else options.worker_seconds
    max_input_bytes = DEFAULT_MAX_INPUT_BYTES if options.max_input_bytes is _NOT_GIVEN \
        else options.max_input_bytes
    try:
        store = ServiceStore(options.db)
        try:
            if options.action == "list":
                _list(store)
                return 0
            if options.action == "set":
                current = next((t for t in store.tenants() if t.name == options.name), None)
                if current is not None:
                    if options.max_jobs is _NOT_GIVEN:
                        max_jobs = current.max_jobs
                    if options.worker_seconds is _NOT_GIVEN:
                        worker_seconds = current.worker_seconds
                    if options.max_input_bytes is _NOT_GIVEN:
                        max_input_bytes = current.max_input_bytes
                before, after = store.set_quotas(options.name, max_jobs, worker_seconds,
                                                 max_input_bytes)
                changes = [f"{label} {_limit(old)} -> {_limit(new)}"
                           for label, old, new in (
                               ("max jobs", before.max_jobs, after.max_jobs),
                               ("worker-seconds", before.worker_seconds,
                                after.worker_seconds),
                               ("max input bytes", before.max_input_bytes,
                                after.max_input_bytes))
                           if old != new]
                print(f"tenant {options.name}: " + ("; ".join(changes) if changes else
                                                    "nothing changed (give --max-jobs, "
                                                    "--worker-seconds or --max-input-bytes)"))
                return 0
            token = store.add_tenant(options.name, max_jobs, worker_seconds, max_input_bytes)
        finally:
            store.close()
    except SymexError as exc:
        sys.stderr.write(error_text("symex tenant", exc))
        return 2
    print(token)
    return 0


def _list(store: Any) -> None:
    """Every tenant: its quotas, what its jobs hold, and its jobs by status."""
    tenants = store.tenants()
    if not tenants:
        print("no tenants yet (symex tenant add NAME)")
        return
    counts = store.job_counts()
    rows = [("tenant", "max jobs", "worker-seconds", "held", "max input bytes", "jobs")]
    for tenant in tenants:
        jobs = counts.get(tenant.id, {})
        described = ", ".join(f"{n} {status}" for status, n in sorted(jobs.items())) or "none"
        rows.append((tenant.name, _limit(tenant.max_jobs), _limit(tenant.worker_seconds),
                     f"{store.worker_seconds_held(tenant.id):g}",
                     _limit(tenant.max_input_bytes), described))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
