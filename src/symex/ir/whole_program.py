"""A program made of several modules: link ``.c``/``.ll``/``.bc`` files into one, and read a
native build made with ``symex cc`` (an executable, an object or a static archive) back into
the IR of everything it was linked from.

A build by ``symex cc`` (:mod:`symex.ir.build_driver`) names the bitcode of each object in
the object's ``.llvm_bc`` section; the linker concatenates those sections, so an executable
lists exactly the objects the native linker took, archive members included, and nothing it
left out. The linked module is written to the IR cache under a digest of its parts (their
paths and contents), so a rebuilt object links anew and an unchanged program does not.
"""

from __future__ import annotations

import hashlib
import io
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any


from symex.errors import LoadError
from symex.ir.build_driver import BITCODE_SECTION
from symex.ir.compile import default_cache_dir

__all__ = ["bitcode_paths", "is_native_build", "link_modules", "parse_module"]

_ELF_MAGIC = b"\x7fELF"
_ARCHIVE_MAGIC = b"!<arch>\n"
_BITCODE_MAGICS = (b"BC\xc0\xde", b"\xde\xc0\x17\x0b")


def is_native_build(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is an ELF file (executable, object, shared library) or an ``ar``
    archive, rather than C source or LLVM IR."""
    with open(path, "rb") as stream:
        head = stream.read(8)
    return head.startswith(_ELF_MAGIC) or head == _ARCHIVE_MAGIC


def _elf_section_paths(data: bytes, where: str) -> list[Path] | None:
    from elftools.common.exceptions import ELFError  # noqa: PLC0415 (only native builds)
    from elftools.elf.elffile import ELFFile  # noqa: PLC0415

    try:
        section = ELFFile(io.BytesIO(data)).get_section_by_name(BITCODE_SECTION)
    except ELFError as exc:
        raise LoadError(f"{where}: not a readable ELF file ({exc})") from None
    if section is None:
        return None
    text = section.data().decode("utf-8", "surrogateescape")
    # sections of several objects are concatenated, each ending in a newline (a NUL may pad)
    return [Path(line) for line in text.replace("\0", "\n").splitlines() if line.strip()]


def bitcode_paths(path: str | os.PathLike[str]) -> list[Path]:
    """The bitcode files a ``symex cc`` build is made of, in link order, each once.

    Raises :class:`LoadError` naming what to do when ``path`` was built by another compiler
    or a bitcode file it names is gone."""
    from arpy import Archive, ArchiveFormatError  # noqa: PLC0415 (only native builds)

    source = Path(path)
    data = source.read_bytes()
    found: list[Path] = []
    if data.startswith(_ARCHIVE_MAGIC):
        try:
            with Archive(fileobj=io.BytesIO(data)) as archive:
                for member in archive:
                    contents = member.read()
                    if contents.startswith(_ELF_MAGIC):
                        found.extend(_elf_section_paths(contents, f"{source}({member.header.name!r})") or [])
        except ArchiveFormatError as exc:
            raise LoadError(f"{source}: not a readable archive ({exc})") from None
    else:
        found = _elf_section_paths(data, str(source)) or []
    if not found:
        raise LoadError(f"{source} carries no LLVM bitcode: it was not built by symex cc; "
                        f"rebuild it with CC='symex cc' (e.g. ./configure CC='symex cc' && make)")
    unique = list(dict.fromkeys(found))
    for bitcode in unique:
        if not bitcode.is_file():
            raise LoadError(f"{source} was built from {bitcode}, which no longer exists; "
                            f"rebuild {source.name} with CC='symex cc'")
    return unique


def parse_module(path: Path) -> Any:
    """An llvmlite module from a ``.ll`` or ``.bc`` file, verified; LoadError otherwise."""
    import llvmlite.binding as llvm  # noqa: PLC0415 (LLVM only where a module is parsed: ir/program_cache.py)

    data = path.read_bytes()
    bitcode = data[:4] in _BITCODE_MAGICS
    try:
        module = llvm.parse_bitcode(data) if bitcode else llvm.parse_assembly(data.decode("utf-8"))
        module.verify()
    except UnicodeDecodeError:
        raise LoadError(f"{path}: neither LLVM assembly (.ll) nor bitcode (.bc)") from None
    except RuntimeError as exc:
        what = "bitcode" if bitcode else "IR"
        raise LoadError(f"{path}: not valid LLVM {what}: {str(exc).strip()}") from None
    return module


def _linked_key(paths: Sequence[Path]) -> str:
    digest = hashlib.sha256(b"symex-link-v1")
    for path in paths:
        for field in (str(path.resolve()).encode("utf-8", "surrogateescape"), path.read_bytes()):
            digest.update(len(field).to_bytes(8, "little"))
            digest.update(field)
    return digest.hexdigest()


def link_modules(paths: Sequence[str | os.PathLike[str]], *, name: str = "program",
                 shown: Sequence[str] | None = None, cache_dir: os.PathLike[str] | None = None) -> Path:
    """Link ``.ll``/``.bc`` files into one module and return its cached ``.ll`` file.

    Two definitions of one external name are the error a native linker would report
    (LoadError naming the files, as ``shown``: the C sources the IR was compiled from);
    ``static`` functions of the same name stay apart."""
    files = [Path(path) for path in paths]
    names = list(shown) if shown is not None else [str(path) for path in files]
    if not files:
        raise LoadError("nothing to link: give at least one .c, .ll or .bc file")
    directory = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    target = directory / f"{name}-{_linked_key(files)[:32]}.ll"
    if target.is_file():
        return target
    linked = parse_module(files[0])
    for position, path in enumerate(files[1:], start=1):
        part = parse_module(path)
        if ("musl" in part.triple) != ("musl" in linked.triple):
            # one library's struct layouts and macros in one part, another's in the next:
            # a program that compiles and runs wrong
            musl, other = (names[position], names[0]) if "musl" in part.triple else (names[0], names[position])
            raise LoadError(f"{musl} was compiled against musl's headers and {other} against the "
                            f"system's ({part.triple or 'no triple'} and {linked.triple or 'no triple'}): "
                            f"build every part one way (symex cc builds for musl unless "
                            f"SYMEX_LIBC=symex; rebuild the odd part, e.g. make clean && make)")
        try:
            linked.link_in(part)
        except RuntimeError as exc:
            raise LoadError(f"linking {names[position]} with {', '.join(names[:position])} failed: "
                            f"{str(exc).strip()}; a program defines each function once (make "
                            f"one of them static, or leave one file out)") from None
    try:
        linked.verify()
    except RuntimeError as exc:
        raise LoadError(f"the linked program is not valid IR: {str(exc).strip()}") from None
    directory.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=directory)
    with os.fdopen(fd, "w") as stream:
        stream.write(str(linked))
    os.replace(temporary, target)
    return target
