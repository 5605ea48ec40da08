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
	/* for each of perf's record types, the kinds that take it (bit i: sample_kinds[i]),
	 * so that a record costs a load, not a look through each kind's types */
	uint16_t kinds_of[PERF_RECORD_TYPES];
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

	uint32_t type = x->rec->type;
	unsigned m = type < PERF_RECORD_TYPES ? ps->kinds_of[type] : (1u << ps->nkinds) - 1;

	for (size_t i = 0; m; i++, m >>= 1) {
		const struct sample_kind *k = sample_kinds[i];

		if ((m & 1) && kind_takes_type(k, type) && (!k->takes || k->takes(&ps->c, x)))
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

/* One conversion's state, from its session opened to what it left to free. */
struct once {
	const struct session_options *o;
	struct profile *p;
	struct convert_stats *st;
	struct diag *d;
	/* the one pass's messages, kept until it is known to be exact (f non-NULL) */
	struct diag saved;
	char *said;
	size_t nsaid;
	FILE *f;
	struct session s;
	struct resolver_config rc;
	struct pass2 ps;
	struct resolver *res;
	struct unwinding *uw;
	struct lbr *lbr;
};

/* What the one pass kept is said now, in the order two passes say it. */
static void say_kept(struct once *x)
{
	fclose(x->f);
	x->f = NULL;
	x->d->out = x->saved.out;
	fwrite(x->said, 1, x->nsaid, x->d->out ? x->d->out : stderr);
	free(x->said);
}

/*
 * The session opened, and the mode decided: one pass (x->f kept for its messages) or
 * two (pass 1 run). 0; -1 after an error; 1 when the one pass cannot be tried (*why).
 * One pass, its messages kept: when it cannot be exact (session_fused: also when the
 * reader or JIT loading said something, which two passes say in another order) the
 * conversion is done again with two passes and what was kept is dropped; else what
 * the handlers said is said, as two passes would.
 */
static int once_open(struct once *x, int fused, const char **why)
{
	struct session_options so = *x->o;

	so.readahead = so.load_jit = 1;
	if (fused && (x->f = open_memstream(&x->said, &x->nsaid)) != NULL)
		x->d->out = x->f;
	else
		fused = FUSED_NEVER;
	if (session_open(&x->s, &so, x->p, x->d) < 0) {
		if (x->f) {
			fclose(x->f);
			free(x->said);
			x->f = NULL;
			*x->d = x->saved;
			*why = "the recording could not be opened";
			return 1;
		}
		return -1;
	}
	if (fused == FUSED_COMPRESSED && !perf_reader_header(x->s.r)->compressed)
		fused = FUSED_NEVER;
	if (fused && !session_fused_possible(&x->s)) {
		if (fused == FUSED_ONLY) {
			*why = "a --threads directory or --jit-dir";
			return 2;
		}
		fused = FUSED_NEVER;
	}
	if (x->f && fused)
		session_fused_start(&x->s);
	if (x->f && !fused) /* two passes after all: what was said is said */
		say_kept(x);
	if (!x->f && session_pass1(&x->s) < 0)
		return 3;
	return 0;
}

/* Pass 2's resolver, unwinder, LBR reader, stacks and kinds, started. */
static void pass2_start(struct once *x)
{
	struct session *s = &x->s;
	struct pass2 *ps = &x->ps;

	memset(&x->rc, 0, sizeof(x->rc));
	x->rc.p = x->p;
	x->rc.rp = s->rp;
	x->rc.sym = s->sym;
	x->rc.jits = s->jits;
	x->rc.d = x->d;
	x->rc.no_symbols = x->o->no_symbols;
	x->rc.kernel_bid = s->facts.kernel_bid;
	x->rc.kernel_bid_size = s->facts.kernel_bid_size;
	x->rc.defer_kernel = !x->o->no_symbols && s->facts.records_kernel;
	x->rc.defer_user = !x->o->no_symbols;
	x->res = resolver_new(&x->rc);
	/* unwinding needs the binaries' CFI, not their names: --no-symbols unwinds too */
	x->uw = unwinding_new(s->r, s->rp, &x->p->strings, s->sym, s->jits, x->d);
	x->lbr = lbr_new(s->r);
	ps->c.opt = x->o;
	ps->c.s = s;
	ps->c.p = x->p;
	ps->c.st = x->st;
	ps->c.stacks = stacks_new(x->p, s->rp, x->res, s->jits, x->uw, x->lbr);
	u64map_init(&ps->c.filtered_index);
	for (; sample_kinds[ps->nkinds] && ps->nkinds < MAX_KINDS; ps->nkinds++)
		if (sample_kinds[ps->nkinds]->start)
			ps->state[ps->nkinds] = sample_kinds[ps->nkinds]->start(&ps->c);
	for (uint32_t t = 0; t < PERF_RECORD_TYPES; t++) {
		ps->kinds_of[t] = 0;
		for (size_t i = 0; i < ps->nkinds; i++)
			if (kind_takes_type(sample_kinds[i], t))
				ps->kinds_of[t] |= (uint16_t)(1u << i);
	}
}

/* Pass 2 (or the one pass): 0, -1 on a reader's error, 1 when the one pass was not
 * exact (*why). */
static int pass2_run(struct once *x, const char **why)
{
	if (x->f) {
		if (session_fused(&x->s, record_type_wanted, on_record, &x->ps)) {
			*why = x->s.fused_why;
			return 1; /* still kept: what freeing the session says too */
		}
		say_kept(x);
		return 0;
	}
	return session_pass2(&x->s, record_type_wanted, on_record, &x->ps) < 0 ? -1 : 0;
}

/* What pass 2 left for later: the kinds finished, the frames expanded and named, the
 * threads named, the samples sorted. -1 when the filters let no sample through. */
static int pass2_finish(struct once *x)
{
	const struct session_options *o = x->o;
	struct session *s = &x->s;

	for (size_t i = 0; i < x->ps.nkinds; i++)
		if (sample_kinds[i]->finish)
			sample_kinds[i]->finish(x->ps.state[i], &x->ps.c);
	stacks_forget_raw(x->ps.c.stacks);
	resolver_trim(x->res);
	session_forget_processes(s);
	if (!x->st->samples && x->st->samples_filtered) {
		nothing_matched(&x->ps.c, x->d);
		return -1;
	}
	if (x->rc.defer_user)
		fixups_expand_user(x->res, x->p, s->rp, s->sym);
	session_stop_prefetch(s);
	if (x->rc.defer_kernel)
		fixups_name_kernel(x->res, x->p, s->sym, s->facts.kernel_bid,
				   s->facts.kernel_bid_size);
	/* as simpleperf's report shows an Android app's stacks: its Java frames without the
	 * runtime's between them */
	if (!o->no_symbols && !o->show_art_frames && perf_reader_simpleperf(s->r))
		artframes_hide(x->p, perf_reader_simpleperf(s->r));
	fixups_mapping_flags(x->p, o->sym.inline_frames && !o->no_symbols);
	if (!x->p->aggregate || x->p->timeline)
		fixups_thread_names(x->p, s->rp);
	if (!x->p->aggregate)
		profile_sort_samples(x->p);
	return 0;
}

/* The closing summary and the notes of each part. */
static void once_report(struct once *x)
{
	const struct session_options *o = x->o;
	struct stack_builder *stacks = x->ps.c.stacks;
	struct summary_input si;
	struct diag *d = x->d;

	memset(&si, 0, sizeof(si));
	si.r = x->s.r;
	si.p = x->p;
	si.rp = x->s.rp;
	si.jits = x->s.jits;
	si.res = x->res;
	si.sym = x->s.sym;
	si.quiet = o->quiet;
	si.no_symbols = o->no_symbols;
	summary_report(&si, x->st, d);
	if (o->warn_kernel_unnamed && !o->no_symbols)
		say_kernel_unnamed(x->p, x->s.sym, o->input, d);
	if (o->quiet)
		return;
	/* one in a hundred at least: a lone one is rather a frame-pointer walk through
	 * garbage, which the kernel stops there too */
	if (stacks_at_kernel_limit(stacks) && stacks_at_kernel_limit(stacks) * 100 >= x->st->samples)
		diag_note(d, "%" PRIu64 " samples have callchains of %d addresses, the kernel's limit "
			  "(kernel.perf_event_max_stack): their outermost frames are cut; raise it "
			  "(sysctl -w kernel.perf_event_max_stack=1024) and record again",
			  stacks_at_kernel_limit(stacks), STACKS_KERNEL_LIMIT);
	if (stacks_kernel_leaf_added(stacks))
		diag_note(d, "%" PRIu64 " samples were taken in the kernel with user-space callchains "
			  "only (--user-callchains): their kernel frame is the sampled address alone",
			  stacks_kernel_leaf_added(stacks));
	unwinding_report(x->uw, d);
	lbr_report(x->lbr, d);
	for (size_t i = 0; i < x->ps.nkinds; i++)
		if (sample_kinds[i]->report)
			sample_kinds[i]->report(x->ps.state[i], &x->ps.c, d);
}

/* Pass 2's parts freed; the session, resolver and unwinder left to `later` (or freed
 * now when the one pass is to be thrown away); the kept messages dropped. */
static void once_release(struct once *x, struct convert_later *later, int ret)
{
	for (size_t i = 0; i < x->ps.nkinds; i++)
		if (sample_kinds[i]->free)
			sample_kinds[i]->free(x->ps.state[i]);
	stacks_free(x->ps.c.stacks);
	lbr_free(x->lbr);
	u64map_release(&x->ps.c.filtered_index);
	free(x->ps.c.filtered);
	free_later(ret == 1 ? NULL : later, &x->s, x->res, x->uw);
	if (x->f) {
		fclose(x->f);
		free(x->said);
		*x->d = x->saved;
	}
}

/*
 * One conversion: two passes, or with `fused` one (session_fused) when the recording
 * is compressed (or `fused` is FUSED_ALWAYS). 0, -1 after an error, 1 when the one
 * pass could not be made exact: what it made is to be thrown away.
 */
static int convert_once(const struct session_options *o, struct profile *p,
			struct convert_stats *st, struct diag *d, struct convert_later *later,
			int fused, const char **why)
{
	struct once x;
	int ret;

	convert_done(later); /* the last conversion's leftovers: one at a time */
	memset(&x, 0, sizeof(x));
	memset(st, 0, sizeof(*st));
	x.o = o;
	x.p = p;
	x.st = st;
	x.d = d;
	x.saved = *d;
	ret = once_open(&x, fused, why);
	if (ret == 1 || ret == -1)
		return ret; /* no session */
	if (ret != 0) {
		ret = ret == 2 ? 1 : -1;
		goto out;
	}
	pass2_start(&x);
	ret = pass2_run(&x, why);
	if (ret == 0 && (ret = pass2_finish(&x)) == 0)
		once_report(&x);
out:
	once_release(&x, later, ret);
	return ret;
}

/* PERFCONV_FUSED: "0" two passes always, "1" one pass tried on every recording,
 * "only" that and no second try (an error instead: for tests); else one pass for
 * compressed recordings. */
static int fused_mode(const struct session_options *o, int *only)
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

int convert_read(const struct session_options *o, struct profile *p, struct convert_stats *st,
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
