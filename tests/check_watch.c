/* check_watch: what --max-backlog and --keep-sent take, and where a watched chunk's
 * window starts: at the end of the chunk before it, or at its own first sample. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "upload/watch.h"
#include "upload/watchopts.h"
#include "tests/testutil.h"

START_TEST(backlog_values)
{
	uint64_t chunks = 7, bytes = 7;

	ck_assert_int_eq(watch_parse_backlog("500", &chunks, &bytes), 0);
	ck_assert_uint_eq(chunks, 500);
	ck_assert_uint_eq(bytes, 0);
	ck_assert_int_eq(watch_parse_backlog("1G", &chunks, &bytes), 0);
	ck_assert_uint_eq(chunks, 0);
	ck_assert_uint_eq(bytes, 1ULL << 30);
	ck_assert_int_eq(watch_parse_backlog("512M", &chunks, &bytes), 0);
	ck_assert_uint_eq(bytes, 512ULL << 20);
	ck_assert_int_eq(watch_parse_backlog("20K", &chunks, &bytes), 0);
	ck_assert_uint_eq(bytes, 20480);
	ck_assert_int_eq(watch_parse_backlog("2GiB", &chunks, &bytes), 0);
	ck_assert_uint_eq(bytes, 2ULL << 30);
	ck_assert_int_eq(watch_parse_backlog("1TB", &chunks, &bytes), 0);
	ck_assert_uint_eq(bytes, 1ULL << 40);
	/* no limit */
	ck_assert_int_eq(watch_parse_backlog("0", &chunks, &bytes), 0);
	ck_assert_uint_eq(chunks + bytes, 0);
	ck_assert_int_eq(watch_parse_backlog("none", &chunks, &bytes), 0);
	ck_assert_uint_eq(chunks + bytes, 0);
	/* not a count or a size */
	ck_assert_int_eq(watch_parse_backlog("", &chunks, &bytes), -1);
	ck_assert_int_eq(watch_parse_backlog("-1", &chunks, &bytes), -1);
	ck_assert_int_eq(watch_parse_backlog("1X", &chunks, &bytes), -1);
	ck_assert_int_eq(watch_parse_backlog("1Gb", &chunks, &bytes), -1);
	ck_assert_int_eq(watch_parse_backlog("7d", &chunks, &bytes), -1);
	ck_assert_int_eq(watch_parse_backlog("99999999999999999999", &chunks, &bytes), -1);
	ck_assert_int_eq(watch_parse_backlog("99999999999T", &chunks, &bytes), -1);
}
END_TEST

START_TEST(keep_values)
{
	uint64_t bytes = 0;
	int64_t age = 0;

	ck_assert_int_eq(watch_parse_keep("1G", &bytes, &age), 0);
	ck_assert_uint_eq(bytes, 1ULL << 30);
	ck_assert_int_eq(age, 0);
	ck_assert_int_eq(watch_parse_keep("7d", &bytes, &age), 0);
	ck_assert_int_eq(age, 7 * 86400);
	ck_assert_uint_eq(bytes, 1ULL << 30); /* untouched */
	ck_assert_int_eq(watch_parse_keep("12h", &bytes, &age), 0);
	ck_assert_int_eq(age, 12 * 3600);
	/* m is minutes, M mebibytes */
	ck_assert_int_eq(watch_parse_keep("30m", &bytes, &age), 0);
	ck_assert_int_eq(age, 1800);
	ck_assert_int_eq(watch_parse_keep("30min", &bytes, &age), 0);
	ck_assert_int_eq(age, 1800);
	ck_assert_int_eq(watch_parse_keep("30M", &bytes, &age), 0);
	ck_assert_uint_eq(bytes, 30ULL << 20);
	ck_assert_int_eq(watch_parse_keep("90s", &bytes, &age), 0);
	ck_assert_int_eq(age, 90);
	ck_assert_int_eq(watch_parse_keep("2w", &bytes, &age), 0);
	ck_assert_int_eq(age, 14 * 86400);
	ck_assert_int_eq(watch_parse_keep("all", &bytes, &age), 0);
	ck_assert_uint_eq(bytes, 0);
	ck_assert_int_eq(age, 0);
	/* a bare number could be bytes or seconds; nothing kept is --delete-sent */
	ck_assert_int_eq(watch_parse_keep("5", &bytes, &age), -1);
	ck_assert_int_eq(watch_parse_keep("0d", &bytes, &age), -1);
	ck_assert_int_eq(watch_parse_keep("0G", &bytes, &age), -1);
	ck_assert_int_eq(watch_parse_keep("7y", &bytes, &age), -1);
	ck_assert_int_eq(watch_parse_keep("d", &bytes, &age), -1);
	ck_assert_int_eq(watch_parse_keep("9999999999999999999d", &bytes, &age), -1);
}
END_TEST

/* Two chunks of one perf record -k 1 run, 20 s each; samples 19.55 s of each. */
static void run_of_two(struct watch_span *a, struct watch_span *b)
{
	memset(a, 0, sizeof(*a));
	a->run = 193;
	a->has_clock_ref = 1;
	a->clock_ref_wall = 1777636800000000000ULL;
	a->clock_ref_clock = 5000000000000ULL;
	a->first_clock = 5000100000000ULL;
	a->last_clock = a->first_clock + 19550000000ULL;
	a->start_ns = 1777636800100000000LL;
	a->end_ns = a->start_ns + 19550000000LL;
	*b = *a;
	b->first_clock = a->first_clock + 20000000000ULL;
	b->last_clock = b->first_clock + 19550000000ULL;
	b->start_ns = a->start_ns + 20000000000LL;
	b->end_ns = b->start_ns + 19550000000LL;
}

START_TEST(windows)
{
	struct watch_span a, b;

	run_of_two(&a, &b);
	/* the first chunk: its own first sample */
	ck_assert_int_eq(watch_window_start(NULL, &a), a.start_ns);
	/* the next: where the first ended, so that no time falls between them */
	ck_assert_int_eq(watch_window_start(&a, &b), a.end_ns);
	/* sent/'s newest after a restart: its run and end only */
	{
		struct watch_span s;

		memset(&s, 0, sizeof(s));
		s.run = 193;
		s.end_ns = a.end_ns;
		ck_assert_int_eq(watch_window_start(&s, &b), a.end_ns);
		s.run = 0; /* a header that gave no id */
		ck_assert_int_eq(watch_window_start(&s, &b), b.start_ns);
	}
	/* another perf record: its first event has another id */
	run_of_two(&a, &b);
	b.run = 201;
	ck_assert_int_eq(watch_window_start(&a, &b), b.start_ns);
	/* another perf record with the same id (after a boot): another CLOCK_DATA */
	run_of_two(&a, &b);
	b.clock_ref_wall += 86400000000000ULL;
	ck_assert_int_eq(watch_window_start(&a, &b), b.start_ns);
	/* ... or, without -k, perf's clock going back */
	run_of_two(&a, &b);
	a.has_clock_ref = b.has_clock_ref = 0;
	b.first_clock = 1000;
	ck_assert_int_eq(watch_window_start(&a, &b), b.start_ns);
	/* a copy of the same chunk (the same times): its own */
	run_of_two(&a, &b);
	ck_assert_int_eq(watch_window_start(&a, &a), a.start_ns);
	/* the one before ends after this one does (estimated times): its own */
	run_of_two(&a, &b);
	a.end_ns = b.end_ns + 1;
	ck_assert_int_eq(watch_window_start(&a, &b), b.start_ns);
	/* without -k the wall times are estimates that may overlap (a chunk whose run's
	 * clock is not known: the watcher keeps one clock a run, from its first chunk):
	 * the window holds the chunk's own samples, each timed in it (Datadog's
	 * Timeline), so it starts at its first */
	run_of_two(&a, &b);
	a.has_clock_ref = b.has_clock_ref = 0;
	a.end_ns = b.start_ns + 300000000;
	ck_assert_int_eq(watch_window_start(&a, &b), b.start_ns);
	/* ... and where they leave a gap, the window starts where the one before ended */
	a.end_ns = b.start_ns - 300000000;
	ck_assert_int_eq(watch_window_start(&a, &b), a.end_ns);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("watch");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, backlog_values);
	tcase_add_test(tc, keep_values);
	tcase_add_test(tc, windows);
	suite_add_tcase(s, tc);
	return run_suite(s) ? EXIT_FAILURE : EXIT_SUCCESS;
}
