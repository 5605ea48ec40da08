/* cpulimit: a computation abandoned once it has used a bound of its thread's CPU time. */
#ifndef PERFCONV_CPULIMIT_H
#define PERFCONV_CPULIMIT_H

#include <stdint.h>

enum cpulimit_result {
	CPULIMIT_DONE = 0,  /* fn returned */
	CPULIMIT_CUT,       /* it used its CPU time: abandoned where it was */
	CPULIMIT_STOPPED,   /* it called cpulimit_stop() */
	CPULIMIT_NO_TIMER,  /* no timer could be made for this thread: fn not run */
};

/*
 * Run fn(arg) on the calling thread; once it has used `ns` nanoseconds of the
 * thread's CPU time, it is abandoned where it is. `ns` 0: no bound of time, only
 * cpulimit_stop() ends it early.
 *
 * The cut: a POSIX timer of the thread's CPU clock (made on the thread's first call,
 * deleted when the thread exits) sends the thread a realtime signal, whose handler
 * siglongjmp()s out of fn. The kernel checks CPU timers on its tick, so fn may run up
 * to a tick (4 ms at HZ=250) past `ns`. Therefore fn must leave nothing behind that
 * matters if stopped at any instruction: no malloc, no lock, no file, no state outside
 * memory the caller owns and throws away on a cut, except between cpulimit_hold() and
 * cpulimit_release(). A library routine qualifies only when its code is known to
 * allocate nothing (libiberty's callback demanglers keep their arrays on the stack).
 * Not nested: fn must not call cpulimit_run().
 */
enum cpulimit_result cpulimit_run(void (*fn)(void *), void *arg, uint64_t ns);

/* From fn: no cut until cpulimit_release() (around a malloc); a cut that came due
 * meanwhile happens in cpulimit_release(). */
void cpulimit_hold(void);
void cpulimit_release(void);

/* From fn, outside a hold: abandon it now; cpulimit_run() returns CPULIMIT_STOPPED. */
_Noreturn void cpulimit_stop(void);

#endif
