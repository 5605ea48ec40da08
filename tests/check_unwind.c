/* check_unwind: unit tests of the unwinder: perf's register layout, frame-pointer steps
 * over a made-up stack and what stops them, and CFI steps over the real samples of
 * testdata/dwarf/dw.data (a program built without frame pointers) giving perf's stacks;
 * aarch64's registers, its leaf's x30 and frame records, its JIT CFI. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/read/perfdata.h"
#include "symbolize/unwind.h"
#include "symbolize/unwind_internal.h"
#include "tests/testutil.h"

START_TEST(test_regs_from_perf)
{
	/* perf 6.1's mask for --call-graph dwarf: AX..GS without FLAGS..GS, R8..R15 */
	uint64_t mask = 0xff0fff, vals[20];
	struct unwind_regs r;

	for (int i = 0; i < 20; i++)
		vals[i] = 100 + (uint64_t)i;
	ck_assert_int_eq(unwind_regs_from_perf(&r, mask, vals, 20), 0);
	ck_assert_uint_eq(r.r[0], 100);  /* AX */
	ck_assert_uint_eq(r.r[3], 101);  /* BX is DWARF 3 */
	ck_assert_uint_eq(r.r[2], 102);  /* CX is DWARF 2 */
	ck_assert_uint_eq(r.r[1], 103);  /* DX is DWARF 1 */
	ck_assert_uint_eq(r.r[UNWIND_REG_BP], 106);
	ck_assert_uint_eq(r.r[UNWIND_REG_SP], 107);
	ck_assert_uint_eq(r.r[UNWIND_REG_IP], 108);
	ck_assert_uint_eq(r.r[8], 112);  /* R8: after FLAGS, CS, SS (bits 9-11) */
	ck_assert_uint_eq(r.r[15], 119); /* R15 */
	ck_assert_uint_eq(r.valid, (1u << UNWIND_X86_NREGS) - 1);
	/* no SP: refused */
	ck_assert_int_eq(unwind_regs_from_perf(&r, 0x1ff & ~(1ULL << 7), vals, 20), -1);
	/* fewer values than bits: the missing ones are unknown, not read */
	ck_assert_int_eq(unwind_regs_from_perf(&r, mask, vals, 3), -1);
	ck_assert_uint_eq(r.valid, (1u << 0) | (1u << 3) | (1u << 2));
}
END_TEST

/* A layout worked out once places a dump's registers as the walk of the mask does:
 * perf's mask, one with the XMM registers after R15 (unwound from nothing), one
 * without SP, and dumps cut short. */
START_TEST(test_regs_layout)
{
	static const uint64_t masks[] = { 0xff0fff, 0xff0fff | 0xffULL << 32, 0x1ff & ~(1ULL << 7),
					  0x1c3 };
	uint64_t vals[40];

	for (int i = 0; i < 40; i++)
		vals[i] = 0x1000 + (uint64_t)i;
	for (size_t m = 0; m < sizeof(masks) / sizeof(masks[0]); m++) {
		struct unwind_regs_layout l;

		unwind_regs_layout_init(&l, masks[m]);
		for (size_t n = 0; n <= 30; n++) {
			struct unwind_regs a, b;
			int ra = unwind_regs_from_perf(&a, masks[m], vals, n);
			int rb = unwind_regs_placed(&l, &b, vals, n);

			ck_assert_int_eq(ra, rb);
			ck_assert_uint_eq(a.valid, b.valid);
			ck_assert_mem_eq(a.r, b.r, sizeof(a.r));
		}
	}
	{
		struct unwind_regs_layout l;
		struct unwind_regs r;

		unwind_regs_layout_init(&l, 0xff0fff);
		ck_assert_int_eq(unwind_regs_placed(&l, &r, vals, 20), 0);
		ck_assert_uint_eq(r.r[8], 0x100c);  /* R8: the 13th value */
		ck_assert_uint_eq(r.r[UNWIND_REG_IP], 0x1008);
	}
}
END_TEST

/* Every pc in a "JIT" region without CFI, named for messages. */
static int find_nocfi(void *ctx, uint64_t pc, struct unwind_where *w)
{
	(void)ctx;
	w->mod = NULL;
	w->bias = 0;
	w->name = "jit";
	return pc >= 0x1000 && pc < 0x9000;
}

/* A stack of frame-pointer frames at 0x10000: `n` words of it. */
static void fp_stack(uint64_t *st, size_t n)
{
	memset(st, 0, n * 8);
	/* frame 1: rbp at 0x10010 -> saved rbp 0x10040, return 0x2000 */
	st[2] = 0x10040;
	st[3] = 0x2000;
	/* frame 2: rbp at 0x10040 -> saved rbp 0x10080, return 0x3000 */
	st[8] = 0x10080;
	st[9] = 0x3000;
	/* frame 3: rbp at 0x10080 -> saved rbp 0, return 0: the outermost */
	st[16] = 0;
	st[17] = 0;
}

START_TEST(test_frame_pointer)
{
	uint64_t st[32], pcs[16];
	struct unwind_regs r;
	struct unwind_result res;

	fp_stack(st, 32);
	memset(&r, 0, sizeof(r));
	r.r[UNWIND_REG_IP] = 0x1000;
	r.r[UNWIND_REG_SP] = 0x10000;
	r.r[UNWIND_REG_BP] = 0x10010;
	r.valid = (1u << UNWIND_REG_IP) | (1u << UNWIND_REG_SP) | (1u << UNWIND_REG_BP);
	ck_assert_uint_eq(unwind_stack(&r, (const uint8_t *)st, sizeof(st), find_nocfi, NULL,
				       pcs, 16, &res), 3);
	ck_assert_uint_eq(pcs[0], 0x1000);
	ck_assert_uint_eq(pcs[1], 0x2000);
	ck_assert_uint_eq(pcs[2], 0x3000);
	ck_assert_int_eq(res.stop, UNWIND_END);

	/* the copy ends inside frame 2's record: the copy was too small (issue 22, item
	 * 11: not "no frame pointer"), the module named */
	ck_assert_uint_eq(unwind_stack(&r, (const uint8_t *)st, 0x48, find_nocfi, NULL, pcs, 16,
				       &res), 2);
	ck_assert_int_eq(res.stop, UNWIND_STACK_SHORT);
	ck_assert_str_eq(res.module, "jit");
	/* but a saved frame pointer far past the copy is the end of the chain */
	st[8] = 0x10000 + (2u << 20);
	ck_assert_uint_eq(unwind_stack(&r, (const uint8_t *)st, sizeof(st), find_nocfi, NULL,
				       pcs, 16, &res), 3);
	ck_assert_int_eq(res.stop, UNWIND_NO_CFI);
	fp_stack(st, 32);

	/* a frame pointer below the stack pointer is not followed */
	r.r[UNWIND_REG_BP] = 0xfff0;
	ck_assert_uint_eq(unwind_stack(&r, (const uint8_t *)st, sizeof(st), find_nocfi, NULL,
				       pcs, 16, &res), 1);
	ck_assert_int_eq(res.stop, UNWIND_NO_CFI);

	/* a pc in no mapping, without a frame pointer: no mapping */
	r.r[UNWIND_REG_IP] = 0x99999;
	r.valid &= ~(1u << UNWIND_REG_BP);
	ck_assert_uint_eq(unwind_stack(&r, (const uint8_t *)st, sizeof(st), find_nocfi, NULL,
				       pcs, 16, &res), 1);
	ck_assert_int_eq(res.stop, UNWIND_NO_MAP);

	/* room for two pcs: the limit */
	r.r[UNWIND_REG_IP] = 0x1000;
	r.r[UNWIND_REG_BP] = 0x10010;
	r.valid |= 1u << UNWIND_REG_BP;
	ck_assert_uint_eq(unwind_stack(&r, (const uint8_t *)st, sizeof(st), find_nocfi, NULL,
				       pcs, 2, &res), 2);
	ck_assert_int_eq(res.stop, UNWIND_LIMIT);
}
END_TEST

/* The memo of walks gives what a walk gives: again for the same registers and words,
 * and a new walk where a register or a word the walk read differs (frame pointers:
 * rbp and the saved ones), or the room for pcs is smaller. */
START_TEST(test_memo_frame_pointer)
{
	uint64_t st[32], pcs[16];
	struct unwind_regs r;
	struct unwind_result res;
	struct unwind_memo *m = unwind_memo_new();
	uint32_t aux = 7;

	fp_stack(st, 32);
	memset(&r, 0, sizeof(r));
	r.r[UNWIND_REG_IP] = 0x1000;
	r.r[UNWIND_REG_SP] = 0x10000;
	r.r[UNWIND_REG_BP] = 0x10010;
	r.r[3] = 1; /* rbx: read by no step */
	r.valid = (1u << UNWIND_REG_IP) | (1u << UNWIND_REG_SP) | (1u << UNWIND_REG_BP) |
		  (1u << 3);
	ck_assert_uint_eq(unwind_stack_memo(m, 1, 1, &r, (const uint8_t *)st, sizeof(st),
					    find_nocfi, NULL, pcs, 16, &res, &aux), 3);
	aux = 9;
	r.r[3] = 2;
	st[30] = 5; /* a word no step reads */
	memset(pcs, 0, sizeof(pcs));
	ck_assert_uint_eq(unwind_stack_memo(m, 1, 1, &r, (const uint8_t *)st, sizeof(st),
					    find_nocfi, NULL, pcs, 16, &res, &aux), 3);
	ck_assert_uint_eq(unwind_memo_stats(m)->hits, 1);
	ck_assert_uint_eq(aux, 7); /* given back with the walk */
	ck_assert_uint_eq(pcs[2], 0x3000);
	ck_assert_int_eq(res.stop, UNWIND_END);

	/* frame 2's return address read: changed, walked again */
	st[9] = 0x4000;
	ck_assert_uint_eq(unwind_stack_memo(m, 1, 1, &r, (const uint8_t *)st, sizeof(st),
					    find_nocfi, NULL, pcs, 16, &res, &aux), 3);
	ck_assert_uint_eq(pcs[2], 0x4000);
	ck_assert_uint_eq(unwind_memo_stats(m)->hits, 1);
	/* rbp read: another frame record */
	r.r[UNWIND_REG_BP] = 0x10040;
	ck_assert_uint_eq(unwind_stack_memo(m, 1, 1, &r, (const uint8_t *)st, sizeof(st),
					    find_nocfi, NULL, pcs, 16, &res, &aux), 2);
	ck_assert_uint_eq(pcs[1], 0x4000);
	/* another epoch of the process, another process: not the same walk */
	r.r[UNWIND_REG_BP] = 0x10010;
	unwind_stack_memo(m, 1, 2, &r, (const uint8_t *)st, sizeof(st), find_nocfi, NULL, pcs,
			  16, &res, &aux);
	unwind_stack_memo(m, 2, 1, &r, (const uint8_t *)st, sizeof(st), find_nocfi, NULL, pcs,
			  16, &res, &aux);
	ck_assert_uint_eq(unwind_memo_stats(m)->hits, 1);
	/* room for two pcs: the limit, as unwind_stack says */
	ck_assert_uint_eq(unwind_stack_memo(m, 1, 1, &r, (const uint8_t *)st, sizeof(st),
					    find_nocfi, NULL, pcs, 2, &res, &aux), 2);
	ck_assert_int_eq(res.stop, UNWIND_LIMIT);
	/* the copy shorter: its end is read */
	ck_assert_uint_eq(unwind_stack_memo(m, 1, 1, &r, (const uint8_t *)st, 0x48,
					    find_nocfi, NULL, pcs, 16, &res, &aux), 2);
	ck_assert_int_eq(res.stop, UNWIND_STACK_SHORT);
	unwind_memo_free(m);
}
END_TEST

START_TEST(test_frame_pointer_loop)
{
	uint64_t st[8] = { 0 }, pcs[600];
	struct unwind_regs r;
	struct unwind_result res;

	/* rbp points at itself: each step must move the stack pointer up */
	st[2] = 0x10010;
	st[3] = 0x2000;
	memset(&r, 0, sizeof(r));
	r.r[UNWIND_REG_IP] = 0x1000;
	r.r[UNWIND_REG_SP] = 0x10000;
	r.r[UNWIND_REG_BP] = 0x10010;
	r.valid = (1u << UNWIND_REG_IP) | (1u << UNWIND_REG_SP) | (1u << UNWIND_REG_BP);
	ck_assert_uint_le(unwind_stack(&r, (const uint8_t *)st, sizeof(st), find_nocfi, NULL, pcs,
				       600, &res), 3);
	ck_assert_int_ne(res.stop, UNWIND_END);
	ck_assert_int_ne(res.stop, UNWIND_LIMIT);
}
END_TEST

/* The mappings of testdata/dwarf/dw.data's process, with the files in testdata. */
struct dwmap {
	uint64_t start, end, pgoff;
	struct unwind_module *mod;
	const char *name;
};
struct dwmaps {
	struct dwmap m[8];
	size_t n;
	struct unwind_module *dw, *libc;
};

static int find_dw(void *ctx, uint64_t pc, struct unwind_where *w)
{
	struct dwmaps *ms = ctx;

	for (size_t i = 0; i < ms->n; i++) {
		const struct dwmap *m = &ms->m[i];
		uint64_t vaddr;

		if (pc >= m->start && pc < m->end) {
			w->name = m->name;
			if (unwind_module_vaddr(m->mod, pc - m->start + m->pgoff, &vaddr)) {
				w->mod = m->mod;
				w->bias = pc - vaddr;
			}
			return 1;
		}
	}
	return 0;
}

/* A seed for fuzz/fuzz_unwind.c: the two text mappings' starts, the registers, the copy. */
static void write_seed(const char *dir, const struct dwmaps *ms, const struct unwind_regs *regs,
		       const struct perf_sample *s, uint64_t k)
{
	char path[4096];
	uint64_t dw = 0, libc = 0;
	FILE *f;

	for (size_t i = 0; i < ms->n; i++) {
		if (ms->m[i].mod == ms->dw)
			dw = ms->m[i].start;
		else
			libc = ms->m[i].start;
	}
	snprintf(path, sizeof(path), "%s/sample-%04llu", dir, (unsigned long long)k);
	f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	fwrite(&dw, 8, 1, f);
	fwrite(&libc, 8, 1, f);
	{
		uint32_t valid = (uint32_t)regs->valid;

		fwrite(&valid, 4, 1, f);
	}
	fwrite(regs->r, 8, UNWIND_X86_NREGS, f);
	fwrite(s->stack_user, 1, (size_t)s->stack_user_dyn, f);
	fclose(f);
}

START_TEST(test_real_samples)
{
	struct perf_reader *r;
	struct perf_record rec;
	struct dwmaps ms;
	struct cap c;
	uint64_t pcs[UNWIND_MAX_FRAMES], samples = 0, complete = 0, first[8], mpcs[UNWIND_MAX_FRAMES];
	size_t nfirst = 0, changed = 0;
	struct unwind_memo *memo = unwind_memo_new(), *mmemo = unwind_memo_new();
	uint8_t *copy = malloc(8192);

	memset(&ms, 0, sizeof(ms));
	ms.dw = unwind_module_open(top_path("testdata/dwarf/dw"), NULL);
	ms.libc = unwind_module_open(top_path("testdata/libc.so.6"), NULL);
	ck_assert_ptr_nonnull(ms.dw);
	ck_assert_ptr_nonnull(ms.libc);
	ck_assert(unwind_module_has_cfi(ms.dw));
	cap_init(&c);
	r = perf_reader_open(top_path("testdata/dwarf/dw.data"), &c.d);
	ck_assert_ptr_nonnull(r);
	/* the mappings first: the file holds some after the first samples */
	while (perf_reader_next(r, &rec) == 1) {
		if (rec.type == PERF_RECORD_MMAP2 && (rec.u.mmap.prot & 4) && ms.n < 8 &&
		    (strstr(rec.u.mmap.filename, "/dw") || strstr(rec.u.mmap.filename, "libc.so"))) {
			struct dwmap *m = &ms.m[ms.n++];

			m->start = rec.u.mmap.start;
			m->end = rec.u.mmap.start + rec.u.mmap.len;
			m->pgoff = rec.u.mmap.pgoff;
			m->mod = strstr(rec.u.mmap.filename, "libc") ? ms.libc : ms.dw;
			m->name = m->mod == ms.libc ? "libc.so.6" : "dw";
		}
	}
	ck_assert_uint_eq(ms.n, 2);
	perf_reader_rewind(r);
	while (perf_reader_next(r, &rec) == 1) {
		const struct perf_sample *s = &rec.u.sample;
		struct unwind_regs regs;
		struct unwind_result res;
		size_t n;

		if (rec.type != PERF_RECORD_SAMPLE || !s->regs_user)
			continue;
		ck_assert_uint_eq(s->stack_user_size, 8192);
		ck_assert_uint_le(s->stack_user_dyn, 8192);
		ck_assert_int_eq(unwind_regs_from_perf(&regs, perf_reader_event(r, 0)->sample_regs_user,
						       s->regs_user, s->nregs_user), 0);
		if (rec.cpumode == PERF_RECORD_MISC_USER)
			ck_assert_uint_eq(regs.r[UNWIND_REG_IP], s->ip);
		n = unwind_stack(&regs, s->stack_user, (size_t)s->stack_user_dyn, find_dw, &ms, pcs,
				 UNWIND_MAX_FRAMES, &res);
		{
			/* the memo gives the walk, for the copy as it is and with a word its
			 * outermost step read changed */
			struct unwind_result mres;
			uint32_t aux = 0;
			size_t mn, len = (size_t)s->stack_user_dyn;

			for (int k = 0; k < 2; k++) {
				memcpy(copy, s->stack_user, len);
				if (k == 1) {
					/* a word the walk's outermost step read (a walk made
					 * before from an inner frame on read it too) */
					static struct unwind_trace tr;
					uint64_t word;
					size_t at;

					memset(&tr, 0, sizeof(tr));
					tr.init = regs.valid;
					if (unwind_walk(&regs, copy, len, find_dw, &ms, pcs,
							UNWIND_MAX_FRAMES, &res, &tr) < 4 ||
					    tr.overflow || tr.nsteps < 3 ||
					    tr.step[tr.nsteps - 2].first_read >= tr.n)
						break;
					/* the walk as it was, into a memo of its own */
					unwind_stack_memo(mmemo, 1, 1, &regs, copy, len, find_dw, &ms,
							  mpcs, UNWIND_MAX_FRAMES, &mres, &aux);
					at = tr.off[tr.step[tr.nsteps - 2].first_read];
					memcpy(&word, copy + at, 8);
					word ^= 0x40;
					memcpy(copy + at, &word, 8);
					changed++;
					n = unwind_stack(&regs, copy, len, find_dw, &ms, pcs,
							 UNWIND_MAX_FRAMES, &res);
				}
				mn = unwind_stack_memo(k ? mmemo : memo, 1, 1, &regs, copy, len, find_dw,
						       &ms, mpcs, UNWIND_MAX_FRAMES, &mres, &aux);
				ck_assert_uint_eq(mn, n);
				ck_assert(memcmp(mpcs, pcs, n * sizeof(*pcs)) == 0);
				ck_assert_int_eq(mres.stop, res.stop);
				ck_assert_uint_eq(mres.stack_end, res.stack_end);
				ck_assert_uint_eq(mres.nsignal, res.nsignal);
			}
			n = unwind_stack(&regs, s->stack_user, (size_t)s->stack_user_dyn, find_dw,
					 &ms, pcs, UNWIND_MAX_FRAMES, &res);
		}
		samples++;
		if (getenv("PERFCONV_UNWIND_CORPUS") && samples % 250 == 1)
			write_seed(getenv("PERFCONV_UNWIND_CORPUS"), &ms, &regs, s, samples);
		complete += res.stop == UNWIND_END;
		if (rec.sid.time == 1922820151172ULL) {
			/* perf script's first sample: main_mix, main_spin, main, __libc_start_call_main,
			 * __libc_start_main, _start, as ELF addresses */
			for (size_t i = 0; i < n && i < 8; i++) {
				struct unwind_where w = { NULL, 0, NULL };

				ck_assert(find_dw(&ms, pcs[i], &w));
				first[nfirst++] = pcs[i] - w.bias;
			}
			ck_assert_int_eq(res.stop, UNWIND_END);
		}
		/* too small a copy: stops saying so, never reads past it */
		if (samples == 2) {
			n = unwind_stack(&regs, s->stack_user, 24, find_dw, &ms, pcs, UNWIND_MAX_FRAMES,
					 &res);
			ck_assert_uint_ge(n, 1);
			ck_assert_int_eq(res.stop, UNWIND_STACK_SHORT);
		}
	}
	ck_assert_uint_eq(nfirst, 6);
	ck_assert_uint_eq(first[0], 0x1557);
	/* return addresses: perf script prints each one less (the call's last byte) */
	ck_assert_uint_eq(first[1], 0x15ef + 1);
	ck_assert_uint_eq(first[2], 0x110f + 1);
	ck_assert_uint_eq(first[3], 0x27249 + 1);
	ck_assert_uint_eq(first[4], 0x27304 + 1);
	ck_assert_uint_eq(first[5], 0x1170 + 1);
	ck_assert_uint_eq(samples, 1966);
	/* all but the few in the vDSO, which has no file here */
	ck_assert_uint_ge(complete, samples - 20);
	/* most walks of this CPU-bound program were made before */
	ck_assert_uint_gt(unwind_memo_stats(memo)->hits, samples / 2);
	/* and most others from a frame on (the outer frames of a qsort's recursion) */
	ck_assert_uint_gt(unwind_memo_stats(memo)->rest_hits, samples / 4);
	ck_assert_uint_gt(changed, samples / 2);
	ck_assert_uint_gt(unwind_memo_stats(mmemo)->rest_hits, changed / 4);
	unwind_memo_free(memo);
	unwind_memo_free(mmemo);
	free(copy);
	perf_reader_close(r);
	unwind_module_free(ms.dw);
	unwind_module_free(ms.libc);
	fclose(c.f);
}
END_TEST

/* V8's UNWINDING_INFO for `JS:*walk` (344 bytes of code at 0x7ffaf37e5640) in
 * testdata/dwarf/jit-1412.dump.gz: .eh_frame (a CIE, an FDE), then .eh_frame_hdr. */
static const char walk_unwind_hex[] =
	"1800000000000000037a4c520001781002ff1b0c0708900100000000200000002000000084feffff"
	"57010000004f0e108602430d0602b50d07410e08520c061000000000"
	"011b033bb8ffffff0100000064feffffd8ffffff";
#define WALK_START 0x7ffaf37e5640ULL

static int find_walk(void *ctx, uint64_t pc, struct unwind_where *w)
{
	w->mod = ctx;
	w->bias = 0;
	w->name = "[JIT]";
	return pc >= WALK_START && pc < WALK_START + 344;
}

START_TEST(test_jit_cfi)
{
	uint8_t data[128];
	size_t n = strlen(walk_unwind_hex) / 2;
	struct unwind_module *m;
	struct unwind_regs r;
	struct unwind_result res;
	uint64_t st[8] = { 0 }, pcs[8];

	for (size_t i = 0; i < n; i++)
		sscanf(walk_unwind_hex + 2 * i, "%2hhx", &data[i]);
	ck_assert_uint_eq(n, 88);
	/* a header of another form, or too short: no module */
	ck_assert_ptr_null(unwind_module_jit(data, n, 8, WALK_START));
	m = unwind_module_jit(data, n, 20, WALK_START);
	ck_assert_ptr_nonnull(m);

	/* at the first instruction the return address is at the stack pointer, whatever
	 * rbp says (a frame-pointer step would take the caller's frame for this one) */
	st[0] = 0x1111;        /* return address */
	st[2] = 0x10030;       /* where a stale rbp points: a decoy */
	st[3] = 0x2222;
	memset(&r, 0, sizeof(r));
	r.r[UNWIND_REG_IP] = WALK_START;
	r.r[UNWIND_REG_SP] = 0x10000;
	r.r[UNWIND_REG_BP] = 0x10010;
	r.valid = (1u << UNWIND_REG_IP) | (1u << UNWIND_REG_SP) | (1u << UNWIND_REG_BP);
	ck_assert_uint_eq(unwind_stack(&r, (const uint8_t *)st, sizeof(st), find_walk, m, pcs, 8,
				       &res), 3);
	ck_assert_uint_eq(pcs[1], 0x1111);
	/* 0x1111 is in no mapping: its frame pointer (unchanged by walk's first
	 * instruction) leads on to 0x2222, whose frame record holds zeros: the end */
	ck_assert_uint_eq(pcs[2], 0x2222);
	ck_assert_int_eq(res.stop, UNWIND_END);

	/* 20 bytes in, after push rbp; mov rbp, rsp: the frame is rbp-based */
	r.r[UNWIND_REG_IP] = WALK_START + 20;
	r.r[UNWIND_REG_SP] = 0x10000;
	ck_assert_uint_eq(unwind_stack(&r, (const uint8_t *)st, sizeof(st), find_walk, m, pcs, 8,
				       &res), 2);
	ck_assert_uint_eq(pcs[1], 0x2222);
	ck_assert_int_eq(res.stop, UNWIND_END);
	unwind_module_free(m);
}
END_TEST

START_TEST(test_a64_regs)
{
	/* perf's arm64 mask for --call-graph dwarf: X0..X28, X29, LR, SP, PC (bits 0..32),
	 * DWARF's numbers, the pc in UNWIND_A64_PC */
	uint64_t vals[34];
	struct unwind_regs_layout l;
	struct unwind_regs r;

	for (int i = 0; i < 34; i++)
		vals[i] = 100 + (uint64_t)i;
	unwind_regs_layout_arch(&l, (1ULL << 33) - 1, UNWIND_AARCH64);
	ck_assert_int_eq(unwind_regs_placed(&l, &r, vals, 33), 0);
	ck_assert_int_eq(r.arch, UNWIND_AARCH64);
	ck_assert_uint_eq(r.r[UNWIND_A64_FP], 129);
	ck_assert_uint_eq(r.r[UNWIND_A64_LR], 130);
	ck_assert_uint_eq(r.r[UNWIND_A64_SP], 131);
	ck_assert_uint_eq(r.r[UNWIND_A64_PC], 132);
	ck_assert(r.valid == (1ULL << 33) - 1);
	/* VG (bit 46, SVE) after them: a value of its own, ignored */
	unwind_regs_layout_arch(&l, ((1ULL << 33) - 1) | 1ULL << 46, UNWIND_AARCH64);
	ck_assert_int_eq(unwind_regs_placed(&l, &r, vals, 34), 0);
	ck_assert_uint_eq(r.r[UNWIND_A64_PC], 132);
	/* no pc: refused */
	unwind_regs_layout_arch(&l, (1ULL << 32) - 1, UNWIND_AARCH64);
	ck_assert_int_eq(unwind_regs_placed(&l, &r, vals, 32), -1);
}
END_TEST

static int find_none(void *ctx, uint64_t pc, struct unwind_where *w)
{
	(void)ctx;
	(void)pc;
	w->mod = NULL;
	w->name = "nocfi";
	return 1;
}

START_TEST(test_a64_no_cfi)
{
	/* code without CFI: the leaf's caller from x30 when x29's record does not hold it
	 * (a PLT stub), then the x29 chain of frame records ([x29] the caller's x29,
	 * [x29 + 8] its x30) */
	uint64_t st[16] = { 0 }, pcs[8];
	struct unwind_regs r;
	struct unwind_result res;

	st[2] = 0x10030;  /* record at sp + 0x10: the next record */
	st[3] = 0x3000;   /* and the return address there */
	memset(&r, 0, sizeof(r));
	r.arch = UNWIND_AARCH64;
	r.r[UNWIND_A64_PC] = 0x1000;
	r.r[UNWIND_A64_LR] = 0x2000;
	r.r[UNWIND_A64_SP] = 0x10000;
	r.r[UNWIND_A64_FP] = 0x10010;
	r.valid = 1ULL << UNWIND_A64_PC | 1ULL << UNWIND_A64_LR | 1ULL << UNWIND_A64_SP |
		  1ULL << UNWIND_A64_FP;
	ck_assert_uint_eq(unwind_stack(&r, (const uint8_t *)st, sizeof(st), find_none, NULL, pcs, 8,
				       &res), 3);
	ck_assert_uint_eq(pcs[1], 0x2000);
	ck_assert_uint_eq(pcs[2], 0x3000);
	ck_assert_int_eq(res.stop, UNWIND_END);
	/* x30 is the record's return address: the leaf made its record, x29 is its own */
	r.r[UNWIND_A64_LR] = 0x3000;
	ck_assert_uint_eq(unwind_stack(&r, (const uint8_t *)st, sizeof(st), find_none, NULL, pcs, 8,
				       &res), 2);
	ck_assert_uint_eq(pcs[1], 0x3000);
	/* a signed return address (pointer authentication) is stripped */
	r.r[UNWIND_A64_LR] = 0x2000 | 0x7fULL << 48;
	ck_assert_uint_eq(unwind_stack(&r, (const uint8_t *)st, sizeof(st), find_none, NULL, pcs, 8,
				       &res), 3);
	ck_assert_uint_eq(pcs[1], 0x2000);
}
END_TEST

static int find_jit64(void *ctx, uint64_t pc, struct unwind_where *w)
{
	const uint64_t *range = ((void **)ctx)[1];

	w->mod = ((void **)ctx)[0];
	w->bias = 0;
	w->name = "[JIT]";
	return pc >= range[0] && pc < range[1];
}

START_TEST(test_a64_jit_cfi)
{
	/* testdata/arm64/jit-4242.dump: jit_loop's UNWINDING_INFO, then its code load */
	FILE *f = fopen(top_path("testdata/arm64/jit-4242.dump"), "rb");
	uint8_t d[512], st[64] = { 0 };
	size_t n, q = 40, uw = 0, uw_size = 0, hdr = 0;
	uint64_t range[2] = { 0, 0 }, pcs[8], v;
	void *ctx[2];
	struct unwind_module *m;
	struct unwind_regs r;
	struct unwind_result res;

	ck_assert_ptr_nonnull(f);
	n = fread(d, 1, sizeof(d), f);
	fclose(f);
	while (q + 16 <= n) {
		uint32_t id, size;

		memcpy(&id, d + q, 4);
		memcpy(&size, d + q + 4, 4);
		if (id == 4) {
			memcpy(&v, d + q + 16, 8);
			uw_size = (size_t)v;
			memcpy(&v, d + q + 24, 8);
			hdr = (size_t)v;
			uw = q + 40;
		} else if (id == 0) {
			memcpy(&range[0], d + q + 32, 8);
			memcpy(&v, d + q + 40, 8);
			range[1] = range[0] + v;
		}
		q += size;
	}
	ck_assert_uint_gt(uw, 0);
	ck_assert_uint_eq(range[1] - range[0], 68);
	m = unwind_module_jit_arch(d + uw, uw_size, hdr, range[0], UNWIND_AARCH64);
	ck_assert_ptr_nonnull(m);
	ctx[0] = m;
	ctx[1] = range;
	memset(&r, 0, sizeof(r));
	r.arch = UNWIND_AARCH64;
	r.valid = 1ULL << UNWIND_A64_PC | 1ULL << UNWIND_A64_LR | 1ULL << UNWIND_A64_SP |
		  1ULL << UNWIND_A64_FP;
	r.r[UNWIND_A64_SP] = 0x10000;
	r.r[UNWIND_A64_FP] = 0x20000; /* a caller's record, out of the copy */
	r.r[UNWIND_A64_LR] = 0x7777;
	/* after sub sp, sp, #48: the CFA is sp + 48, the return address still in x30 */
	r.r[UNWIND_A64_PC] = range[0] + 4;
	ck_assert_uint_ge(unwind_stack(&r, st, sizeof(st), find_jit64, ctx, pcs, 8, &res), 2);
	ck_assert_uint_eq(pcs[1], 0x7777);
	/* after the blr: x30 saved at CFA - 24, the caller's sp the CFA (x30 points back
	 * into the function: without the CFI no step is made) */
	v = 0x8888;
	memcpy(st + 24, &v, 8);
	r.r[UNWIND_A64_PC] = range[0] + 36;
	r.r[UNWIND_A64_LR] = range[0] + 36;
	ck_assert_uint_ge(unwind_stack(&r, st, sizeof(st), find_jit64, ctx, pcs, 8, &res), 2);
	ck_assert_uint_eq(pcs[1], 0x8888);
	unwind_module_free(m);
}
END_TEST

START_TEST(test_a64_real_samples)
{
	/* testdata/arm64/c.data's samples (made under qemu: testdata/arm64/README.md), each
	 * walked to the thread's start; the memo gives what a walk gives, also when the
	 * sample's x30 (which a leaf's step reads) is another */
	static const char *const files[] = { "testdata/arm64/cprog",
		"testdata/arm64/symfs/usr/lib/aarch64-linux-gnu/libc.so.6",
		"testdata/arm64/symfs/usr/lib/aarch64-linux-gnu/ld-linux-aarch64.so.1" };
	struct unwind_module *mods[3];
	struct perf_reader *r;
	struct perf_record rec;
	struct dwmaps ms;
	struct cap c;
	struct unwind_regs_layout l;
	struct unwind_memo *memo = unwind_memo_new();
	uint64_t pcs[UNWIND_MAX_FRAMES], mpcs[UNWIND_MAX_FRAMES], samples = 0, complete = 0;
	uint32_t aux = 0;

	memset(&ms, 0, sizeof(ms));
	for (int i = 0; i < 3; i++) {
		mods[i] = unwind_module_open(top_path(files[i]), NULL);
		ck_assert_ptr_nonnull(mods[i]);
	}
	cap_init(&c);
	r = perf_reader_open(top_path("testdata/arm64/c.data"), &c.d);
	ck_assert_ptr_nonnull(r);
	while (perf_reader_next(r, &rec) == 1) {
		if (rec.type == PERF_RECORD_MMAP2 && ms.n < 8) {
			struct dwmap *m = &ms.m[ms.n++];
			int k = strstr(rec.u.mmap.filename, "libc") ? 1 : strstr(rec.u.mmap.filename, "ld-") ? 2 : 0;

			m->start = rec.u.mmap.start;
			m->end = rec.u.mmap.start + rec.u.mmap.len;
			m->pgoff = rec.u.mmap.pgoff;
			m->mod = mods[k];
			m->name = files[k];
		}
	}
	ck_assert_uint_eq(ms.n, 3);
	unwind_regs_layout_arch(&l, (1ULL << 33) - 1, UNWIND_AARCH64);
	perf_reader_rewind(r);
	while (perf_reader_next(r, &rec) == 1) {
		const struct perf_sample *s = &rec.u.sample;
		struct unwind_regs regs;
		struct unwind_result res, mres;
		size_t n, mn;

		if (rec.type != PERF_RECORD_SAMPLE)
			continue;
		ck_assert_int_eq(unwind_regs_placed(&l, &regs, s->regs_user, s->nregs_user), 0);
		for (int k = 0; k < 2; k++) {
			n = unwind_stack(&regs, s->stack_user, (size_t)s->stack_user_dyn, find_dw, &ms,
					 pcs, UNWIND_MAX_FRAMES, &res);
			for (int t = 0; t < 2; t++) {
				mn = unwind_stack_memo(memo, 1, 1, &regs, s->stack_user,
						       (size_t)s->stack_user_dyn, find_dw, &ms, mpcs,
						       UNWIND_MAX_FRAMES, &mres, &aux);
				ck_assert_uint_eq(mn, n);
				ck_assert(memcmp(mpcs, pcs, n * sizeof(*pcs)) == 0);
				ck_assert_int_eq(mres.stop, res.stop);
			}
			if (k == 0) {
				samples++;
				complete += res.stop == UNWIND_END && n >= 4;
			}
			regs.r[UNWIND_A64_LR] ^= 0x40;
		}
	}
	ck_assert_uint_eq(samples, 432);
	ck_assert_uint_eq(complete, samples);
	ck_assert_uint_gt(unwind_memo_stats(memo)->hits, samples);
	unwind_memo_free(memo);
	perf_reader_close(r);
	for (int i = 0; i < 3; i++)
		unwind_module_free(mods[i]);
}
END_TEST

START_TEST(test_not_elf)
{
	ck_assert_ptr_null(unwind_module_open(top_path("testdata/dwarf/src/dw.c"), NULL));
	ck_assert_ptr_null(unwind_module_open("/nonexistent/file", NULL));
}
END_TEST

static Suite *unwind_suite(void)
{
	Suite *s = suite_create("unwind");
	TCase *tc = tcase_create("unwind");

	tcase_add_test(tc, test_regs_from_perf);
	tcase_add_test(tc, test_regs_layout);
	tcase_add_test(tc, test_frame_pointer);
	tcase_add_test(tc, test_memo_frame_pointer);
	tcase_add_test(tc, test_frame_pointer_loop);
	tcase_add_test(tc, test_real_samples);
	tcase_add_test(tc, test_jit_cfi);
	tcase_add_test(tc, test_not_elf);
	tcase_add_test(tc, test_a64_regs);
	tcase_add_test(tc, test_a64_no_cfi);
	tcase_add_test(tc, test_a64_jit_cfi);
	tcase_add_test(tc, test_a64_real_samples);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	int failed = run_suite(unwind_suite());

	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
