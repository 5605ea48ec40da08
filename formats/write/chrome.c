/* chrome: the Chrome Trace Event Format, each thread a timeline of what it ran.
 *
 * Format: "Trace Event Format" (Google document 1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU),
 * as read by Perfetto UI, chrome://tracing and speedscope: the JSON Array Format, a
 * list of events. "X" events of one thread must nest; viewers that sort by ts alone
 * keep file order for equal times, so a parent is written before the children that
 * start with it.
 *
 * speedscope (1.25) imports these files too. It turns each X event into a begin and
 * an end and, for a list of events whose first one's args hold the keys of a Hermes
 * trace (line, column, name, category, url, params, allocatedCategory,
 * allocatedName), names a frame by the event's name alone, with args.url as its file
 * and args.line as its line, and keys it by those (otherwise its name is the name
 * followed by the args as JSON: what its views would show). The first event (a
 * metadata event that Perfetto and chrome://tracing do not show) holds those keys;
 * every slice has a url (the source file, else the module) so that functions of one
 * name in two files stay apart.
 *
 * speedscope pairs ends with begins by key: of the ends at one time it takes one
 * whose key is that of the slice on top of its stack, which is always there when
 * each function has its own key, as here; but where a slice begins at the time
 * others end, it takes the begin first when its name and args are those of the end
 * it would take next, which a function moving out (main;walk;walk;visit, then
 * main;walk;visit) or recursion ending does. So a slice that begins where others of
 * its thread end begins one nanosecond later (unless that would make a slice of no
 * duration): every end at a time comes before every begin, and each is paired with
 * its own. Slices of no duration (samples at one time) would escape this: none is
 * written.
 */
#include "formats/write/chrome.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/spool.h"
#include "common/version.h"
#include "common/writeend.h"
#include "formats/model/profview.h"
#include "formats/write/json.h"

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
	uint32_t ended;    /* slices of the sample before end at its time: its begin 1 ns later */
};

/* The nearest sample after the one looked at whose common[] is `common` or less, and
 * when the slices that end at it end (close[j], or past the last). */
struct ct_next {
	uint32_t common;
	uint64_t close;
};

/* A slice placed by the walk over a thread, for the thread that formats it. */
struct ct_slice {
	uint64_t start, end, base;
	uint32_t func, pid, tid;
};

/* Slices handed to the formatting thread at once. */
#define CT_BATCH 16384

/*
 * Slices are formatted and written on a thread of their own while the walk places
 * the next ones: formatting and the kernel's copy of the text were half of -f chrome's
 * time on a 1 GB whole-machine recording (4.9 GB of JSON). Two batches: the walk fills
 * one while the other is formatted. Without the thread (it could not be made), the
 * walk formats its batch itself.
 */
struct ct_pipe {
	pthread_t thread;
	int running, done;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct ct_slice *cur, *pending, *spare; /* filled by the walk, handed over, free */
	size_t ncur, npending;
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
	uint64_t *at;          /* third pass: the ends of the slices opening at a sample, by depth */
	uint32_t *path;        /* fnodes of the stack whose slices are written, root first */
	char *buf;             /* an event's text */
	size_t next_cap, at_cap, path_cap, buf_cap;
	int nevents;           /* written so far: all but the first begin with a comma */
	struct ct_pipe pipe;
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

/* Append at b[*n] `s`, `len` bytes long, as a JSON string. */
static void put_str(char *b, size_t *n, const char *s, size_t len)
{
	*n += json_string_mem(b + *n, s, len);
}

/* Append at b[*n] `lit` as it is. */
static void put_lit(char *b, size_t *n, const char *lit)
{
	size_t len = strlen(lit);

	memcpy(b + *n, lit, len);
	*n += len;
}

/* One event built in memory and written at once: stdio calls for each piece were a
 * fifth of -f chrome's time on a whole-machine recording. */
static void write_slice(struct ct_writer *w, const struct ct_slice *sl)
{
	const struct pc_function *fn = &w->v.funcs[sl->func];
	uint32_t url = fn->file ? fn->file : fn->module;
	const char *name = profile_text(w->p, fn->name);
	const char *file = url ? profile_text(w->p, url) : "";
	const char *module = fn->file && fn->module ? profile_text(w->p, fn->module) : NULL;
	size_t lname = strlen(name), lfile = strlen(file), lmodule = module ? strlen(module) : 0;
	/* the fixed text and the numbers take under 200 bytes */
	size_t n = 0, need = 200 + JSON_TS_DUR_MAX + JSON_STRING_MAX(lname) + JSON_STRING_MAX(lfile) +
			     JSON_STRING_MAX(lmodule);
	char *b;

	if (need > w->buf_cap)
		grow_array((void **)&w->buf, &w->buf_cap, need, 1);
	b = w->buf;
	put_lit(b, &n, w->nevents++ ? ",\n{\"ph\":\"X\",\"name\":" : "\n{\"ph\":\"X\",\"name\":");
	put_str(b, &n, name, lname);
	put_lit(b, &n, ",\"cat\":\"");
	put_lit(b, &n, category(fn->kind));
	put_lit(b, &n, "\",\"pid\":");
	n += json_u64_mem(b + n, sl->pid);
	put_lit(b, &n, ",\"tid\":");
	n += json_u64_mem(b + n, sl->tid);
	b[n++] = ',';
	n += json_ts_dur(b + n, sl->start, sl->end, sl->base);
	/* speedscope's file and line of the frame (see the top of this file) */
	put_lit(b, &n, ",\"args\":{\"url\":");
	put_str(b, &n, file, lfile);
	if (fn->line) {
		put_lit(b, &n, ",\"line\":");
		n += json_u64_mem(b + n, fn->line);
	}
	if (module) {
		put_lit(b, &n, ",\"module\":");
		put_str(b, &n, module, lmodule);
	}
	put_lit(b, &n, "}}");
	fwrite(b, 1, n, w->out);
}

/* The formatting thread: each batch handed over written, then given back. */
static void *format_main(void *arg)
{
	struct ct_writer *w = arg;
	struct ct_pipe *q = &w->pipe;

	pthread_mutex_lock(&q->lock);
	for (;;) {
		struct ct_slice *v;
		size_t n;

		while (!q->pending && !q->done)
			pthread_cond_wait(&q->cond, &q->lock);
		if (!q->pending)
			break;
		v = q->pending;
		n = q->npending;
		q->pending = NULL;
		pthread_mutex_unlock(&q->lock);
		for (size_t i = 0; i < n; i++)
			write_slice(w, &v[i]);
		pthread_mutex_lock(&q->lock);
		q->spare = v;
		pthread_cond_broadcast(&q->cond);
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

/* The walk's batch to the formatting thread (or formatted here without one). */
static void pipe_flush(struct ct_writer *w)
{
	struct ct_pipe *q = &w->pipe;

	if (!q->ncur)
		return;
	if (!q->running) {
		for (size_t i = 0; i < q->ncur; i++)
			write_slice(w, &q->cur[i]);
		q->ncur = 0;
		return;
	}
	pthread_mutex_lock(&q->lock);
	while (q->pending || !q->spare)
		pthread_cond_wait(&q->cond, &q->lock);
	q->pending = q->cur;
	q->npending = q->ncur;
	q->cur = q->spare;
	q->spare = NULL;
	q->ncur = 0;
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->lock);
}

static void put_slice(struct ct_writer *w, const struct pc_thread *th, uint32_t func,
		      uint64_t start, uint64_t end, uint64_t base)
{
	struct ct_pipe *q = &w->pipe;
	struct ct_slice *sl = &q->cur[q->ncur++];

	sl->start = start;
	sl->end = end;
	sl->base = base;
	sl->func = func;
	sl->pid = th->pid;
	sl->tid = th->tid;
	if (q->ncur == CT_BATCH)
		pipe_flush(w);
}

static void pipe_start(struct ct_writer *w)
{
	struct ct_pipe *q = &w->pipe;

	q->cur = xmalloc(CT_BATCH * sizeof(*q->cur));
	q->spare = xmalloc(CT_BATCH * sizeof(*q->spare));
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->cond, NULL);
	q->running = pthread_create(&q->thread, NULL, format_main, w) == 0;
}

/* Every slice written: the last batch, then the thread ended. */
static void pipe_finish(struct ct_writer *w)
{
	struct ct_pipe *q = &w->pipe;

	pipe_flush(w);
	if (q->running) {
		pthread_mutex_lock(&q->lock);
		while (q->pending || !q->spare)
			pthread_cond_wait(&q->cond, &q->lock);
		q->done = 1;
		pthread_cond_broadcast(&q->cond);
		pthread_mutex_unlock(&q->lock);
		pthread_join(q->thread, NULL);
	}
	pthread_mutex_destroy(&q->lock);
	pthread_cond_destroy(&q->cond);
	free(q->cur);
	free(q->spare);
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

/* The sample a thread's first pass has placed: its place against the one before. */
struct ct_placed {
	uint64_t t, time, period;
	uint32_t fnode;
};

static void keep_sample(struct ct_writer *w, const struct ct_placed *k, const struct ct_placed *prev)
{
	struct ct_kept r = { k->t, 0, 0, k->fnode, 0 };

	/* off the CPU in between, unless the placement closed the gap */
	if (prev && w->clock_event && k->time - prev->time > prev->period + prev->period / 2 &&
	    prev->t + prev->period < k->t) {
		r.close = prev->t + prev->period;
	} else if (prev) {
		r.close = k->t;
		r.common = common_depth(&w->v, prev->fnode, k->fnode);
		r.ended = r.common < w->v.fnodes[prev->fnode].depth;
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
 * answers that for every depth at once. One end per slice, each sample's from
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
	w->next[0].close = close_last;
	spool_reader_init(&r, w->kept, 0, spool_count(w->kept), 1);
	while ((k = spool_read(&r)) != NULL) {
		uint32_t depth = w->v.fnodes[k->fnode].depth;
		struct ct_next me;

		for (uint32_t d = k->common; d < depth; d++)
			spool_append(w->ends, &next_at(w->next, n, d)->close);
		memset(&me, 0, sizeof(me));
		me.common = k->common;
		me.close = k->close;
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
		if (depth > w->at_cap)
			grow_array((void **)&w->at, &w->at_cap, depth, sizeof(*w->at));
		/* the second pass wrote them outermost first, back to front: innermost first here */
		for (uint32_t d = depth; d-- > k->common;) {
			const uint64_t *e = spool_read(&er);

			if (!e)
				break;
			w->at[d] = *e;
		}
		/* after the ends at t, for speedscope (see the top of this file); the
		 * innermost slice ends first */
		if (k->ended && depth > k->common && w->at[depth - 1] > t + 1)
			t++;
		/* slices at depths common.. open here; each ends where the stacks part */
		for (uint32_t d = k->common; d < depth; d++)
			put_slice(w, th, w->v.fnodes[w->path[d]].func, t, w->at[d], base);
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

	/* the recording's facts, and the keys that make speedscope read a frame's name,
	 * file and line (see the top of this file), on the first thread if any */
	fputc('[', out);
	event_begin(&w, "M");
	fprintf(out, ",\"name\":\"perfconv\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32
		",\"args\":{\"exporter\":\"perfconv " PERFCONV_VERSION "\",\"event\":",
		w.v.nthreads ? w.v.threads[0].pid : 0, w.v.nthreads ? w.v.threads[0].tid : 0);
	json_string(out, event >= 0 && (size_t)event < p->nevents ?
		    profile_text(p, p->events[event].name) : "");
	fprintf(out, ",\"ts_origin_ns\":\"%" PRIu64 "\",\"name\":\"\",\"category\":\"\","
		"\"url\":\"\",\"line\":0,\"column\":0,\"params\":\"\",\"allocatedCategory\":\"\","
		"\"allocatedName\":\"\"}}", w.origin);
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
	w.ends = spool_new(sizeof(uint64_t), CT_SPOOL_MEMORY);
	pipe_start(&w);
	for (size_t i = 0; i < w.v.nthreads; i++)
		write_thread(&w, &w.v.threads[i]);
	pipe_finish(&w);
	fputs("\n]\n", out);

	err = profview_error(&w.v);
	if (!err)
		err = spool_error(w.kept) ? spool_error(w.kept) : spool_error(w.ends);
	spool_free(w.kept);
	spool_free(w.ends);
	free(w.next);
	free(w.at);
	free(w.path);
	free(w.buf);
	u64map_release(&named);
	profview_release(&w.v);
	if (err) {
		errno = err;
		return -1;
	}
	return write_end(out, 0);
}
