/* otlp: OpenTelemetry profiles, one ExportProfilesServiceRequest (see otlp.h). */
#include "formats/write/otlp.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "common/version.h"
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

/* The output tables, index 0 the zero value of each, from what the samples used. */
static void fill_dictionary(struct ow *w, ox_dict *dict)
{
	const struct profile *p = w->p;
	const struct pdict *d = &w->d;
	size_t nmap = p->nmappings + d->nsynth, nout = 1;
	ox_mapping *maps;
	ox_location *locs;
	ox_line *lines;
	ox_function *fns;
	ox_stack *stacks;
	ox_attr *attrs;
	ox_any *anys;
	ox_link *link;
	size_t nl = 0;

	/* mappings: those a location names, in the model's order, then synthetic ones */
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
	/* locations: each a mapping, an address and its lines, innermost first */
	locs = own(w, xcalloc(d->nlocs + 1, sizeof(*locs)));
	lines = own(w, xcalloc(d->npool + 1, sizeof(*lines)));
	dict->location_table = own(w, xcalloc(d->nlocs + 1, sizeof(*dict->location_table)));
	dict->n_location_table = d->nlocs + 1;
	for (size_t i = 0; i <= d->nlocs; i++) {
		ox_location init = OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__LOCATION__INIT;
		const struct pd_loc *l = i ? &d->locs[i - 1] : NULL;

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
		{
			uint8_t kind = p->frames[d->pool[l->first + l->n - 1]].kind;

			if (kind < 4 && frame_types[kind]) {
				locs[i].attribute_indices = own(w, xmalloc(sizeof(int32_t)));
				locs[i].attribute_indices[0] =
					(int32_t)attr_of(w, "profile.frame.type", 0, 0, frame_types[kind]);
				locs[i].n_attribute_indices = 1;
			}
		}
	}
	/* functions: pdict_function made them all while the lines were */
	fns = own(w, xcalloc(d->nfns + 1, sizeof(*fns)));
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
	/* stacks, leaf first */
	stacks = own(w, xcalloc(w->nstacks + 1, sizeof(*stacks)));
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
	/* the one link: none (an empty Link, which is what its zero value compares to) */
	link = own(w, xmalloc(sizeof(*link)));
	{
		ox_link init = OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__LINK__INIT;

		*link = init;
	}
	dict->link_table = own(w, xmalloc(sizeof(*dict->link_table)));
	dict->link_table[0] = link;
	dict->n_link_table = 1;
	/* attributes, last: every one is known by now; their strings too */
	attrs = own(w, xcalloc(w->nattrs, sizeof(*attrs)));
	anys = own(w, xcalloc(w->nattrs, sizeof(*anys)));
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

/* The two profiles of event `e`: its samples counted, and its periods summed. */
struct pair {
	ox_profile *count, *value;
	ox_sample **cs, **vs;     /* their samples: one of each per row, in the same order */
	size_t ncs, cs_cap, nvs, vs_cap;
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

int otlp_write(const struct profile *p, const struct write_options *o, FILE *out)
{
	ox_request req = OPENTELEMETRY__PROTO__COLLECTOR__PROFILES__V1DEVELOPMENT__EXPORT_PROFILES_SERVICE_REQUEST__INIT;
	ox_dict dict = OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__PROFILES_DICTIONARY__INIT;
	ox_resprof rp = OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__RESOURCE_PROFILES__INIT;
	ox_scopeprof sp = OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__SCOPE_PROFILES__INIT;
	ox_scope scope = OPENTELEMETRY__PROTO__COMMON__V1__INSTRUMENTATION_SCOPE__INIT;
	ox_resprof *rps[1] = { &rp };
	ox_scopeprof *sps[1] = { &sp };
	struct ow w;
	struct okey key = { p, o->cpu_label };
	struct u64map comms;
	struct attr zero = { 0, 0, 0 };
	uint32_t *order;
	size_t norder = 0, nshown = 0;
	int *shown = xmalloc((p->nevents + 1) * sizeof(*shown));
	struct pair *pairs;
	uint64_t t0, first = UINT64_MAX, last = 0;
	uint8_t *buf;
	size_t len;
	int ret = 0;

	memset(&w, 0, sizeof(w));
	w.p = p;
	w.o = o;
	pdict_init(&w.d, p);
	u64map_init(&w.attr_index);
	u64map_init(&comms);
	VEC_PUSH(w.attrs, w.nattrs, w.attrs_cap, zero);
	w.node_stack = xcalloc(p->nnodes + 1, sizeof(*w.node_stack));

	nshown = pdict_shown_events(p, o->event, shown);
	order = xmalloc((p->nsamples + 1) * sizeof(*order));
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct pc_sample *s = &p->samples[i];

		if (o->to_time && (s->time < o->from_time || s->time >= o->to_time))
			continue;
		for (size_t k = 0; k < nshown; k++)
			if (s->event == shown[k]) {
				order[norder++] = (uint32_t)i;
				if (p->has_time) {
					uint64_t t = s->time + (uint64_t)o->wall_offset;

					first = t < first ? t : first;
					last = t > last ? t : last;
				}
				break;
			}
	}
	qsort_r(order, norder, sizeof(*order), sample_cmp, &key);
	process_comms(p, order, norder, &comms);
	t0 = o->time_nanos ? (uint64_t)o->time_nanos : first != UINT64_MAX ? first :
	     p->start_wall_ns;

	pairs = xcalloc(nshown + 1, sizeof(*pairs));
	for (size_t k = 0; k < nshown; k++) {
		ox_profile init = OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__PROFILE__INIT;

		pairs[k].count = own(&w, xmalloc(sizeof(ox_profile)));
		pairs[k].value = own(&w, xmalloc(sizeof(ox_profile)));
		*pairs[k].count = init;
		*pairs[k].value = init;
		pair_types(&w, &p->events[shown[k]], &pairs[k]);
	}
	for (size_t i = 0, k = 0; i < norder;) {
		const struct pc_sample *s = &p->samples[order[i]];
		ox_sample sinit = OPENTELEMETRY__PROTO__PROFILES__V1DEVELOPMENT__SAMPLE__INIT;
		ox_sample *cs = own(&w, xmalloc(sizeof(*cs))), *vs = own(&w, xmalloc(sizeof(*vs)));
		int32_t *attrs = own(&w, xmalloc(6 * sizeof(int32_t)));
		size_t j = i, n = 0, na = 0, nt = 0;
		const uint32_t *pcomm;

		while (shown[k] != s->event)
			k++;
		*cs = sinit;
		*vs = sinit;
		cs->stack_index = vs->stack_index = (int32_t)stack_of(&w, s->stack);
		attrs[na++] = (int32_t)attr_of(&w, "process.pid", 1, s->pid, NULL);
		attrs[na++] = (int32_t)attr_of(&w, "thread.id", 1, s->tid, NULL);
		if (s->comm)
			attrs[na++] = (int32_t)attr_of(&w, "thread.name", 0, 0, profile_text(p, s->comm));
		pcomm = u64map_get(&comms, (uint64_t)s->pid + 1);
		if (pcomm)
			attrs[na++] = (int32_t)attr_of(&w, "process.executable.name", 0, 0,
						       profile_text(p, *pcomm - 1));
		if (o->cpu_label && s->cpu != PC_NO_CPU)
			attrs[na++] = (int32_t)attr_of(&w, "cpu.logical_number", 1, s->cpu, NULL);
		if (s->state)
			attrs[na++] = (int32_t)attr_of(&w, "thread.state", 0, 0, pc_state_name(s->state));
		cs->attribute_indices = vs->attribute_indices = attrs;
		cs->n_attribute_indices = vs->n_attribute_indices = na;
		while (j < norder && same_row(&key, s, &p->samples[order[j]])) {
			nt += p->samples[order[j]].count;
			j++;
		}
		n = j - i;
		if (p->has_time) {
			/* each sample its time: the count profile one per sample, the value
			 * profile one per time with its period */
			cs->timestamps_unix_nano = own(&w, xmalloc((nt ? nt : 1) * sizeof(uint64_t)));
			vs->timestamps_unix_nano = own(&w, xmalloc(n * sizeof(uint64_t)));
			vs->values = own(&w, xmalloc(n * sizeof(int64_t)));
			for (size_t m = 0; m < n; m++) {
				const struct pc_sample *x = &p->samples[order[i + m]];
				uint64_t t = x->time + (uint64_t)o->wall_offset;

				for (uint64_t c = 0; c < x->count; c++)
					cs->timestamps_unix_nano[cs->n_timestamps_unix_nano++] = t;
				vs->timestamps_unix_nano[m] = t;
				vs->values[m] = (int64_t)x->period;
			}
			vs->n_timestamps_unix_nano = vs->n_values = n;
		} else {
			cs->values = own(&w, xmalloc(sizeof(int64_t)));
			vs->values = own(&w, xmalloc(sizeof(int64_t)));
			cs->values[0] = (int64_t)nt;
			vs->values[0] = 0;
			for (size_t m = 0; m < n; m++)
				vs->values[0] += (int64_t)p->samples[order[i + m]].period;
			cs->n_values = vs->n_values = 1;
		}
		VEC_PUSH(pairs[k].cs, pairs[k].ncs, pairs[k].cs_cap, cs);
		VEC_PUSH(pairs[k].vs, pairs[k].nvs, pairs[k].vs_cap, vs);
		i = j;
	}
	sp.profiles = own(&w, xcalloc(2 * nshown + 1, sizeof(*sp.profiles)));
	for (size_t k = 0; k < nshown; k++) {
		ox_profile *pr[2] = { pairs[k].count, pairs[k].value };

		for (int v = 0; v < 2; v++) {
			pr[v]->samples = v ? pairs[k].vs : pairs[k].cs;
			pr[v]->n_samples = v ? pairs[k].nvs : pairs[k].ncs;
			pr[v]->time_unix_nano = t0;
			/* the window holds every timestamp: [t0, t0 + duration) */
			pr[v]->duration_nano = o->duration_nanos > 0 ? (uint64_t)o->duration_nanos : 0;
			if (first != UINT64_MAX && last >= t0 && last - t0 + 1 > pr[v]->duration_nano)
				pr[v]->duration_nano = last - t0 + 1;
			sp.profiles[sp.n_profiles++] = pr[v];
		}
	}
	scope.name = (char *)"perfconv";
	scope.version = (char *)PERFCONV_VERSION;
	sp.scope = &scope;
	rp.resource = resource(&w);
	rp.scope_profiles = sps;
	rp.n_scope_profiles = 1;
	fill_dictionary(&w, &dict);
	req.resource_profiles = rps;
	req.n_resource_profiles = 1;
	req.dictionary = &dict;

	len = opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__get_packed_size(&req);
	buf = xmalloc(len ? len : 1);
	opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__pack(&req, buf);
	if (fwrite(buf, 1, len, out) != len || fflush(out) != 0)
		ret = -1;
	if (o->stats) {
		o->stats->bytes = len;
		o->stats->samples = 0;
		for (size_t k = 0; k < nshown; k++)
			o->stats->samples += pairs[k].ncs + pairs[k].nvs;
	}
	free(buf);

	for (size_t k = 0; k < nshown; k++) {
		free(pairs[k].cs);
		free(pairs[k].vs);
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
	free(order);
	free(shown);
	u64map_release(&w.attr_index);
	u64map_release(&comms);
	pdict_release(&w.d);
	if (ret && !errno)
		errno = EIO;
	return ret;
}
