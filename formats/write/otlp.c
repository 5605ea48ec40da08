/* otlp: OpenTelemetry profiles, one ExportProfilesServiceRequest (see otlp.h). */
#include "formats/write/otlp.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "common/version.h"
#include "common/writeend.h"
#include "formats/write/pdict.h"
#include "otlp_profiles.pb-c.h"

typedef Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceRequest
	ox_request;
typedef Opentelemetry__Proto__Profiles__V1development__ProfilesDictionary ox_dict;
typedef Opentelemetry__Proto__Profiles__V1development__ResourceProfiles ox_resprof;
typedef Opentelemetry__Proto__Profiles__V1development__ScopeProfiles ox_scopeprof;
typedef Opentelemetry__Proto__Profiles__V1development__Profile ox_profile;
typedef Opentelemetry__Proto__Profiles__V1development__ValueType ox_vtype;
typedef Opentelemetry__Proto__Profiles__V1development__Sample ox_sample;
typedef Opentelemetry__Proto__Profiles__V1development__Mapping ox_mapping;
typedef Opentelemetry__Proto__Profiles__V1development__Location ox_location;
typedef Opentelemetry__Proto__Profiles__V1development__Line ox_line;
typedef Opentelemetry__Proto__Profiles__V1development__Function ox_function;
typedef Opentelemetry__Proto__Profiles__V1development__Link ox_link;
typedef Opentelemetry__Proto__Profiles__V1development__Stack ox_stack;
typedef Opentelemetry__Proto__Profiles__V1development__KeyValueAndUnit ox_attr;
typedef Opentelemetry__Proto__Common__V1__KeyValue ox_kv;
typedef Opentelemetry__Proto__Common__V1__AnyValue ox_any;
typedef Opentelemetry__Proto__Common__V1__InstrumentationScope ox_scope;
typedef Opentelemetry__Proto__Resource__V1__Resource ox_resource;

#define STR_CASE OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE
#define INT_CASE OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE

/* An attribute of the table: a key and a string (output string id) or an integer. */
struct attr {
	uint32_t key;
	int is_int;
	int64_t v;
};

struct ow {
	const struct profile *p;
	const struct write_options *o;
	struct pdict d;
	struct attr *attrs;        /* [0] the empty one */
	size_t nattrs, attrs_cap;
	struct u64map attr_index;  /* hash chain -> index */
	uint32_t *node_stack;      /* node -> stack index, 0 not yet */
	uint32_t **stacks;         /* [i - 1]: location indices of stack i, leaf first */
	size_t *stack_len, nstacks, stacks_cap, stack_len_cap;
	uint32_t *map_index;       /* pdict mapping -> output index, 0 unused */
	void **owned;              /* what the message tree was built of: freed at the end */
	size_t nowned, owned_cap;
	FILE *out;
	uint8_t *buf;              /* put_msg's */
	size_t buf_cap;
};

/* `ptr`, kept to be freed with the message tree. */
static void *own(struct ow *w, void *ptr)
{
	VEC_PUSH(w->owned, w->nowned, w->owned_cap, ptr);
	return ptr;
}

static uint32_t attr_of(struct ow *w, const char *key, int is_int, int64_t v, const char *s)
{
	struct attr a = { pdict_str(&w->d, key), is_int, is_int ? v : pdict_str(&w->d, s) };
	uint64_t k = hash_bytes(&a, sizeof(a)) | 1;
	uint32_t *at;

	while ((at = u64map_get(&w->attr_index, k)) != NULL) {
		if (memcmp(&w->attrs[*at], &a, sizeof(a)) == 0)
			return *at;
		k = hash_u64(k) | 1;
	}
	VEC_PUSH(w->attrs, w->nattrs, w->attrs_cap, a);
	u64map_put(&w->attr_index, k, (uint32_t)w->nattrs - 1);
	return (uint32_t)w->nattrs - 1;
}

/* The stack (1-based) of node `node`: its locations, leaf first. */
static uint32_t stack_of(struct ow *w, uint32_t node)
{
	uint32_t locs[PDICT_MAX_DEPTH], n = 0, cur = node;

	if (w->node_stack[node])
		return w->node_stack[node];
	while (cur != 0 && n < PDICT_MAX_DEPTH) {
		uint32_t next;

		locs[n++] = pdict_location(&w->d, cur, &next);
		cur = next;
	}
	VEC_PUSH(w->stacks, w->nstacks, w->stacks_cap, NULL);
	w->stacks[w->nstacks - 1] = xmalloc((n ? n : 1) * sizeof(uint32_t));
	memcpy(w->stacks[w->nstacks - 1], locs, n * sizeof(uint32_t));
	grow_array((void **)&w->stack_len, &w->stack_len_cap, w->nstacks, sizeof(*w->stack_len));
	w->stack_len[w->nstacks - 1] = n;
	w->node_stack[node] = (uint32_t)w->nstacks;
	return (uint32_t)w->nstacks;
}

/* Sample order: event, stack, thread, its name, cpu, state, then time. */
struct okey {
	const struct profile *p;
	int cpu;
};

static int sample_cmp(const void *a, const void *b, void *ctx)
{
	const struct okey *k = ctx;
	const struct pc_sample *x = &k->p->samples[*(const uint32_t *)a];
	const struct pc_sample *y = &k->p->samples[*(const uint32_t *)b];
	uint64_t kx[8] = { x->event, x->stack, x->pid, x->tid, x->comm,
			   k->cpu ? x->cpu : 0, x->state, x->time };
	uint64_t ky[8] = { y->event, y->stack, y->pid, y->tid, y->comm,
			   k->cpu ? y->cpu : 0, y->state, y->time };

	for (int i = 0; i < 8; i++)
		if (kx[i] != ky[i])
			return kx[i] < ky[i] ? -1 : 1;
	return 0;
}

static int same_row(const struct okey *k, const struct pc_sample *x, const struct pc_sample *y)
{
	return x->event == y->event && x->stack == y->stack && x->pid == y->pid &&
	       x->tid == y->tid && x->comm == y->comm && x->state == y->state &&
	       (!k->cpu || x->cpu == y->cpu);
}

/* Each process's name (pid + 1 -> comm + 1): its main thread's (tid == pid) at its first
 * sample in `order`. */
static void process_comms(const struct profile *p, const uint32_t *order, size_t n,
			  struct u64map *comms)
{
	for (size_t i = 0; i < n; i++) {
		const struct pc_sample *s = &p->samples[order[i]];

		if (s->pid == s->tid && s->comm && !u64map_get(comms, (uint64_t)s->pid + 1))
			u64map_put(comms, (uint64_t)s->pid + 1, s->comm + 1);
	}
}

static const char *const frame_types[] = { "native", "kernel", NULL, "native" };

/* Mappings: those a location names, in the model's order, then synthetic ones. */
static void fill_mappings(struct ow *w, ox_dict *dict)
{
	const struct profile *p = w->p;
	const struct pdict *d = &w->d;
	size_t nmap = p->nmappings + d->nsynth, nout = 1;
	ox_mapping *maps;

	w->map_index = own(w, xcalloc(nmap + 1, sizeof(*w->map_index)));
	for (size_t i = 0; i < d->nlocs; i++)
		if (d->locs[i].mapping)
			w->map_index[d->locs[i].mapping] = 1;
	for (size_t m = 1; m < nmap; m++)
		if (w->map_index[m])
			w->map_index[m] = (uint32_t)nout++;
	maps = own(w, xcalloc(nout, sizeof(*maps)));
	dict->mapping_table = own(w, xcalloc(nout, sizeof(*dict->mapping_table)));
	dict->n_mapping_table = nout;
	for (size_t m = 0; m < nmap; m++) {
		ox_mapping init = OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__MAPPING__INIT;
		uint32_t at = m ? w->map_index[m] : 0;

		if (m && !at)
			continue;
		maps[at] = init;
		dict->mapping_table[at] = &maps[at];
		if (!m)
			continue;
		if (m < p->nmappings) {
			const struct pc_mapping *pm = &p->mappings[m];

			maps[at].memory_start = pm->start;
			maps[at].memory_limit = pm->limit;
			maps[at].file_offset = pm->offset;
			maps[at].filename_strindex = (int32_t)pdict_model_str(&w->d, pm->file);
			if (pm->build_id && profile_text(p, pm->build_id)[0]) {
				uint32_t b = attr_of(w, "process.executable.build_id.gnu", 0, 0,
						     profile_text(p, pm->build_id));

				maps[at].attribute_indices = own(w, xmalloc(sizeof(int32_t)));
				maps[at].attribute_indices[0] = (int32_t)b;
				maps[at].n_attribute_indices = 1;
			}
		} else {
			const struct pd_synth *s = &d->synth[m - p->nmappings];

			maps[at].memory_start = s->start;
			maps[at].memory_limit = s->limit;
			maps[at].filename_strindex = (int32_t)pdict_model_str(&w->d, s->module);
		}
	}
}

/* Locations: each a mapping, an address and its lines, innermost first. */
static void fill_locations(struct ow *w, ox_dict *dict)
{
	const struct profile *p = w->p;
	const struct pdict *d = &w->d;
	ox_location *locs = own(w, xcalloc(d->nlocs + 1, sizeof(*locs)));
	ox_line *lines = own(w, xcalloc(d->npool + 1, sizeof(*lines)));
	size_t nl = 0;

	dict->location_table = own(w, xcalloc(d->nlocs + 1, sizeof(*dict->location_table)));
	dict->n_location_table = d->nlocs + 1;
	for (size_t i = 0; i <= d->nlocs; i++) {
		ox_location init = OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__LOCATION__INIT;
		const struct pd_loc *l = i ? &d->locs[i - 1] : NULL;
		uint8_t kind;

		locs[i] = init;
		dict->location_table[i] = &locs[i];
		if (!l)
			continue;
		locs[i].mapping_index = l->mapping ? (int32_t)w->map_index[l->mapping] : 0;
		locs[i].address = l->addr;
		locs[i].lines = own(w, xcalloc(l->n, sizeof(*locs[i].lines)));
		locs[i].n_lines = l->n;
		for (uint32_t j = 0; j < l->n; j++) {
			ox_line linit = OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__LINE__INIT;
			uint32_t fr = d->pool[l->first + j];
			const struct pc_frame *f = &p->frames[fr];

			lines[nl] = linit;
			lines[nl].function_index = (int32_t)pdict_function(&w->d, fr);
			lines[nl].line = f->line;
			lines[nl].column = f->column;
			locs[i].lines[j] = &lines[nl++];
		}
		kind = p->frames[d->pool[l->first + l->n - 1]].kind;
		if (kind < 4 && frame_types[kind]) {
			locs[i].attribute_indices = own(w, xmalloc(sizeof(int32_t)));
			locs[i].attribute_indices[0] =
				(int32_t)attr_of(w, "profile.frame.type", 0, 0, frame_types[kind]);
			locs[i].n_attribute_indices = 1;
		}
	}
}

/* Functions (pdict_function made them all while the lines were), stacks leaf first,
 * and the one link: none (an empty Link, which is what its zero value compares to). */
static void fill_functions_stacks(struct ow *w, ox_dict *dict)
{
	const struct pdict *d = &w->d;
	ox_function *fns = own(w, xcalloc(d->nfns + 1, sizeof(*fns)));
	ox_stack *stacks = own(w, xcalloc(w->nstacks + 1, sizeof(*stacks)));
	ox_link *link = own(w, xmalloc(sizeof(*link)));
	ox_link linit = OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__LINK__INIT;

	dict->function_table = own(w, xcalloc(d->nfns + 1, sizeof(*dict->function_table)));
	dict->n_function_table = d->nfns + 1;
	for (size_t i = 0; i <= d->nfns; i++) {
		ox_function init = OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__FUNCTION__INIT;

		fns[i] = init;
		dict->function_table[i] = &fns[i];
		if (!i)
			continue;
		fns[i].name_strindex = (int32_t)pdict_model_str(&w->d, d->fns[i - 1].name);
		fns[i].system_name_strindex = (int32_t)pdict_model_str(&w->d, d->fns[i - 1].system_name);
		fns[i].filename_strindex = (int32_t)pdict_model_str(&w->d, d->fns[i - 1].file);
	}
	dict->stack_table = own(w, xcalloc(w->nstacks + 1, sizeof(*dict->stack_table)));
	dict->n_stack_table = w->nstacks + 1;
	for (size_t i = 0; i <= w->nstacks; i++) {
		ox_stack init = OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__STACK__INIT;

		stacks[i] = init;
		dict->stack_table[i] = &stacks[i];
		if (!i)
			continue;
		stacks[i].location_indices = (int32_t *)w->stacks[i - 1];
		stacks[i].n_location_indices = w->stack_len[i - 1];
	}
	*link = linit;
	dict->link_table = own(w, xmalloc(sizeof(*dict->link_table)));
	dict->link_table[0] = link;
	dict->n_link_table = 1;
}

/* Attributes, last: every one is known by now; their strings too. */
static void fill_attributes(struct ow *w, ox_dict *dict)
{
	ox_attr *attrs = own(w, xcalloc(w->nattrs, sizeof(*attrs)));
	ox_any *anys = own(w, xcalloc(w->nattrs, sizeof(*anys)));

	dict->attribute_table = own(w, xcalloc(w->nattrs, sizeof(*dict->attribute_table)));
	dict->n_attribute_table = w->nattrs;
	for (size_t i = 0; i < w->nattrs; i++) {
		ox_attr init = OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__KEY_VALUE_AND_UNIT__INIT;
		ox_any ainit = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__INIT;

		attrs[i] = init;
		dict->attribute_table[i] = &attrs[i];
		if (!i)
			continue;
		anys[i] = ainit;
		attrs[i].key_strindex = (int32_t)w->attrs[i].key;
		attrs[i].value = &anys[i];
		if (w->attrs[i].is_int) {
			anys[i].value_case = INT_CASE;
			anys[i].int_value = w->attrs[i].v;
		} else {
			anys[i].value_case = STR_CASE;
			anys[i].string_value = (char *)(uintptr_t)strtab_str(&w->d.out, (uint32_t)w->attrs[i].v);
		}
	}
}

/* The output tables, index 0 the zero value of each, from what the samples used. */
static void fill_dictionary(struct ow *w, ox_dict *dict)
{
	fill_mappings(w, dict);
	fill_locations(w, dict);
	fill_functions_stacks(w, dict);
	fill_attributes(w, dict);
	dict->string_table = (char **)(uintptr_t)w->d.out.strs;
	dict->n_string_table = strtab_count(&w->d.out);
}

/* A resource or scope attribute: a plain key and value, as every reader takes them. */
static ox_kv *kv(struct ow *w, const char *key, const char *value)
{
	ox_kv init = OPENTELEMETRY__PROTO__COMMON__V1__KEY_VALUE__INIT;
	ox_any ainit = OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__INIT;
	ox_kv *k = own(w, xmalloc(sizeof(*k)));
	ox_any *a = own(w, xmalloc(sizeof(*a)));

	*k = init;
	*a = ainit;
	k->key = (char *)(uintptr_t)key;
	a->value_case = STR_CASE;
	a->string_value = (char *)(uintptr_t)value;
	k->value = a;
	return k;
}

static ox_vtype *vtype(struct ow *w, const char *type, const char *unit)
{
	ox_vtype init = OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__VALUE_TYPE__INIT;
	ox_vtype *t = own(w, xmalloc(sizeof(*t)));

	*t = init;
	t->type_strindex = (int32_t)pdict_str(&w->d, type);
	t->unit_strindex = (int32_t)pdict_str(&w->d, unit);
	return t;
}

/* The resource: where the recording was made, and what the user named. */
static ox_resource *resource(struct ow *w)
{
	const struct profile *p = w->p;
	ox_resource init = OPENTELEMETRY__PROTO__RESOURCE__V1__RESOURCE__INIT;
	ox_resource *r = own(w, xmalloc(sizeof(*r)));
	ox_kv **a = own(w, xcalloc(w->o->nlabels + 5, sizeof(*a)));
	size_t n = 0;
	const char *arch = p->arch ? profile_text(p, p->arch) : "";

	*r = init;
	for (size_t i = 0; i < w->o->nlabels; i++)
		if (strcmp(w->o->labels[i].key, "service") == 0)
			a[n++] = kv(w, "service.name", w->o->labels[i].value);
	if (p->hostname)
		a[n++] = kv(w, "host.name", profile_text(p, p->hostname));
	if (arch[0])
		a[n++] = kv(w, "host.arch", strcmp(arch, "x86_64") == 0 ? "amd64" :
					    strcmp(arch, "aarch64") == 0 ? "arm64" : arch);
	a[n++] = kv(w, "os.type", "linux");
	if (p->osrelease)
		a[n++] = kv(w, "os.version", profile_text(p, p->osrelease));
	for (size_t i = 0; i < w->o->nlabels; i++) {
		const char *k = w->o->labels[i].key;
		int dup = strcmp(k, "service") == 0;

		for (size_t j = 0; j < n && !dup; j++)
			dup = strcmp(a[j]->key, k) == 0;
		if (!dup)
			a[n++] = kv(w, k, w->o->labels[i].value);
	}
	r->attributes = a;
	r->n_attributes = n;
	return r;
}

/*
 * The two profiles of event `e`: its samples counted, and its periods summed. Their
 * samples are the rows order[begin .. end), each a Sample in both; what those take
 * packed, tags and lengths included, is counted before any is written.
 */
struct pair {
	ox_profile *count, *value;
	size_t begin, end, nrows;
	uint64_t csize, vsize;
};

/* The sample types (and period types) of event `e`, sanitized as Go's names. */
static void pair_types(struct ow *w, const struct pc_event *e, struct pair *pp)
{
	const char *name = profile_text(w->p, e->name), *unit = pc_unit_name(e->unit);
	size_t bl = pdict_event_base_len(e, name);
	int64_t period = pdict_event_period(w->p, e);
	char cname[256], vname[256];

	if (e->time == PC_TIME_OFFCPU || e->time == PC_TIME_WALL) {
		const char *t = e->time == PC_TIME_OFFCPU ? "off_cpu" : "wall";

		snprintf(cname, sizeof(cname), "%s_samples", t);
		snprintf(vname, sizeof(vname), "%s", t);
	} else if (e->is_clock) {
		snprintf(cname, sizeof(cname), "samples");
		snprintf(vname, sizeof(vname), "cpu");
	} else {
		pdict_type_name(cname, sizeof(cname), name, bl, "_samples", 1);
		pdict_type_name(vname, sizeof(vname), name, bl, "", 1);
	}
	pp->count->sample_type = vtype(w, cname, "count");
	pp->value->sample_type = vtype(w, vname, unit);
	/* what a sample stands for: Pyroscope names a profile by its period type, and takes
	 * samples/count with cpu/nanoseconds as process_cpu; off-CPU time has no period */
	if (e->time == PC_TIME_OFFCPU) {
		pp->count->period_type = vtype(w, cname, "count");
		pp->count->period = 1;
		return;
	}
	pp->count->period_type = vtype(w, vname, unit);
	pp->value->period_type = pp->count->period_type;
	pp->count->period = pp->value->period = period > 0 ? period : 1;
}

/*
 * The request is written as it is made: the samples, nearly all of it (3.9 GB of
 * message tree for a whole-machine recording of 1 GB), are packed one row at a time,
 * twice (to count their size for the lengths in front of them, then to write them),
 * and never held; the rest is packed by protobuf-c in pieces whose bytes, put
 * together, are what it packs of the whole (fields in number order, each once).
 */

/* A row's arrays, reused from one row to the next. */
struct rowbuf {
	int32_t attrs[6];
	uint64_t *cts, *vts;
	int64_t *vvals;
	size_t cts_cap, vts_cap, vvals_cap;
	int64_t cval, vval;
};

static void rowbuf_release(struct rowbuf *rb)
{
	free(rb->cts);
	free(rb->vts);
	free(rb->vvals);
}

/* The row's attributes: its thread, thread and process names, cpu and state. */
static size_t row_attrs(struct ow *w, const struct pc_sample *s, const struct u64map *comms,
			int32_t *attrs)
{
	const uint32_t *pcomm = u64map_get(comms, (uint64_t)s->pid + 1);
	size_t na = 0;

	attrs[na++] = (int32_t)attr_of(w, "process.pid", 1, s->pid, NULL);
	attrs[na++] = (int32_t)attr_of(w, "thread.id", 1, s->tid, NULL);
	if (s->comm)
		attrs[na++] = (int32_t)attr_of(w, "thread.name", 0, 0, profile_text(w->p, s->comm));
	if (pcomm)
		attrs[na++] = (int32_t)attr_of(w, "process.executable.name", 0, 0,
					       profile_text(w->p, *pcomm - 1));
	if (w->o->cpu_label && s->cpu != PC_NO_CPU)
		attrs[na++] = (int32_t)attr_of(w, "cpu.logical_number", 1, s->cpu, NULL);
	if (s->state)
		attrs[na++] = (int32_t)attr_of(w, "thread.state", 0, 0, pc_state_name(s->state));
	return na;
}

/* The row from order[i] (the same stack, thread, name...) as its two Samples, their
 * arrays in rb; returns the index past it. */
static size_t fill_row(struct ow *w, const struct okey *key, const uint32_t *order,
		       size_t norder, size_t i, const struct u64map *comms, struct rowbuf *rb,
		       ox_sample *cs, ox_sample *vs)
{
	const struct profile *p = w->p;
	const struct pc_sample *s = &p->samples[order[i]];
	ox_sample sinit = OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__SAMPLE__INIT;
	size_t j = i, n, nt = 0;

	*cs = sinit;
	*vs = sinit;
	cs->stack_index = vs->stack_index = (int32_t)stack_of(w, s->stack);
	cs->attribute_indices = vs->attribute_indices = rb->attrs;
	cs->n_attribute_indices = vs->n_attribute_indices = row_attrs(w, s, comms, rb->attrs);
	while (j < norder && same_row(key, s, &p->samples[order[j]])) {
		nt += p->samples[order[j]].count;
		j++;
	}
	n = j - i;
	if (!p->has_time) {
		rb->cval = (int64_t)nt;
		rb->vval = 0;
		for (size_t m = 0; m < n; m++)
			rb->vval += (int64_t)p->samples[order[i + m]].period;
		cs->values = &rb->cval;
		vs->values = &rb->vval;
		cs->n_values = vs->n_values = 1;
		return j;
	}
	/* each sample its time: the count profile one per sample, the value profile one
	 * per time with its period */
	if (nt > rb->cts_cap)
		grow_array((void **)&rb->cts, &rb->cts_cap, nt, sizeof(*rb->cts));
	if (n > rb->vts_cap)
		grow_array((void **)&rb->vts, &rb->vts_cap, n, sizeof(*rb->vts));
	if (n > rb->vvals_cap)
		grow_array((void **)&rb->vvals, &rb->vvals_cap, n, sizeof(*rb->vvals));
	cs->timestamps_unix_nano = rb->cts;
	vs->timestamps_unix_nano = rb->vts;
	vs->values = rb->vvals;
	for (size_t m = 0; m < n; m++) {
		const struct pc_sample *x = &p->samples[order[i + m]];
		uint64_t t = x->time + (uint64_t)w->o->wall_offset;

		for (uint64_t c = 0; c < x->count; c++)
			cs->timestamps_unix_nano[cs->n_timestamps_unix_nano++] = t;
		vs->timestamps_unix_nano[m] = t;
		vs->values[m] = (int64_t)x->period;
	}
	vs->n_timestamps_unix_nano = vs->n_values = n;
	return j;
}

static size_t varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

/* A length-delimited field of `len` bytes, its tag and length included. */
static uint64_t field_len(uint64_t len)
{
	return 1 + varint_len(len) + len;
}

static void put_varint(struct ow *w, uint64_t v)
{
	uint8_t b[10];
	size_t n = 0;

	while (v >= 0x80) {
		b[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	b[n++] = (uint8_t)v;
	fwrite(b, 1, n, w->out);
}

/* The tag and length of length-delimited field `field` (below 16) of `len` bytes. */
static void put_head(struct ow *w, unsigned field, uint64_t len)
{
	put_varint(w, field << 3 | 2);
	put_varint(w, len);
}

/* `m` packed (into w->buf, grown) and written: its fields, not a tag or length. */
static void put_msg(struct ow *w, const ProtobufCMessage *m)
{
	size_t len = protobuf_c_message_get_packed_size(m);

	if (len > w->buf_cap)
		grow_array((void **)&w->buf, &w->buf_cap, len, 1);
	protobuf_c_message_pack(m, w->buf);
	fwrite(w->buf, 1, len, w->out);
}

/* Sort the samples shown into order[] (event, stack, thread...): how many; the first
 * and last of their times (with the wall offset) in *first, *last. */
static size_t select_samples(const struct profile *p, const struct write_options *o,
			     const int *shown, size_t nshown, uint32_t *order, uint64_t *first,
			     uint64_t *last)
{
	struct okey key = { p, o->cpu_label };
	size_t norder = 0;

	for (size_t i = 0; i < p->nsamples; i++) {
		const struct pc_sample *s = &p->samples[i];

		if (o->to_time && (s->time < o->from_time || s->time >= o->to_time))
			continue;
		for (size_t k = 0; k < nshown; k++)
			if (s->event == shown[k]) {
				order[norder++] = (uint32_t)i;
				if (p->has_time) {
					uint64_t t = s->time + (uint64_t)o->wall_offset;

					*first = t < *first ? t : *first;
					*last = t > *last ? t : *last;
				}
				break;
			}
	}
	qsort_r(order, norder, sizeof(*order), sample_cmp, &key);
	return norder;
}

/* Every row once, to size each pair's samples (and make the stacks and attributes
 * the dictionary will hold, in the order the rows use them). */
static void size_rows(struct ow *w, const uint32_t *order, size_t norder, const int *shown,
		      const struct u64map *comms, struct pair *pairs)
{
	struct okey key = { w->p, w->o->cpu_label };
	struct rowbuf rb;
	ox_sample cs, vs;

	memset(&rb, 0, sizeof(rb));
	for (size_t i = 0, k = 0, j; i < norder; i = j) {
		while (shown[k] != w->p->samples[order[i]].event)
			k++;
		j = fill_row(w, &key, order, norder, i, comms, &rb, &cs, &vs);
		if (!pairs[k].nrows++)
			pairs[k].begin = i;
		pairs[k].end = j;
		pairs[k].csize += field_len(protobuf_c_message_get_packed_size(&cs.base));
		pairs[k].vsize += field_len(protobuf_c_message_get_packed_size(&vs.base));
	}
	rowbuf_release(&rb);
}

/* Profile `pr` of pair `pp` (`value`: the periods'), its samples packed row by row. */
static void write_profile(struct ow *w, const uint32_t *order, const struct u64map *comms,
			  const struct pair *pp, int value, struct rowbuf *rb)
{
	ox_profile *pr = value ? pp->value : pp->count;
	ox_profile head = OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__PROFILE__INIT, tail = *pr;
	struct okey key = { w->p, w->o->cpu_label };
	ox_sample cs, vs;

	/* sample_type (1), the samples (2), then the rest */
	head.sample_type = pr->sample_type;
	tail.sample_type = NULL;
	put_head(w, 2, protobuf_c_message_get_packed_size(&head.base) +
			       (value ? pp->vsize : pp->csize) +
			       protobuf_c_message_get_packed_size(&tail.base));
	put_msg(w, &head.base);
	for (size_t i = pp->begin; pp->nrows && i < pp->end;) {
		const ox_sample *x;

		i = fill_row(w, &key, order, pp->end, i, comms, rb, &cs, &vs);
		x = value ? &vs : &cs;
		put_head(w, 2, protobuf_c_message_get_packed_size(&x->base));
		put_msg(w, &x->base);
	}
	put_msg(w, &tail.base);
}

/* The dictionary (field 2 of the request): its tables packed a slice at a time. */
static uint64_t write_dictionary(struct ow *w, const ox_dict *dict)
{
	ox_dict init = OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__PROFILES_DICTIONARY__INIT;
	uint64_t len = protobuf_c_message_get_packed_size(&dict->base);
	/* each table's entries, in field order */
	struct { void **v; size_t n; int field; } t[] = {
		{ (void **)dict->mapping_table, dict->n_mapping_table, 1 },
		{ (void **)dict->location_table, dict->n_location_table, 2 },
		{ (void **)dict->function_table, dict->n_function_table, 3 },
		{ (void **)dict->link_table, dict->n_link_table, 4 },
		{ (void **)dict->string_table, dict->n_string_table, 5 },
		{ (void **)dict->attribute_table, dict->n_attribute_table, 6 },
		{ (void **)dict->stack_table, dict->n_stack_table, 7 },
	};

	put_head(w, 2, len);
	for (size_t k = 0; k < sizeof(t) / sizeof(t[0]); k++)
		for (size_t i = 0; i < t[k].n; i += 4096) {
			ox_dict part = init;
			size_t n = t[k].n - i < 4096 ? t[k].n - i : 4096;

			switch (t[k].field) {
			case 1: part.mapping_table = (ox_mapping **)t[k].v + i; part.n_mapping_table = n; break;
			case 2: part.location_table = (ox_location **)t[k].v + i; part.n_location_table = n; break;
			case 3: part.function_table = (ox_function **)t[k].v + i; part.n_function_table = n; break;
			case 4: part.link_table = (ox_link **)t[k].v + i; part.n_link_table = n; break;
			case 5: part.string_table = (char **)t[k].v + i; part.n_string_table = n; break;
			case 6: part.attribute_table = (ox_attr **)t[k].v + i; part.n_attribute_table = n; break;
			default: part.stack_table = (ox_stack **)t[k].v + i; part.n_stack_table = n; break;
			}
			put_msg(w, &part.base);
		}
	return field_len(len);
}

/* The pairs' profiles, their samples' sizes counted: each a count and a value profile
 * per event shown, the window [t0, t0 + duration) holding every timestamp. */
static struct pair *make_pairs(struct ow *w, const int *shown, size_t nshown, uint64_t t0,
			       uint64_t first, uint64_t last)
{
	struct pair *pairs = xcalloc(nshown + 1, sizeof(*pairs));

	for (size_t k = 0; k < nshown; k++) {
		ox_profile init = OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__PROFILE__INIT;
		ox_profile *pr[2];

		pr[0] = pairs[k].count = own(w, xmalloc(sizeof(ox_profile)));
		pr[1] = pairs[k].value = own(w, xmalloc(sizeof(ox_profile)));
		*pairs[k].count = init;
		*pairs[k].value = init;
		pair_types(w, &w->p->events[shown[k]], &pairs[k]);
		for (int v = 0; v < 2; v++) {
			pr[v]->time_unix_nano = t0;
			pr[v]->duration_nano = w->o->duration_nanos > 0 ? (uint64_t)w->o->duration_nanos : 0;
			if (first != UINT64_MAX && last >= t0 && last - t0 + 1 > pr[v]->duration_nano)
				pr[v]->duration_nano = last - t0 + 1;
		}
	}
	return pairs;
}

/* The resource profiles (field 1 of the request): resource, scope, then each profile
 * with its samples. Returns its bytes, tag and length included. */
static uint64_t write_resource_profiles(struct ow *w, const uint32_t *order,
					const struct u64map *comms, const struct pair *pairs,
					size_t nshown)
{
	ox_resprof rp = OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__RESOURCE_PROFILES__INIT;
	ox_scopeprof sp = OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__SCOPE_PROFILES__INIT;
	ox_scope scope = OPENTELEMETRY__PROTO__COMMON__V1__INSTRUMENTATION_SCOPE__INIT;
	uint64_t splen, rplen;
	struct rowbuf rb;

	scope.name = (char *)"perfconv";
	scope.version = (char *)PERFCONV_VERSION;
	sp.scope = &scope;
	rp.resource = resource(w);
	splen = protobuf_c_message_get_packed_size(&sp.base);
	for (size_t k = 0; k < nshown; k++)
		for (int v = 0; v < 2; v++) {
			ox_profile head = OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__PROFILE__INIT;
			ox_profile tail = v ? *pairs[k].value : *pairs[k].count;

			head.sample_type = tail.sample_type;
			tail.sample_type = NULL;
			splen += field_len(protobuf_c_message_get_packed_size(&head.base) +
					   (v ? pairs[k].vsize : pairs[k].csize) +
					   protobuf_c_message_get_packed_size(&tail.base));
		}
	rplen = protobuf_c_message_get_packed_size(&rp.base) + field_len(splen);
	put_head(w, 1, rplen);
	put_msg(w, &rp.base);
	put_head(w, 2, splen);
	put_msg(w, &sp.base);
	memset(&rb, 0, sizeof(rb));
	for (size_t k = 0; k < nshown; k++)
		for (int v = 0; v < 2; v++)
			write_profile(w, order, comms, &pairs[k], v, &rb);
	rowbuf_release(&rb);
	return field_len(rplen);
}

int otlp_write(const struct profile *p, const struct write_options *o, FILE *out)
{
	ox_dict dict = OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__PROFILES_DICTIONARY__INIT;
	struct ow w;
	struct u64map comms;
	struct attr zero = { 0, 0, 0 };
	uint32_t *order = xmalloc((p->nsamples + 1) * sizeof(*order));
	int *shown = xmalloc((p->nevents + 1) * sizeof(*shown));
	size_t norder, nshown;
	struct pair *pairs;
	uint64_t t0, first = UINT64_MAX, last = 0, len;
	int ret = 0;

	memset(&w, 0, sizeof(w));
	w.p = p;
	w.o = o;
	w.out = out;
	pdict_init(&w.d, p);
	u64map_init(&w.attr_index);
	u64map_init(&comms);
	VEC_PUSH(w.attrs, w.nattrs, w.attrs_cap, zero);
	w.node_stack = xcalloc(p->nnodes + 1, sizeof(*w.node_stack));

	nshown = pdict_shown_events(p, o->event, shown);
	norder = select_samples(p, o, shown, nshown, order, &first, &last);
	process_comms(p, order, norder, &comms);
	t0 = o->time_nanos ? (uint64_t)o->time_nanos : first != UINT64_MAX ? first :
	     p->start_wall_ns;
	pairs = make_pairs(&w, shown, nshown, t0, first, last);
	size_rows(&w, order, norder, shown, &comms, pairs);
	len = write_resource_profiles(&w, order, &comms, pairs, nshown);
	fill_dictionary(&w, &dict);
	len += write_dictionary(&w, &dict);
	if (ferror(out) || fflush(out) != 0)
		ret = -1;
	if (o->stats) {
		o->stats->bytes = len;
		o->stats->samples = 0;
		for (size_t k = 0; k < nshown; k++)
			o->stats->samples += 2 * pairs[k].nrows;
	}

	free(pairs);
	for (size_t i = 0; i < w.nstacks; i++)
		free(w.stacks[i]);
	free(w.stacks);
	free(w.stack_len);
	for (size_t i = 0; i < w.nowned; i++)
		free(w.owned[i]);
	free(w.owned);
	free(w.attrs);
	free(w.node_stack);
	free(w.buf);
	free(order);
	free(shown);
	u64map_release(&w.attr_index);
	u64map_release(&comms);
	pdict_release(&w.d);
	return write_end(out, ret);
}
