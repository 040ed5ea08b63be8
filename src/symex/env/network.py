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

from typing import Any

import attrs

from symex.core.threads import scheduling
from symex.core.interpreter.machine import ExternalHandler, StateView
from symex.core.memory.objects import ObjectKind
from symex.env.endpoints import (
    AF_INET,
    AF_UNIX,
    EADDRINUSE,
    EAFNOSUPPORT,
    EAGAIN,
    ECONNREFUSED,
    EFD_SEMAPHORE,
    EINVAL,
    EISCONN,
    ENOTCONN,
    EOPNOTSUPP,
    EPROTONOSUPPORT,
    EXTERNAL_ADDRESS,
    INT,
    O_NONBLOCK,
    SO_TYPE,
    SOCK_CLOEXEC,
    SOCK_DGRAM,
    SOCK_NONBLOCK,
    SOCK_STREAM,
    SOL_SOCKET,
    Endpoint,
    EndpointKind,
    autobind,
    free_port,
    is_null,
    key,
    new_descriptor,
    new_endpoint,
    open_endpoints,
    put,
    read_address,
    socket_of,
    write_address,
)
from symex.env.network_io import fcntl, on_endpoints, poll, recvfrom, select, sendto, unsupported, waiting_read
from symex.env.posix import concrete_int, returning
from symex.env.world import PosixWorld, world_of

__all__ = ["handlers"]

# -- creating -------------------------------------------------------------------------------

def _socket(view: StateView, args: list[Any]) -> int:
    state = view.state
    world = world_of(state)
    family = concrete_int(view, args[0], 32, "socket family")
    kind = concrete_int(view, args[1], 32, "socket type")
    if family not in (AF_INET, AF_UNIX):
        return -EAFNOSUPPORT
    base = kind & ~(SOCK_NONBLOCK | SOCK_CLOEXEC)
    if base not in (SOCK_STREAM, SOCK_DGRAM):
        return -EPROTONOSUPPORT
    endpoint = Endpoint(EndpointKind.SOCKET if base == SOCK_STREAM else EndpointKind.DATAGRAM,
                        family)
    world, eid = new_endpoint(world, endpoint)
    world, fd = new_descriptor(world, eid, nonblocking=bool(kind & SOCK_NONBLOCK))
    state.posix = world
    return fd


def _socketpair(view: StateView, args: list[Any]) -> int:
    state = view.state
    world = world_of(state)
    family = concrete_int(view, args[0], 32, "socketpair family")
    kind = concrete_int(view, args[1], 32, "socketpair type")
    if family != AF_UNIX:
        return -EOPNOTSUPP
    base = kind & ~(SOCK_NONBLOCK | SOCK_CLOEXEC)
    if base not in (SOCK_STREAM, SOCK_DGRAM):
        return -EPROTONOSUPPORT
    first, second = world.next_endpoint, world.next_endpoint + 1
    stream = EndpointKind.STREAM if base == SOCK_STREAM else EndpointKind.DATAGRAM
    world, _ = new_endpoint(world, Endpoint(stream, AF_UNIX, ("unix", b""), peer=second,
                                             peer_address=("unix", b"")))
    world, _ = new_endpoint(world, Endpoint(stream, AF_UNIX, ("unix", b""), peer=first,
                                             peer_address=("unix", b"")))
    return _two_descriptors(view, world, first, second, args[3], bool(kind & SOCK_NONBLOCK),
                            both_ways=True)


def _pipe(view: StateView, args: list[Any]) -> int:
    state = view.state
    world = world_of(state)
    flags = concrete_int(view, args[1], 32, "pipe flags") if len(args) > 1 else 0
    reader = world.next_endpoint
    world, _ = new_endpoint(world, Endpoint(EndpointKind.PIPE_READ))
    world, writer = new_endpoint(world, Endpoint(EndpointKind.PIPE_WRITE, peer=reader))
    return _two_descriptors(view, world, reader, writer, args[0], bool(flags & O_NONBLOCK),
                            both_ways=False)


def _eventfd(view: StateView, args: list[Any]) -> int:
    state = view.state
    world = world_of(state)
    value = concrete_int(view, args[0], 32, "eventfd value", signed=False)
    flags = concrete_int(view, args[1], 32, "eventfd flags")
    if flags & ~(EFD_SEMAPHORE | O_NONBLOCK | SOCK_CLOEXEC):
        return -EINVAL
    world, eid = new_endpoint(world, Endpoint(EndpointKind.EVENTFD, counter=value,
                                               semaphore=bool(flags & EFD_SEMAPHORE)))
    world, fd = new_descriptor(world, eid, nonblocking=bool(flags & O_NONBLOCK))
    if fd >= 0:
        state.posix = world
    return fd






def _two_descriptors(view: StateView, world: PosixWorld, first: int, second: int,
                     out: Any, nonblocking: bool, both_ways: bool) -> int:
    state = view.state
    world, fd0 = new_descriptor(world, first, writable=both_ways, nonblocking=nonblocking)
    if fd0 < 0:
        return fd0
    world, fd1 = new_descriptor(world, second, readable=both_ways, nonblocking=nonblocking)
    if fd1 < 0:
        return fd1
    view.write_bytes(out, fd0.to_bytes(4, "little") + fd1.to_bytes(4, "little"))
    state.posix = world
    return 0


# -- addresses and connections --------------------------------------------------------------

def _bind(view: StateView, args: list[Any]) -> int:
    state = view.state
    world, _, _, eid = socket_of(view, args[0])
    if eid < 0:
        return eid
    address = read_address(view, args[1], args[2])
    if type(address) is int:
        return address
    endpoint = world.endpoints[eid]
    if endpoint.address is not None:
        return -EINVAL
    if address[0] == "inet" and address[1] == 0:
        address = ("inet", free_port(world), address[2])
    holder = world.bound.get(key(address))
    if holder is not None and holder in open_endpoints(state, world):
        return -EADDRINUSE
    world = attrs.evolve(world, bound=world.bound.set(key(address), eid))
    state.posix = put(world, eid, attrs.evolve(endpoint, address=address))
    return 0


def _listen(view: StateView, args: list[Any]) -> int:
    state = view.state
    world, _, _, eid = socket_of(view, args[0])
    if eid < 0:
        return eid
    endpoint = world.endpoints[eid]
    if endpoint.kind is EndpointKind.LISTENING:
        return 0
    if endpoint.kind is not EndpointKind.SOCKET:
        return -EOPNOTSUPP if endpoint.kind is EndpointKind.DATAGRAM else -EINVAL
    world, _ = autobind(world, eid)
    state.posix = put(world, eid, attrs.evolve(world.endpoints[eid], kind=EndpointKind.LISTENING))
    return 0


def _connect(view: StateView, args: list[Any]) -> int:
    state = view.state
    world, _, _, eid = socket_of(view, args[0])
    if eid < 0:
        return eid
    address = read_address(view, args[1], args[2])
    if type(address) is int:
        return address
    endpoint = world.endpoints[eid]
    if endpoint.kind is EndpointKind.DATAGRAM:
        world, _ = autobind(world, eid)
        state.posix = put(world, eid, attrs.evolve(world.endpoints[eid], peer_address=address))
        return 0
    if endpoint.kind is not EndpointKind.SOCKET:
        return -EISCONN if endpoint.kind is EndpointKind.STREAM else -EINVAL
    listener = world.bound.get(key(address))
    if (listener is None or world.endpoints[listener].kind is not EndpointKind.LISTENING
            or listener not in open_endpoints(state, world)):
        return -ECONNREFUSED
    world, local = autobind(world, eid)
    server = world.next_endpoint
    listening = world.endpoints[listener]
    world, _ = new_endpoint(world, Endpoint(EndpointKind.STREAM, listening.family,
                                             listening.address, peer=eid, peer_address=local))
    world = put(world, listener, attrs.evolve(listening, backlog=listening.backlog + (server,)))
    # the connection is complete once it is in the listener's backlog, as on Linux
    state.posix = put(world, eid, attrs.evolve(world.endpoints[eid], kind=EndpointKind.STREAM,
                                                peer=server, peer_address=address))
    return 0


def _accept(view: StateView, args: list[Any]) -> int:
    ex, state = view.machine, view.state
    world, fd, opened, eid = socket_of(view, args[0])
    if eid < 0:
        return eid
    assert opened is not None
    flags = concrete_int(view, args[3], 32, "accept4 flags") if len(args) > 3 else 0
    listening = world.endpoints[eid]
    if listening.kind is not EndpointKind.LISTENING:
        return -EINVAL
    if listening.backlog:
        server = listening.backlog[0]
        world = put(world, eid, attrs.evolve(listening, backlog=listening.backlog[1:]))
    elif world.packets is not None:
        world, server = _external_connection(view, world, listening)
    elif opened.nonblocking:
        return -EAGAIN
    else:
        threads = scheduling.threads_of(ex, state)
        scheduling.block(ex, state, waiting_read(threads.thread.pid, fd), for_input=True)
        return 0
    world, new = new_descriptor(world, server, nonblocking=bool(flags & SOCK_NONBLOCK))
    if new < 0:
        return new
    state.posix = world
    write_address(view, world.endpoints[server].peer_address, args[1], args[2])
    return new


def _external_connection(view: StateView, world: PosixWorld,
                         listening: Endpoint) -> tuple[PosixWorld, int]:
    """The connection of the outside client of ``--sym-packets``: its packets, as symbolic
    objects made now, wait in the new endpoint's inbox; the client has closed its end."""
    state = view.state
    assert world.packets is not None
    count, size = world.packets
    segments = []
    for k in range(count):
        os_ = state.allocate(size, ObjectKind.ARGUMENT, f"packet-{k}")
        view.make_symbolic(os_.obj.address, size, f"packet-{k}")
        segments.append(tuple(state.objects[os_.obj.segment].read_bytes(0, size)))
    endpoint = Endpoint(EndpointKind.STREAM, listening.family, listening.address, peer=-1,
                        peer_address=EXTERNAL_ADDRESS, inbox=tuple(segments))
    world = attrs.evolve(world, packets=None)
    return new_endpoint(world, endpoint)


def _shutdown(view: StateView, args: list[Any]) -> int:
    state = view.state
    world, _, _, eid = socket_of(view, args[0])
    if eid < 0:
        return eid
    how = concrete_int(view, args[1], 32, "shutdown how")
    endpoint = world.endpoints[eid]
    if how not in (0, 1, 2):
        return -EINVAL
    if endpoint.kind is not EndpointKind.STREAM:
        return -ENOTCONN
    state.posix = put(world, eid, attrs.evolve(endpoint, read_shut=endpoint.read_shut or how != 1,
                                                write_shut=endpoint.write_shut or how != 0))
    return 0


def _getsockname(peer: bool) -> ExternalHandler:
    def handler(view: StateView, args: list[Any]) -> int:
        world, _, _, eid = socket_of(view, args[0])
        if eid < 0:
            return eid
        endpoint = world.endpoints[eid]
        if peer and endpoint.kind is not EndpointKind.STREAM and endpoint.peer_address is None:
            return -ENOTCONN
        write_address(view, endpoint.peer_address if peer else endpoint.address, args[1], args[2])
        return 0
    return handler


def _setsockopt(view: StateView, args: list[Any]) -> int:
    _, _, _, eid = socket_of(view, args[0])
    return min(eid, 0)  # options are accepted and change nothing in the model


def _getsockopt(view: StateView, args: list[Any]) -> int:
    world, _, _, eid = socket_of(view, args[0])
    if eid < 0:
        return eid
    level = concrete_int(view, args[1], 32, "getsockopt level")
    name = concrete_int(view, args[2], 32, "getsockopt option")
    value = 0
    if level == SOL_SOCKET and name == SO_TYPE:
        value = SOCK_DGRAM if world.endpoints[eid].kind is EndpointKind.DATAGRAM else SOCK_STREAM
    if not is_null(args[3]) and not is_null(args[4]):
        view.write(args[3], INT, value)
        view.write(args[4], INT, 4)
    return 0



def handlers(file_calls: dict[str, ExternalHandler]) -> dict[str, ExternalHandler]:
    """The socket, pipe, select and poll calls, by the names ``runtime/libc/socket.c`` calls
    them, and ``file_calls``' read/write/lseek/fstat extended to pipes and sockets."""
    longs = {"__symex_recvfrom": recvfrom, "__symex_sendto": sendto}
    ints = {"__symex_socket": _socket, "__symex_socketpair": _socketpair, "__symex_pipe": _pipe,
            "__symex_eventfd": _eventfd,
            "__symex_bind": _bind, "__symex_listen": _listen, "__symex_connect": _connect,
            "__symex_accept": _accept, "__symex_shutdown": _shutdown,
            "__symex_getsockname": _getsockname(False), "__symex_getpeername": _getsockname(True),
            "__symex_setsockopt": _setsockopt, "__symex_getsockopt": _getsockopt,
            "__symex_fcntl": fcntl, "__symex_poll": poll, "__symex_select": select}
    table: dict[str, ExternalHandler] = {"__symex_unsupported": unsupported}
    for name, handler in ints.items():
        table[name] = returning(32, handler)
    for name, handler in longs.items():
        table[name] = returning(64, handler)
    for call in ("read", "write", "lseek", "fstat"):
        table[f"__symex_{call}"] = on_endpoints(file_calls[f"__symex_{call}"], call)
    table["__symex_close"] = _closing(file_calls["__symex_close"])
    return table


def _closing(close_call: ExternalHandler) -> ExternalHandler:
    """``__symex_close`` (``close_call``) noting when the program has closed its last
    descriptor of the ``--sym-packets`` client's connection: that client sent everything
    and closed first, and nobody else can connect in the closed universe, so the path's
    session is over (``PosixWorld.session_over``). As in Cloud9's memcached runs, such a
    path ends with the connection closed (the next time every thread waits), instead of
    running the server's timers until it counts as idle."""
    def handler(view: StateView, args: list[Any]) -> int:
        state = view.state
        world = world_of(state)
        fd = concrete_int(view, args[0], 32, "close descriptor")
        opened = world.opened(fd)
        result = close_call(view, args)
        if result == 0 and opened is not None and opened.endpoint:
            world = world_of(state)
            endpoint = world.endpoints[opened.endpoint]
            if endpoint.peer == -1 and opened.endpoint not in open_endpoints(state, world):
                state.posix = attrs.evolve(world, session_over=(
                    "connection closed: the program closed the connection of the outside "
                    "client (--sym-packets), which had sent all its packets"))
        return result
    return handler

