"""Big objects are copied page by page after a fork (core.memory: PAGED_OBJECT_SIZE).

A state writing into a big object it shares copies one page, not the object; every state
must still see exactly its own bytes: checked on the object level, then on a program whose
paths write across page boundaries in a shared 8 KB buffer, each path's checksum computed
here from its inputs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import symex
from symex import PathStatus
from symex.core.memory.objects import FLATTEN_SHARE, PAGE_SIZE, PAGED_OBJECT_SIZE, MemoryObject, \
    ObjectKind, ObjectState

SIZE = 2 * PAGED_OBJECT_SIZE


def _frozen(size: int = SIZE) -> ObjectState:
    """An object as a fork leaves it: filled, owned by a token no state holds any more."""
    os = ObjectState(MemoryObject(3, size, ObjectKind.HEAP, "buf"), bytearray(size), object())
    os.write_bytes(0, bytes(i * 7 % 251 for i in range(size)))
    return os


def test_a_copy_shares_every_page_it_does_not_write() -> None:
    original = _frozen()
    before = original.contents()
    child = original.copy(object())
    other = original.copy(object())
    assert child.data is None and not child.flat  # paged, so the fast paths stay away
    # a 4-byte store straddling the boundary between pages 1 and 2
    child.write_bytes(2 * PAGE_SIZE - 2, b"\xaa\xbb\xcc\xdd")
    own = [i for i, page in enumerate(child.pages) if type(page) is bytearray]
    assert own == [1, 2]
    assert all(child.pages[i] is other.pages[i] for i in range(len(child.pages)) if i not in own)
    assert child.read_bytes(2 * PAGE_SIZE - 3, 6) == [
        before[2 * PAGE_SIZE - 3], 0xAA, 0xBB, 0xCC, 0xDD, before[2 * PAGE_SIZE + 2]]
    # the object it was copied from and its other copy keep the old bytes
    assert original.contents() == before == other.contents()
    expected = bytearray(before)
    expected[2 * PAGE_SIZE - 2:2 * PAGE_SIZE + 2] = b"\xaa\xbb\xcc\xdd"
    assert child.contents() == bytes(expected)


def test_a_copy_of_a_copy_does_not_write_into_its_parent() -> None:
    parent = _frozen().copy(object())
    parent.write_byte(10, 1)  # page 0 is now the parent's own bytearray...
    grandchild = parent.copy(object())  # ...and the parent is frozen by this fork
    grandchild.write_byte(11, 2)
    assert parent.read_byte(11) == 11 * 7 % 251 and parent.read_byte(10) == 1
    assert grandchild.read_bytes(10, 2) == [1, 2]


def test_a_copy_rewriting_much_of_the_object_turns_flat_again() -> None:
    original = _frozen()
    child = original.copy(object())
    pages = SIZE // PAGE_SIZE
    limit = pages // FLATTEN_SHARE
    for i in range(limit):
        child.write_byte(i * PAGE_SIZE, 0xEE)
        assert child.data is None
    child.write_byte(limit * PAGE_SIZE, 0xEE)  # one page more than a quarter
    assert child.flat and child.pages is None
    expected = bytearray(original.contents())
    for i in range(limit + 1):
        expected[i * PAGE_SIZE] = 0xEE
    assert child.contents() == bytes(expected)


def test_small_objects_stay_flat() -> None:
    child = _frozen(PAGED_OBJECT_SIZE - 1).copy(object())
    assert child.flat and child.pages is None


PROGRAM = r"""
#include <klee/klee.h>
#include <stdio.h>
#include <string.h>

static unsigned char buf[8192];   /* shared by every path until it writes */

int main(void) {
  unsigned char in[3];
  for (int i = 0; i < (int)sizeof buf; i++) buf[i] = (unsigned char)(i * 7 % 251);
  klee_make_symbolic(in, sizeof in, "in");
  if (in[0] > 100) {
    memcpy(buf + 250, buf + 4000, 300);          /* crosses a page boundary */
    *(unsigned *)(buf + 510) = 0xdeadbeefu;      /* straddles pages 1 and 2 */
  } else {
    memset(buf + 300, in[0], 600);               /* the same pages, other bytes */
  }
  if (in[1] & 1)
    buf[in[2] % 64 + 4090] = 42;                 /* a symbolic index: array mode */
  else
    buf[4095] ^= 0xff;
  unsigned sum = 0;
  for (int i = 0; i < (int)sizeof buf; i++) sum = sum * 31u + buf[i];
  printf("%u\n", sum);
  return 0;
}
"""


def _checksum(data: bytes) -> int:
    buf = bytearray(i * 7 % 251 for i in range(8192))
    if data[0] > 100:
        buf[250:550] = buf[4000:4300]
        buf[510:514] = (0xDEADBEEF).to_bytes(4, "little")
    else:
        buf[300:900] = bytes([data[0]]) * 600
    if data[1] & 1:
        buf[data[2] % 64 + 4090] = 42
    else:
        buf[4095] ^= 0xFF
    total = 0
    for b in buf:
        total = (total * 31 + b) & 0xFFFFFFFF
    return total


@pytest.mark.parametrize("searcher", ["dfs", "bfs"])
def test_paths_writing_a_shared_buffer_see_their_own_bytes(tmp_path: Path, searcher: str) -> None:
    source = tmp_path / "pages.c"
    source.write_text(PROGRAM)
    result = symex.explore(symex.compile(source), searcher=searcher, max_time=300)
    assert result.paths.completed == 4 and not result.errors and result.paths.partial == 0
    for test in result.tests:
        assert test.status is PathStatus.COMPLETED
        data = test.objects["in"]
        assert test.stdout.decode() == f"{_checksum(data)}\n", data.hex()
