/* chrome: the Chrome Trace Event Format, each thread a timeline of what it ran.
 *
 * Format: "Trace Event Format" (Google document 1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU),
 * as read by Perfetto UI, chrome://tracing and speedscope. "X" events of one thread
 * must nest; viewers that sort by ts alone keep file order for equal times, so a
 * parent is written before the children that start with it.
 *
 * speedscope (1.25) imports these files too. It turns each X event into a begin and
 * an end, keys both by the name followed by the args as JSON, and sorts the ends by
 * time; where several end at one time it ends first one whose key is that of the slice
 * on top of its stack, else one with its name, else the first, and where slices end
 * and others begin at one time, it takes a begin first when its key is the next end's.
 * It pairs each end with its own begin, and warns of nothing, when
 *   (1) slices that end at one time and share a name share their key, and
 *   (2) the outermost slice beginning at a time has a key no slice ending then has.
 * For (1), a slice's "caller" is the nearest other function out of the outermost
 * slice of its function that ends with it: recursion, direct or through other
 * functions, is one key. For (2): the outermost slice beginning at a time is of
 * another function than the outermost one ending (else the stacks would still share
 * it), so only slices of its function that end deeper can have its key; where their
 * caller is its caller, they get a "depth", that of the outermost of them, which is
 * deeper than the beginning one and every slice of its function that ends with it,
 * so that even a depth of theirs differs. Slices of no duration (samples at one time)
 * and a gap that the placement of samples closes (every slice ending at the time all
 * begin again) would escape these rules: neither is written. Functions that share a
 * name but not file or module and end together still break (1): no key can join them.
 */
#include "formats/chrome.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/spool.h"
#include "common/version.h"
#include "formats/profview.h"
#include "formats/json.h"

/* What a slice is keyed by besides its function: see the top of this file. */
struct ct_key {
	const struct pc_function *caller; /* NULL: none (the thread's outermost function) */
	int64_t depth;                    /* -1: none */
};

/* What each spool of a thread's passes keeps in memory before it goes to a file. */
#ifndef CT_SPOOL_MEMORY
#define CT_SPOOL_MEMORY (1u << 20)
#endif

/* A sample shown, as the first pass over a thread places it. */
struct ct_kept {
	uint64_t t;        /* its time from the origin */
	uint64_t close;    /* when the slices that end at it end (from the second sample on) */
	uint32_t common;   /* depth its stack shares with the sample before, 0 after a gap */
	uint32_t fnode;
};

/* What a slice takes from the sample where it ends (j, the thread's end included). */
struct ct_end {
	uint64_t close;    /* close[j] */
	uint32_t fnode;    /* j's stack */
	uint32_t common;   /* common[j] */
	uint32_t after;    /* common[] where the slices of j's stack at depth common[j] end */
	uint8_t last;      /* j is past the thread's last sample */
	uint8_t at_time;   /* close[j] is j's time: slices begin as these end */
};

/* The nearest sample after the one looked at whose common[] is `common` or less. */
struct ct_next {
	uint32_t common;
	struct ct_end end;
};

struct ct_writer {
	const struct profile *p;
	struct profview v;
	int clock_event;       /* periods are nanoseconds: a long gap is time off the CPU */
	uint64_t origin;
	FILE *out;
	/* per thread, reused: the samples shown (first pass), and the end of each slice
	 * (second pass, written back to front), spooled: a thread of any length costs
	 * the spools' memory */
	struct spool *kept, *ends;
	struct ct_next *next;  /* second pass: a stack of candidates, common[] increasing */
	struct ct_end *at;     /* third pass: the ends of the slices opening at a sample, by depth */
	uint32_t *path;        /* fnodes of the stack whose slices are written, root first */
	uint32_t *next_path;   /* fnodes of the stack where a slice ends */
	struct ct_key *open;   /* the key of the slice open at each depth */
	size_t next_cap, at_cap, path_cap, next_path_cap, open_cap;
	int nevents;           /* written so far: all but the first begin with a comma */
};

static const char *category(uint8_t kind)
{
	switch (kind) {
	case FRAME_KERNEL: return "kernel";
	case FRAME_JIT: return "jit";
	case FRAME_INLINED: return "inlined";
	default: return "native";
	}
}

static uint32_t common_depth(const struct profview *v, uint32_t a, uint32_t b)
{
	while (v->fnodes[a].depth > v->fnodes[b].depth)
		a = v->fnodes[a].parent;
	while (v->fnodes[b].depth > v->fnodes[a].depth)
		b = v->fnodes[b].parent;
	while (a != b) {
		a = v->fnodes[a].parent;
		b = v->fnodes[b].parent;
	}
	return v->fnodes[a].depth;
}

static void event_begin(struct ct_writer *w, const char *ph)
{
	fprintf(w->out, "%s{\"ph\":\"%s\"", w->nevents++ ? ",\n" : "\n", ph);
}

static void write_meta(struct ct_writer *w, const char *what, uint32_t pid, uint32_t tid,
		       const char *key, const char *name, uint64_t num)
{
	FILE *out = w->out;

	event_begin(w, "M");
	fprintf(out, ",\"name\":\"%s\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32
		",\"args\":{\"%s\":", what, pid, tid, key);
	if (name)
		json_string(out, name);
	else
		json_u64(out, num);
	fputs("}}", out);
}

static void write_slice(struct ct_writer *w, const struct pc_thread *th, uint32_t func,
			const struct ct_key *key, uint64_t start, uint64_t end, uint64_t base)
{
	const struct pc_function *fn = &w->v.funcs[func];
	FILE *out = w->out;

	event_begin(w, "X");
	fputs(",\"name\":", out);
	json_string(out, profile_text(w->p, fn->name));
	fprintf(out, ",\"cat\":\"%s\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",",
		category(fn->kind), th->pid, th->tid);
	json_ts_dur(out, start, end, base);
	fputs(",\"args\":{", out);
	if (key->caller) {
		fputs("\"caller\":", out);
		json_string(out, profile_text(w->p, key->caller->name));
		fputc(',', out);
	}
	fprintf(out, "\"cat\":\"%s\"", category(fn->kind));
	if (key->depth >= 0)
		fprintf(out, ",\"depth\":%" PRId64, key->depth);
	if (fn->file) {
		fputs(",\"file\":", out);
		json_string(out, profile_text(w->p, fn->file));
	}
	if (fn->line)
		fprintf(out, ",\"line\":%" PRIu32, fn->line);
	if (fn->module) {
		fputs(",\"module\":", out);
		json_string(out, profile_text(w->p, fn->module));
	}
	fputs("}}", out);
}

/* Fill *path with the fnodes of stack `f`, root first; returns its depth. */
static uint32_t stack_path(struct ct_writer *w, uint32_t f, uint32_t **path, size_t *cap)
{
	uint32_t depth = w->v.fnodes[f].depth;

	if (depth > *cap)
		grow_array((void **)path, cap, depth, sizeof(**path));
	for (uint32_t d = depth; d-- > 0; f = w->v.fnodes[f].parent)
		(*path)[d] = f;
	return depth;
}

static uint32_t func_at(const struct ct_writer *w, const uint32_t *path, uint32_t d)
{
	return w->v.fnodes[path[d]].func;
}

/* The outermost depth in [lo, d] of path that holds the function at d. */
static uint32_t outermost(const struct ct_writer *w, const uint32_t *path, uint32_t lo, uint32_t d)
{
	uint32_t func = func_at(w, path, d);

	while (lo < d && func_at(w, path, lo) != func)
		lo++;
	return lo;
}

/* The nearest function out of depth d of path that is another function than d's. */
static const struct pc_function *caller_of(const struct ct_writer *w, const uint32_t *path, uint32_t d)
{
	uint32_t func = func_at(w, path, d);

	while (d > 0 && func_at(w, path, d - 1) == func)
		d--;
	return d ? &w->v.funcs[func_at(w, path, d - 1)] : NULL;
}

static int same_name(const struct pc_function *a, const struct pc_function *b)
{
	return (a ? a->name : UINT32_MAX) == (b ? b->name : UINT32_MAX);
}

/*
 * The key of the slices of the function at depth d of w->path that end at sample j
 * (what `e` says of it), d being the outermost of them. Where the same function
 * begins at j at a shallower depth under the same caller, "depth" (d) tells them apart.
 */
static struct ct_key class_key(struct ct_writer *w, uint32_t d, const struct ct_end *e)
{
	struct ct_key key = { caller_of(w, w->path, d), -1 };
	uint32_t c = e->common, p;

	if (e->last || !e->at_time)
		return key; /* nothing begins as these end */
	if (stack_path(w, e->fnode, &w->next_path, &w->next_path_cap) <= c ||
	    func_at(w, w->next_path, c) != func_at(w, w->path, d))
		return key;
	/* the slices of the function that the one beginning at c ends with share its key */
	p = outermost(w, w->next_path, e->after, c);
	if (same_name(caller_of(w, w->next_path, p), key.caller))
		key.depth = d;
	return key;
}

/* The sample a thread's first pass has placed: its place against the one before. */
struct ct_placed {
	uint64_t t, time, period;
	uint32_t fnode;
};

static void keep_sample(struct ct_writer *w, const struct ct_placed *k, const struct ct_placed *prev)
{
	struct ct_kept r = { k->t, 0, 0, k->fnode };

	/* off the CPU in between, unless the placement closed the gap */
	if (prev && w->clock_event && k->time - prev->time > prev->period + prev->period / 2 &&
	    prev->t + prev->period < k->t) {
		r.close = prev->t + prev->period;
	} else if (prev) {
		r.close = k->t;
		r.common = common_depth(&w->v, prev->fnode, k->fnode);
	}
	spool_append(w->kept, &r);
}

/*
 * First pass: the thread's samples placed in time and those shown kept, each with
 * when the slices ending at it end and the depth it shares with the one before.
 * Returns when the slices still open after the last end.
 */
static uint64_t place_samples(struct ct_writer *w, const struct pc_thread *th)
{
	const struct profile *p = w->p;
	struct profview_cursor c;
	const struct pc_sample *s;
	struct ct_placed pend = { 0, 0, 0, 0 }, prev = { 0, 0, 0, 0 };
	uint64_t sum = 0, n = 0, t = 0, t_first = 0, tail, prev_time = 0, prev_period = 0;
	int have_prev = 0;

	spool_clear(w->kept);
	profview_cursor_init(&c, &w->v, th);
	while ((s = profview_cursor_next(&c)) != NULL) {
		if (!p->has_time) {
			t = sum;
			sum += s->period;
		} else if (w->clock_event && n > 0) {
			/*
			 * A clock event's sample stands for one period of CPU time. Its
			 * recorded time is its timer slot plus the interrupt's latency, which
			 * runs long where the kernel held interrupts off: within a run of
			 * samples each takes the slot one period after the one before, so
			 * that a function's self time is its samples times the period. A
			 * longer gap (the thread off the CPU) starts again at the real time.
			 */
			uint64_t per = prev_period, real = s->time - w->origin;
			uint64_t gap = s->time - prev_time;

			if (gap > per + per / 2)
				t = real > t + per ? real : t + per;
			else
				t += per;
		} else {
			t = s->time - w->origin;
		}
		if (n == 0) {
			t_first = t;
		} else if (pend.t != t) {
			/* a sample at the time of the next would only make slices of no duration */
			keep_sample(w, &pend, have_prev ? &prev : NULL);
			prev = pend;
			have_prev = 1;
		}
		pend.t = t;
		pend.time = s->time;
		pend.period = s->period;
		pend.fnode = profview_fnode(&w->v, s);
		prev_time = s->time;
		prev_period = s->period;
		n++;
	}
	profview_cursor_release(&c);
	if (!n)
		return 0;
	keep_sample(w, &pend, have_prev ? &prev : NULL);
	/* a count event's last slices end one mean interval after the last sample */
	tail = n > 1 ? (t - t_first) / (n - 1) : 1000;
	if (tail == 0)
		tail = 1;
	return pend.t + (w->clock_event ? pend.period : tail);
}

/* In w->next[0..n) (common[] increasing), the last with common[] <= d. */
static const struct ct_next *next_at(const struct ct_next *next, size_t n, uint32_t d)
{
	size_t lo = 0, hi = n; /* next[0].common is 0: there is one */

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (next[mid].common <= d)
			lo = mid;
		else
			hi = mid;
	}
	return &next[lo];
}

/*
 * Second pass, from the last sample shown back to the first: where each slice ends.
 * The slice at depth d opening at sample i ends at the first j after i with
 * common[j] <= d (or past the last); a stack of the candidates, nearest on top,
 * answers that for every depth at once. One ct_end per slice, each sample's from
 * its outermost slice in.
 */
static void find_ends(struct ct_writer *w, uint64_t close_last)
{
	struct spool_reader r;
	const struct ct_kept *k;
	size_t n = 1;

	spool_clear(w->ends);
	if (w->next_cap < 1)
		grow_array((void **)&w->next, &w->next_cap, 1, sizeof(*w->next));
	memset(&w->next[0], 0, sizeof(w->next[0]));
	w->next[0].end.close = close_last;
	w->next[0].end.last = 1;
	spool_reader_init(&r, w->kept, 0, spool_count(w->kept), 1);
	while ((k = spool_read(&r)) != NULL) {
		uint32_t depth = w->v.fnodes[k->fnode].depth;
		struct ct_next me;

		for (uint32_t d = k->common; d < depth; d++)
			spool_append(w->ends, &next_at(w->next, n, d)->end);
		memset(&me, 0, sizeof(me));
		me.common = k->common;
		me.end.close = k->close;
		me.end.fnode = k->fnode;
		me.end.common = k->common;
		me.end.after = next_at(w->next, n, k->common)->common;
		me.end.at_time = k->close == k->t;
		while (n > 0 && w->next[n - 1].common >= k->common)
			n--;
		if (n + 1 > w->next_cap)
			grow_array((void **)&w->next, &w->next_cap, n + 1, sizeof(*w->next));
		w->next[n++] = me;
	}
	spool_reader_release(&r);
}

static void write_thread(struct ct_writer *w, const struct pc_thread *th)
{
	struct spool_reader kr, er;
	const struct ct_kept *k;
	uint64_t base = 0;
	int first = 1;

	find_ends(w, place_samples(w, th));
	spool_reader_init(&kr, w->kept, 0, spool_count(w->kept), 0);
	spool_reader_init(&er, w->ends, 0, spool_count(w->ends), 1);
	while ((k = spool_read(&kr)) != NULL) {
		uint32_t depth = stack_path(w, k->fnode, &w->path, &w->path_cap);
		uint64_t t = k->t;

		if (first)
			base = t;
		first = 0;
		if (depth > w->open_cap)
			grow_array((void **)&w->open, &w->open_cap, depth, sizeof(*w->open));
		if (depth > w->at_cap)
			grow_array((void **)&w->at, &w->at_cap, depth, sizeof(*w->at));
		/* the second pass wrote them outermost first, back to front: innermost first here */
		for (uint32_t d = depth; d-- > k->common;) {
			const struct ct_end *e = spool_read(&er);

			if (!e)
				break;
			w->at[d] = *e;
		}
		/* slices at depths common.. open here; each ends where the stacks part */
		for (uint32_t d = k->common; d < depth; d++) {
			const struct ct_end *e = &w->at[d];
			uint32_t m = outermost(w, w->path, e->common, d);

			/* the slices of a function that end together share the outermost's key */
			w->open[d] = m < d ? w->open[m] : class_key(w, d, e);
			write_slice(w, th, func_at(w, w->path, d), &w->open[d], t, e->close, base);
		}
	}
	spool_reader_release(&kr);
	spool_reader_release(&er);
}

int chrome_write(const struct profile *p, const struct write_options *o, FILE *out)
{
	struct ct_writer w;
	struct u64map named;
	int event = o->event, err;

	memset(&w, 0, sizeof(w));
	w.p = p;
	w.out = out;
	u64map_init(&named);
	profview_init(&w.v, p, o->event, 1);
	if (w.v.has_first) {
		w.origin = p->has_time ? w.v.first_time : 0;
		event = w.v.first_event;
	}
	w.clock_event = p->has_time && profile_event_unit(p, event) == PC_UNIT_NANOSECONDS;

	fputs("{\"traceEvents\":[", out);
	/* a process is named after its main thread, else its first thread by name */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < w.v.nthreads; i++) {
			const struct pc_thread *th = &w.v.threads[i];
			uint64_t key = (uint64_t)th->pid + 1;

			if ((pass == 0 && th->tid != th->pid) || u64map_get(&named, key))
				continue;
			u64map_put(&named, key, 1);
			write_meta(&w, "process_name", th->pid, th->pid, "name",
				   profile_text(p, th->comm), 0);
		}
	for (size_t i = 0; i < w.v.nthreads; i++) {
		const struct pc_thread *th = &w.v.threads[i];

		write_meta(&w, "thread_name", th->pid, th->tid, "name", profile_text(p, th->comm), 0);
		write_meta(&w, "thread_sort_index", th->pid, th->tid, "sort_index", NULL, i);
	}
	w.kept = spool_new(sizeof(struct ct_kept), CT_SPOOL_MEMORY);
	w.ends = spool_new(sizeof(struct ct_end), CT_SPOOL_MEMORY);
	for (size_t i = 0; i < w.v.nthreads; i++)
		write_thread(&w, &w.v.threads[i]);
	fputs("\n],\n\"otherData\":{\"exporter\":\"perfconv " PERFCONV_VERSION "\",\"event\":", out);
	json_string(out, event >= 0 && (size_t)event < p->nevents ?
		    profile_text(p, p->events[event].name) : "");
	fprintf(out, ",\"ts_origin_ns\":\"%" PRIu64 "\"}}\n", w.origin);

	err = profview_error(&w.v);
	if (!err)
		err = spool_error(w.kept) ? spool_error(w.kept) : spool_error(w.ends);
	spool_free(w.kept);
	spool_free(w.ends);
	free(w.next);
	free(w.at);
	free(w.path);
	free(w.next_path);
	free(w.open);
	u64map_release(&named);
	profview_release(&w.v);
	if (err) {
		errno = err;
		return -1;
	}
	if (ferror(out)) {
		if (!errno)
			errno = EIO;
		return -1;
	}
	return 0;
}
