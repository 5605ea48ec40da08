/* check_jitdump: unit tests of the jitdump reader on synthetic dumps (both byte orders,
 * every record type, damaged entries, a cut-off record, TSC times) and on the real
 * dumps in testdata/jit/. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "formats/read/jitdump.h"
#include "tests/jitdump_build.h"
#include "tests/testutil.h"

static void cap_release(struct cap *c)
{
	fclose(c->f);
}

/* Every record type, an unknown id, a "\xff" entry. */
static void build_all_types(struct jb *b, int sw)
{
	size_t at;

	jb_init(b, sw, 4242, 0);
	at = jb_debug_begin(b, 100, 0x10000, 3);
	jb_entry(b, 0x10040, 11, "/src/app.js");
	jb_entry_raw(b, 0x10048, 12, 5, "\xff", 2);
	jb_entry(b, 0x10050, 0, "/src/other.js");
	jb_end(b, at);
	jb_unwind(b, 101, 24);
	jb_load(b, 102, 4242, 0x10000, 32, 1, "JS:*hot /src/app.js:10:1");
	at = jb_begin(b, 99, 103); /* unknown id: skipped by size */
	jb_u64(b, 7);
	jb_end(b, at);
	jb_move(b, 104, 4242, 0x10000, 0x20000, 32, 1);
	jb_close(b, 105);
}

START_TEST(test_every_record_both_orders)
{
	int sw;

	for (sw = 0; sw < 2; sw++) {
		struct jitdump_record rec;
		struct jitdump_reader *r;
		const struct jitdump_header *h;
		struct cap c;
		struct jb b;
		int n = 0;

		cap_init(&c);
		build_all_types(&b, sw);
		r = jitdump_reader_open_mem(b.p, b.len, "all.dump", NULL, &c.d);
		ck_assert(r != NULL);
		h = jitdump_reader_header(r);
		ck_assert_int_eq(h->swapped, sw);
		ck_assert_uint_eq(h->version, 1);
		ck_assert_uint_eq(h->pid, 4242);
		ck_assert_uint_eq(h->elf_mach, 62);
		ck_assert_uint_eq(h->timestamp, 12345);
		ck_assert_int_eq(h->times_converted, 1);

		ck_assert_int_eq(jitdump_reader_next(r, &rec), 1);
		ck_assert_uint_eq(rec.id, JITDUMP_CODE_DEBUG_INFO);
		ck_assert_uint_eq(rec.timestamp, 100);
		ck_assert_uint_eq(rec.u.debug.code_addr, 0x10000);
		ck_assert_uint_eq(rec.u.debug.nr_entry, 3);
		ck_assert_uint_eq(rec.u.debug.nentries, 3);
		ck_assert_uint_eq(rec.u.debug.nrejected, 0);
		ck_assert_uint_eq(rec.u.debug.entries[0].addr, 0x10040);
		ck_assert_uint_eq(rec.u.debug.entries[0].line, 11);
		ck_assert_str_eq(rec.u.debug.entries[0].file, "/src/app.js");
		ck_assert_int_eq(rec.u.debug.entries[0].file_valid, 1);
		/* "\xff": the previous entry's file */
		ck_assert_uint_eq(rec.u.debug.entries[1].line, 12);
		ck_assert_uint_eq(rec.u.debug.entries[1].discrim, 5);
		ck_assert_int_eq(rec.u.debug.entries[1].same_file, 1);
		ck_assert_str_eq(rec.u.debug.entries[1].file, "/src/app.js");
		ck_assert_int_eq(rec.u.debug.entries[1].file_valid, 1);
		ck_assert_uint_eq(rec.u.debug.entries[2].line, 0);
		ck_assert_str_eq(rec.u.debug.entries[2].file, "/src/other.js");

		ck_assert_int_eq(jitdump_reader_next(r, &rec), 1);
		ck_assert_uint_eq(rec.id, JITDUMP_CODE_UNWINDING_INFO);
		ck_assert_uint_eq(rec.u.unwind.unwinding_size, 24);
		ck_assert_uint_eq(rec.u.unwind.eh_frame_hdr_size, 20);
		ck_assert_uint_eq(rec.u.unwind.mapped_size, 64);
		ck_assert_uint_eq(rec.u.unwind.data_size, 24);

		ck_assert_int_eq(jitdump_reader_next(r, &rec), 1);
		ck_assert_uint_eq(rec.id, JITDUMP_CODE_LOAD);
		ck_assert_uint_eq(rec.timestamp, 102);
		ck_assert_uint_eq(rec.u.load.pid, 4242);
		ck_assert_uint_eq(rec.u.load.tid, 4243);
		ck_assert_uint_eq(rec.u.load.code_addr, 0x10000);
		ck_assert_uint_eq(rec.u.load.code_size, 32);
		ck_assert_uint_eq(rec.u.load.code_index, 1);
		ck_assert_str_eq(rec.u.load.name, "JS:*hot /src/app.js:10:1");
		ck_assert(rec.u.load.code != NULL);
		ck_assert_uint_eq(rec.u.load.code[0], 0x90);
		ck_assert_uint_eq(rec.u.load.code[31], 0x90);

		/* the unknown record is skipped */
		ck_assert_int_eq(jitdump_reader_next(r, &rec), 1);
		ck_assert_uint_eq(rec.id, JITDUMP_CODE_MOVE);
		ck_assert_uint_eq(rec.u.move.old_code_addr, 0x10000);
		ck_assert_uint_eq(rec.u.move.new_code_addr, 0x20000);
		ck_assert_uint_eq(rec.u.move.code_size, 32);
		ck_assert_uint_eq(rec.timestamp, 104);

		ck_assert_int_eq(jitdump_reader_next(r, &rec), 1);
		ck_assert_uint_eq(rec.id, JITDUMP_CODE_CLOSE);
		while (jitdump_reader_next(r, &rec) == 1)
			n++;
		ck_assert_int_eq(n, 0);
		ck_assert_uint_eq(jitdump_reader_stats(r)->records, 5);
		ck_assert_uint_eq(jitdump_reader_stats(r)->unknown, 1);
		ck_assert_ptr_nonnull(strstr(cap_text(&c), "unknown jitdump record id 99"));
		jitdump_reader_close(r);
		free(b.p);
		cap_release(&c);
	}
}
END_TEST

/* Node.js 20: each entry's file name starts with 16 bytes of freed memory, a NUL among
 * them. A strlen walk loses the entry boundaries; the reader finds every entry. */
START_TEST(test_node20_damaged_names)
{
	static const char *path = "/home/user/project/src/fibonacci.js"; /* 35 chars */
	static const uint32_t lines[] = { 3, 4, 7, 7, 5 };
	static const uint64_t offs[] = { 0x40, 0x67, 0x86, 0x9a, 0xcc };
	struct jitdump_record rec;
	struct jitdump_reader *r;
	struct cap c;
	struct jb b;
	size_t at, i;

	cap_init(&c);
	jb_init(&b, 0, 77, 0);
	at = jb_debug_begin(&b, 1, 0x7f0000001000, 5);
	for (i = 0; i < 5; i++)
		jb_entry_node20(&b, 0x7f0000001000 + offs[i], lines[i], path);
	jb_end(&b, at);
	jb_load(&b, 2, 77, 0x7f0000001000, 0x100, 1, "JS:*fib /home/user/project/src/fibonacci.js:3:19");
	r = jitdump_reader_open_mem(b.p, b.len, "node20.dump", NULL, &c.d);
	ck_assert(r != NULL);
	ck_assert_int_eq(jitdump_reader_next(r, &rec), 1);
	ck_assert_uint_eq(rec.id, JITDUMP_CODE_DEBUG_INFO);
	ck_assert_uint_eq(rec.u.debug.nentries, 5);
	ck_assert_uint_gt(rec.u.debug.nrejected, 0);
	ck_assert_uint_eq(rec.u.debug.nbad_files, 5);
	for (i = 0; i < 5; i++) {
		ck_assert_uint_eq(rec.u.debug.entries[i].addr, 0x7f0000001000 + offs[i]);
		ck_assert_uint_eq(rec.u.debug.entries[i].line, lines[i]);
		ck_assert_uint_eq(rec.u.debug.entries[i].discrim, 7);
		ck_assert_int_eq(rec.u.debug.entries[i].file_valid, 0);
	}
	ck_assert_int_eq(jitdump_reader_next(r, &rec), 1);
	ck_assert_uint_eq(rec.id, JITDUMP_CODE_LOAD);
	ck_assert_int_eq(jitdump_reader_next(r, &rec), 0);
	ck_assert_uint_eq(jitdump_reader_stats(r)->debug_bad_files, 5);
	jitdump_reader_close(r);
	free(b.p);
	cap_release(&c);
}
END_TEST

/* Garbage between entries (a producer bug) is skipped; no entry is invented from it. */
START_TEST(test_resync_after_garbage)
{
	static const uint8_t junk[] = { 0xde, 0xad, 0xbe, 0xef, 0x01, 0x02, 0x03 };
	struct jitdump_record rec;
	struct jitdump_reader *r;
	struct cap c;
	struct jb b;
	size_t at;

	cap_init(&c);
	jb_init(&b, 1, 5, 0);
	at = jb_debug_begin(&b, 1, 0x5000, 3);
	jb_entry(&b, 0x5040, 1, "a.c");
	jb_bytes(&b, junk, sizeof(junk));
	jb_entry(&b, 0x5050, 2, "a.c");
	jb_entry(&b, 0x5060, 3, "a.c");
	jb_u64(&b, 0); /* padding */
	jb_end(&b, at);
	jb_load(&b, 2, 5, 0x5000, 0x40, 1, "f");
	r = jitdump_reader_open_mem(b.p, b.len, "junk.dump", NULL, &c.d);
	ck_assert(r != NULL);
	ck_assert_int_eq(jitdump_reader_next(r, &rec), 1);
	ck_assert_uint_eq(rec.u.debug.nentries, 3);
	ck_assert_uint_eq(rec.u.debug.nrejected, 1);
	ck_assert_uint_eq(rec.u.debug.entries[1].addr, 0x5050);
	ck_assert_uint_eq(rec.u.debug.entries[1].line, 2);
	ck_assert_uint_eq(rec.u.debug.entries[2].line, 3);
	ck_assert_str_eq(rec.u.debug.entries[2].file, "a.c");
	jitdump_reader_close(r);
	free(b.p);
	cap_release(&c);
}
END_TEST

/* The runtime was killed while writing: the last record is cut off. */
START_TEST(test_truncated_last_record)
{
	struct jitdump_record rec;
	struct jitdump_reader *r;
	struct cap c;
	struct jb b;
	size_t cut;
	int n = 0;

	cap_init(&c);
	jb_init(&b, 0, 9, 0);
	jb_load(&b, 1, 9, 0x1000, 16, 1, "first");
	jb_load(&b, 2, 9, 0x2000, 16, 2, "second");
	cut = b.len;
	jb_load(&b, 3, 9, 0x3000, 64, 3, "third");
	r = jitdump_reader_open_mem(b.p, cut + 40, "cut.dump", NULL, &c.d);
	ck_assert(r != NULL);
	while (jitdump_reader_next(r, &rec) == 1) {
		ck_assert_uint_eq(rec.id, JITDUMP_CODE_LOAD);
		n++;
	}
	ck_assert_int_eq(n, 2);
	ck_assert_str_eq(rec.u.load.name, "second");
	ck_assert_uint_eq(jitdump_reader_stats(r)->truncated_bytes, 40);
	ck_assert_uint_eq(c.d.nwarnings, 1);
	ck_assert_uint_eq(c.d.nerrors, 0);
	ck_assert_ptr_nonnull(strstr(cap_text(&c), "cut.dump: offset 0x"));
	ck_assert_ptr_nonnull(strstr(c.text, "JIT_CODE_LOAD: record of"));
	ck_assert_ptr_nonnull(strstr(c.text, "cut short"));
	jitdump_reader_close(r);

	/* cut inside the next record's prefix */
	cap_release(&c);
	cap_init(&c);
	r = jitdump_reader_open_mem(b.p, cut + 7, "cut.dump", NULL, &c.d);
	n = 0;
	while (jitdump_reader_next(r, &rec) == 1)
		n++;
	ck_assert_int_eq(n, 2);
	ck_assert_ptr_nonnull(strstr(cap_text(&c), "inside a record prefix: 7 bytes"));
	jitdump_reader_close(r);
	free(b.p);
	cap_release(&c);
}
END_TEST

/*
 * A dump cut inside the code bytes of its last CODE_LOAD (.NET's, the runtime killed
 * while writing): read whole, the load is returned from its fixed part and name, code
 * NULL, said; read live, the stream ends before it without a word and a read that goes
 * on there gets it whole. Cut inside its name, or with a size that cannot hold its name
 * and code, it is not a load to keep.
 */
START_TEST(test_cut_inside_code)
{
	struct jitdump_open live = { .flags = JITDUMP_LIVE };
	struct jitdump_record rec;
	struct jitdump_reader *r;
	struct cap c;
	struct jb b;
	size_t third, at, cut;
	int n = 0;

	cap_init(&c);
	jb_init(&b, 0, 9, 0);
	jb_load(&b, 1, 9, 0x1000, 16, 1, "first");
	jb_load(&b, 2, 9, 0x2000, 16, 2, "second");
	/* its lines come before it: the entry past its end is refused only when its size
	 * is known */
	at = jb_debug_begin(&b, 3, 0x3000, 2);
	jb_entry(&b, 0x3040, 11, "/src/third.cs");
	jb_entry(&b, 0x3000 + 64 + 0x40 + 8, 12, "/src/third.cs");
	jb_end(&b, at);
	third = b.len;
	jb_load(&b, 4, 9, 0x3000, 64, 3, "third");
	cut = third + 56 + 6 + 10; /* 10 of its 64 code bytes */

	r = jitdump_reader_open_mem(b.p, cut, "cut.dump", NULL, &c.d);
	ck_assert(r != NULL);
	while (jitdump_reader_next(r, &rec) == 1) {
		n++;
		if (rec.id == JITDUMP_CODE_DEBUG_INFO) {
			ck_assert_uint_eq(rec.u.debug.nentries, 1);
			ck_assert_uint_eq(rec.u.debug.entries[0].line, 11);
		}
	}
	ck_assert_int_eq(n, 4);
	ck_assert_uint_eq(rec.id, JITDUMP_CODE_LOAD);
	ck_assert_str_eq(rec.u.load.name, "third");
	ck_assert_uint_eq(rec.u.load.code_addr, 0x3000);
	ck_assert_uint_eq(rec.u.load.code_size, 64);
	ck_assert_uint_eq(rec.u.load.code_index, 3);
	ck_assert_uint_eq(rec.timestamp, 4);
	ck_assert_ptr_null(rec.u.load.code);
	ck_assert_uint_eq(rec.offset, third);
	ck_assert_uint_eq(jitdump_reader_stats(r)->loads, 3);
	ck_assert_uint_eq(jitdump_reader_stats(r)->cut_loads, 1);
	ck_assert_uint_eq(jitdump_reader_stats(r)->truncated_bytes, 0);
	/* a later read goes on at the record, to read it whole */
	ck_assert_uint_eq(jitdump_reader_resume(r), third);
	ck_assert_int_eq(jitdump_reader_next(r, &rec), 0);
	ck_assert_uint_eq(c.d.nwarnings, 1);
	ck_assert_ptr_nonnull(strstr(cap_text(&c), "cut.dump: offset 0x"));
	ck_assert_ptr_nonnull(strstr(c.text, "JIT_CODE_LOAD: record of 126 bytes cut short at 72: "
					     "its code bytes are missing"));
	ck_assert_ptr_nonnull(strstr(c.text, "its function kept: third"));
	jitdump_reader_close(r);

	/* live: the cut load ends the stream silently, and is read whole later */
	cap_release(&c);
	cap_init(&c);
	n = 0;
	r = jitdump_reader_open_mem_at(b.p, cut, "cut.dump", &live, &c.d);
	while (jitdump_reader_next(r, &rec) == 1)
		n++;
	/* the DEBUG_INFO waits for its load too */
	ck_assert_int_eq(n, 2);
	ck_assert_uint_eq(jitdump_reader_stats(r)->cut_loads, 0);
	ck_assert_uint_eq(jitdump_reader_stats(r)->pending_bytes, cut - at);
	live.from = jitdump_reader_resume(r);
	ck_assert_uint_eq(live.from, at);
	ck_assert_uint_eq(c.d.nwarnings, 0);
	jitdump_reader_close(r);
	r = jitdump_reader_open_mem_at(b.p, b.len, "cut.dump", &live, &c.d);
	n = 0;
	while (jitdump_reader_next(r, &rec) == 1)
		n++;
	ck_assert_int_eq(n, 2);
	ck_assert_str_eq(rec.u.load.name, "third");
	ck_assert_ptr_nonnull(rec.u.load.code);
	ck_assert_uint_eq(jitdump_reader_stats(r)->cut_loads, 0);
	ck_assert_uint_eq(c.d.nwarnings, 0);
	jitdump_reader_close(r);

	/* cut inside its name: nothing to name it by */
	n = 0;
	r = jitdump_reader_open_mem(b.p, third + 56 + 3, "cut.dump", NULL, &c.d);
	while (jitdump_reader_next(r, &rec) == 1)
		n++;
	ck_assert_int_eq(n, 3);
	ck_assert_uint_eq(jitdump_reader_stats(r)->cut_loads, 0);
	ck_assert_uint_eq(jitdump_reader_stats(r)->truncated_bytes, 59);
	jitdump_reader_close(r);

	/* a size that cannot hold its name and its code: damage, not a cut */
	b.p[third + 40] = 200; /* code_size 200 in a record of 126 bytes */
	n = 0;
	r = jitdump_reader_open_mem(b.p, third + 56 + 6 + 10, "cut.dump", NULL, &c.d);
	while (jitdump_reader_next(r, &rec) == 1)
		n++;
	ck_assert_int_eq(n, 3);
	ck_assert_uint_eq(jitdump_reader_stats(r)->cut_loads, 0);
	jitdump_reader_close(r);
	free(b.p);
	cap_release(&c);
}
END_TEST

/* Records too short for their type are skipped by size; a size below the prefix ends. */
START_TEST(test_short_records)
{
	struct jitdump_record rec;
	struct jitdump_reader *r;
	struct cap c;
	struct jb b;
	size_t at;
	int n = 0;

	cap_init(&c);
	jb_init(&b, 0, 9, 0);
	at = jb_begin(&b, JITDUMP_CODE_MOVE, 1);
	jb_u64(&b, 1);
	jb_end(&b, at);
	at = jb_begin(&b, JITDUMP_CODE_LOAD, 1); /* name without its NUL */
	jb_u32(&b, 9);
	jb_u32(&b, 9);
	jb_u64(&b, 0);
	jb_u64(&b, 0x1000);
	jb_u64(&b, 0);
	jb_u64(&b, 0);
	jb_bytes(&b, "abc", 3);
	jb_end(&b, at);
	jb_load(&b, 2, 9, 0x1000, 0, 1, "ok");
	at = jb_begin(&b, JITDUMP_CODE_CLOSE, 3);
	jb_end(&b, at);
	jb_put32(&b, at + 4, 8); /* size below the prefix */
	jb_load(&b, 4, 9, 0x2000, 0, 2, "never");
	r = jitdump_reader_open_mem(b.p, b.len, "short.dump", NULL, &c.d);
	while (jitdump_reader_next(r, &rec) == 1) {
		ck_assert_str_eq(rec.u.load.name, "ok");
		n++;
	}
	ck_assert_int_eq(n, 1);
	ck_assert_uint_eq(jitdump_reader_stats(r)->skipped_bad, 2);
	cap_text(&c);
	ck_assert_ptr_nonnull(strstr(c.text, "JIT_CODE_MOVE: record size 24 below minimum 64"));
	ck_assert_ptr_nonnull(strstr(c.text, "function name not terminated"));
	ck_assert_ptr_nonnull(strstr(c.text, "below the 16-byte prefix"));
	jitdump_reader_close(r);
	free(b.p);
	cap_release(&c);
}
END_TEST

START_TEST(test_bad_headers)
{
	struct cap c;
	struct jb b;

	cap_init(&c);
	jb_init(&b, 0, 1, 0);
	ck_assert_ptr_null(jitdump_reader_open_mem(b.p, 39, "h.dump", NULL, &c.d));
	ck_assert_ptr_nonnull(strstr(c.d.last_error, "header cut short: 39 bytes"));
	jb_put32(&b, 0, 0x12345678);
	ck_assert_ptr_null(jitdump_reader_open_mem(b.p, b.len, "h.dump", NULL, &c.d));
	ck_assert_ptr_nonnull(strstr(c.d.last_error, "not a jitdump"));
	jb_put32(&b, 0, 0x4A695444);
	jb_put32(&b, 4, 2);
	ck_assert_ptr_null(jitdump_reader_open_mem(b.p, b.len, "h.dump", NULL, &c.d));
	ck_assert_ptr_nonnull(strstr(c.d.last_error, "unsupported jitdump version 2"));
	jb_put32(&b, 4, 1);
	jb_put32(&b, 8, 400);
	ck_assert_ptr_null(jitdump_reader_open_mem(b.p, b.len, "h.dump", NULL, &c.d));
	ck_assert_ptr_nonnull(strstr(c.d.last_error, "header size 400"));
	ck_assert_ptr_null(jitdump_reader_open(top_path("testdata/jit/no-such.dump"), NULL, &c.d));
	ck_assert_ptr_nonnull(strstr(c.d.last_error, "cannot open"));
	free(b.p);
	cap_release(&c);
}
END_TEST

/* A longer header (a future producer's extra fields) is skipped by its size. */
START_TEST(test_long_header)
{
	struct jitdump_record rec;
	struct jitdump_reader *r;
	struct cap c;
	struct jb b;

	cap_init(&c);
	jb_init(&b, 1, 3, 0);
	jb_u64(&b, 0xffffffffffffffffULL);
	jb_put32(&b, 8, 48);
	jb_load(&b, 5, 3, 0x1000, 4, 1, "f");
	r = jitdump_reader_open_mem(b.p, b.len, "long.dump", NULL, &c.d);
	ck_assert(r != NULL);
	ck_assert_int_eq(jitdump_reader_next(r, &rec), 1);
	ck_assert_str_eq(rec.u.load.name, "f");
	jitdump_reader_close(r);
	free(b.p);
	cap_release(&c);
}
END_TEST

/* ARCH_TIMESTAMP: times are TSC values, converted as perf's tsc_to_perf_time does. */
START_TEST(test_arch_timestamp)
{
	struct jitdump_time_conv tc = { .time_shift = 31, .time_mult = 1431655765,
					.time_zero = 1000000 };
	struct jitdump_record rec;
	struct jitdump_reader *r;
	struct cap c;
	struct jb b;
	uint64_t tsc = 3000000000ULL, want;

	/* 1.5 GHz TSC: mult/2^31 = 2/3 ns per cycle */
	want = tc.time_zero + (tsc >> 31) * tc.time_mult +
	       (((tsc & ((1ULL << 31) - 1)) * tc.time_mult) >> 31);
	ck_assert_uint_eq(jitdump_tsc_to_perf_time(tsc, &tc), want);
	ck_assert_uint_lt(1000000 + 2000000000ULL - want, 2); /* rounded down */

	cap_init(&c);
	jb_init(&b, 0, 3, JITDUMP_FLAG_ARCH_TIMESTAMP);
	jb_load(&b, tsc, 3, 0x1000, 4, 1, "f");
	r = jitdump_reader_open_mem(b.p, b.len, "tsc.dump", &tc, &c.d);
	ck_assert_int_eq(jitdump_reader_header(r)->arch_timestamp, 1);
	ck_assert_int_eq(jitdump_reader_header(r)->times_converted, 1);
	ck_assert_int_eq(jitdump_reader_next(r, &rec), 1);
	ck_assert_uint_eq(rec.raw_timestamp, tsc);
	ck_assert_uint_eq(rec.timestamp, want);
	jitdump_reader_close(r);

	/* no conversion given: raw times, and the header says so */
	r = jitdump_reader_open_mem(b.p, b.len, "tsc.dump", NULL, &c.d);
	ck_assert_int_eq(jitdump_reader_header(r)->times_converted, 0);
	ck_assert_int_eq(jitdump_reader_next(r, &rec), 1);
	ck_assert_uint_eq(rec.timestamp, tsc);
	jitdump_reader_close(r);

	/* cap_user_time_short: the counter wraps at time_mask */
	tc.cap_user_time_short = 1;
	tc.time_cycles = 0x100000000ULL;
	tc.time_mask = 0xffffffffULL;
	ck_assert_uint_eq(jitdump_tsc_to_perf_time(0x100000010ULL, &tc),
			  jitdump_tsc_to_perf_time(0x200000010ULL, &tc));
	free(b.p);
	cap_release(&c);
}
END_TEST

/* ---- the real dumps ---- */

struct real_load {
	uint64_t addr, size, time;
	size_t nentries, nbad;
	uint32_t lines[64];
	int64_t offs[64];
	char file[256];
};

/* The last load named `name`, with its DEBUG_INFO. Returns the number of such loads. */
static int find_load(const uint8_t *buf, size_t len, const char *name, struct real_load *out,
		     const struct jitdump_stats **stats_out, struct jitdump_stats *stats)
{
	struct jitdump_record rec;
	struct jitdump_reader *r;
	struct jitdump_debug dbg;
	struct real_load pend;
	int have = 0, n = 0;
	struct diag d;

	diag_init(&d);
	r = jitdump_reader_open_mem(buf, len, "real.dump", NULL, &d);
	ck_assert(r != NULL);
	memset(&pend, 0, sizeof(pend));
	while (jitdump_reader_next(r, &rec) == 1) {
		if (rec.id == JITDUMP_CODE_DEBUG_INFO) {
			size_t i;

			dbg = rec.u.debug;
			memset(&pend, 0, sizeof(pend));
			pend.nentries = dbg.nentries;
			pend.nbad = dbg.nbad_files;
			for (i = 0; i < dbg.nentries && i < 64; i++) {
				pend.lines[i] = dbg.entries[i].line;
				pend.offs[i] = (int64_t)(dbg.entries[i].addr - dbg.code_addr);
			}
			if (dbg.nentries && dbg.entries[0].file_valid)
				snprintf(pend.file, sizeof(pend.file), "%s", dbg.entries[0].file);
			have = 1;
		} else if (rec.id == JITDUMP_CODE_LOAD) {
			if (!strcmp(rec.u.load.name, name)) {
				if (!have || dbg.code_addr != rec.u.load.code_addr)
					memset(&pend, 0, sizeof(pend));
				*out = pend;
				out->addr = rec.u.load.code_addr;
				out->size = rec.u.load.code_size;
				out->time = rec.timestamp;
				n++;
			}
			have = 0;
		}
	}
	*stats = *jitdump_reader_stats(r);
	*stats_out = stats;
	ck_assert_uint_eq(d.nwarnings, 0);
	jitdump_reader_close(r);
	return n;
}

/* Node.js 20: the hot function's entries are all found, every file name is damaged. */
START_TEST(test_real_node)
{
	struct jitdump_stats st;
	const struct jitdump_stats *s;
	struct real_load l;
	size_t len, i;
	uint8_t *buf = slurp_gz(top_path("testdata/jit/jit-30720.dump"), &len);

	ck_assert_int_eq(find_load(buf, len,
				   "JS:*fibonacci /tmp/perfconv-rec-jit/js/fibonacci-bench.js:3:19",
				   &l, &s, &st), 1);
	ck_assert_uint_eq(l.size, 364);
	ck_assert_uint_eq(l.nentries, 10);
	ck_assert_uint_eq(l.nbad, 10);   /* freed memory in every file name */
	ck_assert_int_eq(l.offs[0], 0x40); /* V8 adds 0x40 */
	for (i = 0; i < l.nentries; i++) {
		/* fibonacci's body: lines 3 to 8 of src/fibonacci-bench.js */
		ck_assert_uint_ge(l.lines[i], 3);
		ck_assert_uint_le(l.lines[i], 8);
		ck_assert_int_ge(l.offs[i], 0x40);
		ck_assert_int_le(l.offs[i], 0x40 + 364);
	}
	ck_assert_uint_eq(s->loads, 2201);
	ck_assert_uint_eq(s->unwinding_infos, 2201);
	ck_assert_uint_eq(s->debug_infos, 19);
	free(buf);
}
END_TEST

/* LLVM MCJIT: vma 0, entries from code_addr + 0x40, line-0 entries in between. */
START_TEST(test_real_lli)
{
	struct jitdump_stats st;
	const struct jitdump_stats *s;
	struct real_load l;
	size_t len, i;
	uint8_t *buf = slurp_gz(top_path("testdata/jit/jit-30749.dump"), &len);
	int zero = 0;

	ck_assert_int_eq(find_load(buf, len, "collatz_steps", &l, &s, &st), 1);
	ck_assert_uint_eq(l.size, 45);
	ck_assert_uint_eq(l.nentries, 11);
	ck_assert_uint_eq(l.nbad, 0);
	ck_assert_int_eq(l.offs[0], 0x40);
	ck_assert_str_eq(l.file, "/tmp/perfconv-rec-jit/c/hotloop.c");
	for (i = 0; i < l.nentries; i++) {
		if (!l.lines[i]) {
			zero++;
			continue;
		}
		/* collatz_steps: lines 6 to 17 of src/hotloop.c */
		ck_assert_uint_ge(l.lines[i], 6);
		ck_assert_uint_le(l.lines[i], 17);
	}
	ck_assert_int_eq(zero, 1);
	ck_assert_uint_eq(s->loads, 2);
	ck_assert_uint_eq(s->debug_infos, 2);
	free(buf);
}
END_TEST

/* BEAM: about 15,000 loads; entries start in the prologue, end with a line-0 entry. */
START_TEST(test_real_erlang)
{
	struct jitdump_stats st;
	const struct jitdump_stats *s;
	struct real_load l;
	size_t len;
	uint8_t *buf = slurp_gz(top_path("testdata/jit/jit-30756.dump.gz"), &len);

	ck_assert_int_eq(find_load(buf, len, "hotfib:fib/1", &l, &s, &st), 1);
	ck_assert_uint_eq(l.nentries, 4);
	ck_assert_int_lt(l.offs[0], 0);     /* in the prologue */
	ck_assert_uint_eq(l.lines[0], 5);   /* fib(0) -> 0; */
	ck_assert_uint_eq(l.lines[1], 7);   /* fib(N) -> fib(N - 1) + fib(N - 2). */
	ck_assert_uint_eq(l.lines[3], 0);   /* the terminator */
	ck_assert_int_eq(l.offs[3], (int64_t)l.size);
	ck_assert_str_eq(l.file, "hotfib.erl");
	ck_assert_uint_eq(s->loads, 15813);
	ck_assert_uint_eq(s->debug_rejected, 0);
	free(buf);
}
END_TEST

static Suite *jitdump_suite(void)
{
	Suite *s = suite_create("jitdump");
	TCase *tc = tcase_create("jitdump");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_every_record_both_orders);
	tcase_add_test(tc, test_node20_damaged_names);
	tcase_add_test(tc, test_resync_after_garbage);
	tcase_add_test(tc, test_truncated_last_record);
	tcase_add_test(tc, test_cut_inside_code);
	tcase_add_test(tc, test_short_records);
	tcase_add_test(tc, test_bad_headers);
	tcase_add_test(tc, test_long_header);
	tcase_add_test(tc, test_arch_timestamp);
	tcase_add_test(tc, test_real_node);
	tcase_add_test(tc, test_real_lli);
	tcase_add_test(tc, test_real_erlang);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	int failed = run_suite(jitdump_suite());

	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
