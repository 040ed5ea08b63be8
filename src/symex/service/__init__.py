"""symex as a testing service (Cloud9, section 2): upload a program, a goal and a budget; get
tests, coverage and crash reports.

- :mod:`symex.service.store`: tenants and jobs in one SQLite file (schema migrations, WAL);
- :mod:`symex.service.jobs`: a job's checked specification, the ``symex run`` it becomes, and
  its results (crashes by severity, tests as a zip);
- :mod:`symex.service.scheduler`: runs queued jobs as processes, collects and replays crashes;
- :mod:`symex.service.app`: the HTTP API (FastAPI; ``pip install 'symex[service]'``);
- :mod:`symex.service.client`: ``Client(url, token).submit(...)``, ``.wait()``, ``.results()``.

``symex serve`` runs it with uvicorn; ``symex tenant add NAME`` makes a token.
"""

from __future__ import annotations

from typing import Any

__all__ = ["DEFAULT_MAX_INPUT_BYTES", "Client"]

#: the symbolic bytes of data (arguments, files, stdin, packets) a new tenant's job may ask for
#: (here, not in the store, so that ``symex tenant``'s help needs no more than this package)
DEFAULT_MAX_INPUT_BYTES = 1 << 16


def __getattr__(name: str) -> Any:
    # the client needs httpx only, the server FastAPI: neither is loaded before it is used
    if name == "Client":
        from symex.service.client import Client
        return Client
    raise AttributeError(f"module 'symex.service' has no attribute {name!r}")
