/* check_svg: the SVG flame graph writer's frames, labels, colours and options. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "formats/write/svg.h"
#include "tests/testutil.h"

static struct profile p;

static uint32_t frame(const char *name, int kind, uint64_t addr, const char *file, uint32_t line)
{
	struct pc_frame f;

	memset(&f, 0, sizeof(f));
	f.func = profile_str(&p, name);
	f.kind = (uint8_t)kind;
	f.addr = addr;
	f.symbolized = 1;
	f.file = profile_str(&p, file);
	f.line = line;
	return profile_frame(&p, &f);
}

/* A sample with its event: the SVG shows one event. */
static void sample(const char *comm, uint32_t pid, uint32_t tid, uint32_t node, uint64_t period,
		   uint16_t event)
{
	test_sample(&p, comm, pid, tid, node, period, 0, event);
}

static char *render(const struct write_options *o)
{
	return test_render(&p, svg_write, o);
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *s = hay; (s = strstr(s, needle)); s++)
		n++;
	return n;
}

/*
 * "my prog": main;work(line 10);do_syscall_64 and main;work(line 12);do_syscall_64,
 * 250 ns each, main;operator;weird name (inlined);libx.so+0x1f00 500 ns; "other":
 * main;work;tmpl<a&b> (JIT) 250 ns; and one page fault in "other": main.
 */
static void setup(void)
{
	struct pc_event e;
	uint32_t m, w1, w2, k, odd, unk, jit;
	uint32_t s1[3], s2[3], s3[3], s4[3];

	profile_init(&p);
	memset(&e, 0, sizeof(e));
	e.name = profile_str(&p, "cpu-clock");
	e.unit = PC_UNIT_NANOSECONDS;
	profile_add_event(&p, &e);
	e.name = profile_str(&p, "page-faults");
	e.unit = PC_UNIT_COUNT;
	profile_add_event(&p, &e);
	m = frame("main", FRAME_NATIVE, 0x100, "", 0);
	w1 = frame("work", FRAME_NATIVE, 0x200, "src/work.c", 10);
	w2 = frame("work", FRAME_NATIVE, 0x208, "src/work.c", 12);
	k = frame("do_syscall_64", FRAME_KERNEL, 0xffffffff81000000ULL, "", 0);
	odd = frame("operator;weird\nname", FRAME_INLINED, 0x300, "", 0);
	unk = frame("libx.so+0x1f00", FRAME_NATIVE, 0x400, "", 0);
	jit = frame("tmpl<a&b>", FRAME_JIT, 0x500, "", 0);
	s1[0] = m; s1[1] = w1; s1[2] = k;
	s2[0] = m; s2[1] = w2; s2[2] = k;
	s3[0] = m; s3[1] = odd; s3[2] = unk;
	s4[0] = m; s4[1] = w1; s4[2] = jit;
	sample("my prog", 10, 11, test_stack(&p, s1, 3), 250, 0);
	sample("my prog", 10, 12, test_stack(&p, s2, 3), 250, 0);
	sample("my prog", 10, 11, test_stack(&p, s3, 3), 500, 0);
	sample("other", 20, 20, test_stack(&p, s4, 3), 250, 0);
	sample("other", 20, 20, test_stack(&p, s4, 1), 1, 1);
}

static void teardown(void)
{
	profile_release(&p);
}

static void defaults(struct write_options *o)
{
	memset(o, 0, sizeof(*o));
	o->event = 0;
}

START_TEST(frames_are_prefix_sums_in_name_order)
{
	struct write_options o;
	char *out;

	defaults(&o);
	out = render(&o);
	/* 4 samples over 1180 px: 295 px each; siblings by name, operator before work */
	ck_assert_ptr_nonnull(strstr(out, "<g><title>all\n4 samples (100.00%)\nevery sample</title>"
				     "<rect x=\"10.00\" "));
	ck_assert_ptr_nonnull(strstr(out, "<g><title>my_prog\n3 samples (75.00%)\nthread</title>"
				     "<rect x=\"10.00\" "));
	ck_assert_ptr_nonnull(strstr(out, "<g><title>operator:weird name\n1 samples (25.00%)\n"
				     "inlined</title><rect x=\"10.00\" "));
	/* two addresses of work, lines 10 and 12: one frame */
	ck_assert_ptr_nonnull(strstr(out, "<g><title>work\n2 samples (50.00%)\nsource: src/work.c:10-12\n"
				     "native</title><rect x=\"305.00\" "));
	ck_assert_ptr_nonnull(strstr(out, "<g><title>do_syscall_64\n2 samples (50.00%)\nkernel</title>"
				     "<rect x=\"305.00\" "));
	ck_assert_ptr_nonnull(strstr(out, "<g><title>other\n1 samples (25.00%)\nthread</title>"
				     "<rect x=\"895.00\" "));
	/* markup in names is escaped, in the title and the label */
	ck_assert_ptr_nonnull(strstr(out, "<title>tmpl&lt;a&amp;b&gt;\n1 samples (25.00%)\nJIT</title>"));
	ck_assert_ptr_nonnull(strstr(out, ">tmpl&lt;a&amp;b&gt;</text>"));
	ck_assert_uint_eq(count(out, "<g><title>"), 11);
	ck_assert_ptr_nonnull(strstr(out, "left-out-frames=0"));
	/* no resource from elsewhere */
	ck_assert_ptr_null(strstr(out, "href"));
	ck_assert_ptr_null(strstr(out, "@import"));
	free(out);
}
END_TEST

START_TEST(colours_by_kind_stable_by_name)
{
	struct write_options o;
	char *out, *at;
	unsigned r, g, b;

	defaults(&o);
	out = render(&o);
	at = strstr(strstr(out, "<title>do_syscall_64\n"), "fill=\"#");
	ck_assert_int_eq(sscanf(at, "fill=\"#%2x%2x%2x", &r, &g, &b), 3);
	ck_assert(r >= 225 && g >= 150 && g <= 210 && b <= 50); /* kernel: orange */
	at = strstr(strstr(out, "<title>tmpl&lt;"), "fill=\"#");
	ck_assert_int_eq(sscanf(at, "fill=\"#%2x%2x%2x", &r, &g, &b), 3);
	ck_assert(g >= 190 && r <= 110 && b <= 110); /* JIT: green */
	at = strstr(strstr(out, "<title>operator:weird"), "fill=\"#");
	ck_assert_int_eq(sscanf(at, "fill=\"#%2x%2x%2x", &r, &g, &b), 3);
	ck_assert(r <= 110 && g >= 165 && b >= 165); /* inlined: aqua */
	/* both work frames (my_prog's and other's) have one colour */
	{
		char *a = strstr(strstr(out, "<title>work\n2 "), "fill=\"#");
		char *c = strstr(strstr(out, "<title>work\n1 "), "fill=\"#");

		ck_assert_int_eq(strncmp(a, c, 14), 0);
	}
	free(out);
}
END_TEST

START_TEST(labels_cut_to_the_frame)
{
	struct write_options o;
	char *out;

	defaults(&o);
	o.width = 200; /* 45 px a sample: 5 characters, 11 for 2 samples */
	out = render(&o);
	ck_assert_ptr_nonnull(strstr(out, ">ope..</text>"));
	ck_assert_ptr_nonnull(strstr(out, ">do_syscal..</text>"));
	ck_assert_ptr_nonnull(strstr(out, ">all</text>"));
	ck_assert_ptr_nonnull(strstr(out, "width=\"200\""));
	free(out);
}
END_TEST

START_TEST(narrow_frames_left_out_and_counted)
{
	struct write_options o;
	char *out;

	defaults(&o);
	o.width = 200;
	o.minwidth = 50; /* one sample, 45 px: out with what it holds */
	out = render(&o);
	ck_assert_uint_eq(count(out, "<g><title>"), 5);
	ck_assert_ptr_nonnull(strstr(out, "left-out-frames=6"));
	ck_assert_ptr_nonnull(strstr(out, "5 frames drawn, 6 frames narrower than 50 px not drawn"));
	ck_assert_ptr_null(strstr(out, "<title>other"));
	free(out);
}
END_TEST

START_TEST(weights_events_and_options)
{
	struct write_options o;
	char *out;

	defaults(&o);
	o.weight_period = 1;
	o.with_tid = 1;
	out = render(&o);
	ck_assert_ptr_nonnull(strstr(out, "<title>all\n1250 ns (100.00%)"));
	ck_assert_ptr_nonnull(strstr(out, "<title>my_prog-10/11\n750 ns (60.00%)"));
	ck_assert_ptr_nonnull(strstr(out, "UNIT='ns'"));
	free(out);

	defaults(&o);
	o.event = 1;
	o.inverted = 1;
	o.title = "faults & more";
	out = render(&o);
	ck_assert_ptr_nonnull(strstr(out, "<title>all\n1 samples (100.00%)"));
	ck_assert_ptr_nonnull(strstr(out, "1 samples of page-faults"));
	ck_assert_ptr_nonnull(strstr(out, ">faults &amp; more</text>"));
	/* icicle: the root at the top */
	ck_assert_ptr_nonnull(strstr(out, "TOP=66,INV=1"));
	ck_assert_ptr_nonnull(strstr(out, "every sample</title><rect x=\"10.00\" y=\"66\""));
	free(out);
}
END_TEST

/* Ill-formed UTF-8 in a name: each maximal ill-formed part is one U+FFFD, as the JSON
 * and pprof writers make it (a truncated 3-byte sequence is one part, not two). */
START_TEST(ill_formed_utf8_one_replacement)
{
	struct write_options o;
	uint32_t f[2];
	char *out;

	f[0] = frame("main", FRAME_NATIVE, 0x100, "", 0);
	f[1] = frame("bad\xe2\x82name", FRAME_NATIVE, 0x600, "", 0);
	sample("my prog", 10, 13, test_stack(&p, f, 2), 100000, 0);
	defaults(&o);
	out = render(&o);
	ck_assert_ptr_nonnull(strstr(out, "bad\xef\xbf\xbdname"));
	ck_assert_ptr_null(strstr(out, "\xef\xbf\xbd\xef\xbf\xbdname"));
	free(out);
}
END_TEST

/* Issue 21 B6: U+FFFE and U+FFFF are well-formed UTF-8 but no XML character: a
 * browser showed an XML error instead of the graph. They become U+FFFD too. */
START_TEST(xml_noncharacters_replaced)
{
	struct write_options o;
	uint32_t f[2];
	char *out;

	f[0] = frame("main", FRAME_NATIVE, 0x100, "", 0);
	f[1] = frame("a\xef\xbf\xbe" "b\xef\xbf\xbf" "c", FRAME_NATIVE, 0x600, "", 0);
	sample("my prog", 10, 13, test_stack(&p, f, 2), 100000, 0);
	defaults(&o);
	o.title = "t\xef\xbf\xbf";
	out = render(&o);
	ck_assert_ptr_nonnull(strstr(out, "a\xef\xbf\xbd" "b\xef\xbf\xbd" "c"));
	ck_assert_ptr_nonnull(strstr(out, ">t\xef\xbf\xbd</text>"));
	ck_assert_ptr_null(strstr(out, "\xef\xbf\xbe"));
	ck_assert_ptr_null(strstr(out, "\xef\xbf\xbf"));
	free(out);
}
END_TEST

START_TEST(no_samples)
{
	struct write_options o;
	char *out;

	profile_release(&p);
	profile_init(&p);
	defaults(&o);
	o.event = -1;
	out = render(&o);
	ck_assert_ptr_nonnull(strstr(out, ">no samples</text>"));
	ck_assert_ptr_nonnull(strstr(out, "left-out-frames=0"));
	ck_assert_uint_eq(count(out, "<g><title>"), 0);
	ck_assert_ptr_nonnull(strstr(out, "</svg>\n"));
	free(out);
}
END_TEST

/* A differential profile: BASE main;same 30, main;gone 30; NEW main;same 30,
 * main;grew 90 (samples). NEW's shape, gone at its BASE width (scaled by 2), dashed;
 * grew red, same and gone blue. */
START_TEST(differential_coloured_by_change)
{
	struct write_options o;
	struct write_diff wd;
	uint32_t m, st[2];
	char *out, *at;
	struct { const char *name; enum pc_side side; uint64_t n; } add[] = {
		{ "same", PC_SIDE_BASE, 30 }, { "gone", PC_SIDE_BASE, 30 },
		{ "same", PC_SIDE_NEW, 30 }, { "grew", PC_SIDE_NEW, 90 },
	};

	profile_release(&p);
	profile_init(&p);
	{
		struct pc_event e;

		memset(&e, 0, sizeof(e));
		e.name = profile_str(&p, "cpu-clock");
		profile_add_event(&p, &e);
	}
	m = frame("main", FRAME_NATIVE, 0x10, "", 0);
	for (size_t i = 0; i < 4; i++) {
		struct pc_sample sm;

		st[0] = m;
		st[1] = frame(add[i].name, FRAME_NATIVE, 0x20 + i, "", 0);
		memset(&sm, 0, sizeof(sm));
		sm.stack = test_stack(&p, st, 2);
		sm.count = add[i].n;
		sm.comm = profile_str(&p, "prog");
		sm.side = (uint8_t)add[i].side;
		profile_add_sample(&p, &sm);
	}
	defaults(&o);
	o.event = -1;
	memset(&wd, 0, sizeof(wd));
	wd.base_name = "a.data";
	wd.new_name = "b.data";
	wd.scale[0] = wd.scale[1] = 2.0;
	o.diff = &wd;
	out = render(&o);
	ck_assert_ptr_nonnull(strstr(out, "Differential Flame Graph: a.data -&gt; b.data"));
	/* grew: 0% -> 75%, the largest change: the deepest red */
	at = strstr(out, "<g><title>grew\n90 samples (75.00%)\nbase: 0.00%, new: 75.00%, change: +75.00 points\n");
	ck_assert_ptr_nonnull(at);
	ck_assert_ptr_nonnull(strstr(at, "fill=\"#ff1e1e\"/>"));
	/* gone: 50% -> 0, dashed, at BASE's scaled width (60 of 180 samples' room) */
	at = strstr(out, "<g><title>gone\n0 samples (0.00%)\nbase: 50.00%, new: 0.00%, change: -50.00 points (only in BASE)\n");
	ck_assert_ptr_nonnull(at);
	ck_assert_ptr_nonnull(strstr(at, "stroke-dasharray"));
	ck_assert_ptr_nonnull(strstr(at, "fill=\"#5d5dff\" stroke="));
	/* same: 50% -> 25%: blue, lighter than gone's */
	at = strstr(out, "<g><title>same\n30 samples (25.00%)\nbase: 50.00%, new: 25.00%, change: -25.00 points\n");
	ck_assert_ptr_nonnull(at);
	ck_assert_ptr_nonnull(strstr(at, "fill=\"#9d9dff\"/>"));
	free(out);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("svg");
	TCase *tc = tcase_create("core");
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, frames_are_prefix_sums_in_name_order);
	tcase_add_test(tc, colours_by_kind_stable_by_name);
	tcase_add_test(tc, labels_cut_to_the_frame);
	tcase_add_test(tc, narrow_frames_left_out_and_counted);
	tcase_add_test(tc, weights_events_and_options);
	tcase_add_test(tc, ill_formed_utf8_one_replacement);
	tcase_add_test(tc, xml_noncharacters_replaced);
	tcase_add_test(tc, no_samples);
	tcase_add_test(tc, differential_coloured_by_change);
	suite_add_tcase(s, tc);
	failed = run_suite(s);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
