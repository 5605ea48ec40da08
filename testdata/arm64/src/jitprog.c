/* jitprog: "JIT" code for testdata/arm64 (see ../README.md): a function copied into an
 * anonymous executable mapping and called there; it calls back into C. Its prologue saves
 * x19 and x30 without a frame record (x29 is left pointing at its caller's), so only its
 * CFI (the jitdump's UNWINDING_INFO, written by make-arm64.py from jit_cfi below) unwinds
 * it right. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* jit_loop(cb, n): the sum of cb(n), cb(n - 1), ..., cb(1); in .rodata: only its copy runs */
__asm__(".section .rodata\n"
	".balign 4\n"
	".globl jit_tmpl_start\n"
	"jit_tmpl_start:\n"
	"	sub sp, sp, #48\n"          /* 0 */
	"	stp x19, x30, [sp, #16]\n"  /* 4 */
	"	stp x20, x21, [sp, #32]\n"  /* 8 */
	"	mov x19, x0\n"              /* 12 */
	"	mov x20, x1\n"              /* 16 */
	"	mov x21, #0\n"              /* 20 */
	"1:	cbz x20, 2f\n"              /* 24 */
	"	mov x0, x20\n"              /* 28 */
	"	blr x19\n"                  /* 32 */
	"	add x21, x21, x0\n"         /* 36 */
	"	sub x20, x20, #1\n"         /* 40 */
	"	b 1b\n"                     /* 44 */
	"2:	mov x0, x21\n"              /* 48 */
	"	ldp x20, x21, [sp, #32]\n"  /* 52 */
	"	ldp x19, x30, [sp, #16]\n"  /* 56 */
	"	add sp, sp, #48\n"          /* 60 */
	"	ret\n"                      /* 64 */
	".globl jit_tmpl_end\n"
	"jit_tmpl_end:\n"
	".text\n");

extern const unsigned char jit_tmpl_start[], jit_tmpl_end[];

typedef unsigned long (*cb_fn)(unsigned long);
typedef unsigned long (*jit_fn)(cb_fn, unsigned long);

/* where the copy is: read by make-arm64.py */
void *volatile jit_code;
static volatile unsigned long sink;

__attribute__((noinline)) unsigned long inner_work(unsigned long x)
{
	unsigned long h = x;

	for (int i = 0; i < 50; i++)
		h = (h ^ (h >> 11)) * 0x9e3779b97f4a7c15UL + (unsigned long)i;
	return h;
}

__attribute__((noinline)) unsigned long callback(unsigned long x)
{
	return inner_work(x) >> 3;
}

__attribute__((noinline)) unsigned long drive(jit_fn f, int rounds)
{
	unsigned long s = 0;

	for (int r = 0; r < rounds; r++)
		s += f(callback, 12);
	return s;
}

int main(int argc, char **argv)
{
	size_t len = (size_t)(jit_tmpl_end - jit_tmpl_start);
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	if (p == MAP_FAILED)
		return 1;
	memcpy(p, jit_tmpl_start, len);
	__builtin___clear_cache((char *)p, (char *)p + len);
	jit_code = p;
	sink = drive((jit_fn)p, argc > 1 ? atoi(argv[1]) : 10);
	printf("%lu\n", sink);
	return 0;
}
