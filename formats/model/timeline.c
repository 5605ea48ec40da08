/* timeline: every sample kept, each thread's in time order, in memory that does not grow. */
#include "formats/model/timeline.h"

#include <stdlib.h>
#include <string.h>

#include "common/util.h"

/* Samples sorted in memory at a time (48 bytes each: 1.5 MB), and runs merged at once
 * (each through a reader's buffer of 32 KB). A test build sets them small to take the
 * spooled paths on small recordings. */
#ifndef TL_RUN
#define TL_RUN 32768
#endif
#ifndef TL_FANIN
#define TL_FANIN 32
#endif

struct tl_seen {
	uint32_t pid, tid;
	uint64_t last;
};

/* The first sample of an event: its time (the earliest; the first added among equals). */
struct tl_first {
	uint64_t time;
	int set;
};

struct pc_timeline {
	struct pc_sample *buf;   /* the run being gathered, in the order added */
	size_t nbuf;
	struct spool *runs;      /* the runs gathered before it, each sorted */
	uint64_t *run_len;
	size_t nruns, runs_cap;
	int finished;
	/* after timeline_finish: the samples in order, in `sorted` when runs were
	 * spooled, else buf[order[...]] */
	struct spool *sorted;
	uint32_t *order;
	struct tl_thread *threads;
	size_t nthreads, threads_cap;
	uint32_t *map;           /* node ids as added -> the profile's now; NULL: the same */
	size_t nmap;
	struct u64map seen_index; /* (pid, tid) + 1 -> index in seen + 1 */
	struct tl_seen *seen;
	size_t nseen, seen_cap;
	struct tl_first first;   /* of any event, and its event */
	int first_event;
	struct tl_first *ev_first;
	size_t nev;
	int err;                 /* of a spool let go */
	uint64_t nadded;         /* samples added so far: the next one's place */
	struct tl_agg *agg;      /* the first sample of each of the profile's aggregates */
	size_t nagg, agg_cap;
};

/* When an aggregate's first sample came: its time, and its place among those added. */
struct tl_agg {
	uint64_t time, seq;
};

struct pc_timeline *timeline_new(void)
{
	struct pc_timeline *t = xcalloc(1, sizeof(*t));

	t->buf = xmalloc(TL_RUN * sizeof(*t->buf));
	u64map_init(&t->seen_index);
	return t;
}

void timeline_free(struct pc_timeline *t)
{
	if (!t)
		return;
	free(t->buf);
	spool_free(t->runs);
	free(t->run_len);
	spool_free(t->sorted);
	free(t->order);
	free(t->threads);
	free(t->map);
	u64map_release(&t->seen_index);
	free(t->seen);
	free(t->ev_first);
	free(t->agg);
	free(t);
}

static uint64_t thread_key(const struct pc_sample *s)
{
	return ((uint64_t)s->pid << 32) | s->tid;
}

/* Indexes 0 .. n - 1 ordered by key(ctx, i, 1), then key(ctx, i, 0), then i: two
 * stable radix sorts, the minor key's first. The caller frees it. */
static uint32_t *order_by(size_t n, uint64_t (*key)(const void *ctx, size_t i, int major),
			  const void *ctx)
{
	struct sort_pair *v = xmalloc((n ? n : 1) * sizeof(*v));
	struct sort_pair *tmp = xmalloc((n ? n : 1) * sizeof(*tmp));
	uint32_t *order = xmalloc((n ? n : 1) * sizeof(*order));

	for (size_t i = 0; i < n; i++) {
		v[i].key = key(ctx, i, 0);
		v[i].val = i;
	}
	sort_pairs(v, tmp, n);
	for (size_t i = 0; i < n; i++)
		v[i].key = key(ctx, v[i].val, 1);
	sort_pairs(v, tmp, n);
	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t)v[i].val;
	free(v);
	free(tmp);
	return order;
}

static uint64_t run_key(const void *ctx, size_t i, int major)
{
	const struct pc_sample *s = &((const struct pc_sample *)ctx)[i];

	return major ? thread_key(s) : s->time;
}

/* The order of buf[0..n): by thread, then time, then the order added. */
static uint32_t *sort_run(const struct pc_sample *buf, size_t n)
{
	return order_by(n, run_key, buf);
}

static void spill_run(struct pc_timeline *t)
{
	uint32_t *order = sort_run(t->buf, t->nbuf);

	if (!t->runs)
		t->runs = spool_new(sizeof(struct pc_sample), 0);
	for (size_t i = 0; i < t->nbuf; i++)
		spool_append(t->runs, &t->buf[order[i]]);
	free(order);
	VEC_PUSH(t->run_len, t->nruns, t->runs_cap, (uint64_t)t->nbuf);
	t->nbuf = 0;
}

/* The first I/O error of a spool about to be let go, for timeline_error(). */
static void keep_error(struct pc_timeline *t, const struct spool *s)
{
	if (s && !t->err)
		t->err = spool_error(s);
}

static void note_first(struct tl_first *f, uint64_t time)
{
	if (!f->set || time < f->time) {
		f->time = time;
		f->set = 1;
	}
}

void timeline_add(struct pc_timeline *t, const struct pc_sample *s)
{
	uint64_t key = thread_key(s) + 1;
	uint32_t *v;

	if (t->finished)
		return;
	if (t->nbuf == TL_RUN)
		spill_run(t);
	t->buf[t->nbuf++] = *s;
	t->nadded++;
	if ((v = u64map_get(&t->seen_index, key)) != NULL) {
		if (s->time > t->seen[*v - 1].last)
			t->seen[*v - 1].last = s->time;
	} else {
		struct tl_seen n = { s->pid, s->tid, s->time };

		VEC_PUSH(t->seen, t->nseen, t->seen_cap, n);
		u64map_put(&t->seen_index, key, (uint32_t)t->nseen);
	}
	if (!t->first.set || s->time < t->first.time)
		t->first_event = s->event;
	note_first(&t->first, s->time);
	if (s->event >= t->nev) {
		size_t old = t->nev;

		grow_array((void **)&t->ev_first, &t->nev, (size_t)s->event + 1, sizeof(*t->ev_first));
		memset(t->ev_first + old, 0, (t->nev - old) * sizeof(*t->ev_first));
	}
	note_first(&t->ev_first[s->event], s->time);
}

void timeline_remap(struct pc_timeline *t, const uint32_t *to, size_t n)
{
	if (!t->map) {
		t->map = xmalloc((n ? n : 1) * sizeof(*t->map));
		memcpy(t->map, to, n * sizeof(*to));
		t->nmap = n;
		return;
	}
	for (size_t i = 0; i < t->nmap; i++)
		if (t->map[i] < n)
			t->map[i] = to[t->map[i]];
}

static int agg_before(const struct tl_agg *a, const struct tl_agg *b)
{
	return a->time != b->time ? a->time < b->time : a->seq < b->seq;
}

void timeline_note_aggregate(struct pc_timeline *t, size_t i, uint64_t time)
{
	struct tl_agg now = { time, t->nadded ? t->nadded - 1 : 0 };

	if (i >= t->nagg) {
		grow_array((void **)&t->agg, &t->agg_cap, i + 1, sizeof(*t->agg));
		for (size_t k = t->nagg; k <= i; k++)
			t->agg[k] = now;
		t->nagg = i + 1;
	} else if (agg_before(&now, &t->agg[i])) {
		t->agg[i] = now;
	}
}

void timeline_merge_aggregates(struct pc_timeline *t, const uint32_t *into, size_t n)
{
	struct tl_agg *was = t->agg;
	size_t nwas = t->nagg < n ? t->nagg : n, nnew = 0;

	for (size_t i = 0; i < nwas; i++)
		if (into[i] + (size_t)1 > nnew)
			nnew = into[i] + (size_t)1;
	t->agg = xmalloc((nnew ? nnew : 1) * sizeof(*t->agg));
	t->nagg = t->agg_cap = nnew;
	for (size_t k = 0; k < nnew; k++)
		t->agg[k].time = t->agg[k].seq = UINT64_MAX;
	for (size_t i = 0; i < nwas; i++)
		if (agg_before(&was[i], &t->agg[into[i]]))
			t->agg[into[i]] = was[i];
	free(was);
}

static uint64_t agg_key(const void *ctx, size_t i, int major)
{
	const struct pc_timeline *t = ctx;

	if (i >= t->nagg)
		return UINT64_MAX;
	return major ? t->agg[i].time : t->agg[i].seq;
}

uint32_t *timeline_aggregate_order(const struct pc_timeline *t, size_t n)
{
	return order_by(n, agg_key, t);
}

size_t timeline_nseen(const struct pc_timeline *t)
{
	return t->nseen;
}

void timeline_seen(const struct pc_timeline *t, size_t i, uint32_t *pid, uint32_t *tid,
		   uint64_t *last_time)
{
	*pid = t->seen[i].pid;
	*tid = t->seen[i].tid;
	*last_time = t->seen[i].last;
}

int timeline_first(const struct pc_timeline *t, int event, uint64_t *time, int *event_out)
{
	const struct tl_first *f = event < 0 ? &t->first
				   : (size_t)event < t->nev ? &t->ev_first[event] : NULL;

	if (!f || !f->set)
		return 0;
	*time = f->time;
	*event_out = event < 0 ? t->first_event : event;
	return 1;
}

/* Note sample `s`, at position `at` of the order, in the table of threads. */
static void add_to_threads(struct pc_timeline *t, const struct pc_sample *s, uint64_t at)
{
	struct tl_thread *last = t->nthreads ? &t->threads[t->nthreads - 1] : NULL;

	if (!last || last->pid != s->pid || last->tid != s->tid) {
		struct tl_thread n = { s->pid, s->tid, at, 0 };

		VEC_PUSH(t->threads, t->nthreads, t->threads_cap, n);
		last = &t->threads[t->nthreads - 1];
	}
	last->n++;
}

/* Before b in the merged order: by thread, time, and then the earlier run. */
static int before(const struct pc_sample *a, size_t ra, const struct pc_sample *b, size_t rb)
{
	uint64_t ka = thread_key(a), kb = thread_key(b);

	if (ka != kb)
		return ka < kb;
	if (a->time != b->time)
		return a->time < b->time;
	return ra < rb;
}

/*
 * Merge runs [r0, r1) of `in` (starting at record `start`) into `out`, one run;
 * with `threads`, the table of threads made as it goes. A binary heap of the runs'
 * next samples.
 */
static void merge(struct pc_timeline *t, struct spool *in, uint64_t start, size_t r0, size_t r1,
		  struct spool *out, int threads)
{
	size_t k = r1 - r0, nh = 0;
	struct spool_reader *rd = xcalloc(k, sizeof(*rd));
	const struct pc_sample **head = xcalloc(k, sizeof(*head));
	size_t *heap = xcalloc(k, sizeof(*heap));
	uint64_t at = 0;

	for (size_t i = 0; i < k; i++) {
		spool_reader_init(&rd[i], in, start, start + t->run_len[r0 + i], 0);
		start += t->run_len[r0 + i];
		if ((head[i] = spool_read(&rd[i])) == NULL)
			continue;
		/* sift up */
		size_t c = nh++;

		heap[c] = i;
		while (c > 0 && before(head[heap[c]], heap[c], head[heap[(c - 1) / 2]], heap[(c - 1) / 2])) {
			size_t p = (c - 1) / 2, x = heap[c];

			heap[c] = heap[p];
			heap[p] = x;
			c = p;
		}
	}
	while (nh) {
		size_t top = heap[0], c = 0;

		spool_append(out, head[top]);
		if (threads)
			add_to_threads(t, head[top], at);
		at++;
		if ((head[top] = spool_read(&rd[top])) == NULL)
			heap[0] = heap[--nh];
		/* sift down */
		for (;;) {
			size_t l = 2 * c + 1, r = l + 1, m = c;

			if (l < nh && before(head[heap[l]], heap[l], head[heap[m]], heap[m]))
				m = l;
			if (r < nh && before(head[heap[r]], heap[r], head[heap[m]], heap[m]))
				m = r;
			if (m == c)
				break;
			size_t x = heap[c];

			heap[c] = heap[m];
			heap[m] = x;
			c = m;
		}
	}
	for (size_t i = 0; i < k; i++)
		spool_reader_release(&rd[i]);
	free(rd);
	free(head);
	free(heap);
}

void timeline_finish(struct pc_timeline *t)
{
	if (t->finished)
		return;
	t->finished = 1;
	if (!t->nruns) {
		/* all in memory: sorted where it is */
		t->order = sort_run(t->buf, t->nbuf);
		for (size_t i = 0; i < t->nbuf; i++)
			add_to_threads(t, &t->buf[t->order[i]], i);
		return;
	}
	if (t->nbuf)
		spill_run(t);
	free(t->buf);
	t->buf = NULL;
	/* merge TL_FANIN runs into one until one merge is left */
	while (t->nruns > TL_FANIN && !t->err) {
		struct spool *next = spool_new(sizeof(struct pc_sample), 0);
		uint64_t start = 0, *len = xmalloc((t->nruns / TL_FANIN + 1) * sizeof(*len));
		size_t n = 0;

		for (size_t r = 0; r < t->nruns; r += TL_FANIN) {
			size_t e = r + TL_FANIN < t->nruns ? r + TL_FANIN : t->nruns;

			len[n] = 0;
			for (size_t i = r; i < e; i++)
				len[n] += t->run_len[i];
			merge(t, t->runs, start, r, e, next, 0);
			start += len[n++];
		}
		keep_error(t, t->runs);
		spool_free(t->runs);
		t->runs = next;
		free(t->run_len);
		t->run_len = len;
		t->nruns = t->runs_cap = n;
	}
	t->sorted = spool_new(sizeof(struct pc_sample), 0);
	merge(t, t->runs, 0, 0, t->nruns, t->sorted, 1);
	keep_error(t, t->runs);
	spool_free(t->runs);
	t->runs = NULL;
}

size_t timeline_nthreads(const struct pc_timeline *t)
{
	return t->nthreads;
}

const struct tl_thread *timeline_thread(const struct pc_timeline *t, size_t i)
{
	return &t->threads[i];
}

int timeline_error(const struct pc_timeline *t)
{
	if (t->err)
		return t->err;
	if (t->runs && spool_error(t->runs))
		return spool_error(t->runs);
	return t->sorted ? spool_error(t->sorted) : 0;
}

void timeline_cursor_init(struct timeline_cursor *c, struct pc_timeline *t, size_t thread)
{
	const struct tl_thread *th = &t->threads[thread];

	memset(c, 0, sizeof(*c));
	c->t = t;
	c->k = th->first;
	c->end = th->first + th->n;
	if (t->sorted)
		spool_reader_init(&c->r, t->sorted, th->first, th->first + th->n, 0);
}

const struct pc_sample *timeline_cursor_next(struct timeline_cursor *c)
{
	const struct pc_timeline *t = c->t;
	const struct pc_sample *s;

	if (t->sorted) {
		s = spool_read(&c->r);
	} else {
		if (c->k >= c->end)
			return NULL;
		s = &t->buf[t->order[c->k++]];
	}
	if (!s)
		return NULL;
	c->s = *s;
	if (t->map && c->s.stack < t->nmap)
		c->s.stack = t->map[c->s.stack];
	return &c->s;
}

void timeline_cursor_release(struct timeline_cursor *c)
{
	spool_reader_release(&c->r);
}
