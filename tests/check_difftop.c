/* check_difftop: a differential profile's top table and folded lines, on a profile
 * whose shares are known. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "formats/write/difftop.h"
#include "formats/write/folded.h"
#include "tests/testutil.h"

static struct profile p;
static struct write_diff wd;
static struct write_options wo;

static uint32_t frame(const char *name, uint64_t addr)
{
	struct pc_frame f;

	memset(&f, 0, sizeof(f));
	f.func = profile_str(&p, name);
	f.addr = addr;
	f.symbolized = 1;
	return profile_frame(&p, &f);
}

/* `n` samples of main;FN (main;FN;FN with `recurse`) on `side`, FN at address `addr`
 * (two builds: the same name at another address) */
static void add(enum pc_side side, const char *fn, uint64_t addr, int recurse, uint64_t n)
{
	uint32_t st[3] = { frame("main", addr & 0xf00), frame(fn, addr), frame(fn, addr) };
	struct pc_sample s;

	memset(&s, 0, sizeof(s));
	s.stack = test_stack(&p, st, recurse ? 3 : 2);
	s.count = n;
	s.period = n * 1000;
	s.comm = profile_str(&p, "prog");
	s.side = (uint8_t)side;
	profile_add_sample(&p, &s);
}

/*
 * BASE (100 samples): same 30, doubled 30, removed 40 (recursive). NEW (200 samples,
 * another build's addresses): same 50, doubled 100, added 50.
 */
static void setup(void)
{
	struct pc_event e;

	profile_init(&p);
	p.aggregate = 1;
	memset(&e, 0, sizeof(e));
	e.name = profile_str(&p, "cpu-clock");
	profile_add_event(&p, &e);
	add(PC_SIDE_BASE, "same", 0x110, 0, 30);
	add(PC_SIDE_BASE, "doubled", 0x120, 0, 30);
	add(PC_SIDE_BASE, "removed", 0x130, 1, 40);
	add(PC_SIDE_NEW, "same", 0x210, 0, 50);
	add(PC_SIDE_NEW, "doubled", 0x220, 0, 100);
	add(PC_SIDE_NEW, "added", 0x240, 0, 50);
	memset(&wd, 0, sizeof(wd));
	wd.base_name = "a.data";
	wd.new_name = "b.data";
	wd.scale[0] = wd.scale[1] = 2.0; /* NEW's total over BASE's */
	memset(&wo, 0, sizeof(wo));
	wo.event = -1;
	wo.diff = &wd;
}

static void teardown(void)
{
	profile_release(&p);
}

START_TEST(top_ranks_by_change_of_share)
{
	char *t = test_render(&p, difftop_write, &wo);
	const char *removed = strstr(t, "removed (only in BASE)");
	const char *added = strstr(t, "added (only in NEW)");
	const char *doubled = strstr(t, "| doubled\n");
	const char *same = strstr(t, "| same\n");

	ck_assert_ptr_nonnull(strstr(t, "a.data -> b.data: the 5 of 5 functions"));
	/* removed: 40% -> 0, recursion counted once in its total */
	ck_assert_ptr_nonnull(strstr(t, "    40.00%    0.00%  -40.00% |      40.00%    0.00%  -40.00% | removed (only in BASE)"));
	ck_assert_ptr_nonnull(strstr(t, "    30.00%   50.00%  +20.00% |      30.00%   50.00%  +20.00% | doubled\n"));
	ck_assert_ptr_nonnull(strstr(t, "    30.00%   25.00%   -5.00% |      30.00%   25.00%   -5.00% | same\n"));
	ck_assert_ptr_nonnull(strstr(t, "     0.00%   25.00%  +25.00% |       0.00%   25.00%  +25.00% | added (only in NEW)"));
	/* main changed nowhere: last */
	ck_assert_ptr_nonnull(strstr(t, "|     100.00%  100.00%   +0.00% | main\n"));
	ck_assert(removed && added && doubled && same);
	ck_assert(removed < added && added < doubled && doubled < same && same < strstr(t, "| main"));
	ck_assert_ptr_nonnull(strstr(t, "base: 100 samples, new: 200 samples (+100.0%)"));
	free(t);
	wd.top = 2;
	t = test_render(&p, difftop_write, &wo);
	ck_assert_ptr_nonnull(strstr(t, "the 2 of 5 functions"));
	ck_assert_ptr_null(strstr(t, "| doubled"));
	free(t);
}
END_TEST

START_TEST(folded_lines_base_scaled_then_new)
{
	char *t = test_render(&p, folded_write, &wo);

	/* by name, not address: the two builds' frames are one line each */
	ck_assert_str_eq(t, "prog;main;added 0 50\n"
			    "prog;main;doubled 60 100\n"
			    "prog;main;removed;removed 80 0\n"
			    "prog;main;same 60 50\n");
	free(t);
	wd.scale[0] = 1.0;
	t = test_render(&p, folded_write, &wo);
	ck_assert_ptr_nonnull(strstr(t, "prog;main;doubled 30 100\n"));
	free(t);
	wo.weight_period = 1;
	t = test_render(&p, folded_write, &wo);
	ck_assert_ptr_nonnull(strstr(t, "prog;main;doubled 60000 100000\n")); /* scale[1] */
	free(t);
	/* not a differential profile: one column, both sides summed */
	wo.diff = NULL;
	wo.weight_period = 0;
	t = test_render(&p, folded_write, &wo);
	ck_assert_ptr_nonnull(strstr(t, "prog;main;doubled 130\n"));
	free(t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("difftop");
	TCase *tc = tcase_create("core");
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, top_ranks_by_change_of_share);
	tcase_add_test(tc, folded_lines_base_scaled_then_new);
	suite_add_tcase(s, tc);
	failed = run_suite(s);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
