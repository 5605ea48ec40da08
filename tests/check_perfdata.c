/* check_perfdata: unit tests of the perf.data reader on committed recordings and
 * synthetic files (both byte orders, every sample field, compressed records). */
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zstd.h>

#include "formats/read/perfdata.h"
#include "tests/testutil.h"

/* A diag that writes into a file the test can read back. */
static void cap_release(struct cap *c)
{
	fclose(c->f);
}

struct counts {
	uint64_t records, samples, per_event[4], mmaps, comms;
	int ret;
};

static struct counts count_all(struct perf_reader *r)
{
	struct counts c;
	struct perf_record rec;

	memset(&c, 0, sizeof(c));
	while ((c.ret = perf_reader_next(r, &rec)) == 1) {
		c.records++;
		if (rec.type == PERF_RECORD_SAMPLE) {
			c.samples++;
			if (rec.event >= 0 && rec.event < 4)
				c.per_event[rec.event]++;
		}
		if (rec.type == PERF_RECORD_MMAP || rec.type == PERF_RECORD_MMAP2)
			c.mmaps++;
		if (rec.type == PERF_RECORD_COMM)
			c.comms++;
	}
	return c;
}

/* ---- committed recordings ---- */

/* perf record -k 1: the clock features that let JIT dumps and wall time line up */
START_TEST(test_clock_features)
{
	struct cap c;
	struct perf_reader *r;
	const struct perf_header_info *h;

	cap_init(&c);
	r = perf_reader_open(top_path("testdata/mt-k1.data"), &c.d);
	ck_assert(r != NULL);
	h = perf_reader_header(r);
	ck_assert_int_eq(h->has_clockid, 1);
	ck_assert_uint_gt(h->clockid_res_ns, 0);
	ck_assert_int_eq(h->has_clock_data, 1);
	ck_assert_uint_eq(h->clock_data_clockid, 1); /* CLOCK_MONOTONIC */
	/* recorded on 2026-11-29: wall clock between 2026-01-01 and 2027-01-01 */
	ck_assert_uint_gt(h->clock_data_wall_ns, 1767225600ULL * 1000000000ULL);
	ck_assert_uint_lt(h->clock_data_wall_ns, 1798761600ULL * 1000000000ULL);
	ck_assert_uint_gt(h->clock_data_clock_ns, 0);
	ck_assert_str_eq(h->osrelease, "6.18.44-fc-v669");
	ck_assert_ptr_nonnull(h->hostname);
	ck_assert_int_eq(perf_reader_event(r, 0)->use_clockid, 1);
	ck_assert_uint_eq(perf_reader_event(r, 0)->clockid, 1);
	ck_assert_int_eq(h->has_sample_time, 1);
	ck_assert_uint_le(h->first_sample_time, h->last_sample_time);
	perf_reader_close(r);
}
END_TEST

START_TEST(test_file_two_events)
{
	struct cap c;
	struct perf_reader *r;
	struct perf_record rec;
	const struct perf_header_info *h;
	struct counts n;
	int found = 0;

	cap_init(&c);
	r = perf_reader_open(top_path("tests/corpus/perfdata/file-two-events.data"), &c.d);
	ck_assert(r != NULL);
	h = perf_reader_header(r);
	ck_assert_int_eq(h->pipe_mode, 0);
	ck_assert_int_eq(h->swapped, 0);
	ck_assert_str_eq(h->version, "6.1.187");
	ck_assert_str_eq(h->arch, "x86_64");
	ck_assert_ptr_nonnull(strstr(h->cmdline, "record -g -e cpu-clock,page-faults"));
	ck_assert_uint_eq(h->nr_cpus_online, 2);
	ck_assert_int_eq(h->has_sample_time, 1);
	ck_assert_uint_eq(h->first_sample_time, 5966743784683ULL);
	ck_assert_uint_gt(h->nbuild_ids, 0);
	ck_assert_uint_eq(perf_reader_nevents(r), 2);
	ck_assert_str_eq(perf_reader_event(r, 0)->name, "cpu-clock");
	ck_assert_str_eq(perf_reader_event(r, 1)->name, "page-faults");

	/* the first sample: a page fault, 10 frames, kernel then user */
	while (perf_reader_next(r, &rec) == 1)
		if (rec.type == PERF_RECORD_SAMPLE) {
			found = 1;
			break;
		}
	ck_assert(found);
	ck_assert_uint_eq(rec.offset, 0x408);
	ck_assert_int_eq(rec.event, 1);
	ck_assert_uint_eq(rec.sid.pid, 3946);
	ck_assert_uint_eq(rec.sid.tid, 3946);
	ck_assert_uint_eq(rec.sid.time, 5966743784683ULL);
	ck_assert_uint_eq(rec.u.sample.ip, 0xffffffff817554eaULL);
	ck_assert_uint_eq(rec.u.sample.period, 1);
	ck_assert_uint_eq(rec.u.sample.nr_callchain, 10);
	ck_assert_uint_eq(rec.u.sample.callchain[0], PERF_CONTEXT_KERNEL);
	ck_assert_uint_eq(rec.u.sample.callchain[2], 0xffffffff81755b8aULL);
	ck_assert_uint_eq(rec.u.sample.callchain[8], PERF_CONTEXT_USER);
	ck_assert_uint_eq(rec.u.sample.callchain[9], 0x7f170a8f2ad7ULL);

	perf_reader_rewind(r);
	n = count_all(r);
	ck_assert_int_eq(n.ret, 0);
	ck_assert_uint_eq(n.samples, 16);
	ck_assert_uint_eq(n.records, 28);
	ck_assert_uint_eq(n.per_event[0] + n.per_event[1], 16);
	ck_assert_uint_gt(n.per_event[1], 0);
	ck_assert_uint_eq(perf_reader_stats(r)->samples, 16);
	ck_assert_uint_eq(c.d.nwarnings + c.d.nerrors, 0);
	perf_reader_close(r);
	cap_release(&c);
}
END_TEST

static void check_pipe_g(struct perf_reader *r)
{
	struct perf_record rec;
	int comm_exec = 0, samples = 0;

	ck_assert_int_eq(perf_reader_header(r)->pipe_mode, 1);
	ck_assert_str_eq(perf_reader_header(r)->hostname, "vm");
	ck_assert_uint_eq(perf_reader_nevents(r), 1);
	ck_assert_str_eq(perf_reader_event(r, 0)->name, "cpu-clock:pppH");
	while (perf_reader_next(r, &rec) == 1) {
		if (rec.type == PERF_RECORD_COMM && rec.u.comm.exec) {
			ck_assert_str_eq(rec.u.comm.comm, "sleep");
			ck_assert_uint_eq(rec.u.comm.pid, 3953);
			comm_exec++;
		}
		if (rec.type == PERF_RECORD_SAMPLE) {
			if (!samples) {
				ck_assert_uint_eq(rec.offset, 0xcdc);
				ck_assert_uint_eq(rec.sid.time, 5968901758868ULL);
				ck_assert_uint_eq(rec.u.sample.nr_callchain, 3);
				ck_assert_uint_eq(rec.u.sample.callchain[1], 0x7f94109340afULL);
			}
			samples++;
		}
	}
	ck_assert_int_eq(comm_exec, 1);
	ck_assert_int_eq(samples, 5);
}

START_TEST(test_pipe_mem)
{
	struct diag d;
	size_t len;
	uint8_t *buf = slurp_gz(top_path("tests/corpus/perfdata/pipe-g.data"), &len);
	struct perf_reader *r;

	diag_init(&d);
	r = perf_reader_open_mem(buf, len, "pipe.data", &d);
	ck_assert(r != NULL);
	check_pipe_g(r);
	perf_reader_rewind(r);
	check_pipe_g(r);
	perf_reader_close(r);
	free(buf);
}
END_TEST

/* `perf record -o - | perfconv -i -`: stdin is a pipe that cannot seek. */
START_TEST(test_pipe_stdin)
{
	struct diag d;
	size_t len;
	uint8_t *buf = slurp_gz(top_path("tests/corpus/perfdata/pipe-g.data"), &len);
	struct perf_reader *r;
	int fds[2];
	pid_t pid;

	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		size_t off = 0;

		close(fds[0]);
		while (off < len) {
			ssize_t w = write(fds[1], buf + off, len - off > 100 ? 100 : len - off);

			if (w <= 0)
				_exit(1);
			off += (size_t)w;
		}
		_exit(0);
	}
	close(fds[1]);
	ck_assert_int_eq(dup2(fds[0], STDIN_FILENO), STDIN_FILENO);
	close(fds[0]);
	diag_init(&d);
	r = perf_reader_open("-", &d);
	ck_assert(r != NULL);
	check_pipe_g(r);
	perf_reader_close(r);
	waitpid(pid, NULL, 0);
	free(buf);
}
END_TEST

START_TEST(test_compressed)
{
	struct diag d;
	struct perf_reader *r;
	struct counts n;

	diag_init(&d);
	r = perf_reader_open(top_path("tests/corpus/perfdata/file-z.data"), &d);
	ck_assert(r != NULL);
	n = count_all(r);
	ck_assert_int_eq(n.ret, 0);
	ck_assert_uint_eq(n.samples, 5430);
	ck_assert_uint_eq(perf_reader_stats(r)->compressed_records, 5);
	perf_reader_close(r);

	r = perf_reader_open(top_path("tests/corpus/perfdata/pipe-z-two-events.data"), &d);
	ck_assert(r != NULL);
	ck_assert_str_eq(perf_reader_event(r, 1)->name, "page-faults");
	n = count_all(r);
	ck_assert_int_eq(n.ret, 0);
	ck_assert_uint_eq(n.samples, 362);
	ck_assert_uint_gt(n.per_event[0], 0);
	ck_assert_uint_gt(n.per_event[1], 0);
	ck_assert_uint_eq(perf_reader_stats(r)->compressed_records, 2);
	perf_reader_close(r);
	ck_assert_uint_eq(d.nerrors + d.nwarnings, 0);
}
END_TEST

static void copy_file(const char *from, const char *to)
{
	size_t len;
	uint8_t *buf = slurp_gz(from, &len);
	FILE *f = fopen(to, "wb");

	ck_assert(f != NULL);
	ck_assert_uint_eq(fwrite(buf, 1, len, f), len);
	fclose(f);
	free(buf);
}

START_TEST(test_threads_dir)
{
	char dir[] = "/tmp/check_perfdata.XXXXXX", p[4200];
	const char *const parts[][2] = {
		{ "tests/corpus/perfdata/threads-data", "data" },
		{ "tests/corpus/perfdata/threads-data.0", "data.0" },
		{ "tests/corpus/perfdata/threads-data.1", "data.1" },
	};
	struct diag d;
	struct perf_reader *r;
	struct perf_record rec;
	int samples = 0;
	size_t i;

	ck_assert(mkdtemp(dir) != NULL);
	for (i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, parts[i][1]);
		copy_file(top_path(parts[i][0]), p);
	}
	diag_init(&d);
	r = perf_reader_open(dir, &d);
	ck_assert(r != NULL);
	ck_assert_int_eq(perf_reader_header(r)->directory, 1);
	while (perf_reader_next(r, &rec) == 1)
		if (rec.type == PERF_RECORD_SAMPLE) {
			samples++;
			ck_assert_ptr_nonnull(strstr(rec.file, "/data.1"));
		}
	ck_assert_int_eq(samples, 4);
	ck_assert_uint_eq(d.nerrors + d.nwarnings, 0);
	perf_reader_close(r);
	for (i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, parts[i][1]);
		unlink(p);
	}
	rmdir(dir);
}
END_TEST

START_TEST(test_identifier_raw_dwarf)
{
	struct diag d;
	struct perf_reader *r;
	struct perf_record rec;
	struct counts n;
	int raw = 0;

	diag_init(&d);
	r = perf_reader_open(top_path("tests/corpus/perfdata/file-identifier.data"), &d);
	ck_assert(r != NULL);
	ck_assert_str_eq(perf_reader_event(r, 0)->name, "cpu-clock");
	ck_assert_str_eq(perf_reader_event(r, 1)->name, "task-clock");
	n = count_all(r);
	ck_assert_uint_eq(n.samples, 740);
	ck_assert_uint_gt(n.per_event[0], 0);
	ck_assert_uint_gt(n.per_event[1], 0);
	perf_reader_close(r);

	r = perf_reader_open(top_path("tests/corpus/perfdata/file-tracepoint-raw.data"), &d);
	ck_assert(r != NULL);
	ck_assert_str_eq(perf_reader_event(r, 0)->name, "sched:sched_switch");
	while (perf_reader_next(r, &rec) == 1)
		if (rec.type == PERF_RECORD_SAMPLE && rec.u.sample.raw_size >= 8)
			raw++;
	ck_assert_int_eq(raw, 198);
	perf_reader_close(r);

	r = perf_reader_open(top_path("tests/corpus/perfdata/file-dwarf.data"), &d);
	ck_assert(r != NULL);
	n = count_all(r);
	ck_assert_uint_eq(n.samples, 274);
	ck_assert_uint_eq(perf_reader_stats(r)->skipped_bad, 0);
	perf_reader_close(r);

	r = perf_reader_open(top_path("tests/corpus/perfdata/pipe-tracepoint.data"), &d);
	ck_assert(r != NULL);
	n = count_all(r);
	ck_assert_uint_eq(n.samples, 78);
	perf_reader_close(r);
	ck_assert_uint_eq(d.nerrors + d.nwarnings, 0);
}
END_TEST

/* perf killed: data.size is 0, no features; every record up to the end is read. */
START_TEST(test_killed)
{
	struct cap c;
	struct perf_reader *r;
	struct counts n;

	cap_init(&c);
	r = perf_reader_open(top_path("tests/corpus/perfdata/killed-synth.data"), &c.d);
	ck_assert(r != NULL);
	n = count_all(r);
	ck_assert_int_eq(n.ret, 0);
	ck_assert_uint_eq(n.samples, 16);
	ck_assert_ptr_nonnull(strstr(cap_text(&c), "data size is 0"));
	perf_reader_close(r);

	r = perf_reader_open(top_path("tests/corpus/perfdata/killed-real.data"), &c.d);
	ck_assert(r != NULL);
	n = count_all(r);
	ck_assert_int_eq(n.ret, 0);
	ck_assert_uint_eq(n.records, 5);
	perf_reader_close(r);
	cap_release(&c);
}
END_TEST

/* Cut the data section inside a record: everything before it, one warning. */
START_TEST(test_cut_data)
{
	size_t len, nrec = 0, i;
	uint8_t *buf = slurp_gz(top_path("tests/corpus/perfdata/file-two-events.data"), &len);
	uint64_t offs[64], sizes[64], cut;
	struct perf_record rec;
	struct perf_reader *r;
	struct counts n;
	struct cap c;
	char want[256];

	cap_init(&c);
	r = perf_reader_open_mem(buf, len, "x.data", &c.d);
	ck_assert(r != NULL);
	while (perf_reader_next(r, &rec) == 1 && nrec < 64) {
		offs[nrec] = rec.offset;
		sizes[nrec++] = rec.size;
	}
	perf_reader_close(r);
	i = nrec / 2;
	cut = offs[i] + 10;

	r = perf_reader_open_mem(buf, (size_t)cut, "x.data", &c.d);
	ck_assert(r != NULL);
	n = count_all(r);
	ck_assert_int_eq(n.ret, 0);
	ck_assert_uint_eq(n.records, i);
	snprintf(want, sizeof(want), "x.data: offset 0x%llx: warning: data section cut short: "
		 "%llu bytes of a %llu-byte record missing, reading stops here",
		 (unsigned long long)offs[i], (unsigned long long)(sizes[i] - 10),
		 (unsigned long long)sizes[i]);
	ck_assert_ptr_nonnull(strstr(cap_text(&c), want));
	ck_assert_uint_gt(perf_reader_stats(r)->truncated_bytes, 0);

	/* a second pass reads the same and does not warn again */
	c.d.nwarnings = 0;
	perf_reader_rewind(r);
	n = count_all(r);
	ck_assert_uint_eq(n.records, i);
	ck_assert_uint_eq(c.d.nwarnings, 0);
	perf_reader_close(r);
	cap_release(&c);
	free(buf);
}
END_TEST

/* Each tests/bad/NAME.data yields the error in NAME.expect, or the warning, and then a
 * clean end. */
START_TEST(test_bad_inputs)
{
	char dirp[4096], p[4400], expect[512];
	DIR *dh;
	struct dirent *de;
	int cases = 0;

	snprintf(dirp, sizeof(dirp), "%s", top_path("tests/bad"));
	dh = opendir(dirp);
	ck_assert(dh != NULL);
	while ((de = readdir(dh))) {
		size_t l = strlen(de->d_name);
		struct perf_reader *r;
		struct cap c;
		FILE *f;
		int ret = 0;

		if (l < 8 || strcmp(de->d_name + l - 7, ".expect"))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dirp, de->d_name);
		f = fopen(p, "r");
		ck_assert(f != NULL);
		ck_assert(fgets(expect, sizeof(expect), f) != NULL);
		fclose(f);
		expect[strcspn(expect, "\n")] = 0;
		snprintf(p + strlen(p) - 7, 8, ".data");

		cap_init(&c);
		r = perf_reader_open(p, &c.d);
		if (r) {
			ret = count_all(r).ret;
			perf_reader_close(r);
		}
		if (strstr(expect, ": warning: ")) {
			ck_assert_msg(r != NULL && ret == 0, "%s: want a clean end", p);
			ck_assert_uint_eq(c.d.nerrors, 0);
		} else {
			ck_assert_msg(r == NULL || ret == -1, "%s: no error", p);
			ck_assert_uint_eq(c.d.nerrors, 1);
			ck_assert_msg(strstr(c.d.last_error, expect) != NULL,
				      "%s: got '%s', want '%s'", p, c.d.last_error, expect);
		}
		ck_assert_msg(strstr(cap_text(&c), expect) != NULL, "%s: output '%s' lacks '%s'",
			      p, c.text, expect);
		cap_release(&c);
		cases++;
	}
	closedir(dh);
	ck_assert_int_ge(cases, 6);
}
END_TEST

/* ---- synthetic files ---- */

/* PERFCONV_SYNTH_OUT=DIR writes the synthetic files there, as fuzzing seeds. */
static void save_synth(const char *name, const void *p, size_t len)
{
	const char *dir = getenv("PERFCONV_SYNTH_OUT");
	char path[4096];
	FILE *f;

	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	ck_assert(f != NULL);
	ck_assert_uint_eq(fwrite(p, 1, len, f), len);
	fclose(f);
}

struct buf {
	uint8_t p[256 * 1024]; /* room for a record over 64 KB (test_simpleperf_big_record) */
	size_t len;
	int be;
};

static void put(struct buf *b, const void *src, size_t n)
{
	ck_assert(b->len + n <= sizeof(b->p));
	memcpy(b->p + b->len, src, n);
	b->len += n;
}

static void putn(struct buf *b, uint64_t v, int bytes)
{
	uint8_t x[8];
	int i;

	for (i = 0; i < bytes; i++)
		x[b->be ? bytes - 1 - i : i] = (uint8_t)(v >> (8 * i));
	put(b, x, (size_t)bytes);
}

static void p16(struct buf *b, uint64_t v) { putn(b, v, 2); }
static void p32(struct buf *b, uint64_t v) { putn(b, v, 4); }
static void p64(struct buf *b, uint64_t v) { putn(b, v, 8); }

static void patch64(struct buf *b, size_t off, uint64_t v)
{
	size_t save = b->len;

	b->len = off;
	p64(b, v);
	b->len = save;
}

static void patch16(struct buf *b, size_t off, uint64_t v)
{
	size_t save = b->len;

	b->len = off;
	p16(b, v);
	b->len = save;
}

static size_t rec_begin(struct buf *b, uint32_t type, uint16_t misc)
{
	size_t at = b->len;

	p32(b, type);
	p16(b, misc);
	p16(b, 0);
	return at;
}

static void rec_end(struct buf *b, size_t at)
{
	patch16(b, at + 6, b->len - at);
}

#define ST_ALL ((1ULL << 16) | 1 | 2 | 4 | 8 | 0x40 | 0x200 | 0x80 | 0x100 | 0x10 | 0x20 | \
		0x400 | 0x800 | 0x1000 | 0x2000 | (1ULL << 24) | 0x8000 | (1ULL << 17) | \
		(1ULL << 18) | (1ULL << 19) | (1ULL << 21) | (1ULL << 22) | (1ULL << 23) | \
		(1ULL << 20))

static void put_trailer(struct buf *b, uint64_t id)
{
	p32(b, 100); p32(b, 101);   /* TID */
	p64(b, 5000);               /* TIME */
	p64(b, id);                 /* ID */
	p64(b, 55);                 /* STREAM_ID */
	p32(b, 3); p32(b, 0);       /* CPU */
	p64(b, id);                 /* IDENTIFIER */
}

/* The attrs' branch_sample_type: HW_INDEX (a u64 hw_idx before the entries) unless a
 * test says otherwise. */
static uint64_t synth_branch_type = 1ULL << 17;

/* Samples whose callchain has the kernel's part alone (simpleperf's test). */
static int synth_kernel_cc;

/* A sample with every field; `nr_cc` overrides the callchain length to damage it. */
static void put_sample(struct buf *b, uint64_t id, uint64_t nr_cc)
{
	size_t at = rec_begin(b, PERF_RECORD_SAMPLE, 2);

	p64(b, id);                         /* IDENTIFIER */
	p64(b, 0x401000);                   /* IP */
	p32(b, 100); p32(b, 101);           /* TID */
	p64(b, 123456789);                  /* TIME */
	p64(b, 0xdead0000);                 /* ADDR */
	p64(b, id);                         /* ID */
	p64(b, 55);                         /* STREAM_ID */
	p32(b, 3); p32(b, 0);               /* CPU */
	p64(b, 1000);                       /* PERIOD */
	p64(b, 2); p64(b, 10); p64(b, 9);   /* READ: group of 2, enabled, running */
	p64(b, 1); p64(b, 7); p64(b, 0);
	p64(b, 2); p64(b, 8); p64(b, 0);
	if (synth_kernel_cc) {              /* CALLCHAIN: the kernel's part only */
		p64(b, 2); p64(b, PERF_CONTEXT_KERNEL); p64(b, 0xffffffff81000000ULL);
	} else {
		p64(b, nr_cc);
		p64(b, PERF_CONTEXT_USER); p64(b, 0x401000); p64(b, 0x402000);
	}
	p32(b, 12); put(b, "rawdata12345", 12);   /* RAW */
	p64(b, 2);                          /* BRANCH_STACK: nr, hw_idx, entries */
	if (synth_branch_type & (1ULL << 17))
		p64(b, 5);
	p64(b, 0x401234); p64(b, 0x401000); p64(b, 0x3);
	p64(b, 0x402345); p64(b, 0x401200); p64(b, 0x4);
	p64(b, 2); p64(b, 11); p64(b, 12); p64(b, 13); /* REGS_USER: abi, 3 regs */
	p64(b, 16); put(b, "stackstackstack!", 16); p64(b, 8); /* STACK_USER */
	p32(b, 77); p16(b, 3); p16(b, 4);   /* WEIGHT_STRUCT */
	p64(b, 0x1234);                     /* DATA_SRC */
	p64(b, 0x5);                        /* TRANSACTION */
	p64(b, 0);                          /* REGS_INTR: abi 0, no regs */
	p64(b, 0xabc000);                   /* PHYS_ADDR */
	p64(b, 42);                         /* CGROUP */
	p64(b, 4096);                       /* DATA_PAGE_SIZE */
	p64(b, 4096);                       /* CODE_PAGE_SIZE */
	p64(b, 8); put(b, "auxdata!", 8);   /* AUX */
	rec_end(b, at);
}

static void put_attr(struct buf *b, uint64_t config, size_t ids_off)
{
	uint8_t bits[8] = { 0 };
	const unsigned flags[] = { 5, 6, 18 }; /* exclude_kernel, _hv, sample_id_all */
	size_t i;

	p32(b, 1);          /* type: software */
	p32(b, 104);        /* size: VER4 */
	p64(b, config);
	p64(b, 4000);       /* sample_period */
	p64(b, ST_ALL);
	p64(b, 0x1f);       /* read_format: all */
	for (i = 0; i < 3; i++)   /* a C bitfield, not a number */
		bits[flags[i] / 8] |= b->be ? 0x80 >> (flags[i] % 8) : 1 << (flags[i] % 8);
	put(b, bits, 8);
	p32(b, 0); p32(b, 0); p64(b, 0); p64(b, 0);
	p64(b, synth_branch_type); /* branch_sample_type */
	p64(b, 0xb);        /* sample_regs_user: 3 registers */
	p32(b, 16);         /* sample_stack_user */
	p32(b, 0);          /* clockid */
	p64(b, 0x3);        /* sample_regs_intr */
	p64(b, ids_off);
	p64(b, 8);
}

/* A file-mode recording of two events (ids 7 and 8) with `records` as its data. */
static void build_file(struct buf *b, int be, void (*records)(struct buf *))
{
	size_t data_at;

	memset(b, 0, sizeof(*b));
	b->be = be;
	p64(b, 0x32454c4946524550ULL); /* PERFILE2 */
	p64(b, 104);
	p64(b, 120);                  /* attr_size */
	p64(b, 104); p64(b, 240);     /* attrs */
	p64(b, 0); p64(b, 0);         /* data, patched */
	p64(b, 0); p64(b, 0);         /* event_types */
	p64(b, 0); p64(b, 0); p64(b, 0); p64(b, 0); /* no features */
	put_attr(b, 0, 344);
	put_attr(b, 1, 352);
	p64(b, 7);
	p64(b, 8);
	data_at = b->len;
	records(b);
	patch64(b, 40, data_at);
	patch64(b, 48, b->len - data_at);
}

static void synth_records(struct buf *b)
{
	size_t at;

	at = rec_begin(b, PERF_RECORD_COMM, 1 << 13);
	p32(b, 100); p32(b, 101);
	put(b, "synth\0\0\0", 8);
	put_trailer(b, 7);
	rec_end(b, at);

	at = rec_begin(b, PERF_RECORD_MMAP2, 2 | (1 << 14));
	p32(b, 100); p32(b, 101);
	p64(b, 0x400000); p64(b, 0x10000); p64(b, 0);
	put(b, "\x14\0\0\0\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13\x14", 24);
	p32(b, 5); p32(b, 2);
	put(b, "/bin/app\0\0\0\0\0\0\0\0", 16);
	put_trailer(b, 8);
	rec_end(b, at);

	put_sample(b, 8, 3);
	put_sample(b, 7, 1000);   /* callchain overruns the record: skipped */

	at = rec_begin(b, PERF_RECORD_MMAP2, 2);   /* too small for an MMAP2: skipped */
	p64(b, 0); p64(b, 0);
	rec_end(b, at);

	at = rec_begin(b, PERF_RECORD_FORK, 0);
	p32(b, 100); p32(b, 100); p32(b, 102); p32(b, 101); p64(b, 4999);
	put_trailer(b, 7);
	rec_end(b, at);

	at = rec_begin(b, PERF_RECORD_FINISHED_ROUND, 0);
	rec_end(b, at);
}

static void check_synth(struct perf_reader *r, struct cap *c)
{
	struct perf_record rec;
	const struct perf_sample *s = &rec.u.sample;

	ck_assert_uint_eq(perf_reader_nevents(r), 2);
	ck_assert_str_eq(perf_reader_event(r, 0)->name, "cpu-clock:u");
	ck_assert_str_eq(perf_reader_event(r, 1)->name, "task-clock:u");
	ck_assert_uint_eq(perf_reader_event(r, 1)->sample_regs_intr, 3);
	ck_assert_int_eq(perf_reader_event(r, 0)->sample_id_all, 1);
	ck_assert_int_eq(perf_reader_event(r, 0)->exclude_kernel, 1);

	ck_assert_int_eq(perf_reader_next(r, &rec), 1);
	ck_assert_uint_eq(rec.type, PERF_RECORD_COMM);
	ck_assert_str_eq(rec.u.comm.comm, "synth");
	ck_assert_int_eq(rec.u.comm.exec, 1);
	ck_assert_uint_eq(rec.u.comm.tid, 101);
	ck_assert_uint_eq(rec.sid.time, 5000);
	ck_assert_uint_eq(rec.sid.cpu, 3);
	ck_assert_int_eq(rec.event, 0);

	ck_assert_int_eq(perf_reader_next(r, &rec), 1);
	ck_assert_uint_eq(rec.type, PERF_RECORD_MMAP2);
	ck_assert_int_eq(rec.event, 1);
	ck_assert_int_eq(rec.u.mmap.has_build_id, 1);
	ck_assert_uint_eq(rec.u.mmap.build_id_size, 20);
	ck_assert_uint_eq(rec.u.mmap.build_id[19], 0x14);
	ck_assert_uint_eq(rec.u.mmap.start, 0x400000);
	ck_assert_uint_eq(rec.u.mmap.prot, 5);
	ck_assert_str_eq(rec.u.mmap.filename, "/bin/app");

	ck_assert_int_eq(perf_reader_next(r, &rec), 1);
	ck_assert_uint_eq(rec.type, PERF_RECORD_SAMPLE);
	ck_assert_int_eq(rec.event, 1);
	ck_assert_uint_eq(s->ip, 0x401000);
	ck_assert_uint_eq(rec.sid.pid, 100);
	ck_assert_uint_eq(rec.sid.tid, 101);
	ck_assert_uint_eq(rec.sid.time, 123456789);
	ck_assert_uint_eq(rec.sid.id, 8);
	ck_assert_uint_eq(rec.sid.stream_id, 55);
	ck_assert_uint_eq(rec.sid.cpu, 3);
	ck_assert_uint_eq(s->addr, 0xdead0000);
	ck_assert_uint_eq(s->period, 1000);
	ck_assert_uint_eq(s->nr_callchain, 3);
	ck_assert_uint_eq(s->callchain[0], PERF_CONTEXT_USER);
	ck_assert_uint_eq(s->callchain[2], 0x402000);
	ck_assert_uint_eq(s->raw_size, 12);
	ck_assert_int_eq(memcmp(s->raw, "rawdata12345", 12), 0);
	/* the branch stack's entries are kept, newest first, in host byte order */
	ck_assert_int_eq(s->has_branch_stack, 1);
	ck_assert_uint_eq(s->nr_branches, 2);
	ck_assert_ptr_nonnull(s->branches);
	ck_assert_uint_eq(s->branches[0].from, 0x401234);
	ck_assert_uint_eq(s->branches[0].to, 0x401000);
	ck_assert_uint_eq(s->branches[0].flags, 0x3);
	ck_assert_uint_eq(s->branches[1].from, 0x402345);
	ck_assert_uint_eq(s->branches[1].to, 0x401200);
	ck_assert_uint_eq(s->branches[1].flags, 0x4);
	ck_assert_int_eq(s->has_branch_hw_idx, !!(synth_branch_type & (1ULL << 17)));
	ck_assert_uint_eq(s->branch_hw_idx, (synth_branch_type & (1ULL << 17)) ? 5 : 0);
	/* and what follows them is read in its place */
	ck_assert_uint_eq(s->weight, 77);
	ck_assert_uint_eq(s->data_src, 0x1234);
	ck_assert_uint_eq(s->transaction, 0x5);
	ck_assert_uint_eq(s->phys_addr, 0xabc000);
	ck_assert_uint_eq(s->cgroup, 42);

	/* the damaged sample and MMAP2 are skipped with a warning each */
	ck_assert_int_eq(perf_reader_next(r, &rec), 1);
	ck_assert_uint_eq(rec.type, PERF_RECORD_FORK);
	ck_assert_uint_eq(rec.u.fork.tid, 102);
	ck_assert_uint_eq(rec.u.fork.time, 4999);
	ck_assert_int_eq(perf_reader_next(r, &rec), 1);
	ck_assert_uint_eq(rec.type, PERF_RECORD_FINISHED_ROUND);
	ck_assert_int_eq(perf_reader_next(r, &rec), 0);
	ck_assert_uint_eq(perf_reader_stats(r)->skipped_bad, 2);
	ck_assert_ptr_nonnull(strstr(cap_text(c), "PERF_RECORD_SAMPLE: CALLCHAIN field overruns "
				     "the record"));
	ck_assert_ptr_nonnull(strstr(c->text, "PERF_RECORD_MMAP2: record size 24 below "
				     "minimum 120, skipped"));
}

START_TEST(test_synthetic_both_orders)
{
	static struct buf b;
	int be;

	for (be = 0; be < 2; be++) {
		struct perf_reader *r;
		struct cap c;

		build_file(&b, be, synth_records);
		save_synth(be ? "synth-big-endian.data" : "synth-little-endian.data", b.p, b.len);
		cap_init(&c);
		r = perf_reader_open_mem(b.p, b.len, "synth.data", &c.d);
		ck_assert_msg(r != NULL, "%s", c.d.last_error);
		ck_assert_int_eq(perf_reader_header(r)->swapped, be);
		check_synth(r, &c);
		perf_reader_close(r);
		cap_release(&c);
	}
}
END_TEST

/*
 * The three MMAP2 layouts a reader meets: a kernel's of 3.16 or later (prot 5), the
 * one perf inject --jit writes (prot = the jitted ELF file's st_mode, 0100644), and
 * the one of kernels 3.12 to 3.15 (no prot and flags: the name at 64), a long name
 * and a short one, whose padding leaves the same size as the later layout's.
 */
static void mmap2_records(struct buf *b)
{
	static const struct { uint32_t prot; int early; const char *name; size_t len; } m[] = {
		{ 5, 0, "/usr/bin/app\0\0\0\0", 16 },
		{ 0100644, 0, "/tmp/jitted-9-1.so\0\0\0\0\0\0", 24 },
		{ 0, 1, "/usr/lib64/ld-2.17.so\0\0\0", 24 },
		{ 0, 1, "[stack]\0", 8 },
	};
	size_t i, at;

	for (i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		at = rec_begin(b, PERF_RECORD_MMAP2, 2);
		p32(b, 100); p32(b, 101);
		p64(b, 0x400000 * (i + 1)); p64(b, 0x1000); p64(b, 0);
		p32(b, 8); p32(b, 1); p64(b, 1234); p64(b, 0);  /* maj, min, ino, generation */
		if (!m[i].early) {
			p32(b, m[i].prot); p32(b, 2);
		}
		put(b, m[i].name, m[i].len);
		put_trailer(b, 7);
		rec_end(b, at);
	}
}

START_TEST(test_mmap2_layouts)
{
	static const char *want[] = { "/usr/bin/app", "/tmp/jitted-9-1.so", "/usr/lib64/ld-2.17.so",
				      "[stack]" };
	static struct buf b;
	int be;

	for (be = 0; be < 2; be++) {
		struct perf_reader *r;
		struct perf_record rec;
		struct cap c;
		size_t i;

		build_file(&b, be, mmap2_records);
		cap_init(&c);
		r = perf_reader_open_mem(b.p, b.len, "mmap2.data", &c.d);
		ck_assert_msg(r != NULL, "%s", c.d.last_error);
		for (i = 0; i < 4; i++) {
			ck_assert_int_eq(perf_reader_next(r, &rec), 1);
			ck_assert_uint_eq(rec.type, PERF_RECORD_MMAP2);
			ck_assert_str_eq(rec.u.mmap.filename, want[i]);
			ck_assert_uint_eq(rec.u.mmap.start, 0x400000 * (i + 1));
			ck_assert_uint_eq(rec.u.mmap.ino, 1234);
		}
		ck_assert_uint_eq(rec.u.mmap.prot, 0); /* the early layout has none */
		ck_assert_int_eq(perf_reader_next(r, &rec), 0);
		ck_assert_uint_eq(c.d.nwarnings, 0);
		perf_reader_close(r);
		cap_release(&c);
	}
}
END_TEST

/*
 * --call-graph lbr on an older kernel or perf: branch_sample_type CALL_STACK without
 * HW_INDEX, so no hw_idx word before the entries; the entries and every field after
 * them read as with it, in both byte orders.
 */
START_TEST(test_branch_stack_without_hw_idx)
{
	static struct buf b;

	synth_branch_type = PERF_SAMPLE_BRANCH_CALL_STACK | 1 /* USER */;
	for (int be = 0; be < 2; be++) {
		struct perf_reader *r;
		struct cap c;

		build_file(&b, be, synth_records);
		cap_init(&c);
		r = perf_reader_open_mem(b.p, b.len, "synth.data", &c.d);
		ck_assert_msg(r != NULL, "%s", c.d.last_error);
		check_synth(r, &c);
		perf_reader_close(r);
		cap_release(&c);
	}
	synth_branch_type = 1ULL << 17;
}
END_TEST

/* simpleperf's records: SPLIT pieces of 13 and 8 bytes (so the records after them are
 * not 8-aligned), and CALLCHAIN records (original, then joined) before the sample of
 * the same pid, tid and time. */
static void simpleperf_records(struct buf *b)
{
	size_t at;

	at = rec_begin(b, 32772, 0);        /* SPLIT */
	put(b, "12345", 5);
	rec_end(b, at);
	at = rec_begin(b, 32773, 0);        /* SPLIT_END */
	rec_end(b, at);
	for (uint64_t type = 0; type <= 2; type += 2) {
		at = rec_begin(b, 32775, 0); /* CALLCHAIN */
		p32(b, 100); p32(b, 101);
		p64(b, type);
		p64(b, 123456789);           /* the sample's time */
		p64(b, 2);
		p64(b, 0x7001 + type); p64(b, 0x7002);    /* ips */
		p64(b, 0x9000); p64(b, 0x9008);           /* sps */
		rec_end(b, at);
	}
	put_sample(b, 8, 3);
	put_sample(b, 7, 3);                 /* no CALLCHAIN before it */
}

/*
 * simpleperf's record types are framed by their size, whatever it is, and never taken
 * for damage; its joined CALLCHAIN gives the user stack to the sample after it when
 * that sample has none.
 */
START_TEST(test_simpleperf_records)
{
	static struct buf b;

	synth_kernel_cc = 1;
	for (int be = 0; be < 2; be++) {
		struct perf_reader *r;
		struct perf_record rec;
		const struct perf_sample *s = &rec.u.sample;
		struct cap c;
		int n = 0;

		build_file(&b, be, simpleperf_records);
		cap_init(&c);
		r = perf_reader_open_mem(b.p, b.len, "simpleperf.data", &c.d);
		ck_assert_msg(r != NULL, "%s", c.d.last_error);
		while (perf_reader_next(r, &rec) == 1) {
			ck_assert_uint_eq(rec.type, PERF_RECORD_SAMPLE);
			if (n++ == 0) {
				ck_assert_uint_eq(s->nr_callchain, 5);
				ck_assert_uint_eq(s->callchain[1], 0xffffffff81000000ULL);
				ck_assert_uint_eq(s->callchain[2], PERF_CONTEXT_USER);
				ck_assert_uint_eq(s->callchain[3], 0x7003); /* the joined one */
				ck_assert_uint_eq(s->callchain[4], 0x7002);
			} else {
				ck_assert_uint_eq(s->nr_callchain, 2);
			}
		}
		ck_assert_int_eq(n, 2);
		ck_assert_uint_eq(c.d.nwarnings, 0);
		ck_assert_uint_eq(perf_reader_stats(r)->skipped_bad, 0);
		ck_assert_uint_eq(perf_reader_stats(r)->skipped_unknown, 0);
		perf_reader_close(r);
		cap_release(&c);
	}
	synth_kernel_cc = 0;
}
END_TEST

/* Big simpleperf records: its record sizes are u32, the high half where perf has misc
 * (record.h's perf_event_header of its own types): 70003 bytes (not whole words, so
 * the samples after it are unaligned), then 131075, each before a sample. */
static void simpleperf_big_records(struct buf *b)
{
	static const uint32_t sizes[] = { 70003, 131075 };

	for (size_t i = 0; i < 2; i++) {
		size_t at = rec_begin(b, 32776, 0); /* UNWINDING_RESULT: passed over */

		while (b->len - at < sizes[i]) {
			uint8_t fill[4096];
			size_t n = sizes[i] - (b->len - at);

			memset(fill, 0x5a, sizeof(fill)); /* no header to resync on */
			put(b, fill, n < sizeof(fill) ? n : sizeof(fill));
		}
		patch16(b, at + 4, sizes[i] >> 16);
		patch16(b, at + 6, sizes[i] & 0xffff);
		put_sample(b, 8, 3);
	}
}

/*
 * A simpleperf record over 64 KB, its size's high half in the header's misc, is framed
 * by its whole size, from memory and through a pipe (the reader's streaming buffer),
 * in both byte orders: both samples after such records read, nothing taken for damage.
 */
START_TEST(test_simpleperf_big_record)
{
	static struct buf b;

	for (int be = 0; be < 2; be++) {
		for (int piped = 0; piped < 2; piped++) {
			struct perf_reader *r;
			struct perf_record rec;
			struct cap c;
			int n = 0, fds[2] = { -1, -1 };
			pid_t pid = -1;

			build_file(&b, be, simpleperf_big_records);
			ck_assert_uint_gt(b.len, 200000);
			cap_init(&c);
			if (piped) {
				ck_assert_int_eq(pipe(fds), 0);
				pid = fork();
				ck_assert_int_ge(pid, 0);
				if (pid == 0) {
					size_t off = 0;

					close(fds[0]);
					while (off < b.len) {
						ssize_t w = write(fds[1], b.p + off, b.len - off > 4000 ?
								  4000 : b.len - off);

						if (w <= 0)
							_exit(1);
						off += (size_t)w;
					}
					_exit(0);
				}
				close(fds[1]);
				ck_assert_int_eq(dup2(fds[0], STDIN_FILENO), STDIN_FILENO);
				close(fds[0]);
				r = perf_reader_open("-", &c.d);
			} else {
				r = perf_reader_open_mem(b.p, b.len, "big.data", &c.d);
			}
			ck_assert_msg(r != NULL, "%s", c.d.last_error);
			while (perf_reader_next(r, &rec) == 1) {
				ck_assert_uint_eq(rec.type, PERF_RECORD_SAMPLE);
				ck_assert_uint_eq(rec.u.sample.nr_callchain, 3);
				n++;
			}
			ck_assert_msg(c.d.nwarnings == 0, "be %d piped %d: %s", be, piped, cap_text(&c));
			ck_assert_int_eq(n, 2);
			ck_assert_uint_eq(perf_reader_stats(r)->skipped_bad, 0);
			ck_assert_uint_eq(perf_reader_stats(r)->skipped_unknown, 0);
			perf_reader_close(r);
			cap_release(&c);
			if (pid > 0)
				waitpid(pid, NULL, 0);
		}
	}
}
END_TEST

/*
 * A first pass that skips samples (pipeline.c's state pass) returns the rest with
 * the same indexes as a full pass, and the damaged sample it never decoded is warned
 * about in the pass that decodes it; the damaged MMAP2 once only.
 */
START_TEST(test_skip_type_two_passes)
{
	static struct buf b;
	struct perf_reader *r;
	struct perf_record rec;
	struct cap c;
	uint64_t fork_index = 0;
	int n = 0, samples = 0;
	const char *t;

	build_file(&b, 0, synth_records);
	cap_init(&c);
	r = perf_reader_open_mem(b.p, b.len, "synth.data", &c.d);
	ck_assert_msg(r != NULL, "%s", c.d.last_error);
	perf_reader_skip_type(r, PERF_RECORD_SAMPLE);
	while (perf_reader_next(r, &rec) == 1) {
		ck_assert_uint_ne(rec.type, PERF_RECORD_SAMPLE);
		if (rec.type == PERF_RECORD_FORK)
			fork_index = rec.index;
		n++;
	}
	ck_assert_int_eq(n, 4);
	t = cap_text(&c);
	ck_assert_ptr_null(strstr(t, "CALLCHAIN"));
	ck_assert_ptr_nonnull(strstr(t, "PERF_RECORD_MMAP2: record size 24"));

	perf_reader_rewind(r);
	perf_reader_skip_type(r, 0);
	while (perf_reader_next(r, &rec) == 1) {
		samples += rec.type == PERF_RECORD_SAMPLE;
		if (rec.type == PERF_RECORD_FORK)
			ck_assert_uint_eq(rec.index, fork_index);
	}
	ck_assert_int_eq(samples, 1);
	t = cap_text(&c);
	ck_assert_ptr_nonnull(strstr(t, "PERF_RECORD_SAMPLE: CALLCHAIN field overruns"));
	t = strstr(t, "PERF_RECORD_MMAP2");
	ck_assert_ptr_nonnull(t);
	ck_assert_ptr_null(strstr(t + 1, "PERF_RECORD_MMAP2")); /* warned once */
	perf_reader_close(r);
	cap_release(&c);
}
END_TEST

/* A skipped sample's identity, as pass 1 is told it, is what decoding it gives. */
struct told {
	uint64_t index[8];
	struct perf_sample_id sid[8];
	int n, unreadable;
};

static void tell(void *arg, uint64_t index, const struct perf_sample_id *sid)
{
	struct told *t = arg;

	if (!sid) {
		t->unreadable++;
		return;
	}
	ck_assert_int_lt(t->n, 8);
	t->index[t->n] = index;
	t->sid[t->n++] = *sid;
}

START_TEST(test_skipped_sample_identity)
{
	static struct buf b;
	struct perf_reader *r;
	struct perf_record rec;
	struct cap c;
	struct told t;
	int decoded = 0;

	memset(&t, 0, sizeof(t));
	build_file(&b, 0, synth_records);
	cap_init(&c);
	r = perf_reader_open_mem(b.p, b.len, "synth.data", &c.d);
	ck_assert_msg(r != NULL, "%s", c.d.last_error);
	perf_reader_on_skipped_sample(r, tell, &t);
	perf_reader_skip_type(r, PERF_RECORD_SAMPLE);
	while (perf_reader_next(r, &rec) == 1)
		;
	ck_assert_int_eq(t.n, 2); /* the damaged one too: its first fields are whole */
	ck_assert_int_eq(t.unreadable, 0);
	perf_reader_on_skipped_sample(r, NULL, NULL);
	perf_reader_rewind(r);
	perf_reader_skip_type(r, 0);
	while (perf_reader_next(r, &rec) == 1) {
		int k;

		if (rec.type != PERF_RECORD_SAMPLE)
			continue;
		for (k = 0; k < t.n && t.index[k] != rec.index; k++)
			;
		ck_assert_int_lt(k, t.n);
		ck_assert(rec.sid.has_tid && t.sid[k].has_tid);
		ck_assert_uint_eq(t.sid[k].pid, rec.sid.pid);
		ck_assert_uint_eq(t.sid[k].tid, rec.sid.tid);
		ck_assert_uint_eq(t.sid[k].has_time, rec.sid.has_time);
		ck_assert_uint_eq(t.sid[k].time, rec.sid.time);
		decoded++;
	}
	ck_assert_int_eq(decoded, 1);
	perf_reader_close(r);
	cap_release(&c);
}
END_TEST

/* Samples decoded before the skip began were warned about then: not again. */
START_TEST(test_skip_type_from_midway)
{
	static struct buf b;
	struct perf_reader *r;
	struct perf_record rec;
	struct cap c;
	const char *t;

	build_file(&b, 0, synth_records);
	cap_init(&c);
	r = perf_reader_open_mem(b.p, b.len, "synth.data", &c.d);
	ck_assert_msg(r != NULL, "%s", c.d.last_error);
	while (perf_reader_next(r, &rec) == 1)
		if (rec.type == PERF_RECORD_FORK) /* after both samples */
			perf_reader_skip_type(r, PERF_RECORD_SAMPLE);
	perf_reader_rewind(r);
	perf_reader_skip_type(r, 0);
	while (perf_reader_next(r, &rec) == 1)
		;
	t = strstr(cap_text(&c), "CALLCHAIN field overruns");
	ck_assert_ptr_nonnull(t);
	ck_assert_ptr_null(strstr(t + 1, "CALLCHAIN field overruns"));
	perf_reader_close(r);
	cap_release(&c);
}
END_TEST

/* COMPRESSED2 then COMPRESSED, one zstd stream, a sample straddling the two. */
static void compressed_records(struct buf *b)
{
	static struct buf plain;
	uint8_t out[4096];
	ZSTD_CCtx *cc = ZSTD_createCCtx();
	ZSTD_inBuffer in;
	ZSTD_outBuffer o;
	size_t half, at, i, pad;

	memset(&plain, 0, sizeof(plain));
	plain.be = b->be;
	synth_records(&plain);
	ck_assert(cc != NULL);
	half = 200 + 100; /* inside the first sample (COMM 72, MMAP2 152 bytes) */

	in = (ZSTD_inBuffer){ plain.p, half, 0 };
	o = (ZSTD_outBuffer){ out, sizeof(out), 0 };
	ck_assert(!ZSTD_isError(ZSTD_compressStream2(cc, &o, &in, ZSTD_e_flush)));
	ck_assert_uint_eq(in.pos, half);
	at = rec_begin(b, PERF_RECORD_COMPRESSED2, 0);
	p64(b, o.pos);
	put(b, out, o.pos);
	pad = (8 - o.pos % 8) % 8;
	for (i = 0; i < pad; i++)
		put(b, "", 1);
	rec_end(b, at);

	at = rec_begin(b, PERF_RECORD_FINISHED_ROUND, 0);
	rec_end(b, at);

	in = (ZSTD_inBuffer){ plain.p, plain.len, half };
	o = (ZSTD_outBuffer){ out, sizeof(out), 0 };
	ck_assert_uint_eq(ZSTD_compressStream2(cc, &o, &in, ZSTD_e_end), 0);
	at = rec_begin(b, PERF_RECORD_COMPRESSED, 0);
	put(b, out, o.pos);
	rec_end(b, at);
	ZSTD_freeCCtx(cc);
}

START_TEST(test_compressed_straddle)
{
	static struct buf b;
	struct perf_record rec;
	struct perf_reader *r;
	struct cap c;
	int types[16], n = 0;

	build_file(&b, 0, compressed_records);
	save_synth("synth-compressed-straddle.data", b.p, b.len);
	cap_init(&c);
	r = perf_reader_open_mem(b.p, b.len, "z.data", &c.d);
	ck_assert(r != NULL);
	while (n < 16 && perf_reader_next(r, &rec) == 1) {
		types[n++] = (int)rec.type;
		if (rec.type == PERF_RECORD_SAMPLE) {
			ck_assert_uint_eq(rec.u.sample.callchain[2], 0x402000);
			ck_assert_uint_eq(rec.u.sample.cgroup, 42);
		}
	}
	/* the round marker between the two payloads comes out before the sample */
	ck_assert_int_eq(n, 6);
	ck_assert_int_eq(types[0], PERF_RECORD_COMM);
	ck_assert_int_eq(types[1], PERF_RECORD_MMAP2);
	ck_assert_int_eq(types[2], PERF_RECORD_FINISHED_ROUND);
	ck_assert_int_eq(types[3], PERF_RECORD_SAMPLE);
	ck_assert_int_eq(types[4], PERF_RECORD_FORK);
	ck_assert_uint_eq(perf_reader_stats(r)->compressed_records, 2);
	ck_assert_uint_eq(perf_reader_stats(r)->skipped_bad, 2);
	perf_reader_rewind(r);
	n = 0;
	while (perf_reader_next(r, &rec) == 1)
		n++;
	ck_assert_int_eq(n, 6);
	perf_reader_close(r);
	cap_release(&c);
}
END_TEST

/* A NAMESPACES record too short for its pid, tid and nr, last in the data of a file
 * and of a pipe (attrs without sample_id_all: the record is its 8-byte header):
 * skipped and said, not read past (fuzz_perfdata found the reader taking 16 bytes
 * past the end of its input). Read from buffers of their exact size, so that a
 * sanitizer build sees any read past. */
START_TEST(test_short_namespaces)
{
	static const char *const files[] = { "tests/corpus/perfdata/namespaces-short.data",
					     "tests/corpus/perfdata/namespaces-short-pipe.data" };
	struct perf_record rec;
	struct perf_reader *r;
	struct cap c;
	uint8_t *buf, *slurped;
	size_t len;

	slurped = slurp_gz(top_path(files[_i]), &len);
	ck_assert_ptr_nonnull(slurped);
	buf = malloc(len); /* slurp_gz's buffer may have room after the bytes */
	ck_assert_ptr_nonnull(buf);
	memcpy(buf, slurped, len);
	free(slurped);
	cap_init(&c);
	r = perf_reader_open_mem(buf, len, "ns.data", &c.d);
	ck_assert(r != NULL);
	while (perf_reader_next(r, &rec) == 1)
		ck_assert_uint_ne(rec.type, PERF_RECORD_NAMESPACES);
	ck_assert_msg(strstr(cap_text(&c), "PERF_RECORD_NAMESPACES: damaged record (size 8)"),
		      "%s", cap_text(&c));
	ck_assert_uint_eq(perf_reader_stats(r)->records, 0);
	perf_reader_close(r);
	cap_release(&c);
	free(buf);
}
END_TEST

/* A skippable frame (which may hold anything, here a whole zstd frame of the same
 * records) and then a frame of the records: the skippable frame's content is passed
 * over, not taken for a frame of its own. */
static void skippable_records(struct buf *b)
{
	static struct buf plain;
	static uint8_t frame[4096];
	size_t n, at, i, pad;

	memset(&plain, 0, sizeof(plain));
	plain.be = b->be;
	synth_records(&plain);
	n = ZSTD_compress(frame, sizeof(frame), plain.p, plain.len, 1);
	ck_assert(!ZSTD_isError(n));
	at = rec_begin(b, PERF_RECORD_COMPRESSED, 0);
	put(b, "\x5a\x2a\x4d\x18", 4); /* 0x184D2A5A, little-endian as zstd has it */
	put(b, (uint8_t[4]){ n & 0xff, (n >> 8) & 0xff, 0, 0 }, 4);
	put(b, frame, n);
	put(b, frame, n);
	pad = (8 - (b->len - at) % 8) % 8;
	for (i = 0; i < pad; i++)
		put(b, "", 1);
	rec_end(b, at);
}

/* The records a reader gives for a file built by `records`, their types in `types`. */
static int read_types(void (*records)(struct buf *), int *types, int max)
{
	static struct buf b;
	struct perf_record rec;
	struct perf_reader *r;
	struct cap c;
	int n = 0;

	build_file(&b, 0, records);
	cap_init(&c);
	r = perf_reader_open_mem(b.p, b.len, "z.data", &c.d);
	ck_assert(r != NULL);
	while (perf_reader_next(r, &rec) == 1)
		if (n < max)
			types[n++] = (int)rec.type;
		else
			n++;
	perf_reader_close(r);
	cap_release(&c);
	return n;
}

START_TEST(test_compressed_skippable)
{
	int plain[16], z[16], n;

	n = read_types(synth_records, plain, 16);
	ck_assert_int_gt(n, 3);
	ck_assert_int_le(n, 16);
	ck_assert_int_eq(read_types(skippable_records, z, 16), n);
	ck_assert_mem_eq(z, plain, n * sizeof(int));
}
END_TEST

/* The length of name number `k` with its NUL, and its first random state. */
static size_t name_len(size_t k, uint64_t *x)
{
	*x = k * 0x9e3779b97f4a7c15ULL + 1;
	return 1000 + (size_t)(*x % 2000) + 1;
}

/* The record of a name of `n` bytes with its NUL: header, fields, padded name, trailer. */
static size_t mmap2_size(size_t n)
{
	return 8 + 64 + n + (8 - n % 8) % 8 + 48;
}

/* How many names in turn make just over 1,020,000 bytes of records: each record's name
 * was last seen that far back, nearly the 1 MB window. */
static size_t name_cycle(void)
{
	size_t k = 0, bytes = 0;
	uint64_t x;

	while (bytes < 1020000)
		bytes += mmap2_size(name_len(k++, &x));
	return k;
}

/* The name of the long stream's MMAP2 number `i`: one of name_cycle() names of 1,000
 * to 3,000 pseudo-random letters, taken in turn, so that blocks refer to history
 * nearly a window back. */
#define LONG_N 3000
static void long_name(size_t i, size_t cycle, char *out)
{
	uint64_t x;
	size_t n = name_len(i % cycle, &x) - 1;

	out[0] = '/';
	for (size_t k = 1; k < n; k++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		out[k] = (char)('a' + x % 26);
	}
	out[n] = 0;
}

/* Bytes that grow (struct buf holds 8 KB). */
struct big {
	uint8_t *p;
	size_t len, cap;
};

static void bput(struct big *b, const void *src, size_t n)
{
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2;
		b->p = realloc(b->p, b->cap);
		ck_assert_ptr_nonnull(b->p);
	}
	memcpy(b->p + b->len, src, n);
	b->len += n;
}

static void bput32(struct big *b, uint32_t v) { bput(b, &v, 4); }
static void bput64(struct big *b, uint64_t v) { bput(b, &v, 8); }

/* The header of a record of `type` whose `size` bytes follow (host order, little-endian
 * as build_file's header is). */
static void bhead(struct big *b, uint32_t type, uint16_t size)
{
	uint16_t misc = 2;

	bput32(b, type);
	bput(b, &misc, 2);
	bput(b, &size, 2);
}

static void no_records(struct buf *b)
{
	(void)b;
}

/* build_file's header and 3,000 MMAP2 records (6 MB) in one zstd stream with a 1 MB
 * window, cut as perf record cuts it: output of at most 4,000 bytes a COMPRESSED
 * record, so that blocks and frame parts straddle records. */
static void long_compressed(struct big *f)
{
	static struct buf head;
	static uint8_t out[4000];
	static char name[4096];
	struct big plain = { 0 };
	ZSTD_CCtx *cc = ZSTD_createCCtx();
	size_t from = 0;

	build_file(&head, 0, no_records);
	bput(f, head.p, head.len);
	for (size_t i = 0, cycle = name_cycle(); i < LONG_N; i++) {
		size_t n, pad;

		long_name(i, cycle, name);
		n = strlen(name) + 1;
		pad = (8 - n % 8) % 8;
		bhead(&plain, PERF_RECORD_MMAP2, (uint16_t)mmap2_size(n));
		bput32(&plain, (uint32_t)i); bput32(&plain, (uint32_t)i);
		bput64(&plain, 0x400000); bput64(&plain, 0x10000); bput64(&plain, 0);
		bput32(&plain, 8); bput32(&plain, 1); bput64(&plain, 2); bput64(&plain, 3);
		bput32(&plain, 5); bput32(&plain, 2);
		bput(&plain, name, n);
		bput(&plain, "\0\0\0\0\0\0\0", pad);
		/* the trailer: TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER */
		bput32(&plain, (uint32_t)i); bput32(&plain, (uint32_t)i);
		bput64(&plain, 5000 + i); bput64(&plain, 8); bput64(&plain, 55);
		bput32(&plain, 3); bput32(&plain, 0);
		bput64(&plain, 8);
	}
	ck_assert(cc != NULL);
	ck_assert(!ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_windowLog, 20)));
	ck_assert(!ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, 3)));
	/* matches found however far back in the window */
	ck_assert(!ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_enableLongDistanceMatching, 1)));
	while (from < plain.len) {
		size_t to = from + 100000 < plain.len ? from + 100000 : plain.len, left;
		ZSTD_EndDirective end = to == plain.len ? ZSTD_e_end : ZSTD_e_flush;
		ZSTD_inBuffer in = { plain.p, to, from };

		do {
			ZSTD_outBuffer o = { out, sizeof(out), 0 };
			size_t pad;

			left = ZSTD_compressStream2(cc, &o, &in, end);
			ck_assert(!ZSTD_isError(left));
			pad = (8 - o.pos % 8) % 8;
			bhead(f, PERF_RECORD_COMPRESSED2, (uint16_t)(16 + o.pos + pad));
			bput64(f, o.pos);
			bput(f, out, o.pos);
			bput(f, "\0\0\0\0\0\0\0", pad);
		} while (left || in.pos < in.size);
		from = to;
	}
	/* the data section's size */
	{
		uint64_t data_at, size;

		memcpy(&data_at, f->p + 40, 8);
		size = f->len - data_at;
		memcpy(f->p + 48, &size, 8);
	}
	ZSTD_freeCCtx(cc);
	free(plain.p);
}

/* Blocks inflated in place one after another, the buffer wrapping around many times,
 * history a window back: every record as written, in both passes. */
START_TEST(test_compressed_long)
{
	static char name[4096];
	struct big f = { 0 };
	struct perf_record rec;
	struct perf_reader *r;
	struct cap c;

	long_compressed(&f);
	cap_init(&c);
	r = perf_reader_open_mem(f.p, f.len, "long-z.data", &c.d);
	ck_assert(r != NULL);
	for (int pass = 0; pass < 2; pass++) {
		size_t i = 0, cycle = name_cycle();

		while (perf_reader_next(r, &rec) == 1) {
			ck_assert_uint_eq(rec.type, PERF_RECORD_MMAP2);
			ck_assert_uint_eq(rec.u.mmap.pid, i);
			long_name(i, cycle, name);
			ck_assert_msg(strcmp(rec.u.mmap.filename, name) == 0,
				      "pass %d, record %zu: a name of %zu bytes where %zu were written",
				      pass + 1, i, strlen(rec.u.mmap.filename), strlen(name));
			i++;
		}
		ck_assert_uint_eq(i, LONG_N);
		ck_assert_uint_eq(perf_reader_stats(r)->skipped_bad, 0);
		perf_reader_rewind(r);
	}
	ck_assert_ptr_null(strstr(cap_text(&c), "zstd"));
	perf_reader_close(r);
	cap_release(&c);
	free(f.p);
}
END_TEST

/* Stacks kept past perf_reader_next, as convert/session.c holds a round's samples. */
struct kept {
	const uint8_t **at;
	uint8_t **copy;
	size_t *len, n, cap;
	size_t calls, checked, said;
	int let_go; /* forget them when told (else keep them to the end) */
};

static void kept_check(struct kept *k)
{
	for (size_t i = 0; i < k->n; i++) {
		ck_assert_msg(memcmp(k->at[i], k->copy[i], k->len[i]) == 0,
			      "a kept stack (%zu of %zu, %zu bytes at %p) changed before the reader said (call %zu, let_go %d)", i, k->n, k->len[i], (const void *)k->at[i], k->calls, k->let_go);
		k->checked++;
	}
}

/* The kept stacks from `from` on that overlap [lo, hi) (all: lo NULL) forgotten. */
static void kept_forget(struct kept *k, size_t from, const uint8_t *lo, const uint8_t *hi)
{
	size_t j = from;

	for (size_t i = from; i < k->n; i++) {
		if (!lo || (k->at[i] < hi && k->at[i] + k->len[i] > lo)) {
			free(k->copy[i]);
			continue;
		}
		k->at[j] = k->at[i];
		k->copy[j] = k->copy[i];
		k->len[j++] = k->len[i];
	}
	k->n = j;
}

static void on_reuse(void *arg, const void *lo, const void *hi)
{
	struct kept *k = arg;
	size_t n = k->n;

	k->calls++;
	ck_assert((const uint8_t *)lo < (const uint8_t *)hi);
	if (k->let_go) {
		kept_check(k);
		kept_forget(k, 0, lo, hi);
		k->said += n - k->n;
	}
}

/* The stacks of a -z --call-graph dwarf recording read in place: kept until the
 * reader says it writes over them, they are as inflated; kept longer, some are
 * written over (so that the call is needed); let go of 40 records later, as a round
 * is, none is said to be written over (the reader comes back to a record's bytes
 * only a buffer's length later). */
START_TEST(test_reuse_said_first)
{
	struct perf_record rec;
	struct diag d;
	struct kept k;
	struct perf_reader *r;
	size_t samples = 0, changed = 0;

	diag_init(&d);
	/* let_go 2: also let go of each 40 samples after it came */
	for (int let_go = 2; let_go >= 0; let_go--) {
		memset(&k, 0, sizeof(k));
		k.let_go = let_go;
		r = perf_reader_open(top_path("testdata/dwarf/dw.data"), &d);
		ck_assert(r != NULL);
		ck_assert(perf_reader_header(r)->compressed);
		perf_reader_on_reuse(r, on_reuse, &k);
		samples = 0;
		while (perf_reader_next(r, &rec) == 1) {
			const struct perf_sample *x = &rec.u.sample;
			size_t len = (size_t)x->stack_user_dyn;

			if (rec.type != PERF_RECORD_SAMPLE || !len)
				continue;
			samples++;
			ck_assert(perf_reader_inflated(r, x->stack_user, len));
			ck_assert(!perf_reader_inflated(r, x->stack_user, (size_t)1 << 40));
			if (let_go == 2 && k.n == 40) {
				kept_check(&k);
				free(k.copy[0]);
				memmove(k.at, k.at + 1, 39 * sizeof(*k.at));
				memmove(k.copy, k.copy + 1, 39 * sizeof(*k.copy));
				memmove(k.len, k.len + 1, 39 * sizeof(*k.len));
				k.n--;
			}
			if (k.n == k.cap) {
				k.cap = k.cap ? 2 * k.cap : 256;
				k.at = realloc(k.at, k.cap * sizeof(*k.at));
				k.copy = realloc(k.copy, k.cap * sizeof(*k.copy));
				k.len = realloc(k.len, k.cap * sizeof(*k.len));
			}
			k.at[k.n] = x->stack_user;
			k.copy[k.n] = malloc(len);
			memcpy(k.copy[k.n], x->stack_user, len);
			k.len[k.n++] = len;
		}
		if (let_go) {
			kept_check(&k);
			ck_assert_uint_ge(k.calls, 2);
		}
		if (let_go == 1)
			ck_assert_uint_gt(k.said, samples / 4);
		if (let_go == 2) {
			ck_assert_uint_ge(k.checked, samples);
			ck_assert_uint_eq(k.said, 0);
		}
		if (!let_go) {
			/* kept through every reuse: the first ones are overwritten */
			for (size_t i = 0; i < k.n; i++)
				changed += memcmp(k.at[i], k.copy[i], k.len[i]) != 0;
			ck_assert_uint_gt(changed, samples / 4);
		}
		perf_reader_on_reuse(r, NULL, NULL);
		kept_forget(&k, 0, NULL, NULL);
		free(k.at);
		free(k.copy);
		free(k.len);
		perf_reader_close(r);
	}
	ck_assert_uint_eq(samples, 1966);
	ck_assert_uint_eq(d.nerrors + d.nwarnings, 0);

	/* an uncompressed recording's records are in the file's mapping */
	r = perf_reader_open(top_path("testdata/mt-g.data"), &d);
	ck_assert(r != NULL);
	while (perf_reader_next(r, &rec) == 1)
		ck_assert(rec.type != PERF_RECORD_SAMPLE || !rec.u.sample.callchain ||
			  !perf_reader_inflated(r, rec.u.sample.callchain, 8));
	perf_reader_close(r);
}
END_TEST

/* A COMM whose size is 8 too large, then compressed data holding a record of size 0,
 * then a FORK: issue 21 B1. */
static void size_damage_records(struct buf *b)
{
	static struct buf plain;
	uint8_t out[4096];
	ZSTD_CCtx *cc = ZSTD_createCCtx();
	size_t at, n;

	synth_records(b);
	patch16(b, 344 + 16 + 6, 72 + 8); /* the first record (COMM, 72 bytes) */

	memset(&plain, 0, sizeof(plain));
	plain.be = b->be;
	at = rec_begin(&plain, PERF_RECORD_FINISHED_ROUND, 0);
	rec_end(&plain, at);
	rec_begin(&plain, PERF_RECORD_FINISHED_ROUND, 0); /* size 0 */
	p64(&plain, 0);
	ck_assert(cc != NULL);
	n = ZSTD_compress2(cc, out, sizeof(out), plain.p, plain.len);
	ck_assert(!ZSTD_isError(n));
	at = rec_begin(b, PERF_RECORD_COMPRESSED, 0);
	put(b, out, n);
	rec_end(b, at);
	ZSTD_freeCCtx(cc);

	at = rec_begin(b, PERF_RECORD_FORK, 0);
	p32(b, 200); p32(b, 200); p32(b, 202); p32(b, 201); p64(b, 6000);
	put_trailer(b, 7);
	rec_end(b, at);
}

START_TEST(test_size_damage)
{
	static struct buf b;
	struct perf_record rec;
	struct perf_reader *r;
	struct cap c;
	int types[16], n = 0, ret;

	build_file(&b, 0, size_damage_records);
	save_synth("synth-size-damage.data", b.p, b.len);
	cap_init(&c);
	r = perf_reader_open_mem(b.p, b.len, "s.data", &c.d);
	ck_assert(r != NULL);
	while (n < 16 && (ret = perf_reader_next(r, &rec)) == 1)
		types[n++] = (int)rec.type;
	ck_assert_int_eq(ret, 0);
	ck_assert_uint_eq(c.d.nerrors, 0);
	/* the COMM is lost, the MMAP2 behind it is not */
	ck_assert_ptr_nonnull(strstr(cap_text(&c), "s.data: offset 0x168: warning: "
				     "PERF_RECORD_COMM: damaged record (size 80): 72 bytes skipped "
				     "to the next plausible record at offset 0x1b0"));
	ck_assert_int_eq(types[0], PERF_RECORD_MMAP2);
	ck_assert_int_eq(types[1], PERF_RECORD_SAMPLE);
	/* inside the compressed data: the record before the size 0, then the FORK after */
	ck_assert_ptr_nonnull(strstr(c.text, "PERF_RECORD_FINISHED_ROUND: record size 0 "
				     "below header size 8 inside compressed data, the compressed "
				     "data of this file is skipped from here"));
	ck_assert_int_eq(n, 6);
	ck_assert_int_eq(types[3], PERF_RECORD_FINISHED_ROUND);
	ck_assert_int_eq(types[4], PERF_RECORD_FINISHED_ROUND);
	ck_assert_int_eq(types[5], PERF_RECORD_FORK);
	ck_assert_uint_eq(rec.u.fork.tid, 202);
	perf_reader_close(r);
	cap_release(&c);
}
END_TEST

/* TIME_CONV in both forms: the parameters that convert a jitdump's TSC times. */
static void time_conv_records(struct buf *b)
{
	size_t at = rec_begin(b, PERF_RECORD_TIME_CONV, 0);

	p64(b, 31);
	p64(b, 1431655765);
	p64(b, 777);
	p64(b, 0x100000000ULL);
	p64(b, 0xffffffffULL);
	put(b, "\1\1\0\0\0\0\0\0", 8);
	rec_end(b, at);
	at = rec_begin(b, PERF_RECORD_TIME_CONV, 0);
	p64(b, 10);
	p64(b, 3);
	p64(b, 5);
	rec_end(b, at);
}

START_TEST(test_time_conv)
{
	static struct buf b;
	int be;

	for (be = 0; be < 2; be++) {
		struct perf_record rec;
		struct perf_reader *r;
		struct cap c;

		build_file(&b, be, time_conv_records);
		cap_init(&c);
		r = perf_reader_open_mem(b.p, b.len, "tc.data", &c.d);
		ck_assert_msg(r != NULL, "%s", c.d.last_error);
		ck_assert_int_eq(perf_reader_next(r, &rec), 1);
		ck_assert_uint_eq(rec.type, PERF_RECORD_TIME_CONV);
		ck_assert_uint_eq(rec.u.time_conv.time_shift, 31);
		ck_assert_uint_eq(rec.u.time_conv.time_mult, 1431655765);
		ck_assert_uint_eq(rec.u.time_conv.time_zero, 777);
		ck_assert_uint_eq(rec.u.time_conv.time_cycles, 0x100000000ULL);
		ck_assert_uint_eq(rec.u.time_conv.time_mask, 0xffffffffULL);
		ck_assert_uint_eq(rec.u.time_conv.cap_user_time_short, 1);
		ck_assert_int_eq(perf_reader_next(r, &rec), 1);
		ck_assert_uint_eq(rec.type, PERF_RECORD_TIME_CONV);
		ck_assert_uint_eq(rec.u.time_conv.time_shift, 10);
		ck_assert_uint_eq(rec.u.time_conv.time_mult, 3);
		ck_assert_uint_eq(rec.u.time_conv.time_zero, 5);
		ck_assert_uint_eq(rec.u.time_conv.time_mask, 0);
		ck_assert_int_eq(perf_reader_next(r, &rec), 0);
		perf_reader_close(r);
		cap_release(&c);
	}
}
END_TEST

static Suite *perfdata_suite(void)
{
	Suite *s = suite_create("perfdata");
	TCase *tc = tcase_create("perfdata");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_file_two_events);
	tcase_add_test(tc, test_branch_stack_without_hw_idx);
	tcase_add_test(tc, test_mmap2_layouts);
	tcase_add_test(tc, test_clock_features);
	tcase_add_test(tc, test_pipe_mem);
	tcase_add_test(tc, test_pipe_stdin);
	tcase_add_test(tc, test_compressed);
	tcase_add_test(tc, test_threads_dir);
	tcase_add_test(tc, test_identifier_raw_dwarf);
	tcase_add_test(tc, test_killed);
	tcase_add_test(tc, test_cut_data);
	tcase_add_test(tc, test_bad_inputs);
	tcase_add_test(tc, test_synthetic_both_orders);
	tcase_add_test(tc, test_skip_type_two_passes);
	tcase_add_test(tc, test_skipped_sample_identity);
	tcase_add_test(tc, test_skip_type_from_midway);
	tcase_add_test(tc, test_compressed_straddle);
	tcase_add_test(tc, test_compressed_skippable);
	tcase_add_loop_test(tc, test_short_namespaces, 0, 2);
	tcase_add_test(tc, test_compressed_long);
	tcase_add_test(tc, test_reuse_said_first);
	tcase_add_test(tc, test_size_damage);
	tcase_add_test(tc, test_time_conv);
	tcase_add_test(tc, test_simpleperf_records);
	tcase_add_test(tc, test_simpleperf_big_record);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	int failed = run_suite(perfdata_suite());

	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
