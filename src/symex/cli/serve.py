"""``symex serve``: the testing service's HTTP API and page, with uvicorn."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from symex.errors import SymexError, error_text

__all__ = ["add_parser", "main"]


def add_parser(commands: Any) -> None:
    """Declare ``symex serve``."""
    parser = commands.add_parser("serve", help="run the testing service (HTTP API)",
                                 description="Serve the testing service's HTTP API: jobs are "
                                 "queued in the database and run as 'symex run' processes.")
    parser.add_argument("--db", default="symex.db", metavar="FILE",
                        help="the service's database (default symex.db)")
    parser.add_argument("--storage", metavar="DIR",
                        help="where uploads and results go (default: DB's name + '-files')")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=int, default=8080,
                        help="port to listen on (default 8080; 0: any free port)")
    parser.add_argument("--max-running", type=int, default=2, metavar="N",
                        help="jobs that run at once (default 2)")
    parser.add_argument("--max-workers", type=int, metavar="N",
                        help="workers all running jobs may hold together (default: no limit; "
                        "a job asking for more runs alone)")
    parser.add_argument("--job-memory", type=int, metavar="MB",
                        help="memory the processes of one job may hold together (default: "
                        "three quarters of this machine's, shared by --max-running jobs); a "
                        "job's run stops forking near its share of it, and a job over it is "
                        "stopped")
    parser.add_argument("--cluster", metavar="ADDRESS",
                        help="run the workers of jobs that ask for more than one on this Ray "
                        "cluster ('auto', HOST:PORT or ray://HOST:PORT; pip install "
                        "'symex[ray]'); default: local processes")


def _announcing_server(config: Any, where: str) -> Any:
    """A uvicorn server that says where it listens once it does."""
    import uvicorn

    class Server(uvicorn.Server):
        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets)
            if self.started:
                for server in self.servers:
                    for sock in server.sockets:
                        host, port = sock.getsockname()[:2]
                        shown = f"[{host}]" if ":" in host else host
                        print(f"symex serve: serving on http://{shown}:{port} ({where}); "
                              f"Ctrl-C stops", flush=True)

    return Server(config)


def main(options: argparse.Namespace) -> int:
    """Serve until interrupted."""
    try:
        import uvicorn

        from symex.service.app import create_app
        from symex.service.scheduler import Scheduler
        from symex.service.store import ServiceStore
    except ImportError as exc:
        print(f"symex serve: {exc.name} is not installed; install the service with: "
              f"pip install 'symex[service]'", file=sys.stderr)
        return 2
    if options.max_running < 1 or not 0 <= options.port < 65536 or \
            (options.max_workers is not None and options.max_workers < 1) or \
            (options.job_memory is not None and options.job_memory < 256):
        print("symex serve: --max-running and --max-workers must be at least 1, --job-memory "
              "at least 256 (MB), and --port 0 to 65535", file=sys.stderr)
        return 2
    if options.cluster is not None and options.cluster != "auto":
        from symex.parallel.pools import check_reachable
        try:
            check_reachable(options.cluster)
        except SymexError as exc:
            sys.stderr.write(error_text("symex serve", exc))
            return 2
    try:
        store = ServiceStore(options.db)
    except SymexError as exc:
        sys.stderr.write(error_text("symex serve", exc))
        return 2
    storage = Path(options.storage or f"{options.db}-files").resolve()
    storage.mkdir(parents=True, exist_ok=True)
    scheduler = Scheduler(store, storage, options.max_running, options.cluster,
                          options.max_workers, options.job_memory)
    problem = scheduler.isolation.problem
    if problem is not None:
        print(f"symex serve: warning: no sandbox can be made here ({problem}): C uploads are "
              f"refused (compiling reads files by name) and no crash is replayed natively; "
              f"LLVM IR uploads still run", file=sys.stderr, flush=True)
    app = create_app(store, storage, scheduler)
    server = _announcing_server(uvicorn.Config(app, host=options.host, port=options.port,
                                    log_level="warning"),
                     f"database {options.db}, files in {storage}, jobs sandboxed"
                     f"{'' if problem is None else ': NO (see the warning)'}, each in "
                     f"{scheduler.isolation.memory_mb} MB")
    server.run()
    store.close()
    return 0 if server.started else 2
