/* profile: the format-neutral model every writer consumes. */
#include "formats/model/profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "formats/model/timeline.h"

/* Read past in a rebuild before it is freed: its pages given back a megabyte at a time. */
#define DROP_STEP (1u << 20)

/*
 * The pages wholly within bytes [from, to) of the allocation at `base` given back to
 * the kernel: a table read once from the front while its replacement grows (a 1 GB
 * whole-machine recording's stack nodes, 120 MB) then costs what is left of it. The
 * pages hold nothing more to read; the allocation is freed as usual afterwards (the
 * page holding malloc's header, just before `base`, is never among them). Returns
 * where the next call's `from` is: the end of the pages given back.
 */
static size_t drop_read(const void *base, size_t from, size_t to)
{
	long ps = sysconf(_SC_PAGESIZE); /* once a megabyte */
	uintptr_t page = ps > 0 ? (uintptr_t)ps : 4096;
	uintptr_t a = (uintptr_t)base + from, b = (uintptr_t)base + to;

	a = (a + page - 1) & ~(page - 1);
	b &= ~(page - 1);
	if (a >= b)
		return from;
	(void)madvise((void *)a, b - a, MADV_DONTNEED);
	return (size_t)(b - (uintptr_t)base);
}

const char *pc_unit_name(enum pc_unit u)
{
	switch (u) {
	case PC_UNIT_NANOSECONDS: return "nanoseconds";
	case PC_UNIT_BYTES: return "bytes";
	default: return "count";
	}
}

const char *pc_state_name(enum pc_state s)
{
	switch (s) {
	case PC_STATE_PREEMPTED: return "preempted";
	case PC_STATE_SLEEPING: return "sleeping";
	case PC_STATE_DISK: return "disk";
	case PC_STATE_STOPPED: return "stopped";
	case PC_STATE_IDLE: return "idle";
	case PC_STATE_BLOCKED: return "blocked";
	case PC_STATE_OTHER: return "other";
	default: return "";
	}
}

void profile_name_states(struct profile *p)
{
	for (int s = PC_STATE_NONE + 1; s < PC_NSTATES; s++) {
		char name[64];

		snprintf(name, sizeof(name), "[off-CPU: %s]", pc_state_name((enum pc_state)s));
		p->state_name[s] = profile_str(p, name);
	}
}

void profile_init(struct profile *p)
{
	struct pc_node root = { 0, 0, 0 };
	struct pc_mapping none;

	memset(p, 0, sizeof(*p));
	strtab_init(&p->strings);
	u64map_init(&p->mapping_index);
	u64map_init(&p->thread_names);
	VEC_PUSH(p->nodes, p->nnodes, p->nodes_cap, root);
	memset(&none, 0, sizeof(none));
	VEC_PUSH(p->mappings, p->nmappings, p->mappings_cap, none);
}

void profile_keep_timeline(struct profile *p)
{
	p->aggregate = 1;
	if (!p->timeline)
		p->timeline = timeline_new();
}

void profile_release(struct profile *p)
{
	timeline_free(p->timeline);
	strtab_release(&p->strings);
	free(p->mappings);
	free(p->frames);
	free(p->nodes);
	free(p->samples);
	free(p->events);
	free(p->marks);
	id_index_release(&p->frame_index);
	id_index_release(&p->sample_index);
	id_index_release(&p->node_index);
	u64map_release(&p->mapping_index);
	u64map_release(&p->thread_names);
	memset(p, 0, sizeof(*p));
}

void profile_add_mark(struct profile *p, const struct pc_mark *m)
{
	if (!p->keep_marks)
		return;
	if (p->nmarks >= PC_MAX_MARKS) {
		p->marks_dropped++;
		return;
	}
	VEC_PUSH(p->marks, p->nmarks, p->marks_cap, *m);
}

static uint64_t thread_key(uint32_t pid, uint32_t tid)
{
	return (((uint64_t)pid << 32) | tid) + 1;
}

void profile_set_thread_name(struct profile *p, uint32_t pid, uint32_t tid, uint32_t name)
{
	u64map_put(&p->thread_names, thread_key(pid, tid), name);
}

uint32_t profile_thread_name(const struct profile *p, uint32_t pid, uint32_t tid)
{
	const uint32_t *v = u64map_get(&p->thread_names, thread_key(pid, tid));

	return v ? *v : 0;
}

static uint64_t frame_hash(const void *items, size_t id)
{
	return hash_bytes(&((const struct pc_frame *)items)[id], sizeof(struct pc_frame));
}

void profile_reindex_frames(struct profile *p)
{
	id_index_refill(&p->frame_index, p->nframes, frame_hash, p->frames);
}

uint32_t profile_frame(struct profile *p, const struct pc_frame *in)
{
	struct pc_frame f = *in;
	size_t i;

	memset(f.pad, 0, sizeof(f.pad));
	id_index_reserve(&p->frame_index, p->nframes, frame_hash, p->frames);
	for (i = hash_bytes(&f, sizeof(f)) & (p->frame_index.nslots - 1); p->frame_index.slots[i];
	     i = (i + 1) & (p->frame_index.nslots - 1)) {
		uint32_t id = p->frame_index.slots[i] - 1;

		if (memcmp(&p->frames[id], &f, sizeof(f)) == 0)
			return id;
	}
	VEC_PUSH(p->frames, p->nframes, p->frames_cap, f);
	p->frame_index.slots[i] = (uint32_t)p->nframes;
	return (uint32_t)p->nframes - 1;
}

static uint64_t node_hash(uint32_t parent, uint32_t frame)
{
	return hash_u64(((uint64_t)parent << 32 | frame) + 1);
}

static uint64_t node_hash_at(const void *items, size_t id)
{
	const struct pc_node *n = &((const struct pc_node *)items)[id];

	return node_hash(n->parent, n->frame);
}

uint32_t profile_node(struct profile *p, uint32_t parent, uint32_t frame)
{
	struct id_index *x = &p->node_index;
	struct pc_node n;
	size_t i;

	id_index_reserve(x, p->nnodes, node_hash_at, p->nodes);
	/* the root (id 0) is in the index too, and is no one's child */
	for (i = node_hash(parent, frame) & (x->nslots - 1); x->slots[i]; i = (i + 1) & (x->nslots - 1)) {
		uint32_t id = x->slots[i] - 1;

		if (id && p->nodes[id].parent == parent && p->nodes[id].frame == frame)
			return id;
	}
	n.parent = parent;
	n.frame = frame;
	n.depth = p->nodes[parent].depth + 1;
	VEC_PUSH(p->nodes, p->nnodes, p->nodes_cap, n);
	x->slots[i] = (uint32_t)p->nnodes;
	return (uint32_t)p->nnodes - 1;
}

uint32_t profile_mapping(struct profile *p, const struct pc_mapping *m)
{
	struct pc_mapping c = *m;
	uint64_t key = hash_bytes(&c, sizeof(c)) | 1;
	uint32_t *v;

	/* the padding of pc_mapping is zero when callers memset it, which they do */
	v = u64map_get(&p->mapping_index, key);
	if (v && memcmp(&p->mappings[*v], &c, sizeof(c)) == 0)
		return *v;
	VEC_PUSH(p->mappings, p->nmappings, p->mappings_cap, c);
	if (!v)
		u64map_put(&p->mapping_index, key, (uint32_t)p->nmappings - 1);
	return (uint32_t)p->nmappings - 1;
}

uint32_t profile_add_event(struct profile *p, const struct pc_event *e)
{
	VEC_PUSH(p->events, p->nevents, p->events_cap, *e);
	return (uint32_t)p->nevents - 1;
}

/* Which of the profile's spans of time (aggregate_ns) `s` falls in; 0 when one span. */
static uint64_t sample_span(const struct profile *p, const struct pc_sample *s)
{
	return p->aggregate_ns ? s->time / p->aggregate_ns : 0;
}

/* The fields that make two samples one aggregate. */
static int sample_twins(const struct profile *p, const struct pc_sample *a,
			const struct pc_sample *b)
{
	return a->stack == b->stack &&
	       (p->aggregate_threads || (a->pid == b->pid && a->tid == b->tid)) && a->cpu == b->cpu &&
	       a->comm == b->comm && a->event == b->event && a->state == b->state &&
	       a->side == b->side &&
	       sample_span(p, a) == sample_span(p, b);
}

static uint64_t sample_hash(const struct profile *p, const struct pc_sample *s)
{
	uint32_t pid = p->aggregate_threads ? 0 : s->pid, tid = p->aggregate_threads ? 0 : s->tid;
	uint64_t h = hash_u64(((uint64_t)s->stack << 32) ^ tid);

	h = hash_u64(h ^ ((uint64_t)pid << 32) ^ s->cpu);
	h = hash_u64(h ^ ((uint64_t)s->comm << 16) ^ s->event ^ ((uint64_t)s->state << 48) ^
		     ((uint64_t)s->side << 56));
	return p->aggregate_ns ? hash_u64(h ^ sample_span(p, s)) : h;
}

static uint64_t sample_hash_at(const void *items, size_t id)
{
	const struct profile *p = items;

	return sample_hash(p, &p->samples[id]);
}

/* The aggregate `s` belongs to, or a new one. */
static struct pc_sample *sample_slot(struct profile *p, const struct pc_sample *s)
{
	size_t i;

	id_index_reserve(&p->sample_index, p->nsamples, sample_hash_at, p);
	for (i = sample_hash(p, s) & (p->sample_index.nslots - 1); p->sample_index.slots[i];
	     i = (i + 1) & (p->sample_index.nslots - 1)) {
		struct pc_sample *t = &p->samples[p->sample_index.slots[i] - 1];

		if (sample_twins(p, t, s))
			return t;
	}
	VEC_PUSH(p->samples, p->nsamples, p->samples_cap, *s);
	p->sample_index.slots[i] = (uint32_t)p->nsamples;
	p->samples[p->nsamples - 1].count = 0;
	p->samples[p->nsamples - 1].period = 0;
	return &p->samples[p->nsamples - 1];
}

void profile_add_sample(struct profile *p, const struct pc_sample *s)
{
	uint64_t count = s->count ? s->count : 1;
	struct pc_sample *t;

	if (p->timeline) {
		struct pc_sample one = *s;

		one.count = count;
		timeline_add(p->timeline, &one);
	}
	if (p->aggregate) {
		t = sample_slot(p, s);
		if (p->timeline)
			timeline_note_aggregate(p->timeline, (size_t)(t - p->samples), s->time);
	} else {
		VEC_PUSH(p->samples, p->nsamples, p->samples_cap, *s);
		t = &p->samples[p->nsamples - 1];
		t->count = t->period = 0;
	}
	t->count += count;
	t->period += s->period;
	if (s->event < p->nevents) {
		p->events[s->event].nsamples += count;
		p->events[s->event].total_period += s->period;
	}
	if (!p->first_time_set || s->time < p->first_time) {
		p->first_time = s->time;
		p->first_time_set = 1;
	}
	if (s->time > p->last_time)
		p->last_time = s->time;
}

/* After the nodes were rebuilt (old node k is now to[k]): the samples follow, those of
 * the timeline too, and aggregated samples that became twins are merged. Frees `to`. */
static void follow_nodes(struct profile *p, uint32_t *to, size_t nold)
{
	size_t dropped = 0;

	for (size_t i = 0; i < p->nsamples; i++)
		p->samples[i].stack = to[p->samples[i].stack];
	if (p->timeline)
		timeline_remap(p->timeline, to, nold);
	free(to);
	if (p->aggregate) {
		struct pc_sample *was = p->samples;
		size_t n = p->nsamples;

		uint32_t *into = p->timeline ? xmalloc((n ? n : 1) * sizeof(*into)) : NULL;

		p->samples = NULL;
		p->nsamples = p->samples_cap = 0;
		id_index_release(&p->sample_index);
		dropped = 0;
		for (size_t i = 0; i < n; i++) {
			struct pc_sample *t = sample_slot(p, &was[i]);

			t->count += was[i].count;
			t->period += was[i].period;
			if (into)
				into[i] = (uint32_t)(t - p->samples);
			if ((i + 1) * sizeof(*was) - dropped >= DROP_STEP)
				dropped = drop_read(was, dropped, (i + 1) * sizeof(*was));
		}
		if (into)
			timeline_merge_aggregates(p->timeline, into, n);
		free(into);
		free(was);
	}
}

/* The nodes emptied for a rebuild, the old ones handed back (*nold of them). */
static struct pc_node *take_nodes(struct profile *p, size_t *nold)
{
	struct pc_node *old = p->nodes, root = { 0, 0, 0 };

	*nold = p->nnodes;
	p->nodes = NULL;
	p->nnodes = p->nodes_cap = 0;
	id_index_release(&p->node_index);
	/* as many nodes at least as before: made at once, not grown step by step (it
	 * grows when half full) */
	p->node_index.nslots = 1024;
	while ((*nold + 1) * 2 >= p->node_index.nslots)
		p->node_index.nslots *= 2;
	p->node_index.slots = xcalloc(p->node_index.nslots, sizeof(*p->node_index.slots));
	grow_array((void **)&p->nodes, &p->nodes_cap, *nold, sizeof(*p->nodes));
	VEC_PUSH(p->nodes, p->nnodes, p->nodes_cap, root);
	return old;
}

void profile_expand_frames(struct profile *p, const uint32_t *first, const uint32_t *count,
			   const uint32_t *pool, size_t covered)
{
	size_t nold, dropped = 0;
	struct pc_node *old = take_nodes(p, &nold);
	uint32_t *to = xmalloc((nold ? nold : 1) * sizeof(*to));

	to[0] = 0;
	/* a node's parent was made before it: its new id is known */
	for (size_t k = 1; k < nold; k++) {
		uint32_t at = to[old[k].parent], fr = old[k].frame;

		if (fr < covered && count[fr])
			for (uint32_t j = count[fr]; j-- > 0;)
				at = profile_node(p, at, pool[first[fr] + j]);
		else
			at = profile_node(p, at, fr);
		to[k] = at;
		if ((k + 1) * sizeof(*old) - dropped >= DROP_STEP)
			dropped = drop_read(old, dropped, (k + 1) * sizeof(*old));
	}
	free(old);
	follow_nodes(p, to, nold);
}

void profile_rewrite_stacks(struct profile *p,
			    size_t (*fn)(void *arg, uint32_t *frames, size_t n), void *arg)
{
	size_t nold, cap = 0;
	struct pc_node *old = take_nodes(p, &nold);
	uint32_t *to = xmalloc((nold ? nold : 1) * sizeof(*to)), *buf = NULL;

	to[0] = 0;
	for (size_t k = 1; k < nold; k++) {
		size_t n = old[k].depth, m;
		uint32_t at = 0, j = (uint32_t)k;

		if (n > cap) {
			cap = n * 2;
			buf = xrealloc(buf, cap * sizeof(*buf));
		}
		/* leaf first, from the old tree (its nodes are intact until freed) */
		for (size_t i = 0; i < n; i++, j = old[j].parent)
			buf[i] = old[j].frame;
		m = fn(arg, buf, n);
		while (m-- > 0)
			at = profile_node(p, at, buf[m]);
		to[k] = at;
	}
	free(buf);
	free(old);
	follow_nodes(p, to, nold);
}

void profile_sort_samples(struct profile *p)
{
	struct sort_pair *keys, *tmp;
	struct pc_sample held;
	size_t i;

	/* already in order is common (pipe mode, one CPU) */
	for (i = 1; i < p->nsamples; i++)
		if (p->samples[i].time < p->samples[i - 1].time)
			break;
	if (i >= p->nsamples)
		return;
	keys = xmalloc(p->nsamples * sizeof(*keys));
	tmp = xmalloc(p->nsamples * sizeof(*tmp));
	for (i = 0; i < p->nsamples; i++) {
		keys[i].key = p->samples[i].time;
		keys[i].val = i;
	}
	sort_pairs(keys, tmp, p->nsamples);
	free(tmp);
	/* moved in place along the permutation's cycles, not copied into a sorted array
	 * beside them: a whole-machine recording's 6.5 million samples are 312 MB */
	for (i = 0; i < p->nsamples; i++) {
		size_t j = i;

		if (keys[i].val == i)
			continue;
		held = p->samples[i];
		for (;;) {
			size_t k = (size_t)keys[j].val;

			keys[j].val = j;
			if (k == i) {
				p->samples[j] = held;
				break;
			}
			p->samples[j] = p->samples[k];
			j = k;
		}
	}
	free(keys);
}

size_t profile_stack(const struct profile *p, uint32_t node, uint32_t *out, size_t cap)
{
	size_t n = 0;

	while (node && n < cap) {
		out[n++] = p->nodes[node].frame;
		node = p->nodes[node].parent;
	}
	return n;
}

size_t profile_stack_all(const struct profile *p, uint32_t node, uint32_t **buf, size_t *cap)
{
	size_t n = 0;

	for (; node; node = p->nodes[node].parent) {
		if (n + 1 > *cap)
			grow_array((void **)buf, cap, n + 1, sizeof(**buf));
		(*buf)[n++] = p->nodes[node].frame;
	}
	return n;
}
