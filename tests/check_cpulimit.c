/* check_cpulimit: a computation cut by its thread's CPU time, stopped, held, and its timer gone with its thread. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cpulimit.h"
#include "tests/testutil.h"

/* Spins until cut: never returns by itself. */
static void spin(void *arg)
{
	volatile unsigned long *n = arg;

	for (;;)
		(*n)++;
}

static void add_one(void *arg)
{
	(*(int *)arg)++;
}

static void stop_at_once(void *arg)
{
	*(int *)arg = 1;
	cpulimit_stop();
}

/* Spins inside a hold until the bound has passed (the timer's signal seen while held),
 * then releases: the cut comes at the release. */
struct held {
	volatile unsigned long spins;
	int released;
};

static void spin_held(void *arg)
{
	struct held *h = arg;

	cpulimit_hold();
	/* about 20 ms of CPU time: past the 2 ms bound and a tick, whatever the HZ */
	for (unsigned long i = 0; i < 50000000ul; i++)
		h->spins++;
	h->released = 1;
	cpulimit_release();
	h->released = 2; /* not reached: the cut came due during the hold */
}

START_TEST(cut_stop_done)
{
	volatile unsigned long n = 0;
	int x = 0;

	/* cut after 2 ms of CPU time (the test's own timeout is what would catch a
	 * missing cut: spin never returns) */
	ck_assert_int_eq(cpulimit_run(spin, (void *)&n, 2000000), CPULIMIT_CUT);
	ck_assert_uint_gt(n, 0);
	ck_assert_int_eq(cpulimit_run(add_one, &x, 2000000), CPULIMIT_DONE);
	ck_assert_int_eq(x, 1);
	x = 0;
	ck_assert_int_eq(cpulimit_run(stop_at_once, &x, 2000000), CPULIMIT_STOPPED);
	ck_assert_int_eq(x, 1);
	/* no bound of time: only a stop ends it early */
	x = 0;
	ck_assert_int_eq(cpulimit_run(add_one, &x, 0), CPULIMIT_DONE);
	ck_assert_int_eq(cpulimit_run(stop_at_once, &x, 0), CPULIMIT_STOPPED);
	/* again and again on the same thread: the timer is the thread's, armed each time */
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(cpulimit_run(spin, (void *)&n, 1000000), CPULIMIT_CUT);
}
END_TEST

START_TEST(hold_then_release)
{
	struct held h;

	memset(&h, 0, sizeof(h));
	ck_assert_int_eq(cpulimit_run(spin_held, &h, 2000000), CPULIMIT_CUT);
	ck_assert_int_eq(h.released, 1);
	ck_assert_uint_eq(h.spins, 50000000ul);
}
END_TEST

/* The process's POSIX timers, as /proc/self/timers lists them. */
static int timers(void)
{
	FILE *f = fopen("/proc/self/timers", "r");
	char line[256];
	int n = 0;

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		n += strncmp(line, "ID:", 3) == 0;
	fclose(f);
	return n;
}

static void *thread_main(void *arg)
{
	volatile unsigned long n = 0;

	*(int *)arg = cpulimit_run(spin, (void *)&n, 1000000);
	*((int *)arg + 1) = timers();
	return NULL;
}

/* A thread's timer is deleted when it exits: a watcher's helper threads come and go
 * for months. */
START_TEST(timer_gone_with_thread)
{
	int before = timers(), got[2] = { -1, -1 };

	for (int i = 0; i < 5; i++) {
		pthread_t t;

		ck_assert_int_eq(pthread_create(&t, NULL, thread_main, got), 0);
		ck_assert_int_eq(pthread_join(t, NULL), 0);
		ck_assert_int_eq(got[0], CPULIMIT_CUT);
		ck_assert_int_eq(got[1], before + 1); /* its own, while it ran */
		ck_assert_int_eq(timers(), before);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cpulimit");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, cut_stop_done);
	tcase_add_test(tc, hold_then_release);
	tcase_add_test(tc, timer_gone_with_thread);
	suite_add_tcase(s, tc);
	return run_suite(s) ? EXIT_FAILURE : EXIT_SUCCESS;
}
