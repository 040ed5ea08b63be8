"""Pipes and sockets on the model's own loopback network, ``select`` and ``poll``, and
symbolic network input (Cloud9's POSIX model); the host network is never touched.

Every pipe end and socket is an :class:`Endpoint` in the state's ``PosixWorld.endpoints``
(persistent, so forked states share them), reached through an open file description whose
``endpoint`` field names it; descriptors, ``dup`` and ``fork`` share descriptions as for
files. Data is kept as the bytes the program wrote (ints or 8-bit expressions), so symbolic
data crosses a socket without being concretized.

- A pipe is two endpoints: what is written to the write end lands in the read end's inbox.
  A connected stream socket (``connect``/``accept``, ``socketpair``) is two endpoints, each
  the other's peer. Streams keep each ``send`` as one segment, for fragmentation; a read may
  return several segments' bytes, as a kernel's would.
- An endpoint is *open* while a descriptor of a live process names it: reading an empty
  stream whose peer is closed (or shut down for writing) gives end of file, writing to one
  gives EPIPE (no signals are modelled, so there is no SIGPIPE).
- Buffers are unbounded, so writes never block. Reads, ``accept``, ``select`` and ``poll``
  block (core.scheduling) until they can go on, unless the descriptor is non-blocking
  (``O_NONBLOCK``, ``SOCK_NONBLOCK``, ``MSG_DONTWAIT``): then EAGAIN.
- Addresses: AF_INET by port (any IPv4 address reaches the model's one host), AF_UNIX by
  path; port 0 binds the next free port from 32768. Datagram sockets keep message
  boundaries and the sender's address.
- An eventfd is one endpoint holding a 64-bit counter: a write of 8 bytes adds to it, a
  read of 8 takes it all (or 1, with ``EFD_SEMAPHORE``) and blocks while it is 0; readable
  while it is not 0 (memcached wakes its worker threads through one).
- ``--sym-packets N SIZE``: the first ``accept`` that finds no connection waiting gets one
  from a client outside the program, which sends N packets of SIZE symbolic bytes (objects
  ``packet-0``... made when the connection is accepted) and closes; what the program sends
  it is dropped.
- ``--sym-fragments K``: up to K times per path, a ``recv`` on a stream whose next segment
  holds more than one byte forks: one state reads as usual, and one per shorter length of
  that segment (1 to its length - 1) reads only that much of it.

The handlers are named ``__symex_*`` and return ``-errno``; ``runtime/libc/socket.c`` wraps
them as the C functions.
"""

from __future__ import annotations

import enum
from typing import Any

import attrs
import immutables

from symex.core import scheduling
from symex.core.machine import ExternalHandler, Machine
from symex.core.forks import ForkKind
from symex.core.outcome import PathStatus, PathTerminated
from symex.core.state import State
from symex.env.klee import make_symbolic
from symex.env.posix import (MAX_FDS, OpenFile, PosixWorld, S_IFIFO, STAT_SIZE, concrete_int,
                              lowest_free_fd, returning, world_of)
from symex.core.memory import ObjectKind
from symex.ir.program import Access, Instruction, ValueKind

__all__ = ["Endpoint", "EndpointKind", "handlers"]

EBADF, EAGAIN, EFAULT, EINVAL, EMFILE, EPIPE = 9, 11, 14, 22, 24, 32
ENOTSOCK, EDESTADDRREQ, EPROTONOSUPPORT, EOPNOTSUPP, EAFNOSUPPORT = 88, 89, 93, 95, 97
EADDRINUSE, EISCONN, ENOTCONN, ECONNREFUSED = 98, 106, 107, 111
AF_UNIX, AF_INET = 1, 2
SOCK_STREAM, SOCK_DGRAM = 1, 2
SOCK_NONBLOCK, SOCK_CLOEXEC = 0o4000, 0o2000000
O_NONBLOCK = 0o4000
MSG_PEEK, MSG_DONTWAIT = 2, 0x40
F_GETFD, F_SETFD, F_GETFL, F_SETFL = 1, 2, 3, 4
SOL_SOCKET, SO_TYPE = 1, 3
POLLIN, POLLOUT, POLLERR, POLLHUP, POLLNVAL = 1, 4, 8, 0x10, 0x20
S_IFSOCK = 0o140000
FIRST_EPHEMERAL_PORT = 32768
#: the address the outside client of --sym-packets connects from (10.0.0.2:40000)
EXTERNAL_ADDRESS = ("inet", 40000, 0x0A000002)

_INT = Access(ValueKind.INT, 4, 32)
_WORD = Access(ValueKind.INT, 8, 64)
EFD_SEMAPHORE = 1
#: the most an eventfd counter holds (a write that would pass it blocks)
EVENTFD_MAX = (1 << 64) - 2


class EndpointKind(enum.Enum):
    """What an endpoint is."""

    PIPE_READ = "pipe read end"
    PIPE_WRITE = "pipe write end"
    SOCKET = "unconnected stream socket"
    LISTENING = "listening socket"
    STREAM = "connected stream socket"
    DATAGRAM = "datagram socket"
    EVENTFD = "event counter (eventfd)"


@attrs.frozen
class Endpoint:
    """A pipe end or a socket (change by replacing)."""

    kind: EndpointKind
    family: int = 0
    address: Any = None
    """Where it is bound: ("inet", port, host) or ("unix", path); None: not bound."""
    peer: int = 0
    """The endpoint that receives what this one sends (0: none; -1: the outside client)."""
    peer_address: Any = None
    inbox: tuple[Any, ...] = ()
    """Streams and pipes: segments (tuples of bytes) in arrival order; datagram sockets:
    (sender's address, bytes) messages."""
    backlog: tuple[int, ...] = ()
    """A listening socket's connections not yet accepted (their server-side endpoints)."""
    read_shut: bool = False
    write_shut: bool = False
    """``shutdown``: the peer reads end of file once its inbox is empty."""
    counter: int = 0
    """An eventfd's value."""
    semaphore: bool = False
    """An eventfd made with ``EFD_SEMAPHORE``: a read takes 1."""


# -- the world's endpoints ------------------------------------------------------------------

def _open_endpoints(state: State, world: PosixWorld) -> set[int]:
    """Endpoints some live process holds a descriptor of, and connections waiting to be
    accepted on those."""
    threads = state.threads
    tables = [world.fds] if threads is None else threads.descriptor_tables(state)
    descriptions = world.descriptions
    found = set()
    for table in tables:
        for key in table.values():
            endpoint = descriptions[key].endpoint
            if endpoint:
                found.add(endpoint)
    # a connection waiting in an open listener's backlog is open: it will be accepted
    for eid in list(found):
        found.update(world.endpoints[eid].backlog)
    return found


def _put(world: PosixWorld, eid: int, endpoint: Endpoint) -> PosixWorld:
    return attrs.evolve(world, endpoints=world.endpoints.set(eid, endpoint))


def _new_endpoint(world: PosixWorld, endpoint: Endpoint) -> tuple[PosixWorld, int]:
    eid = world.next_endpoint
    return attrs.evolve(world, endpoints=world.endpoints.set(eid, endpoint),
                        next_endpoint=eid + 1), eid


def _new_descriptor(world: PosixWorld, eid: int, *, readable: bool = True, writable: bool = True,
                    nonblocking: bool = False) -> tuple[PosixWorld, int]:
    fd = lowest_free_fd(world)
    if fd >= MAX_FDS:
        return world, -EMFILE
    key = world.next_description
    opened = OpenFile(0, 0, readable, writable, endpoint=eid, nonblocking=nonblocking)
    return attrs.evolve(world, fds=world.fds.set(fd, key),
                        descriptions=world.descriptions.set(key, opened),
                        next_description=key + 1), fd


def _is_null(pointer: Any) -> bool:
    return type(pointer) is int and pointer == 0


_NOT_SOCKETS = frozenset({EndpointKind.PIPE_READ, EndpointKind.PIPE_WRITE, EndpointKind.EVENTFD})


def _socket_of(ex: Machine, state: State, fd_value: Any) -> tuple[PosixWorld, int, OpenFile | None, int]:
    """(world, fd, description, endpoint id or -errno) of a descriptor that must be a socket."""
    world = world_of(state)
    fd = concrete_int(ex, state, fd_value, 32, "socket descriptor")
    opened = world.opened(fd)
    if opened is None:
        return world, fd, None, -EBADF
    if not opened.endpoint or world.endpoints[opened.endpoint].kind in _NOT_SOCKETS:
        return world, fd, opened, -ENOTSOCK
    return world, fd, opened, opened.endpoint


# -- addresses ------------------------------------------------------------------------------

def _read_address(ex: Machine, state: State, pointer: Any, length: Any) -> Any:
    """The address key of a ``struct sockaddr`` in memory, or -errno."""
    if _is_null(pointer):
        return -EFAULT
    size = concrete_int(ex, state, length, 32, "address length")
    if size < 2:
        return -EINVAL
    data = [b if type(b) is int else ex.concretize(state, b, 8, "socket address byte")
            for b in ex.read_bytes(state, pointer, min(size, 110))]
    family = data[0] | data[1] << 8
    if family == AF_INET:
        if size < 8:
            return -EINVAL
        return ("inet", data[2] << 8 | data[3], int.from_bytes(bytes(data[4:8]), "big"))
    if family == AF_UNIX:
        path = bytes(data[2:])
        if path[:1] != b"\0":
            path = path.split(b"\0", 1)[0]
        return ("unix", path)
    return -EAFNOSUPPORT


def _write_address(ex: Machine, state: State, address: Any, pointer: Any, length_pointer: Any) -> None:
    """Fill a ``struct sockaddr`` and its length (if the program asked for them)."""
    if _is_null(pointer) or _is_null(length_pointer):
        return
    if address is None or address == ("unix", b""):
        image = AF_UNIX.to_bytes(2, "little")  # unnamed: the family alone, as Linux
    elif address[0] == "inet":
        image = (AF_INET.to_bytes(2, "little") + address[1].to_bytes(2, "big")
                 + (address[2] or 0x7F000001).to_bytes(4, "big") + bytes(8))
    else:
        image = AF_UNIX.to_bytes(2, "little") + address[1] + (b"\0" if address[1][:1] != b"\0" else b"")
    room = concrete_int(ex, state, ex.read(state, length_pointer, _INT), 32, "address length")
    if room > 0:
        ex.write_bytes(state, pointer, image[:room])
    ex.write(state, length_pointer, _INT, len(image))


def _key(address: Any) -> Any:
    """What identifies a bound address: the port for AF_INET (every IPv4 address is the one
    host), the path for AF_UNIX."""
    return address[:2]


def _free_port(world: PosixWorld) -> int:
    port = FIRST_EPHEMERAL_PORT
    while ("inet", port) in world.bound:
        port += 1
    return port


def _autobind(world: PosixWorld, eid: int) -> tuple[PosixWorld, Any]:
    endpoint = world.endpoints[eid]
    if endpoint.address is not None:
        return world, endpoint.address
    if endpoint.family == AF_INET:
        address: Any = ("inet", _free_port(world), 0x7F000001)
        world = attrs.evolve(world, bound=world.bound.set(_key(address), eid))
    else:
        address = ("unix", b"")
    return _put(world, eid, attrs.evolve(endpoint, address=address)), address


# -- creating -------------------------------------------------------------------------------

def _socket(ex: Machine, state: State, args: list[Any], ins: Instruction) -> int:
    world = world_of(state)
    family = concrete_int(ex, state, args[0], 32, "socket family")
    kind = concrete_int(ex, state, args[1], 32, "socket type")
    if family not in (AF_INET, AF_UNIX):
        return -EAFNOSUPPORT
    base = kind & ~(SOCK_NONBLOCK | SOCK_CLOEXEC)
    if base not in (SOCK_STREAM, SOCK_DGRAM):
        return -EPROTONOSUPPORT
    endpoint = Endpoint(EndpointKind.SOCKET if base == SOCK_STREAM else EndpointKind.DATAGRAM,
                        family)
    world, eid = _new_endpoint(world, endpoint)
    world, fd = _new_descriptor(world, eid, nonblocking=bool(kind & SOCK_NONBLOCK))
    state.posix = world
    return fd


def _socketpair(ex: Machine, state: State, args: list[Any], ins: Instruction) -> int:
    world = world_of(state)
    family = concrete_int(ex, state, args[0], 32, "socketpair family")
    kind = concrete_int(ex, state, args[1], 32, "socketpair type")
    if family != AF_UNIX:
        return -EOPNOTSUPP
    base = kind & ~(SOCK_NONBLOCK | SOCK_CLOEXEC)
    if base not in (SOCK_STREAM, SOCK_DGRAM):
        return -EPROTONOSUPPORT
    first, second = world.next_endpoint, world.next_endpoint + 1
    stream = EndpointKind.STREAM if base == SOCK_STREAM else EndpointKind.DATAGRAM
    world, _ = _new_endpoint(world, Endpoint(stream, AF_UNIX, ("unix", b""), peer=second,
                                             peer_address=("unix", b"")))
    world, _ = _new_endpoint(world, Endpoint(stream, AF_UNIX, ("unix", b""), peer=first,
                                             peer_address=("unix", b"")))
    return _two_descriptors(ex, state, world, first, second, args[3], bool(kind & SOCK_NONBLOCK),
                            both_ways=True)


def _pipe(ex: Machine, state: State, args: list[Any], ins: Instruction) -> int:
    world = world_of(state)
    flags = concrete_int(ex, state, args[1], 32, "pipe flags") if len(args) > 1 else 0
    reader = world.next_endpoint
    world, _ = _new_endpoint(world, Endpoint(EndpointKind.PIPE_READ))
    world, writer = _new_endpoint(world, Endpoint(EndpointKind.PIPE_WRITE, peer=reader))
    return _two_descriptors(ex, state, world, reader, writer, args[0], bool(flags & O_NONBLOCK),
                            both_ways=False)


def _eventfd(ex: Machine, state: State, args: list[Any], ins: Instruction) -> int:
    world = world_of(state)
    value = concrete_int(ex, state, args[0], 32, "eventfd value", signed=False)
    flags = concrete_int(ex, state, args[1], 32, "eventfd flags")
    if flags & ~(EFD_SEMAPHORE | O_NONBLOCK | SOCK_CLOEXEC):
        return -EINVAL
    world, eid = _new_endpoint(world, Endpoint(EndpointKind.EVENTFD, counter=value,
                                               semaphore=bool(flags & EFD_SEMAPHORE)))
    world, fd = _new_descriptor(world, eid, nonblocking=bool(flags & O_NONBLOCK))
    if fd >= 0:
        state.posix = world
    return fd


def _eventfd_read(ex: Machine, state: State, fd: int, opened: OpenFile, buffer: Any, count: int) -> int:
    world = world_of(state)
    endpoint = world.endpoints[opened.endpoint]
    if count < 8:
        return -EINVAL
    if endpoint.counter == 0:
        if opened.nonblocking:
            return -EAGAIN
        scheduling.block(ex, state, _waiting_read(scheduling.threads_of(ex, state).thread.pid, fd),
                         for_input=True)
        return 0
    taken = 1 if endpoint.semaphore else endpoint.counter
    state.posix = _put(world, opened.endpoint, attrs.evolve(endpoint, counter=endpoint.counter - taken))
    ex.write_bytes(state, buffer, taken.to_bytes(8, "little"))
    return 8


def _eventfd_write(ex: Machine, state: State, opened: OpenFile, buffer: Any, count: int) -> int:
    world = world_of(state)
    eid = opened.endpoint
    if count < 8:
        return -EINVAL
    value = concrete_int(ex, state, ex.read(state, buffer, _WORD), 64, "eventfd value", signed=False)
    if value > EVENTFD_MAX:
        return -EINVAL
    if world.endpoints[eid].counter + value > EVENTFD_MAX:
        if opened.nonblocking:
            return -EAGAIN

        def room(s: State) -> bool:
            w = s.posix
            return w is None or eid not in w.endpoints or w.endpoints[eid].counter + value <= EVENTFD_MAX
        scheduling.block(ex, state, room, for_input=True)
        return 0
    endpoint = world.endpoints[eid]
    state.posix = _put(world, eid, attrs.evolve(endpoint, counter=endpoint.counter + value))
    return 8


def _two_descriptors(ex: Machine, state: State, world: PosixWorld, first: int, second: int,
                     out: Any, nonblocking: bool, both_ways: bool) -> int:
    world, fd0 = _new_descriptor(world, first, writable=both_ways, nonblocking=nonblocking)
    if fd0 < 0:
        return fd0
    world, fd1 = _new_descriptor(world, second, readable=both_ways, nonblocking=nonblocking)
    if fd1 < 0:
        return fd1
    ex.write_bytes(state, out, fd0.to_bytes(4, "little") + fd1.to_bytes(4, "little"))
    state.posix = world
    return 0


# -- addresses and connections --------------------------------------------------------------

def _bind(ex: Machine, state: State, args: list[Any], ins: Instruction) -> int:
    world, _, _, eid = _socket_of(ex, state, args[0])
    if eid < 0:
        return eid
    address = _read_address(ex, state, args[1], args[2])
    if type(address) is int:
        return address
    endpoint = world.endpoints[eid]
    if endpoint.address is not None:
        return -EINVAL
    if address[0] == "inet" and address[1] == 0:
        address = ("inet", _free_port(world), address[2])
    holder = world.bound.get(_key(address))
    if holder is not None and holder in _open_endpoints(state, world):
        return -EADDRINUSE
    world = attrs.evolve(world, bound=world.bound.set(_key(address), eid))
    state.posix = _put(world, eid, attrs.evolve(endpoint, address=address))
    return 0


def _listen(ex: Machine, state: State, args: list[Any], ins: Instruction) -> int:
    world, _, _, eid = _socket_of(ex, state, args[0])
    if eid < 0:
        return eid
    endpoint = world.endpoints[eid]
    if endpoint.kind is EndpointKind.LISTENING:
        return 0
    if endpoint.kind is not EndpointKind.SOCKET:
        return -EOPNOTSUPP if endpoint.kind is EndpointKind.DATAGRAM else -EINVAL
    world, _ = _autobind(world, eid)
    state.posix = _put(world, eid, attrs.evolve(world.endpoints[eid], kind=EndpointKind.LISTENING))
    return 0


def _connect(ex: Machine, state: State, args: list[Any], ins: Instruction) -> int:
    world, _, _, eid = _socket_of(ex, state, args[0])
    if eid < 0:
        return eid
    address = _read_address(ex, state, args[1], args[2])
    if type(address) is int:
        return address
    endpoint = world.endpoints[eid]
    if endpoint.kind is EndpointKind.DATAGRAM:
        world, _ = _autobind(world, eid)
        state.posix = _put(world, eid, attrs.evolve(world.endpoints[eid], peer_address=address))
        return 0
    if endpoint.kind is not EndpointKind.SOCKET:
        return -EISCONN if endpoint.kind is EndpointKind.STREAM else -EINVAL
    listener = world.bound.get(_key(address))
    if (listener is None or world.endpoints[listener].kind is not EndpointKind.LISTENING
            or listener not in _open_endpoints(state, world)):
        return -ECONNREFUSED
    world, local = _autobind(world, eid)
    server = world.next_endpoint
    listening = world.endpoints[listener]
    world, _ = _new_endpoint(world, Endpoint(EndpointKind.STREAM, listening.family,
                                             listening.address, peer=eid, peer_address=local))
    world = _put(world, listener, attrs.evolve(listening, backlog=listening.backlog + (server,)))
    # the connection is complete once it is in the listener's backlog, as on Linux
    state.posix = _put(world, eid, attrs.evolve(world.endpoints[eid], kind=EndpointKind.STREAM,
                                                peer=server, peer_address=address))
    return 0


def _accept(ex: Machine, state: State, args: list[Any], ins: Instruction) -> int:
    world, fd, opened, eid = _socket_of(ex, state, args[0])
    if eid < 0:
        return eid
    assert opened is not None
    flags = concrete_int(ex, state, args[3], 32, "accept4 flags") if len(args) > 3 else 0
    listening = world.endpoints[eid]
    if listening.kind is not EndpointKind.LISTENING:
        return -EINVAL
    if listening.backlog:
        server = listening.backlog[0]
        world = _put(world, eid, attrs.evolve(listening, backlog=listening.backlog[1:]))
    elif world.packets is not None:
        world, server = _external_connection(ex, state, world, listening)
    elif opened.nonblocking:
        return -EAGAIN
    else:
        threads = scheduling.threads_of(ex, state)
        scheduling.block(ex, state, _waiting_read(threads.thread.pid, fd), for_input=True)
        return 0
    world, new = _new_descriptor(world, server, nonblocking=bool(flags & SOCK_NONBLOCK))
    if new < 0:
        return new
    state.posix = world
    _write_address(ex, state, world.endpoints[server].peer_address, args[1], args[2])
    return new


def _external_connection(ex: Machine, state: State, world: PosixWorld,
                         listening: Endpoint) -> tuple[PosixWorld, int]:
    """The connection of the outside client of ``--sym-packets``: its packets, as symbolic
    objects made now, wait in the new endpoint's inbox; the client has closed its end."""
    assert world.packets is not None
    count, size = world.packets
    segments = []
    for k in range(count):
        os_ = state.allocate(size, ObjectKind.ARGUMENT, f"packet-{k}")
        make_symbolic(ex, state, os_.obj.address, size, f"packet-{k}")
        segments.append(tuple(state.objects[os_.obj.segment].read_bytes(0, size)))
    endpoint = Endpoint(EndpointKind.STREAM, listening.family, listening.address, peer=-1,
                        peer_address=EXTERNAL_ADDRESS, inbox=tuple(segments))
    world = attrs.evolve(world, packets=None)
    return _new_endpoint(world, endpoint)


def _shutdown(ex: Machine, state: State, args: list[Any], ins: Instruction) -> int:
    world, _, _, eid = _socket_of(ex, state, args[0])
    if eid < 0:
        return eid
    how = concrete_int(ex, state, args[1], 32, "shutdown how")
    endpoint = world.endpoints[eid]
    if how not in (0, 1, 2):
        return -EINVAL
    if endpoint.kind is not EndpointKind.STREAM:
        return -ENOTCONN
    state.posix = _put(world, eid, attrs.evolve(endpoint, read_shut=endpoint.read_shut or how != 1,
                                                write_shut=endpoint.write_shut or how != 0))
    return 0


def _getsockname(peer: bool) -> ExternalHandler:
    def handler(ex: Machine, state: State, args: list[Any], ins: Instruction) -> int:
        world, _, _, eid = _socket_of(ex, state, args[0])
        if eid < 0:
            return eid
        endpoint = world.endpoints[eid]
        if peer and endpoint.kind is not EndpointKind.STREAM and endpoint.peer_address is None:
            return -ENOTCONN
        _write_address(ex, state, endpoint.peer_address if peer else endpoint.address, args[1], args[2])
        return 0
    return handler


def _setsockopt(ex: Machine, state: State, args: list[Any], ins: Instruction) -> int:
    _, _, _, eid = _socket_of(ex, state, args[0])
    return min(eid, 0)  # options are accepted and change nothing in the model


def _getsockopt(ex: Machine, state: State, args: list[Any], ins: Instruction) -> int:
    world, _, _, eid = _socket_of(ex, state, args[0])
    if eid < 0:
        return eid
    level = concrete_int(ex, state, args[1], 32, "getsockopt level")
    name = concrete_int(ex, state, args[2], 32, "getsockopt option")
    value = 0
    if level == SOL_SOCKET and name == SO_TYPE:
        value = SOCK_DGRAM if world.endpoints[eid].kind is EndpointKind.DATAGRAM else SOCK_STREAM
    if not _is_null(args[3]) and not _is_null(args[4]):
        ex.write(state, args[3], _INT, value)
        ex.write(state, args[4], _INT, 4)
    return 0


# -- data -----------------------------------------------------------------------------------

def _eof(state: State, world: PosixWorld, eid: int) -> bool:
    """Whether stream or pipe ``eid`` with an empty inbox reads end of file."""
    endpoint = world.endpoints[eid]
    if endpoint.read_shut:
        return True
    if endpoint.kind is EndpointKind.PIPE_READ:
        writers = {other for other, e in world.endpoints.items()
                   if e.kind is EndpointKind.PIPE_WRITE and e.peer == eid}
        return not writers & _open_endpoints(state, world)
    if endpoint.peer == -1:
        return True  # the outside client sent everything and closed
    peer = world.endpoints.get(endpoint.peer)
    return peer is None or peer.write_shut or endpoint.peer not in _open_endpoints(state, world)


def _ready_in(state: State, world: PosixWorld, fd: int, events: int, pid: int | None = None) -> int:
    """The poll ``revents`` of ``fd`` (of process ``pid``, default the running one)."""
    table = world.fds
    threads = state.threads
    if pid is not None and threads is not None and threads.thread.pid != pid:
        process = threads.processes[pid]
        table = process.fds if process.fds is not None else immutables.Map()
    key = table.get(fd)
    if key is None:
        return POLLNVAL
    opened = world.descriptions[key]
    if not opened.endpoint:
        return events & (POLLIN | POLLOUT)
    endpoint = world.endpoints[opened.endpoint]
    revents = 0
    kind = endpoint.kind
    if kind is EndpointKind.LISTENING:
        if endpoint.backlog or world.packets is not None:
            revents |= POLLIN
    elif kind is EndpointKind.DATAGRAM:
        if endpoint.inbox:
            revents |= POLLIN
        revents |= POLLOUT
    elif kind is EndpointKind.EVENTFD:
        if endpoint.counter:
            revents |= POLLIN
        if endpoint.counter < EVENTFD_MAX:
            revents |= POLLOUT
    elif kind is EndpointKind.PIPE_WRITE:
        reader_open = endpoint.peer in _open_endpoints(state, world)
        revents |= POLLOUT if reader_open else POLLERR
    elif kind in (EndpointKind.PIPE_READ, EndpointKind.STREAM):
        if endpoint.inbox:
            revents |= POLLIN
        elif _eof(state, world, opened.endpoint):
            revents |= POLLIN | POLLHUP
        if kind is EndpointKind.STREAM:
            revents |= POLLOUT
    return revents & (events | POLLERR | POLLHUP | POLLNVAL)


def _waiting_read(pid: int, fd: int) -> scheduling.WaitCondition:
    def ready(state: State) -> bool:
        world = state.posix
        return world is None or _ready_in(state, world, fd, POLLIN, pid) != 0
    return ready


def _receive(ex: Machine, state: State, ins: Instruction, fd: int, buffer: Any, count: int,
             flags: int, source: Any = 0, source_length: Any = 0) -> int:
    """read/recv/recvfrom on an endpoint descriptor."""
    world = world_of(state)
    opened = world.opened(fd)
    assert opened is not None
    eid = opened.endpoint
    endpoint = world.endpoints[eid]
    kind = endpoint.kind
    if kind is EndpointKind.EVENTFD:
        return _eventfd_read(ex, state, fd, opened, buffer, count)
    if kind in (EndpointKind.PIPE_WRITE, EndpointKind.LISTENING):
        return -EBADF if kind is EndpointKind.PIPE_WRITE else -ENOTCONN
    if kind is EndpointKind.SOCKET:
        return -ENOTCONN
    if not endpoint.inbox:
        if kind is not EndpointKind.DATAGRAM and _eof(state, world, eid):
            return 0
        if opened.nonblocking or flags & MSG_DONTWAIT:
            return -EAGAIN
        threads = scheduling.threads_of(ex, state)
        scheduling.block(ex, state, _waiting_read(threads.thread.pid, fd), for_input=True)
        return 0
    if kind is EndpointKind.DATAGRAM:
        sender, message = endpoint.inbox[0]
        data = list(message[:count])
        if not flags & MSG_PEEK:
            world = _put(world, eid, attrs.evolve(endpoint, inbox=endpoint.inbox[1:]))
        if data:
            ex.write_bytes(state, buffer, data)
        state.posix = world
        if sender == ("unix", b""):
            # an unnamed AF_UNIX sender has no address at all: Linux gives length 0
            if not _is_null(source) and not _is_null(source_length):
                ex.write(state, source_length, _INT, 0)
        else:
            _write_address(ex, state, sender, source, source_length)
        return len(data)
    first = endpoint.inbox[0]
    if world.fragments > 0 and len(first) > 1 and count > 1 and not flags & MSG_PEEK:
        # Cloud9's symbolic fragmentation: this state reads as it would anyway, and one state
        # per shorter length of the first segment reads only that much of it
        state.posix = world = attrs.evolve(world, fragments=world.fragments - 1)
        shorter = range(1, min(len(first), count))
        if not ex.forks_exhausted():
            states = [state] + [ex.fork(state) for _ in shorter]
            state.decide(0)
            for forked, size in zip(states[1:], shorter):
                forked.decide(size)
            ex.record_fork(ForkKind.FRAGMENT, None, states)
            for forked, size in zip(states[1:], shorter):
                got = _take_stream(ex, forked, eid, buffer, size, source, source_length)
                if ins.dest >= 0 and forked.frame is not None:
                    forked.frame.regs[ins.dest] = got
    return _take_stream(ex, state, eid, buffer, count, source, source_length,
                        peek=bool(flags & MSG_PEEK))


def _take_stream(ex: Machine, state: State, eid: int, buffer: Any, count: int, source: Any,
                 source_length: Any, *, peek: bool = False) -> int:
    """Read up to ``count`` bytes of stream ``eid``'s inbox into ``buffer`` (whole segments
    while they fit, then part of the next)."""
    world = world_of(state)
    endpoint = world.endpoints[eid]
    data: list[Any] = []
    rest = endpoint.inbox
    while rest and len(data) < count:
        room = count - len(data)
        head = rest[0]
        data += head[:room]
        rest = ((head[room:],) if room < len(head) else ()) + rest[1:]
    if not peek:
        state.posix = _put(world, eid, attrs.evolve(endpoint, inbox=rest))
    if data:
        ex.write_bytes(state, buffer, data)
    _write_address(ex, state, endpoint.peer_address, source, source_length)
    return len(data)


def _send(ex: Machine, state: State, fd: int, buffer: Any, count: int, flags: int,
          target: Any = None) -> int:
    """write/send/sendto on an endpoint descriptor."""
    world = world_of(state)
    opened = world.opened(fd)
    assert opened is not None
    eid = opened.endpoint
    endpoint = world.endpoints[eid]
    kind = endpoint.kind
    if kind is EndpointKind.EVENTFD:
        return _eventfd_write(ex, state, opened, buffer, count)
    data = tuple(ex.read_bytes(state, buffer, count)) if count else ()
    if kind is EndpointKind.DATAGRAM:
        address = target if target is not None else endpoint.peer_address
        if address is None:
            return -EDESTADDRREQ
        world, source = _autobind(world, eid)
        # a socketpair's datagrams go to the other end; others by the address they name
        receiver = (endpoint.peer if target is None and endpoint.peer > 0
                    else world.bound.get(_key(address)))
        if (receiver is not None and world.endpoints[receiver].kind is EndpointKind.DATAGRAM
                and receiver in _open_endpoints(state, world)):
            box = world.endpoints[receiver]
            world = _put(world, receiver, attrs.evolve(box, inbox=box.inbox + ((source, data),)))
        # else: dropped, as UDP drops what nobody receives
        state.posix = world
        return count
    if kind in (EndpointKind.PIPE_READ, EndpointKind.LISTENING, EndpointKind.SOCKET):
        return -EBADF if kind is EndpointKind.PIPE_READ else -ENOTCONN
    if endpoint.write_shut:
        return -EPIPE
    if endpoint.peer == -1:
        return count  # the outside client does not read
    peer = world.endpoints.get(endpoint.peer)
    if peer is None or endpoint.peer not in _open_endpoints(state, world) or peer.read_shut:
        return -EPIPE
    if data:
        world = _put(world, endpoint.peer, attrs.evolve(peer, inbox=peer.inbox + (data,)))
    state.posix = world
    return count


def _recvfrom(ex: Machine, state: State, args: list[Any], ins: Instruction) -> int:
    world, fd, opened, eid = _socket_of(ex, state, args[0])
    if eid < 0:
        return eid
    count = concrete_int(ex, state, args[2], 64, "recv length") & ((1 << 63) - 1)
    flags = concrete_int(ex, state, args[3], 32, "recv flags")
    return _receive(ex, state, ins, fd, args[1], count, flags, *args[4:6])


def _sendto(ex: Machine, state: State, args: list[Any], ins: Instruction) -> int:
    world, fd, _, eid = _socket_of(ex, state, args[0])
    if eid < 0:
        return eid
    count = concrete_int(ex, state, args[2], 64, "send length") & ((1 << 63) - 1)
    flags = concrete_int(ex, state, args[3], 32, "send flags")
    target = None
    if len(args) > 4 and not _is_null(args[4]):
        target = _read_address(ex, state, args[4], args[5])
        if type(target) is int:
            return target
    return _send(ex, state, fd, args[1], count, flags, target)


# -- descriptors shared with files ----------------------------------------------------------

def _on_endpoints(file_call: ExternalHandler, name: str) -> ExternalHandler:
    """``__symex_read``/``__symex_write``/``__symex_lseek``/``__symex_fstat`` for files
    (``file_call``) and endpoints."""
    def handler(ex: Machine, state: State, args: list[Any], ins: Instruction) -> int:
        world = world_of(state)
        fd = concrete_int(ex, state, args[0], 32, f"{name} descriptor")
        opened = world.opened(fd)
        if opened is None or not opened.endpoint:
            return file_call(ex, state, args, ins)
        mask = (1 << 64) - 1
        if name == "read":
            count = concrete_int(ex, state, args[2], 64, "read count") & ((1 << 63) - 1)
            return _receive(ex, state, ins, fd, args[1], count, 0) & mask
        if name == "write":
            count = concrete_int(ex, state, args[2], 64, "write count") & ((1 << 63) - 1)
            return _send(ex, state, fd, args[1], count, 0) & mask
        if name == "lseek":
            return -29 & mask  # ESPIPE
        # fstat: a FIFO or a socket
        endpoint = world.endpoints[opened.endpoint]
        # an eventfd is an anonymous inode: no file type bits
        mode = (S_IFIFO if endpoint.kind in (EndpointKind.PIPE_READ, EndpointKind.PIPE_WRITE)
                else 0 if endpoint.kind is EndpointKind.EVENTFD else S_IFSOCK) | 0o600
        image = bytearray(STAT_SIZE)
        image[24:28] = mode.to_bytes(4, "little")
        image[16:24] = (1).to_bytes(8, "little")
        ex.write_bytes(state, args[1], bytes(image))
        return 0
    return handler


def _fcntl(ex: Machine, state: State, args: list[Any], ins: Instruction) -> int:
    world = world_of(state)
    fd = concrete_int(ex, state, args[0], 32, "fcntl descriptor")
    command = concrete_int(ex, state, args[1], 32, "fcntl command")
    key = world.fds.get(fd)
    if key is None:
        return -EBADF
    opened = world.descriptions[key]
    if command in (F_GETFD, F_SETFD):
        return 0
    if command == F_GETFL:
        access = 2 if opened.readable and opened.writable else (1 if opened.writable else 0)
        return access | (O_NONBLOCK if opened.nonblocking else 0)
    if command == F_SETFL:
        value = concrete_int(ex, state, args[2], 32, "fcntl flags")
        state.posix = attrs.evolve(world, descriptions=world.descriptions.set(
            key, attrs.evolve(opened, nonblocking=bool(value & O_NONBLOCK))))
        return 0
    if command in (0, 1030):  # F_DUPFD, F_DUPFD_CLOEXEC
        new = lowest_free_fd(world, concrete_int(ex, state, args[2], 32, "fcntl descriptor"))
        if new >= MAX_FDS:
            return -EMFILE
        state.posix = attrs.evolve(world, fds=world.fds.set(new, key))
        return new
    raise PathTerminated(PathStatus.PARTIAL, f"unsupported: fcntl command {command}")


# -- select and poll ------------------------------------------------------------------------

def _poll(ex: Machine, state: State, args: list[Any], ins: Instruction) -> int:
    world = world_of(state)
    count = concrete_int(ex, state, args[1], 64, "poll count")
    timeout = concrete_int(ex, state, args[2], 32, "poll timeout")
    if count < 0 or count > MAX_FDS:
        return -EINVAL
    thread = scheduling.current_thread(state)
    entries = []
    for k in range(count):
        raw = [b if type(b) is int else ex.concretize(state, b, 8, "pollfd")
               for b in ex.read_bytes(state, _offset(args[0], 8 * k), 8)]
        fd = int.from_bytes(bytes(raw[:4]), "little", signed=True)
        events = raw[4] | raw[5] << 8
        entries.append((fd, events))
    timed_out = thread is not None and thread.timed_out
    if thread is not None:
        thread.timed_out = False
    ready = 0
    results = []
    for fd, events in entries:
        revents = 0 if fd < 0 else _ready_in(state, world, fd, events)
        results.append(revents)
        ready += revents != 0
    if ready or timeout == 0 or timed_out:
        for k, revents in enumerate(results):
            ex.write_bytes(state, _offset(args[0], 8 * k + 6), revents.to_bytes(2, "little"))
        return ready
    pid = scheduling.threads_of(ex, state).thread.pid

    def any_ready(s: State) -> bool:
        w = s.posix
        return w is None or any(fd >= 0 and _ready_in(s, w, fd, events, pid) for fd, events in entries)
    scheduling.block(ex, state, any_ready, timed=timeout > 0, for_input=True)
    return 0


def _offset(pointer: Any, offset: int) -> Any:
    if type(pointer) is int:
        return pointer + offset
    from symex import expr as E
    return E.add(pointer, E.const(offset, 64))


def _select(ex: Machine, state: State, args: list[Any], ins: Instruction) -> int:
    world = world_of(state)
    nfds = concrete_int(ex, state, args[0], 32, "select nfds")
    if nfds < 0 or nfds > MAX_FDS:
        return -EINVAL
    # the kernel reads and writes only the words that hold descriptors below nfds: libevent
    # allocates its sets that size, not a whole fd_set
    size = (nfds + 63) // 64 * 8
    sets: list[set[int] | None] = []
    for pointer in args[1:4]:
        if _is_null(pointer):
            sets.append(None)
            continue
        raw = [b if type(b) is int else ex.concretize(state, b, 8, "fd_set")
               for b in ex.read_bytes(state, pointer, size)] if size else []
        sets.append({fd for fd in range(nfds) if raw[fd // 8] >> (fd % 8) & 1})
    timeout = args[4]
    zero_timeout = False
    if not _is_null(timeout):
        raw = ex.read_bytes(state, timeout, 16)
        zero_timeout = all(type(b) is int and b == 0 for b in raw)
    thread = scheduling.current_thread(state)
    timed_out = thread is not None and thread.timed_out
    if thread is not None:
        thread.timed_out = False
    wanted = [(s, event) for s, event in zip(sets[:2], (POLLIN, POLLOUT))]
    for chosen, _ in wanted:
        for fd in chosen or ():
            if _ready_in(state, world, fd, 0) & POLLNVAL:
                return -EBADF
    found = [{fd for fd in chosen if _ready_in(state, world, fd, event)} if chosen is not None else None
             for chosen, event in wanted] + [set() if sets[2] is not None else None]
    total = sum(len(f) for f in found if f is not None)
    if total or zero_timeout or timed_out:
        for pointer, result in zip(args[1:4], found):
            if result is None:
                continue
            image = bytearray(size)
            for fd in result:
                image[fd // 8] |= 1 << (fd % 8)
            if size:
                ex.write_bytes(state, pointer, bytes(image))
        return total
    pid = scheduling.threads_of(ex, state).thread.pid

    def any_ready(s: State) -> bool:
        w = s.posix
        if w is None:
            return True
        return any(_ready_in(s, w, fd, event, pid) for chosen, event in wanted for fd in chosen or ())
    scheduling.block(ex, state, any_ready, timed=not _is_null(timeout), for_input=True)
    return 0


def _unsupported(ex: Machine, state: State, args: list[Any], ins: Instruction) -> int:
    """``__symex_unsupported(what)``: the C library met a use the model does not cover."""
    what = ex.read_c_string(state, args[0]).decode("utf-8", "replace")
    raise PathTerminated(PathStatus.PARTIAL, f"unsupported: {what}")


def handlers(file_calls: dict[str, ExternalHandler]) -> dict[str, ExternalHandler]:
    """The socket, pipe, select and poll calls, by the names ``runtime/libc/socket.c`` calls
    them, and ``file_calls``' read/write/lseek/fstat extended to pipes and sockets."""
    longs = {"__symex_recvfrom": _recvfrom, "__symex_sendto": _sendto}
    ints = {"__symex_socket": _socket, "__symex_socketpair": _socketpair, "__symex_pipe": _pipe,
            "__symex_eventfd": _eventfd,
            "__symex_bind": _bind, "__symex_listen": _listen, "__symex_connect": _connect,
            "__symex_accept": _accept, "__symex_shutdown": _shutdown,
            "__symex_getsockname": _getsockname(False), "__symex_getpeername": _getsockname(True),
            "__symex_setsockopt": _setsockopt, "__symex_getsockopt": _getsockopt,
            "__symex_fcntl": _fcntl, "__symex_poll": _poll, "__symex_select": _select}
    table: dict[str, ExternalHandler] = {"__symex_unsupported": _unsupported}
    for name, handler in ints.items():
        table[name] = returning(32, handler)
    for name, handler in longs.items():
        table[name] = returning(64, handler)
    for call in ("read", "write", "lseek", "fstat"):
        table[f"__symex_{call}"] = _on_endpoints(file_calls[f"__symex_{call}"], call)
    table["__symex_close"] = _closing(file_calls["__symex_close"])
    return table


def _closing(close_call: ExternalHandler) -> ExternalHandler:
    """``__symex_close`` (``close_call``) noting when the program has closed its last
    descriptor of the ``--sym-packets`` client's connection: that client sent everything
    and closed first, and nobody else can connect in the closed universe, so the path's
    session is over (``PosixWorld.session_over``). As in Cloud9's memcached runs, such a
    path ends with the connection closed (the next time every thread waits), instead of
    running the server's timers until it counts as idle."""
    def handler(ex: Machine, state: State, args: list[Any], ins: Instruction) -> int:
        world = world_of(state)
        fd = concrete_int(ex, state, args[0], 32, "close descriptor")
        opened = world.opened(fd)
        result = close_call(ex, state, args, ins)
        if result == 0 and opened is not None and opened.endpoint:
            world = world_of(state)
            endpoint = world.endpoints[opened.endpoint]
            if endpoint.peer == -1 and opened.endpoint not in _open_endpoints(state, world):
                state.posix = attrs.evolve(world, session_over=(
                    "connection closed: the program closed the connection of the outside "
                    "client (--sym-packets), which had sent all its packets"))
        return result
    return handler
