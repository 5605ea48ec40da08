/* pipeline: perf.data in, profile model out; the order of the passes. */
#include "convert/pipeline.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "convert/artframes.h"
#include "convert/fixups.h"
#include "convert/kinds.h"
#include "convert/lbr.h"
#include "convert/resolve.h"
#include "convert/session.h"
#include "convert/stacks.h"
#include "convert/unwinding.h"
#include "common/util.h"

#define MAX_KINDS 16

enum { FUSED_NEVER = 0, FUSED_COMPRESSED = 1, FUSED_ALWAYS = 2, FUSED_ONLY = 3 };

/* Pass 2: each kind's state, and which kinds take which record types. */
struct pass2 {
	struct conversion c;
	void *state[MAX_KINDS];
	size_t nkinds;
};

static int kind_takes_type(const struct sample_kind *k, uint32_t type)
{
	for (size_t i = 0; i < KIND_MAX_TYPES && k->types[i]; i++)
		if (k->types[i] == type)
			return 1;
	return 0;
}

static int record_type_wanted(uint32_t type)
{
	for (size_t i = 0; sample_kinds[i]; i++)
		if (kind_takes_type(sample_kinds[i], type))
			return 1;
	return 0;
}

/*
 * What a conversion leaves to free once its profile is made (its session, the
 * symbolizer's tables, libdw's trees, the mapped files): 1 to 1.5 ms of freeing and
 * unmapping, a tenth of a warm mt-g conversion. Kept in `later` until the next
 * conversion with it or convert_done(), and left to the process's exit by
 * convert_exit().
 */
struct leftovers {
	struct session s;
	struct resolver *res;
	struct unwinding *uw;
};

static void free_leftovers(struct leftovers *l)
{
	unwinding_free(l->uw);
	resolver_free(l->res);
	session_close(&l->s);
	free(l);
}

void convert_done(struct convert_later *later)
{
	if (later && later->l) {
		free_leftovers(later->l);
		later->l = NULL;
	}
}

void convert_exit(struct convert_later *later)
{
#if defined(__SANITIZE_ADDRESS__)
	/* a leak checker's build: everything freed, so that it reports only true leaks */
	convert_done(later);
#else
	if (later && later->l) {
		/* the exit frees it all at once, but the cache entries it is still
		 * writing are for the next run */
		session_wait_writes(&later->l->s);
		later->l = NULL;
	}
#endif
}

static void free_later(struct convert_later *later, struct session *s, struct resolver *res,
		       struct unwinding *uw)
{
	struct leftovers *l = xmalloc(sizeof(*l));

	/* what the symbolizer's thread has to say is said now, in its place */
	session_quiesce(s);
	l->s = *s;
	l->res = res;
	l->uw = uw;
	if (!later) {
		free_leftovers(l);
		return;
	}
	convert_done(later);
	later->l = l;
}

static void on_record(void *arg, const struct sample_ctx *x)
{
	struct pass2 *ps = arg;

	for (size_t i = 0; i < ps->nkinds; i++) {
		const struct sample_kind *k = sample_kinds[i];

		if (kind_takes_type(k, x->rec->type) && (!k->takes || k->takes(&ps->c, x)))
			k->record(ps->state[i], &ps->c, x);
	}
}

static int by_samples(const void *a, const void *b)
{
	const struct conversion_proc *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

/* The filters let no sample through: say so, with the processes there are, so that
 * an empty profile is not written (or uploaded) as if it were the answer. */
static void nothing_matched(struct conversion *c, struct diag *d)
{
	const size_t top = 20;

	qsort(c->filtered, c->nfiltered, sizeof(*c->filtered), by_samples);
	diag_error(d, c->opt->input, DIAG_NO_OFFSET, "no sample matches --pid, --tid or --comm "
		   "(%" PRIu64 " samples left out); the processes with samples:",
		   c->st->samples_filtered);
	for (size_t i = 0; i < c->nfiltered && i < top; i++)
		diag_note(d, "  %8" PRIu64 "  %s (pid %u)", c->filtered[i].samples,
			  profile_text(c->p, c->filtered[i].comm), c->filtered[i].pid);
	if (c->nfiltered > top)
		diag_note(d, "  ... and %zu more (perfconv info lists threads too)", c->nfiltered - top);
}

static void session_options_of(const struct convert_options *o, struct session_options *so)
{
	memset(so, 0, sizeof(*so));
	so->input = o->input;
	so->input_mem = o->input_mem;
	so->input_len = o->input_len;
	so->input_mtime_ns = o->input_mtime_ns;
	so->jit_check_owner = o->jit_check_owner;
	so->jit_owner_uid = o->jit_owner_uid;
	so->sym = o->sym;
	so->no_symbols = o->no_symbols;
	so->readahead = 1;
	so->load_jit = 1;
	so->quiet = o->quiet;
	so->jit_dirs = o->jit_dirs;
	so->njit_dirs = o->njit_dirs;
	so->jit_store = o->jit_store;
	so->pids = o->pids;
	so->npids = o->npids;
	so->tids = o->tids;
	so->ntids = o->ntids;
	so->comms = o->comms;
	so->ncomms = o->ncomms;
}

/*
 * For the watcher (no summary a chunk), kernel frames left unnamed are still said,
 * with why (no CAP_SYSLOG, /proc/kallsyms hidden, another kernel's): a warning, which
 * the watcher says once per cause an hour.
 */
static void say_kernel_unnamed(const struct profile *p, struct symbolizer *sym,
			       const char *input, struct diag *d)
{
	const char *why;

	for (size_t i = 0; i < p->nframes; i++) {
		if (p->frames[i].kind != FRAME_KERNEL || p->frames[i].symbolized)
			continue;
		why = symbolizer_kernel_source(sym);
		diag_warn(d, input, DIAG_NO_OFFSET, "kernel frames cannot be named: %s",
			  why ? why : "no kernel symbols");
		return;
	}
}

/*
 * One conversion: two passes, or with `fused` one (session_fused) when the recording
 * is compressed (or `fused` is FUSED_ALWAYS). 0, -1 after an error, 1 when the one
 * pass could not be made exact: what it made is to be thrown away.
 */
static int convert_once(const struct convert_options *o, struct profile *p,
			struct convert_stats *st, struct diag *d, struct convert_later *later,
			int fused, const char **why)
{
	struct diag saved = *d;
	char *said = NULL;
	size_t nsaid = 0;
	FILE *f = NULL;
	struct session_options so;
	struct session s;
	struct resolver_config rc;
	struct pass2 ps;
	struct resolver *res = NULL;
	struct unwinding *uw = NULL;
	struct lbr *lbr = NULL;
	struct summary_input si;
	int ret = -1;

	convert_done(later); /* the last conversion's leftovers: one at a time */
	memset(st, 0, sizeof(*st));
	memset(&ps, 0, sizeof(ps));
	session_options_of(o, &so);
	/*
	 * One pass, its messages kept: when it cannot be exact (session_fused: also when
	 * the reader or JIT loading said something, which two passes say in another
	 * order) the conversion is done again with two passes and what was kept is
	 * dropped; else what the handlers said is said, as two passes would.
	 */
	if (fused && (f = open_memstream(&said, &nsaid)) != NULL)
		d->out = f;
	else
		fused = FUSED_NEVER;
	if (session_open(&s, &so, p, d) < 0) {
		if (f) {
			fclose(f);
			free(said);
			*d = saved;
			*why = "the recording could not be opened";
			return 1;
		}
		return -1;
	}
	if (fused == FUSED_COMPRESSED && !perf_reader_header(s.r)->compressed)
		fused = FUSED_NEVER;
	if (fused && !session_fused_possible(&s)) {
		if (fused == FUSED_ONLY) {
			*why = "a --threads directory or --jit-dir";
			ret = 1;
			goto out;
		}
		fused = FUSED_NEVER;
	}
	if (f && fused)
		session_fused_start(&s);
	if (f && !fused) { /* two passes after all: what was said is said */
		fclose(f);
		f = NULL;
		d->out = saved.out;
		fwrite(said, 1, nsaid, d->out ? d->out : stderr);
		free(said);
	}
	if (!f && session_pass1(&s) < 0)
		goto out;

	/* pass 2: records into stacks, by kind */
	memset(&rc, 0, sizeof(rc));
	rc.p = p;
	rc.rp = s.rp;
	rc.sym = s.sym;
	rc.jits = s.jits;
	rc.d = d;
	rc.no_symbols = o->no_symbols;
	rc.kernel_bid = s.facts.kernel_bid;
	rc.kernel_bid_size = s.facts.kernel_bid_size;
	rc.defer_kernel = !o->no_symbols && s.facts.records_kernel;
	rc.defer_user = !o->no_symbols;
	res = resolver_new(&rc);
	/* unwinding needs the binaries' CFI, not their names: --no-symbols unwinds too */
	uw = unwinding_new(s.r, s.rp, &p->strings, s.sym, s.jits, d);
	lbr = lbr_new(s.r);
	ps.c.opt = o;
	ps.c.s = &s;
	ps.c.p = p;
	ps.c.st = st;
	ps.c.stacks = stacks_new(p, s.rp, res, s.jits, uw, lbr);
	u64map_init(&ps.c.filtered_index);
	for (; sample_kinds[ps.nkinds] && ps.nkinds < MAX_KINDS; ps.nkinds++)
		if (sample_kinds[ps.nkinds]->start)
			ps.state[ps.nkinds] = sample_kinds[ps.nkinds]->start(&ps.c);
	if (f) {
		int inexact = session_fused(&s, record_type_wanted, on_record, &ps);

		if (inexact) {
			*why = s.fused_why;
			ret = 1; /* still kept: what freeing the session says too */
			goto out;
		}
		/* what the handlers said, in the order two passes say it */
		fclose(f);
		f = NULL;
		d->out = saved.out;
		fwrite(said, 1, nsaid, d->out ? d->out : stderr);
		free(said);
	} else if (session_pass2(&s, record_type_wanted, on_record, &ps) < 0) {
		goto out;
	}
	for (size_t i = 0; i < ps.nkinds; i++)
		if (sample_kinds[i]->finish)
			sample_kinds[i]->finish(ps.state[i], &ps.c);
	stacks_forget_raw(ps.c.stacks);
	resolver_trim(res);
	session_forget_processes(&s);
	if (!st->samples && st->samples_filtered) {
		nothing_matched(&ps.c, d);
		goto out;
	}

	/* what pass 2 left for later */
	if (rc.defer_user)
		fixups_expand_user(res, p, s.rp, s.sym);
	session_stop_prefetch(&s);
	if (rc.defer_kernel)
		fixups_name_kernel(res, p, s.sym, s.facts.kernel_bid, s.facts.kernel_bid_size);
	/* as simpleperf's report shows an Android app's stacks: its Java frames without the
	 * runtime's between them */
	if (!o->no_symbols && !o->show_art_frames && perf_reader_simpleperf(s.r))
		artframes_hide(p, perf_reader_simpleperf(s.r));
	fixups_mapping_flags(p, o->sym.inline_frames && !o->no_symbols);
	if (!p->aggregate || p->timeline)
		fixups_thread_names(p, s.rp);
	if (!p->aggregate)
		profile_sort_samples(p);

	memset(&si, 0, sizeof(si));
	si.r = s.r;
	si.p = p;
	si.rp = s.rp;
	si.jits = s.jits;
	si.res = res;
	si.sym = s.sym;
	si.quiet = o->quiet;
	si.no_symbols = o->no_symbols;
	summary_report(&si, st, d);
	if (o->warn_kernel_unnamed && !o->no_symbols)
		say_kernel_unnamed(p, s.sym, o->input, d);
	/* one in a hundred at least: a lone one is rather a frame-pointer walk through
	 * garbage, which the kernel stops there too */
	if (!o->quiet && stacks_at_kernel_limit(ps.c.stacks) &&
	    stacks_at_kernel_limit(ps.c.stacks) * 100 >= st->samples)
		diag_note(d, "%" PRIu64 " samples have callchains of %d addresses, the kernel's limit "
			  "(kernel.perf_event_max_stack): their outermost frames are cut; raise it "
			  "(sysctl -w kernel.perf_event_max_stack=1024) and record again",
			  stacks_at_kernel_limit(ps.c.stacks), STACKS_KERNEL_LIMIT);
	if (!o->quiet && stacks_kernel_leaf_added(ps.c.stacks))
		diag_note(d, "%" PRIu64 " samples were taken in the kernel with user-space callchains "
			  "only (--user-callchains): their kernel frame is the sampled address alone",
			  stacks_kernel_leaf_added(ps.c.stacks));
	if (!o->quiet) {
		unwinding_report(uw, d);
		lbr_report(lbr, d);
	}
	for (size_t i = 0; i < ps.nkinds && !o->quiet; i++)
		if (sample_kinds[i]->report)
			sample_kinds[i]->report(ps.state[i], &ps.c, d);
	ret = 0;
out:
	for (size_t i = 0; i < ps.nkinds; i++)
		if (sample_kinds[i]->free)
			sample_kinds[i]->free(ps.state[i]);
	stacks_free(ps.c.stacks);
	lbr_free(lbr);
	u64map_release(&ps.c.filtered_index);
	free(ps.c.filtered);
	free_later(ret == 1 ? NULL : later, &s, res, uw);
	if (f) {
		fclose(f);
		free(said);
		*d = saved;
	}
	return ret;
}

/* PERFCONV_FUSED: "0" two passes always, "1" one pass tried on every recording,
 * "only" that and no second try (an error instead: for tests); else one pass for
 * compressed recordings. */
static int fused_mode(const struct convert_options *o, int *only)
{
	const char *e = getenv("PERFCONV_FUSED");

	*only = 0;
	if (strcmp(o->input, "-") == 0)
		return FUSED_NEVER; /* a pipe is read once: no second try */
	if (!e || !*e)
		return FUSED_COMPRESSED;
	if (strcmp(e, "0") == 0)
		return FUSED_NEVER;
	*only = strcmp(e, "only") == 0;
	return *only ? FUSED_ONLY : FUSED_ALWAYS;
}

/* The profile as the caller gave it: empty, with its shape (output_shape_profile). */
static void profile_reset(struct profile *p)
{
	int aggregate = p->aggregate, timeline = p->timeline != NULL;
	int by_object = p->frames_by_object, threads = p->aggregate_threads;
	uint64_t aggregate_ns = p->aggregate_ns;

	profile_release(p);
	profile_init(p);
	p->aggregate = aggregate;
	p->aggregate_ns = aggregate_ns;
	p->frames_by_object = by_object;
	p->aggregate_threads = threads;
	if (timeline)
		profile_keep_timeline(p);
}

int convert_read(const struct convert_options *o, struct profile *p, struct convert_stats *st,
		 struct diag *d, struct convert_later *later)
{
	int only, mode = fused_mode(o, &only), ret;
	const char *why = "";

	if (mode == FUSED_NEVER)
		return convert_once(o, p, st, d, later, FUSED_NEVER, &why);
	ret = convert_once(o, p, st, d, later, mode, &why);
	if (ret != 1)
		return ret;
	if (only) {
		diag_error(d, o->input, DIAG_NO_OFFSET,
			   "PERFCONV_FUSED=only: one pass could not be made exact (%s)", why);
		return -1;
	}
	profile_reset(p);
	return convert_once(o, p, st, d, later, FUSED_NEVER, &why);
}
