/* profview: the profile seen by function and by thread, for the timeline writers. */
#include "formats/model/profview.h"

#include <stdlib.h>
#include <string.h>

/* Kinds that make different functions: code inlined or not is the same function. */
static int kind_class(uint8_t kind)
{
	return kind == FRAME_INLINED ? FRAME_NATIVE : kind;
}

static int frame_fn_cmp(const void *a, const void *b, void *arg)
{
	const struct profile *sort_p = arg;
	const struct pc_frame *x = &sort_p->frames[*(const uint32_t *)a];
	const struct pc_frame *y = &sort_p->frames[*(const uint32_t *)b];

	if (x->func != y->func)
		return x->func < y->func ? -1 : 1;
	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	if (x->module != y->module)
		return x->module < y->module ? -1 : 1;
	return (kind_class(x->kind) > kind_class(y->kind)) - (kind_class(x->kind) < kind_class(y->kind));
}

static int thread_key_cmp(const void *a, const void *b, void *arg)
{
	const struct profile *sort_p = arg;
	const struct pc_sample *x = &sort_p->samples[*(const uint32_t *)a];
	const struct pc_sample *y = &sort_p->samples[*(const uint32_t *)b];
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return (i > j) - (i < j);
}

static int thread_name_cmp(const void *a, const void *b, void *arg)
{
	const struct profile *sort_p = arg;
	const struct pc_thread *x = a, *y = b;
	int c = strcmp(profile_text(sort_p, x->comm), profile_text(sort_p, y->comm));

	if (c)
		return c;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

static void build_functions(struct profview *v, const struct profile *p, const uint8_t *used)
{
	uint32_t *byfn = xmalloc((p->nframes ? p->nframes : 1) * sizeof(*byfn));
	size_t cap = 0;

	v->func_of_frame = xcalloc(p->nframes ? p->nframes : 1, sizeof(*v->func_of_frame));
	for (size_t i = 0; i < p->nframes; i++)
		byfn[i] = (uint32_t)i;
	qsort_r(byfn, p->nframes, sizeof(*byfn), frame_fn_cmp, (void *)p);
	for (size_t i = 0; i < p->nframes; i++) {
		const struct pc_frame *f = &p->frames[byfn[i]];

		if (i == 0 || frame_fn_cmp(&byfn[i - 1], &byfn[i], (void *)p) != 0) {
			struct pc_function fn;

			memset(&fn, 0, sizeof(fn));
			fn.name = f->func;
			fn.file = f->file;
			fn.module = f->module;
			fn.kind = f->kind;
			VEC_PUSH(v->funcs, v->nfuncs, cap, fn);
		}
		v->func_of_frame[byfn[i]] = (uint32_t)(v->nfuncs - 1);
	}
	free(byfn);
	/* the line: the smallest one that the used stacks show */
	for (size_t n = 1; n < p->nnodes; n++) {
		const struct pc_frame *f = &p->frames[p->nodes[n].frame];
		struct pc_function *fn = &v->funcs[v->func_of_frame[p->nodes[n].frame]];

		if (used[n] && f->line && (fn->line == 0 || f->line < fn->line))
			fn->line = f->line;
	}
}

static void build_fnodes(struct profview *v, const struct profile *p)
{
	struct u64map index;
	size_t cap = 0;
	struct pc_fnode root = { 0, 0, 0 };

	u64map_init(&index);
	v->fnode_of_node = xcalloc(p->nnodes ? p->nnodes : 1, sizeof(*v->fnode_of_node));
	VEC_PUSH(v->fnodes, v->nfnodes, cap, root);
	/* nodes are interned after their parents: one pass in id order sees parents first */
	for (size_t n = 1; n < p->nnodes; n++) {
		uint32_t parent = v->fnode_of_node[p->nodes[n].parent];
		uint32_t func = v->func_of_frame[p->nodes[n].frame];
		/* +1 keeps the key nonzero, as u64map needs */
		uint64_t key = ((uint64_t)parent << 32 | func) + 1;
		uint32_t *have = u64map_get(&index, key);

		if (have) {
			v->fnode_of_node[n] = *have;
		} else {
			struct pc_fnode fn;

			fn.parent = parent;
			fn.func = func;
			fn.depth = v->fnodes[parent].depth + 1;
			VEC_PUSH(v->fnodes, v->nfnodes, cap, fn);
			v->fnode_of_node[n] = (uint32_t)(v->nfnodes - 1);
			u64map_put(&index, key, (uint32_t)(v->nfnodes - 1));
		}
	}
	u64map_release(&index);
}

/* The functions and fnodes of the off-CPU states the samples of `event` have. */
static void build_states(struct profview *v, const struct profile *p, int event)
{
	uint32_t state_func[PC_NSTATES] = { 0 };
	size_t fcap = v->nfuncs, ncap = v->nfnodes;

	/* in the samples' time order: with a timeline, p->samples are aggregates, taken
	 * in the order of their first samples */
	uint32_t *order = p->timeline ? timeline_aggregate_order(p->timeline, p->nsamples) : NULL;

	u64map_init(&v->state_fnodes);
	for (size_t k = 0; k < p->nsamples; k++) {
		const struct pc_sample *s = &p->samples[order ? order[k] : k];
		uint32_t f = v->fnode_of_node[s->stack];
		uint64_t key;

		if (!s->state || s->state >= PC_NSTATES || (event >= 0 && s->event != event) ||
		    !p->state_name[s->state])
			continue;
		if (!state_func[s->state]) {
			struct pc_function fn;

			memset(&fn, 0, sizeof(fn));
			fn.name = p->state_name[s->state];
			fn.kind = FRAME_NATIVE;
			VEC_PUSH(v->funcs, v->nfuncs, fcap, fn);
			state_func[s->state] = (uint32_t)v->nfuncs; /* + 1 */
		}
		key = ((uint64_t)f << 8 | s->state) + 1;
		if (!u64map_get(&v->state_fnodes, key)) {
			struct pc_fnode fn;

			fn.parent = f;
			fn.func = state_func[s->state] - 1;
			fn.depth = v->fnodes[f].depth + 1;
			VEC_PUSH(v->fnodes, v->nfnodes, ncap, fn);
			u64map_put(&v->state_fnodes, key, (uint32_t)(v->nfnodes - 1));
		}
	}
	free(order);
}

static struct pc_thread *thread_new(struct profview *v, size_t *cap, uint32_t pid, uint32_t tid,
				    size_t first)
{
	struct pc_thread nt;

	memset(&nt, 0, sizeof(nt));
	nt.pid = pid;
	nt.tid = tid;
	nt.first = first;
	VEC_PUSH(v->threads, v->nthreads, *cap, nt);
	return &v->threads[v->nthreads - 1];
}

/* Sample `s`, the thread's next in time order, into its totals. */
static void thread_add(struct pc_thread *t, const struct pc_sample *s, int weight_period)
{
	if (!t->n)
		t->first_time = s->time;
	t->comm = s->comm;
	t->n++;
	t->weight += weight_period ? s->period : 1;
	t->last_time = s->time;
	t->last_period = s->period;
}

/* The threads of a profile with a timeline: one read of every sample. */
static void timeline_threads(struct profview *v, struct pc_timeline *tl, int weight_period)
{
	size_t cap = 0;

	timeline_finish(tl);
	if (timeline_first(tl, v->event, &v->first_time, &v->first_event))
		v->has_first = 1;
	for (size_t i = 0; i < timeline_nthreads(tl); i++) {
		const struct tl_thread *th = timeline_thread(tl, i);
		struct timeline_cursor c;
		const struct pc_sample *s;
		struct pc_thread t;

		memset(&t, 0, sizeof(t));
		timeline_cursor_init(&c, tl, i);
		while ((s = timeline_cursor_next(&c)) != NULL)
			if (v->event < 0 || s->event == v->event)
				thread_add(&t, s, weight_period);
		timeline_cursor_release(&c);
		if (t.n) {
			t.pid = th->pid;
			t.tid = th->tid;
			t.first = i;
			VEC_PUSH(v->threads, v->nthreads, cap, t);
		}
	}
}

static void build_threads(struct profview *v, const struct profile *p, int event,
			  int weight_period)
{
	size_t cap = 0;

	if (p->timeline) {
		timeline_threads(v, p->timeline, weight_period);
	} else {
		v->order = xmalloc((p->nsamples ? p->nsamples : 1) * sizeof(*v->order));
		for (size_t i = 0; i < p->nsamples; i++)
			if (event < 0 || p->samples[i].event == event)
				v->order[v->norder++] = (uint32_t)i;
		if (v->norder) {
			v->has_first = 1;
			v->first_time = p->samples[v->order[0]].time;
			v->first_event = p->samples[v->order[0]].event;
		}
		qsort_r(v->order, v->norder, sizeof(*v->order), thread_key_cmp, (void *)p);
		for (size_t i = 0; i < v->norder; i++) {
			const struct pc_sample *s = &p->samples[v->order[i]];
			struct pc_thread *t = v->nthreads ? &v->threads[v->nthreads - 1] : NULL;

			if (!t || t->pid != s->pid || t->tid != s->tid)
				t = thread_new(v, &cap, s->pid, s->tid, i);
			thread_add(t, s, weight_period);
		}
	}
	for (size_t i = 0; i < v->nthreads; i++) {
		uint32_t last = profile_thread_name(p, v->threads[i].pid, v->threads[i].tid);

		if (last)
			v->threads[i].comm = last;
	}
	if (v->nthreads > 1)
		qsort_r(v->threads, v->nthreads, sizeof(*v->threads), thread_name_cmp, (void *)p);
}

void profview_init(struct profview *v, const struct profile *p, int event, int weight_period)
{
	uint8_t *used = xcalloc(p->nnodes ? p->nnodes : 1, 1);

	memset(v, 0, sizeof(*v));
	v->p = p;
	v->event = event;
	for (size_t i = 0; i < p->nsamples; i++)
		if (event < 0 || p->samples[i].event == event)
			used[p->samples[i].stack] = 1;
	for (size_t n = p->nnodes; n-- > 1;)
		if (used[n])
			used[p->nodes[n].parent] = 1;
	build_functions(v, p, used);
	build_fnodes(v, p);
	build_states(v, p, event);
	build_threads(v, p, event, weight_period);
	free(used);
}

void profview_release(struct profview *v)
{
	free(v->funcs);
	free(v->func_of_frame);
	free(v->fnodes);
	free(v->fnode_of_node);
	free(v->threads);
	free(v->order);
	u64map_release(&v->state_fnodes);
	memset(v, 0, sizeof(*v));
}

int profview_error(const struct profview *v)
{
	return v->p && v->p->timeline ? timeline_error(v->p->timeline) : 0;
}

void profview_cursor_init(struct profview_cursor *c, const struct profview *v,
			  const struct pc_thread *t)
{
	memset(c, 0, sizeof(*c));
	c->v = v;
	if (v->p->timeline) {
		timeline_cursor_init(&c->tc, v->p->timeline, t->first);
	} else {
		c->k = t->first;
		c->end = t->first + t->n;
	}
}

const struct pc_sample *profview_cursor_next(struct profview_cursor *c)
{
	const struct profview *v = c->v;
	const struct pc_sample *s;

	if (!v->p->timeline)
		return c->k < c->end ? &v->p->samples[v->order[c->k++]] : NULL;
	while ((s = timeline_cursor_next(&c->tc)) != NULL)
		if (v->event < 0 || s->event == v->event)
			return s;
	return NULL;
}

void profview_cursor_release(struct profview_cursor *c)
{
	if (c->v && c->v->p->timeline)
		timeline_cursor_release(&c->tc);
}
