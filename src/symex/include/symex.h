/*
 * symex.h -- everything a C program can call to talk to symex.
 *
 * symex symbolically executes C programs (compiled to LLVM IR) and writes KLEE-format
 * .ktest test cases for every path and error it finds. This header provides:
 *
 *   - the KLEE intrinsics (klee_make_symbolic, klee_assume, klee_range, klee_int,
 *     klee_assert, ...) from <klee/klee.h>, so KLEE programs run unchanged;
 *   - the SV-COMP / Test-Comp input and property functions (__VERIFIER_nondet_*,
 *     __VERIFIER_assume, __VERIFIER_error), so benchmark programs run unchanged;
 *   - symex_fuzz_input, the input of a libFuzzer fuzz target.
 *
 * Each __VERIFIER_nondet_* call returns a fresh unconstrained symbolic value (one
 * .ktest object per call); __VERIFIER_assume(c) behaves like klee_assume(c);
 * __VERIFIER_error() and reach_error() report a "reach_error" error.
 *
 * Native replay: compile the program with gcc together with symex's
 * runtime/replay_runtime.c (see symex.replay) and set KTEST_FILE to a .ktest file;
 * the functions above then return the bytes stored in the test case, in order.
 */
#ifndef SYMEX_H
#define SYMEX_H

#include <klee/klee.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
bool __VERIFIER_nondet_bool(void);
#else
_Bool __VERIFIER_nondet_bool(void);
#endif
char __VERIFIER_nondet_char(void);
unsigned char __VERIFIER_nondet_uchar(void);
short __VERIFIER_nondet_short(void);
unsigned short __VERIFIER_nondet_ushort(void);
int __VERIFIER_nondet_int(void);
unsigned int __VERIFIER_nondet_uint(void);
long __VERIFIER_nondet_long(void);
unsigned long __VERIFIER_nondet_ulong(void);
float __VERIFIER_nondet_float(void);   /* any float, NaNs and infinities included */
double __VERIFIER_nondet_double(void);

/* Restrict the current path to executions where cond is non-zero. */
void __VERIFIER_assume(int cond);

/* Report that an error location was reached (SV-COMP's unreach-call property). */
void __VERIFIER_error(void);

/* The input of a libFuzzer fuzz target (symex run --fuzz-target; runtime/fuzz_driver.c
 * calls it): up to --max-input bytes (object "fuzz-data"), their number stored in *size
 * (object "fuzz-size", made first). Reading at or past *size is out of bounds. Natively
 * (symex replay) the test's bytes, in a heap buffer of exactly *size bytes. */
const unsigned char *symex_fuzz_input(size_t *size);

#ifdef __cplusplus
}
#endif

#endif /* SYMEX_H */
