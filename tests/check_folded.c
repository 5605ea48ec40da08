/* check_folded: the folded writer's lines, as flame graph tools read them. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "formats/write/folded.h"
#include "formats/write/frametext.h"
#include "formats/write/samples.h"
#include "tests/testutil.h"

static struct profile p;

static uint32_t frame(const char *name, int kind, uint64_t addr, int symbolized)
{
	struct pc_frame f;

	memset(&f, 0, sizeof(f));
	f.func = profile_str(&p, name);
	f.kind = (uint8_t)kind;
	f.addr = addr;
	f.symbolized = (uint8_t)symbolized;
	return profile_frame(&p, &f);
}

/* A sample at a time: the samples writer shows it. */
static void sample(const char *comm, uint32_t pid, uint32_t tid, uint32_t node, uint64_t period,
		   uint64_t time)
{
	test_sample(&p, comm, pid, tid, node, period, time, 0);
}

static char *render(const struct write_options *o, profile_writer w)
{
	return test_render(&p, w, o);
}

/* The fixture's profile into `p`; with `aggregate`, each sample is added `times` times. */
static void build(int aggregate, int times)
{
	struct pc_event e;
	uint32_t main_f, work, work2, leaf_k, odd, unk;
	uint32_t s1[3], s2[3], s3[3], s4[2];

	profile_init(&p);
	p.aggregate = aggregate;
	memset(&e, 0, sizeof(e));
	e.name = profile_str(&p, "cpu-clock");
	profile_add_event(&p, &e);
	main_f = frame("main", FRAME_NATIVE, 0x100, 1);
	work = frame("work", FRAME_NATIVE, 0x200, 1);
	work2 = frame("work", FRAME_NATIVE, 0x208, 1); /* same function, another address */
	leaf_k = frame("do_syscall_64", FRAME_KERNEL, 0xffffffff81000000ULL, 1);
	odd = frame("operator;weird\nname", FRAME_INLINED, 0x300, 1);
	unk = frame("libx.so+0x1f00", FRAME_NATIVE, 0x400, 0);
	s1[0] = main_f; s1[1] = work; s1[2] = leaf_k;
	s2[0] = main_f; s2[1] = work2; s2[2] = leaf_k;
	s3[0] = main_f; s3[1] = odd; s3[2] = unk;
	s4[0] = main_f; s4[1] = work;
	for (int k = 0; k < times; k++) {
		sample("my prog", 10, 11, test_stack(&p, s1, 3), 250, 3 + 10 * (uint64_t)k);
		sample("my prog", 10, 12, test_stack(&p, s2, 3), 250, 1 + 10 * (uint64_t)k);
		sample("my prog", 10, 11, test_stack(&p, s3, 3), 500, 2 + 10 * (uint64_t)k);
		sample("other", 20, 20, test_stack(&p, s4, 2), 250, 4 + 10 * (uint64_t)k);
	}
}

static void setup(void)
{
	build(0, 1);
}

static void teardown(void)
{
	profile_release(&p);
}

/* A frame's text: "name (file:line)" with --srcline, the file's base name only, and cut
 * where snprintf would cut it in a buffer too short (the writer builds it piece by
 * piece). */
START_TEST(frame_text_as_snprintf_writes_it)
{
	struct write_options o;
	struct pc_frame f;
	char buf[64], want[64];
	size_t sizes[] = { 1, 2, 5, 12, 13, 14, 19, 20, 21, 22, 23, 24, 64 };

	memset(&o, 0, sizeof(o));
	memset(&f, 0, sizeof(f));
	f.func = profile_str(&p, "do;work");
	f.file = profile_str(&p, "/src/lib/work.c");
	f.line = 4096;
	frame_text(&p, &f, &o, buf, sizeof(buf));
	ck_assert_str_eq(buf, "do:work");
	o.srcline = 1;
	frame_text(&p, &f, &o, buf, sizeof(buf));
	ck_assert_str_eq(buf, "do:work (work.c:4096)");
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		memset(buf, 'x', sizeof(buf));
		snprintf(want, sizes[i], "%s (%s:%u)", "do:work", "work.c", 4096u);
		frame_text(&p, &f, &o, buf, sizes[i]);
		ck_assert_str_eq(buf, want);
	}
	f.line = 0; /* no line: the name alone */
	frame_text(&p, &f, &o, buf, sizeof(buf));
	ck_assert_str_eq(buf, "do:work");
}
END_TEST

/* Issue 12 B4: two names of 6,000 bytes that differ in their last byte (C++ templates,
 * JIT names) stay two lines (they were cut at 4,095 bytes and merged); a stack of 3,000
 * frames keeps them all (it was cut at 1,024), in folded and samples output. */
START_TEST(long_names_and_deep_stacks_whole)
{
	struct write_options o;
	char *name = malloc(6001), *out, *line;
	uint32_t a, b, deep[3000], sa[2], sb[2];
	size_t semis = 0;

	memset(&o, 0, sizeof(o));
	o.event = -1;
	memset(name, 'T', 6000);
	name[6000] = 0;
	a = frame(name, FRAME_NATIVE, 0x500, 1);
	name[5999] = 'U';
	b = frame(name, FRAME_NATIVE, 0x600, 1);
	sa[0] = sb[0] = frame("main", FRAME_NATIVE, 0x100, 1);
	sa[1] = a;
	sb[1] = b;
	for (int i = 0; i < 3000; i++)
		deep[i] = frame(i % 2 ? "ping" : "pong", FRAME_NATIVE, 0x700 + (uint64_t)i % 2, 1);
	sample("long", 30, 30, test_stack(&p, sa, 2), 1, 100);
	sample("long", 30, 30, test_stack(&p, sb, 2), 1, 101);
	sample("deep", 31, 31, test_stack(&p, deep, 3000), 1, 102);
	out = render(&o, folded_write);
	ck_assert_ptr_nonnull(strstr(out, name)); /* ...U */
	name[5999] = 'T';
	ck_assert_ptr_nonnull(strstr(out, name)); /* ...T */
	line = strstr(out, "deep;");
	ck_assert_ptr_nonnull(line);
	for (; *line && *line != '\n'; line++)
		semis += *line == ';';
	ck_assert_uint_eq(semis, 3000);
	free(out);
	out = render(&o, samples_write);
	line = strstr(out, "pong;ping");
	ck_assert_ptr_nonnull(line);
	for (semis = 0; *line && *line != '\n'; line++)
		semis += *line == ';';
	ck_assert_uint_eq(semis, 2999);
	ck_assert_ptr_nonnull(strstr(out, name));
	free(out);
	free(name);
}
END_TEST

START_TEST(lines_sorted_merged_and_safe)
{
	struct write_options o;
	char *out;

	memset(&o, 0, sizeof(o));
	o.event = -1;
	out = render(&o, folded_write);
	ck_assert_str_eq(out, "my_prog;main;operator:weird name;libx.so+0x1f00 1\n"
			      "my_prog;main;work;do_syscall_64 2\n"
			      "other;main;work 1\n");
	free(out);
}
END_TEST

START_TEST(period_weights_and_annotations)
{
	struct write_options o;
	char *out;

	memset(&o, 0, sizeof(o));
	o.event = -1;
	o.weight_period = 1;
	o.annotate = 1;
	out = render(&o, folded_write);
	ck_assert_str_eq(out, "my_prog;main;operator:weird name_[i];libx.so+0x1f00 500\n"
			      "my_prog;main;work;do_syscall_64_[k] 500\n"
			      "other;main;work 250\n");
	free(out);
}
END_TEST

START_TEST(pid_and_tid_prefixes)
{
	struct write_options o;
	char *out;

	memset(&o, 0, sizeof(o));
	o.event = -1;
	o.with_tid = 1;
	out = render(&o, folded_write);
	ck_assert_str_eq(out, "my_prog-10/11;main;operator:weird name;libx.so+0x1f00 1\n"
			      "my_prog-10/11;main;work;do_syscall_64 1\n"
			      "my_prog-10/12;main;work;do_syscall_64 1\n"
			      "other-20/20;main;work 1\n");
	free(out);
	o.with_tid = 0;
	o.with_pid = 1;
	out = render(&o, folded_write);
	ck_assert_str_eq(out, "my_prog-10;main;operator:weird name;libx.so+0x1f00 1\n"
			      "my_prog-10;main;work;do_syscall_64 2\n"
			      "other-20;main;work 1\n");
	free(out);
}
END_TEST

START_TEST(samples_in_time_order)
{
	struct write_options o;
	char *out, *second;

	memset(&o, 0, sizeof(o));
	o.event = -1;
	profile_sort_samples(&p);
	out = render(&o, samples_write);
	ck_assert_ptr_nonnull(strstr(out, "my prog\t10/12\t0\t0.000000001\tcpu-clock\t250\t"
					  "main;work;do_syscall_64\n"));
	second = strchr(out, '\n') + 1;
	ck_assert_int_eq(strncmp(second, "my prog\t10/11\t0\t0.000000002", 27), 0);
	free(out);
}
END_TEST

START_TEST(interning_is_exact)
{
	size_t before = p.nframes;

	ck_assert_uint_eq(frame("main", FRAME_NATIVE, 0x100, 1), 0);
	ck_assert_uint_eq(p.nframes, before);
	ck_assert_uint_ne(frame("main", FRAME_KERNEL, 0x100, 1), 0);
	ck_assert_uint_eq(profile_str(&p, ""), 0);
	ck_assert_uint_eq(p.nsamples, 4);
	ck_assert_uint_eq(p.events[0].nsamples, 4);
	ck_assert_uint_eq(p.events[0].total_period, 1250);
}
END_TEST

/*
 * Folded and pprof ask for samples to be aggregated as they come: the profile then
 * holds one sample per distinct (stack, thread, cpu, event) whatever the number of
 * samples, and the writers' output is what it is with every sample kept.
 */
START_TEST(aggregated_samples_write_the_same)
{
	struct write_options o;
	char *plain[3], *agg;

	memset(&o, 0, sizeof(o));
	o.event = -1;
	profile_release(&p);
	build(0, 3);
	ck_assert_uint_eq(p.nsamples, 12);
	plain[0] = render(&o, folded_write);
	o.weight_period = 1;
	plain[1] = render(&o, folded_write);
	o.with_tid = 1;
	plain[2] = render(&o, folded_write);
	profile_release(&p);

	build(1, 3);
	ck_assert_uint_eq(p.nsamples, 4);
	ck_assert_uint_eq(p.samples[0].count, 3);
	ck_assert_uint_eq(p.samples[2].period, 1500);
	ck_assert_uint_eq(p.samples[1].time, 1); /* an aggregate keeps its first time */
	ck_assert_uint_eq(p.events[0].nsamples, 12);
	ck_assert_uint_eq(p.events[0].total_period, 3750);
	ck_assert_uint_eq(p.first_time, 1);
	ck_assert_uint_eq(p.last_time, 24);
	o.weight_period = 0;
	o.with_tid = 0;
	agg = render(&o, folded_write);
	ck_assert_str_eq(agg, plain[0]);
	ck_assert_ptr_nonnull(strstr(agg, "my_prog;main;work;do_syscall_64 6\n"));
	free(agg);
	o.weight_period = 1;
	agg = render(&o, folded_write);
	ck_assert_str_eq(agg, plain[1]);
	free(agg);
	o.with_tid = 1;
	agg = render(&o, folded_write);
	ck_assert_str_eq(agg, plain[2]);
	free(agg);
	for (int i = 0; i < 3; i++)
		free(plain[i]);
}
END_TEST

/*
 * Frames left as placeholders (as pass 2 leaves user addresses) are replaced by
 * their frames, inlined ones included, in every stack; aggregated samples whose
 * stacks become the same are merged.
 */
START_TEST(expanded_frames_replace_placeholders)
{
	struct write_options o;
	uint32_t main_f, ph1, ph2, a, b, inl, s1[2], s2[2];
	uint32_t *first, *count, pool[3];
	size_t covered;
	char *out;

	profile_release(&p);
	build(1, 1);
	main_f = frame("main", FRAME_NATIVE, 0x100, 1);
	ph1 = frame("", FRAME_NATIVE, 0x500, 0);
	ph2 = frame("", FRAME_NATIVE, 0x504, 0);
	s1[0] = main_f; s1[1] = ph1;
	s2[0] = main_f; s2[1] = ph2;
	sample("my prog", 10, 11, test_stack(&p, s1, 2), 250, 5);
	sample("my prog", 10, 11, test_stack(&p, s2, 2), 250, 6);
	ck_assert_uint_eq(p.nsamples, 6);
	a = frame("leafy", FRAME_NATIVE, 0x500, 1);
	inl = frame("inlined_step", FRAME_INLINED, 0x500, 1);
	b = frame("leafy", FRAME_NATIVE, 0x504, 1);
	/* 0x500: inlined_step in leafy; 0x504: leafy; innermost first */
	pool[0] = inl; pool[1] = a; pool[2] = b;
	covered = p.nframes;
	first = calloc(covered, sizeof(*first));
	count = calloc(covered, sizeof(*count));
	first[ph1] = 0; count[ph1] = 2;
	first[ph2] = 2; count[ph2] = 1;
	profile_expand_frames(&p, first, count, pool, covered);
	free(first);
	free(count);
	ck_assert_uint_eq(p.nsamples, 6);
	memset(&o, 0, sizeof(o));
	o.event = -1;
	out = render(&o, folded_write);
	ck_assert_ptr_nonnull(strstr(out, "my_prog;main;leafy;inlined_step 1\n"));
	ck_assert_ptr_nonnull(strstr(out, "my_prog;main;leafy 1\n"));
	ck_assert_ptr_nonnull(strstr(out, "my_prog;main;work;do_syscall_64 2\n"));
	free(out);

	/* two placeholders that become the same frames: one aggregated sample */
	profile_release(&p);
	build(1, 0);
	main_f = frame("main", FRAME_NATIVE, 0x100, 1);
	ph1 = frame("", FRAME_NATIVE, 0x500, 0);
	ph2 = frame("", FRAME_NATIVE, 0x500, 1); /* e.g. a return address there */
	s1[0] = main_f; s1[1] = ph1;
	s2[0] = main_f; s2[1] = ph2;
	sample("my prog", 10, 11, test_stack(&p, s1, 2), 250, 5);
	sample("my prog", 10, 11, test_stack(&p, s2, 2), 100, 6);
	ck_assert_uint_eq(p.nsamples, 2);
	a = frame("leafy", FRAME_NATIVE, 0x500, 1);
	covered = p.nframes;
	first = calloc(covered, sizeof(*first));
	count = calloc(covered, sizeof(*count));
	pool[0] = a;
	count[ph1] = count[ph2] = 1;
	profile_expand_frames(&p, first, count, pool, covered);
	free(first);
	free(count);
	ck_assert_uint_eq(p.nsamples, 1);
	ck_assert_uint_eq(p.samples[0].count, 2);
	ck_assert_uint_eq(p.samples[0].period, 350);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("folded");
	TCase *tc = tcase_create("core");
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, lines_sorted_merged_and_safe);
	tcase_add_test(tc, frame_text_as_snprintf_writes_it);
	tcase_add_test(tc, long_names_and_deep_stacks_whole);
	tcase_add_test(tc, period_weights_and_annotations);
	tcase_add_test(tc, pid_and_tid_prefixes);
	tcase_add_test(tc, samples_in_time_order);
	tcase_add_test(tc, interning_is_exact);
	tcase_add_test(tc, aggregated_samples_write_the_same);
	tcase_add_test(tc, expanded_frames_replace_placeholders);
	suite_add_tcase(s, tc);
	failed = run_suite(s);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
