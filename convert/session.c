/* session: one recording opened for reading, with the state every pass shares. */
#include "convert/session.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int session_open(struct session *s, const struct session_options *o, struct profile *p,
		 struct diag *d)
{
	memset(s, 0, sizeof(*s));
	s->o = *o;
	s->p = p;
	s->d = d;
	s->r = perf_reader_open(o->input, d);
	if (!s->r)
		return -1;
	if (!s->o.sym.input_dir)
		s->o.sym.input_dir = s->input_dir = recording_input_dir(o->input);
	s->sym = symbolizer_new(&s->o.sym, d);
	s->rp = replay_new(&p->strings);
	s->jits = jit_procs_new(&p->strings);
	recording_read(s->r, p, &s->facts);
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

int session_pass2(struct session *s, int (*wants)(uint32_t type), session_record_fn fn,
		  void *arg)
{
	struct perf_record rec;
	struct sample_ctx c;
	int ret;

	perf_reader_rewind(s->r);
	perf_reader_skip_type(s->r, 0);
	while ((ret = perf_reader_next(s->r, &rec)) == 1) {
		if (!wants(rec.type))
			continue;
		build_ctx(s, &rec, &c);
		fn(arg, &c);
	}
	return ret;
}

void session_stop_prefetch(struct session *s)
{
	symbolizer_prefetch_stop(s->sym);
}

void session_quiesce(struct session *s)
{
	symbolizer_quiesce(s->sym);
}

void session_close(struct session *s)
{
	if (!s)
		return;
	readahead_free(s->ra);
	jit_procs_free(s->jits);
	replay_free(s->rp);
	symbolizer_free(s->sym);
	perf_reader_close(s->r);
	free(s->input_dir);
	memset(s, 0, sizeof(*s));
}
