"""symex's C library on symbolic input: strtok, qsort, bsearch, strchr/strrchr/strstr,
strncpy/strncat, memmove and strtoul.

Each program prints what the function returned (printf fixes symbolic values with the choice
recorded, so every test's objects reproduce its output); each test recomputes that output
from the test's own bytes with the C semantics written out in Python, and path counts are
reasoned from how the C code can branch.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

import symex
from symex import PathStatus

HEADER = """
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <klee/klee.h>
"""


def explore(tmp_path: Path, name: str, body: str) -> symex.Result:
    """Compile ``body`` (after the common includes) and explore it to the end."""
    path = tmp_path / name
    path.write_text(HEADER + textwrap.dedent(body))
    result = symex.explore(symex.compile(path), searcher="dfs", seed=0, max_time=60.0)
    assert result.halted is None
    assert all(t.status is PathStatus.COMPLETED and t.exit_code == 0 for t in result.tests), \
        [(t.status, t.reason) for t in result.tests if t.status is not PathStatus.COMPLETED]
    return result


def c_string(data: bytes) -> bytes:
    """The C string a NUL-terminated buffer holds."""
    return data.split(b"\0", 1)[0]


def test_strtok_counts_the_tokens_of_a_symbolic_string(tmp_path: Path) -> None:
    result = explore(tmp_path, "tokens.c", """
        int main(void) {
          char s[5];
          klee_make_symbolic(s, 4, "s");
          s[4] = 0;
          int count = 0;
          for (char *t = strtok(s, " "); t; t = strtok(NULL, " "))
            count++;
          printf("%d\\n", count);
          return 0;
        }
    """)
    # each byte up to the first NUL is a space or not: the string before the NUL is one of
    # 1 + 2 + 4 + 8 + 16 = 31 space/other patterns, one path each
    assert result.paths.completed == 31 and len(result.tests) == 31
    for test in result.tests:
        words = [w for w in c_string(test.objects["s"]).split(b" ") if w]
        assert test.stdout == b"%d\n" % len(words), test.objects["s"]
    assert {int(t.stdout) for t in result.tests} == {0, 1, 2}


def test_qsort_sorts_three_symbolic_bytes_on_every_path(tmp_path: Path) -> None:
    result = explore(tmp_path, "sort.c", """
        static int compare(const void *a, const void *b) {
          return *(const unsigned char *)a - *(const unsigned char *)b;
        }
        int main(void) {
          unsigned char v[3];
          klee_make_symbolic(v, 3, "v");
          unsigned char in0 = v[0], in1 = v[1], in2 = v[2];
          qsort(v, 3, 1, compare);
          printf("%d %d %d -> %d %d %d\\n", in0, in1, in2, v[0], v[1], v[2]);
          return 0;
        }
    """)
    # the library's qsort is an insertion sort branching on compare(...) > 0: v0 > v1 or not,
    # then max(v0, v1) > v2 or not, and only if so min(v0, v1) > v2 or not: 2 * 3 = 6 paths,
    # all feasible (ties go to the "not" side)
    assert result.paths.completed == 6
    for test in result.tests:
        data = list(test.objects["v"])
        before, after = test.stdout.decode().split(" -> ")
        assert [int(x) for x in before.split()] == data
        assert [int(x) for x in after.split()] == sorted(data)
    orders = {tuple(sorted(range(3), key=lambda k: (t.objects["v"][k], k))) for t in result.tests}
    assert len(orders) == 6  # one path per ordering of the input (stable under ties)


def test_bsearch_finds_a_symbolic_key_exactly_when_present(tmp_path: Path) -> None:
    table = [2, 3, 5, 7, 11, 13, 17, 19]
    result = explore(tmp_path, "search.c", """
        static const int primes[8] = {2, 3, 5, 7, 11, 13, 17, 19};
        static int compare(const void *a, const void *b) {
          int x = *(const int *)a, y = *(const int *)b;
          return (x > y) - (x < y);
        }
        int main(void) {
          int key;
          klee_make_symbolic(&key, sizeof key, "key");
          const int *hit = bsearch(&key, primes, 8, sizeof primes[0], compare);
          printf("%d %ld\\n", key, hit ? (long)(hit - primes) : -1L);
          return 0;
        }
    """)
    # one path per leaf of the binary search: the 8 entries, and the gaps between and around
    # them that hold an int (below 2, 4, 6, 8..10, 12, 14..16, 18, above 19; none in 2..3)
    assert result.paths.completed == 16
    found = set()
    for test in result.tests:
        key = int.from_bytes(test.objects["key"], "little", signed=True)
        printed_key, index = (int(x) for x in test.stdout.split())
        assert printed_key == key
        assert index == (table.index(key) if key in table else -1)
        found.add(index)
    assert found == set(range(-1, 8))


def test_strchr_on_a_symbolic_haystack(tmp_path: Path) -> None:
    result = explore(tmp_path, "chr.c", """
        int main(void) {
          char h[5];
          klee_make_symbolic(h, 4, "h");
          h[4] = 0;
          char *p = strchr(h, 'a');
          printf("%ld\\n", p ? (long)(p - h) : -1L);
          return 0;
        }
    """)
    # stops at the first 'a' (4 places) or the first NUL (4 places, or the terminator)
    assert result.paths.completed == 9
    for test in result.tests:
        assert int(test.stdout) == c_string(test.objects["h"]).find(b"a")
    assert {int(t.stdout) for t in result.tests} == {-1, 0, 1, 2, 3}


def test_strrchr_on_a_symbolic_haystack(tmp_path: Path) -> None:
    result = explore(tmp_path, "rchr.c", """
        int main(void) {
          char h[5];
          klee_make_symbolic(h, 4, "h");
          h[4] = 0;
          char *p = strrchr(h, 'a');
          char *end = strrchr(h, 0);
          printf("%ld %ld\\n", p ? (long)(p - h) : -1L, (long)(end - h));
          return 0;
        }
    """)
    # it reads up to the NUL: every 'a'/other pattern of each length 0..4 is a path
    assert result.paths.completed == 31
    for test in result.tests:
        text = c_string(test.objects["h"])
        assert test.stdout == b"%d %d\n" % (text.rfind(b"a"), len(text))


def test_strstr_on_a_symbolic_haystack(tmp_path: Path) -> None:
    result = explore(tmp_path, "str.c", """
        int main(void) {
          char h[6];
          klee_make_symbolic(h, 5, "h");
          h[5] = 0;
          char *p = strstr(h, "ab");
          char *q = strstr(h, "");
          printf("%ld %d\\n", p ? (long)(p - h) : -1L, q == h);
          return 0;
        }
    """)
    for test in result.tests:
        assert test.stdout == b"%d 1\n" % c_string(test.objects["h"]).find(b"ab")
    # the needle can start at each of the first four places, or nowhere
    assert {int(t.stdout.split()[0]) for t in result.tests} == {-1, 0, 1, 2, 3}


def test_strncpy_with_a_symbolic_length(tmp_path: Path) -> None:
    result = explore(tmp_path, "ncpy.c", """
        int main(void) {
          unsigned n;
          klee_make_symbolic(&n, sizeof n, "n");
          klee_assume(n <= 7);
          char dst[8];
          memset(dst, 'X', sizeof dst);
          strncpy(dst, "hello", n);
          for (int i = 0; i < 8; i++)
            printf("%02x", (unsigned char)dst[i]);
          printf("\\n");
          return 0;
        }
    """)
    assert result.paths.completed == 8  # one per n: the loops test i < n at each step
    for test in result.tests:
        n = int.from_bytes(test.objects["n"], "little")
        # C: copy up to the NUL, then pad with NULs to n bytes; nothing past n is touched
        expected = (b"hello"[:n] + b"\0" * max(0, n - 5)).ljust(8, b"X")
        assert bytes.fromhex(test.stdout.decode()) == expected, n
    assert {int.from_bytes(t.objects["n"], "little") for t in result.tests} == set(range(8))


def test_strncat_with_a_symbolic_length(tmp_path: Path) -> None:
    result = explore(tmp_path, "ncat.c", """
        int main(void) {
          unsigned n;
          klee_make_symbolic(&n, sizeof n, "n");
          klee_assume(n <= 6);
          char dst[12] = "ab";
          memset(dst + 3, 'X', sizeof dst - 3);
          strncat(dst, "cdef", n);
          for (int i = 0; i < 12; i++)
            printf("%02x", (unsigned char)dst[i]);
          printf("\\n");
          return 0;
        }
    """)
    # n = 0..4 stop on the count; n = 5 and 6 both stop at the source's NUL (one path)
    assert result.paths.completed == 6
    for test in result.tests:
        n = int.from_bytes(test.objects["n"], "little")
        # C: append at most n characters of the source, then always one NUL
        expected = (b"ab" + b"cdef"[:n] + b"\0").ljust(12, b"X")
        assert bytes.fromhex(test.stdout.decode()) == expected, n


def test_memmove_with_symbolic_overlapping_ranges(tmp_path: Path) -> None:
    # called through a pointer: a direct call becomes LLVM's memmove intrinsic, which the
    # interpreter copies itself, and the library's memmove would not run
    result = explore(tmp_path, "move.c", """
        void *(*volatile move)(void *, const void *, size_t) = memmove;
        int main(void) {
          unsigned char d, s;
          klee_make_symbolic(&d, 1, "d");
          klee_make_symbolic(&s, 1, "s");
          klee_assume(d <= 3);
          klee_assume(s <= 3);
          char buf[11] = "0123456789";
          char *out = move(buf + d, buf + s, 5);
          printf("%s %d\\n", buf, out == buf + d);
          return 0;
        }
    """)
    # memmove branches on dst == src, then on whether dst starts inside the source (d > s,
    # as d - s <= 3 < 5: copy backwards) or not (d < s: forwards); the copies themselves
    # read and write at symbolic offsets without branching: 3 paths
    assert result.paths.completed == 3
    seen = set()
    for test in result.tests:
        d, s = test.objects["d"][0], test.objects["s"][0]
        # C: as if through a temporary buffer, whichever way the ranges overlap
        expected = bytearray(b"0123456789")
        expected[d:d + 5] = expected[s:s + 5]
        assert test.stdout == bytes(expected) + b" 1\n", (d, s)
        seen.add((d > s) - (d < s))
    assert seen == {-1, 0, 1}


ULONG_MAX = 2 ** 64 - 1


def c_strtoul(text: bytes) -> tuple[int, bool, int]:
    """strtoul(text, &end, 10) for a text of decimal digits then anything: value, whether
    errno is ERANGE, and the characters consumed."""
    digits = len(text) - len(text.lstrip(b"0123456789"))
    if digits == 0:
        return 0, False, 0
    value = int(text[:digits])
    return (ULONG_MAX, True, digits) if value > ULONG_MAX else (value, False, digits)


@pytest.mark.parametrize("prefix", ["184467440737095516", "1844674407370955161"])
def test_strtoul_of_symbolic_digits_sets_errno_on_overflow(prefix: str, tmp_path: Path) -> None:
    # ULONG_MAX is 18446744073709551615: the prefix is its own, and the symbolic characters
    # after it (two, or one) decide whether the number fits
    tail = 20 - len(prefix)
    result = explore(tmp_path, "ul.c", """
        int main(void) {
          char s[21] = "PREFIX";
          klee_make_symbolic(s + LEN, TAIL, "tail");
          s[20] = 0;
          char *end;
          errno = 0;
          unsigned long v = strtoul(s, &end, 10);
          printf("%lu %d %ld\\n", v, errno == ERANGE, (long)(end - s));
          return 0;
        }
    """.replace("PREFIX", prefix).replace("LEN", str(len(prefix))).replace("TAIL", str(tail)))
    overflowed = fitted = 0
    for test in result.tests:
        text = c_string(prefix.encode() + test.objects["tail"])
        value, erange, used = c_strtoul(text)
        assert test.stdout == b"%d %d %d\n" % (value, erange, used), text
        overflowed += erange
        fitted += not erange and used == 20
    # both sides of the limit are reachable: ...1616 to ...1699 overflow, ...1600 to ...1615
    # fit (two characters); ...16196 to ...16199 overflow, ...16190 to ...16195 fit (one)
    assert overflowed >= 1 and fitted >= 1
