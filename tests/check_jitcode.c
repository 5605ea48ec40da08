/* check_jitcode: unit tests of the time-indexed JIT code table: attribution over time
 * (reused addresses, moves, last-load-wins), lines (the +0x40 offset, BEAM prologues,
 * damaged file names), perf maps, and the real recordings against perf's own counts. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include "common/mapfile.h"

#include "symbolize/jit/jitcode.h"
#include "formats/read/perfdata.h"
#include "tests/jitdump_build.h"
#include "tests/testutil.h"

struct fixture {
	struct strtab st;
	struct jitcode *jc;
	struct diag d;
};

static void fx_init(struct fixture *fx)
{
	strtab_init(&fx->st);
	fx->jc = jitcode_new(1);
	diag_init(&fx->d);
	fx->d.quiet = 1;
}

static void fx_release(struct fixture *fx)
{
	jitcode_free(fx->jc);
	strtab_release(&fx->st);
}

/* The name at (time, addr), or "-" for none. */
static const char *name_at(const struct jitcode *jc, uint64_t time, uint64_t addr)
{
	struct jitcode_frame f;

	return jitcode_lookup(jc, time, addr, &f) ? f.name : "-";
}

/* Feed a synthetic dump through the reader. */
static void add_dump(struct fixture *fx, struct jb *b)
{
	struct jitdump_reader *r = jitdump_reader_open_mem(b->p, b->len, "t.dump", NULL, &fx->d);

	ck_assert(r != NULL);
	jitcode_add_dump(fx->jc, r, 100);
	jitdump_reader_close(r);
}

/* UNWINDING_INFO goes to the load after it; an empty one (V8's header alone, mapped
 * size 0) and one no load claims are not kept. Through the API, then found by code. */
START_TEST(test_unwind_info)
{
	struct fixture fx;
	struct jitcode_frame f;
	const uint8_t *data;
	size_t size, hdr;
	static const uint8_t info[40] = { 1, 2, 3, 4, [39] = 0x39 };

	fx_init(&fx);
	jitcode_add_unwind(fx.jc, info, 40, 20);
	jitcode_add_load(fx.jc, 1000, 0x7000, 0x100, "with_cfi");
	jitcode_add_load(fx.jc, 1000, 0x8000, 0x100, "without");
	jitcode_add_unwind(fx.jc, info, 20, 20);  /* a header alone: no table */
	jitcode_add_load(fx.jc, 1000, 0x9000, 0x100, "header_only");
	jitcode_add_unwind(fx.jc, info + 1, 30, 20); /* replaced before any load */
	jitcode_add_unwind(fx.jc, info, 32, 20);
	jitcode_add_load(fx.jc, 1000, 0xa000, 0x100, "second");
	jitcode_finish(fx.jc);
	ck_assert(jitcode_lookup(fx.jc, 2000, 0x7010, &f));
	ck_assert(jitcode_unwind_info(fx.jc, f.code, &data, &size, &hdr));
	ck_assert_uint_eq(size, 40);
	ck_assert_uint_eq(hdr, 20);
	ck_assert_int_eq(memcmp(data, info, 40), 0);
	ck_assert(jitcode_lookup(fx.jc, 2000, 0x8010, &f));
	ck_assert(!jitcode_unwind_info(fx.jc, f.code, &data, &size, &hdr));
	ck_assert(jitcode_lookup(fx.jc, 2000, 0x9010, &f));
	ck_assert(!jitcode_unwind_info(fx.jc, f.code, &data, &size, &hdr));
	ck_assert(jitcode_lookup(fx.jc, 2000, 0xa010, &f));
	ck_assert(jitcode_unwind_info(fx.jc, f.code, &data, &size, &hdr));
	ck_assert_uint_eq(size, 32);
	ck_assert_int_eq(memcmp(data, info, 32), 0);
	ck_assert_uint_eq(jitcode_stats(fx.jc)->unwind_infos, 3);
	fx_release(&fx);
}
END_TEST

/* Acceptance 4: two functions loaded at the same address at different times. */
START_TEST(test_same_address_over_time)
{
	struct fixture fx;
	struct jb b;

	fx_init(&fx);
	jb_init(&b, 0, 100, 0);
	jb_load(&b, 1000, 100, 0x7000, 0x100, 1, "first");
	jb_load(&b, 2000, 100, 0x7000, 0x100, 2, "second");
	add_dump(&fx, &b);
	jitcode_finish(fx.jc);
	ck_assert_str_eq(name_at(fx.jc, 999, 0x7010), "-");      /* before any load */
	ck_assert_str_eq(name_at(fx.jc, 1000, 0x7010), "first");
	ck_assert_str_eq(name_at(fx.jc, 1999, 0x70ff), "first");
	ck_assert_str_eq(name_at(fx.jc, 2000, 0x7010), "second");
	ck_assert_str_eq(name_at(fx.jc, 900000, 0x7000), "second");
	ck_assert_str_eq(name_at(fx.jc, 1500, 0x7100), "-");     /* past the end */
	free(b.p);
	fx_release(&fx);
}
END_TEST

/* Issue 22, item 11: why no code answers an address at a time. HotSpot writes a
 * compiled method's load after the method has begun to run; code before the dump's
 * first load was made before the runtime began to write it; the rest names nothing. */
START_TEST(test_why_absent)
{
	struct fixture fx;

	fx_init(&fx);
	jitcode_add_load(fx.jc, 1000, 0x1000, 0x100, "stub");
	jitcode_add_load(fx.jc, 5000, 0x8000, 0x100, "LHot;fib(I)I");
	jitcode_add_load(fx.jc, 6000, 0x1000, 0x100, "over the stub");
	jitcode_finish(fx.jc);
	ck_assert_int_eq(jitcode_why_absent(fx.jc, 999, 0x8010), JITCODE_ABSENT_BEFORE_FIRST);
	ck_assert_int_eq(jitcode_why_absent(fx.jc, 4999, 0x8010), JITCODE_ABSENT_LOADED_LATER);
	ck_assert_int_eq(jitcode_why_absent(fx.jc, 4999, 0x80ff), JITCODE_ABSENT_LOADED_LATER);
	ck_assert_int_eq(jitcode_why_absent(fx.jc, 4999, 0x8100), JITCODE_ABSENT_NONE);
	ck_assert_int_eq(jitcode_why_absent(fx.jc, 7000, 0x9000), JITCODE_ABSENT_NONE);
	/* the stub's range is named all along from its load: nothing to explain there */
	ck_assert_str_eq(name_at(fx.jc, 5500, 0x1010), "stub");
	ck_assert_str_eq(name_at(fx.jc, 6000, 0x1010), "over the stub");
	ck_assert_int_eq(jitcode_why_absent(fx.jc, 500, 0x1010), JITCODE_ABSENT_BEFORE_FIRST);
	fx_release(&fx);

	/* without times nothing can be said of them */
	fx_init(&fx);
	jitcode_set_timeless(fx.jc);
	jitcode_add_load(fx.jc, 5000, 0x8000, 0x100, "late");
	jitcode_finish(fx.jc);
	ck_assert_int_eq(jitcode_why_absent(fx.jc, 10, 0x9000), JITCODE_ABSENT_NONE);
	fx_release(&fx);
}
END_TEST

/* Issue 12 B1: 70,000 loads of 2^63 bytes each, every one at a higher address than the
 * last: the ranges are clamped to user space, and the index stays near-linear (it was
 * quadratic, and its uint32 offsets overflowed into a heap overflow). */
START_TEST(test_huge_overlapping_loads)
{
	struct fixture fx;
	const uint32_t n = 70000;
	uint32_t i;
	char name[32];

	fx_init(&fx);
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "f%u", i);
		jitcode_add_load(fx.jc, 1000 + i, 0x10000 + 16 * (uint64_t)i, (uint64_t)1 << 63,
				 name);
	}
	jitcode_finish(fx.jc);
	/* each load ends the one before it: at time 1000 + i only f<i> is there */
	ck_assert_str_eq(name_at(fx.jc, 1000, 0x10000), "f0");
	ck_assert_str_eq(name_at(fx.jc, 1000 + 500, 0x7000000000), "f500");
	ck_assert_str_eq(name_at(fx.jc, 1000 + 500, 0x10000), "-"); /* below f500 */
	ck_assert_str_eq(name_at(fx.jc, 1000 + n - 1, 0x7fffffff0000), "f69999");
	/* past what a process can map (47 bits) */
	ck_assert_str_eq(name_at(fx.jc, 1000 + n - 1, (uint64_t)1 << 47), "-");
	fx_release(&fx);
}
END_TEST

/* Acceptance 4: code that MOVEs; samples before and after resolve right. */
START_TEST(test_move)
{
	struct jitcode_frame f;
	struct fixture fx;
	struct jb b;
	size_t at;

	fx_init(&fx);
	jb_init(&b, 1, 100, 0);
	at = jb_debug_begin(&b, 1000, 0x7000, 2);
	jb_entry(&b, 0x7040, 10, "/m.js");
	jb_entry(&b, 0x7050, 11, "/m.js");
	jb_end(&b, at);
	jb_load(&b, 1000, 100, 0x7000, 0x40, 1, "mover");
	jb_load(&b, 1500, 100, 0x9000, 0x40, 2, "other");
	jb_move(&b, 2000, 100, 0x7000, 0x8000, 0x40, 1);
	add_dump(&fx, &b);
	jitcode_finish(fx.jc);
	ck_assert_str_eq(name_at(fx.jc, 1999, 0x7020), "mover");
	ck_assert_str_eq(name_at(fx.jc, 1999, 0x8020), "-");
	ck_assert_str_eq(name_at(fx.jc, 2000, 0x7020), "-");
	ck_assert_str_eq(name_at(fx.jc, 2000, 0x8020), "mover");
	ck_assert_str_eq(name_at(fx.jc, 3000, 0x9020), "other");
	/* the moved code keeps its lines */
	ck_assert_int_eq(jitcode_lookup(fx.jc, 2500, 0x8012, &f), 1);
	ck_assert_uint_eq(f.line, 11);
	ck_assert_str_eq(f.file, "/m.js");
	ck_assert_uint_eq(f.start, 0x8000);
	ck_assert_uint_eq(jitcode_stats(fx.jc)->moves_unmatched, 0);
	free(b.p);
	fx_release(&fx);
}
END_TEST

/* Code loaded over part of an older function ends all of it. */
START_TEST(test_partial_overlap)
{
	struct fixture fx;

	fx_init(&fx);
	jitcode_add_load(fx.jc, 10, 0x1000, 0x100, "old");
	jitcode_add_load(fx.jc, 20, 0x1080, 0x100, "new");
	jitcode_add_load(fx.jc, 20, 0x2000, 0x10, "same time a");
	jitcode_add_load(fx.jc, 20, 0x2000, 0x10, "same time b");
	jitcode_finish(fx.jc);
	ck_assert_str_eq(name_at(fx.jc, 15, 0x1010), "old");
	ck_assert_str_eq(name_at(fx.jc, 15, 0x10a0), "old");
	ck_assert_str_eq(name_at(fx.jc, 25, 0x1010), "-");
	ck_assert_str_eq(name_at(fx.jc, 25, 0x10a0), "new");
	ck_assert_str_eq(name_at(fx.jc, 25, 0x1170), "new");
	ck_assert_str_eq(name_at(fx.jc, 25, 0x2000), "same time b"); /* file order */
	fx_release(&fx);
}
END_TEST

/*
 * Loads and moves at random over a small address range, against a plain model of
 * the attribution rule: replayed in (time, file order), each load or moved copy ends
 * every live code it overlaps; a query finds the code live at its time and address.
 */
struct model_code {
	uint64_t start, end, t0, t1;
	int name;
};

static uint64_t rng_next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

struct model_event {
	uint64_t time, addr, size, new_addr;
	int is_move, seq;
};

static int model_event_cmp(const void *a, const void *b)
{
	const struct model_event *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq - y->seq;
}

/* Code `c` goes live: the live codes it overlaps end. Code of size 0 does nothing. */
static void model_go_live(struct model_code *all, size_t *nall, int *live, size_t *nlive,
			  struct model_code c)
{
	size_t w = 0;

	if (c.end == c.start)
		return;

	for (size_t i = 0; i < *nlive; i++) {
		struct model_code *o = &all[live[i]];

		if (o->start < c.end && c.start < o->end)
			o->t1 = c.t0;
		else
			live[w++] = live[i];
	}
	*nlive = w;
	all[*nall] = c;
	live[(*nlive)++] = (int)(*nall)++;
}

START_TEST(test_random_against_model)
{
	enum { NEV = 300, NQ = 3000 };
	uint64_t rng = 0x9e3779b97f4a7c15ULL;
	static struct model_event ev[NEV];
	static struct model_code all[NEV];
	static int live[NEV];

	for (int round = 0; round < 40; round++) {
		struct fixture fx;
		size_t nall = 0, nlive = 0;
		char name[32];

		fx_init(&fx);
		for (int i = 0; i < NEV; i++) {
			struct model_event *e = &ev[i];

			e->seq = i;
			e->time = rng_next(&rng) % 1000;
			e->is_move = round % 2 && rng_next(&rng) % 8 == 0;
			e->addr = 0x1000 + rng_next(&rng) % 0x2000;
			e->size = rng_next(&rng) % 4 ? 1 + rng_next(&rng) % 0x200 : 0;
			e->new_addr = 0x1000 + rng_next(&rng) % 0x2000;
			if (e->is_move && i > 0 && rng_next(&rng) % 2) /* the start of earlier code */
				e->addr = ev[rng_next(&rng) % (uint64_t)i].addr;
			if (e->is_move) {
				jitcode_add_move(fx.jc, e->time, e->addr, e->new_addr, e->size);
			} else {
				snprintf(name, sizeof(name), "L%d", i);
				jitcode_add_load(fx.jc, e->time, e->addr, e->size, name);
			}
		}
		jitcode_finish(fx.jc);
		qsort(ev, NEV, sizeof(ev[0]), model_event_cmp);
		for (int i = 0; i < NEV; i++) {
			const struct model_event *e = &ev[i];
			struct model_code c = { e->addr, e->addr + e->size, e->time, UINT64_MAX,
						e->seq };

			if (e->is_move) {
				int at = -1;

				for (size_t k = 0; k < nlive; k++)
					if (all[live[k]].start == e->addr)
						at = (int)k;
				for (size_t k = 0; at < 0 && k < nlive; k++)
					if (all[live[k]].start < e->addr && e->addr < all[live[k]].end)
						at = (int)k;
				if (at < 0)
					continue;
				c = all[live[at]];
				all[live[at]].t1 = e->time;
				live[at] = live[--nlive];
				c.end = e->new_addr + (e->size ? e->size : c.end - c.start);
				c.start = e->new_addr;
				c.t0 = e->time;
				c.t1 = UINT64_MAX;
			}
			model_go_live(all, &nall, live, &nlive, c);
		}
		for (int q = 0; q < NQ; q++) {
			uint64_t t = rng_next(&rng) % 1100, a = 0xf00 + rng_next(&rng) % 0x2500;
			const char *want = "-";

			for (size_t k = 0; k < nall; k++)
				if (all[k].start <= a && a < all[k].end && all[k].t0 <= t &&
				    t < all[k].t1) {
					snprintf(name, sizeof(name), "L%d", all[k].name);
					want = name;
				}
			if (strcmp(name_at(fx.jc, t, a), want) != 0)
				ck_abort_msg("round %d: at time %llu, 0x%llx: %s, want %s", round,
					     (unsigned long long)t, (unsigned long long)a,
					     name_at(fx.jc, t, a), want);
		}
		fx_release(&fx);
	}
}
END_TEST

/* Loads written out of time order still resolve by time. */
START_TEST(test_out_of_order_times)
{
	struct fixture fx;

	fx_init(&fx);
	jitcode_add_load(fx.jc, 300, 0x1000, 0x10, "late");
	jitcode_add_load(fx.jc, 100, 0x1000, 0x10, "early");
	jitcode_finish(fx.jc);
	ck_assert_str_eq(name_at(fx.jc, 200, 0x1000), "early");
	ck_assert_str_eq(name_at(fx.jc, 300, 0x1000), "late");
	fx_release(&fx);
}
END_TEST

/* No comparable clock: the code loaded last over an address wins at any time. */
START_TEST(test_timeless)
{
	struct fixture fx;

	fx_init(&fx);
	jitcode_set_timeless(fx.jc);
	jitcode_add_load(fx.jc, 300, 0x1000, 0x10, "first in file");
	jitcode_add_load(fx.jc, 100, 0x1000, 0x10, "last in file");
	jitcode_add_load(fx.jc, 50, 0x3000, 0x10, "alone");
	jitcode_add_move(fx.jc, 10, 0x3000, 0x4000, 0);
	jitcode_finish(fx.jc);
	ck_assert_str_eq(name_at(fx.jc, 0, 0x1000), "last in file");
	ck_assert_str_eq(name_at(fx.jc, 1000, 0x1008), "last in file");
	ck_assert_str_eq(name_at(fx.jc, 0, 0x3000), "-");
	ck_assert_str_eq(name_at(fx.jc, 0, 0x400f), "alone");
	ck_assert_int_eq(jitcode_stats(fx.jc)->timeless, 1);
	fx_release(&fx);
}
END_TEST

/* V8 and LLVM: entry addresses carry +0x40; line 0 means none. */
START_TEST(test_lines_with_offset)
{
	struct jitcode_frame f;
	struct fixture fx;
	struct jb b;
	size_t at;

	fx_init(&fx);
	jb_init(&b, 0, 100, 0);
	at = jb_debug_begin(&b, 1, 0x5000, 5);
	jb_entry(&b, 0x5040, 6, "/src/hot.c");
	jb_entry_raw(&b, 0x5042, 9, 0, "\xff", 2);
	jb_entry(&b, 0x5048, 0, "/src/hot.c");
	jb_entry(&b, 0x5050, 10, "/src/hot.c");
	jb_entry(&b, 0x5080, 99, "/src/hot.c"); /* at the end: ignored */
	jb_end(&b, at);
	jb_load(&b, 2, 100, 0x5000, 0x40, 1, "hot");
	add_dump(&fx, &b);
	jitcode_finish(fx.jc);
	ck_assert_uint_eq(jitcode_stats(fx.jc)->line_offset, 0x40);
	ck_assert_int_eq(jitcode_lookup(fx.jc, 5, 0x5000, &f), 1);
	ck_assert_uint_eq(f.line, 6);
	ck_assert_str_eq(f.file, "/src/hot.c");
	ck_assert_int_eq(jitcode_lookup(fx.jc, 5, 0x5005, &f), 1);
	ck_assert_uint_eq(f.line, 9);
	ck_assert_int_eq(jitcode_lookup(fx.jc, 5, 0x5008, &f), 1);
	ck_assert_uint_eq(f.line, 0);          /* line 0: none */
	ck_assert_str_eq(f.file, "/src/hot.c"); /* the function's file all the same */
	ck_assert_int_eq(jitcode_lookup(fx.jc, 5, 0x503f, &f), 1);
	ck_assert_uint_eq(f.line, 10);
	ck_assert_uint_eq(jitcode_stats(fx.jc)->lines_outside, 1);
	free(b.p);
	fx_release(&fx);
}
END_TEST

/* BEAM: true addresses, the first entry in the prologue, a line-0 terminator. */
START_TEST(test_lines_beam)
{
	struct jitcode_frame f;
	struct fixture fx;
	struct jb b;
	size_t at;
	int i;

	fx_init(&fx);
	jb_init(&b, 0, 100, 0);
	for (i = 0; i < 3; i++) {
		uint64_t base = 0x10000 + (uint64_t)i * 0x1000;
		char name[32];

		jb_load(&b, 1, 100, base - 0x30, 0x30, 10 + (uint64_t)i, "m:f/1-CodeInfoPrologue");
		at = jb_debug_begin(&b, 1, base, 4);
		jb_entry(&b, base - 50, 5, "m.erl");
		jb_entry(&b, base + 0x35, 7, "m.erl");
		jb_entry(&b, base + 0xee, 9, "m.erl");
		jb_entry(&b, base + 0xf0, 0, "");
		jb_end(&b, at);
		snprintf(name, sizeof(name), "m:f%d/1", i);
		jb_load(&b, 1, 100, base, 0xf0, 20 + (uint64_t)i, name);
	}
	add_dump(&fx, &b);
	jitcode_finish(fx.jc);
	ck_assert_uint_eq(jitcode_stats(fx.jc)->line_offset, 0);
	ck_assert_uint_eq(jitcode_stats(fx.jc)->votes_plain, 3);
	ck_assert_uint_eq(jitcode_stats(fx.jc)->files_dropped, 0);
	ck_assert_int_eq(jitcode_lookup(fx.jc, 5, 0x11000, &f), 1);
	ck_assert_str_eq(f.name, "m:f1/1");
	ck_assert_uint_eq(f.line, 5); /* the prologue entry covers the start */
	ck_assert_str_eq(f.file, "m.erl");
	ck_assert_int_eq(jitcode_lookup(fx.jc, 5, 0x11034, &f), 1);
	ck_assert_uint_eq(f.line, 5);
	ck_assert_int_eq(jitcode_lookup(fx.jc, 5, 0x11035, &f), 1);
	ck_assert_uint_eq(f.line, 7);
	ck_assert_int_eq(jitcode_lookup(fx.jc, 5, 0x110ef, &f), 1);
	ck_assert_uint_eq(f.line, 9);
	ck_assert_int_eq(jitcode_lookup(fx.jc, 5, 0x10ff0, &f), 1);
	/* issue 12 C2: the prologue is its function's, named so */
	ck_assert_str_eq(f.name, "m:f/1");
	ck_assert_str_eq(f.raw_name, "m:f/1");
	ck_assert_uint_eq(f.line, 0);
	free(b.p);
	fx_release(&fx);
}
END_TEST

/* Node.js 20: file names from freed memory fall back to the file in the function's
 * name; no line is ever given with a damaged file. */
START_TEST(test_lines_node20_fallback)
{
	static const char *path = "/home/user/project/src/fibonacci.js";
	struct jitcode_frame f;
	struct fixture fx;
	struct jb b;
	size_t at;
	uint64_t a;

	fx_init(&fx);
	jb_init(&b, 0, 100, 0);
	at = jb_debug_begin(&b, 1, 0x6000, 3);
	jb_entry_node20(&b, 0x6040, 3, path);
	jb_entry_node20(&b, 0x6067, 4, path);
	jb_entry_node20(&b, 0x6086, 7, path);
	jb_end(&b, at);
	jb_load(&b, 2, 100, 0x6000, 0x100, 1, "JS:*fib /home/user/project/src/fibonacci.js:3:19");
	/* the name's file with only the first 16 bytes damaged, but printable */
	at = jb_debug_begin(&b, 3, 0x8000, 1);
	jb_entry(&b, 0x8040, 12, "XXXXXXXXXXXXXXXXct/src/fibonacci.js");
	jb_end(&b, at);
	jb_load(&b, 4, 100, 0x8000, 0x100, 2, "JS:^fib /home/user/project/src/fibonacci.js:3:19");
	/* a damaged file and no file in the name: the line goes, the file goes */
	at = jb_debug_begin(&b, 5, 0x9000, 1);
	jb_entry_node20(&b, 0x9040, 8, path);
	jb_end(&b, at);
	jb_load(&b, 6, 100, 0x9000, 0x100, 3, "JS:wasm-function[0]");
	add_dump(&fx, &b);
	jitcode_finish(fx.jc);
	for (a = 0x6000; a < 0x6100; a++) {
		ck_assert_int_eq(jitcode_lookup(fx.jc, 10, a, &f), 1);
		ck_assert_str_eq(f.file, path);
		ck_assert_uint_eq(f.line, a < 0x6027 ? 3 : a < 0x6046 ? 4 : 7);
	}
	ck_assert_int_eq(jitcode_lookup(fx.jc, 10, 0x8010, &f), 1);
	ck_assert_str_eq(f.file, path);
	ck_assert_uint_eq(f.line, 12);
	ck_assert_int_eq(jitcode_lookup(fx.jc, 10, 0x9010, &f), 1);
	ck_assert_str_eq(f.name, "JS:wasm-function[0]");
	ck_assert_ptr_null(f.file);
	ck_assert_uint_eq(f.line, 8);
	ck_assert_uint_eq(jitcode_stats(fx.jc)->files_replaced, 4);
	ck_assert_uint_eq(jitcode_stats(fx.jc)->files_dropped, 1);
	free(b.p);
	fx_release(&fx);
}
END_TEST

/* DEBUG_INFO for other code than the next load is not attached to it. */
START_TEST(test_debug_unmatched)
{
	struct jitcode_frame f;
	struct fixture fx;
	struct jitdump_debug_entry e = { 0x2040, 5, 0, "x.c", 1, 0 };

	fx_init(&fx);
	jitcode_add_debug(fx.jc, 0x2000, &e, 1);
	jitcode_add_load(fx.jc, 1, 0x3000, 0x10, "not it");
	jitcode_add_debug(fx.jc, 0x2000, &e, 1);
	jitcode_add_debug(fx.jc, 0x2000, &e, 1);
	jitcode_add_load(fx.jc, 1, 0x2000, 0x10, "it");
	jitcode_finish(fx.jc);
	ck_assert_int_eq(jitcode_lookup(fx.jc, 2, 0x3000, &f), 1);
	ck_assert_uint_eq(f.line, 0);
	ck_assert_int_eq(jitcode_lookup(fx.jc, 2, 0x2000, &f), 1);
	ck_assert_uint_eq(f.line, 5);
	ck_assert_uint_eq(jitcode_stats(fx.jc)->debug_unmatched, 2);
	ck_assert_uint_eq(jitcode_stats(fx.jc)->debug_infos, 1);
	fx_release(&fx);
}
END_TEST

/* Wasmtime writes mangled Rust and C++ names: shown demangled, kept raw. */
START_TEST(test_demangle)
{
	struct jitcode_frame f;
	struct fixture fx;

	fx_init(&fx);
	jitcode_add_load(fx.jc, 1, 0x1000, 0x10, "_ZN4core3ptr13drop_in_place17h0123456789abcdefE");
	jitcode_add_load(fx.jc, 1, 0x2000, 0x10, "_ZN2ns5Klass6methodEi");
	jitcode_add_load(fx.jc, 1, 0x3000, 0x10, "wasm[0]::function[3]::fib");
	jitcode_finish(fx.jc);
	ck_assert_int_eq(jitcode_lookup(fx.jc, 2, 0x1000, &f), 1);
	ck_assert_str_eq(f.name, "core::ptr::drop_in_place");
	ck_assert_str_eq(f.raw_name, "_ZN4core3ptr13drop_in_place17h0123456789abcdefE");
	ck_assert_int_eq(jitcode_lookup(fx.jc, 2, 0x2000, &f), 1);
	ck_assert_str_eq(f.name, "ns::Klass::method");
	ck_assert_int_eq(jitcode_lookup(fx.jc, 2, 0x3000, &f), 1);
	ck_assert_str_eq(f.name, "wasm[0]::function[3]::fib");
	fx_release(&fx);
}
END_TEST

/* Issue 34: Julia's loads and map lines show Julia's names, raw kept; not with
 * --no-demangle (a table made with demangle 0). */
START_TEST(test_julia_names)
{
	static const char map[] = "4000 10 japi1_top-level scope_8\n";
	struct perfmap_reader *r;
	struct jitcode_frame f;
	struct fixture fx;
	struct jitcode *raw = jitcode_new(0);

	fx_init(&fx);
	r = perfmap_reader_open_mem(map, sizeof(map) - 1, "t.map", &fx.d);
	ck_assert_uint_eq(jitcode_add_perfmap(fx.jc, r), 1);
	perfmap_reader_close(r);
	jitcode_add_load(fx.jc, 1, 0x1000, 0x10, "julia_fib_11");
	jitcode_add_load(fx.jc, 1, 0x2000, 0x10, "jfptr_fib_12");
	jitcode_add_load(fx.jc, 1, 0x3000, 0x10, "j_foo");
	jitcode_add_load(raw, 1, 0x1000, 0x10, "julia_fib_11");
	jitcode_finish(fx.jc);
	jitcode_finish(raw);
	ck_assert_int_eq(jitcode_lookup(fx.jc, 2, 0x1000, &f), 1);
	ck_assert_str_eq(f.name, "fib");
	ck_assert_str_eq(f.raw_name, "julia_fib_11");
	ck_assert_int_eq(jitcode_lookup(fx.jc, 2, 0x2000, &f), 1);
	ck_assert_str_eq(f.name, "fib [jfptr wrapper]");
	ck_assert_str_eq(f.raw_name, "jfptr_fib_12");
	ck_assert_int_eq(jitcode_lookup(fx.jc, 2, 0x3000, &f), 1);
	ck_assert_str_eq(f.name, "j_foo");
	ck_assert_int_eq(jitcode_lookup(fx.jc, 2, 0x4000, &f), 1);
	ck_assert_str_eq(f.name, "top-level scope");
	ck_assert_str_eq(f.raw_name, "japi1_top-level scope_8");
	ck_assert_int_eq(jitcode_lookup(raw, 2, 0x1000, &f), 1);
	ck_assert_str_eq(f.name, "julia_fib_11");
	jitcode_free(raw);
	fx_release(&fx);
}
END_TEST

/* Perf maps: no times, a later line over the same range wins; the dump goes first. */
START_TEST(test_perf_map)
{
	/* a later line wins where it overlaps an earlier: over the same range, and over
	 * the end of one (2000-2020 then 2010-2030: 2000-2010 stays the first's, as perf
	 * names it; .NET's maps have such lines) */
	static const char map[] = "1000 10 map old\n1000 10 map new\n5000 10 map only\n"
				  "2000 20 map first\n2010 20 map second\n";
	struct perfmap_reader *r;
	struct jitcode_frame f;
	struct fixture fx;

	fx_init(&fx);
	r = perfmap_reader_open_mem(map, sizeof(map) - 1, "t.map", &fx.d);
	ck_assert_uint_eq(jitcode_add_perfmap(fx.jc, r), 5);
	perfmap_reader_close(r);
	jitcode_add_load(fx.jc, 100, 0x5000, 0x10, "from dump");
	jitcode_finish(fx.jc);
	ck_assert_str_eq(name_at(fx.jc, 0, 0x1000), "map new");
	ck_assert_str_eq(name_at(fx.jc, 99, 0x5000), "map only");
	ck_assert_str_eq(name_at(fx.jc, 100, 0x5000), "from dump");
	ck_assert_str_eq(name_at(fx.jc, 0, 0x2000), "map first");
	ck_assert_str_eq(name_at(fx.jc, 0, 0x200f), "map first");
	ck_assert_str_eq(name_at(fx.jc, 0, 0x2010), "map second");
	ck_assert_str_eq(name_at(fx.jc, 0, 0x202f), "map second");
	ck_assert_int_eq(jitcode_lookup(fx.jc, 0, 0x100f, &f), 1);
	ck_assert_int_eq(f.from_map, 1);
	ck_assert_uint_eq(f.line, 0);
	fx_release(&fx);
}
END_TEST

/* Issue 42, finding 10: a map that restates its ranges for months (a line each time a
 * function is compiled again) makes a table of its live ranges, not of its history,
 * and every lookup gives what the whole map says: against a model of perf's rule (a
 * later line ends the lines that start inside it and cuts the one it starts inside),
 * at points along the way, lines over an earlier line's exact range, over parts of
 * others, and empty ones mixed. The load and the move before the map stay as they were
 * (a move at time 0 too). */
START_TEST(test_map_restated_against_model)
{
	enum { NLINES = 100000, SPACE = 0x4000, BASE = 0x10000, MAXLIVE = SPACE };
	static struct { uint64_t start, end; int name; } live[MAXLIVE];
	uint64_t rng = 0x2545f4914f6cdd1dULL;
	size_t nlive = 0;
	char name[32], want[32];
	struct fixture fx;

	fx_init(&fx);
	jitcode_add_load(fx.jc, 0, 0x1000, 0x10, "dumped");
	jitcode_add_move(fx.jc, 0, 0x1000, 0x2000, 0);
	for (int i = 0; i < NLINES; i++) {
		uint64_t s, size;

		if (nlive && rng_next(&rng) % 2) { /* an earlier line's range again */
			size_t k = rng_next(&rng) % nlive;

			s = live[k].start;
			size = live[k].end - live[k].start;
		} else {
			s = BASE + rng_next(&rng) % SPACE;
			size = rng_next(&rng) % 16 ? 1 + rng_next(&rng) % 0x100 : 0;
		}
		snprintf(name, sizeof(name), "M%d", i);
		jitcode_add_map_entry(fx.jc, s, size, name);
		if (size) {
			size_t w = 0;

			for (size_t k = 0; k < nlive; k++) {
				if (live[k].start >= s && live[k].start < s + size)
					continue;
				if (live[k].start < s && live[k].end > s)
					live[k].end = s;
				live[w++] = live[k];
			}
			ck_assert_uint_lt(w, MAXLIVE);
			live[w].start = s;
			live[w].end = s + size;
			live[w].name = i;
			nlive = w + 1;
		}
		if ((i + 1) % 25000)
			continue;
		jitcode_finish(fx.jc);
		for (uint64_t a = BASE - 0x10; a < BASE + SPACE + 0x110; a++) {
			strcpy(want, "-");
			for (size_t k = 0; k < nlive; k++)
				if (live[k].start <= a && a < live[k].end)
					snprintf(want, sizeof(want), "M%d", live[k].name);
			if (strcmp(name_at(fx.jc, 0, a), want) != 0)
				ck_abort_msg("after %d lines, at 0x%llx: %s, want %s", i + 1,
					     (unsigned long long)a, name_at(fx.jc, 0, a), want);
		}
	}
	ck_assert_str_eq(name_at(fx.jc, 5, 0x2008), "dumped");
	ck_assert_str_eq(name_at(fx.jc, 5, 0x1008), "-");
	ck_assert_uint_eq(jitcode_stats(fx.jc)->map_entries, NLINES);
	ck_assert_uint_eq(jitcode_stats(fx.jc)->loads, 1);
	/* the live ranges and a batch of lines at most: 100,000 lines held were 11 MB */
	ck_assert_msg(jitcode_bytes(fx.jc) < ((size_t)4 << 20), "%zu bytes for %zu live ranges",
		      jitcode_bytes(fx.jc), nlive);
	fx_release(&fx);
}
END_TEST

START_TEST(test_name_file)
{
	const char *f = NULL;

	ck_assert_uint_eq(jitcode_name_file("JS:*fib /a/fib.js:2:19", &f), 9);
	ck_assert(strncmp(f, "/a/fib.js", 9) == 0);
	ck_assert_uint_eq(jitcode_name_file("LazyCompile:~ /x y/z.js:1", &f), 6);
	ck_assert(strncmp(f, "y/z.js", 6) == 0);
	ck_assert_uint_eq(jitcode_name_file("JS:wasm_fib-0-turbofan", &f), 0);
	ck_assert_uint_eq(jitcode_name_file("collatz_steps", &f), 0);
	ck_assert_uint_eq(jitcode_name_file("Builtin: x", &f), 0);
	ck_assert_uint_eq(jitcode_name_file("JS:~ :1:2", &f), 0);
	ck_assert_uint_eq(jitcode_name_file("hotfib:fib/1", &f), 0);
}
END_TEST

/* ---- the real recordings, against perf inject --jit + perf report ---- */

/* perf's self sample count for `sym` in testdata/jit/expected/NAME.sym. */
static long perf_count(const char *name, const char *sym)
{
	char rel[256], line[4096], want[1100];
	FILE *f;
	long n = -1;

	snprintf(rel, sizeof(rel), "testdata/jit/expected/%s.sym", name);
	f = fopen(top_path(rel), "r");
	ck_assert_msg(f != NULL, "cannot open %s", rel);
	snprintf(want, sizeof(want), "[.] %s", sym);
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, want);
		double pct;
		long cnt;

		if (!p || strspn(p + strlen(want), " \n") != strlen(p + strlen(want)))
			continue;
		if (sscanf(line, " %lf%% %ld", &pct, &cnt) == 2)
			n = cnt;
	}
	fclose(f);
	ck_assert_msg(n >= 0, "%s not in %s", sym, rel);
	return n;
}

struct tally {
	long hot;              /* samples in the hot function */
	long lines[64];        /* of those, by line */
	long nofile, badfile;
	long jit;              /* samples in any JIT code */
};

/* Resolve every user sample of `pid` in a recording through the table. */
static void tally_samples(const char *data, uint32_t pid, const struct jitcode *jc,
			  const char *hot, const char *file, struct tally *t)
{
	struct perf_record rec;
	struct perf_reader *r;
	struct diag d;

	diag_init(&d);
	memset(t, 0, sizeof(*t));
	r = perf_reader_open(top_path(data), &d);
	ck_assert(r != NULL);
	while (perf_reader_next(r, &rec) == 1) {
		struct jitcode_frame f;

		if (rec.type != PERF_RECORD_SAMPLE || rec.sid.pid != pid)
			continue;
		if (!jitcode_lookup(jc, rec.sid.time, rec.u.sample.ip, &f))
			continue;
		t->jit++;
		if (strcmp(f.name, hot))
			continue;
		t->hot++;
		t->lines[f.line < 64 ? f.line : 63]++;
		if (!f.file)
			t->nofile++;
		else if (file && strcmp(f.file, file))
			t->badfile++;
	}
	perf_reader_close(r);
}

static struct jitcode *table_from(struct strtab *st, const char *dump, const char *map,
				  uint32_t pid)
{
	struct jitcode *jc = jitcode_new(1);
	struct diag d;

	diag_init(&d);
	if (dump) {
		size_t len;
		uint8_t *buf = slurp_gz(top_path(dump), &len);
		struct jitdump_reader *r = jitdump_reader_open_mem(buf, len, dump, NULL, &d);

		ck_assert(r != NULL);
		ck_assert_uint_eq(jitdump_reader_header(r)->pid, pid);
		jitcode_add_dump(jc, r, pid);
		jitdump_reader_close(r);
		free(buf);
	}
	if (map) {
		struct perfmap_reader *r = perfmap_reader_open(top_path(map), &d);

		ck_assert(r != NULL);
		jitcode_add_perfmap(jc, r);
		perfmap_reader_close(r);
	}
	jitcode_finish(jc);
	ck_assert_uint_eq(d.nerrors + d.nwarnings, 0);
	return jc;
}

/* node --perf-prof: JS:*fibonacci, its lines in the body (3-8), the file from the name. */
START_TEST(test_real_node)
{
	static const char *hot = "JS:*fibonacci /tmp/perfconv-rec-jit/js/fibonacci-bench.js:3:19";
	struct strtab st;
	struct tally t;
	struct jitcode *jc;
	long in_body = 0;
	int l;

	strtab_init(&st);
	jc = table_from(&st, "testdata/jit/jit-30720.dump", NULL, 30720);
	tally_samples("testdata/jit/node.data", 30720, jc, hot,
		      "/tmp/perfconv-rec-jit/js/fibonacci-bench.js", &t);
	ck_assert_int_eq(t.hot, perf_count("node", hot));
	ck_assert_int_eq(t.nofile + t.badfile, 0);
	for (l = 3; l <= 8; l++)
		in_body += t.lines[l];
	ck_assert_int_eq(in_body, t.hot); /* perf: 40% ??:0, the rest a garbage file name */
	ck_assert_int_gt(t.lines[7], t.hot / 4); /* return fibonacci(n - 1) + ... */
	ck_assert_uint_eq(jitcode_stats(jc)->line_offset, 0x40);
	ck_assert_uint_gt(jitcode_stats(jc)->files_replaced, 0);
	jitcode_free(jc);
	strtab_release(&st);
}
END_TEST

/* Acceptance 3: the runtime killed while writing a record: the dump ends inside it. A
 * warning, and samples in code loaded before the cut are still named. (The hot function
 * is the last record of the real dump: the cut-off record is the first 40 bytes of a
 * copy of it, appended.) */
START_TEST(test_real_node_cut)
{
	static const char *hot = "JS:*fibonacci /tmp/perfconv-rec-jit/js/fibonacci-bench.js:3:19";
	struct jitdump_record rec;
	struct jitdump_reader *r;
	struct strtab st;
	struct jitcode *jc;
	struct tally t;
	struct diag d;
	size_t len, at = 0;
	uint8_t *buf = slurp_gz(top_path("testdata/jit/jit-30720.dump"), &len);

	diag_init(&d);
	d.quiet = 1;
	r = jitdump_reader_open_mem(buf, len, "node.dump", NULL, &d);
	while (jitdump_reader_next(r, &rec) == 1)
		if (rec.id == JITDUMP_CODE_LOAD && !strcmp(rec.u.load.name, hot))
			at = rec.offset;
	jitdump_reader_close(r);
	ck_assert_uint_gt(at, 0);
	buf = realloc(buf, len + 40);
	memcpy(buf + len, buf + at, 40);

	strtab_init(&st);
	jc = jitcode_new(1);
	r = jitdump_reader_open_mem(buf, len + 40, "node.dump", NULL, &d);
	jitcode_add_dump(jc, r, 30720);
	ck_assert_uint_eq(jitdump_reader_stats(r)->truncated_bytes, 40);
	jitdump_reader_close(r);
	ck_assert_uint_eq(d.nwarnings, 1);
	jitcode_finish(jc);
	tally_samples("testdata/jit/node.data", 30720, jc, hot, NULL, &t);
	ck_assert_int_eq(t.hot, perf_count("node", hot));
	jitcode_free(jc);
	strtab_release(&st);
	free(buf);
}
END_TEST

/* node running WebAssembly: Liftoff, then TurboFan code for wasm_fib. */
START_TEST(test_real_node_wasm)
{
	static const char *hot = "JS:wasm_fib-0-turbofan";
	struct strtab st;
	struct tally t;
	struct jitcode *jc;

	strtab_init(&st);
	jc = table_from(&st, "testdata/jit/jit-30736.dump", NULL, 30736);
	tally_samples("testdata/jit/node-wasm.data", 30736, jc, hot, NULL, &t);
	ck_assert_int_eq(t.hot, perf_count("node-wasm", hot));
	jitcode_free(jc);
	strtab_release(&st);
}
END_TEST

/* lli-14 MCJIT: collatz_steps, its lines within its body (6-17) in hotloop.c. */
START_TEST(test_real_lli)
{
	struct strtab st;
	struct tally t;
	struct jitcode *jc;
	long in_body = 0;
	int l;

	strtab_init(&st);
	jc = table_from(&st, "testdata/jit/jit-30749.dump", NULL, 30749);
	tally_samples("testdata/jit/lli.data", 30749, jc, "collatz_steps",
		      "/tmp/perfconv-rec-jit/c/hotloop.c", &t);
	ck_assert_int_eq(t.hot, perf_count("lli", "collatz_steps"));
	ck_assert_int_eq(t.nofile + t.badfile, 0);
	for (l = 6; l <= 17; l++)
		in_body += t.lines[l];
	ck_assert_int_eq(in_body + t.lines[0], t.hot);
	ck_assert_int_gt(in_body, t.hot / 2); /* perf: all ??:0 */
	ck_assert_int_gt(t.lines[10], 0);     /* if (n % 2 == 0) */
	ck_assert_uint_eq(jitcode_stats(jc)->line_offset, 0x40);
	jitcode_free(jc);
	strtab_release(&st);
}
END_TEST

/* erl +JPperf true: hotfib:fib/1, the recursive clause on line 7. */
START_TEST(test_real_erlang)
{
	struct strtab st;
	struct tally t;
	long pro;
	struct jitcode *jc;

	strtab_init(&st);
	jc = table_from(&st, "testdata/jit/jit-30756.dump.gz", "testdata/jit/perf-30756.map",
			30756);
	tally_samples("testdata/jit/erlang.data", 30756, jc, "hotfib:fib/1", "hotfib.erl", &t);
	/* its prologue's samples are its own (perf names them apart, without a line) */
	pro = perf_count("erlang", "hotfib:fib/1-CodeInfoPrologue");
	ck_assert_int_eq(t.hot, perf_count("erlang", "hotfib:fib/1") + pro);
	ck_assert_int_eq(t.nofile + t.badfile, 0); /* the prologue has its function's file */
	ck_assert_int_le(t.lines[0], pro);
	/* fib(0) -> 0; (line 5: the clause heads) and fib(N) -> ... (line 7) */
	ck_assert_int_eq(t.lines[0] + t.lines[5] + t.lines[7] + t.lines[9], t.hot);
	ck_assert_int_gt(t.lines[7], t.hot / 2);
	ck_assert_uint_eq(jitcode_stats(jc)->line_offset, 0);
	ck_assert_uint_eq(jitcode_stats(jc)->loads, 15813);
	jitcode_free(jc);
	strtab_release(&st);
}
END_TEST

/* node --perf-basic-prof: a perf map only. */
START_TEST(test_real_node_map)
{
	static const char *hot = "JS:*fibonacci /tmp/perfconv-rec-jit/js/fibonacci-bench.js:3:19";
	struct strtab st;
	struct tally t;
	struct jitcode *jc;

	strtab_init(&st);
	jc = table_from(&st, NULL, "testdata/jit/perf-30787.map", 30787);
	tally_samples("testdata/jit/node-map.data", 30787, jc, hot, NULL, &t);
	ck_assert_int_eq(t.hot, perf_count("node-map", hot));
	ck_assert_int_eq(t.lines[0], t.hot);
	jitcode_free(jc);
	strtab_release(&st);
}
END_TEST

/* Issue 12 B3: one DEBUG_INFO of 300,000 entries in descending address order (an
 * insertion sort took 32 s), and one of 300,000 "same file" entries after a file name
 * of 1 MB (each compared again: 91 s). Both well under the case's 5 s. */
START_TEST(test_debug_info_large)
{
	struct jitcode_frame f;
	struct fixture fx;
	struct jb b;
	const uint32_t n = 300000;
	const uint64_t base = 0x100000;
	size_t at, flen = (size_t)1 << 20;
	char *longname = malloc(flen + 1);
	uint32_t i;

	memset(longname, 'a', flen);
	memcpy(longname, "/src/", 5);
	memcpy(longname + flen - 3, ".js", 4);
	fx_init(&fx);
	jb_init(&b, 0, 100, 0);
	at = jb_debug_begin(&b, 1, base, n);
	for (i = 0; i < n; i++)
		jb_entry(&b, base + 4 * (uint64_t)(n - 1 - i), n - i, "d.js");
	jb_end(&b, at);
	jb_load(&b, 2, 100, base, 4 * (uint64_t)n, 1, "desc");
	at = jb_debug_begin(&b, 3, base + 0x1000000, n + 1);
	jb_entry(&b, base + 0x1000000, 1, longname);
	for (i = 1; i <= n; i++)
		jb_entry_raw(&b, base + 0x1000000 + 4 * (uint64_t)i, i + 1, 0, "\xff", 2);
	jb_end(&b, at);
	jb_load(&b, 4, 100, base + 0x1000000, 4 * (uint64_t)(n + 1), 2, "same");
	add_dump(&fx, &b);
	jitcode_finish(fx.jc);
	ck_assert_int_eq(jitcode_lookup(fx.jc, 5, base + 4 * 1000 + 2, &f), 1);
	ck_assert_str_eq(f.name, "desc");
	ck_assert_uint_eq(f.line, 1001);
	ck_assert_str_eq(f.file, "d.js");
	ck_assert_int_eq(jitcode_lookup(fx.jc, 5, base + 0x1000000 + 4 * 7777, &f), 1);
	ck_assert_str_eq(f.name, "same");
	ck_assert_uint_eq(f.line, 7778);
	ck_assert_str_eq(f.file, longname);
	free(longname);
	free(b.p);
	fx_release(&fx);
}
END_TEST


/* `want` and `got` give the same code, file and line at (t, ip): 1 when they name one, 0
 * when neither does. */
static int same_answer(const struct jitcode *want, const struct jitcode *got, uint64_t t,
		       uint64_t ip)
{
	struct jitcode_frame f, g;
	int x = jitcode_lookup(want, t, ip, &f);
	int y = jitcode_lookup(got, t, ip, &g);

	ck_assert_int_eq(x, y);
	if (!x)
		return 0;
	ck_assert_str_eq(f.name, g.name);
	ck_assert_int_eq(!f.file, !g.file);
	if (f.file)
		ck_assert_str_eq(f.file, g.file);
	ck_assert_uint_eq(f.line, g.line);
	ck_assert_uint_eq(f.start, g.start);
	ck_assert_uint_eq(f.size, g.size);
	return 1;
}

/*
 * A watcher's reading of a live dump: the real dumps read in parts (each cut at an
 * arbitrary byte, read with JITDUMP_LIVE from where the last part stopped), finished
 * after each, and pruned at the time of the first sample of the recording's second
 * half: every sample of that half names the same code, file and line as the table of
 * the whole dump, and the pruned table holds less.
 */
static void incremental_against_whole(const char *dump, const char *data, uint32_t pid,
				      size_t parts)
{
	struct perf_record rec;
	struct perf_reader *pr;
	struct jitdump_open o = { .flags = JITDUMP_LIVE };
	struct jitcode *whole, *jc;
	struct diag d;
	size_t len, nsamples = 0, half, compared = 0, named = 0;
	uint64_t *times, *ips, prune;
	uint8_t *buf = slurp_gz(top_path(dump), &len);

	diag_init(&d);
	d.quiet = 1;
	whole = jitcode_new(1);
	{
		struct jitdump_reader *r = jitdump_reader_open_mem(buf, len, dump, NULL, &d);

		jitcode_add_dump(whole, r, pid);
		jitdump_reader_close(r);
	}
	jitcode_finish(whole);
	/* the recording's samples of the process, in file order */
	times = xmalloc(200000 * sizeof(*times));
	ips = xmalloc(200000 * sizeof(*ips));
	pr = perf_reader_open(top_path(data), &d);
	ck_assert(pr != NULL);
	while (perf_reader_next(pr, &rec) == 1 && nsamples < 200000)
		if (rec.type == PERF_RECORD_SAMPLE && rec.sid.pid == pid) {
			times[nsamples] = rec.sid.time;
			ips[nsamples++] = rec.u.sample.ip;
		}
	perf_reader_close(pr);
	ck_assert_uint_gt(nsamples, 100);
	half = nsamples / 2;
	prune = times[half];
	for (size_t i = half; i < nsamples; i++)
		if (times[i] < prune)
			prune = times[i];

	jc = jitcode_new(1);
	for (size_t k = 1; k <= parts; k++) {
		size_t end = k == parts ? len : len / parts * k + (k * 7919) % 97;
		struct jitdump_reader *r;

		o.flags = k == parts ? 0 : JITDUMP_LIVE;
		r = jitdump_reader_open_mem_at(buf, end, dump, &o, &d);
		if (!r) /* a part within the header: nothing to read yet */
			continue;
		jitcode_add_dump(jc, r, pid);
		o.from = jitdump_reader_resume(r);
		ck_assert_uint_eq(jitdump_reader_stats(r)->truncated_bytes, 0);
		jitdump_reader_close(r);
		jitcode_finish(jc);
		if (k == parts / 2) {
			size_t before = jitcode_bytes(jc);
			struct jitdump_record jr;
			uint64_t at = prune;

			/* as a watcher prunes: at a time no record still to read is before
			 * (the dump written as time goes on) */
			r = jitdump_reader_open_mem_at(buf, len, dump, &o, &d);
			while (jitdump_reader_next(r, &jr) == 1)
				if ((jr.id == JITDUMP_CODE_LOAD || jr.id == JITDUMP_CODE_MOVE) &&
				    jr.timestamp < at)
					at = jr.timestamp;
			jitdump_reader_close(r);
			jitcode_prune(jc, at);
			jitcode_finish(jc);
			ck_assert_uint_le(jitcode_bytes(jc), before);
		}
	}
	ck_assert_int_eq(jitcode_inexact(jc), 0);
	ck_assert_uint_eq(d.nwarnings, 0);
	for (size_t i = half; i < nsamples; i++, compared++)
		named += (size_t)same_answer(whole, jc, times[i], ips[i]);
	ck_assert_uint_gt(named, compared / 4);
	jitcode_free(jc);
	jitcode_free(whole);
	free(times);
	free(ips);
	free(buf);
}

START_TEST(test_incremental_real)
{
	incremental_against_whole("testdata/jit/jit-30720.dump", "testdata/jit/node.data", 30720, 7);
	incremental_against_whole("testdata/jit/jit-30720.dump", "testdata/jit/node.data", 30720, 61);
	incremental_against_whole("testdata/jit/jit-30756.dump.gz", "testdata/jit/erlang.data", 30756,
				  13);
	incremental_against_whole("testdata/jit/jit-30736.dump", "testdata/jit/node-wasm.data",
				  30736, 5);
	incremental_against_whole("testdata/java/jit-19390.dump", "testdata/java/java.data", 19390,
				  9);
}
END_TEST


/* A table as a cache entry keeps it: saved after a live first part, read back in place
 * (it answers as it did), then read on with the rest of the dump (it answers as the
 * table of the whole dump); bytes that do not hold together are refused. */
static void saved_against_whole(const char *dump, const char *data, uint32_t pid)
{
	struct jitdump_open o = { .flags = JITDUMP_LIVE };
	struct jitdump_reader *r;
	struct jitcode *whole, *part, *back;
	struct mapped_file mf;
	struct perf_record rec;
	struct perf_reader *pr;
	struct diag d;
	char path[] = "/tmp/check_jitcode.XXXXXX";
	size_t len, blen, samples = 0, named = 0;
	uint8_t *buf = slurp_gz(top_path(dump), &len);
	uint8_t *blob;
	int fd;

	diag_init(&d);
	d.quiet = 1;
	whole = jitcode_new(1);
	r = jitdump_reader_open_mem(buf, len, dump, NULL, &d);
	jitcode_add_dump(whole, r, pid);
	jitdump_reader_close(r);
	jitcode_finish(whole);
	part = jitcode_new(1);
	r = jitdump_reader_open_mem_at(buf, len * 2 / 3, dump, &o, &d);
	jitcode_add_dump(part, r, pid);
	o.from = jitdump_reader_resume(r);
	jitdump_reader_close(r);
	blob = jitcode_save(part, 24, &blen);
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, blob, blen), (ssize_t)blen);
	close(fd);
	ck_assert_int_eq(mapped_file_open(&mf, path, &d), 0);
	back = jitcode_load(&mf, 24);
	ck_assert_ptr_nonnull(back);
	pr = perf_reader_open(top_path(data), &d);
	for (int pass = 0; pass < 2; pass++) {
		const struct jitcode *want = pass ? whole : part;

		if (pass) { /* the rest of the dump, into the table read from the entry */
			o.flags = 0;
			r = jitdump_reader_open_mem_at(buf, len, dump, &o, &d);
			jitcode_add_dump(back, r, pid);
			jitdump_reader_close(r);
			jitcode_finish(back);
			perf_reader_rewind(pr);
		}
		while (perf_reader_next(pr, &rec) == 1) {
			if (rec.type != PERF_RECORD_SAMPLE || rec.sid.pid != pid)
				continue;
			samples++;
			named += (size_t)same_answer(want, back, rec.sid.time, rec.u.sample.ip);
		}
	}
	perf_reader_close(pr);
	ck_assert_uint_gt(named, samples / 4);
	jitcode_free(back);
	/* a name past the names: refused, the file left to the caller (the offsets of the
	 * table of codes and its count: struct saved's 17th and 18th words after its stats) */
	{
		uint64_t ncodes, codes;

		memcpy(&codes, blob + 24 + 8 * 2 + sizeof(struct jitcode_stats) + 8 * 16, 8);
		memcpy(&ncodes, blob + 24 + 8 * 2 + sizeof(struct jitcode_stats) + 8 * 17, 8);
		ck_assert_uint_gt(ncodes, 0);
		memset(blob + 24 + codes + 44, 0xff, 4); /* the first code's name */
		fd = open(path, O_WRONLY | O_TRUNC);
		ck_assert_int_eq(write(fd, blob, blen), (ssize_t)blen);
		close(fd);
		ck_assert_int_eq(mapped_file_open(&mf, path, &d), 0);
		ck_assert_ptr_null(jitcode_load(&mf, 24));
		ck_assert_ptr_nonnull(mf.map);
		mapped_file_close(&mf);
	}
	unlink(path);
	free(blob);
	jitcode_free(part);
	jitcode_free(whole);
	free(buf);
}

START_TEST(test_saved_real)
{
	saved_against_whole("testdata/jit/jit-30720.dump", "testdata/jit/node.data", 30720);
	saved_against_whole("testdata/jit/jit-30756.dump.gz", "testdata/jit/erlang.data", 30756);
	saved_against_whole("testdata/java/jit-19390.dump", "testdata/java/java.data", 19390);
}
END_TEST

static Suite *jitcode_suite(void)
{
	Suite *s = suite_create("jitcode");
	TCase *tc = tcase_create("jitcode");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_same_address_over_time);
	tcase_add_test(tc, test_move);
	tcase_add_test(tc, test_partial_overlap);
	tcase_add_test(tc, test_out_of_order_times);
	tcase_add_test(tc, test_random_against_model);
	tcase_add_test(tc, test_timeless);
	tcase_add_test(tc, test_why_absent);
	tcase_add_test(tc, test_lines_with_offset);
	tcase_add_test(tc, test_lines_beam);
	tcase_add_test(tc, test_lines_node20_fallback);
	tcase_add_test(tc, test_debug_unmatched);
	tcase_add_test(tc, test_unwind_info);
	tcase_add_test(tc, test_demangle);
	tcase_add_test(tc, test_julia_names);
	tcase_add_test(tc, test_perf_map);
	tcase_add_test(tc, test_map_restated_against_model);
	tcase_add_test(tc, test_name_file);
	tcase_add_test(tc, test_real_node);
	tcase_add_test(tc, test_real_node_cut);
	tcase_add_test(tc, test_real_node_wasm);
	tcase_add_test(tc, test_real_lli);
	tcase_add_test(tc, test_real_erlang);
	tcase_add_test(tc, test_real_node_map);
	tcase_add_test(tc, test_incremental_real);
	tcase_add_test(tc, test_saved_real);
	suite_add_tcase(s, tc);
	/* hostile sizes: each must end well within 5 s, sanitized builds included */
	tc = tcase_create("hostile");
	tcase_set_timeout(tc, 5);
	tcase_add_test(tc, test_huge_overlapping_loads);
	tcase_add_test(tc, test_debug_info_large);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	int failed = run_suite(jitcode_suite());

	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
