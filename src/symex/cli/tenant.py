"""``symex tenant add NAME --db FILE``: a new tenant of the testing service, and its token;
``symex tenant set NAME --max-jobs N --worker-seconds S``: its quotas."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from symex.cli.errors import error_text
from symex.errors import SymexError

__all__ = ["add_parser", "main"]


def add_parser(commands: Any) -> None:
    """Declare ``symex tenant``."""
    parser = commands.add_parser("tenant", help="manage the testing service's tenants",
                                 description="Add a tenant to the service's database; its API "
                                 "token is printed once (only its hash is stored).")
    parser.add_argument("action", choices=("add", "set"),
                        help="add: a new tenant (its token is printed); set: its quotas")
    parser.add_argument("name", help="the tenant's name")
    parser.add_argument("--db", default="symex.db", metavar="FILE",
                        help="the service's database (default symex.db)")
    parser.add_argument("--max-jobs", type=int, metavar="N",
                        help="jobs of the tenant that run at once (default: no limit)")
    parser.add_argument("--worker-seconds", type=float, metavar="S",
                        help="worker-seconds its jobs may use in all (default: no limit)")


def main(options: argparse.Namespace) -> int:
    """Add the tenant and print its token."""
    from symex.service.store import ServiceStore
    try:
        store = ServiceStore(options.db)
        try:
            if options.action == "set":
                store.set_quotas(options.name, options.max_jobs, options.worker_seconds)
                return 0
            token = store.add_tenant(options.name, options.max_jobs, options.worker_seconds)
        finally:
            store.close()
    except SymexError as exc:
        sys.stderr.write(error_text("symex tenant", exc))
        return 2
    print(token)
    return 0
