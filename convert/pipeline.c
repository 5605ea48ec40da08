/* pipeline: perf.data in, profile model out; the order of the passes. */
#include "convert/pipeline.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "convert/dispatch.h"
#include "convert/fixups.h"
#include "convert/readahead.h"
#include "convert/recording.h"
#include "convert/replay.h"
#include "convert/resolve.h"
#include "convert/stacks.h"
#include "convert/unwinding.h"
#include "formats/perfdata.h"
#include "symbolize/jitprocs.h"

/* What pass 2 needs. */
struct pass2 {
	const struct convert_options *opt;
	struct profile *p;
	struct convert_stats *st;
	struct perf_reader *r;
	const struct recording_facts *facts;
	struct replay *rp;
	struct stack_builder *stacks;
};

/* Is the sample's process, thread and thread name one the filters let through? */
static int wanted(const struct convert_options *o, const struct profile *p, uint32_t pid,
		  uint32_t tid, uint32_t comm)
{
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
		const char *name = profile_text(p, comm);

		ok = 0;
		for (size_t i = 0; i < o->ncomms; i++)
			ok |= strcmp(o->comms[i], name) == 0;
		if (!ok)
			return 0;
	}
	return 1;
}

static void on_sample(struct pass2 *c, const struct perf_record *rec, uint64_t time)
{
	const struct perf_sample *s = &rec->u.sample;
	uint32_t pid = rec->sid.pid, tid = rec->sid.tid;
	struct pc_sample ps;
	const struct perf_event_desc *ev;

	memset(&ps, 0, sizeof(ps));
	ps.comm = replay_thread_name(c->rp, pid, tid, time);
	if (!wanted(c->opt, c->p, pid, tid, ps.comm)) {
		c->st->samples_filtered++;
		return;
	}
	ev = rec->event >= 0 ? perf_reader_event(c->r, (size_t)rec->event) : NULL;
	ps.stack = stacks_sample_node(c->stacks, rec, pid, time);
	ps.time = c->facts->has_time ? time : 0;
	ps.pid = pid;
	ps.tid = tid;
	ps.cpu = rec->sid.has_cpu ? rec->sid.cpu : PC_NO_CPU;
	ps.event = (uint16_t)(rec->event >= 0 ? rec->event : 0);
	ps.count = 1;
	ps.period = s->has_period ? s->period : (ev && !ev->freq ? ev->sample_period : 1);
	profile_add_sample(c->p, &ps);
	c->st->samples++;
}

/* Pass 2: samples. */
static int pass_samples(struct pass2 *c)
{
	struct perf_record rec;
	int ret;

	perf_reader_skip_type(c->r, 0);
	while ((ret = perf_reader_next(c->r, &rec)) == 1)
		if (rec.type == PERF_RECORD_SAMPLE)
			on_sample(c, &rec, recording_time(c->facts, &rec));
	return ret;
}

/*
 * When the recording began, in ns since the epoch, 0 when unknown: from the header's
 * CLOCK_DATA, else from when perf finished writing the file, less what it recorded.
 */
static uint64_t recording_start_wall(const struct convert_options *o, const struct profile *p,
				     const struct dispatch *ds)
{
	struct stat st;
	uint64_t end;

	if (!ds->have_times)
		return 0;
	if (p->has_wall_clock)
		return ds->first_time - p->clock_ns + p->wall_ns;
	if (strcmp(o->input, "-") == 0 || stat(o->input, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	end = (uint64_t)st.st_mtim.tv_sec * 1000000000 + (uint64_t)st.st_mtim.tv_nsec;
	return end - (ds->last_time - ds->first_time);
}

static void load_jit(const struct convert_options *o, struct jit_procs *jits,
		     const struct perf_reader *r, const struct dispatch *ds, const char *input_dir,
		     const struct profile *p, struct diag *d)
{
	struct jit_search s;

	memset(&s, 0, sizeof(s));
	s.input_dir = input_dir;
	s.jit_dirs = o->jit_dirs;
	s.njit_dirs = o->njit_dirs;
	s.use_tmp_maps = recording_made_here(r);
	s.clock_monotonic = recording_clock_monotonic(r);
	s.time_conv = ds->have_time_conv ? &ds->time_conv : NULL;
	s.demangle = o->sym.demangle;
	s.recording_start_wall_ns = recording_start_wall(o, p, ds);
	jit_procs_load(jits, &s, d, o->quiet);
}

int convert_read(const struct convert_options *o, struct profile *p, struct convert_stats *st,
		 struct diag *d)
{
	struct sym_options so = o->sym;
	struct recording_facts facts;
	struct dispatch ds;
	struct resolver_config rc;
	struct pass2 c;
	struct perf_reader *r;
	struct symbolizer *sym;
	struct replay *rp;
	struct jit_procs *jits;
	struct resolver *res = NULL;
	struct stack_builder *stacks = NULL;
	struct unwinding *uw = NULL;
	struct summary_input si;
	char *dir = NULL;
	int ret = -1;

	memset(st, 0, sizeof(*st));
	r = perf_reader_open(o->input, d);
	if (!r)
		return -1;
	if (!so.input_dir)
		so.input_dir = dir = recording_input_dir(o->input);
	sym = symbolizer_new(&so, d);
	rp = replay_new(&p->strings);
	jits = jit_procs_new(&p->strings);
	recording_read(r, p, &facts);

	/* pass 1: process state; kernel symbols and the first samples' objects load
	 * meanwhile on the symbolizer's thread */
	memset(&ds, 0, sizeof(ds));
	ds.r = r;
	ds.facts = &facts;
	ds.rp = rp;
	ds.jits = jits;
	ds.sym = sym;
	if (!o->no_symbols && facts.records_kernel)
		symbolizer_kernel_prefetch(sym, facts.kernel_bid, facts.kernel_bid_size);
	if (!o->no_symbols)
		ds.ra = readahead_new(sym, rp, &p->strings, perf_reader_header(r));
	if (dispatch_pass(&ds) < 0)
		goto out;
	replay_finish(rp);
	if (!o->no_symbols)
		load_jit(o, jits, r, &ds, so.input_dir, p, d);

	/* pass 2: samples into stacks */
	memset(&rc, 0, sizeof(rc));
	rc.p = p;
	rc.rp = rp;
	rc.sym = sym;
	rc.jits = jits;
	rc.d = d;
	rc.no_symbols = o->no_symbols;
	rc.kernel_bid = facts.kernel_bid;
	rc.kernel_bid_size = facts.kernel_bid_size;
	rc.defer_kernel = !o->no_symbols && facts.records_kernel;
	rc.defer_user = !o->no_symbols;
	res = resolver_new(&rc);
	if (!o->no_symbols)
		uw = unwinding_new(r, rp, &p->strings, sym, jits, d);
	stacks = stacks_new(p, rp, res, jits, uw);
	memset(&c, 0, sizeof(c));
	c.opt = o;
	c.p = p;
	c.st = st;
	c.r = r;
	c.facts = &facts;
	c.rp = rp;
	c.stacks = stacks;
	perf_reader_rewind(r);
	if (pass_samples(&c) < 0)
		goto out;

	/* what pass 2 left for later */
	if (rc.defer_user)
		fixups_expand_user(res, p, rp, sym);
	symbolizer_prefetch_stop(sym);
	if (rc.defer_kernel)
		fixups_name_kernel(res, p, sym, facts.kernel_bid, facts.kernel_bid_size);
	fixups_mapping_flags(p, o->sym.inline_frames && !o->no_symbols);
	if (!p->aggregate) {
		fixups_thread_names(p, rp);
		profile_sort_samples(p);
	}

	memset(&si, 0, sizeof(si));
	si.r = r;
	si.p = p;
	si.rp = rp;
	si.jits = jits;
	si.res = res;
	si.sym = sym;
	si.quiet = o->quiet;
	si.no_symbols = o->no_symbols;
	summary_report(&si, st, d);
	if (!o->quiet)
		unwinding_report(uw, d);
	ret = 0;
out:
	stacks_free(stacks);
	unwinding_free(uw);
	resolver_free(res);
	readahead_free(ds.ra);
	jit_procs_free(jits);
	replay_free(rp);
	symbolizer_free(sym);
	perf_reader_close(r);
	free(dir);
	return ret;
}
