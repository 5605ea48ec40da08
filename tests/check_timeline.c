/* check_timeline: every sample back, by thread and time, from memory and from runs spooled. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/model/timeline.h"
#include "tests/testutil.h"

static uint64_t rng = 88172645463325252ULL;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/*
 * n samples of 5 threads as perf writes them: each thread's times rising but for
 * the disorder of per-CPU buffers flushed in rounds (a sample up to 200 ahead of its
 * place), some at the very time of the one before. Each sample's stack is its index,
 * so that the order they come back in says which one each is.
 */
static void add_samples(struct pc_timeline *t, uint32_t n)
{
	uint64_t clock[5] = { 0 };

	for (uint32_t i = 0; i < n; i++) {
		struct pc_sample s;
		uint32_t th = (uint32_t)(next_rand() % 5);

		memset(&s, 0, sizeof(s));
		s.pid = 100 + th / 2;
		s.tid = 1000 + th;
		if (next_rand() % 4)
			clock[th] += 1 + next_rand() % 1000;
		s.time = clock[th] + (next_rand() % 16 == 0 ? next_rand() % 200 : 0);
		s.stack = i;
		s.event = (uint16_t)(i % 2);
		s.period = 1;
		s.count = 1;
		timeline_add(t, &s);
	}
}

/* Each thread's samples come back in time order, equal times in the order added,
 * every sample once, and threads by pid then tid. */
static void check_order(struct pc_timeline *t, uint32_t n)
{
	uint8_t *seen = calloc(n, 1);
	uint64_t total = 0;

	timeline_finish(t);
	ck_assert_int_eq(timeline_error(t), 0);
	ck_assert_uint_eq(timeline_nthreads(t), 5);
	for (size_t i = 0; i < timeline_nthreads(t); i++) {
		const struct tl_thread *th = timeline_thread(t, i);
		struct timeline_cursor c;
		const struct pc_sample *s;
		uint64_t time = 0, k = 0;
		uint32_t stack = 0;

		if (i) {
			const struct tl_thread *b = timeline_thread(t, i - 1);

			ck_assert(b->pid < th->pid || (b->pid == th->pid && b->tid < th->tid));
		}
		timeline_cursor_init(&c, t, i);
		while ((s = timeline_cursor_next(&c)) != NULL) {
			ck_assert_uint_eq(s->tid, th->tid);
			if (k) {
				ck_assert_uint_ge(s->time, time);
				if (s->time == time)
					ck_assert_uint_gt(s->stack, stack);
			}
			ck_assert_uint_lt(s->stack, n);
			ck_assert_int_eq(seen[s->stack], 0);
			seen[s->stack] = 1;
			time = s->time;
			stack = s->stack;
			k++;
		}
		timeline_cursor_release(&c);
		ck_assert_uint_eq(k, th->n);
		total += k;
	}
	ck_assert_uint_eq(total, n);
	free(seen);
}

START_TEST(in_memory)
{
	struct pc_timeline *t = timeline_new();

	add_samples(t, 20000);
	check_order(t, 20000);
	timeline_free(t);
}
END_TEST

/* Ten times one run's samples: runs sorted, spooled and merged back. */
START_TEST(spooled_runs)
{
	struct pc_timeline *t = timeline_new();

	add_samples(t, 330000);
	check_order(t, 330000);
	timeline_free(t);
}
END_TEST

/* The first sample (time order, the first added among equal times) of each event and
 * of all, and the threads seen with their latest times, before the merge. */
START_TEST(first_and_seen)
{
	struct pc_timeline *t = timeline_new();
	struct pc_sample s;
	uint64_t time;
	uint32_t pid, tid;
	int ev;

	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(timeline_first(t, -1, &time, &ev), 0);
	s.pid = 1, s.tid = 2, s.time = 500, s.event = 1;
	timeline_add(t, &s);
	s.tid = 3, s.time = 300, s.event = 0;
	timeline_add(t, &s);
	s.time = 300, s.event = 1;
	timeline_add(t, &s);
	s.tid = 2, s.time = 900, s.event = 0;
	timeline_add(t, &s);
	ck_assert_int_eq(timeline_first(t, -1, &time, &ev), 1);
	ck_assert_uint_eq(time, 300);
	ck_assert_int_eq(ev, 0);
	ck_assert_int_eq(timeline_first(t, 1, &time, &ev), 1);
	ck_assert_uint_eq(time, 300);
	ck_assert_int_eq(ev, 1);
	ck_assert_int_eq(timeline_first(t, 7, &time, &ev), 0);
	ck_assert_uint_eq(timeline_nseen(t), 2);
	timeline_seen(t, 0, &pid, &tid, &time);
	ck_assert_uint_eq(tid, 2);
	ck_assert_uint_eq(time, 900);
	timeline_seen(t, 1, &pid, &tid, &time);
	ck_assert_uint_eq(tid, 3);
	ck_assert_uint_eq(time, 300);
	timeline_free(t);
}
END_TEST

/* The stack tree rebuilt twice: samples come back with the ids of the last one. */
START_TEST(stacks_remapped)
{
	struct pc_timeline *t = timeline_new();
	struct pc_sample s;
	const uint32_t once[4] = { 0, 3, 1, 2 }, twice[4] = { 0, 1, 3, 2 };
	const uint32_t want[3] = { 2, 1, 3 }; /* 1 -> 3 -> 2, 2 -> 1 -> 1, 3 -> 2 -> 3 */
	struct timeline_cursor c;
	const struct pc_sample *x;
	uint32_t k = 0;

	memset(&s, 0, sizeof(s));
	for (uint32_t i = 1; i <= 3; i++) {
		s.stack = i;
		s.time = i;
		timeline_add(t, &s);
	}
	timeline_remap(t, once, 4);
	timeline_remap(t, twice, 4);
	timeline_finish(t);
	timeline_cursor_init(&c, t, 0);
	while ((x = timeline_cursor_next(&c)) != NULL)
		ck_assert_uint_eq(x->stack, want[k++]);
	ck_assert_uint_eq(k, 3);
	timeline_cursor_release(&c);
	timeline_free(t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("timeline");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, in_memory);
	tcase_add_test(tc, spooled_runs);
	tcase_add_test(tc, first_and_seen);
	tcase_add_test(tc, stacks_remapped);
	suite_add_tcase(s, tc);
	return run_suite(s) ? EXIT_FAILURE : EXIT_SUCCESS;
}
