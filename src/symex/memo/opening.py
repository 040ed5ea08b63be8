"""Which tree a run records into: a new one, a recorded one extended in place, or a copy.

``explore(record_tree=PATH)`` starts a new tree; ``explore(continue_with=DIR_OR_FILE)``
replays and extends the recorded one in place (as MoKlee does); both together copy the
recorded tree to ``PATH`` first and extend the copy, leaving the original untouched.

A tree belongs to one program and one inputs spec. Continuing with another inputs spec, or
another program, is refused (:class:`TreeFileError`, naming both); the same program changed
since (another IR hash, the same name) is allowed: its changed paths are found by divergence
detection and explored again, and the run says so.
"""

from __future__ import annotations

import datetime
import hashlib
import os
from pathlib import Path
from collections.abc import Sequence

import attrs

from symex.errors import ConfigError, SymexError
from symex.ir.compile import compiler_of
from symex.core.memory.models import DEFAULT_MEMORY_MODEL
from symex.memo.format import TREE_FILE
from symex.memo.recorder import TreeRecorder
from symex.memo.store import TreeFileError, TreeStore

__all__ = ["TreeIdentity", "describe_inputs", "find_tree", "open_recorder",
           "open_store"]


@attrs.frozen
class TreeIdentity:
    """What a tree was recorded for."""

    program: str
    """The program's file name (without its directory)."""
    ir_hash: str
    """SHA-256 of the program's LLVM IR text."""
    inputs: str
    """The inputs spec: entry function, arguments (KLEE's syntax), stdin, host files."""
    compiler: str = ""
    """What compiled the IR, as its ``!llvm.ident`` says (``clang version 22.1.8``); "" when
    it does not say."""

    @classmethod
    def of(cls, program_path: str, ir_text: str, inputs: str) -> TreeIdentity:
        """The identity of a program (by its path and IR) run on ``inputs``."""
        return cls(os.path.basename(program_path),
                   hashlib.sha256(ir_text.encode("utf-8", "surrogateescape")).hexdigest(), inputs,
                   compiler_of(ir_text))


def describe_inputs(entry: str, arguments: Sequence[str], stdin: bytes,
                    host_files: Sequence[tuple[str, bytes]], environment: Sequence[str] = (),
                    max_input: int | None = None, memory_model: str = DEFAULT_MEMORY_MODEL) -> str:
    """The inputs spec of a run, as people read it (and as trees compare it); ``max_input``:
    a fuzz target's longest input; ``memory_model``: named unless the default (trees
    recorded before there was a choice used it)."""
    parts = [f"entry {entry}", "arguments: " + (" ".join(arguments) if arguments else "none")]
    if memory_model != DEFAULT_MEMORY_MODEL:
        parts.append(f"memory model {memory_model}")
    if max_input is not None:
        parts.append(f"fuzz target input: at most {max_input} bytes")
    if environment:
        parts.append("environment: " + " ".join(environment))
    if stdin:
        parts.append(f"stdin: {len(stdin)} bytes (sha256 {hashlib.sha256(stdin).hexdigest()[:16]})")
    for path, data in host_files:
        parts.append(f"host file {path}: sha256 {hashlib.sha256(data).hexdigest()[:16]}")
    return "; ".join(parts)


def find_run_file(path: str | os.PathLike[str], name: str, written_by: str,
                  error: type[SymexError]) -> Path:
    """The file ``name`` of an output directory, or ``path`` itself when it is a file;
    ``error`` (saying the run ``written_by`` makes one) when there is none."""
    where = Path(path)
    if where.is_dir():
        found = where / name
        if not found.is_file():
            raise error(f"{os.fspath(where)} holds no {name}; continue with an output "
                        f"directory of '{written_by}'")
        return found
    if not where.exists():
        raise error(f"{os.fspath(where)} does not exist; continue with an output "
                    f"directory of '{written_by}' or its {name}")
    return where


def find_tree(path: str | os.PathLike[str]) -> Path:
    """The tree.db of an output directory, or ``path`` itself when it is a file."""
    return find_run_file(path, TREE_FILE, "symex run --record-tree", TreeFileError)


def check_identity(store: TreeStore, identity: TreeIdentity) -> list[str]:
    """Refuse a tree of another program or inputs spec; the messages for a changed program."""
    meta = store.meta
    where = os.fspath(store.path)
    if meta.get("inputs") != identity.inputs:
        raise TreeFileError(f"{where} was recorded for other inputs ({meta.get('inputs')}), not "
                            f"these ({identity.inputs}); continue with the same inputs, or "
                            f"record a new tree")
    if meta.get("program") != identity.program:
        raise TreeFileError(f"{where} was recorded for program {meta.get('program')} (IR "
                            f"{meta.get('program_hash', '?')[:12]}), not {identity.program} (IR "
                            f"{identity.ir_hash[:12]}); continue with the program it was "
                            f"recorded for, or record a new tree")
    if meta.get("program_hash") != identity.ir_hash:
        hashes = f"IR {meta.get('program_hash', '?')[:12]} -> {identity.ir_hash[:12]}"
        recorded_by = meta.get("compiler", "")
        if recorded_by and identity.compiler and recorded_by != identity.compiler:
            why = (f"{identity.program} was compiled by {recorded_by} when {where} was "
                   f"recorded and by {identity.compiler} now, so its IR differs ({hashes})")
        else:
            why = f"{identity.program} changed since {where} was recorded ({hashes})"
        return [f"symex: {why}; explored paths are replayed to check them, and those that "
                f"diverge from the recording are explored again"]
    return []


def open_recorder(identity: TreeIdentity, *, record_tree: str | os.PathLike[str] | None,
                  continue_with: str | os.PathLike[str] | None, hash_constants: bool = True,
                  restart_all_states: bool = False,
                  stop_after_replay: bool = False) -> tuple[TreeRecorder, list[str]]:
    """The recorder of a run, and messages for the run's log (see the module docstring).
    Every check happens before anything is written."""
    if continue_with is None and (restart_all_states or stop_after_replay):
        raise ConfigError("restart_all_states and stop_after_replay replay a recorded "
                          "tree; pass continue_with=DIR as well")
    store, messages = open_store(identity, record_tree=record_tree, continue_with=continue_with,
                                 hash_constants=hash_constants)
    if continue_with is None:
        return TreeRecorder(store), []
    changed = store.meta.get("program_hash") != identity.ir_hash
    recorder = TreeRecorder(store, restart_all_states=restart_all_states,
                            stop_after_replay=stop_after_replay, check_explored=changed)
    if changed:
        # the tree is the new program's once a run has checked all of it
        recorder.meta_when_checked = {"program_hash": identity.ir_hash,
                                      "compiler": identity.compiler}
    return recorder, messages


def open_store(identity: TreeIdentity, *, record_tree: str | os.PathLike[str] | None,
               continue_with: str | os.PathLike[str] | None,
               hash_constants: bool = True) -> tuple[TreeStore, list[str]]:
    """The tree file a run records into (see the module docstring), checked against
    ``identity``, and messages for the run's log."""
    if continue_with is None:
        if record_tree is None:
            raise ConfigError("a recorded tree needs record_tree or continue_with")
        meta = {"program": identity.program, "program_hash": identity.ir_hash,
                "compiler": identity.compiler,
                "inputs": identity.inputs, "hash_constants": "1" if hash_constants else "0",
                "created": datetime.datetime.now().astimezone().isoformat(timespec="seconds")}
        return TreeStore.create(record_tree, meta), []
    source = find_tree(continue_with)
    reading = TreeStore.open(source, writable=False)
    try:
        messages = check_identity(reading, identity)
        if record_tree is not None and Path(record_tree).resolve() != source.resolve():
            target = Path(record_tree)
            if target.exists() and (not target.is_file() or target.stat().st_size):
                raise TreeFileError(f"{os.fspath(target)} already exists; record the copy of "
                                    f"the tree into a new output directory or file")
            reading.copy_to(target)
            source = target
    finally:
        reading.close()
    return TreeStore.open(source, writable=True), messages
