/* session: one recording opened for reading, with the state every pass shares. */
#include "convert/session.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

int session_open(struct session *s, const struct session_options *o, struct profile *p,
		 struct diag *d)
{
	memset(s, 0, sizeof(*s));
	s->o = *o;
	s->p = p;
	s->d = d;
	s->r = o->input_mem ? perf_reader_open_mem(o->input_mem, o->input_len, o->input, d) :
			      perf_reader_open(o->input, d);
	if (!s->r)
		return -1;
	if (!s->o.sym.input_dir)
		s->o.sym.input_dir = s->input_dir = recording_input_dir(o->input);
	s->sym = symbolizer_new(&s->o.sym, d);
	s->rp = replay_new(&p->strings);
	s->jits = jit_procs_new(&p->strings);
	recording_read(s->r, p, &s->facts);
	symbolizer_kernel_release(s->sym, perf_reader_header(s->r)->osrelease);
	symbolizer_embedded(s->sym, perf_reader_simpleperf(s->r));
	return 0;
}

uint64_t session_start_wall(const struct session *s)
{
	struct stat st;
	uint64_t end;

	if (!s->ds.have_times)
		return 0;
	if (s->p->has_wall_clock)
		return s->ds.first_time - s->p->clock_ns + s->p->wall_ns;
	if (s->o.input_mem)
		return s->o.input_mtime_ns > 0 ?
		       (uint64_t)s->o.input_mtime_ns - (s->ds.last_time - s->ds.first_time) : 0;
	if (strcmp(s->o.input, "-") == 0 || stat(s->o.input, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	end = (uint64_t)st.st_mtim.tv_sec * 1000000000 + (uint64_t)st.st_mtim.tv_nsec;
	return end - (s->ds.last_time - s->ds.first_time);
}

static void load_jit(struct session *s)
{
	struct jit_search js;

	memset(&js, 0, sizeof(js));
	js.input_dir = s->o.sym.input_dir;
	js.jit_dirs = s->o.jit_dirs;
	js.njit_dirs = s->o.njit_dirs;
	js.use_tmp_maps = recording_made_here(s->r);
	js.clock_monotonic = recording_clock_monotonic(s->r);
	js.time_conv = s->ds.have_time_conv ? &s->ds.time_conv : NULL;
	js.demangle = s->o.sym.demangle;
	js.recording_start_wall_ns = s->p->start_wall_ns;
	if (s->ds.have_times) {
		js.first_time = s->ds.first_time;
		js.last_time = s->ds.last_time;
	}
	js.store = s->o.jit_store;
	js.cache = symbolizer_cache(s->sym);
	js.check_owner = s->o.jit_check_owner;
	js.owner_uid = s->o.jit_owner_uid;
	jit_procs_load(s->jits, &js, s->d, s->o.quiet);
}

int session_pass1(struct session *s)
{
	s->ds.r = s->r;
	s->ds.facts = &s->facts;
	s->ds.rp = s->rp;
	s->ds.jits = s->jits;
	s->ds.sym = s->sym;
	/* the objects queued first: the helper thread takes the kernel's symbols when it
	 * has nothing else to do, and the main thread when it needs them */
	if (!s->o.no_symbols && s->o.readahead)
		s->ds.ra = s->ra = readahead_new(s->sym, s->rp, &s->p->strings,
						 perf_reader_header(s->r));
	if (!s->o.no_symbols && s->facts.records_kernel)
		symbolizer_kernel_prefetch(s->sym, s->facts.kernel_bid, s->facts.kernel_bid_size);
	if (dispatch_pass(&s->ds) < 0)
		return -1;
	replay_finish(s->rp);
	s->p->start_wall_ns = session_start_wall(s);
	if (!s->o.no_symbols && s->o.load_jit)
		load_jit(s);
	return 0;
}

int session_wanted(const struct session *s, uint32_t pid, uint32_t tid, uint32_t comm)
{
	const struct session_options *o = &s->o;
	int ok;

	if (o->npids) {
		ok = 0;
		for (size_t i = 0; i < o->npids; i++)
			ok |= o->pids[i] == pid;
		if (!ok)
			return 0;
	}
	if (o->ntids) {
		ok = 0;
		for (size_t i = 0; i < o->ntids; i++)
			ok |= o->tids[i] == tid;
		if (!ok)
			return 0;
	}
	if (o->ncomms) {
		const char *name = profile_text(s->p, comm);

		ok = 0;
		for (size_t i = 0; i < o->ncomms; i++)
			ok |= strcmp(o->comms[i], name) == 0;
		if (!ok)
			return 0;
	}
	return 1;
}

/* The process `pid` was at `time` and its epoch, kept in `m` for as long as they hold
 * (one lookup a change, not a record). */
static void memo_at(struct session *s, struct session_memo *m, uint32_t pid, uint64_t time)
{
	if (!m->valid || m->pid != pid || time < m->span.from || time >= m->span.until) {
		m->proc = replay_proc_at(s->rp, pid, time);
		if (!m->proc)
			replay_asked(s->rp, pid); /* one pass: said before the end */
		m->epoch = replay_proc_epoch(s->rp, m->proc, time, &m->span);
		m->pid = pid;
		m->valid = 1;
	}
}

static void build_ctx(struct session *s, const struct perf_record *rec, struct sample_ctx *c)
{
	c->rec = rec;
	c->ev = rec->event >= 0 ? perf_reader_event(s->r, (size_t)rec->event) : NULL;
	c->pid = rec->sid.pid;
	c->tid = rec->sid.tid;
	c->time = recording_time(&s->facts, rec);
	if (!rec->sid.has_tid) {
		/* a record of no thread (FINISHED_ROUND, ...): no process to look up */
		c->comm = 0;
		c->proc = c->kernel = NULL;
		c->user_epoch = c->kernel_epoch = 0;
		c->jit_table = -1;
		return;
	}
	c->comm = replay_thread_name(s->rp, c->pid, c->tid, c->time);
	memo_at(s, &s->user_memo, c->pid, c->time);
	memo_at(s, &s->kernel_memo, REPLAY_KERNEL_PID, c->time);
	c->proc = s->user_memo.proc;
	c->user_epoch = s->user_memo.epoch;
	c->kernel = s->kernel_memo.proc;
	c->kernel_epoch = s->kernel_memo.epoch;
	c->jit_table = jit_procs_count(s->jits) ? jit_procs_find(s->jits, c->pid) : -1;
}

/* The tables replay_release() frees were made at the end of pass 1, beneath what
 * pass 2 makes since, mostly vectors grown by doubling (from the top of the heap or
 * mapped): in holes of the heap that these do not fit in, their pages stay resident
 * unless given back. Each trim walks malloc's free lists, longer as the heap is
 * larger: every 8 MB freed, or a sixteenth of all that will be on a larger
 * recording (wm1g.data, 470 MB freed: 58 trims were 1.5% of the CPU time). */
#define TRIM_STEP ((size_t)8 << 20)

static void trim_after(size_t *unreturned, size_t freed, size_t step)
{
	*unreturned += freed;
	if (*unreturned < step)
		return;
	*unreturned = 0;
#ifdef __GLIBC__
	malloc_trim(0);
#endif
}

void session_forget_processes(struct session *s)
{
	/* after pass 2 the heap's holes are given back, before the frames are expanded and
	 * written (48 MB of wm100.data's pass 1), unless the recording is a small one */
	size_t unreturned = replay_releasable_bytes(s->rp);

	s->user_memo.valid = s->kernel_memo.valid = 0;
	trim_after(&unreturned, replay_forget_processes(s->rp), TRIM_STEP);
}

int session_pass2(struct session *s, int (*wants)(uint32_t type), session_record_fn fn,
		  void *arg)
{
	struct perf_record rec;
	struct sample_ctx c;
	size_t freed, unreturned = 0, step = replay_releasable_bytes(s->rp) / 16;
	int ret;

	if (step < TRIM_STEP)
		step = TRIM_STEP;
	perf_reader_rewind(s->r);
	perf_reader_skip_type(s->r, 0);
	while ((ret = perf_reader_next(s->r, &rec)) == 1) {
		/* the processes no record from here on asks for: what is live is held */
		if ((freed = replay_release(s->rp, rec.index)) != 0) {
			s->user_memo.valid = 0;
			trim_after(&unreturned, freed, step);
		}
		if (!wants(rec.type))
			continue;
		build_ctx(s, &rec, &c);
		fn(arg, &c);
	}
	return ret;
}

/* ---- one pass ---- */

/* A record of interest kept until the replay can answer for its time, with copies of
 * the bytes it borrowed from the reader; but a sample's stack copy inflated from
 * compressed data is copied only if the reader is about to write over it before the
 * sample is drained. The reader writes its buffer from the start again a block at a
 * time and says which range each block may write over, so a stack is copied only if
 * it is still held about a buffer's length (a megabyte) of records later
 * (bench/work/dwarf.data, -z --call-graph dwarf: copying every stack was 5% of the
 * CPU time; copying all those held when the reader went back to its buffer's start,
 * 4,368 of 11,818, was 4%; a larger buffer, copying fewer, was slower: 2 to 4 MB more
 * to fault in and out of the caches). */
struct held {
	struct perf_record rec;
	uint64_t time;
	void *data;
	size_t bytes, cap;
	int block;            /* its copy's block in fused.blocks, or -1 */
};

/* Copied stacks side by side: they are drained in about the order they are copied,
 * so a block is free again once its last one is, and is kept for the next copies. */
struct stack_block {
	uint8_t *p;
	size_t cap, used;
	size_t live;          /* held samples whose stack is in it */
};

/* A copy's buffer, kept for the next record once its own is handed over (a malloc
 * and a free a sample were 2% of the instructions). */
struct spare {
	void *p;
	size_t cap;
};

struct fused {
	/* a ring: the records of sequence numbers [head, n) are held, in file order, the
	 * one of number i at v[i & (cap - 1)] (cap a power of two) */
	struct held *v;
	size_t head, n, cap;
	size_t bytes;         /* their copies' */
	struct spare *spares;
	size_t nspares, spares_cap;
	/* the held stacks that point into the reader's buffer, in file order (p NULL:
	 * copied since) */
	struct borrow {
		const uint8_t *p;
		size_t len, seq;  /* seq: the record's sequence number */
	} *bv;
	size_t bv_head, bv_n, bv_cap;
	struct stack_block *blocks;
	size_t nblocks, blocks_cap, last_block;
};

#define SPARES_MAX 1024

static void *buffer(struct fused *f, size_t need, size_t *cap)
{
	while (f->nspares) {
		struct spare sp = f->spares[--f->nspares];

		if (sp.cap >= need) {
			*cap = sp.cap;
			return sp.p;
		}
		free(sp.p);
	}
	/* a power of two: a stack copy's size varies by sample */
	for (*cap = 256; *cap < need; *cap *= 2)
		;
	return xmalloc(*cap);
}

static void unbuffer(struct fused *f, void *p, size_t cap)
{
	struct spare sp = { p, cap };

	if (!p)
		return;
	if (f->nspares >= SPARES_MAX) {
		free(p);
		return;
	}
	VEC_PUSH(f->spares, f->nspares, f->spares_cap, sp);
}

/* A round's records held (two rounds, as perf orders them) take some megabytes; this
 * many are not a recording with rounds. */
#define HELD_MAX ((size_t)64 << 20)

static void *take(uint8_t **at, const void *src, size_t len)
{
	void *dst = *at;

	if (len)
		memcpy(dst, src, len);
	*at += align8(len);
	return dst;
}

static struct held *held_at(const struct fused *f, size_t seq)
{
	return &f->v[seq & (f->cap - 1)];
}

/* Room for one more held record: the ring doubled when full, its records moved to
 * where their numbers fall in the larger one. */
static void ring_room(struct fused *f)
{
	struct held *old = f->v;
	size_t ocap = f->cap;

	if (f->n - f->head < f->cap)
		return;
	f->cap = ocap ? 2 * ocap : 64;
	f->v = xmalloc(f->cap * sizeof(*f->v));
	for (size_t i = f->head; i < f->n; i++)
		f->v[i & (f->cap - 1)] = old[i & (ocap - 1)];
	free(old);
}

static void hold(struct fused *f, const struct perf_reader *r, const struct perf_record *rec,
		 uint64_t time)
{
	struct held *hp;
	const struct perf_sample *x = &rec->u.sample;
	const char *str = NULL;
	size_t need = 0;
	uint8_t *at;
	int borrowed = 0;

	/* made where it is kept (a record is about 300 bytes), not copied in */
	ring_room(f);
	hp = held_at(f, f->n);
	hp->block = -1;
	hp->rec = *rec;
	hp->rec.raw = NULL; /* no handler reads the bytes as written */
	hp->time = time;
	switch (rec->type) {
	case PERF_RECORD_SAMPLE:
		borrowed = x->stack_user && x->stack_user_dyn &&
			   perf_reader_inflated(r, x->stack_user, (size_t)x->stack_user_dyn);
		need = align8(x->nr_callchain * 8) + align8(x->raw_size) +
		       align8((size_t)x->nregs_user * 8) +
		       (size_t)x->nr_branches * sizeof(*x->branches) +
		       (borrowed ? 0 : align8((size_t)x->stack_user_dyn));
		break;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		str = rec->u.mmap.filename;
		break;
	case PERF_RECORD_COMM:
		str = rec->u.comm.comm;
		break;
	case PERF_RECORD_KSYMBOL:
		str = rec->u.ksymbol.name;
		break;
	default:
		break;
	}
	if (str)
		need = strlen(str) + 1;
	hp->cap = 0;
	hp->data = at = need ? buffer(f, need, &hp->cap) : NULL;
	hp->bytes = need;
	if (rec->type == PERF_RECORD_SAMPLE) {
		struct perf_sample *y = &hp->rec.u.sample;

		/* the stack's bytes past dyn are not valid, and not read */
		y->callchain = x->callchain ? take(&at, x->callchain, x->nr_callchain * 8) : NULL;
		y->regs_user = x->regs_user ? take(&at, x->regs_user, (size_t)x->nregs_user * 8)
					    : NULL;
		y->raw = x->raw ? take(&at, x->raw, x->raw_size) : NULL;
		y->branches = x->branches ? take(&at, x->branches,
						 (size_t)x->nr_branches * sizeof(*x->branches))
					  : NULL;
		if (!borrowed)
			y->stack_user = x->stack_user ? take(&at, x->stack_user,
							     (size_t)x->stack_user_dyn)
						      : NULL;
	} else if (str) {
		const char *copy = take(&at, str, need);

		if (rec->type == PERF_RECORD_COMM)
			hp->rec.u.comm.comm = copy;
		else if (rec->type == PERF_RECORD_KSYMBOL)
			hp->rec.u.ksymbol.name = copy;
		else
			hp->rec.u.mmap.filename = copy;
	}
	/* counted as copied (the limit of what may be held does not depend on when) */
	if (borrowed) {
		struct borrow bw = { x->stack_user, (size_t)x->stack_user_dyn, f->n };

		hp->bytes += align8((size_t)x->stack_user_dyn);
		VEC_PUSH(f->bv, f->bv_n, f->bv_cap, bw);
	}
	f->bytes += hp->bytes;
	f->n++;
}

/* a block's size in steps of 1 MB (its pages made as they are written): one grown is
 * one moved, a TLB flush of the other core while the symbolizer's thread lives */
#define BLOCK_STEP ((size_t)1 << 20)

/* A block with `need` bytes free after its stacks: the last one used if it has them. */
static int free_block(struct fused *f, size_t need)
{
	struct stack_block nb = { NULL, 0, 0, 0 };
	size_t i;

	if (f->nblocks && f->blocks[f->last_block].cap - f->blocks[f->last_block].used >= need)
		return (int)f->last_block;
	for (i = 0; i < f->nblocks; i++)
		if (!f->blocks[i].live && f->blocks[i].cap >= need)
			break;
	if (i == f->nblocks) {
		for (i = 0; i < f->nblocks && f->blocks[i].live; i++)
			;
		if (i == f->nblocks)
			VEC_PUSH(f->blocks, f->nblocks, f->blocks_cap, nb);
		f->blocks[i].cap = (need + BLOCK_STEP - 1) / BLOCK_STEP * BLOCK_STEP;
		f->blocks[i].p = xrealloc(f->blocks[i].p, f->blocks[i].cap);
	}
	f->blocks[i].used = 0;
	f->last_block = i;
	return (int)i;
}

/* The reader is about to write over [lo, hi) of its buffer: the borrowed stacks there
 * are copied now (f->bv lists them, a few tens, where the held records with the rest
 * are a few hundred bytes each). */
static void unborrow(void *arg, const void *lo, const void *hi)
{
	struct fused *f = arg;
	size_t need = 0;
	struct stack_block *blk;
	int b;

	for (size_t j = f->bv_head; j < f->bv_n; j++) {
		const struct borrow *bw = &f->bv[j];

		if (bw->p && bw->p < (const uint8_t *)hi && bw->p + bw->len > (const uint8_t *)lo)
			need += align8(bw->len);
	}
	if (!need)
		return;
	b = free_block(f, need);
	blk = &f->blocks[b];
	for (size_t j = f->bv_head; j < f->bv_n; j++) {
		struct borrow *bw = &f->bv[j];
		struct held *h;

		if (!bw->p || bw->p >= (const uint8_t *)hi || bw->p + bw->len <= (const uint8_t *)lo)
			continue;
		h = held_at(f, bw->seq);
		memcpy(blk->p + blk->used, bw->p, bw->len);
		h->rec.u.sample.stack_user = blk->p + blk->used;
		blk->used += align8(bw->len);
		h->block = b;
		blk->live++;
		bw->p = NULL;
	}
}

/* The records held, in file order, up to the first one after `horizon`. */
static void drain(struct session *s, struct fused *f, uint64_t horizon, session_record_fn fn,
		  void *arg)
{
	struct sample_ctx c;

	while (f->head < f->n && held_at(f, f->head)->time <= horizon) {
		struct held *h = held_at(f, f->head++);

		build_ctx(s, &h->rec, &c);
		fn(arg, &c);
		unbuffer(f, h->data, h->cap);
		if (h->block >= 0 && --f->blocks[h->block].live == 0)
			f->blocks[h->block].used = 0;
		f->bytes -= h->bytes;
	}
	while (f->bv_head < f->bv_n && f->bv[f->bv_head].seq < f->head)
		f->bv_head++;
	if (f->bv_head > 64 && f->bv_head * 2 > f->bv_n) {
		memmove(f->bv, f->bv + f->bv_head, (f->bv_n - f->bv_head) * sizeof(*f->bv));
		f->bv_n -= f->bv_head;
		f->bv_head = 0;
	}
}

/* Freed when the symbolizer's thread has stopped (session_stop_prefetch): the large
 * buffers are unmapped when freed, and an munmap while that thread lives interrupts
 * the other core to flush its TLB. */
static void free_later(struct session *s, void *p)
{
	if (p)
		VEC_PUSH(s->later, s->nlater, s->later_cap, p);
}

static void free_now(struct session *s)
{
	for (size_t i = 0; i < s->nlater; i++)
		free(s->later[i]);
	free(s->later);
	s->later = NULL;
	s->nlater = s->later_cap = 0;
}

static void release_fused(struct session *s, struct fused *f)
{
	for (size_t i = f->head; i < f->n; i++)
		free(held_at(f, i)->data);
	for (size_t i = 0; i < f->nblocks; i++)
		free_later(s, f->blocks[i].p);
	free(f->blocks);
	for (size_t i = 0; i < f->nspares; i++)
		free(f->spares[i].p);
	free(f->spares);
	free(f->bv);
	free_later(s, f->v);
}

/* The replay moved on: the memos' spans were told without what is to come. */
static void advance(struct session *s, uint64_t horizon)
{
	replay_advance(s->rp, horizon);
	s->user_memo.valid = s->kernel_memo.valid = 0;
}

int session_fused_possible(const struct session *s)
{
	/* --jit-dir: JIT code is all but sure, found only at the end */
	return !perf_reader_header(s->r)->directory && !(s->o.njit_dirs && s->o.load_jit);
}

void session_fused_start(struct session *s)
{
	for (size_t i = 0; i < perf_reader_nevents(s->r); i++)
		s->fused_switches |= perf_reader_event(s->r, i)->context_switch;
	s->ds.switch_records = s->fused_switches;
}

int session_fused(struct session *s, int (*wants)(uint32_t type), session_record_fn fn,
		  void *arg)
{
	struct perf_record rec;
	struct fused f;
	uint64_t round_max = 0, horizon = 0;
	int ret, rounds = 0, exact = 0, switches = 0;
	unsigned jit_said;

	memset(&f, 0, sizeof(f));
	perf_reader_on_reuse(s->r, unborrow, &f);
	s->ds.r = s->r;
	s->ds.facts = &s->facts;
	s->ds.rp = s->rp;
	s->ds.jits = s->jits;
	s->ds.sym = s->sym;
	if (!s->o.no_symbols && s->facts.records_kernel)
		symbolizer_kernel_prefetch(s->sym, s->facts.kernel_bid, s->facts.kernel_bid_size);
	perf_reader_skip_type(s->r, 0);
	for (;;) {
		unsigned said = s->d->nwarnings + s->d->nerrors;
		uint64_t t;

		ret = perf_reader_next(s->r, &rec);
		if (ret == 1)
			dispatch_record(&s->ds, &rec);
		/* damage, said in two passes in another order (framing in pass 1, samples
		 * in pass 2); the handlers' messages come in the same order either way */
		if (s->d->nwarnings + s->d->nerrors != said) {
			s->fused_why = "the reader's messages";
			goto out;
		}
		if (ret != 1)
			break;
		t = recording_time(&s->facts, &rec);
		/* the off-CPU kind decided at its start by what the attrs foretold */
		if (rec.type == PERF_RECORD_SWITCH || rec.type == PERF_RECORD_SWITCH_CPU_WIDE)
			switches = 1;
		if (switches && !s->fused_switches) {
			s->fused_why = "context switch records no event asked for";
			goto out;
		}
		/* its dump is read at the end: the records before went without it */
		if (s->ds.jit_dumps && !s->o.no_symbols && s->o.load_jit) {
			s->fused_why = "JIT code";
			goto out;
		}
		if (!s->facts.has_time) {
			/* times are positions: every record before this one is in */
			advance(s, t);
			drain(s, &f, t, fn, arg);
			if (wants(rec.type)) {
				struct sample_ctx c;

				build_ctx(s, &rec, &c);
				fn(arg, &c);
			}
		} else {
			if (wants(rec.type))
				hold(&f, s->r, &rec, t);
			if (rec.sid.has_time && t > round_max)
				round_max = t;
			if (rec.type == PERF_RECORD_FINISHED_ROUND) {
				/* perf's rule: what came before the last round's end is
				 * all there is up to its largest time */
				if (rounds++) {
					advance(s, horizon);
					drain(s, &f, horizon, fn, arg);
				}
				horizon = round_max;
			}
		}
		if (replay_inexact(s->rp) || f.bytes > HELD_MAX) {
			s->fused_why = f.bytes > HELD_MAX ? "too many records held (no rounds)"
							   : "a record late for its round";
			goto out;
		}
	}
	if (ret < 0) {
		s->fused_why = "the reader's error";
		goto out;
	}
	dispatch_end(&s->ds);
	if (s->fused_switches && !switches) {
		s->fused_why = "no context switch record where the attrs asked for them";
		goto out;
	}
	replay_finish(s->rp);
	s->user_memo.valid = s->kernel_memo.valid = 0;
	if (replay_inexact(s->rp)) {
		s->fused_why = "a process or thread told of after its records";
		goto out;
	}
	s->p->start_wall_ns = session_start_wall(s);
	jit_said = s->d->nwarnings + s->d->nerrors;
	if (!s->o.no_symbols && s->o.load_jit)
		load_jit(s);
	/* JIT code was found only now: the records already done went without it (and
	 * what loading says, two passes say before the samples' messages) */
	if (jit_procs_count(s->jits) || s->d->nwarnings + s->d->nerrors != jit_said) {
		s->fused_why = "JIT code";
		goto out;
	}
	drain(s, &f, REPLAY_FOREVER, fn, arg);
	exact = 1;
out:
	perf_reader_on_reuse(s->r, NULL, NULL);
	release_fused(s, &f);
	return exact ? 0 : 1;
}

void session_stop_prefetch(struct session *s)
{
	symbolizer_prefetch_stop(s->sym);
	free_now(s);
}

void session_quiesce(struct session *s)
{
	symbolizer_quiesce(s->sym);
}

void session_wait_writes(struct session *s)
{
	symbolizer_wait_writes(s->sym);
}

void session_close(struct session *s)
{
	if (!s)
		return;
	free_now(s);
	readahead_free(s->ra);
	jit_procs_free(s->jits);
	replay_free(s->rp);
	symbolizer_free(s->sym);
	perf_reader_close(s->r);
	free(s->input_dir);
	memset(s, 0, sizeof(*s));
}
