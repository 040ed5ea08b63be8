"""Word-at-a-time string code (gnulib's rawmemchr, memchr2, strchrnul, which coreutils links
on musl) reads whole aligned words, and the last word may run past the end of the object.
Natively such a read never faults (an aligned word never crosses a page) and the answer
comes from the in-bounds bytes, so reporting it is a false alarm (it was one in coreutils'
shuf). symex reads the bytes past the end as 0 and counts the read as a shortfall; a read
that is not aligned, or starts past the end, is still an error."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import symex
from symex.core.shortfalls import ShortfallKind
from symex.output.ktest import KTest, KTestObject
from symex.replay import build_native, run_native

# a search for c, one aligned 8-byte word at a time after the unaligned head (as gnulib's
# rawmemchr): the exact "some byte is zero" test on word ^ c*0x01..01
WORD_SEARCH = r"""
#include <stdint.h>
#include <stdlib.h>
#include <klee/klee.h>

static const char *word_search(const char *s, int c) {
    const unsigned char *p = (const unsigned char *)s;
    while ((uintptr_t)p % sizeof(uint64_t)) {
        if (*p == (unsigned char)c)
            return (const char *)p;
        p++;
    }
    uint64_t repeated = 0x0101010101010101ULL * (unsigned char)c;
    const uint64_t *w = (const uint64_t *)p;
    for (;;) {
        uint64_t x = *w ^ repeated;                                              /* line 16 */
        if (((x - 0x0101010101010101ULL) & ~x & 0x8080808080808080ULL) != 0)
            break;
        w++;
    }
    p = (const unsigned char *)w;
    while (*p != (unsigned char)c)
        p++;
    return (const char *)p;
}

int main(void) {
    char *line = malloc(9);
    klee_make_symbolic(line, 8, "line");
    line[8] = '\n';
    return (int)(word_search(line, '\n') - line);
}
"""


def _compile(tmp_path: Path, name: str, source: str) -> tuple[Path, symex.Program]:
    path = tmp_path / name
    path.write_text(source)
    return path, symex.compile(path)


def test_a_word_search_reading_past_the_end_is_no_error(tmp_path: Path) -> None:
    _, program = _compile(tmp_path, "search.c", WORD_SEARCH)
    result = symex.explore(program)
    assert result.paths.errors == 0
    # the newline is first found at each of the 9 positions: line[8] is always one
    assert sorted(t.exit_code for t in result.tests) == list(range(9))
    (partial,) = [s for s in result.shortfalls if s.kind is ShortfallKind.PARTIAL_LOAD]
    # the second word, bytes 8..15 of the 9-byte object: on every path that gets there
    assert partial.what == "8-byte read" and partial.site == "search.c:16"
    assert partial.count == 1
    assert partial.describe() == (
        "symex: warning: an aligned 8-byte read at search.c:16 crossed the end of its object once: "
        "the bytes past the end read as 0 (a word-at-a-time search; natively harmless, though "
        "AddressSanitizer reports it)")


@pytest.mark.skipif(shutil.which("gcc") is None, reason="native replay needs gcc")
def test_each_path_replays_natively_with_its_exit_code(tmp_path: Path) -> None:
    source, program = _compile(tmp_path, "search.c", WORD_SEARCH)
    result = symex.explore(program)
    # without AddressSanitizer, which reports the partial read (as the shortfall says); the
    # undefined-behaviour sanitizer stays
    executable = build_native(source, ["-fno-sanitize=address"])
    for test in result.tests:
        ktest = KTest(args=(), objects=tuple(KTestObject(n, d) for n, d in test.objects.items()))
        outcome = run_native(executable, ktest)
        assert outcome.kind is None and outcome.exit_code == test.exit_code, (test.objects, outcome)


@pytest.mark.parametrize(("read", "message"), [
    # not aligned: it could cross a page natively
    ("*(const uint32_t *)(buf + 6)", "out-of-bounds read of 4 bytes at offset 6 of a 9-byte heap object"),
    # starts past the end: nothing of it is the object's
    ("*(const uint64_t *)(buf + 16)", "out-of-bounds read of 8 bytes at offset 16 of a 9-byte heap object"),
])
def test_other_reads_past_the_end_stay_errors(tmp_path: Path, read: str, message: str) -> None:
    _, program = _compile(tmp_path, "bad.c", rf"""
#include <stdint.h>
#include <stdlib.h>
int main(void) {{
    char *buf = calloc(9, 1);
    return (int)({read} & 1);
}}
""")
    result = symex.explore(program)
    (error,) = result.errors
    assert error.kind.value == "ptr" and message in error.message
