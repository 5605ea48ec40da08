/* check_tracefmt: the trace-event formats of a real recording of sched:sched_switch
 * (testdata/sched/sched.data), its samples' RAW bytes decoded by them against what
 * perf script printed for the same samples, and damaged tracing data. */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/read/perfdata.h"
#include "formats/read/tracefmt.h"
#include "tests/testutil.h"

/* The recording's tracing data, parsed; *r open on it. */
static struct tracefmt *open_sched(struct perf_reader **r, struct cap *c)
{
	struct tracefmt *t;
	const void *td;
	size_t len;

	cap_init(c);
	*r = perf_reader_open(top_path("testdata/sched/sched.data"), &c->d);
	ck_assert_ptr_nonnull(*r);
	td = perf_reader_tracing_data(*r, &len);
	ck_assert_ptr_nonnull(td);
	ck_assert_uint_gt(len, 1000);
	t = tracefmt_parse(td, len, "sched.data", &c->d);
	ck_assert_msg(t != NULL, "%s", cap_text(c));
	return t;
}

/* The attr of sched:sched_switch: its event index, the format it names. */
static int tracepoint_event(struct perf_reader *r, const struct tracefmt *t,
			    const struct tracefmt_event **e)
{
	size_t i;

	for (i = 0; i < perf_reader_nevents(r); i++) {
		const struct perf_event_desc *ev = perf_reader_event(r, i);

		if (ev->type == PERF_TYPE_TRACEPOINT) {
			*e = tracefmt_find(t, ev->config);
			return (int)i;
		}
	}
	return -1;
}

START_TEST(test_sched_switch_format)
{
	const struct tracefmt_event *e = NULL;
	const struct tracefmt_field *f;
	struct perf_reader *r;
	struct tracefmt *t;
	struct cap c;
	char name[128];
	int ev;

	t = open_sched(&r, &c);
	ck_assert_str_eq(tracefmt_version(t), "0.6");
	ck_assert_int_eq(tracefmt_big_endian(t), 0);
	ev = tracepoint_event(r, t, &e);
	ck_assert_int_ge(ev, 0);
	ck_assert_ptr_nonnull(e);
	/* perf names the event system:name in EVENT_DESC, as the format's directory and
	 * name say */
	ck_assert_str_eq(e->system, "sched");
	ck_assert_str_eq(e->name, "sched_switch");
	snprintf(name, sizeof(name), "%s:%s", e->system, e->name);
	ck_assert_str_eq(perf_reader_event(r, (size_t)ev)->name, name);
	ck_assert_uint_eq(e->nfields, 11);
	ck_assert_str_eq(e->fields[0].name, "common_type");

	f = tracefmt_field(e, "prev_comm");
	ck_assert_ptr_nonnull(f);
	ck_assert_str_eq(f->type, "char[16]");
	ck_assert_uint_eq(f->offset, 8);
	ck_assert_uint_eq(f->size, 16);
	ck_assert(f->is_array && f->is_string && !f->is_dynamic);
	f = tracefmt_field(e, "prev_pid");
	ck_assert_str_eq(f->type, "pid_t");
	ck_assert_uint_eq(f->offset, 24);
	ck_assert_uint_eq(f->size, 4);
	ck_assert(f->is_signed);
	f = tracefmt_field(e, "next_pid");
	ck_assert_uint_eq(f->offset, 56);

	/* prev_state: __print_flags(..., "|", { 0x1, "S" }, { 0x2, "D" }, ...) : "R" */
	f = tracefmt_field(e, "prev_state");
	ck_assert_str_eq(f->type, "long");
	ck_assert_uint_eq(f->size, 8);
	ck_assert(f->labels_are_flags);
	ck_assert_uint_ge(f->nlabels, 8);
	ck_assert_uint_eq(f->labels[0].value, 1);
	ck_assert_str_eq(f->labels[0].label, "S");
	ck_assert_uint_eq(f->labels[1].value, 2);
	ck_assert_str_eq(f->labels[1].label, "D");
	ck_assert_str_eq(f->delim, "|");
	ck_assert_str_eq(f->zero_label, "R");
	ck_assert_ptr_nonnull(strstr(e->print_fmt, "prev_state=%s%s ==> next_comm=%s"));
	ck_assert_ptr_null(tracefmt_field(e, "no_such_field"));
	ck_assert_ptr_null(tracefmt_find(t, 999999));
	tracefmt_free(t);
	perf_reader_close(r);
}
END_TEST

/* One line of perf script -F tid,time,event,trace for a sched_switch. */
struct golden {
	char key[48];           /* "TID TIME" */
	char text[512];         /* from "prev_comm=" */
	int seen;
};

static size_t read_golden(struct golden **out)
{
	size_t len, n = 0, cap = 0;
	char *buf = (char *)slurp_gz(top_path("testdata/sched/expected/sched.trace.gz"), &len);
	char *line, *save = NULL;
	struct golden *g = NULL;

	buf = realloc(buf, len + 1);
	buf[len] = 0;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned tid;
		char time[32];
		const char *tr = strstr(line, "prev_comm=");

		if (!strstr(line, "sched:sched_switch:") || !tr ||
		    sscanf(line, "%u %31[0-9.]", &tid, time) != 2)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			g = realloc(g, cap * sizeof(*g));
		}
		snprintf(g[n].key, sizeof(g[n].key), "%u %s", tid, time);
		snprintf(g[n].text, sizeof(g[n].text), "%s", tr);
		g[n++].seen = 0;
	}
	free(buf);
	*out = g;
	return n;
}

/* What perf script prints of a sched_switch, made from the decoded fields. */
static void render(const struct tracefmt *t, const struct tracefmt_event *e,
		   const struct perf_sample *s, char *out, size_t cap)
{
	const struct tracefmt_field *state = tracefmt_field(e, "prev_state");
	char prev[32], next[32], label[64];
	int64_t prev_pid, prev_prio, st, next_pid, next_prio;
	uint64_t known = 0;
	size_t i;

	ck_assert(tracefmt_read_str(t, tracefmt_field(e, "prev_comm"), s->raw, s->raw_size, prev,
				    sizeof(prev)) >= 0);
	ck_assert(tracefmt_read_str(t, tracefmt_field(e, "next_comm"), s->raw, s->raw_size, next,
				    sizeof(next)) >= 0);
	ck_assert(tracefmt_read_int(t, tracefmt_field(e, "prev_pid"), s->raw, s->raw_size, &prev_pid));
	ck_assert(tracefmt_read_int(t, tracefmt_field(e, "prev_prio"), s->raw, s->raw_size,
				    &prev_prio));
	ck_assert(tracefmt_read_int(t, state, s->raw, s->raw_size, &st));
	ck_assert(tracefmt_read_int(t, tracefmt_field(e, "next_pid"), s->raw, s->raw_size, &next_pid));
	ck_assert(tracefmt_read_int(t, tracefmt_field(e, "next_prio"), s->raw, s->raw_size,
				    &next_prio));
	tracefmt_label(state, (uint64_t)st, label, sizeof(label));
	/* the print fmt's "+" after the state: the bit above the table's (preempted) */
	for (i = 0; i < state->nlabels; i++)
		known |= state->labels[i].value;
	if ((uint64_t)st & (known + 1))
		strcat(label, "+");
	snprintf(out, cap, "prev_comm=%s prev_pid=%" PRId64 " prev_prio=%" PRId64
		 " prev_state=%s ==> next_comm=%s next_pid=%" PRId64 " next_prio=%" PRId64,
		 prev, prev_pid, prev_prio, label, next, next_pid, next_prio);
}

/* Every sched_switch sample decodes to what perf script printed for it. */
START_TEST(test_sched_switch_samples)
{
	const struct tracefmt_event *e = NULL;
	struct perf_record rec;
	struct perf_reader *r;
	struct tracefmt *t;
	struct golden *g;
	struct cap c;
	size_t ng, i, n = 0, clock = 0, states[2] = { 0, 0 };
	int ev;

	t = open_sched(&r, &c);
	ev = tracepoint_event(r, t, &e);
	ng = read_golden(&g);
	ck_assert_uint_ge(ng, 40);
	while (perf_reader_next(r, &rec) == 1) {
		char key[48], got[512];
		const struct perf_sample *s = &rec.u.sample;

		if (rec.type != PERF_RECORD_SAMPLE)
			continue;
		if (rec.event != ev) {
			ck_assert_uint_eq(s->raw_size, 0); /* cpu-clock: no RAW */
			clock++;
			continue;
		}
		/* RAW: u32 size, then the record; perf pads the pair to u64 words */
		ck_assert_ptr_nonnull(s->raw);
		ck_assert_uint_ge(s->raw_size, 64);
		snprintf(key, sizeof(key), "%u %" PRIu64 ".%09" PRIu64, rec.sid.tid,
			 rec.sid.time / 1000000000u, rec.sid.time % 1000000000u);
		for (i = 0; i < ng && strcmp(g[i].key, key); i++)
			;
		ck_assert_msg(i < ng, "sample %s: not in perf script's output", key);
		render(t, e, s, got, sizeof(got));
		ck_assert_msg(!strcmp(got, g[i].text), "sample %s:\n got  %s\n perf %s", key, got,
			      g[i].text);
		g[i].seen++;
		states[strstr(got, "prev_state=S ") != NULL]++;
		n++;
	}
	ck_assert_uint_eq(n, ng);
	for (i = 0; i < ng; i++)
		ck_assert_int_eq(g[i].seen, 1);
	/* the recording holds both: threads that slept (S) and that yielded (R) */
	ck_assert_uint_gt(states[0], 5);
	ck_assert_uint_gt(states[1], 5);
	ck_assert_uint_gt(clock, 100);
	free(g);
	tracefmt_free(t);
	perf_reader_close(r);
}
END_TEST

/* Pipe mode: the tracing data is the HEADER_TRACING_DATA record's; every switch is
 * sampled in the context of the thread leaving the CPU (prev_pid is the sample's tid).
 * A recording without tracepoints has no tracing data. */
START_TEST(test_pipe_and_none)
{
	const struct tracefmt_event *e = NULL;
	const struct tracefmt_field *pid;
	struct perf_record rec;
	struct perf_reader *r;
	struct tracefmt *t;
	struct cap c;
	const void *td;
	size_t len, n = 0;
	int64_t v;
	int ev;

	cap_init(&c);
	r = perf_reader_open(top_path("testdata/sched/sched-pipe.data"), &c.d);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(perf_reader_header(r)->pipe_mode, 1);
	td = perf_reader_tracing_data(r, &len);
	ck_assert_ptr_nonnull(td);
	t = tracefmt_parse(td, len, "sched-pipe.data", &c.d);
	ck_assert_msg(t != NULL, "%s", cap_text(&c));
	ev = tracepoint_event(r, t, &e);
	ck_assert_ptr_nonnull(e);
	ck_assert_str_eq(perf_reader_event(r, (size_t)ev)->name, "sched:sched_switch");
	pid = tracefmt_field(e, "prev_pid");
	while (perf_reader_next(r, &rec) == 1)
		if (rec.type == PERF_RECORD_SAMPLE && rec.event == ev) {
			ck_assert(tracefmt_read_int(t, pid, rec.u.sample.raw, rec.u.sample.raw_size,
						    &v));
			ck_assert_int_eq(v, rec.sid.tid);
			n++;
		}
	ck_assert_uint_gt(n, 40);
	tracefmt_free(t);
	perf_reader_close(r);

	r = perf_reader_open(top_path("testdata/mt-g.data"), &c.d);
	ck_assert_ptr_nonnull(r);
	ck_assert_ptr_null(perf_reader_tracing_data(r, &len));
	ck_assert_uint_eq(len, 0);
	perf_reader_close(r);
}
END_TEST

/* ---- damaged tracing data ---- */

static uint8_t *real_tracing_data(size_t *len)
{
	struct perf_reader *r;
	struct cap c;
	const void *td;
	uint8_t *copy;

	cap_init(&c);
	r = perf_reader_open(top_path("testdata/sched/sched.data"), &c.d);
	ck_assert_ptr_nonnull(r);
	td = perf_reader_tracing_data(r, len);
	copy = malloc(*len);
	memcpy(copy, td, *len);
	perf_reader_close(r);
	return copy;
}

/* Cut anywhere, the data gives an error or fewer events, never a read past the end. */
START_TEST(test_cut_anywhere)
{
	size_t len, at, errors = 0;
	uint8_t *td = real_tracing_data(&len);

	for (at = 0; at < len; at += at < 64 ? 1 : 97) {
		uint8_t *cut = malloc(at ? at : 1);
		struct tracefmt *t;
		struct cap c;

		memcpy(cut, td, at);
		cap_init(&c);
		t = tracefmt_parse(cut, at, "cut", &c.d);
		if (!t) {
			errors++;
			ck_assert_uint_eq(c.d.nerrors, 1);
			ck_assert_ptr_nonnull(strstr(cap_text(&c), "cut: offset 0x"));
		}
		tracefmt_free(t);
		free(cut);
	}
	ck_assert_uint_gt(errors, 10);
	free(td);
}
END_TEST

/* A size field that claims more than there is: an error naming its offset. */
START_TEST(test_size_too_large)
{
	size_t len;
	uint8_t *td = real_tracing_data(&len);
	size_t hp = 0;
	struct tracefmt *t;
	struct cap c;

	/* "header_page\0" then its u64 size */
	while (hp + 12 < len && memcmp(td + hp, "header_page", 12))
		hp++;
	ck_assert_uint_lt(hp + 12, len);
	memset(td + hp + 12, 0xff, 8);
	cap_init(&c);
	t = tracefmt_parse(td, len, "big", &c.d);
	ck_assert_ptr_null(t);
	ck_assert_ptr_nonnull(strstr(cap_text(&c), "TRACING_DATA: damaged header_page section"));
	free(td);
}
END_TEST

/* A field read past the sample's RAW bytes is refused, not read. */
START_TEST(test_short_raw)
{
	const struct tracefmt_event *e = NULL;
	struct perf_reader *r;
	struct tracefmt *t;
	struct cap c;
	uint8_t raw[60];
	int64_t v;
	char s[32];

	t = open_sched(&r, &c);
	tracepoint_event(r, t, &e);
	memset(raw, 'a', sizeof(raw));
	ck_assert_int_eq(tracefmt_read_int(t, tracefmt_field(e, "prev_pid"), raw, 28, &v), 1);
	ck_assert_int_eq(tracefmt_read_int(t, tracefmt_field(e, "prev_pid"), raw, 27, &v), 0);
	ck_assert_int_eq(tracefmt_read_int(t, tracefmt_field(e, "next_pid"), raw, 59, &v), 0);
	ck_assert_int_eq(tracefmt_read_int(t, tracefmt_field(e, "next_pid"), raw, 60, &v), 1);
	ck_assert_int_eq(tracefmt_read_int(t, tracefmt_field(e, "prev_comm"), raw, sizeof(raw), &v), 0);
	/* a comm without its NUL is cut at the field's size */
	ck_assert_int_eq(tracefmt_read_str(t, tracefmt_field(e, "prev_comm"), raw, sizeof(raw), s,
					   sizeof(s)), 16);
	ck_assert_int_eq(tracefmt_read_str(t, tracefmt_field(e, "next_comm"), raw, 50, s, sizeof(s)), -1);
	ck_assert_int_eq(tracefmt_read_str(t, tracefmt_field(e, "prev_pid"), raw, sizeof(raw), s,
					   sizeof(s)), -1);
	tracefmt_free(t);
	perf_reader_close(r);
}
END_TEST

/* A format file of a __data_loc string and a symbolic table, made here. */
START_TEST(test_dynamic_and_symbolic)
{
	static const char fmt[] =
		"name: demo\nID: 7\nformat:\n"
		"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		"\tfield:__data_loc char[] msg;\toffset:8;\tsize:4;\tsigned:0;\n"
		"\tfield:int kind;\toffset:12;\tsize:4;\tsigned:1;\n\n"
		"print fmt: \"%s %s\", __get_str(msg), __print_symbolic(REC->kind, { 0, \"zero\" }, "
		"{ 1, \"one\" }, { -1, \"minus\" })\n";
	uint8_t buf[512], raw[24];
	size_t n = 0;
	const struct tracefmt_event *e;
	const struct tracefmt_field *f;
	struct tracefmt *t;
	struct cap c;
	uint64_t sz = sizeof(fmt) - 1;
	uint32_t one = 1, loc;
	int64_t v;
	char s[32];

#define PUT(p, k) (memcpy(buf + n, (p), (k)), n += (k))
	PUT("\x17\x08\x44tracing0.6", 13);
	PUT("\0\0\x08", 3);                /* NUL, little-endian, long 8 */
	PUT("\0\x10\0\0", 4);              /* page 4096 */
	PUT("header_page", 12);
	PUT("\0\0\0\0\0\0\0\0", 8);
	PUT("header_event", 13);
	PUT("\0\0\0\0\0\0\0\0", 8);
	PUT("\0\0\0\0", 4);                /* no ftrace formats */
	PUT(&one, 4);                      /* one system */
	PUT("demo_sys", 9);
	PUT(&one, 4);
	PUT(&sz, 8);
	PUT(fmt, sizeof(fmt) - 1);
#undef PUT
	cap_init(&c);
	t = tracefmt_parse(buf, n, "demo", &c.d);
	ck_assert_msg(t != NULL, "%s", cap_text(&c));
	e = tracefmt_find(t, 7);
	ck_assert_ptr_nonnull(e);
	ck_assert_str_eq(e->system, "demo_sys");
	f = tracefmt_field(e, "msg");
	ck_assert_str_eq(f->type, "__data_loc char[]");
	ck_assert(f->is_dynamic && f->is_string);
	memset(raw, 0, sizeof(raw));
	loc = 16 | (5u << 16);
	memcpy(raw + 8, &loc, 4);
	memcpy(raw + 16, "hello", 5);
	ck_assert_int_eq(tracefmt_read_str(t, f, raw, sizeof(raw), s, sizeof(s)), 5);
	ck_assert_str_eq(s, "hello");
	ck_assert_int_eq(tracefmt_read_str(t, f, raw, 20, s, sizeof(s)), -1);
	f = tracefmt_field(e, "kind");
	ck_assert_uint_eq(f->nlabels, 3);
	ck_assert(!f->labels_are_flags);
	memcpy(raw + 12, "\xff\xff\xff\xff", 4);
	ck_assert(tracefmt_read_int(t, f, raw, sizeof(raw), &v));
	ck_assert_int_eq(v, -1);
	ck_assert_uint_eq(tracefmt_label(f, (uint64_t)v, s, sizeof(s)), 5);
	ck_assert_str_eq(s, "minus");
	ck_assert_uint_eq(tracefmt_label(f, 1, s, sizeof(s)), 3);
	ck_assert_uint_eq(tracefmt_label(f, 5, s, sizeof(s)), 0);
	tracefmt_free(t);
}
END_TEST

static Suite *tracefmt_suite(void)
{
	Suite *s = suite_create("tracefmt");
	TCase *tc = tcase_create("tracefmt");

	tcase_add_test(tc, test_sched_switch_format);
	tcase_add_test(tc, test_sched_switch_samples);
	tcase_add_test(tc, test_pipe_and_none);
	tcase_add_test(tc, test_cut_anywhere);
	tcase_add_test(tc, test_size_too_large);
	tcase_add_test(tc, test_short_raw);
	tcase_add_test(tc, test_dynamic_and_symbolic);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	int failed = run_suite(tracefmt_suite());

	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
