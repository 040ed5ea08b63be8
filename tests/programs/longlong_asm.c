/* The inline assembly of longlong.h (coreutils' factor, GMP) that symex executes: mulq,
 * addq/adcq and subq/sbbq on (high, low) pairs, bsf and bsr; the same statements written
 * here. Prints results on fixed values, then branches on a symbolic one's product. */
#include <stdio.h>
#include <klee/klee.h>

typedef unsigned long word;

#define MUL(high, low, u, v) \
	__asm__("mulq\t%3" : "=a"(low), "=d"(high) : "%0"((word)(u)), "rm"((word)(v)))
#define ADD(sh, sl, ah, al, bh, bl) \
	__asm__("addq %5,%q1\n\tadcq %3,%q0" : "=r"(sh), "=&r"(sl) \
		: "0"((word)(ah)), "rme"((word)(bh)), "%1"((word)(al)), "rme"((word)(bl)))
#define SUB(sh, sl, ah, al, bh, bl) \
	__asm__("subq %5,%q1\n\tsbbq %3,%q0" : "=r"(sh), "=&r"(sl) \
		: "0"((word)(ah)), "rme"((word)(bh)), "1"((word)(al)), "rme"((word)(bl)))
#define LOWEST(index, x) __asm__("bsf\t%1, %q0" : "=r"(index) : "rm"((word)(x)))
#define HIGHEST(index, x) __asm__("bsr\t%1,%0" : "=r"(index) : "rm"((word)(x)))

int main(void)
{
	word values[] = {0x123456789abcdefUL, 0xfedcba9876543210UL, 1, 0xffffffffffffffffUL, 96};
	for (int i = 0; i + 1 < 5; i++) {
		word u = values[i], v = values[i + 1], high, low, sh, sl, dh, dl, first, last;
		unsigned count; /* an int output, as longlong.h's callers often pass */
		MUL(high, low, u, v);
		ADD(sh, sl, u, v, v, u);
		SUB(dh, dl, v, u, u, v);
		LOWEST(first, v);
		HIGHEST(last, v);
		LOWEST(count, u);
		printf("%lx %lx | %lx %lx | %lx %lx | %lu %lu %u\n", high, low, sh, sl, dh, dl, first, last, count);
	}
	word x, high, low;
	klee_make_symbolic(&x, sizeof x, "x");
	MUL(high, low, x, 3);
	if (high == 2 && low == 1)
		puts("3x is 2:1");
	return 0;
}
