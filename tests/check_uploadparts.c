/* check_uploadparts: a profile cut in time for a backend's limits (every sample in one
 * part, each part under the limits, windows that tile), and Datadog's runtime-id and
 * profile_seq per run, kept in a folder across a restart. */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/inflate.h"
#include "upload/runtimeid.h"
#include "upload/upload.h"
#include "upload/uploadparts.h"
#include "formats/write/pprof.h"
#include "profile.pb-c.h"
#include "tests/testutil.h"

#define NS 200
#define T0 1000000000ULL       /* the first sample, perf's clock */
#define STEP 10000000ULL       /* 10 ms apart */
#define WALL 1800000000000000000LL /* wall clock less perf's */

static struct profile p;
static struct write_options wo;

/* NS samples, one a thread (so none merge), at times T0 + i * STEP; with `same_time`
 * all at T0. */
static void make(int same_time)
{
	struct pc_event e;
	struct pc_frame f;
	uint32_t node = 0;

	profile_init(&p);
	p.aggregate = 1;
	p.aggregate_ns = 1;
	memset(&e, 0, sizeof(e));
	e.name = profile_str(&p, "cpu-clock");
	e.unit = PC_UNIT_NANOSECONDS;
	e.is_clock = 1;
	profile_add_event(&p, &e);
	p.has_time = 1;
	for (int d = 0; d < 8; d++) {
		char name[32];

		memset(&f, 0, sizeof(f));
		snprintf(name, sizeof(name), "fn%d", d);
		f.func = profile_str(&p, name);
		f.symbolized = 1;
		node = profile_node(&p, node, profile_frame(&p, &f));
	}
	for (int i = 0; i < NS; i++) {
		struct pc_sample s;

		memset(&s, 0, sizeof(s));
		s.stack = node;
		s.pid = 100;
		s.tid = 100 + (uint32_t)i;
		s.comm = profile_str(&p, "worker");
		s.cpu = PC_NO_CPU;
		s.period = 1000000;
		s.time = same_time ? T0 : T0 + (uint64_t)i * STEP;
		profile_add_sample(&p, &s);
	}
	memset(&wo, 0, sizeof(wo));
	wo.event = -1;
	wo.pprof_for = PPROF_FOR_PYROSCOPE;
}

static int64_t start_ns(void) { return (int64_t)T0 + WALL - 5000000; }
static int64_t end_ns(void) { return (int64_t)(T0 + (NS - 1) * STEP) + WALL; }

/* Part `pt`'s pprof as written: its time_nanos and duration_nanos. */
static void written_window(const struct upload_part *pt, int64_t *t, int64_t *dur)
{
	uint8_t *raw;
	size_t len;
	Perftools__Profiles__Profile *pr;

	ck_assert_int_eq(inflate_gzip((const uint8_t *)pt->buf, pt->len, &raw, &len), 0);
	pr = perftools__profiles__profile__unpack(NULL, len, raw);
	ck_assert_ptr_nonnull(pr);
	*t = pr->time_nanos;
	*dur = pr->duration_nanos;
	perftools__profiles__profile__free_unpacked(pr, NULL);
	free(raw);
}

/* Every part under `l`, NS samples in all, the windows tiling [start_ns, end_ns]. */
static void check_cut(const struct upload_cut *c, const struct upload_limits *l)
{
	uint64_t rows = 0;

	ck_assert_int_eq(c->parts[0].start_ns, start_ns());
	ck_assert_int_eq(c->parts[c->n - 1].end_ns, end_ns());
	for (size_t i = 0; i < c->n; i++) {
		const struct upload_part *pt = &c->parts[i];

		ck_assert_int_eq(pt->over, 0);
		ck_assert(pt->len > 20 && pt->buf[0] == 0x1f);
		if (l->samples)
			ck_assert_uint_le(pt->st.samples, l->samples);
		if (l->bytes)
			ck_assert_uint_le(pt->st.bytes, l->bytes);
		ck_assert_int_lt(pt->start_ns, pt->end_ns);
		if (i)
			ck_assert_int_eq(pt->start_ns, c->parts[i - 1].end_ns);
		{
			int64_t t, dur;

			/* the pprof says the part's window, not the whole's */
			written_window(pt, &t, &dur);
			ck_assert_int_eq(t, pt->start_ns);
			ck_assert_int_eq(t + dur, pt->end_ns);
		}
		rows += pt->st.samples;
	}
	ck_assert_uint_eq(rows, NS);
}

START_TEST(under_the_limit_whole)
{
	struct upload_limits l = { 0, 1000, NULL, NULL };
	struct upload_cut c;

	make(0);
	ck_assert_int_eq(upload_cut_make(&p, &wo, NULL, &l, start_ns(), end_ns(), WALL, &c), 0);
	ck_assert_uint_eq(c.n, 1);
	ck_assert_int_eq(c.why, 0);
	ck_assert_uint_eq(c.parts[0].st.samples, NS);
	ck_assert_uint_eq(c.parts[0].to, 0);
	upload_cut_release(&c);
	profile_release(&p);
}
END_TEST

START_TEST(cut_by_samples)
{
	struct upload_limits l = { 0, 45, NULL, NULL };
	struct upload_cut c;

	make(0);
	ck_assert_int_eq(upload_cut_make(&p, &wo, NULL, &l, start_ns(), end_ns(), WALL, &c), 0);
	ck_assert_int_eq(c.why, 2);
	ck_assert_uint_eq(c.whole_samples, NS);
	ck_assert_uint_ge(c.n, 5); /* 200 / 45 */
	ck_assert_uint_le(c.n, 7);
	check_cut(&c, &l);
	/* and cut again: one part in two, the rest as they were */
	{
		size_t n = c.n;
		uint64_t first = c.parts[0].st.samples;

		ck_assert_int_eq(upload_cut_halve(&p, &wo, NULL, WALL, &c, 0), 0);
		ck_assert_uint_eq(c.n, n + 1);
		ck_assert_uint_eq(c.parts[0].st.samples + c.parts[1].st.samples, first);
		ck_assert_uint_eq(c.parts[0].st.samples, first / 2);
		check_cut(&c, &l);
	}
	upload_cut_release(&c);
	profile_release(&p);
}
END_TEST

START_TEST(cut_by_bytes_with_timestamps)
{
	struct upload_limits l = { 0, 0, NULL, NULL };
	struct upload_cut c;

	make(0);
	wo.pprof_for = PPROF_FOR_DATADOG;
	wo.timestamps = 1;
	wo.wall_offset = WALL;
	ck_assert_int_eq(upload_cut_make(&p, &wo, NULL, &l, start_ns(), end_ns(), WALL, &c), 0);
	l.bytes = c.parts[0].st.bytes / 3;
	upload_cut_release(&c);
	ck_assert_int_eq(upload_cut_make(&p, &wo, NULL, &l, start_ns(), end_ns(), WALL, &c), 0);
	ck_assert_int_eq(c.why, 1);
	ck_assert_uint_ge(c.n, 3);
	check_cut(&c, &l);
	upload_cut_release(&c);
	profile_release(&p);
}
END_TEST

/* One instant over the sample limit: its threads merged (one process: one sample). */
START_TEST(one_instant)
{
	struct upload_limits l = { 0, 10, NULL, NULL };
	struct upload_cut c;

	make(1);
	ck_assert_int_eq(upload_cut_make(&p, &wo, NULL, &l, start_ns(), end_ns(), WALL, &c), 0);
	ck_assert_uint_eq(c.n, 1);
	ck_assert_int_eq(c.parts[0].merged_threads, 1);
	ck_assert_int_eq(c.parts[0].over, 0);
	ck_assert_uint_eq(c.parts[0].st.samples, 1);
	ck_assert_int_eq(upload_cut_halve(&p, &wo, NULL, WALL, &c, 0), -1);
	upload_cut_release(&c);
	/* no sample times at all (a recording without them): the same, whole */
	p.has_time = 0;
	ck_assert_int_eq(upload_cut_make(&p, &wo, NULL, &l, start_ns(), end_ns(), WALL, &c), 0);
	ck_assert_uint_eq(c.n, 1);
	ck_assert_int_eq(c.parts[0].merged_threads, 1);
	ck_assert_uint_eq(c.parts[0].st.samples, 1);
	upload_cut_release(&c);
	/* and still over it (a limit of no samples): sent whole, marked over */
	l.samples = 0;
	l.bytes = 10;
	p.has_time = 1;
	ck_assert_int_eq(upload_cut_make(&p, &wo, NULL, &l, start_ns(), end_ns(), WALL, &c), 0);
	ck_assert_uint_eq(c.n, 1);
	ck_assert_int_eq(c.parts[0].over, 1);
	upload_cut_release(&c);
	profile_release(&p);
}
END_TEST

/* One sample, its window empty (a chunk of one sample): the pprof's duration is 0, not
 * made 1 ns longer than the window the next chunk's starts at. */
START_TEST(one_sample_window)
{
	struct upload_limits l = { 0, 1000, NULL, NULL };
	struct upload_cut c;
	int64_t t, dur;

	make(0);
	p.nsamples = 1;
	p.last_time = p.first_time;
	ck_assert_int_eq(upload_cut_make(&p, &wo, NULL, &l, (int64_t)T0 + WALL, (int64_t)T0 + WALL, WALL,
					 &c), 0);
	ck_assert_uint_eq(c.n, 1);
	written_window(&c.parts[0], &t, &dur);
	ck_assert_int_eq(t, (int64_t)T0 + WALL);
	ck_assert_int_eq(dur, 0);
	upload_cut_release(&c);
	profile_release(&p);
}
END_TEST

START_TEST(runtime_ids)
{
	char tmpl[] = "/tmp/check_rid.XXXXXX", a[RUNTIME_ID_LEN + 1], b[RUNTIME_ID_LEN + 1];
	char path[128];
	struct runtime_ids r;
	int64_t seq, off;
	int dfd, fd;

	ck_assert_ptr_nonnull(mkdtemp(tmpl));
	dfd = open(tmpl, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(dfd, 0);
	runtime_id_new(a);
	runtime_id_new(b);
	ck_assert(runtime_id_valid(a) && runtime_id_valid(b));
	ck_assert_str_ne(a, b);
	ck_assert(!runtime_id_valid("00000000-0000-0000-0000-000000000000"));
	ck_assert(!runtime_id_valid("6F9619FF-8B86-4011-B42D-00C04FC964FF"));

	runtime_ids_init(&r, dfd);
	runtime_ids_take(&r, 7, WALL, a, &seq);
	ck_assert_int_eq(seq, 0);
	runtime_ids_take(&r, 7, WALL + 2000000, b, &seq); /* the same run, its clock estimated */
	ck_assert_str_eq(a, b);
	ck_assert_int_eq(seq, 1);
	runtime_ids_take(&r, 8, WALL, b, &seq); /* another run */
	ck_assert_str_ne(a, b);
	ck_assert_int_eq(seq, 0);
	runtime_ids_take(&r, 7, WALL + 3600000000000LL, b, &seq); /* id 7 after a reboot */
	ck_assert_str_ne(a, b);
	ck_assert_int_eq(seq, 0);
	runtime_ids_take(&r, 0, 0, b, &seq); /* no run known: a new one each time */
	ck_assert_str_ne(a, b);

	/* a watcher started again goes on with the run's id and next seq */
	runtime_ids_init(&r, dfd);
	ck_assert_int_eq(runtime_ids_offset(&r, 8, &off), 1);
	ck_assert_int_eq(off, WALL);
	runtime_ids_take(&r, 7, WALL, b, &seq);
	ck_assert_str_eq(a, b);
	ck_assert_int_eq(seq, 2);

	/* the file is trusted only as perfconv's own, writable by no one else */
	snprintf(path, sizeof(path), "%s/.perfconv-runtime-ids", tmpl);
	ck_assert_int_eq(chmod(path, 0666), 0);
	runtime_ids_init(&r, dfd);
	ck_assert_uint_eq(r.n, 0);
	/* and what is not its lines is passed over */
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	ck_assert_int_ge(fd, 0);
	dprintf(fd, "perfconv runtime-ids 1\nrun 9 boot 1 id %s seq 4\nrun x\n"
		"run 10 boot 1 id not-a-uuid seq 1\nrun 11 boot 1 id %s seq -3\n", a, a);
	close(fd);
	runtime_ids_init(&r, dfd);
	ck_assert_uint_eq(r.n, 1);
	runtime_ids_take(&r, 9, 1, b, &seq);
	ck_assert_str_eq(a, b);
	ck_assert_int_eq(seq, 4);
	unlink(path);
	close(dfd);
	rmdir(tmpl);
}
END_TEST

#define SEC 1000000000LL

/* A backend for upload_send_batch(): what it was sent, and what it answers. */
struct fake_sender {
	struct upload_profile halves[3]; /* the batch after its part 1 is cut in two */
	int64_t sent_start[8], sent_seq[8];
	char first_id[RUNTIME_ID_LEN + 1];
	size_t nsent;
	int refuse;                      /* part 1's first try: 1 too large, 2 refused */
	int halved;
};

static int fake_send(void *ctx, struct upload_batch *b, size_t k, struct upload_result *r)
{
	struct fake_sender *f = ctx;
	const struct upload_profile *up = &b->parts[k];

	memset(r, 0, sizeof(*r));
	ck_assert_uint_lt(f->nsent, 8);
	ck_assert_ptr_nonnull(up->runtime_id);
	ck_assert_int_eq(runtime_id_valid(up->runtime_id), 1);
	if (!f->nsent)
		strcpy(f->first_id, up->runtime_id);
	ck_assert_str_eq(up->runtime_id, f->first_id); /* one run: one id */
	f->sent_start[f->nsent] = up->start_ns;
	f->sent_seq[f->nsent++] = up->seq;
	if (k == 1 && f->refuse && !f->halved) {
		r->outcome = UPLOAD_REFUSED;
		r->too_large = f->refuse == 1;
		return 7;
	}
	r->outcome = UPLOAD_SENT;
	return 0;
}

static int fake_halve(void *ctx, struct upload_batch *b, size_t k, const struct upload_result *r)
{
	struct fake_sender *f = ctx;

	ck_assert_int_eq(r->too_large, 1);
	ck_assert_uint_eq(k, 1);
	f->halved = 1;
	b->parts = f->halves;
	b->n = 3;
	return 0;
}

START_TEST(send_batch)
{
	/* two parts of 10 s each; the second one, too large, cut in two of 5 s */
	struct upload_profile parts[2] = { { .start_ns = WALL, .duration_ns = 10 * SEC },
					   { .start_ns = WALL + 10 * SEC, .duration_ns = 10 * SEC } };
	struct fake_sender f = { .halves = { { .start_ns = WALL, .duration_ns = 10 * SEC },
					     { .start_ns = WALL + 10 * SEC, .duration_ns = 5 * SEC },
					     { .start_ns = WALL + 15 * SEC, .duration_ns = 5 * SEC } },
				 .refuse = 1 };
	const struct upload_batch_ops ops = { fake_send, fake_halve, &f };
	struct upload_batch b = { parts, 2, 7, WALL, "" };
	struct upload_result r;
	struct runtime_ids ids;
	int64_t until = 0;
	size_t last = 99;

	runtime_ids_init(&ids, -1);
	ck_assert_int_eq(upload_send_batch(&b, &ids, &ops, &until, &last, &r), 0);
	ck_assert_uint_eq(f.nsent, 4);
	ck_assert_int_eq(f.sent_start[1], WALL + 10 * SEC); /* refused */
	ck_assert_int_eq(f.sent_start[2], WALL + 10 * SEC); /* its first half */
	ck_assert_int_eq(f.sent_start[3], WALL + 15 * SEC);
	for (size_t i = 0; i < 4; i++) /* each try its own profile_seq */
		ck_assert_int_eq(f.sent_seq[i], (int64_t)i);
	ck_assert_int_eq(until, WALL + 20 * SEC);
	ck_assert_uint_eq(last, 2);

	/* the parts sent before (a chunk set aside) are passed over, their seq not taken */
	memset(&f.sent_start, 0, sizeof(f.sent_start));
	f.nsent = 0;
	b.parts = parts;
	b.n = 2;
	until = WALL + 10 * SEC;
	ck_assert_int_eq(upload_send_batch(&b, &ids, &ops, &until, &last, &r), 0);
	ck_assert_uint_eq(f.nsent, 1);
	ck_assert_int_eq(f.sent_start[0], WALL + 10 * SEC);
	ck_assert_int_eq(f.sent_seq[0], 4);

	/* refused for another reason: the sender's code, and the part that was not sent;
	 * without sent_until nothing is passed over */
	f.nsent = 0;
	f.halved = 0;
	f.refuse = 2;
	ck_assert_int_eq(upload_send_batch(&b, &ids, &ops, NULL, &last, &r), 7);
	ck_assert_uint_eq(f.nsent, 2);
	ck_assert_uint_eq(last, 1);
	ck_assert_int_eq(r.outcome, UPLOAD_REFUSED);
	ck_assert_int_eq(f.halved, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("uploadparts");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, under_the_limit_whole);
	tcase_add_test(tc, cut_by_samples);
	tcase_add_test(tc, cut_by_bytes_with_timestamps);
	tcase_add_test(tc, one_instant);
	tcase_add_test(tc, one_sample_window);
	tcase_add_test(tc, runtime_ids);
	tcase_add_test(tc, send_batch);
	suite_add_tcase(s, tc);
	return run_suite(s) ? EXIT_FAILURE : EXIT_SUCCESS;
}
