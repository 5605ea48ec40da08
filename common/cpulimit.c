/* cpulimit: a computation abandoned once it has used a bound of its thread's CPU time. */
#include "common/cpulimit.h"

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef sigev_notify_thread_id /* glibc 2.36 names the field only in the kernel's header */
#define sigev_notify_thread_id _sigev_un._tid
#endif

/* After the bound, the timer goes on firing every millisecond of CPU time: a signal
 * that came during a hold is not the last chance to cut. */
#define CPULIMIT_REPEAT_NS 1000000L

struct cl_thread {
	int made;                     /* 1: `timer` made; -1: it could not be */
	timer_t timer;
	sigjmp_buf env;
	volatile sig_atomic_t armed;  /* fn runs and may be cut here */
	volatile sig_atomic_t due;    /* the bound passed during a hold */
	volatile sig_atomic_t why;    /* CPULIMIT_CUT or CPULIMIT_STOPPED, for the jump */
	int timed;                    /* the run has a bound of time */
};

static _Thread_local struct cl_thread tl;
static pthread_once_t cl_once = PTHREAD_ONCE_INIT;
static pthread_key_t cl_key;
static int cl_signal, cl_ready;

static void on_limit(int sig)
{
	(void)sig;
	if (tl.armed) {
		tl.armed = 0;
		tl.why = CPULIMIT_CUT;
		siglongjmp(tl.env, 1);
	}
	tl.due = 1;
}

/* A thread that made a timer deletes it when it exits (a watcher's helper threads come
 * and go for months: each timer left would hold a kernel timer and a queued signal). */
static void thread_gone(void *unused)
{
	(void)unused;
	if (tl.made == 1)
		timer_delete(tl.timer);
	tl.made = 0;
}

static void setup(void)
{
	struct sigaction sa;

	/* a realtime signal nothing else in the process uses */
	cl_signal = SIGRTMIN + 6;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_limit;
	sigemptyset(&sa.sa_mask);
	/* SA_NODEFER: the handler leaves by siglongjmp() to a sigsetjmp() that saved no
	 * mask, so the signal must not be blocked while it runs */
	sa.sa_flags = SA_NODEFER | SA_RESTART;
	if (sigaction(cl_signal, &sa, NULL) != 0)
		return;
	if (pthread_key_create(&cl_key, thread_gone) != 0)
		return;
	cl_ready = 1;
}

static int make_timer(void)
{
	struct sigevent ev;

	pthread_once(&cl_once, setup);
	if (!cl_ready)
		return -1;
	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = SIGEV_THREAD_ID;
	ev.sigev_signo = cl_signal;
	ev.sigev_notify_thread_id = gettid();
	if (timer_create(CLOCK_THREAD_CPUTIME_ID, &ev, &tl.timer) != 0)
		return -1;
	if (pthread_setspecific(cl_key, (void *)1) != 0) {
		timer_delete(tl.timer);
		return -1;
	}
	return 1;
}

enum cpulimit_result cpulimit_run(void (*fn)(void *), void *arg, uint64_t ns)
{
	struct itimerspec on, off;

	memset(&on, 0, sizeof(on));
	memset(&off, 0, sizeof(off));
	if (ns) {
		if (!tl.made)
			tl.made = make_timer();
		if (tl.made < 0)
			return CPULIMIT_NO_TIMER;
		on.it_value.tv_sec = (time_t)(ns / 1000000000u);
		on.it_value.tv_nsec = (long)(ns % 1000000000u);
		on.it_interval.tv_nsec = CPULIMIT_REPEAT_NS;
	}
	tl.due = 0;
	tl.why = CPULIMIT_DONE;
	tl.timed = ns != 0;
	if (sigsetjmp(tl.env, 0) == 0) {
		if (ns && timer_settime(tl.timer, 0, &on, NULL) != 0)
			return CPULIMIT_NO_TIMER;
		/* without a bound of time only cpulimit_stop() jumps: held throughout */
		tl.armed = ns != 0;
		fn(arg);
		tl.armed = 0;
	}
	if (ns)
		timer_settime(tl.timer, 0, &off, NULL);
	tl.armed = 0;
	return (enum cpulimit_result)tl.why;
}

void cpulimit_hold(void)
{
	tl.armed = 0;
}

void cpulimit_release(void)
{
	if (!tl.timed)
		return;
	/* armed first: a signal from now on jumps itself; one that came before set `due` */
	tl.armed = 1;
	if (tl.due) {
		tl.armed = 0;
		tl.why = CPULIMIT_CUT;
		siglongjmp(tl.env, 1);
	}
}

void cpulimit_stop(void)
{
	tl.armed = 0;
	tl.why = CPULIMIT_STOPPED;
	siglongjmp(tl.env, 1);
}
