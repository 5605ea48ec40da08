/* check_json: JSON escaping and numbers, and the speedscope and Chrome writers' output
 * as cJSON parses it. */
#include <check.h>
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "common/version.h"
#include "formats/write/chrome.h"
#include "formats/write/json.h"
#include "formats/write/speedscope.h"
#include "tests/testutil.h"

#define FFFD "\xef\xbf\xbd"

static char *capture_string(const char *s, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	json_string_n(f, s, n);
	fclose(f);
	return buf;
}

#define ESC(lit) capture_string(lit, sizeof(lit) - 1)

static void expect_escape(const char *in, size_t n, const char *want)
{
	char *got = capture_string(in, n);

	ck_assert_str_eq(got, want);
	free(got);
}

START_TEST(ascii_and_specials)
{
	expect_escape("main", 4, "\"main\"");
	expect_escape("a\"b\\c/", 6, "\"a\\\"b\\\\c/\"");
	expect_escape("operator<<", 10, "\"operator<<\"");
}
END_TEST

START_TEST(control_bytes)
{
	expect_escape("\n\t\r\b\f", 5, "\"\\n\\t\\r\\b\\f\"");
	expect_escape("a\x01z\x1f", 4, "\"a\\u0001z\\u001f\"");
	expect_escape("nul\0x", 5, "\"nul\\u0000x\"");
	expect_escape("\x7f", 1, "\"\x7f\""); /* DEL is no control character to JSON */
}
END_TEST

START_TEST(utf8_kept)
{
	/* 2, 3 and 4 byte sequences, and the edges of the ranges */
	expect_escape("caf\xc3\xa9", 5, "\"caf\xc3\xa9\"");
	expect_escape("\xe2\x82\xac", 3, "\"\xe2\x82\xac\"");
	expect_escape("\xf0\x9f\x94\xa5", 4, "\"\xf0\x9f\x94\xa5\"");
	expect_escape("\xed\x9f\xbf", 3, "\"\xed\x9f\xbf\"");     /* U+D7FF */
	expect_escape("\xf4\x8f\xbf\xbf", 4, "\"\xf4\x8f\xbf\xbf\""); /* U+10FFFF */
	/* the counter-example: a signed char would print \uffffffc3 here */
	expect_escape("\xc3\xa9", 2, "\"\xc3\xa9\"");
}
END_TEST

START_TEST(invalid_utf8_replaced)
{
	expect_escape("a\x80z", 3, "\"a" FFFD "z\"");                 /* lone continuation */
	expect_escape("\xc0\xaf", 2, "\"" FFFD FFFD "\"");            /* overlong '/' */
	expect_escape("\xe0\x80\xaf", 3, "\"" FFFD FFFD FFFD "\"");   /* overlong, 3 bytes */
	expect_escape("\xed\xa0\x80", 3, "\"" FFFD FFFD FFFD "\"");   /* surrogate U+D800 */
	expect_escape("\xf4\x90\x80\x80", 4, "\"" FFFD FFFD FFFD FFFD "\""); /* > U+10FFFF */
	expect_escape("\xf5\xff", 2, "\"" FFFD FFFD "\"");
	expect_escape("\xe2\x82", 2, "\"" FFFD "\"");                 /* cut short at the end */
	expect_escape("\xe2\x82z", 3, "\"" FFFD "z\"");               /* cut short: one U+FFFD */
	expect_escape("\xf0\x9f\x94", 3, "\"" FFFD "\"");
}
END_TEST

START_TEST(every_byte_parses)
{
	char in[256];
	char *out;
	cJSON *j;

	for (int i = 0; i < 256; i++)
		in[i] = (char)(255 - i);
	out = capture_string(in, sizeof(in));
	j = cJSON_Parse(out);
	ck_assert_ptr_nonnull(j);
	ck_assert(cJSON_IsString(j));
	/* 0x7f..0x01 come back as themselves (cJSON stops at the \u0000); 0x80..0xff,
	 * in this order never well-formed, as U+FFFD */
	ck_assert_int_eq(memcmp(j->valuestring + strlen(j->valuestring) - 2, "\x02\x01", 2), 0);
	ck_assert_ptr_nonnull(strstr(j->valuestring, FFFD "\x7f~}"));
	ck_assert_ptr_null(strstr(j->valuestring, "\xff"));
	cJSON_Delete(j);
	free(out);
}
END_TEST

static char *capture_us(uint64_t ns)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	json_ns_as_us(f, ns);
	fclose(f);
	return buf;
}

/* Long strings are escaped in pieces: a sequence or a run of stray continuation bytes
 * across a piece's end reads as in the whole, and the memory form is the same text. */
START_TEST(long_string_pieces)
{
	for (size_t lead = 2040; lead < 2060; lead++) {
		size_t n = 0, m = 0;
		char *in = malloc(lead + 64), *want = malloc(3 * lead + 256), *got, *mem;

		ck_assert_ptr_nonnull(in);
		ck_assert_ptr_nonnull(want);
		want[m++] = '"';
		memset(in, 'a', lead);
		memset(want + m, 'a', lead);
		n = lead;
		m += lead;
		memcpy(in + n, "\xf0\x9f\x98\x80", 4); /* U+1F600 */
		memcpy(want + m, "\xf0\x9f\x98\x80", 4);
		n += 4;
		m += 4;
		for (int k = 0; k < 7; k++) { /* stray continuation bytes: one U+FFFD each */
			in[n++] = (char)0x80;
			memcpy(want + m, FFFD, 3);
			m += 3;
		}
		memcpy(in + n, "\xe2\x82", 2); /* cut short by a quote */
		n += 2;
		memcpy(want + m, FFFD, 3);
		m += 3;
		in[n++] = '"';
		memcpy(want + m, "\\\"\"", 3);
		m += 3;
		want[m] = 0;
		got = capture_string(in, n);
		ck_assert_str_eq(got, want);
		mem = malloc(JSON_STRING_MAX(n) + 1);
		ck_assert_ptr_nonnull(mem);
		mem[json_string_mem(mem, in, n)] = 0;
		ck_assert_str_eq(mem, want);
		free(mem);
		free(got);
		free(in);
		free(want);
	}
}
END_TEST

START_TEST(microseconds_exact)
{
	static const struct { uint64_t ns; const char *us; } cases[] = {
		{ 0, "0" }, { 1, "0.001" }, { 1500, "1.5" }, { 2000, "2" }, { 1234567, "1234.567" },
		{ 1234560, "1234.56" }, { 18446744073709551615ULL, "18446744073709551.615" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *s = capture_us(cases[i].ns);

		ck_assert_str_eq(s, cases[i].us);
		free(s);
	}
}
END_TEST

/* A small profile: two threads, one renamed, a name with bytes to escape. */
static struct profile p;

static uint32_t frame(const char *name, const char *file, uint32_t line, int kind, uint64_t addr)
{
	struct pc_frame f;

	memset(&f, 0, sizeof(f));
	f.func = profile_str(&p, name);
	f.file = profile_str(&p, file);
	f.line = line;
	f.kind = (uint8_t)kind;
	f.addr = addr;
	f.module = profile_str(&p, kind == FRAME_KERNEL ? "[kernel.kallsyms]" : "prog");
	f.symbolized = 1;
	return profile_frame(&p, &f);
}

static void sample(const char *comm, uint32_t tid, uint64_t time, const uint32_t *fr, size_t n)
{
	struct pc_sample s;
	uint32_t node = 0;

	for (size_t i = 0; i < n; i++)
		node = profile_node(&p, node, fr[i]);
	memset(&s, 0, sizeof(s));
	s.comm = profile_str(&p, comm);
	s.pid = 10;
	s.tid = tid;
	s.time = time;
	s.period = 1000;
	s.stack = node;
	profile_add_sample(&p, &s);
}

static void setup(void)
{
	struct pc_event e;
	uint32_t m1, m2, w1, w2, odd, k;

	profile_init(&p);
	memset(&e, 0, sizeof(e));
	e.name = profile_str(&p, "cpu-clock");
	e.unit = PC_UNIT_NANOSECONDS;
	e.is_clock = 1;
	profile_add_event(&p, &e);
	p.has_time = 1;
	m1 = frame("main", "m.c", 10, FRAME_NATIVE, 0x100);
	m2 = frame("main", "m.c", 12, FRAME_NATIVE, 0x108); /* same function, another line */
	w1 = frame("work", "m.c", 30, FRAME_NATIVE, 0x200);
	w2 = frame("work", "m.c", 31, FRAME_NATIVE, 0x204);
	odd = frame("caf\xc3\xa9\n\x80", "m.c", 40, FRAME_NATIVE, 0x300);
	k = frame("do_syscall_64", "", 0, FRAME_KERNEL, 0xffffffff81000000ULL);
	/* thread 11: main;work x2 (different lines), main;work;kernel, main alone */
	sample("prog", 11, 1000000, (uint32_t[]){ m1, w1 }, 2);
	sample("worker", 12, 1000500, (uint32_t[]){ m1, odd }, 2);
	sample("prog", 11, 1001000, (uint32_t[]){ m2, w2 }, 2);
	sample("worker2", 12, 1001500, (uint32_t[]){ m1, odd }, 2);
	sample("prog", 11, 1002000, (uint32_t[]){ m1, w1, k }, 3);
	sample("prog", 11, 1003000, (uint32_t[]){ m1 }, 1);
	profile_sort_samples(&p);
}

static void teardown(void)
{
	profile_release(&p);
}

static cJSON *render_event(profile_writer w, int weight_period, int event)
{
	struct write_options o;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	cJSON *j;

	memset(&o, 0, sizeof(o));
	o.event = event;
	o.weight_period = weight_period;
	ck_assert_int_eq(w(&p, &o, f), 0);
	fclose(f);
	j = cJSON_Parse(buf);
	ck_assert_msg(j != NULL, "not JSON: %s", buf);
	free(buf);
	return j;
}

static cJSON *render(profile_writer w, int weight_period)
{
	return render_event(w, weight_period, -1);
}

static const char *frame_name(cJSON *frames, cJSON *idx)
{
	return cJSON_GetObjectItem(cJSON_GetArrayItem(frames, idx->valueint), "name")->valuestring;
}

START_TEST(speedscope_profiles)
{
	cJSON *j = render(speedscope_write, 1);
	cJSON *frames = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "shared"), "frames");
	cJSON *profiles = cJSON_GetObjectItem(j, "profiles");
	cJSON *prog, *worker, *samples, *weights, *f;
	int nmain = 0;

	ck_assert_str_eq(cJSON_GetObjectItem(j, "exporter")->valuestring, "perfconv " "0.1.0");
	ck_assert_int_eq(cJSON_GetArraySize(profiles), 2);
	/* threads by name: "prog" then "worker2" (its last name) */
	prog = cJSON_GetArrayItem(profiles, 0);
	worker = cJSON_GetArrayItem(profiles, 1);
	ck_assert_str_eq(cJSON_GetObjectItem(prog, "name")->valuestring, "prog (10/11)");
	ck_assert_str_eq(cJSON_GetObjectItem(worker, "name")->valuestring, "worker2 (10/12)");
	ck_assert_int_eq(cJSON_GetObjectItem(j, "activeProfileIndex")->valueint, 0);
	ck_assert_str_eq(cJSON_GetObjectItem(prog, "unit")->valuestring, "nanoseconds");
	ck_assert_int_eq(cJSON_GetObjectItem(prog, "startValue")->valueint, 0);
	ck_assert_int_eq(cJSON_GetObjectItem(prog, "endValue")->valueint, 4000);
	ck_assert_int_eq(cJSON_GetObjectItem(worker, "startValue")->valueint, 500);
	/* one frame per function: main at lines 10 and 12 is one frame, line 10 */
	cJSON_ArrayForEach(f, frames)
		if (strcmp(cJSON_GetObjectItem(f, "name")->valuestring, "main") == 0) {
			nmain++;
			ck_assert_int_eq(cJSON_GetObjectItem(f, "line")->valueint, 10);
			ck_assert_str_eq(cJSON_GetObjectItem(f, "file")->valuestring, "m.c");
		}
	ck_assert_int_eq(nmain, 1);
	/* main;work twice in a row is one sample of weight 2000; stacks root first */
	samples = cJSON_GetObjectItem(prog, "samples");
	weights = cJSON_GetObjectItem(prog, "weights");
	ck_assert_int_eq(cJSON_GetArraySize(samples), 3);
	ck_assert_int_eq(cJSON_GetArraySize(weights), 3);
	ck_assert_int_eq(cJSON_GetArrayItem(weights, 0)->valueint, 2000);
	ck_assert_str_eq(frame_name(frames, cJSON_GetArrayItem(cJSON_GetArrayItem(samples, 0), 0)), "main");
	ck_assert_str_eq(frame_name(frames, cJSON_GetArrayItem(cJSON_GetArrayItem(samples, 0), 1)), "work");
	ck_assert_str_eq(frame_name(frames, cJSON_GetArrayItem(cJSON_GetArrayItem(samples, 1), 2)),
			 "do_syscall_64");
	/* the odd name: UTF-8 kept, newline escaped, the stray byte replaced */
	ck_assert_str_eq(frame_name(frames, cJSON_GetArrayItem(cJSON_GetArrayItem(
					    cJSON_GetObjectItem(worker, "samples"), 0), 1)),
			 "caf\xc3\xa9\n" FFFD);
	cJSON_Delete(j);

	j = render(speedscope_write, 0);
	prog = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "profiles"), 0);
	ck_assert_str_eq(cJSON_GetObjectItem(prog, "unit")->valuestring, "none");
	ck_assert_int_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(prog, "weights"), 0)->valueint, 2);
	ck_assert_int_eq(cJSON_GetObjectItem(prog, "endValue")->valueint, 4);
	cJSON_Delete(j);
}
END_TEST

/* A thread renamed after its last sample is named with the name it ended with. */
START_TEST(speedscope_thread_renamed_after_its_samples)
{
	cJSON *j, *profiles;

	profile_set_thread_name(&p, 10, 12, profile_str(&p, "renamed-late"));
	j = render(speedscope_write, 1);
	profiles = cJSON_GetObjectItem(j, "profiles");
	ck_assert_int_eq(cJSON_GetArraySize(profiles), 2);
	ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(profiles, 1), "name")->valuestring,
			 "renamed-late (10/12)");
	cJSON_Delete(j);
}
END_TEST

static const char *arg_str(cJSON *e, const char *key);

START_TEST(chrome_slices)
{
	cJSON *j = render(chrome_write, 1);
	cJSON *e, *info = cJSON_GetObjectItem(cJSON_GetArrayItem(j, 0), "args");
	static const char *const hermes[] = { "line", "column", "name", "category", "url", "params",
					      "allocatedCategory", "allocatedName" };
	int main11 = 0, work11 = 0, kernel = 0, names = 0;

	/* a list whose first event has the keys that make speedscope name frames by
	 * their name alone, with the recording's facts */
	ck_assert(cJSON_IsArray(j));
	for (size_t i = 0; i < sizeof(hermes) / sizeof(hermes[0]); i++)
		ck_assert_msg(cJSON_GetObjectItem(info, hermes[i]), "no %s", hermes[i]);
	ck_assert_str_eq(cJSON_GetObjectItem(info, "exporter")->valuestring, "perfconv " PERFCONV_VERSION);
	ck_assert_ptr_nonnull(cJSON_GetObjectItem(info, "ts_origin_ns"));

	cJSON_ArrayForEach(e, j) {
		const char *ph = cJSON_GetObjectItem(e, "ph")->valuestring;
		const char *name = cJSON_GetObjectItem(e, "name")->valuestring;
		int tid = cJSON_GetObjectItem(e, "tid")->valueint;

		if (strcmp(ph, "M") == 0) {
			if (strcmp(name, "thread_name") == 0 && tid == 12) {
				ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(e, "args"), "name")->valuestring,
						 "worker2");
				names++;
			}
			continue;
		}
		ck_assert_str_eq(ph, "X");
		if (tid == 11 && strcmp(name, "main") == 0) {
			/* main runs through all four samples: one slice, 0 to 3 us + one period */
			main11++;
			ck_assert_double_eq(cJSON_GetObjectItem(e, "ts")->valuedouble, 0);
			ck_assert_double_eq(cJSON_GetObjectItem(e, "dur")->valuedouble, 4);
			ck_assert_str_eq(cJSON_GetObjectItem(e, "cat")->valuestring, "native");
			ck_assert_int_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(e, "args"), "line")->valueint, 10);
			ck_assert_str_eq(arg_str(e, "url"), "m.c");
		}
		if (tid == 11 && strcmp(name, "work") == 0) {
			/* work at two lines over three samples is one slice, until main alone */
			work11++;
			ck_assert_double_eq(cJSON_GetObjectItem(e, "dur")->valuedouble, 3);
		}
		if (strcmp(name, "do_syscall_64") == 0) {
			kernel++;
			ck_assert_str_eq(cJSON_GetObjectItem(e, "cat")->valuestring, "kernel");
			ck_assert_double_eq(cJSON_GetObjectItem(e, "ts")->valuedouble, 2);
			ck_assert_double_eq(cJSON_GetObjectItem(e, "dur")->valuedouble, 1);
		}
		if (tid == 12 && strcmp(name, "main") == 0) {
			/* worker: 0.5 us, 1.5 us: one slice to one period after the last */
			ck_assert_double_eq(cJSON_GetObjectItem(e, "ts")->valuedouble, 0.5);
			ck_assert_double_eq(cJSON_GetObjectItem(e, "dur")->valuedouble, 2);
		}
	}
	ck_assert_int_eq(main11, 1);
	ck_assert_int_eq(work11, 1);
	ck_assert_int_eq(kernel, 1);
	ck_assert_int_eq(names, 1);
	cJSON_Delete(j);
}
END_TEST

/* The X events of thread `tid` named `name`, in file order, at most `max`. */
static int slices_of(cJSON *j, int tid, const char *name, cJSON **out, int max)
{
	cJSON *e;
	int n = 0;

	cJSON_ArrayForEach(e, j)
		if (cJSON_GetObjectItem(e, "tid")->valueint == tid &&
		    strcmp(cJSON_GetObjectItem(e, "ph")->valuestring, "X") == 0 &&
		    strcmp(cJSON_GetObjectItem(e, "name")->valuestring, name) == 0 && n < max)
			out[n++] = e;
	return n;
}

static const char *arg_str(cJSON *e, const char *key)
{
	cJSON *a = cJSON_GetObjectItem(cJSON_GetObjectItem(e, "args"), key);

	return a ? a->valuestring : NULL;
}

/* Samples of thread `tid`, each a time and a stack root first, as a Chrome trace. */
struct at { uint64_t time; const uint32_t *frames; size_t n; };
static cJSON *chrome_of(uint32_t tid, const struct at *at, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sample("spin", tid, at[i].time, at[i].frames, at[i].n);
	profile_sort_samples(&p);
	return render(chrome_write, 1);
}

START_TEST(chrome_gap_ends_slices)
{
	uint32_t m = frame("main", "m.c", 10, FRAME_NATIVE, 0x100);
	cJSON *j, *sl[4];

	/* thread 13 runs, is off the CPU for 10 periods, runs again: two slices */
	j = chrome_of(13, (struct at[]){ { 2000000, &m, 1 }, { 2001000, &m, 1 }, { 2011000, &m, 1 } }, 3);
	ck_assert_int_eq(slices_of(j, 13, "main", sl, 4), 2);
	ck_assert_double_eq(cJSON_GetObjectItem(sl[0], "dur")->valuedouble, 2);
	ck_assert_double_eq(cJSON_GetObjectItem(sl[1], "dur")->valuedouble, 1);
	cJSON_Delete(j);
}
END_TEST

START_TEST(chrome_recursion_ends_at_once)
{
	uint32_t x = frame("parse", "a.c", 1, FRAME_NATIVE, 0x400);
	uint32_t a = frame("item", "a.c", 10, FRAME_NATIVE, 0x500);
	uint32_t b = frame("template", "a.c", 20, FRAME_NATIVE, 0x600);
	cJSON *j, *sl[4];

	/* parse;item;template;item;template, then parse alone: the chain ends at once,
	 * where nothing begins; the slices carry their file and line, nothing else */
	j = chrome_of(20, (struct at[]){ { 2000000, (uint32_t[]){ x, a, b, a, b }, 5 },
					 { 2001000, (uint32_t[]){ x, a, b, a, b }, 5 }, { 2002000, &x, 1 } }, 3);
	ck_assert_int_eq(slices_of(j, 20, "item", sl, 4), 2);
	ck_assert_str_eq(arg_str(sl[1], "url"), "a.c");
	ck_assert_int_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(sl[1], "args"), "line")->valueint, 10);
	ck_assert_ptr_null(cJSON_GetObjectItem(cJSON_GetObjectItem(sl[1], "args"), "caller"));
	ck_assert_int_eq(slices_of(j, 20, "template", sl, 4), 2);
	ck_assert_double_eq(cJSON_GetObjectItem(sl[1], "ts")->valuedouble, 1000);
	ck_assert_double_eq(cJSON_GetObjectItem(sl[1], "dur")->valuedouble, 2);
	ck_assert_int_eq(slices_of(j, 20, "parse", sl, 4), 1);
	ck_assert_double_eq(cJSON_GetObjectItem(sl[0], "dur")->valuedouble, 3);
	cJSON_Delete(j);
}
END_TEST

START_TEST(chrome_begin_after_ends)
{
	uint32_t m = frame("main", "m.c", 10, FRAME_NATIVE, 0x100);
	uint32_t a = frame("walk", "m.c", 50, FRAME_NATIVE, 0x700);
	uint32_t f = frame("visit", "m.c", 60, FRAME_NATIVE, 0x800);
	cJSON *j, *sl[4];

	/* main;walk;walk;visit, then main;walk;visit (2 ms after the first sample):
	 * walk and visit end at 2001 us, and
	 * the visit that begins then begins 1 ns later (speedscope would take its begin
	 * before the end of the other visit); main;walk, continued, does not move */
	j = chrome_of(21, (struct at[]){ { 3000000, (uint32_t[]){ m, a, a, f }, 4 },
					 { 3001000, (uint32_t[]){ m, a, f }, 3 }, { 3002000, &m, 1 } }, 3);
	ck_assert_int_eq(slices_of(j, 21, "visit", sl, 4), 2);
	ck_assert_double_eq(cJSON_GetObjectItem(sl[0], "ts")->valuedouble, 2000);
	ck_assert_double_eq(cJSON_GetObjectItem(sl[0], "dur")->valuedouble, 1);
	ck_assert_double_eq(cJSON_GetObjectItem(sl[1], "ts")->valuedouble, 2001.001);
	ck_assert_double_eq_tol(cJSON_GetObjectItem(sl[1], "dur")->valuedouble, 0.999, 1e-9);
	ck_assert_int_eq(slices_of(j, 21, "walk", sl, 4), 2);
	ck_assert_double_eq(cJSON_GetObjectItem(sl[0], "dur")->valuedouble, 2);
	ck_assert_double_eq(cJSON_GetObjectItem(sl[1], "dur")->valuedouble, 1);
	/* a stack that only grows ends nothing: its new slices begin on time */
	cJSON_Delete(j);
	teardown();
	setup();
	m = frame("main", "m.c", 10, FRAME_NATIVE, 0x100);
	a = frame("walk", "m.c", 50, FRAME_NATIVE, 0x700);
	j = chrome_of(22, (struct at[]){ { 3000000, &m, 1 }, { 3001000, (uint32_t[]){ m, a }, 2 } }, 2);
	ck_assert_int_eq(slices_of(j, 22, "walk", sl, 4), 1);
	ck_assert_double_eq(cJSON_GetObjectItem(sl[0], "ts")->valuedouble, 2001);
	cJSON_Delete(j);
}
END_TEST

START_TEST(chrome_gap_closed_by_placement)
{
	uint32_t m = frame("main", "m.c", 10, FRAME_NATIVE, 0x100);
	cJSON *j, *sl[4];

	/* 0.2 us after the first, the second sample takes the slot 1 us after it; the
	 * third comes 1.6 periods after the second but at that slot's end: no gap */
	j = chrome_of(14, (struct at[]){ { 4000000, &m, 1 }, { 4000200, &m, 1 }, { 4001800, &m, 1 } }, 3);
	ck_assert_int_eq(slices_of(j, 14, "main", sl, 4), 1);
	ck_assert_double_eq(cJSON_GetObjectItem(sl[0], "dur")->valuedouble, 3);
	cJSON_Delete(j);
}
END_TEST

START_TEST(chrome_no_empty_slices)
{
	struct pc_event e;
	struct pc_sample s;
	uint32_t m = frame("main", "m.c", 10, FRAME_NATIVE, 0x100);
	uint32_t fa = frame("fault_a", "m.c", 70, FRAME_NATIVE, 0x900);
	uint32_t fb = frame("fault_b", "m.c", 80, FRAME_NATIVE, 0xa00);
	uint32_t stacks[3] = { profile_node(&p, profile_node(&p, 0, m), fa),
			       profile_node(&p, profile_node(&p, 0, m), fb), profile_node(&p, 0, m) };
	uint64_t times[3] = { 5000000, 5000000, 5004000 };
	cJSON *j, *sl[4];

	/* a count event's two samples at one time: the first would last no time */
	memset(&e, 0, sizeof(e));
	e.name = profile_str(&p, "page-faults");
	e.unit = PC_UNIT_COUNT;
	profile_add_event(&p, &e);
	for (int i = 0; i < 3; i++) {
		memset(&s, 0, sizeof(s));
		s.comm = profile_str(&p, "faulty");
		s.pid = 10;
		s.tid = 15;
		s.time = times[i];
		s.period = 1;
		s.stack = stacks[i];
		s.event = 1;
		profile_add_sample(&p, &s);
	}
	profile_sort_samples(&p);
	j = render_event(chrome_write, 1, 1);
	ck_assert_int_eq(slices_of(j, 15, "fault_a", sl, 4), 0);
	ck_assert_int_eq(slices_of(j, 15, "fault_b", sl, 4), 1);
	ck_assert_double_eq(cJSON_GetObjectItem(sl[0], "ts")->valuedouble, 0);
	ck_assert_double_eq(cJSON_GetObjectItem(sl[0], "dur")->valuedouble, 4);
	cJSON_Delete(j);
}
END_TEST

/*
 * A long recording's profile made twice from the same samples, once keeping them in
 * memory (sorted) and once in a timeline (profile_keep_timeline: runs spooled to a
 * file and merged): speedscope and Chrome write the same bytes of both. 150,000
 * samples of 4 threads arrive as perf writes them, each thread's almost in time
 * order, some at the same time, with gaps off the CPU, over a few stacks; the stack
 * tree is rebuilt once on the way (as symbolizing does).
 */
static void long_profile(struct profile *q, int timeline)
{
	struct pc_event e;
	uint64_t clock[4] = { 0 }, rng = 2463534242u;
	uint32_t fr[4], nodes[6];
	uint32_t first[4] = { 0, 0, 0, 0 }, count[4] = { 0, 0, 2, 0 }, pool[2];

	profile_init(q);
	if (timeline)
		profile_keep_timeline(q);
	memset(&e, 0, sizeof(e));
	e.name = profile_str(q, "cpu-clock");
	e.unit = PC_UNIT_NANOSECONDS;
	e.is_clock = 1;
	profile_add_event(q, &e);
	q->has_time = 1;
	for (int i = 0; i < 4; i++) {
		struct pc_frame f;
		char name[16];

		memset(&f, 0, sizeof(f));
		snprintf(name, sizeof(name), "fn%d", i);
		f.func = profile_str(q, name);
		f.module = profile_str(q, "prog");
		f.addr = 0x100 + (uint64_t)i;
		f.symbolized = 1;
		fr[i] = profile_frame(q, &f);
	}
	nodes[0] = profile_node(q, 0, fr[0]);
	nodes[1] = profile_node(q, nodes[0], fr[1]);
	nodes[2] = profile_node(q, nodes[1], fr[2]);
	nodes[3] = profile_node(q, nodes[0], fr[3]);
	nodes[4] = profile_node(q, nodes[3], fr[1]);
	nodes[5] = profile_node(q, nodes[4], fr[2]);
	for (int i = 0; i < 150000; i++) {
		struct pc_sample x;
		uint32_t th;

		rng ^= rng << 13, rng ^= rng >> 17, rng ^= rng << 5;
		th = (uint32_t)(rng % 4);
		memset(&x, 0, sizeof(x));
		x.comm = profile_str(q, th ? "worker" : "main");
		x.pid = 7;
		x.tid = 7 + th;
		x.period = 1000;
		/* mostly one period on; now and then twice at one time, or a gap */
		clock[th] += rng % 97 == 0 ? 250000 : rng % 89 == 0 ? 0 : 1000 + rng % 300;
		x.time = 1000000 + clock[th] + (rng % 31 == 0 ? 3000 : 0);
		x.stack = nodes[(rng >> 8) % 6];
		profile_add_sample(q, &x);
	}
	/* frame fr[2] becomes two (an inlined call): every node under it changes id */
	pool[0] = fr[3];
	pool[1] = fr[2];
	profile_expand_frames(q, first, count, pool, 4);
	if (!timeline)
		profile_sort_samples(q);
}

START_TEST(timeline_writes_the_same)
{
	struct profile mem, tl;
	struct write_options o;
	profile_writer ws[2] = { speedscope_write, chrome_write };

	long_profile(&mem, 0);
	long_profile(&tl, 1);
	ck_assert_uint_eq(mem.nsamples, 150000);
	ck_assert_uint_lt(tl.nsamples, 100); /* aggregated: the timeline has the samples */
	memset(&o, 0, sizeof(o));
	o.event = -1;
	for (int i = 0; i < 2; i++)
		for (o.weight_period = 0; o.weight_period < 2; o.weight_period++) {
			char *a = test_render(&mem, ws[i], &o), *b = test_render(&tl, ws[i], &o);

			ck_assert_uint_gt(strlen(a), 100000);
			ck_assert_msg(strcmp(a, b) == 0, "writer %d, weight_period %d: outputs differ", i,
				      o.weight_period);
			free(a);
			free(b);
		}
	profile_release(&mem);
	profile_release(&tl);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("json");
	TCase *esc = tcase_create("escaping");
	TCase *w = tcase_create("writers");
	int failed;

	tcase_add_test(esc, ascii_and_specials);
	tcase_add_test(esc, control_bytes);
	tcase_add_test(esc, utf8_kept);
	tcase_add_test(esc, invalid_utf8_replaced);
	tcase_add_test(esc, every_byte_parses);
	tcase_add_test(esc, long_string_pieces);
	tcase_add_test(esc, microseconds_exact);
	suite_add_tcase(s, esc);
	tcase_add_checked_fixture(w, setup, teardown);
	tcase_add_test(w, speedscope_profiles);
	tcase_add_test(w, speedscope_thread_renamed_after_its_samples);
	tcase_add_test(w, chrome_slices);
	tcase_add_test(w, chrome_gap_ends_slices);
	tcase_add_test(w, chrome_recursion_ends_at_once);
	tcase_add_test(w, chrome_begin_after_ends);
	tcase_add_test(w, chrome_gap_closed_by_placement);
	tcase_add_test(w, chrome_no_empty_slices);
	tcase_add_test(w, timeline_writes_the_same);
	tcase_set_timeout(w, 120);
	suite_add_tcase(s, w);
	failed = run_suite(s);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
