/* check_reorder: the one pass's queue, records held and delivered as two passes give them. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "convert/reorder.h"
#include "tests/testutil.h"

/* What the deliver callback saw: each record's index and, for a string, its text. */
#define SEEN_MAX 4096
static struct seen {
	uint64_t index;
	uint32_t type;
	char text[64];
	uint8_t stack[64];
	size_t stack_len;
	uint64_t chain[4];
	size_t nchain;
} seen[SEEN_MAX];
static size_t nseen;
static size_t nlarge;  /* buffers handed to free_large */

static void on_deliver(void *arg, const struct perf_record *rec)
{
	struct seen *x = &seen[nseen++];

	(void)arg;
	ck_assert_uint_lt(nseen, SEEN_MAX + 1);
	memset(x, 0, sizeof(*x));
	x->index = rec->index;
	x->type = rec->type;
	ck_assert_ptr_null(rec->raw);
	if (rec->type == PERF_RECORD_COMM)
		snprintf(x->text, sizeof(x->text), "%s", rec->u.comm.comm);
	else if (rec->type == PERF_RECORD_MMAP2)
		snprintf(x->text, sizeof(x->text), "%s", rec->u.mmap.filename);
	else if (rec->type == PERF_RECORD_KSYMBOL)
		snprintf(x->text, sizeof(x->text), "%s", rec->u.ksymbol.name);
	else if (rec->type == PERF_RECORD_SAMPLE) {
		const struct perf_sample *s = &rec->u.sample;

		x->stack_len = (size_t)s->stack_user_dyn;
		if (s->stack_user)
			memcpy(x->stack, s->stack_user, x->stack_len);
		x->nchain = (size_t)s->nr_callchain;
		if (s->callchain)
			memcpy(x->chain, s->callchain, x->nchain * 8);
	}
}

static void on_free_large(void *arg, void *p)
{
	(void)arg;
	nlarge++;
	free(p);
}

static struct reorder *q;

static void setup(void)
{
	struct reorder_ops ops = { on_deliver, on_free_large, NULL };

	nseen = nlarge = 0;
	q = reorder_new(&ops);
}

static void teardown(void)
{
	reorder_free(q);
}

static void hold_plain(uint64_t index, uint64_t time)
{
	struct perf_record rec;

	memset(&rec, 0, sizeof(rec));
	rec.type = PERF_RECORD_SWITCH;
	rec.index = index;
	reorder_hold(q, &rec, time, 0);
}

START_TEST(flush_delivers_in_file_order_up_to_the_horizon)
{
	hold_plain(0, 100);
	hold_plain(1, 200);
	hold_plain(2, 150);   /* earlier than the one before it */
	hold_plain(3, 300);
	ck_assert_uint_eq(reorder_held(q), 4);
	reorder_flush(q, 99);
	ck_assert_uint_eq(nseen, 0);
	reorder_flush(q, 160);
	/* 200 is past the horizon: it stops there, the 150 behind it waits */
	ck_assert_uint_eq(nseen, 1);
	ck_assert_uint_eq(seen[0].index, 0);
	reorder_flush(q, 200);
	ck_assert_uint_eq(nseen, 3);
	ck_assert_uint_eq(seen[1].index, 1);
	ck_assert_uint_eq(seen[2].index, 2);
	reorder_flush(q, UINT64_MAX);
	ck_assert_uint_eq(nseen, 4);
	ck_assert_uint_eq(seen[3].index, 3);
	ck_assert_uint_eq(reorder_held(q), 0);
	ck_assert_uint_eq(reorder_bytes(q), 0);
}
END_TEST

START_TEST(equal_times_keep_the_order_they_came_in)
{
	for (uint64_t i = 0; i < 10; i++)
		hold_plain(i, 500);
	reorder_flush(q, 499);
	ck_assert_uint_eq(nseen, 0);
	reorder_flush(q, 500);
	ck_assert_uint_eq(nseen, 10);
	for (size_t i = 0; i < 10; i++)
		ck_assert_uint_eq(seen[i].index, i);
}
END_TEST

/* perf's rule: at a round's end, what came before the previous round's end is all
 * there is up to the largest time read by then */
START_TEST(rounds_flush_to_the_round_before)
{
	uint64_t h = 12345;

	reorder_seen(q, 10);
	reorder_seen(q, 30);
	reorder_seen(q, 20);
	ck_assert_int_eq(reorder_round_end(q, &h), 0); /* the first round: nothing sure */
	reorder_seen(q, 50);
	ck_assert_int_eq(reorder_round_end(q, &h), 1);
	ck_assert_uint_eq(h, 30);
	reorder_seen(q, 40);  /* late, but not later than what was read */
	ck_assert_int_eq(reorder_round_end(q, &h), 1);
	ck_assert_uint_eq(h, 50);
	ck_assert_int_eq(reorder_round_end(q, &h), 1); /* an empty round */
	ck_assert_uint_eq(h, 50);
}
END_TEST

START_TEST(strings_are_copied_when_held)
{
	struct perf_record rec;
	char comm[16] = "worker", path[32] = "/usr/lib/libc.so.6", ksym[16] = "bpf_prog_1";

	memset(&rec, 0, sizeof(rec));
	rec.type = PERF_RECORD_COMM;
	rec.index = 0;
	rec.u.comm.comm = comm;
	reorder_hold(q, &rec, 1, 0);
	memset(&rec, 0, sizeof(rec));
	rec.type = PERF_RECORD_MMAP2;
	rec.index = 1;
	rec.u.mmap.filename = path;
	reorder_hold(q, &rec, 2, 0);
	memset(&rec, 0, sizeof(rec));
	rec.type = PERF_RECORD_KSYMBOL;
	rec.index = 2;
	rec.u.ksymbol.name = ksym;
	reorder_hold(q, &rec, 3, 0);
	ck_assert_uint_gt(reorder_bytes(q), 0);
	/* the reader's buffer written over */
	memset(comm, 'x', sizeof(comm) - 1);
	memset(path, 'y', sizeof(path) - 1);
	memset(ksym, 'z', sizeof(ksym) - 1);
	reorder_flush(q, UINT64_MAX);
	ck_assert_uint_eq(nseen, 3);
	ck_assert_str_eq(seen[0].text, "worker");
	ck_assert_str_eq(seen[1].text, "/usr/lib/libc.so.6");
	ck_assert_str_eq(seen[2].text, "bpf_prog_1");
	ck_assert_uint_eq(reorder_bytes(q), 0);
}
END_TEST

static void hold_sample(uint64_t index, uint64_t time, const uint64_t *chain, size_t nchain,
			const uint8_t *stack, size_t len, int borrowed)
{
	struct perf_record rec;

	memset(&rec, 0, sizeof(rec));
	rec.type = PERF_RECORD_SAMPLE;
	rec.index = index;
	rec.u.sample.callchain = chain;
	rec.u.sample.nr_callchain = nchain;
	rec.u.sample.stack_user = stack;
	rec.u.sample.stack_user_size = len + 8; /* past dyn: not valid, not copied */
	rec.u.sample.stack_user_dyn = len;
	reorder_hold(q, &rec, time, borrowed);
}

START_TEST(sample_copies_survive_the_reader)
{
	uint64_t chain[3] = { 0xffffffff81000000ull, 0x401000, 0x401200 };
	uint8_t stack[40];

	for (size_t i = 0; i < sizeof(stack); i++)
		stack[i] = (uint8_t)i;
	hold_sample(7, 10, chain, 3, stack, 32, 0);
	memset(chain, 0, sizeof(chain));
	memset(stack, 0xee, sizeof(stack));
	reorder_flush(q, 10);
	ck_assert_uint_eq(nseen, 1);
	ck_assert_uint_eq(seen[0].nchain, 3);
	ck_assert_uint_eq(seen[0].chain[2], 0x401200);
	ck_assert_uint_eq(seen[0].stack_len, 32);
	for (size_t i = 0; i < 32; i++)
		ck_assert_uint_eq(seen[0].stack[i], i);
}
END_TEST

/* A borrowed stack stays in the reader's buffer until the reader says it will write
 * there; then it is copied, and only the stacks in that range are. */
START_TEST(borrowed_stack_copied_before_reuse)
{
	static uint8_t buf[256];

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 7);
	hold_sample(0, 10, NULL, 0, buf, 16, 1);       /* [0, 16) */
	hold_sample(1, 11, NULL, 0, buf + 128, 24, 1); /* [128, 152) */
	/* counted as if copied already: the limit does not depend on when */
	ck_assert_uint_eq(reorder_bytes(q), 16 + 24);
	reorder_unborrow(q, buf, buf + 64);
	memset(buf, 0, 64);
	reorder_flush(q, 10);
	ck_assert_uint_eq(nseen, 1);
	for (size_t i = 0; i < 16; i++)
		ck_assert_uint_eq(seen[0].stack[i], (uint8_t)(i * 7));
	/* the second is still borrowed: what the buffer holds now is what it reads */
	buf[128] = 0x55;
	reorder_flush(q, UINT64_MAX);
	ck_assert_uint_eq(nseen, 2);
	ck_assert_uint_eq(seen[1].stack[0], 0x55);
	ck_assert_uint_eq(seen[1].stack[1], (uint8_t)(129 * 7));
	ck_assert_uint_eq(reorder_bytes(q), 0);
}
END_TEST

/* The ring grows while records are held across it: none lost, none out of order. */
START_TEST(many_held_across_growth)
{
	uint64_t next = 0;

	for (uint64_t i = 0; i < 1000; i++) {
		hold_plain(i, i);
		if (i % 300 == 299)
			reorder_flush(q, i - 100);
		while (next < nseen) {
			ck_assert_uint_eq(seen[next].index, next);
			next++;
		}
	}
	ck_assert_uint_eq(nseen, 800);
	ck_assert_uint_eq(reorder_held(q), 200);
	reorder_flush(q, UINT64_MAX);
	ck_assert_uint_eq(nseen, 1000);
	for (size_t i = 0; i < 1000; i++)
		ck_assert_uint_eq(seen[i].index, i);
}
END_TEST

START_TEST(free_drops_what_is_held_undelivered)
{
	static uint8_t buf[64];
	char comm[8] = "held";
	struct perf_record rec;

	memset(&rec, 0, sizeof(rec));
	rec.type = PERF_RECORD_COMM;
	rec.u.comm.comm = comm;
	reorder_hold(q, &rec, 5, 0);
	hold_sample(1, 6, NULL, 0, buf, 16, 1);
	reorder_unborrow(q, buf, buf + sizeof(buf));
	reorder_free(q);
	q = NULL;
	ck_assert_uint_eq(nseen, 0);
	/* the ring and the stacks' block: the large buffers go to free_large */
	ck_assert_uint_eq(nlarge, 2);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("reorder");
	TCase *tc = tcase_create("core");
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, flush_delivers_in_file_order_up_to_the_horizon);
	tcase_add_test(tc, equal_times_keep_the_order_they_came_in);
	tcase_add_test(tc, rounds_flush_to_the_round_before);
	tcase_add_test(tc, strings_are_copied_when_held);
	tcase_add_test(tc, sample_copies_survive_the_reader);
	tcase_add_test(tc, borrowed_stack_copied_before_reuse);
	tcase_add_test(tc, many_held_across_growth);
	tcase_add_test(tc, free_drops_what_is_held_undelivered);
	suite_add_tcase(s, tc);
	failed = run_suite(s);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
