/* session: one recording opened for reading, with the state every pass shares. */
#include "convert/session.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "convert/reorder.h"

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
	uint64_t due = replay_next_release(s->rp);

	perf_reader_rewind(s->r);
	perf_reader_skip_type(s->r, 0);
	while ((ret = perf_reader_next(s->r, &rec)) == 1) {
		/* the processes no record from here on asks for: what is live is held */
		if (rec.index > due) {
			if ((freed = replay_release(s->rp, rec.index)) != 0) {
				s->user_memo.valid = 0;
				trim_after(&unreturned, freed, step);
			}
			due = replay_next_release(s->rp);
		}
		if (!wants(rec.type))
			continue;
		build_ctx(s, &rec, &c);
		fn(arg, &c);
	}
	return ret;
}

/* ---- one pass ---- */

/* A round's records held (two rounds, as perf orders them) take some megabytes; this
 * many are not a recording with rounds. */
#define HELD_MAX ((size_t)64 << 20)

/* The one pass's deliver callback: a record the replay can now answer for. */
struct fused_deliver {
	struct session *s;
	session_record_fn fn;
	void *arg;
};

static void deliver(void *arg, const struct perf_record *rec)
{
	struct fused_deliver *fd = arg;
	struct sample_ctx c;

	build_ctx(fd->s, rec, &c);
	fd->fn(fd->arg, &c);
}

/* Freed when the symbolizer's thread has stopped (session_stop_prefetch): the large
 * buffers are unmapped when freed, and an munmap while that thread lives interrupts
 * the other core to flush its TLB. */
static void free_later(struct session *s, void *p)
{
	if (p)
		VEC_PUSH(s->later, s->nlater, s->later_cap, p);
}

static void free_later_cb(void *arg, void *p)
{
	free_later(((struct fused_deliver *)arg)->s, p);
}

static void free_now(struct session *s)
{
	for (size_t i = 0; i < s->nlater; i++)
		free(s->later[i]);
	free(s->later);
	s->later = NULL;
	s->nlater = s->later_cap = 0;
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

/* A sample's user stack inflated into the reader's buffer: held where it is until the
 * reader is about to write over it (reorder_unborrow). */
static int stack_borrowed(const struct session *s, const struct perf_record *rec)
{
	const struct perf_sample *x = &rec->u.sample;

	return rec->type == PERF_RECORD_SAMPLE && x->stack_user && x->stack_user_dyn &&
	       perf_reader_inflated(s->r, x->stack_user, (size_t)x->stack_user_dyn);
}

int session_fused(struct session *s, int (*wants)(uint32_t type), session_record_fn fn,
		  void *arg)
{
	struct perf_record rec;
	struct fused_deliver fd = { s, fn, arg };
	struct reorder_ops ops = { deliver, free_later_cb, &fd };
	struct reorder *q = reorder_new(&ops);
	uint64_t horizon;
	int ret, exact = 0, switches = 0;
	unsigned jit_said;

	perf_reader_on_reuse(s->r, reorder_unborrow, q);
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
			reorder_flush(q, t);
			if (wants(rec.type))
				deliver(&fd, &rec);
		} else {
			if (wants(rec.type))
				reorder_hold(q, &rec, t, stack_borrowed(s, &rec));
			if (rec.sid.has_time)
				reorder_seen(q, t);
			if (rec.type == PERF_RECORD_FINISHED_ROUND &&
			    reorder_round_end(q, &horizon)) {
				advance(s, horizon);
				reorder_flush(q, horizon);
			}
		}
		if (replay_inexact(s->rp) || reorder_bytes(q) > HELD_MAX) {
			s->fused_why = reorder_bytes(q) > HELD_MAX ? "too many records held (no rounds)"
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
	reorder_flush(q, REPLAY_FOREVER);
	exact = 1;
out:
	perf_reader_on_reuse(s->r, NULL, NULL);
	reorder_free(q);
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
