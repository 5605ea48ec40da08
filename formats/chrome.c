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

#include "common/version.h"
#include "formats/profview.h"
#include "formats/json.h"

/* What a slice is keyed by besides its function: see the top of this file. */
struct ct_key {
	const struct pc_function *caller; /* NULL: none (the thread's outermost function) */
	int64_t depth;                    /* -1: none */
};

struct ct_writer {
	const struct profile *p;
	struct profview v;
	int clock_event;       /* periods are nanoseconds: a long gap is time off the CPU */
	uint64_t origin;
	FILE *out;
	/* per thread scratch, reused */
	const uint32_t *order; /* the thread's samples in time order */
	uint32_t *keep;        /* the samples shown: indexes into order */
	uint64_t *t;           /* their times from the origin */
	uint32_t *common;      /* depth shared with the previous sample, 0 after a gap */
	uint64_t *close;       /* when slices ending before sample j end (close[n]: at the end) */
	uint32_t *path;        /* fnodes of the stack whose slices are written, root first */
	uint32_t *next_path;   /* fnodes of the stack where a slice ends */
	struct ct_key *open;   /* the key of the slice open at each depth */
	size_t keep_cap, t_cap, common_cap, close_cap, path_cap, next_path_cap, open_cap;
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

/* The k-th sample shown of the thread. */
static const struct pc_sample *shown(const struct ct_writer *w, size_t k)
{
	return &w->p->samples[w->order[w->keep[k]]];
}

/* Fill *path with the fnodes of sample k's stack, root first; returns its depth. */
static uint32_t stack_path(struct ct_writer *w, size_t k, uint32_t **path, size_t *cap)
{
	uint32_t f = profview_fnode(&w->v, shown(w, k));
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

/* The sample where the slice at depth d, open at sample i, ends (n: after the last). */
static size_t slice_end(const struct ct_writer *w, size_t n, size_t i, uint32_t d)
{
	size_t j = i + 1;

	while (j < n && w->common[j] > d)
		j++;
	return j;
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
 * The key of the slices of the function at depth d of w->path that end at sample j,
 * d being the outermost of them. Where the same function begins at j at a shallower
 * depth under the same caller, "depth" (d) tells them apart.
 */
static struct ct_key class_key(struct ct_writer *w, size_t n, uint32_t d, size_t j)
{
	struct ct_key key = { caller_of(w, w->path, d), -1 };
	uint32_t c, p;

	if (j == n || w->close[j] != w->t[j])
		return key; /* nothing begins as these end */
	c = w->common[j];
	if (stack_path(w, j, &w->next_path, &w->next_path_cap) <= c ||
	    func_at(w, w->next_path, c) != func_at(w, w->path, d))
		return key;
	/* the slices of the function that the one beginning at c ends with share its key */
	p = outermost(w, w->next_path, w->common[slice_end(w, n, j, c)], c);
	if (same_name(caller_of(w, w->next_path, p), key.caller))
		key.depth = d;
	return key;
}

static void write_thread(struct ct_writer *w, const struct pc_thread *th)
{
	const struct profile *p = w->p;
	size_t n = th->n, kept = 0;
	uint64_t sum = 0, tail;

	w->order = w->v.order + th->first;
	if (n + 1 > w->keep_cap)
		grow_array((void **)&w->keep, &w->keep_cap, n + 1, sizeof(*w->keep));
	if (n + 1 > w->t_cap)
		grow_array((void **)&w->t, &w->t_cap, n + 1, sizeof(*w->t));
	if (n + 1 > w->common_cap)
		grow_array((void **)&w->common, &w->common_cap, n + 1, sizeof(*w->common));
	if (n + 1 > w->close_cap)
		grow_array((void **)&w->close, &w->close_cap, n + 1, sizeof(*w->close));
	for (size_t i = 0; i < n; i++) {
		const struct pc_sample *s = &p->samples[w->order[i]];

		if (!p->has_time) {
			w->t[i] = sum;
			sum += s->period;
		} else if (w->clock_event && i > 0) {
			/*
			 * A clock event's sample stands for one period of CPU time. Its
			 * recorded time is its timer slot plus the interrupt's latency, which
			 * runs long where the kernel held interrupts off: within a run of
			 * samples each takes the slot one period after the one before, so
			 * that a function's self time is its samples times the period. A
			 * longer gap (the thread off the CPU) starts again at the real time.
			 */
			uint64_t per = p->samples[w->order[i - 1]].period;
			uint64_t real = s->time - w->origin;
			uint64_t gap = s->time - p->samples[w->order[i - 1]].time;

			if (gap > per + per / 2)
				w->t[i] = real > w->t[i - 1] + per ? real : w->t[i - 1] + per;
			else
				w->t[i] = w->t[i - 1] + per;
		} else {
			w->t[i] = s->time - w->origin;
		}
	}
	/* a count event's last slices end one mean interval after the last sample */
	tail = n > 1 ? (w->t[n - 1] - w->t[0]) / (n - 1) : 1000;
	if (tail == 0)
		tail = 1;
	/* a sample at the time of the next would only make slices of no duration */
	for (size_t i = 0; i < n; i++)
		if (i + 1 == n || w->t[i] != w->t[i + 1]) {
			w->keep[kept] = (uint32_t)i;
			w->t[kept++] = w->t[i];
		}
	n = kept;

	w->common[0] = 0;
	for (size_t j = 1; j <= n; j++) {
		const struct pc_sample *prev = shown(w, j - 1);
		uint64_t ext = w->clock_event ? prev->period : tail;

		/* off the CPU in between, unless the placement closed the gap */
		if (j == n || (w->clock_event && shown(w, j)->time - prev->time >
				prev->period + prev->period / 2 && w->t[j - 1] + ext < w->t[j])) {
			w->close[j] = w->t[j - 1] + ext;
			w->common[j] = 0;
		} else {
			w->close[j] = w->t[j];
			w->common[j] = common_depth(&w->v, profview_fnode(&w->v, prev),
						    profview_fnode(&w->v, shown(w, j)));
		}
	}

	for (size_t i = 0; i < n; i++) {
		uint32_t depth = stack_path(w, i, &w->path, &w->path_cap);

		if (depth > w->open_cap)
			grow_array((void **)&w->open, &w->open_cap, depth, sizeof(*w->open));
		/* slices at depths common[i].. open here; each ends where the stacks part */
		for (uint32_t d = w->common[i]; d < depth; d++) {
			size_t j = slice_end(w, n, i, d);
			uint32_t m = outermost(w, w->path, w->common[j], d);

			/* the slices of a function that end together share the outermost's key */
			w->open[d] = m < d ? w->open[m] : class_key(w, n, d, j);
			write_slice(w, th, func_at(w, w->path, d), &w->open[d], w->t[i], w->close[j], w->t[0]);
		}
	}
}

int chrome_write(const struct profile *p, const struct write_options *o, FILE *out)
{
	struct ct_writer w;
	struct u64map named;
	int event = o->event;

	memset(&w, 0, sizeof(w));
	w.p = p;
	w.out = out;
	u64map_init(&named);
	profview_init(&w.v, p, o->event, 1);
	for (size_t i = 0; i < p->nsamples; i++)
		if (o->event < 0 || p->samples[i].event == o->event) {
			w.origin = p->has_time ? p->samples[i].time : 0;
			event = p->samples[i].event;
			break;
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
	for (size_t i = 0; i < w.v.nthreads; i++)
		write_thread(&w, &w.v.threads[i]);
	fputs("\n],\n\"otherData\":{\"exporter\":\"perfconv " PERFCONV_VERSION "\",\"event\":", out);
	json_string(out, event >= 0 && (size_t)event < p->nevents ?
		    profile_text(p, p->events[event].name) : "");
	fprintf(out, ",\"ts_origin_ns\":\"%" PRIu64 "\"}}\n", w.origin);

	free(w.t);
	free(w.common);
	free(w.close);
	free(w.keep);
	free(w.path);
	free(w.next_path);
	free(w.open);
	u64map_release(&named);
	profview_release(&w.v);
	if (ferror(out)) {
		if (!errno)
			errno = EIO;
		return -1;
	}
	return 0;
}
