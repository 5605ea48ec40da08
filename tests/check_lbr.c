/* check_lbr: the raw stacks of --call-graph lbr samples, from their LBR call stack. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "convert/lbr.h"
#include "tests/testutil.h"

/* What the words after the kernel part must be: USER, the leaf, then USER, from for
 * each entry (a context of its own: exact, not a return address). */
static void check_user_part(const uint64_t *w, size_t nw, size_t at, uint64_t leaf,
			    const struct perf_branch_entry *e, size_t ne)
{
	ck_assert_uint_eq(nw, at + 2 + 2 * ne);
	ck_assert_uint_eq(w[at], PERF_CONTEXT_USER);
	ck_assert_uint_eq(w[at + 1], leaf);
	for (size_t i = 0; i < ne; i++) {
		ck_assert_uint_eq(w[at + 2 + 2 * i], PERF_CONTEXT_USER);
		ck_assert_uint_eq(w[at + 3 + 2 * i], e[i].from);
	}
}

/* Every sample of the LBR recording made from dw's dwarf one: its kernel part as
 * recorded, the frame-pointer walk after the user ip left out, the entries' call
 * sites in order. */
START_TEST(real_recording)
{
	struct cap c;
	struct perf_reader *r;
	struct perf_record rec;
	struct lbr *l;
	uint64_t samples = 0, walks = 0;

	cap_init(&c);
	r = perf_reader_open(top_path("testdata/lbr/dw-lbr.data"), &c.d);
	ck_assert_msg(r != NULL, "%s", cap_text(&c));
	l = lbr_new(r);
	ck_assert_ptr_nonnull(l);
	ck_assert_int_eq(lbr_event(perf_reader_event(r, 0)), 1);
	while (perf_reader_next(r, &rec) == 1) {
		const struct perf_sample *s = &rec.u.sample;
		struct sample_ctx x;
		const uint64_t *w;
		size_t nw = 0, user = 0;

		if (rec.type != PERF_RECORD_SAMPLE)
			continue;
		memset(&x, 0, sizeof(x));
		x.rec = &rec;
		x.ev = perf_reader_event(r, (size_t)rec.event);
		w = lbr_sample(l, &x, &nw);
		ck_assert_ptr_nonnull(w);
		while (s->callchain[user] != PERF_CONTEXT_USER)
			user++;
		ck_assert_int_eq(memcmp(w, s->callchain, user * 8), 0);
		check_user_part(w, nw, user, s->callchain[user + 1], s->branches,
				(size_t)s->nr_branches);
		walks += s->nr_callchain > user + 2;
		samples++;
	}
	ck_assert_uint_eq(samples, 1966);
	ck_assert_uint_gt(walks, 1000); /* frame-pointer walks, left out */
	ck_assert_uint_eq(lbr_stats(l)->samples, 1966);
	ck_assert_uint_eq(lbr_stats(l)->deepest, 19);
	lbr_free(l);
	perf_reader_close(r);
	fclose(c.f);
}
END_TEST

/* Made-up samples of an LBR event: the rules at their edges. */
START_TEST(edges)
{
	struct cap c;
	struct perf_reader *r;
	struct perf_record rec;
	struct perf_event_desc other;
	struct sample_ctx x;
	struct lbr *l;
	struct perf_sample *s = &rec.u.sample;
	const uint64_t *w;
	size_t nw = 0;
	uint64_t kchain[] = { PERF_CONTEXT_KERNEL, 0xffffffff81001000ULL, 0xffffffff81002000ULL,
			      PERF_CONTEXT_USER, 0x401010, 0x7ffc0000, 0x1 };
	uint64_t kthread[] = { PERF_CONTEXT_KERNEL, 0xffffffff81001000ULL };
	struct perf_branch_entry e[] = {
		{ 0x402000, 0x401000, 0 }, { 0x403000, 0x402f00, 0 }, { PERF_CONTEXT_KERNEL, 0, 0 },
	};

	cap_init(&c);
	r = perf_reader_open(top_path("testdata/lbr/dw-lbr.data"), &c.d);
	ck_assert_msg(r != NULL, "%s", cap_text(&c));
	l = lbr_new(r);
	memset(&rec, 0, sizeof(rec));
	rec.type = PERF_RECORD_SAMPLE;
	memset(&x, 0, sizeof(x));
	x.rec = &rec;
	x.ev = perf_reader_event(r, 0);

	/* taken in the kernel: its part kept, the user leaf the callchain's first user
	 * address (not the sample's ip, a kernel one), the walk after it left out */
	rec.cpumode = PERF_RECORD_MISC_KERNEL;
	s->ip = 0xffffffff81001000ULL;
	s->has_callchain = 1;
	s->callchain = kchain;
	s->nr_callchain = 7;
	s->has_branch_stack = 1;
	s->branches = e;
	s->nr_branches = 2;
	w = lbr_sample(l, &x, &nw);
	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(memcmp(w, kchain, 3 * 8), 0);
	check_user_part(w, nw, 3, 0x401010, e, 2);

	/* taken in user space, an empty LBR: the leaf alone, the sample's ip (a precise
	 * event's exact instruction), not the callchain's first user address (taken
	 * later, at the interrupt) */
	rec.cpumode = PERF_RECORD_MISC_USER;
	s->ip = 0x401018;
	s->callchain = kchain + 3;
	s->nr_callchain = 4;
	s->nr_branches = 0;
	w = lbr_sample(l, &x, &nw);
	check_user_part(w, nw, 0, 0x401018, e, 0);
	ck_assert_uint_eq(lbr_stats(l)->by_depth[0], 1);

	/* no callchain: the sample's ip is the leaf */
	s->has_callchain = 0;
	s->callchain = NULL;
	s->nr_callchain = 0;
	s->ip = 0x401020;
	s->nr_branches = 2;
	w = lbr_sample(l, &x, &nw);
	check_user_part(w, nw, 0, 0x401020, e, 2);

	/* taken in user space, a callchain without a user context (exclude_callchain_user):
	 * the ip and the LBR after it */
	s->has_callchain = 1;
	s->callchain = kchain;
	s->nr_callchain = 0;
	w = lbr_sample(l, &x, &nw);
	check_user_part(w, nw, 0, 0x401020, e, 2);
	s->has_callchain = 0;
	s->callchain = NULL;

	/* an entry whose call site is a context marker's value: left out, counted */
	s->nr_branches = 3;
	w = lbr_sample(l, &x, &nw);
	check_user_part(w, nw, 0, 0x401020, e, 2);
	ck_assert_uint_eq(lbr_stats(l)->bad_entries, 1);

	/* a callchain without a user context (a kernel thread's): as recorded */
	rec.cpumode = PERF_RECORD_MISC_KERNEL;
	s->has_callchain = 1;
	s->callchain = kthread;
	s->nr_callchain = 2;
	ck_assert_ptr_null(lbr_sample(l, &x, &nw));
	ck_assert_uint_eq(lbr_stats(l)->no_user, 1);

	/* a branch stack of another kind (perf record -b: any taken branch), or none */
	other = *x.ev;
	other.branch_sample_type = 1 << 3; /* ANY */
	x.ev = &other;
	s->callchain = kchain;
	s->nr_callchain = 7;
	ck_assert_ptr_null(lbr_sample(l, &x, &nw));
	ck_assert_int_eq(lbr_event(&other), 0);
	x.ev = perf_reader_event(r, 0);
	s->has_branch_stack = 0;
	ck_assert_ptr_null(lbr_sample(l, &x, &nw));
	ck_assert_uint_eq(lbr_stats(l)->samples, 5);

	lbr_free(l);
	lbr_free(NULL);
	perf_reader_close(r);
	fclose(c.f);
}
END_TEST

/* A recording without LBR events has no LBR state: nothing is changed. */
START_TEST(no_lbr)
{
	struct cap c;
	struct perf_reader *r;

	cap_init(&c);
	r = perf_reader_open(top_path("testdata/mt-g.data"), &c.d);
	ck_assert_msg(r != NULL, "%s", cap_text(&c));
	ck_assert_ptr_null(lbr_new(r));
	ck_assert_int_eq(lbr_event(perf_reader_event(r, 0)), 0);
	perf_reader_close(r);
	fclose(c.f);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("lbr");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, real_recording);
	tcase_add_test(tc, edges);
	tcase_add_test(tc, no_lbr);
	suite_add_tcase(s, tc);
	return run_suite(s) ? EXIT_FAILURE : EXIT_SUCCESS;
}
