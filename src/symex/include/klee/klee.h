/*
 * klee/klee.h -- KLEE-compatible intrinsics, as understood by symex.
 *
 * Programs written for KLEE compile unchanged against this header. Under symex the
 * functions below are intercepted by the symbolic executor; for native replay of a
 * test case they are implemented by symex's runtime/replay_runtime.c, which feeds
 * the bytes of a .ktest file to the program.
 */
#ifndef KLEE_H
#define KLEE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Make the nbytes at addr symbolic (unconstrained); name labels the object in test cases. */
void klee_make_symbolic(void *addr, size_t nbytes, const char *name);

/* Restrict the current path to executions where condition is non-zero. */
void klee_assume(uintptr_t condition);

/* A fresh symbolic int in [begin, end). */
int klee_range(int begin, int end, const char *name);

/* A fresh unconstrained symbolic int. */
int klee_int(const char *name);

/* Non-zero iff n is symbolic on the current path. */
unsigned klee_is_symbolic(uintptr_t n);

/* One concrete value the expression can take on the current path (concretises it). */
int32_t klee_get_value_i32(int32_t x);
int64_t klee_get_value_i64(int64_t x);
float klee_get_value_f(float x);
double klee_get_value_d(double x);
long klee_get_value_l(long x);
long long klee_get_value_ll(long long x);
/* KLEE's own spelling of the float/double/long variants (KLEE_GET_VALUE_PROTO). */
float klee_get_valuef(float x);
double klee_get_valued(double x);
long klee_get_valuel(long x);
long long klee_get_valuell(long long x);

/* End the current path without reporting anything. */
__attribute__((noreturn)) void klee_silent_exit(int status);

/* End the current path with an error; suffix is the kind (the .err file suffix in KLEE). */
__attribute__((noreturn)) void klee_report_error(const char *file, int line, const char *message,
                                                 const char *suffix);

void klee_warning(const char *message);
void klee_warning_once(const char *message);

/* Print msg followed by the expressions of the remaining arguments. */
void klee_print_expr(const char *msg, ...);

/* End the current path as an abort. */
__attribute__((noreturn)) void klee_abort(void);

/* Prefer solutions where condition holds when generating the test case for object. */
void klee_prefer_cex(void *object, uintptr_t condition);

#ifdef __cplusplus
#include <assert.h>
#else
/* The C library's own prototype, which klee_assert relies on without including <assert.h>
   (that would define assert in the program): glibc's line is unsigned, musl's is int, and a
   program including <assert.h> after this header must see the same declaration again.
   <features.h> (both libraries have it) says which: only glibc defines __GLIBC__. */
#include <features.h>
#ifdef __GLIBC__
extern void __assert_fail(const char *__assertion, const char *__file, unsigned int __line,
                          const char *__function) __attribute__((__noreturn__));
#else
extern void __assert_fail(const char *__assertion, const char *__file, int __line,
                          const char *__function) __attribute__((__noreturn__));
#endif
#endif

#define klee_assert(expr)                                                                        \
  ((expr) ? (void)(0) : __assert_fail(#expr, __FILE__, __LINE__, __PRETTY_FUNCTION__))

#ifdef __cplusplus
}
#endif

#endif /* KLEE_H */
