/* unwinding: the user part of --call-graph dwarf samples, unwound (symbolize/unwind.h). */
#include "convert/unwinding.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "convert/resolve.h"

/* A dso's CFI: opened on first use, kept for the run. */
struct dso_cfi {
	int tried;
	struct unwind_module *mod;
	const char *name;
};

/* What find_pc said for one pc of one process in one epoch (its mappings unchanged):
 * the same every time, so kept (a direct-mapped table; 12 frames a sample, most of
 * them pcs seen before, each a search of the process's mappings and a module's
 * segments). */
struct pc_memo {
	const struct replay_proc *proc; /* NULL: empty */
	uint64_t epoch, pc;
	struct unwind_where w;
	uint32_t dso;
	int found;
};
#define PC_MEMO_SIZE 1024 /* a power of two: 4,096 took 100 more pages to fault in, for
			    * as many walks */

struct unwinding {
	const struct perf_reader *r;
	int arch;                     /* enum unwind_arch of the header's ARCH, -1 another */
	const char *arch_name;        /* the header's ARCH (NULL: none, taken as x86-64) */
	const struct replay *rp;
	const struct strtab *strings;
	struct symbolizer *sym;
	struct diag *d;
	struct dso_cfi *dsos;
	size_t ndsos;
	const struct jit_procs *jits;
	struct u64map jit_ids;        /* (table + 1) << 32 | code -> jit_mods index + 1 */
	struct unwind_module **jit_mods; /* [0] unused; NULL for code whose table is unusable */
	size_t njit_mods, jit_mods_cap;
	uint8_t *jit_bad;             /* per jit_mods entry: it had a table, and it was refused */
	size_t jit_bad_cap;
	int jit_pid_table;            /* the sample's process's JIT table, -1 for none */
	uint64_t *no_cfi;             /* samples stopped by a module without CFI, by dso;
					 [ndsos] for code in no file */
	size_t no_cfi_cap;
	/* the sample being unwound */
	const struct replay_proc *proc;
	uint64_t time, epoch;         /* epoch 0: find_pc's answers not kept */
	uint32_t last_dso;            /* the dso of the last pc looked up (UINT32_MAX: none) */
	struct unwinding_stats st;
	int warned_arch;
	struct pc_memo *memo;         /* PC_MEMO_SIZE entries, made on first use */
	struct unwind_memo *walks;    /* walks made before, per process epoch */
	struct unwind_regs_layout layout; /* of the last event's sample_regs_user */
	int has_layout;
	int met_bad_cfi;              /* the sample's walk met JIT code with unusable CFI */
	char bad_cfi_name[128];       /* the first such function, and its dump */
	const char *bad_cfi_module;
};

struct unwinding *unwinding_new(const struct perf_reader *r, const struct replay *rp,
				const struct strtab *strings, struct symbolizer *sym,
				const struct jit_procs *jits, struct diag *d)
{
	struct unwinding *u;
	int any = 0;

	for (size_t i = 0; i < perf_reader_nevents(r); i++) {
		const struct perf_event_desc *e = perf_reader_event(r, i);

		any |= (e->sample_type & PERF_SAMPLE_REGS_USER) &&
		       (e->sample_type & PERF_SAMPLE_STACK_USER);
	}
	if (!any)
		return NULL;
	u = xcalloc(1, sizeof(*u));
	u->r = r;
	{
		/* the recording's, not this host's: an aarch64 recording is converted
		 * on x86-64 with its binaries from --symfs, the build-id cache or
		 * debuginfod (perf writes uname's machine: aarch64; arm64 accepted) */
		const char *arch = perf_reader_header(r)->arch;

		u->arch_name = arch;
		u->arch = !arch || strcmp(arch, "x86_64") == 0 ? UNWIND_X86_64
			: strcmp(arch, "aarch64") == 0 || strcmp(arch, "arm64") == 0 ? UNWIND_AARCH64
			: -1;
	}
	u->rp = rp;
	u->jits = jits;
	u64map_init(&u->jit_ids);
	VEC_PUSH(u->jit_mods, u->njit_mods, u->jit_mods_cap, (struct unwind_module *)NULL);
	u->strings = strings;
	u->sym = sym;
	u->d = d;
	u->walks = unwind_memo_new();
	return u;
}

void unwinding_free(struct unwinding *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->ndsos; i++)
		unwind_module_free(u->dsos[i].mod);
	free(u->dsos);
	free(u->memo);
	unwind_memo_free(u->walks);
	free(u->no_cfi);
	for (size_t i = 0; i < u->njit_mods; i++)
		unwind_module_free(u->jit_mods[i]);
	free(u->jit_mods);
	free(u->jit_bad);
	u64map_release(&u->jit_ids);
	free(u);
}

static struct dso_cfi *dso_cfi(struct unwinding *u, uint32_t dso)
{
	struct dso_cfi *c;

	if (dso >= u->ndsos) {
		size_t old = u->ndsos;

		grow_array((void **)&u->dsos, &u->ndsos, dso + 1, sizeof(*u->dsos));
		memset(u->dsos + old, 0, (u->ndsos - old) * sizeof(*u->dsos));
	}
	c = &u->dsos[dso];
	if (!c->tried) {
		const struct replay_dso *rd = replay_dso_get(u->rp, dso);
		const char *path = strtab_str(u->strings, rd->path);
		char *file = NULL, *debug = NULL;

		c->tried = 1;
		c->name = resolve_module_name(path);
		if (!rd->kernel && !rd->anonymous &&
		    symbolizer_object_files(u->sym, dso, path, rd->build_id, rd->build_id_size,
					    &file, &debug)) {
			c->mod = unwind_module_open(file, debug);
			if (c->mod && !unwind_module_has_cfi(c->mod)) {
				unwind_module_free(c->mod);
				c->mod = NULL;
			}
		}
		free(file);
		free(debug);
	}
	return c;
}

/* JIT code at `pc` with UNWINDING_INFO: its CFI (made once per code), or NULL. */
static struct unwind_module *jit_cfi(struct unwinding *u, uint64_t pc)
{
	const struct jitcode *jc = jit_procs_table(u->jits, u->jit_pid_table);
	struct jitcode_frame jf;
	const uint8_t *data;
	size_t size, hdr;
	uint64_t key;
	uint32_t *v;
	struct unwind_module *mod = NULL;
	int refused = 0;

	if (!jc || !jitcode_lookup(jc, u->time, pc, &jf))
		return NULL;
	key = ((uint64_t)(u->jit_pid_table + 1) << 32) | jf.code;
	v = u64map_get(&u->jit_ids, key);
	if (v) {
		u->met_bad_cfi |= u->jit_bad[*v];
		return u->jit_mods[*v];
	}
	if (jitcode_unwind_info(jc, jf.code, &data, &size, &hdr)) {
		mod = unwind_module_jit_arch(data, size, hdr, jf.start, (unsigned)u->arch);
		refused = !mod;
		if (refused && !u->st.jit_cfi_bad++) {
			snprintf(u->bad_cfi_name, sizeof(u->bad_cfi_name), "%s", jf.name);
			u->bad_cfi_module = jit_procs_module(u->jits, u->jit_pid_table);
		}
		u->met_bad_cfi |= refused;
	}
	u->st.jit_cfi_codes += mod != NULL;
	if (u->njit_mods >= u->jit_bad_cap)
		grow_array((void **)&u->jit_bad, &u->jit_bad_cap, u->njit_mods + 1, 1);
	u->jit_bad[u->njit_mods] = (uint8_t)refused;
	VEC_PUSH(u->jit_mods, u->njit_mods, u->jit_mods_cap, mod);
	u64map_put(&u->jit_ids, key, (uint32_t)u->njit_mods - 1);
	return mod;
}

static int find_pc_now(struct unwinding *u, uint64_t pc, struct unwind_where *w);

/* The module at `pc`, kept per process epoch: JIT code (whose table changes within an
 * epoch) is looked up every time. */
static int find_pc(void *ctx, uint64_t pc, struct unwind_where *w)
{
	struct unwinding *u = ctx;
	struct pc_memo *e;
	uint64_t h;

	if (!u->epoch || u->jit_pid_table >= 0)
		return find_pc_now(u, pc, w);
	if (!u->memo)
		u->memo = xcalloc(PC_MEMO_SIZE, sizeof(*u->memo));
	h = (pc ^ u->epoch * 0x9e3779b97f4a7c15ULL) * 0xff51afd7ed558ccdULL;
	e = &u->memo[(h >> 40) & (PC_MEMO_SIZE - 1)];
	if (e->proc != u->proc || e->epoch != u->epoch || e->pc != pc) {
		e->w = *w; /* what the caller starts from */
		e->found = find_pc_now(u, pc, &e->w);
		e->proc = u->proc;
		e->epoch = u->epoch;
		e->pc = pc;
		e->dso = u->last_dso;
	}
	*w = e->w;
	u->last_dso = e->dso;
	return e->found;
}

static int find_pc_now(struct unwinding *u, uint64_t pc, struct unwind_where *w)
{
	const struct replay_map *m = replay_proc_find(u->proc, u->time, pc);
	struct dso_cfi *c;
	uint64_t vaddr;

	u->last_dso = UINT32_MAX;
	if (u->jit_pid_table >= 0 &&
	    (!m || replay_dso_get(u->rp, m->dso)->anonymous)) {
		struct unwind_module *jm = jit_cfi(u, pc);

		if (jm) {
			w->mod = jm;
			w->bias = 0;
			w->name = "[JIT]";
			return 1;
		}
	}
	if (!m)
		return 0;
	u->last_dso = m->dso;
	c = dso_cfi(u, m->dso);
	w->name = c->name;
	if (c->mod && unwind_module_vaddr(c->mod, resolve_user_offset(m, pc), &vaddr)) {
		w->mod = c->mod;
		w->bias = pc - vaddr;
	}
	return 1;
}

size_t unwinding_sample(struct unwinding *u, const struct sample_ctx *c, uint64_t *words,
			size_t cap)
{
	const struct perf_record *rec = c->rec;
	const struct perf_sample *s = &rec->u.sample;
	struct unwind_regs regs;
	struct unwind_result res;
	size_t nw = 0, n;
	const struct perf_event_desc *e;

	if (!u || !s->regs_user || !s->has_stack_user || rec->event < 0 || cap < 8)
		return 0;
	/* one pass over the callchain: its kernel part is kept as recorded, and one with
	 * user addresses in it was unwound already (frame pointers) */
	if (s->has_callchain) {
		int user = 0, kernel = 0;

		for (uint64_t i = 0; i < s->nr_callchain; i++) {
			uint64_t a = s->callchain[i];

			if (a >= PERF_CONTEXT_MAX) {
				user = a == PERF_CONTEXT_USER;
				kernel = a == PERF_CONTEXT_KERNEL;
			} else if (user) {
				return 0;
			}
			if (kernel && nw + 2 < cap)
				words[nw++] = a;
		}
	}
	if (u->arch < 0) {
		u->st.other_arch |= 1;
		return 0;
	}
	if (s->regs_user_abi != PERF_SAMPLE_REGS_ABI_64) {
		/* a 32-bit process (i386 on x86-64, arm on aarch64): its registers are
		 * laid out otherwise, and its code is of another architecture */
		u->st.other_arch |= 2;
		return 0;
	}
	e = c->ev;
	if (!u->has_layout || u->layout.mask != e->sample_regs_user) {
		unwind_regs_layout_arch(&u->layout, e->sample_regs_user, (unsigned)u->arch);
		u->has_layout = 1;
	}
	if (unwind_regs_placed(&u->layout, &regs, s->regs_user, s->nregs_user) < 0) {
		u->st.samples++;
		u->st.stopped[UNWIND_NO_REG]++;
		u->st.no_reg = (uint32_t)unwind_reg_sp((unsigned)u->arch);
		return 0;
	}
	words[nw++] = PERF_CONTEXT_USER;
	if (regs.r[unwind_reg_sp((unsigned)u->arch)] == 0) {
		/* no stack to walk (a damaged sample): its leaf, and said so, rather
		 * than a walk that reads the copy from the wrong address */
		u->st.samples++;
		u->st.sp_zero++;
		words[nw++] = s->ip;
		return nw;
	}
	u->proc = c->proc;
	u->time = c->time;
	u->epoch = c->proc ? c->user_epoch : 0;
	u->jit_pid_table = c->jit_table;
	u->met_bad_cfi = 0;
	/* a walk's answers from find_pc are those of its process's epoch, but for JIT
	 * code (looked up at the sample's time): only the others are kept */
	n = unwind_stack_memo(u->walks, u->epoch && u->jit_pid_table < 0 ? (uint64_t)(uintptr_t)u->proc : 0,
			      u->epoch, &regs, s->stack_user, (size_t)s->stack_user_dyn, find_pc, u,
			      words + nw, cap - nw, &res, &u->last_dso);
	u->st.samples++;
	u->st.jit_cfi_bad_samples += u->met_bad_cfi;
	u->st.stopped[res.stop]++;
	u->st.nocfi += res.nocfi != 0;
	switch (res.stop) {
	case UNWIND_STACK_SHORT:
		if (s->stack_user_dyn < s->stack_user_size) {
			/* the copy holds the whole stack (the kernel stopped at its top): a
			 * bigger one would not help */
			u->st.stopped[UNWIND_STACK_SHORT]--;
			if (res.nsignal)
				u->st.altstack++;
			else
				u->st.past_top++;
			break;
		}
		if (s->stack_user_size > u->st.short_size_max)
			u->st.short_size_max = s->stack_user_size;
		break;
	case UNWIND_NO_CFI:
	case UNWIND_NO_MAP: {
		size_t slot = u->last_dso == UINT32_MAX ? 0 : (size_t)u->last_dso + 1;

		if (slot >= u->no_cfi_cap) {
			size_t old = u->no_cfi_cap;

			grow_array((void **)&u->no_cfi, &u->no_cfi_cap, slot + 1, sizeof(*u->no_cfi));
			memset(u->no_cfi + old, 0, (u->no_cfi_cap - old) * sizeof(*u->no_cfi));
		}
		if (++u->no_cfi[slot] > u->st.no_cfi_top) {
			u->st.no_cfi_top = u->no_cfi[slot];
			u->st.no_cfi_dso = slot ? (uint32_t)slot - 1 : UINT32_MAX;
		}
		break;
	}
	case UNWIND_NO_REG:
		u->st.no_reg = (uint32_t)res.reg;
		break;
	default:
		break;
	}
	if (n == 0)
		words[nw++] = s->ip;
	/* where a signal interrupted a frame its address is exact: it starts a context of
	 * its own, as the callchain's words say it (the first address after a marker) */
	for (size_t k = res.nsignal; k-- > 0 && n && nw + n < cap;) {
		uint64_t *at = words + nw + res.signal[k];

		memmove(at + 1, at, (n - res.signal[k]) * sizeof(*at));
		*at = PERF_CONTEXT_USER;
		n++;
	}
	return nw + n;
}

const struct unwinding_stats *unwinding_stats(const struct unwinding *u)
{
	return &u->st;
}

void unwinding_report(const struct unwinding *u, struct diag *d)
{
	const struct unwinding_stats *st;
	uint64_t early = 0;

	if (!u)
		return;
	st = &u->st;
	if (st->other_arch & 1)
		diag_warn(d, NULL, DIAG_NO_OFFSET, "user stacks not unwound: the recording's "
			  "architecture is %s, and only x86-64 and aarch64 are unwound: those "
			  "samples show their leaf only", u->arch_name);
	if (st->other_arch & 2)
		diag_warn(d, NULL, DIAG_NO_OFFSET, "user stacks not unwound: samples of 32-bit "
			  "processes (i386, or 32-bit arm, whose code carries ARM EHABI tables "
			  "rather than DWARF CFI), and only 64-bit x86-64 and aarch64 ones are "
			  "unwound: those samples show their leaf only");
	if (!st->samples)
		return;
	early = st->past_top + st->altstack + st->sp_zero;
	for (int i = 1; i < UNWIND_NSTOPS; i++)
		early += st->stopped[i];
	diag_note(d, "unwound %" PRIu64 " user stacks (--call-graph dwarf); %" PRIu64
		  " stopped before the thread's start", st->samples, early);
	if (st->jit_cfi_codes)
		diag_note(d, "  through JIT code with the CFI of %" PRIu64 " functions' UNWINDING_INFO",
			  st->jit_cfi_codes);
	if (st->jit_cfi_bad)
		diag_note(d, "  %" PRIu64 " samples met JIT code whose UNWINDING_INFO is not valid CFI "
			  "(%" PRIu64 " functions, the first %s in %s): stepped by frame pointer "
			  "there, or stopped", st->jit_cfi_bad_samples, st->jit_cfi_bad,
			  u->bad_cfi_name, u->bad_cfi_module ? u->bad_cfi_module : "its dump");
	for (size_t t = 0; u->jits && t < jit_procs_count(u->jits); t++) {
		uint64_t bad = jitcode_stats(jit_procs_table(u->jits, (int)t))->unwind_damaged;

		if (bad)
			diag_note(d, "  %s: %" PRIu64 " UNWINDING_INFO records damaged (their sizes do "
				  "not fit them): not used", jit_procs_module(u->jits, (int)t), bad);
	}
	if (st->stopped[UNWIND_STACK_SHORT])
		diag_note(d, "  %" PRIu64 " samples: the stack copy was too small (%" PRIu64
			  " bytes): record with --call-graph dwarf,%" PRIu64,
			  st->stopped[UNWIND_STACK_SHORT], st->short_size_max,
			  st->short_size_max >= 32768 ? 65528 : st->short_size_max * 4);
	if (st->altstack)
		diag_note(d, "  %" PRIu64 " samples: in a signal handler on a stack of its own "
			  "(sigaltstack): the interrupted thread's stack is not in the copy perf "
			  "took, their frames end at the interrupted function", st->altstack);
	if (st->past_top)
		diag_note(d, "  %" PRIu64 " samples: a step led past the top of the stack (the copy "
			  "holds all of it): damaged stack or CFI", st->past_top);
	if (st->stopped[UNWIND_NO_CFI] + st->stopped[UNWIND_NO_MAP]) {
		const char *name = "code in no file", *why = "";

		if (st->no_cfi_dso != UINT32_MAX && st->no_cfi_dso < u->ndsos &&
		    u->dsos[st->no_cfi_dso].name) {
			/* the path as recorded: a basename does not say which file is meant */
			name = strtab_str(u->strings, replay_dso_get(u->rp, st->no_cfi_dso)->path);
			switch (symbolizer_problem(u->sym, st->no_cfi_dso)) {
			case SYM_OBJ_MISSING:
				why = "; its file was not found: give it with --symfs or beside the "
				      "recording";
				break;
			case SYM_OBJ_MISMATCH:
				why = "; only files with another build id were found";
				break;
			default:
				break;
			}
		}
		diag_note(d, "  %" PRIu64 " samples: no CFI and no frame pointer to follow "
			  "(most in %s: %" PRIu64 "%s)",
			  st->stopped[UNWIND_NO_CFI] + st->stopped[UNWIND_NO_MAP], name, st->no_cfi_top,
			  why);
	}
	if (st->nocfi)
		diag_note(d, "  %" PRIu64 " samples: code without CFI stepped through by its frame "
			  "pointer (%s): right only where that code keeps one", st->nocfi,
			  u->arch == UNWIND_AARCH64 ? "x29's frame records; at the leaf, its caller "
			  "from x30" : "rbp");
	if (st->sp_zero)
		diag_note(d, "  %" PRIu64 " samples: the recorded stack pointer is 0 (a damaged "
			  "sample): their leaf only", st->sp_zero);
	if (st->stopped[UNWIND_NO_REG])
		diag_note(d, "  %" PRIu64 " samples: a register the recording lacks (DWARF "
			  "register %u)", st->stopped[UNWIND_NO_REG], st->no_reg);
	if (st->stopped[UNWIND_BAD])
		diag_note(d, "  %" PRIu64 " samples: the stack pointer did not move up, or CFI "
			  "this unwinder does not evaluate", st->stopped[UNWIND_BAD]);
	if (st->stopped[UNWIND_LIMIT])
		diag_note(d, "  %" PRIu64 " samples: more than %d frames", st->stopped[UNWIND_LIMIT],
			  UNWIND_MAX_FRAMES);
}
