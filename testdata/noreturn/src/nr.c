/* nr: callers whose last instruction is a call that does not return (issue 22, item 1).
 *
 * Each caller_* ends with a call to a noreturn function, so its return address is the
 * first byte of the function after it (built with -falign-functions=1: no padding in
 * between). Samples fall in the noreturn callees, which work before they leave:
 *   caller_a    -> fail_hard (a [[noreturn]] helper: spins, then longjmp)
 *   caller_chk  -> chk_fail  (as __stack_chk_fail: a cold call after the work)
 *   caller_abrt -> abort     (libc's: SIGABRT, whose handler spins, then siglongjmp:
 *                             a signal frame in the stack)
 *   caller_exit -> exit      (libc's: its atexit handler spins)
 * and a signal taken at a function's first byte, where the interrupted address is
 * exact (no call there): caller_trap -> trap_here, whose first instruction is ud2; the
 * SIGILL handler spins, then siglongjmp. The byte before trap_here is before_trap's.
 * Every start goes through ld.so's _start, whose call to _dl_start returns to
 * _dl_start_user, the next symbol: record.sh records `nr 0` at a high rate for that.
 *
 *   nr [ITERATIONS]
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

static jmp_buf env;
static sigjmp_buf sigenv;
static unsigned long iters;
volatile unsigned long sink;

__attribute__((noinline)) static void spin(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i * i ^ (sink >> 3);
}

__attribute__((noreturn, noinline)) void fail_hard(unsigned long n)
{
	spin(n);
	longjmp(env, 1);
}

__attribute__((noinline)) void caller_a(unsigned long n)
{
	sink++;
	fail_hard(n);
}

__attribute__((noinline)) void next_fn(unsigned long n)
{
	sink += n;
}

__attribute__((noreturn, noinline, cold)) void chk_fail(void)
{
	spin(iters);
	longjmp(env, 2);
}

/* the check always fails here: the work is in chk_fail */
__attribute__((noinline)) unsigned long caller_chk(unsigned long n)
{
	unsigned long canary = sink | 1;

	sink += n;
	if (canary != 0)
		chk_fail();
	return sink;
}

__attribute__((noinline)) void after_chk(void)
{
	sink--;
}

static void on_abort(int sig)
{
	(void)sig;
	spin(iters);
	siglongjmp(sigenv, 1);
}

__attribute__((noinline)) void caller_abrt(void)
{
	sink++;
	abort();
}

__attribute__((noinline)) void after_abrt(void)
{
	sink++;
}

/* trap_here: ud2 first, so that SIGILL is taken there; before_trap just before it */
__asm__(".text\n"
	".globl before_trap\n.type before_trap, @function\nbefore_trap:\n"
	"\t.cfi_startproc\n\tret\n\t.cfi_endproc\n.size before_trap, .-before_trap\n"
	".globl trap_here\n.type trap_here, @function\ntrap_here:\n"
	"\t.cfi_startproc\n\tud2\n\tret\n\t.cfi_endproc\n.size trap_here, .-trap_here\n");
void before_trap(void);
void trap_here(void);

static void on_ill(int sig)
{
	spin(iters + (unsigned long)sig);
	siglongjmp(sigenv, 2);
}

__attribute__((noinline)) void caller_trap(void)
{
	trap_here();
	sink++;
}

static void at_exit(void)
{
	spin(iters);
}

__attribute__((noinline)) void caller_exit(void)
{
	sink++;
	exit(0);
}

__attribute__((noinline)) void after_exit(void)
{
	sink++;
}

int main(int argc, char **argv)
{
	struct sigaction sa;

	iters = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
	if (setjmp(env) == 0)
		caller_a(iters);
	if (setjmp(env) == 0)
		caller_chk(iters);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_abort;
	sigaction(SIGABRT, &sa, NULL);
	if (sigsetjmp(sigenv, 1) == 0)
		caller_abrt();
	sa.sa_handler = on_ill;
	sigaction(SIGILL, &sa, NULL);
	if (sigsetjmp(sigenv, 1) == 0)
		caller_trap();
	before_trap();
	next_fn(1);
	after_chk();
	after_abrt();
	atexit(at_exit);
	caller_exit();
	after_exit();
}
