/* chrome: the Chrome Trace Event Format, each thread a timeline of what it ran.
 *
 * Format: "Trace Event Format" (Google document 1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU),
 * as read by Perfetto UI, chrome://tracing and speedscope. "X" events of one thread
 * must nest; viewers that sort by ts alone keep file order for equal times, so a
 * parent is written before the children that start with it.
 */
#include "chrome.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../common/version.h"
#include "../convert/profview.h"
#include "json.h"

struct ct_writer {
	const struct profile *p;
	struct profview v;
	int clock_event;       /* periods are nanoseconds: a long gap is time off the CPU */
	uint64_t origin;
	FILE *out;
	/* per thread scratch, reused */
	uint64_t *t;           /* sample times from the origin */
	uint32_t *common;      /* depth shared with the previous sample, 0 after a gap */
	uint64_t *close;       /* when slices ending before sample j end (close[n]: at the end) */
	uint32_t *path;        /* fnodes of one stack, root first */
	size_t t_cap, common_cap, close_cap, path_cap;
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
			const struct pc_function *caller, uint64_t start, uint64_t end,
			uint64_t base)
{
	const struct pc_function *fn = &w->v.funcs[func];
	FILE *out = w->out;

	event_begin(w, "X");
	fputs(",\"name\":", out);
	json_string(out, profile_text(w->p, fn->name));
	fprintf(out, ",\"cat\":\"%s\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",",
		category(fn->kind), th->pid, th->tid);
	json_ts_dur(out, start, end, base);
	/*
	 * speedscope keys a slice by name and args, and at one ts begins a slice before
	 * it ends one with the same key: the caller gives a function that moves under
	 * another caller at that instant (a tail call, an inlined caller) two keys;
	 * the nearest caller that is another function keeps a recursive chain, which
	 * ends all at once, one key, as speedscope needs then.
	 */
	fputs(",\"args\":{", out);
	if (caller) {
		fputs("\"caller\":", out);
		json_string(out, profile_text(w->p, caller->name));
		fputc(',', out);
	}
	fprintf(out, "\"cat\":\"%s\"", category(fn->kind));
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

static void write_thread(struct ct_writer *w, const struct pc_thread *th)
{
	const struct profile *p = w->p;
	const uint32_t *order = w->v.order + th->first;
	size_t n = th->n;
	uint64_t sum = 0, tail;

	if (n + 1 > w->t_cap)
		grow_array((void **)&w->t, &w->t_cap, n + 1, sizeof(*w->t));
	if (n + 1 > w->common_cap)
		grow_array((void **)&w->common, &w->common_cap, n + 1, sizeof(*w->common));
	if (n + 1 > w->close_cap)
		grow_array((void **)&w->close, &w->close_cap, n + 1, sizeof(*w->close));
	for (size_t i = 0; i < n; i++) {
		const struct pc_sample *s = &p->samples[order[i]];

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
			uint64_t per = p->samples[order[i - 1]].period;
			uint64_t real = s->time - w->origin;
			uint64_t gap = s->time - p->samples[order[i - 1]].time;

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
	w->common[0] = 0;
	for (size_t j = 1; j <= n; j++) {
		const struct pc_sample *prev = &p->samples[order[j - 1]];
		uint64_t ext = w->clock_event ? prev->period : tail;
		int gap = j == n || (w->clock_event && p->samples[order[j]].time - prev->time >
						      prev->period + prev->period / 2);

		if (gap) {
			w->close[j] = w->t[j - 1] + ext;
			if (j < n)
				w->common[j] = 0;
		} else {
			w->close[j] = w->t[j];
			w->common[j] = common_depth(&w->v, profview_fnode(&w->v, prev),
						    profview_fnode(&w->v, &p->samples[order[j]]));
		}
	}
	w->common[n] = 0; /* everything ends after the last sample */

	for (size_t i = 0; i < n; i++) {
		uint32_t leaf = profview_fnode(&w->v, &p->samples[order[i]]);
		uint32_t depth = w->v.fnodes[leaf].depth, f = leaf;
		size_t j = i + 1;

		if (depth > w->path_cap)
			grow_array((void **)&w->path, &w->path_cap, depth, sizeof(*w->path));
		for (uint32_t d = depth; d-- > 0; f = w->v.fnodes[f].parent)
			w->path[d] = f;
		/* slices at depths common[i].. open here; each ends where the stacks part */
		for (uint32_t d = w->common[i]; d < depth; d++) {
			while (j < n && w->common[j] > d)
				j++;
			uint32_t func = w->v.fnodes[w->path[d]].func, c = d;

			/* the caller: the nearest other function out (recursion is one key) */
			while (c > 0 && w->v.fnodes[w->path[c - 1]].func == func)
				c--;
			write_slice(w, th, func, c ? &w->v.funcs[w->v.fnodes[w->path[c - 1]].func] : NULL,
				    w->t[i], w->close[j], w->t[0]);
			/* a deeper slice can end sooner: look again from the next sample */
			j = i + 1;
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
	w.clock_event = p->has_time && event >= 0 && (size_t)event < p->nevents &&
		strcmp(profile_text(p, p->events[event].unit), "nanoseconds") == 0;

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
	free(w.path);
	u64map_release(&named);
	profview_release(&w.v);
	if (ferror(out)) {
		if (!errno)
			errno = EIO;
		return -1;
	}
	return 0;
}
