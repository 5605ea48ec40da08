/* pdict: the tables a profile's frames become in pprof and OTLP alike. */
#include "formats/write/pdict.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/perf_abi.h"


void pdict_init(struct pdict *w, const struct profile *p)
{
	memset(w, 0, sizeof(*w));
	w->p = p;
	strtab_init(&w->out);
	u64map_init(&w->fn_index);
	u64map_init(&w->loc_index);
	u64map_init(&w->num_index);
	w->str_map = xcalloc(strtab_count(&p->strings) + 1, sizeof(*w->str_map));
	w->frame_fn = xcalloc(p->nframes + 1, sizeof(*w->frame_fn));
	w->node_loc = xcalloc(p->nnodes + 1, sizeof(*w->node_loc));
	w->node_next = xcalloc(p->nnodes + 1, sizeof(*w->node_next));
}

void pdict_release(struct pdict *w)
{
	free(w->synth);
	free(w->locs);
	free(w->pool);
	free(w->fns);
	free(w->frame_fn);
	free(w->str_map);
	free(w->node_loc);
	free(w->node_next);
	u64map_release(&w->fn_index);
	u64map_release(&w->loc_index);
	u64map_release(&w->num_index);
	strtab_release(&w->out);
	memset(w, 0, sizeof(*w));
}

/* profile.proto is proto3: its strings must be UTF-8, or strict decoders reject the
 * whole profile. Ill-formed bytes become U+FFFD, as the JSON writers write them. */
uint32_t pdict_str(struct pdict *w, const char *s)
{
	char *fixed = utf8_sanitize(s);
	uint32_t id = strtab_intern(&w->out, fixed ? fixed : s);

	free(fixed);
	return id;
}

uint32_t pdict_model_str(struct pdict *w, uint32_t id)
{
	if (id == 0)
		return 0;
	if (!w->str_map[id])
		w->str_map[id] = pdict_str(w, profile_text(w->p, id)) + 1;
	return w->str_map[id] - 1;
}

/* A number's text as a string: every sample row has its pid and tid so, formatted
 * once each (snprintf and the interning were a sixth of pprof_write). */
uint32_t pdict_num(struct pdict *w, uint64_t v)
{
	uint32_t *known = u64map_get(&w->num_index, v + 1);
	char buf[24];
	uint32_t id;

	if (known)
		return *known - 1;
	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	id = pdict_str(w, buf);
	u64map_put(&w->num_index, v + 1, id + 1);
	return id;
}

/*
 * Find or add an entry by hash: `probe` follows a chain of keys derived from the
 * hash until `same` says yes or the key is free. Returns the stored value + 1, or 0
 * when free (and *key is the free key).
 */
typedef int (*same_fn)(const struct pdict *w, uint32_t idx, const void *what);
static uint32_t probe(const struct pdict *w, const struct u64map *m, uint64_t h, same_fn same,
		      const void *what, uint64_t *key)
{
	uint64_t k = h | 1;
	uint32_t *v;

	while ((v = u64map_get(m, k)) != NULL) {
		if (same(w, *v, what))
			return *v + 1;
		k = hash_u64(k) | 1;
	}
	*key = k;
	return 0;
}

static int fn_same(const struct pdict *w, uint32_t idx, const void *what)
{
	return memcmp(&w->fns[idx], what, sizeof(struct pd_fn)) == 0;
}

/* The function of a symbolized frame: one per (name, system name, file). */
uint32_t pdict_function(struct pdict *w, uint32_t frame)
{
	const struct pc_frame *f = &w->p->frames[frame];
	struct pd_fn k;
	uint64_t key = 0;
	uint32_t found;

	if (w->frame_fn[frame])
		return w->frame_fn[frame];
	k.name = f->func;
	/* a name with no other form (kernel) is as the binary has it; but JIT code has no
	 * binary, and go tool pprof "demangles" a name equal to its system name: Java's
	 * "byte[] f(byte[], int)" looks like C++ to it and loses its parameters (so
	 * overloads merge). Its system name is left empty: the name is shown as it is. */
	k.system_name = f->system_name ? f->system_name : f->func;
	if (f->kind == FRAME_JIT && k.system_name == k.name)
		k.system_name = 0;
	k.file = f->file;
	found = probe(w, &w->fn_index, hash_bytes(&k, sizeof(k)), fn_same, &k, &key);
	if (!found) {
		VEC_PUSH(w->fns, w->nfns, w->fns_cap, k);
		found = (uint32_t)w->nfns;
		u64map_put(&w->fn_index, key, found - 1);
	}
	w->frame_fn[frame] = found;
	return found;
}

struct group {
	const uint32_t *frames;
	uint32_t n;
};

static int loc_same(const struct pdict *w, uint32_t idx, const void *what)
{
	const struct group *g = what;
	const struct pd_loc *l = &w->locs[idx];

	return l->n == g->n && memcmp(&w->pool[l->first], g->frames, g->n * sizeof(uint32_t)) == 0;
}

/* The writer's mapping index for frame `f` (0: none). */
static uint32_t frame_mapping(struct pdict *w, const struct pc_frame *f)
{
	struct pd_synth s;

	if (f->mapping)
		return f->mapping;
	if (f->kind != FRAME_KERNEL && f->kind != FRAME_JIT)
		return 0;
	/* kernel or JIT code still gets a mapping that says what it is */
	for (size_t i = 0; i < w->nsynth; i++) {
		struct pd_synth *m = &w->synth[i];

		if (m->kind == f->kind && m->module == f->module) {
			if (f->addr < m->start)
				m->start = f->addr;
			if (f->addr >= m->limit)
				m->limit = f->addr + 1;
			return (uint32_t)(w->p->nmappings + i);
		}
	}
	s.kind = f->kind;
	s.module = f->module;
	s.start = f->addr;
	s.limit = f->addr + 1;
	VEC_PUSH(w->synth, w->nsynth, w->synth_cap, s);
	return (uint32_t)(w->p->nmappings + w->nsynth - 1);
}

/*
 * The location id (1-based) of the frames starting at `node`: the node's frame and,
 * while a frame is inlined, the frames toward the root up to the one it is inlined
 * into. *next is the node after them.
 */
uint32_t pdict_location(struct pdict *w, uint32_t node, uint32_t *next)
{
	const struct profile *p = w->p;
	uint32_t frames[PDICT_MAX_GROUP];
	struct group g;
	uint32_t n = 0, cur = node, found;
	uint64_t key = 0;

	if (w->node_loc[node]) {
		*next = w->node_next[node];
		return w->node_loc[node];
	}
	while (cur != 0 && n < PDICT_MAX_GROUP) {
		uint32_t fr = p->nodes[cur].frame;

		frames[n++] = fr;
		cur = p->nodes[cur].parent;
		if (p->frames[fr].kind != FRAME_INLINED)
			break;
	}
	g.frames = frames;
	g.n = n;
	found = probe(w, &w->loc_index, hash_bytes(frames, n * sizeof(uint32_t)), loc_same, &g,
		      &key);
	if (!found) {
		const struct pc_frame *outer = &p->frames[frames[n - 1]];
		struct pd_loc l;

		l.first = (uint32_t)w->npool;
		l.n = n;
		l.addr = outer->addr;
		l.mapping = frame_mapping(w, outer);
		for (uint32_t i = 0; i < n; i++)
			VEC_PUSH(w->pool, w->npool, w->pool_cap, frames[i]);
		VEC_PUSH(w->locs, w->nlocs, w->locs_cap, l);
		found = (uint32_t)w->nlocs;
		u64map_put(&w->loc_index, key, found - 1);
	}
	w->node_loc[node] = found;
	w->node_next[node] = cur;
	*next = cur;
	return found;
}


/*
 * The event's name without perf's modifiers: "cpu-clock:pppH" -> "cpu-clock". A
 * tracepoint's name holds a colon of its own: "sched:sched_switch:u" ->
 * "sched:sched_switch".
 */
size_t pdict_event_base_len(const struct pc_event *e, const char *name)
{
	const char *colon = strchr(name, ':');

	if (colon && e->type == PERF_TYPE_TRACEPOINT)
		colon = strchr(colon + 1, ':');
	return colon ? (size_t)(colon - name) : strlen(name);
}

/* `len` bytes of `name` into `buf` (size `cap`), `suffix` after; with `go` every byte
 * outside [A-Za-z0-9_] becomes `_` (Pyroscope refuses a sample type with `-`, and
 * its profile type ids are split at `:`). */
void pdict_type_name(char *buf, size_t cap, const char *name, size_t len, const char *suffix,
		      int go)
{
	snprintf(buf, cap, "%.*s%s", (int)len, name, suffix);
	if (!go)
		return;
	for (char *c = buf; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '_'))
			*c = '_';
}

/* The number of events between samples, in the event's unit. */
int64_t pdict_event_period(const struct profile *p, const struct pc_event *e)
{
	if (!e->freq)
		return (int64_t)e->sample_period;
	if (e->is_clock && e->sample_period)
		return (int64_t)(1000000000ULL / e->sample_period);
	/* a frequency-driven count has no fixed period: the average one */
	return e->nsamples ? (int64_t)(e->total_period / e->nsamples) : 0;
}

size_t pdict_shown_events(const struct profile *p, int event, int *shown)
{
	size_t n = 0;

	for (size_t i = 0; i < p->nevents; i++)
		if (event >= 0 ? (size_t)event == i : p->events[i].nsamples > 0)
			shown[n++] = (int)i;
	if (n == 0 && event < 0)
		for (size_t i = 0; i < p->nevents; i++)
			shown[n++] = (int)i;
	return n;
}
