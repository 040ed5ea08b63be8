"""The model's network endpoints (pipe ends, sockets, eventfds) in a state's world, and
their addresses: what :mod:`symex.env.network` (making and connecting them) and
:mod:`symex.env.network_io` (data, select and poll) share. See :mod:`symex.env.network` for
the model."""

from __future__ import annotations

import enum
from typing import Any

import attrs

from symex.core.interpreter.machine import StateView
from symex.core.state import State
from symex.env.posix import concrete_int
from symex.env.world import MAX_FDS, OpenFile, PosixWorld, lowest_free_fd, world_of
from symex.ir.program import Access, ValueKind

__all__ = ["Endpoint", "EndpointKind"]

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

INT = Access(ValueKind.INT, 4, 32)
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

def open_endpoints(state: State, world: PosixWorld) -> set[int]:
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


def put(world: PosixWorld, eid: int, endpoint: Endpoint) -> PosixWorld:
    return attrs.evolve(world, endpoints=world.endpoints.set(eid, endpoint))


def new_endpoint(world: PosixWorld, endpoint: Endpoint) -> tuple[PosixWorld, int]:
    eid = world.next_endpoint
    return attrs.evolve(world, endpoints=world.endpoints.set(eid, endpoint),
                        next_endpoint=eid + 1), eid


def new_descriptor(world: PosixWorld, eid: int, *, readable: bool = True, writable: bool = True,
                    nonblocking: bool = False) -> tuple[PosixWorld, int]:
    fd = lowest_free_fd(world)
    if fd >= MAX_FDS:
        return world, -EMFILE
    key = world.next_description
    opened = OpenFile(0, 0, readable, writable, endpoint=eid, nonblocking=nonblocking)
    return attrs.evolve(world, fds=world.fds.set(fd, key),
                        descriptions=world.descriptions.set(key, opened),
                        next_description=key + 1), fd


def is_null(pointer: Any) -> bool:
    return type(pointer) is int and pointer == 0


_NOT_SOCKETS = frozenset({EndpointKind.PIPE_READ, EndpointKind.PIPE_WRITE, EndpointKind.EVENTFD})


def socket_of(view: StateView, fd_value: Any) -> tuple[PosixWorld, int, OpenFile | None, int]:
    """(world, fd, description, endpoint id or -errno) of a descriptor that must be a socket."""
    state = view.state
    world = world_of(state)
    fd = concrete_int(view, fd_value, 32, "socket descriptor")
    opened = world.opened(fd)
    if opened is None:
        return world, fd, None, -EBADF
    if not opened.endpoint or world.endpoints[opened.endpoint].kind in _NOT_SOCKETS:
        return world, fd, opened, -ENOTSOCK
    return world, fd, opened, opened.endpoint


# -- addresses ------------------------------------------------------------------------------

def read_address(view: StateView, pointer: Any, length: Any) -> Any:
    """The address key of a ``struct sockaddr`` in memory, or -errno."""
    if is_null(pointer):
        return -EFAULT
    size = concrete_int(view, length, 32, "address length")
    if size < 2:
        return -EINVAL
    data = [b if type(b) is int else view.concretize(b, 8, "socket address byte")
            for b in view.read_bytes(pointer, min(size, 110))]
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


def write_address(view: StateView, address: Any, pointer: Any, length_pointer: Any) -> None:
    """Fill a ``struct sockaddr`` and its length (if the program asked for them)."""
    if is_null(pointer) or is_null(length_pointer):
        return
    if address is None or address == ("unix", b""):
        image = AF_UNIX.to_bytes(2, "little")  # unnamed: the family alone, as Linux
    elif address[0] == "inet":
        image = (AF_INET.to_bytes(2, "little") + address[1].to_bytes(2, "big")
                 + (address[2] or 0x7F000001).to_bytes(4, "big") + bytes(8))
    else:
        image = AF_UNIX.to_bytes(2, "little") + address[1] + (b"\0" if address[1][:1] != b"\0" else b"")
    room = concrete_int(view, view.read(length_pointer, INT), 32, "address length")
    if room > 0:
        view.write_bytes(pointer, image[:room])
    view.write(length_pointer, INT, len(image))


def key(address: Any) -> Any:
    """What identifies a bound address: the port for AF_INET (every IPv4 address is the one
    host), the path for AF_UNIX."""
    return address[:2]


def free_port(world: PosixWorld) -> int:
    port = FIRST_EPHEMERAL_PORT
    while ("inet", port) in world.bound:
        port += 1
    return port


def autobind(world: PosixWorld, eid: int) -> tuple[PosixWorld, Any]:
    endpoint = world.endpoints[eid]
    if endpoint.address is not None:
        return world, endpoint.address
    if endpoint.family == AF_INET:
        address: Any = ("inet", free_port(world), 0x7F000001)
        world = attrs.evolve(world, bound=world.bound.set(key(address), eid))
    else:
        address = ("unix", b"")
    return put(world, eid, attrs.evolve(endpoint, address=address)), address


