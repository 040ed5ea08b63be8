"""Data through the model's pipes and sockets (``recv``/``send`` and their variants,
eventfds' counters), the file calls that work on them too (``read``, ``write``, ``fcntl``),
and ``select``/``poll``. See :mod:`symex.env.network` for the model."""

from __future__ import annotations

from typing import Any

import attrs
import immutables

from symex.core.threads import scheduling
from symex.core.forks import ForkKind
from symex.core.interpreter.machine import ExternalHandler, StateView
from symex.core.outcome import PathStatus, PathTerminated
from symex.core.state import State
from symex.env.endpoints import (
    EAGAIN,
    EBADF,
    EDESTADDRREQ,
    EINVAL,
    EMFILE,
    ENOTCONN,
    EPIPE,
    EVENTFD_MAX,
    F_GETFD,
    F_GETFL,
    F_SETFD,
    F_SETFL,
    INT,
    MSG_DONTWAIT,
    MSG_PEEK,
    O_NONBLOCK,
    POLLERR,
    POLLHUP,
    POLLIN,
    POLLNVAL,
    POLLOUT,
    S_IFSOCK,
    EndpointKind,
    autobind,
    is_null,
    key,
    open_endpoints,
    put,
    read_address,
    socket_of,
    write_address,
)
from symex.env.posix import concrete_int
from symex.env.world import MAX_FDS, S_IFIFO, STAT_SIZE, OpenFile, PosixWorld, lowest_free_fd, world_of
from symex.ir.program import WORD_ACCESS, Instruction

# -- eventfds' counters ---------------------------------------------------------------------

def _eventfd_read(view: StateView, fd: int, opened: OpenFile, buffer: Any, count: int) -> int:
    ex, state = view.machine, view.state
    world = world_of(state)
    endpoint = world.endpoints[opened.endpoint]
    if count < 8:
        return -EINVAL
    if endpoint.counter == 0:
        if opened.nonblocking:
            return -EAGAIN
        scheduling.block(ex, state, waiting_read(scheduling.threads_of(ex, state).thread.pid, fd),
                         for_input=True)
        return 0
    taken = 1 if endpoint.semaphore else endpoint.counter
    state.posix = put(world, opened.endpoint, attrs.evolve(endpoint, counter=endpoint.counter - taken))
    view.write_bytes(buffer, taken.to_bytes(8, "little"))
    return 8


def _eventfd_write(view: StateView, opened: OpenFile, buffer: Any, count: int) -> int:
    ex, state = view.machine, view.state
    world = world_of(state)
    eid = opened.endpoint
    if count < 8:
        return -EINVAL
    value = concrete_int(view, view.read(buffer, WORD_ACCESS), 64, "eventfd value", signed=False)
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
    state.posix = put(world, eid, attrs.evolve(endpoint, counter=endpoint.counter + value))
    return 8


# -- data -----------------------------------------------------------------------------------

def _eof(state: State, world: PosixWorld, eid: int) -> bool:
    """Whether stream or pipe ``eid`` with an empty inbox reads end of file."""
    endpoint = world.endpoints[eid]
    if endpoint.read_shut:
        return True
    if endpoint.kind is EndpointKind.PIPE_READ:
        writers = {other for other, e in world.endpoints.items()
                   if e.kind is EndpointKind.PIPE_WRITE and e.peer == eid}
        return not writers & open_endpoints(state, world)
    if endpoint.peer == -1:
        return True  # the outside client sent everything and closed
    peer = world.endpoints.get(endpoint.peer)
    return peer is None or peer.write_shut or endpoint.peer not in open_endpoints(state, world)


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
        reader_open = endpoint.peer in open_endpoints(state, world)
        revents |= POLLOUT if reader_open else POLLERR
    elif kind in (EndpointKind.PIPE_READ, EndpointKind.STREAM):
        if endpoint.inbox:
            revents |= POLLIN
        elif _eof(state, world, opened.endpoint):
            revents |= POLLIN | POLLHUP
        if kind is EndpointKind.STREAM:
            revents |= POLLOUT
    return revents & (events | POLLERR | POLLHUP | POLLNVAL)


def waiting_read(pid: int, fd: int) -> scheduling.WaitCondition:
    def ready(state: State) -> bool:
        world = state.posix
        return world is None or _ready_in(state, world, fd, POLLIN, pid) != 0
    return ready


def _receive(view: StateView, ins: Instruction, fd: int, buffer: Any, count: int,
             flags: int, source: Any = 0, source_length: Any = 0) -> int:
    """read/recv/recvfrom on an endpoint descriptor."""
    ex, state = view.machine, view.state
    world = world_of(state)
    opened = world.opened(fd)
    assert opened is not None
    eid = opened.endpoint
    endpoint = world.endpoints[eid]
    kind = endpoint.kind
    if kind is EndpointKind.EVENTFD:
        return _eventfd_read(view, fd, opened, buffer, count)
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
        scheduling.block(ex, state, waiting_read(threads.thread.pid, fd), for_input=True)
        return 0
    if kind is EndpointKind.DATAGRAM:
        sender, message = endpoint.inbox[0]
        data = list(message[:count])
        if not flags & MSG_PEEK:
            world = put(world, eid, attrs.evolve(endpoint, inbox=endpoint.inbox[1:]))
        if data:
            view.write_bytes(buffer, data)
        state.posix = world
        if sender == ("unix", b""):
            # an unnamed AF_UNIX sender has no address at all: Linux gives length 0
            if not is_null(source) and not is_null(source_length):
                view.write(source_length, INT, 0)
        else:
            write_address(view, sender, source, source_length)
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
                got = _take_stream(StateView(ex, forked), eid, buffer, size, source, source_length)
                if ins.dest >= 0 and forked.frame is not None:
                    forked.frame.regs[ins.dest] = got
    return _take_stream(view, eid, buffer, count, source, source_length,
                        peek=bool(flags & MSG_PEEK))


def _take_stream(view: StateView, eid: int, buffer: Any, count: int, source: Any,
                 source_length: Any, *, peek: bool = False) -> int:
    """Read up to ``count`` bytes of stream ``eid``'s inbox into ``buffer`` (whole segments
    while they fit, then part of the next)."""
    state = view.state
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
        state.posix = put(world, eid, attrs.evolve(endpoint, inbox=rest))
    if data:
        view.write_bytes(buffer, data)
    write_address(view, endpoint.peer_address, source, source_length)
    return len(data)


def _send(view: StateView, fd: int, buffer: Any, count: int, flags: int,
          target: Any = None) -> int:
    """write/send/sendto on an endpoint descriptor."""
    state = view.state
    world = world_of(state)
    opened = world.opened(fd)
    assert opened is not None
    eid = opened.endpoint
    endpoint = world.endpoints[eid]
    kind = endpoint.kind
    if kind is EndpointKind.EVENTFD:
        return _eventfd_write(view, opened, buffer, count)
    data = tuple(view.read_bytes(buffer, count)) if count else ()
    if kind is EndpointKind.DATAGRAM:
        address = target if target is not None else endpoint.peer_address
        if address is None:
            return -EDESTADDRREQ
        world, source = autobind(world, eid)
        # a socketpair's datagrams go to the other end; others by the address they name
        receiver = (endpoint.peer if target is None and endpoint.peer > 0
                    else world.bound.get(key(address)))
        if (receiver is not None and world.endpoints[receiver].kind is EndpointKind.DATAGRAM
                and receiver in open_endpoints(state, world)):
            box = world.endpoints[receiver]
            world = put(world, receiver, attrs.evolve(box, inbox=box.inbox + ((source, data),)))
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
    if peer is None or endpoint.peer not in open_endpoints(state, world) or peer.read_shut:
        return -EPIPE
    if data:
        world = put(world, endpoint.peer, attrs.evolve(peer, inbox=peer.inbox + (data,)))
    state.posix = world
    return count


def recvfrom(view: StateView, args: list[Any]) -> int:
    ins = view.instruction
    world, fd, opened, eid = socket_of(view, args[0])
    if eid < 0:
        return eid
    count = concrete_int(view, args[2], 64, "recv length") & ((1 << 63) - 1)
    flags = concrete_int(view, args[3], 32, "recv flags")
    return _receive(view, ins, fd, args[1], count, flags, *args[4:6])


def sendto(view: StateView, args: list[Any]) -> int:
    world, fd, _, eid = socket_of(view, args[0])
    if eid < 0:
        return eid
    count = concrete_int(view, args[2], 64, "send length") & ((1 << 63) - 1)
    flags = concrete_int(view, args[3], 32, "send flags")
    target = None
    if len(args) > 4 and not is_null(args[4]):
        target = read_address(view, args[4], args[5])
        if type(target) is int:
            return target
    return _send(view, fd, args[1], count, flags, target)


# -- descriptors shared with files ----------------------------------------------------------

def on_endpoints(file_call: ExternalHandler, name: str) -> ExternalHandler:
    """``__symex_read``/``__symex_write``/``__symex_lseek``/``__symex_fstat`` for files
    (``file_call``) and endpoints."""
    def handler(view: StateView, args: list[Any]) -> int:
        ins = view.instruction
        state = view.state
        world = world_of(state)
        fd = concrete_int(view, args[0], 32, f"{name} descriptor")
        opened = world.opened(fd)
        if opened is None or not opened.endpoint:
            return file_call(view, args)
        mask = (1 << 64) - 1
        if name == "read":
            count = concrete_int(view, args[2], 64, "read count") & ((1 << 63) - 1)
            return _receive(view, ins, fd, args[1], count, 0) & mask
        if name == "write":
            count = concrete_int(view, args[2], 64, "write count") & ((1 << 63) - 1)
            return _send(view, fd, args[1], count, 0) & mask
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
        view.write_bytes(args[1], bytes(image))
        return 0
    return handler


def fcntl(view: StateView, args: list[Any]) -> int:
    state = view.state
    world = world_of(state)
    fd = concrete_int(view, args[0], 32, "fcntl descriptor")
    command = concrete_int(view, args[1], 32, "fcntl command")
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
        value = concrete_int(view, args[2], 32, "fcntl flags")
        state.posix = attrs.evolve(world, descriptions=world.descriptions.set(
            key, attrs.evolve(opened, nonblocking=bool(value & O_NONBLOCK))))
        return 0
    if command in (0, 1030):  # F_DUPFD, F_DUPFD_CLOEXEC
        new = lowest_free_fd(world, concrete_int(view, args[2], 32, "fcntl descriptor"))
        if new >= MAX_FDS:
            return -EMFILE
        state.posix = attrs.evolve(world, fds=world.fds.set(new, key))
        return new
    raise PathTerminated(PathStatus.PARTIAL, f"unsupported: fcntl command {command}")


# -- select and poll ------------------------------------------------------------------------

def poll(view: StateView, args: list[Any]) -> int:
    ex, state = view.machine, view.state
    world = world_of(state)
    count = concrete_int(view, args[1], 64, "poll count")
    timeout = concrete_int(view, args[2], 32, "poll timeout")
    if count < 0 or count > MAX_FDS:
        return -EINVAL
    thread = scheduling.current_thread(state)
    entries = []
    for k in range(count):
        raw = [b if type(b) is int else view.concretize(b, 8, "pollfd")
               for b in view.read_bytes(_offset(args[0], 8 * k), 8)]
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
            view.write_bytes(_offset(args[0], 8 * k + 6), revents.to_bytes(2, "little"))
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


def select(view: StateView, args: list[Any]) -> int:
    ex, state = view.machine, view.state
    world = world_of(state)
    nfds = concrete_int(view, args[0], 32, "select nfds")
    if nfds < 0 or nfds > MAX_FDS:
        return -EINVAL
    # the kernel reads and writes only the words that hold descriptors below nfds: libevent
    # allocates its sets that size, not a whole fd_set
    size = (nfds + 63) // 64 * 8
    sets: list[set[int] | None] = []
    for pointer in args[1:4]:
        if is_null(pointer):
            sets.append(None)
            continue
        raw = [b if type(b) is int else view.concretize(b, 8, "fd_set")
               for b in view.read_bytes(pointer, size)] if size else []
        sets.append({fd for fd in range(nfds) if raw[fd // 8] >> (fd % 8) & 1})
    timeout = args[4]
    zero_timeout = False
    if not is_null(timeout):
        raw = view.read_bytes(timeout, 16)
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
                view.write_bytes(pointer, bytes(image))
        return total
    pid = scheduling.threads_of(ex, state).thread.pid

    def any_ready(s: State) -> bool:
        w = s.posix
        if w is None:
            return True
        return any(_ready_in(s, w, fd, event, pid) for chosen, event in wanted for fd in chosen or ())
    scheduling.block(ex, state, any_ready, timed=not is_null(timeout), for_input=True)
    return 0


def unsupported(view: StateView, args: list[Any]) -> int:
    """``__symex_unsupported(what)``: the C library met a use the model does not cover."""
    what = view.read_c_string(args[0]).decode("utf-8", "replace")
    raise PathTerminated(PathStatus.PARTIAL, f"unsupported: {what}")


