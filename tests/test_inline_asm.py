"""Inline assembly with an empty template is common in real C libraries and programs: a
compiler barrier (musl's explicit_bzero, ``asm volatile("" ::: "memory")``) and a value hidden
from the optimizer (``asm("" : "+r"(x))``). They do nothing at run time, so a path goes on
through them. cpuid answers zeros, longlong.h's 128-bit arithmetic and bit scans are
executed; any other instruction in the template still ends the path as unsupported."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import symex
from symex.core.outcome import PathStatus
from symex.output.ktest import KTest, KTestObject, write_ktest
from symex.replay import build_native

PROGRAM = r"""
#include <stdio.h>
#include <string.h>
#include <klee/klee.h>

static void wipe(char *d, size_t n) {
    memset(d, 0, n);
    __asm__ __volatile__("" : : "r"(d) : "memory");
}

int main(void) {
    int x;
    long y;
    klee_make_symbolic(&x, sizeof x, "x");
    char secret[4] = "abc";
    wipe(secret, sizeof secret);
    __asm__("" : "+r"(x));
    __asm__("" : "=r"(y) : "0"((long)x * 2));
    if (secret[0] != 0)
        return 9;
    if (y > 10) {
        puts("big");
        return 1;
    }
    return 0;
}
"""


def test_empty_templates_are_a_barrier_and_a_copy(tmp_path: Path) -> None:
    source = tmp_path / "barrier.c"
    source.write_text(PROGRAM)
    result = symex.explore(symex.compile(source))
    assert result.paths.partial == 0 and result.paths.errors == 0
    # y is 2x: both sides of y > 10 (and secret was wiped: never 9)
    codes = {t.exit_code: int.from_bytes(t.objects["x"], "little", signed=True) for t in result.tests}
    assert set(codes) == {0, 1}
    assert codes[1] * 2 > 10 and codes[0] * 2 <= 10


def test_an_instruction_in_the_template_is_unsupported(tmp_path: Path) -> None:
    source = tmp_path / "nop.c"
    source.write_text("int main(void) { __asm__ volatile(\"nop\"); return 0; }\n")
    result = symex.explore(symex.compile(source))
    (test,) = result.tests
    assert test.status is PathStatus.PARTIAL and "inline assembly" in test.reason


CPUID = r"""
#include <cpuid.h>
#include <stdio.h>
int main(void) {
    unsigned a = 7, b = 7, c = 7, d = 7;
    __asm__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0));
    unsigned e = 7, f = 7, g = 7, h = 7;
    int leaf1 = __get_cpuid(1, &e, &f, &g, &h);
    printf("%u %u %u %u leaf 1: %d\n", a, b, c, d, leaf1);
    return 0;
}
"""


def test_cpuid_answers_as_a_processor_without_feature_leaves(tmp_path: Path) -> None:
    """``cpuid`` (plain, and cpuid.h's with %rbx saved around it) answers zeros: the highest
    leaf is 0, so feature probes (coreutils' cksum, gcc's __get_cpuid) take their portable
    code instead of ending the path."""
    source = tmp_path / "cpuid.c"
    source.write_text(CPUID)
    (test,) = symex.explore(symex.compile(source)).tests
    assert test.status is PathStatus.COMPLETED, test.reason
    assert test.stdout == b"0 0 0 0 leaf 1: 0\n"


def test_longlong_h_arithmetic_runs_as_natively(tmp_path: Path) -> None:
    """mulq, addq/adcq, subq/sbbq and bsf/bsr (coreutils' factor ends no path on them): the
    same results as the processor's on fixed values, every test replaying natively with the
    same output, and the solver finds an x whose 128-bit product 3x is 2:1."""
    source = Path(__file__).parent / "programs" / "longlong_asm.c"
    result = symex.explore(symex.compile(source))
    assert result.paths.partial == 0 and result.paths.errors == 0
    native = build_native(source, out_dir=tmp_path / "build")
    for number, test in enumerate(result.tests):
        ktest = tmp_path / f"{number}.ktest"
        write_ktest(ktest, KTest(args=[], objects=[KTestObject("x", test.objects["x"])]))
        ran = subprocess.run([str(native)], capture_output=True, timeout=60,
                             env={**os.environ, "KTEST_FILE": str(ktest)})
        assert (ran.returncode, ran.stdout) == (test.exit_code, test.stdout), ran.stderr
    found = [t for t in result.tests if t.stdout.endswith(b"3x is 2:1\n")]
    assert len(found) == 1 and int.from_bytes(found[0].objects["x"], "little") * 3 == 2 << 64 | 1
