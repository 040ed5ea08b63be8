"""Where workers run: in the coordinator's process, one process each (``multiprocessing``),
or one Ray actor each (``pip install 'symex[ray]'``).

A pool carries :class:`~symex.parallel.worker.StepOrder` to worker ``i`` and brings back its
:class:`~symex.parallel.worker.WorkerReport`; nothing else crosses. A worker that dies comes
back as :class:`WorkerLost` (the coordinator re-issues its jobs and may ask for a
replacement); one that fails on its own (it could not start, or raised) comes back as
:class:`WorkerFailure`, which ends the run with that message.
"""

from __future__ import annotations

import collections
import gc
import multiprocessing
import multiprocessing.connection
import signal
import traceback
from collections.abc import Sequence
from typing import Any, Protocol

import attrs

from symex.description import RunDescription
from symex.ir.lower import lower_module
from symex.ir.program import Program
from symex.parallel.worker import StepOrder, Worker, WorkerReport

__all__ = ["InProcessPool", "ProcessPool", "ProgramSource", "RayPool", "WorkerFailure",
           "WorkerLost", "WorkerPool"]

#: seconds a closing pool waits for a worker process to exit before it is killed
CLOSE_GRACE = 2.0


@attrs.frozen
class WorkerLost:
    """Worker ``worker`` died (killed, out of memory, its machine lost)."""

    worker: int
    why: str


@attrs.frozen
class WorkerFailure:
    """Worker ``worker`` failed: it could not start, or a step raised (``message`` says)."""

    worker: int
    message: str


Arrival = WorkerReport | WorkerLost | WorkerFailure


@attrs.frozen
class ProgramSource:
    """A program as it travels to a process that does not share memory with this one: its
    linked IR text, lowered again there (the same text gives the same program)."""

    ir_text: str
    path: str

    @classmethod
    def of(cls, program: Program) -> ProgramSource:
        """The source of ``program``."""
        return cls(program.ir_text, program.path)

    def load(self) -> Program:
        """The program, lowered in this process."""
        return lower_module(self.ir_text, self.path)


class WorkerPool(Protocol):
    """Workers ``0 .. size - 1``, wherever they run (module docstring)."""

    size: int
    kind: str
    """In words, for the progress line and statistics: "in-process", "processes", "ray"."""

    def send(self, worker: int, order: StepOrder) -> None:
        """Give ``worker`` its next order (it has none in progress)."""
        ...

    def receive(self, timeout: float) -> list[Arrival]:
        """What has arrived, waiting at most ``timeout`` seconds for something."""
        ...

    def replace(self, worker: int) -> bool:
        """Start a new worker in place of a lost one; False when the pool cannot."""
        ...

    def close(self) -> None:
        """Stop every worker."""
        ...


class InProcessPool:
    """Workers in this process, run one step at a time (for tests and debugging: the same
    orders and reports as elsewhere, with no parallelism)."""

    kind = "in-process"

    def __init__(self, size: int, program: Program, settings: RunDescription) -> None:
        self.size = size
        self.workers = [Worker(i, program, settings) for i in range(size)]
        self.orders: collections.deque[tuple[int, StepOrder]] = collections.deque()

    def send(self, worker: int, order: StepOrder) -> None:
        """Queue the order; it runs when :meth:`receive` is called."""
        self.orders.append((worker, order))

    def receive(self, timeout: float) -> list[Arrival]:
        """Run the oldest queued order."""
        if not self.orders:
            return []
        worker, order = self.orders.popleft()
        return [self.workers[worker].step(order)]

    def replace(self, worker: int) -> bool:
        """In-process workers are never lost."""
        return False

    def close(self) -> None:
        """Release the workers' solvers."""
        for worker in self.workers:
            worker.close()


def serve(index: int, program: Program | ProgramSource, settings: RunDescription,
          connection: multiprocessing.connection.Connection,
          inherited: Sequence[multiprocessing.connection.Connection] = ()) -> None:
    """A worker process's life: build the worker, then answer orders until told to stop
    (``None``) or the coordinator is gone. ``inherited``: the coordinator's ends of the
    pipes (its own and the other workers'), which a forked process holds too and closes at
    once: while any process holds them, a worker would never see its coordinator die."""
    for other in inherited:
        other.close()
    # Ctrl-C reaches the whole process group; the coordinator alone decides what it means
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        worker = Worker(index, program.load() if isinstance(program, ProgramSource) else program,
                        settings)
    except Exception as exc:  # noqa: BLE001 - whatever it is, the coordinator must hear it
        connection.send(WorkerFailure(index, f"{type(exc).__name__}: {exc}"))
        return
    try:
        while True:
            try:
                order = connection.recv()
            except EOFError:
                return
            if order is None:
                return
            try:
                report: Arrival = worker.step(order)
            except Exception:  # noqa: BLE001
                report = WorkerFailure(index, traceback.format_exc())
            connection.send(report)
            if isinstance(report, WorkerFailure):
                return
    finally:
        worker.close()


class ProcessPool:
    """One process per worker, on this machine (the default for ``workers > 1``). Processes
    are forked where the platform can (the program is shared, not sent), else spawned with
    the program's IR text."""

    kind = "processes"

    def __init__(self, size: int, program: Program, settings: RunDescription) -> None:
        self.size = size
        methods = multiprocessing.get_all_start_methods()
        self.context: Any = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        self.program: Program | ProgramSource = (
            program if self.context.get_start_method() == "fork" else ProgramSource.of(program))
        self.settings = settings
        self.processes: list[Any] = [None] * size
        self.connections: list[Any] = [None] * size
        self.busy: set[int] = set()
        self.lost: list[Arrival] = []
        for index in range(size):
            self._start(index)

    def _start(self, index: int) -> None:
        mine, theirs = self.context.Pipe()
        forked = self.context.get_start_method() == "fork"
        # a forked child holds the coordinator's ends of every pipe, its own included
        inherited = tuple(c for i, c in enumerate(self.connections)
                          if c is not None and i != index) + (mine,) if forked else ()
        process = self.context.Process(target=serve, name=f"symex-worker-{index}",
                                       args=(index, self.program, self.settings, theirs,
                                             inherited),
                                       daemon=True)
        # a forked worker's collector would walk (and so copy page by page) every object it
        # inherits: frozen, they stay shared
        gc.freeze()
        try:
            process.start()
        finally:
            gc.unfreeze()
        theirs.close()
        self.processes[index] = process
        self.connections[index] = mine

    @property
    def pids(self) -> list[int]:
        """The worker processes' ids, by worker."""
        return [p.pid for p in self.processes]

    def send(self, worker: int, order: StepOrder) -> None:
        """Send the order down the worker's pipe."""
        try:
            self.connections[worker].send(order)
        except (BrokenPipeError, ConnectionResetError, EOFError):
            self.lost.append(self._lost(worker))
            return
        self.busy.add(worker)

    def _lost(self, worker: int) -> WorkerLost:
        process = self.processes[worker]
        process.join(0.5)
        code = process.exitcode
        why = (f"killed by signal {-code}" if code is not None and code < 0
               else f"exited with status {code}" if code is not None else "stopped answering")
        self.busy.discard(worker)
        return WorkerLost(worker, why)

    def receive(self, timeout: float) -> list[Arrival]:
        """Reports of the workers that have answered (and the lost ones)."""
        out, self.lost = self.lost, []
        if out:
            return out
        waiting: dict[Any, int] = {self.connections[w]: w for w in self.busy}
        if not waiting:
            return out
        ready: list[Any] = multiprocessing.connection.wait(list(waiting), timeout)
        for connection in ready:
            worker = waiting[connection]
            try:
                arrival: Arrival = connection.recv()
            except (EOFError, ConnectionResetError, OSError):
                out.append(self._lost(worker))
                continue
            self.busy.discard(worker)
            out.append(arrival)
        return out

    def replace(self, worker: int) -> bool:
        """Start a fresh process for ``worker``."""
        old = self.processes[worker]
        if old.is_alive():
            old.kill()
        old.join(CLOSE_GRACE)
        self.connections[worker].close()
        self._start(worker)
        return True

    def close(self) -> None:
        """Tell every worker to stop; kill those that do not."""
        for connection in self.connections:
            try:
                connection.send(None)
            except (BrokenPipeError, ConnectionResetError, EOFError, OSError):
                pass
        for process in self.processes:
            process.join(CLOSE_GRACE)
            if process.is_alive():
                process.kill()
                process.join(CLOSE_GRACE)
        for connection in self.connections:
            connection.close()


#: seconds to wait for a cluster's address to answer
CONNECT_TIMEOUT = 5.0


def check_reachable(address: str) -> None:
    """ConfigError unless something listens at ``address`` (``HOST:PORT`` or
    ``ray://HOST:PORT``)."""
    import socket
    from symex.errors import ConfigError
    hostport = address.split("://", 1)[-1]
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        raise ConfigError(f"cluster address {address!r} is not HOST:PORT or ray://HOST:PORT "
                          f"(or 'auto' for a local Ray instance)")
    try:
        socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT).close()
    except OSError as exc:
        raise ConfigError(f"cannot reach the Ray cluster at {address!r} ({exc.strerror or exc}); "
                          f"start it with 'ray start --head' or give its address") from None


class RayWorker:
    """A :class:`Worker` inside a Ray actor (the program arrives as its IR text, through
    Ray's object store)."""

    def __init__(self, index: int, program: ProgramSource, settings: RunDescription) -> None:
        self.worker = Worker(index, program.load(), settings)

    def step(self, order: StepOrder) -> WorkerReport:
        """One step of the worker."""
        return self.worker.step(order)


class RayPool:
    """One Ray actor per worker: on a local Ray instance (``address`` ``"auto"``: started
    here, stopped at the end) or on an existing cluster (``"HOST:PORT"`` or
    ``"ray://HOST:10001"``). A dead actor (killed, its node lost) is replaced by a new one."""

    kind = "ray"

    def __init__(self, size: int, program: Program, settings: RunDescription,
                 address: str) -> None:
        from symex.errors import ConfigError
        try:
            import ray
        except ImportError:
            raise ConfigError("Ray is not installed; install it with: pip install 'symex[ray]'") \
                from None
        self.ray = ray
        self.size = size
        self.started_ray = False
        if not ray.is_initialized():
            import os
            if address != "auto":
                # Ray waits a minute and more for an unreachable cluster, and may abort
                # the process: a plain connection attempt says it at once
                check_reachable(address)
            try:
                if address == "auto":
                    ray.init(num_cpus=max(os.cpu_count() or 1, size), include_dashboard=False,
                             log_to_driver=False, configure_logging=False)
                else:
                    ray.init(address=address, log_to_driver=False, configure_logging=False)
            except Exception as exc:  # noqa: BLE001 - Ray raises several kinds for this
                raise ConfigError(f"cannot connect to the Ray cluster at {address!r}: "
                                  f"{' '.join(str(exc).split())[:300]}") from None
            self.started_ray = True
        cpus = ray.cluster_resources().get("CPU", 0)
        if cpus < size:
            self.close()
            raise ConfigError(f"the Ray cluster has {cpus:g} CPUs, fewer than the {size} "
                              f"workers asked for; ask for at most {int(cpus)} workers")
        self.source = ray.put(ProgramSource.of(program))
        self.settings = settings
        self.actor_class = ray.remote(num_cpus=1)(RayWorker)
        self.actors = [self._start(i) for i in range(size)]
        self.in_flight: dict[Any, int] = {}

    def _start(self, index: int) -> Any:
        return self.actor_class.remote(index, self.source, self.settings)

    def send(self, worker: int, order: StepOrder) -> None:
        """Call the actor's step."""
        self.in_flight[self.actors[worker].step.remote(order)] = worker

    def receive(self, timeout: float) -> list[Arrival]:
        """The steps that have returned."""
        if not self.in_flight:
            return []
        ray = self.ray
        ready, _ = ray.wait(list(self.in_flight), num_returns=1, timeout=timeout)
        if ready:
            more, _ = ray.wait([r for r in self.in_flight if r not in ready],
                               num_returns=len(self.in_flight) - len(ready), timeout=0)
            ready += more
        out: list[Arrival] = []
        for ref in ready:
            worker = self.in_flight.pop(ref)
            try:
                out.append(ray.get(ref))
            except ray.exceptions.RayActorError as exc:
                out.append(WorkerLost(worker, f"its Ray actor died: "
                                              f"{' '.join(str(exc).split())[:200]}"))
            except ray.exceptions.RayTaskError as exc:
                out.append(WorkerFailure(worker, str(exc)))
        return out

    def replace(self, worker: int) -> bool:
        """A new actor in place of a dead one."""
        self.ray.kill(self.actors[worker], no_restart=True)
        self.actors[worker] = self._start(worker)
        return True

    def close(self) -> None:
        """Kill the actors; stop Ray if this pool started it."""
        for actor in getattr(self, "actors", []):
            try:
                self.ray.kill(actor, no_restart=True)
            except Exception:  # noqa: BLE001 - an actor already gone
                pass
        if self.started_ray:
            self.ray.shutdown()
