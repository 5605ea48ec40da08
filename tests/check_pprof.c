/* check_pprof: the pprof writer's output, decoded with protobuf-c and held to the spec. */
#include <check.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "convert/pipeline.h"
#include "formats/write/pprof.h"
#include "formats/write/pprof_sample.h"
#include "profile.pb-c.h"
#include "tests/testutil.h"

typedef Perftools__Profiles__Profile pb_profile;

static struct profile p;

/* ---- writing and decoding ---- */

struct blob {
	char *data;
	size_t len;
};

static struct blob render(const struct profile *prof, const struct write_options *o)
{
	struct blob b = { NULL, 0 };
	FILE *f = open_memstream(&b.data, &b.len);

	ck_assert_int_eq(pprof_write(prof, o, f), 0);
	fclose(f);
	return b;
}

static pb_profile *decode(const struct blob *b)
{
	z_stream zs;
	size_t cap = b->len * 8 + 4096, len = 0;
	uint8_t *out = malloc(cap);
	pb_profile *prof;
	int zr;

	/* gzip magic: the file is gzipped, as the spec asks */
	ck_assert_uint_ge(b->len, 2);
	ck_assert_uint_eq((uint8_t)b->data[0], 0x1f);
	ck_assert_uint_eq((uint8_t)b->data[1], 0x8b);
	memset(&zs, 0, sizeof(zs));
	ck_assert_int_eq(inflateInit2(&zs, 15 + 32), Z_OK);
	zs.next_in = (Bytef *)b->data;
	zs.avail_in = (uInt)b->len;
	do {
		if (len == cap) {
			cap *= 2;
			out = realloc(out, cap);
		}
		zs.next_out = out + len;
		zs.avail_out = (uInt)(cap - len);
		zr = inflate(&zs, Z_NO_FLUSH);
		ck_assert(zr == Z_OK || zr == Z_STREAM_END);
		len = cap - zs.avail_out;
	} while (zr != Z_STREAM_END);
	inflateEnd(&zs);
	prof = perftools__profiles__profile__unpack(NULL, len, out);
	free(out);
	ck_assert_ptr_nonnull(prof);
	return prof;
}

static const char *str(const pb_profile *pr, int64_t i)
{
	ck_assert_int_ge(i, 0);
	ck_assert_int_lt(i, (int64_t)pr->n_string_table);
	return pr->string_table[i];
}

static const Perftools__Profiles__Location *location(const pb_profile *pr, uint64_t id)
{
	for (size_t i = 0; i < pr->n_location; i++)
		if (pr->location[i]->id == id)
			return pr->location[i];
	return NULL;
}

static const Perftools__Profiles__Function *function(const pb_profile *pr, uint64_t id)
{
	for (size_t i = 0; i < pr->n_function; i++)
		if (pr->function[i]->id == id)
			return pr->function[i];
	return NULL;
}

static const Perftools__Profiles__Mapping *mapping(const pb_profile *pr, uint64_t id)
{
	for (size_t i = 0; i < pr->n_mapping; i++)
		if (pr->mapping[i]->id == id)
			return pr->mapping[i];
	return NULL;
}

/* The string value of label `key` of sample `s`, or NULL. */
static const char *label(const pb_profile *pr, const Perftools__Profiles__Sample *s,
			 const char *key)
{
	for (size_t i = 0; i < s->n_label; i++)
		if (strcmp(str(pr, s->label[i]->key), key) == 0)
			return str(pr, s->label[i]->str);
	return NULL;
}

/* The spec's rules, for any profile. */
static void check_spec(const pb_profile *pr)
{
	ck_assert_uint_ge(pr->n_string_table, 1);
	ck_assert_str_eq(pr->string_table[0], "");
	for (size_t i = 0; i < pr->n_sample_type; i++) {
		str(pr, pr->sample_type[i]->type);
		str(pr, pr->sample_type[i]->unit);
	}
	for (size_t i = 0; i < pr->n_mapping; i++) {
		ck_assert_uint_ne(pr->mapping[i]->id, 0);
		for (size_t j = 0; j < i; j++)
			ck_assert_uint_ne(pr->mapping[i]->id, pr->mapping[j]->id);
		str(pr, pr->mapping[i]->filename);
		str(pr, pr->mapping[i]->build_id);
	}
	for (size_t i = 0; i < pr->n_function; i++) {
		ck_assert_uint_ne(pr->function[i]->id, 0);
		for (size_t j = 0; j < i; j++)
			ck_assert_uint_ne(pr->function[i]->id, pr->function[j]->id);
		ck_assert_str_ne(str(pr, pr->function[i]->name), "");
		str(pr, pr->function[i]->system_name);
		str(pr, pr->function[i]->filename);
	}
	for (size_t i = 0; i < pr->n_location; i++) {
		const Perftools__Profiles__Location *l = pr->location[i];

		ck_assert_uint_ne(l->id, 0);
		for (size_t j = 0; j < i; j++)
			ck_assert_uint_ne(l->id, pr->location[j]->id);
		if (l->mapping_id)
			ck_assert_ptr_nonnull(mapping(pr, l->mapping_id));
		for (size_t j = 0; j < l->n_line; j++)
			ck_assert_ptr_nonnull(function(pr, l->line[j]->function_id));
	}
	for (size_t i = 0; i < pr->n_sample; i++) {
		const Perftools__Profiles__Sample *s = pr->sample[i];

		ck_assert_uint_eq(s->n_value, pr->n_sample_type);
		for (size_t j = 0; j < s->n_location_id; j++)
			ck_assert_ptr_nonnull(location(pr, s->location_id[j]));
		for (size_t j = 0; j < s->n_label; j++) {
			str(pr, s->label[j]->key);
			str(pr, s->label[j]->str);
		}
	}
	for (size_t i = 0; i < pr->n_comment; i++)
		str(pr, pr->comment[i]);
	str(pr, pr->default_sample_type);
	if (pr->period_type) {
		str(pr, pr->period_type->type);
		str(pr, pr->period_type->unit);
	}
}

/* ---- a small profile made by hand ---- */

static uint32_t map_id;

static uint32_t frame(const char *name, int kind, uint64_t addr, int symbolized, uint32_t line,
		      uint32_t mapping)
{
	struct pc_frame f;

	memset(&f, 0, sizeof(f));
	f.func = profile_str(&p, name);
	f.system_name = profile_str(&p, symbolized && kind != FRAME_KERNEL ? name : "");
	f.file = profile_str(&p, symbolized && kind != FRAME_KERNEL ? "prog.c" : "");
	f.line = line;
	f.column = line ? 5 : 0;
	f.kind = (uint8_t)kind;
	f.addr = addr;
	f.mapping = mapping;
	f.symbolized = (uint8_t)symbolized;
	return profile_frame(&p, &f);
}

static void sample(const char *comm, uint32_t pid, uint32_t tid, uint32_t cpu, uint32_t node,
		   uint64_t period, uint16_t event)
{
	struct pc_sample s;

	memset(&s, 0, sizeof(s));
	s.comm = profile_str(&p, comm);
	s.pid = pid;
	s.tid = tid;
	s.cpu = cpu;
	s.stack = node;
	s.period = period;
	s.event = event;
	s.time = 1000 + p.nsamples * 250000;
	profile_add_sample(&p, &s);
}

static void setup(void)
{
	struct pc_event e;
	struct pc_mapping m;
	uint32_t main_f, mix_rounds, mix32, leaf_k, unk;
	uint32_t s1[4], s2[2], s3[3];

	profile_init(&p);
	memset(&e, 0, sizeof(e));
	e.name = profile_str(&p, "cpu-clock:pppH");
	e.unit = PC_UNIT_NANOSECONDS;
	e.is_clock = 1;
	e.freq = 1;
	e.sample_period = 4000;
	profile_add_event(&p, &e);
	e.name = profile_str(&p, "page-faults");
	e.unit = PC_UNIT_COUNT;
	e.is_clock = 0;
	e.freq = 0;
	e.sample_period = 1;
	profile_add_event(&p, &e);
	memset(&m, 0, sizeof(m));
	m.start = 0x1000;
	m.limit = 0x9000;
	m.offset = 0;
	m.file = profile_str(&p, "/usr/bin/prog");
	m.build_id = profile_str(&p, "0123456789abcdef");
	m.kind = FRAME_NATIVE;
	m.has_inline_frames = 1;
	map_id = profile_mapping(&p, &m);
	p.perf_version = profile_str(&p, "6.1.0");
	p.cmdline = profile_str(&p, "perf record -g ./prog");
	p.hostname = profile_str(&p, "buildhost");
	p.has_time = 1;
	p.has_wall_clock = 1;
	p.clock_ns = 500;
	p.wall_ns = 1700000000000000000ULL;

	main_f = frame("main", FRAME_NATIVE, 0x1100, 1, 10, map_id);
	/* mix32 inlined into mix_rounds at 0x1200: one Location, mix32 first */
	mix32 = frame("mix32", FRAME_INLINED, 0x1200, 1, 44, map_id);
	mix_rounds = frame("mix_rounds", FRAME_NATIVE, 0x1200, 1, 56, map_id);
	leaf_k = frame("do_syscall_64", FRAME_KERNEL, 0xffffffff81000100ULL, 1, 0, 0);
	unk = frame("prog+0x1f00", FRAME_NATIVE, 0x2f00, 0, 0, map_id);
	s1[0] = main_f; s1[1] = mix_rounds; s1[2] = mix32; s1[3] = leaf_k;
	s2[0] = main_f; s2[1] = unk;
	s3[0] = main_f; s3[1] = mix_rounds; s3[2] = mix32;
	sample("prog", 10, 11, 0, test_stack(&p, s1, 4), 250000, 0);
	sample("prog", 10, 11, 0, test_stack(&p, s1, 4), 250000, 0); /* merges with the one above */
	sample("prog", 10, 12, 1, test_stack(&p, s1, 4), 250000, 0);
	sample("worker", 10, 13, 1, test_stack(&p, s2, 2), 250000, 0);
	sample("prog", 10, 11, 0, test_stack(&p, s3, 3), 3, 1);      /* page faults: same sample as... */
	sample("prog", 10, 11, 0, test_stack(&p, s1, 4), 7, 1);      /* ...the first two: merged */
}

static void teardown(void)
{
	profile_release(&p);
}

static struct write_options opts(int event)
{
	struct write_options o;

	memset(&o, 0, sizeof(o));
	o.event = event;
	return o;
}

/* The sample whose leaf location has `leaf` as its first line's function and these labels. */
static const Perftools__Profiles__Sample *find_sample(const pb_profile *pr, const char *leaf,
						       const char *tid)
{
	for (size_t i = 0; i < pr->n_sample; i++) {
		const Perftools__Profiles__Sample *s = pr->sample[i];
		const Perftools__Profiles__Location *l = location(pr, s->location_id[0]);
		const char *name = l->n_line ? str(pr, function(pr, l->line[0]->function_id)->name)
					     : "";
		const char *t = label(pr, s, "thread id") ? label(pr, s, "thread id")
							  : label(pr, s, "thread_id");

		if (strcmp(name, leaf) == 0 && t && strcmp(t, tid) == 0)
			return s;
	}
	return NULL;
}

START_TEST(spec_rules_hold)
{
	struct write_options o = opts(-1);
	struct blob b = render(&p, &o);
	pb_profile *pr = decode(&b);

	check_spec(pr);
	perftools__profiles__profile__free_unpacked(pr, NULL);
	free(b.data);
}
END_TEST

/* Issue 12 B5: profile.proto's strings are proto3 strings, UTF-8 only: ill-formed bytes
 * in names become U+FFFD, as in the JSON writers (a stray 0xff, a cut sequence, Latin-1). */
START_TEST(strings_are_utf8)
{
	struct write_options o = opts(-1);
	uint32_t f = frame("odd\xff\xc3(\xe2\x82\xac)", FRAME_NATIVE, 0x1300, 1, 3, map_id);
	struct blob b;
	pb_profile *pr;
	int found_name = 0, found_comm = 0;

	sample("w\xe9rk", 10, 14, 0, test_stack(&p, &f, 1), 250000, 0);
	b = render(&p, &o);
	pr = decode(&b);
	for (size_t i = 0; i < pr->n_string_table; i++) {
		const char *t = pr->string_table[i];

		ck_assert_msg(strstr(t, "\xff") == NULL && strstr(t, "\xe9r") == NULL,
			      "ill-formed UTF-8 in the string table: %s", t);
		found_name |= strcmp(t, "odd\xef\xbf\xbd\xef\xbf\xbd(\xe2\x82\xac)") == 0;
		found_comm |= strcmp(t, "w\xef\xbf\xbdrk") == 0;
	}
	ck_assert(found_name);
	ck_assert(found_comm);
	perftools__profiles__profile__free_unpacked(pr, NULL);
	free(b.data);
}
END_TEST

START_TEST(clock_sample_types_count_first)
{
	struct write_options o = opts(0);
	struct blob b = render(&p, &o);
	pb_profile *pr = decode(&b);

	ck_assert_uint_eq(pr->n_sample_type, 2);
	ck_assert_str_eq(str(pr, pr->sample_type[0]->type), "cpu-samples");
	ck_assert_str_eq(str(pr, pr->sample_type[0]->unit), "count");
	ck_assert_str_eq(str(pr, pr->sample_type[1]->type), "cpu-time");
	ck_assert_str_eq(str(pr, pr->sample_type[1]->unit), "nanoseconds");
	ck_assert_str_eq(str(pr, pr->default_sample_type), "cpu-time");
	ck_assert_str_eq(str(pr, pr->period_type->type), "cpu");
	ck_assert_str_eq(str(pr, pr->period_type->unit), "nanoseconds");
	ck_assert_int_eq(pr->period, 250000); /* -F 4000 */
	/* wall clock of the first sample: time - clock_ns + wall_ns */
	ck_assert_int_eq(pr->time_nanos, (int64_t)(1000 - 500 + 1700000000000000000ULL));
	ck_assert_int_eq(pr->duration_nanos, 5 * 250000);
	perftools__profiles__profile__free_unpacked(pr, NULL);
	free(b.data);
}
END_TEST

START_TEST(all_events_become_sample_types)
{
	struct write_options o = opts(-1);
	struct blob b = render(&p, &o);
	pb_profile *pr = decode(&b);
	const Perftools__Profiles__Sample *s;

	ck_assert_uint_eq(pr->n_sample_type, 4);
	ck_assert_str_eq(str(pr, pr->sample_type[2]->type), "page-faults-samples");
	ck_assert_str_eq(str(pr, pr->sample_type[3]->type), "page-faults");
	ck_assert_str_eq(str(pr, pr->sample_type[3]->unit), "count");
	/* two clock samples and one page-fault sample of one stack and thread: one Sample */
	s = find_sample(pr, "do_syscall_64", "11");
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(s->value[0], 2);
	ck_assert_int_eq(s->value[1], 500000);
	ck_assert_int_eq(s->value[2], 1);
	ck_assert_int_eq(s->value[3], 7);
	/* 6 samples: 2 + 1 merged, the others alone */
	ck_assert_uint_eq(pr->n_sample, 4);
	perftools__profiles__profile__free_unpacked(pr, NULL);
	free(b.data);
}
END_TEST

START_TEST(inlined_frames_are_lines_of_one_location)
{
	struct write_options o = opts(0);
	struct blob b = render(&p, &o);
	pb_profile *pr = decode(&b);
	const Perftools__Profiles__Sample *s = find_sample(pr, "do_syscall_64", "11");
	const Perftools__Profiles__Location *l;
	const Perftools__Profiles__Function *f;
	const Perftools__Profiles__Mapping *m;

	ck_assert_ptr_nonnull(s);
	/* leaf first: kernel, then mix32+mix_rounds, then main */
	ck_assert_uint_eq(s->n_location_id, 3);
	l = location(pr, s->location_id[1]);
	ck_assert_uint_eq(l->address, 0x1200);
	ck_assert_uint_eq(l->n_line, 2);
	f = function(pr, l->line[0]->function_id);
	ck_assert_str_eq(str(pr, f->name), "mix32");
	ck_assert_str_eq(str(pr, f->system_name), "mix32");
	ck_assert_str_eq(str(pr, f->filename), "prog.c");
	ck_assert_int_eq(l->line[0]->line, 44);
	ck_assert_int_eq(l->line[0]->column, 5);
	ck_assert_str_eq(str(pr, function(pr, l->line[1]->function_id)->name), "mix_rounds");
	ck_assert_int_eq(l->line[1]->line, 56);
	m = mapping(pr, l->mapping_id);
	ck_assert_str_eq(str(pr, m->filename), "/usr/bin/prog");
	ck_assert_str_eq(str(pr, m->build_id), "0123456789abcdef");
	ck_assert_uint_eq(m->memory_start, 0x1000);
	ck_assert_uint_eq(m->memory_limit, 0x9000);
	ck_assert(m->has_functions && m->has_filenames && m->has_line_numbers &&
		  m->has_inline_frames);
	/* the main binary comes first */
	ck_assert_uint_eq(m->id, 1);
	/* the kernel frame, with no recorded mapping, gets one that says what it is */
	l = location(pr, s->location_id[0]);
	m = mapping(pr, l->mapping_id);
	ck_assert_ptr_nonnull(m);
	ck_assert_str_eq(str(pr, m->filename), "[kernel.kallsyms]");
	ck_assert(m->has_functions && !m->has_line_numbers);
	ck_assert_str_eq(str(pr, function(pr, l->line[0]->function_id)->system_name),
			 "do_syscall_64");
	l = location(pr, s->location_id[2]);
	ck_assert_str_eq(str(pr, function(pr, l->line[0]->function_id)->name), "main");
	perftools__profiles__profile__free_unpacked(pr, NULL);
	free(b.data);
}
END_TEST

START_TEST(unsymbolized_frames_have_no_lines)
{
	struct write_options o = opts(0);
	struct blob b = render(&p, &o);
	pb_profile *pr = decode(&b);
	const Perftools__Profiles__Sample *s = NULL;
	const Perftools__Profiles__Location *l;

	for (size_t i = 0; i < pr->n_sample; i++)
		if (strcmp(label(pr, pr->sample[i], "thread id"), "13") == 0)
			s = pr->sample[i];
	ck_assert_ptr_nonnull(s);
	l = location(pr, s->location_id[0]);
	ck_assert_uint_eq(l->n_line, 0);
	ck_assert_uint_eq(l->address, 0x2f00);
	ck_assert_str_eq(str(pr, mapping(pr, l->mapping_id)->filename), "/usr/bin/prog");
	perftools__profiles__profile__free_unpacked(pr, NULL);
	free(b.data);
}
END_TEST

START_TEST(labels_and_comments)
{
	struct write_options o = opts(0);
	struct blob b;
	pb_profile *pr;
	const Perftools__Profiles__Sample *s;
	int seen = 0;

	o.cpu_label = 1;
	b = render(&p, &o);
	pr = decode(&b);
	s = find_sample(pr, "do_syscall_64", "12");
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(label(pr, s, "process_id"), "10");
	ck_assert_str_eq(label(pr, s, "thread_name"), "prog");
	ck_assert_str_eq(label(pr, s, "cpu"), "1");
	ck_assert_int_eq(s->value[0], 1);
	for (size_t i = 0; i < pr->n_comment; i++) {
		const char *c = str(pr, pr->comment[i]);

		seen |= (strcmp(c, "perf version 6.1.0") == 0) << 0;
		seen |= (strcmp(c, "command: perf record -g ./prog") == 0) << 1;
		seen |= (strcmp(c, "host: buildhost") == 0) << 2;
	}
	ck_assert_int_eq(seen, 7);
	perftools__profiles__profile__free_unpacked(pr, NULL);
	free(b.data);
	/* without --cpu-label: no cpu label, and samples on different cpus merge */
	o.cpu_label = 0;
	b = render(&p, &o);
	pr = decode(&b);
	ck_assert_ptr_null(label(pr, find_sample(pr, "do_syscall_64", "12"), "cpu"));
	perftools__profiles__profile__free_unpacked(pr, NULL);
	free(b.data);
}
END_TEST

START_TEST(jit_code_gets_a_mapping_of_its_own)
{
	struct write_options o = opts(0);
	struct pc_frame f;
	uint32_t fr[2];
	struct blob b;
	pb_profile *pr;
	const Perftools__Profiles__Location *l;
	const Perftools__Profiles__Mapping *m;

	memset(&f, 0, sizeof(f));
	f.func = profile_str(&p, "Interpreter::run");
	f.file = profile_str(&p, "run.js");
	f.line = 12;
	f.module = profile_str(&p, "perf-10.map");
	f.kind = FRAME_JIT;
	f.addr = 0x7f0000001000ULL;
	f.symbolized = 1;
	fr[0] = frame("main", FRAME_NATIVE, 0x1100, 1, 10, map_id);
	fr[1] = profile_frame(&p, &f);
	sample("prog", 10, 14, 0, test_stack(&p, fr, 2), 250000, 0);
	b = render(&p, &o);
	pr = decode(&b);
	check_spec(pr);
	l = location(pr, find_sample(pr, "Interpreter::run", "14")->location_id[0]);
	ck_assert_int_eq(l->line[0]->line, 12);
	m = mapping(pr, l->mapping_id);
	ck_assert_ptr_nonnull(m);
	ck_assert_str_eq(str(pr, m->filename), "perf-10.map");
	ck_assert_uint_eq(m->memory_start, 0x7f0000001000ULL);
	ck_assert(m->has_functions && m->has_filenames && m->has_line_numbers);
	perftools__profiles__profile__free_unpacked(pr, NULL);
	free(b.data);
}
END_TEST

START_TEST(same_bytes_every_time)
{
	struct write_options o = opts(-1);
	struct blob a = render(&p, &o), b = render(&p, &o);

	ck_assert_uint_eq(a.len, b.len);
	ck_assert(memcmp(a.data, b.data, a.len) == 0);
	free(a.data);
	free(b.data);
}
END_TEST

/* --for pyroscope: Go's sample types, Prometheus label keys, process_name, the labels
 * given, time_nanos and duration_nanos as given (a watched chunk's window), and perf's 0
 * callchain entry a Location with a line */
START_TEST(shaped_for_pyroscope)
{
	struct write_options o = opts(-1);
	struct write_label l[2] = { { "service", "shop" }, { "env", "prod" } };
	struct blob b;
	pb_profile *pr;
	const Perftools__Profiles__Sample *s;
	uint32_t st[2], zero, main_f;
	int seen_zero = 0;

	main_f = frame("main", FRAME_NATIVE, 0x1100, 1, 10, map_id);
	zero = frame("[unknown]", FRAME_NATIVE, 0, 0, 0, 0);
	st[0] = main_f;
	st[1] = zero;
	sample("prog", 10, 10, 0, test_stack(&p, st, 2), 250000, 0);
	o.pprof_for = PPROF_FOR_PYROSCOPE;
	o.time_nanos = 1777636800000000000LL;
	o.duration_nanos = 20000000000LL;
	o.labels = l;
	o.nlabels = 2;
	b = render(&p, &o);
	pr = decode(&b);
	check_spec(pr);
	ck_assert_str_eq(str(pr, pr->sample_type[0]->type), "samples");
	ck_assert_str_eq(str(pr, pr->sample_type[1]->type), "cpu");
	ck_assert_str_eq(str(pr, pr->sample_type[2]->type), "page_faults_samples");
	ck_assert_str_eq(str(pr, pr->sample_type[3]->type), "page_faults");
	for (size_t i = 0; i < pr->n_sample_type; i++)
		ck_assert_ptr_null(strchr(str(pr, pr->sample_type[i]->type), '-'));
	ck_assert_int_eq(pr->time_nanos, 1777636800000000000LL);
	ck_assert_int_eq(pr->duration_nanos, 20000000000LL);
	s = find_sample(pr, "do_syscall_64", "11");
	ck_assert_ptr_nonnull(s);
	ck_assert_ptr_null(label(pr, s, "thread id"));
	ck_assert_str_eq(label(pr, s, "thread_id"), "11");
	ck_assert_str_eq(label(pr, s, "service"), "shop");
	ck_assert_str_eq(label(pr, s, "env"), "prod");
	/* pid 10's main thread (tid 10) is named prog */
	ck_assert_str_eq(label(pr, s, "process_name"), "prog");
	for (size_t i = 0; i < pr->n_location; i++) {
		const Perftools__Profiles__Location *loc = pr->location[i];

		/* no Location Pyroscope would drop with its samples */
		ck_assert(loc->address != 0 || loc->n_line > 0);
		if (loc->address == 0) {
			ck_assert_str_eq(str(pr, function(pr, loc->line[0]->function_id)->name), "[unknown]");
			seen_zero = 1;
		}
	}
	ck_assert_int_eq(seen_zero, 1);
	perftools__profiles__profile__free_unpacked(pr, NULL);
	free(b.data);
	/* without --for the same frame is an address-only Location, as before */
	o = opts(-1);
	b = render(&p, &o);
	pr = decode(&b);
	for (size_t i = 0; i < pr->n_location; i++)
		if (pr->location[i]->address == 0)
			ck_assert_uint_eq(pr->location[i]->n_line, 0);
	ck_assert_str_eq(str(pr, pr->sample_type[0]->type), "cpu-samples");
	/* its first sample to its last */
	ck_assert_int_eq(pr->duration_nanos, (int64_t)(p.last_time - p.first_time));
	perftools__profiles__profile__free_unpacked(pr, NULL);
	free(b.data);
}
END_TEST

/* ---- a real recording through the real pipeline ---- */

/* testdata/NAME read as perfconv reads it, kernel symbols from testdata/kallsyms.gz. */
static void read_recording(const char *name, struct profile *rp, struct convert_stats *st)
{
	const char *top = getenv("PERFCONV_TOP") ? getenv("PERFCONV_TOP") : ".";
	char input[4096], kallsyms[4096];
	struct session_options co;
	struct diag d;

	snprintf(input, sizeof(input), "%s/testdata/%s", top, name);
	snprintf(kallsyms, sizeof(kallsyms), "%s/testdata/kallsyms.gz", top);
	memset(&co, 0, sizeof(co));
	co.input = input;
	co.quiet = 1;
	co.sym.kallsyms = kallsyms;
	co.sym.demangle = 1;
	co.sym.inline_frames = 1;
	diag_init(&d);
	profile_init(rp);
	ck_assert_int_eq(convert_read(&co, rp, st, &d, NULL), 0);
}

/* pprof_sample_pack gives protobuf-c's bytes: samples with no locations or values,
 * zeros in packed fields and labels, negative and 64-bit numbers, many labels. */
START_TEST(samples_packed_as_protobuf_c_packs_them)
{
	static const int64_t nums[] = { 0, 1, 127, 128, 16383, 16384, -1, -128, INT64_MAX,
					INT64_MIN, 1LL << 35, 300 };
	uint64_t locs[40], seed = 12345;
	int64_t vals[6];
	Perftools__Profiles__Label lab[7], *labp[7];
	uint8_t want[4096], got[4096];
	size_t kinds = sizeof(nums) / sizeof(nums[0]);

	for (int t = 0; t < 2000; t++) {
		Perftools__Profiles__Sample s = PERFTOOLS__PROFILES__SAMPLE__INIT;
		size_t nw, ng;

#define NEXT() (seed = seed * 6364136223846793005ULL + 1442695040888963407ULL, seed >> 33)
		s.n_location_id = t % 7 == 0 ? 0 : NEXT() % 40;
		for (size_t i = 0; i < s.n_location_id; i++)
			locs[i] = i % 3 ? NEXT() % 5000 : (uint64_t)nums[NEXT() % kinds];
		s.n_value = t % 11 == 0 ? 0 : 2 * (1 + NEXT() % 3);
		for (size_t i = 0; i < s.n_value; i++)
			vals[i] = i % 2 ? (int64_t)(NEXT() * 1000003) : nums[NEXT() % kinds];
		s.n_label = NEXT() % 8;
		for (size_t i = 0; i < s.n_label; i++) {
			Perftools__Profiles__Label init = PERFTOOLS__PROFILES__LABEL__INIT;

			lab[i] = init;
			lab[i].key = nums[NEXT() % kinds];
			lab[i].str = NEXT() % 2 ? (int64_t)(NEXT() % 70000) : 0;
			lab[i].num = NEXT() % 3 ? 0 : nums[NEXT() % kinds];
			lab[i].num_unit = NEXT() % 4 ? 0 : (int64_t)(NEXT() % 300);
			labp[i] = &lab[i];
		}
#undef NEXT
		s.location_id = locs;
		s.value = vals;
		s.label = labp;
		nw = perftools__profiles__sample__pack(&s, want);
		ck_assert_uint_le(pprof_sample_bound(&s), sizeof(got));
		ck_assert_uint_ge(pprof_sample_bound(&s), nw);
		ng = pprof_sample_pack(&s, got);
		ck_assert_msg(ng == nw && memcmp(got, want, nw) == 0,
			      "sample %d (%zu locations, %zu values, %zu labels): %zu bytes where "
			      "protobuf-c packs %zu", t, s.n_location_id, s.n_value, s.n_label, ng, nw);
	}
}
END_TEST

START_TEST(real_recording)
{
	struct convert_stats st;
	struct write_options o = opts(-1);
	struct profile rp;
	struct blob a, b;
	pb_profile *pr;
	int64_t total = 0, inline_locs = 0, build_ids = 0;

	read_recording("mt-g.data", &rp, &st);
	a = render(&rp, &o);
	b = render(&rp, &o);
	ck_assert_uint_eq(a.len, b.len);
	ck_assert(memcmp(a.data, b.data, a.len) == 0);
	pr = decode(&a);
	check_spec(pr);
	ck_assert_str_eq(str(pr, pr->sample_type[0]->type), "cpu-samples");
	for (size_t i = 0; i < pr->n_sample; i++)
		total += pr->sample[i]->value[0];
	ck_assert_int_eq(total, (int64_t)st.samples);
	ck_assert_uint_lt(pr->n_sample, st.samples / 4); /* merged */
	for (size_t i = 0; i < pr->n_location; i++) {
		const Perftools__Profiles__Location *l = pr->location[i];

		if (l->n_line > 1 &&
		    strcmp(str(pr, function(pr, l->line[0]->function_id)->name), "mix32") == 0 &&
		    strcmp(str(pr, function(pr, l->line[l->n_line - 1]->function_id)->name),
			   "mix_rounds") == 0)
			inline_locs++;
	}
	ck_assert_int_gt(inline_locs, 0);
	for (size_t i = 0; i < pr->n_mapping; i++)
		build_ids += strlen(str(pr, pr->mapping[i]->build_id)) == 40;
	ck_assert_int_eq(build_ids, (int64_t)pr->n_mapping);
	ck_assert_str_eq(str(pr, pr->mapping[0]->filename), "/tmp/perfconv-rec/mt");
	perftools__profiles__profile__free_unpacked(pr, NULL);
	free(a.data);
	free(b.data);
	profile_release(&rp);
}
END_TEST

/* A sample as a string a reader would see: process, thread, thread name, then every
 * frame innermost first (its function's name, or the address of a frame without a
 * symbol); and what it counts. */
struct keyed {
	char *key;
	int64_t count, period;
};

static int keyed_cmp(const void *a, const void *b)
{
	return strcmp(((const struct keyed *)a)->key, ((const struct keyed *)b)->key);
}

/* Sorted by key, one entry per key with the sums; returns how many. */
static size_t keyed_merge(struct keyed *k, size_t n)
{
	size_t m = 0;

	qsort(k, n, sizeof(*k), keyed_cmp);
	for (size_t i = 0; i < n; i++) {
		if (m && strcmp(k[m - 1].key, k[i].key) == 0) {
			k[m - 1].count += k[i].count;
			k[m - 1].period += k[i].period;
			free(k[i].key);
		} else {
			k[m++] = k[i];
		}
	}
	return m;
}

static char *key_add(char *key, const char *part)
{
	size_t len = key ? strlen(key) : 0;

	key = realloc(key, len + strlen(part) + 2);
	snprintf(key + len, strlen(part) + 2, "%s;", part);
	return key;
}

static char *sample_head(uint32_t pid, uint32_t tid, const char *comm)
{
	char buf[256];

	snprintf(buf, sizeof(buf), "%u/%u/%s", pid, tid, comm);
	return key_add(NULL, buf);
}

static int model_sample_cmp(const void *a, const void *b)
{
	const struct pc_sample *x = a, *y = b;

	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return (x->comm > y->comm) - (x->comm < y->comm);
}

/*
 * The file's samples, read back one by one, are the recording's: as many as it has
 * distinct (stack, process, thread, name), and per stack of frames and thread the
 * same counts and periods. Fails if the samples streamed into the Profile were cut,
 * shifted, or given another sample's locations or values.
 */
START_TEST(samples_are_the_recordings)
{
	static const char *const names[] = { "mt-g.data", "jit/node.data" };
	struct convert_stats st;
	struct write_options o = opts(-1);
	struct profile rp;
	struct blob b;
	pb_profile *pr;
	struct keyed *want, *got;
	struct pc_sample *sorted;
	size_t nwant, ngot, distinct = 0;

	read_recording(names[_i], &rp, &st);
	ck_assert_uint_eq(rp.nevents, 1);
	b = render(&rp, &o);
	pr = decode(&b);
	ck_assert_uint_eq(pr->n_sample_type, 2);

	sorted = malloc(rp.nsamples * sizeof(*sorted));
	memcpy(sorted, rp.samples, rp.nsamples * sizeof(*sorted));
	qsort(sorted, rp.nsamples, sizeof(*sorted), model_sample_cmp);
	for (size_t i = 0; i < rp.nsamples; i++)
		distinct += i == 0 || model_sample_cmp(&sorted[i - 1], &sorted[i]) != 0;
	free(sorted);
	ck_assert_uint_gt(distinct, 50);
	ck_assert_uint_eq(pr->n_sample, distinct);

	want = calloc(rp.nsamples, sizeof(*want));
	for (size_t i = 0; i < rp.nsamples; i++) {
		const struct pc_sample *s = &rp.samples[i];
		char *key = sample_head(s->pid, s->tid, profile_text(&rp, s->comm));

		for (uint32_t node = s->stack; node; node = rp.nodes[node].parent) {
			const struct pc_frame *f = &rp.frames[rp.nodes[node].frame];
			char addr[32];

			snprintf(addr, sizeof(addr), "0x%" PRIx64, f->addr);
			key = key_add(key, f->symbolized ? profile_text(&rp, f->func) : addr);
		}
		want[i].key = key;
		want[i].count = (int64_t)s->count;
		want[i].period = (int64_t)s->period;
	}
	got = calloc(pr->n_sample, sizeof(*got));
	for (size_t i = 0; i < pr->n_sample; i++) {
		const Perftools__Profiles__Sample *s = pr->sample[i];
		char *key = sample_head((uint32_t)strtoul(label(pr, s, "process_id"), NULL, 10),
					(uint32_t)strtoul(label(pr, s, "thread id"), NULL, 10),
					label(pr, s, "thread_name") ? label(pr, s, "thread_name") : "");

		ck_assert_uint_gt(s->n_location_id, 0);
		for (size_t j = 0; j < s->n_location_id; j++) {
			const Perftools__Profiles__Location *l = location(pr, s->location_id[j]);
			char addr[32];

			snprintf(addr, sizeof(addr), "0x%" PRIx64, l->address);
			if (!l->n_line)
				key = key_add(key, addr);
			for (size_t k = 0; k < l->n_line; k++)
				key = key_add(key, str(pr, function(pr, l->line[k]->function_id)->name));
		}
		got[i].key = key;
		got[i].count = s->value[0];
		got[i].period = s->value[1];
	}
	nwant = keyed_merge(want, rp.nsamples);
	ngot = keyed_merge(got, pr->n_sample);
	ck_assert_uint_eq(ngot, nwant);
	for (size_t i = 0; i < nwant; i++) {
		ck_assert_str_eq(got[i].key, want[i].key);
		ck_assert_int_eq(got[i].count, want[i].count);
		ck_assert_int_eq(got[i].period, want[i].period);
		free(got[i].key);
		free(want[i].key);
	}
	free(got);
	free(want);
	perftools__profiles__profile__free_unpacked(pr, NULL);
	free(b.data);
	profile_release(&rp);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("pprof");
	TCase *tc = tcase_create("core");
	TCase *real = tcase_create("real");
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, spec_rules_hold);
	tcase_add_test(tc, strings_are_utf8);
	tcase_add_test(tc, clock_sample_types_count_first);
	tcase_add_test(tc, all_events_become_sample_types);
	tcase_add_test(tc, inlined_frames_are_lines_of_one_location);
	tcase_add_test(tc, unsymbolized_frames_have_no_lines);
	tcase_add_test(tc, labels_and_comments);
	tcase_add_test(tc, jit_code_gets_a_mapping_of_its_own);
	tcase_add_test(tc, same_bytes_every_time);
	tcase_add_test(tc, shaped_for_pyroscope);
	tcase_add_test(tc, samples_packed_as_protobuf_c_packs_them);
	suite_add_tcase(s, tc);
	tcase_set_timeout(real, 120);
	tcase_add_test(real, real_recording);
	tcase_add_loop_test(real, samples_are_the_recordings, 0, 2);
	suite_add_tcase(s, real);
	failed = run_suite(s);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
