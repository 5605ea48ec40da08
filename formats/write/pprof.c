/* pprof: gzipped profile.proto, for go tool pprof, Datadog, Parca, Pyroscope, Grafana.
 *
 * Format: proto/profile.proto in github.com/google/pprof; perfconv's own copy with
 * the same field numbers is formats/proto/profile.proto, compiled by protoc-c at build
 * time (build/gen/profile.pb-c.h) and encoded with protobuf-c.
 */
#include "formats/write/pprof.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common/gzout.h"
#include "common/perf_abi.h"
#include "common/writeend.h"
#include "formats/write/pdict.h"
#include "formats/write/pprof_sample.h"
#include "profile.pb-c.h"

typedef Perftools__Profiles__Profile pb_profile;
typedef Perftools__Profiles__ValueType pb_value_type;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Label pb_label;
typedef Perftools__Profiles__Mapping pb_mapping;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Line pb_line;
typedef Perftools__Profiles__Function pb_function;

/*
 * Label keys. Datadog's native profiler (ddprof) sends "process_id", "thread id"
 * (with a space: its backend reads that name) and "thread_name"; Parca's agent
 * sends "thread_id", "thread_name" and "cpu". Where they differ Datadog's name is
 * used, because Datadog's backend gives the name a meaning and Parca's treats
 * every label alike. docs/CONVERTING.md says the same.
 */
#define LABEL_PID "process_id"
#define LABEL_TID "thread id"
#define LABEL_TID_PROM "thread_id" /* a Prometheus label name: Pyroscope, Parca, Go */
#define LABEL_COMM "thread_name"
/* why an off-CPU interval was: "sleeping", "disk", "preempted", ... (a name every
 * backend's label rules take) */
#define LABEL_STATE "thread_state"
#define LABEL_CPU "cpu"
#define LABEL_PROCESS "process_name" /* ddprof's */
/* a sample's wall-clock time, ns since the epoch, a number: what Datadog's Timeline
 * reads (libdatadog's profile writes it so for each timed sample) */
#define LABEL_TIME "end_timestamp_ns"
/* a differential profile's samples: "base" or "new" (-tagfocus side=new) */
#define LABEL_SIDE "side"

static const char *const for_names[] = { "", "datadog", "pyroscope", "parca", "go" };

int pprof_for_by_name(const char *name)
{
	for (size_t i = 1; i < sizeof(for_names) / sizeof(for_names[0]); i++)
		if (strcmp(for_names[i], name) == 0)
			return (int)i;
	return -1;
}

const char *pprof_for_name(int pprof_for)
{
	if (pprof_for < 0 || (size_t)pprof_for >= sizeof(for_names) / sizeof(for_names[0]))
		return "";
	return for_names[pprof_for];
}

/* Go's and Prometheus's names: sample types and label keys without `-` or `:`. */
static int go_names(const struct write_options *o)
{
	return o->pprof_for == PPROF_FOR_PYROSCOPE || o->pprof_for == PPROF_FOR_PARCA ||
	       o->pprof_for == PPROF_FOR_GO;
}

/* zlib level: 1 keeps writing within a quarter of folded output's cost (bench/). */
#define GZIP_LEVEL 1


/* A sample reduced to what merging compares, plus what it adds. */
struct row {
	uint32_t stack, pid, tid, comm, cpu; /* what makes samples one (compared, hashed) */
	uint32_t state;   /* enum pc_state: why an off-CPU interval was */
	uint32_t side;    /* enum pc_side: of a differential profile's samples */
	uint64_t time;    /* the wall clock, with o->timestamps; else 0 */
	uint32_t acc;     /* its values: acc[acc * nvalues ...] */
};

struct map_use {
	uint32_t id;           /* output id, 0 when unused */
	uint64_t leaf_samples; /* samples whose leaf is here */
	uint8_t has_functions, has_filenames, has_line_numbers, has_inline_frames;
};

/* The writer's state, built step by step by pprof_write()'s steps below. */
struct pw {
	const struct profile *p;
	const struct write_options *o;
	struct pdict d;        /* strings, functions, locations, synthetic mappings */
	struct map_use *maps;  /* mappings: 1..nmappings-1 the model's, then the synthetic */
	size_t nmaps, maps_cap;
	/* sample types: the events shown, two columns each (count, weight) */
	int *shown, *col_of;   /* col_of: an event's first column */
	size_t nshown, nvalues;
	pb_value_type *vt, **vt_ptrs;
	/* the distinct samples and their values (acc[row.acc * nvalues ...]) */
	struct row *rows;
	size_t nrows;
	int64_t *acc;
	/* the Profile's tables, made after the samples */
	pb_location *locs, **loc_ptrs;
	pb_line *lines, **line_ptrs;
	pb_function *fns, **fn_ptrs;
	pb_mapping *pmaps, **pmap_ptrs;
	size_t npmaps;
};

/* The use of writer mappings 0..n-1 (at least), zeroed where new. */
static void maps_reserve(struct pw *w, size_t n)
{
	if (n <= w->nmaps)
		return;
	grow_array((void **)&w->maps, &w->maps_cap, n, sizeof(*w->maps));
	memset(w->maps + w->nmaps, 0, (n - w->nmaps) * sizeof(*w->maps));
	w->nmaps = n;
}

static int row_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->comm != y->comm)
		return x->comm < y->comm ? -1 : 1;
	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	if (x->state != y->state)
		return x->state < y->state ? -1 : 1;
	if (x->side != y->side)
		return x->side < y->side ? -1 : 1;
	return (x->time > y->time) - (x->time < y->time);
}


/* Does another shown event have the same name without modifiers? */
static int base_clash(const struct profile *p, const int *shown, size_t nshown, size_t i)
{
	const struct pc_event *ea = &p->events[shown[i]];
	const char *a = profile_text(p, ea->name);
	size_t la = pdict_event_base_len(ea, a);

	for (size_t j = 0; j < nshown; j++) {
		const struct pc_event *eb = &p->events[shown[j]];
		const char *b = profile_text(p, eb->name);

		if (j != i && pdict_event_base_len(eb, b) == la && strncmp(a, b, la) == 0)
			return 1;
	}
	return 0;
}



/*
 * Whether a mapping's file is a program rather than a shared library or anonymous
 * memory: readers take mapping 1 for the main binary, which is the program even where
 * libc.so.6 has more samples.
 */
static int is_program(const char *file)
{
	const char *base = strrchr(file, '/'), *so;

	if (file[0] != '/' || file[1] == '/' || !base)
		return 0;
	so = strstr(base, ".so");
	return !so || (so[3] != 0 && so[3] != '.');
}

/* A process's name: its main thread's name, the one most of its samples had. */
struct proc_name {
	uint32_t pid, comm;
	int64_t samples;
};

static int proc_cmp_comm(const void *a, const void *b)
{
	const struct proc_name *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->comm > y->comm) - (x->comm < y->comm);
}

static int proc_cmp(const void *a, const void *b)
{
	const struct proc_name *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return (x->comm > y->comm) - (x->comm < y->comm);
}

/*
 * Each process's name, as ddprof's process_name: the name of its main thread (tid ==
 * pid), of the most samples when it had several (exec, prctl). A process whose main
 * thread has no sample has none. Sorted by pid, the chosen name first.
 */
static void process_names(const struct row *rows, size_t nrows, const int64_t *acc,
			  size_t nvalues, struct proc_name **out, size_t *n)
{
	size_t cap = 0, k = 0;

	for (size_t i = 0; i < nrows; i++) {
		const struct row *r = &rows[i];
		struct proc_name pn;

		if (r->tid != r->pid || !r->comm)
			continue;
		pn.pid = r->pid;
		pn.comm = r->comm;
		pn.samples = 0;
		for (size_t v = 0; v < nvalues; v += 2)
			pn.samples += acc[(size_t)r->acc * nvalues + v];
		VEC_PUSH(*out, *n, cap, pn);
	}
	if (*n < 2)
		return;
	/* one entry per (pid, comm), then each pid's most sampled name first */
	qsort(*out, *n, sizeof(**out), proc_cmp_comm);
	for (size_t i = 0; i < *n; i++) {
		if (k && (*out)[k - 1].pid == (*out)[i].pid && (*out)[k - 1].comm == (*out)[i].comm)
			(*out)[k - 1].samples += (*out)[i].samples;
		else
			(*out)[k++] = (*out)[i];
	}
	*n = k;
	qsort(*out, *n, sizeof(**out), proc_cmp);
}

static uint32_t process_name(const struct proc_name *procs, size_t n, uint32_t pid)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (procs[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && procs[lo].pid == pid ? procs[lo].comm : 0;
}

/* Add `text` to the comments when `id` names a header string. */
static void add_comment(struct pw *w, int64_t *comments, size_t *n, const char *what, uint32_t id)
{
	const char *v;
	char *s;
	size_t len;

	if (!id)
		return;
	v = profile_text(w->p, id);
	len = strlen(what) + strlen(v) + 1;
	s = xmalloc(len);
	snprintf(s, len, "%s%s", what, v);
	comments[(*n)++] = pdict_str(&w->d, s);
	free(s);
}


/* The sample types: the events shown (the chosen one, or all that have samples, all
 * if none has), a count and a weight each, named as the backend reads them. */
static void sample_types(struct pw *w)
{
	const struct profile *p = w->p;
	int clock_named = 0, go = go_names(w->o);

	w->shown = xmalloc((p->nevents + 1) * sizeof(*w->shown));
	w->col_of = xcalloc(p->nevents + 1, sizeof(*w->col_of));
	w->nshown = pdict_shown_events(p, w->o->event, w->shown);
	w->nvalues = 2 * w->nshown;
	w->vt = xcalloc(w->nvalues + 1, sizeof(*w->vt));
	w->vt_ptrs = xcalloc(w->nvalues + 1, sizeof(*w->vt_ptrs));
	for (size_t i = 0; i < w->nshown; i++) {
		const struct pc_event *e = &p->events[w->shown[i]];
		const char *name = profile_text(p, e->name);
		size_t bl = base_clash(p, w->shown, w->nshown, i) ? strlen(name)
								: pdict_event_base_len(e, name);
		char tbuf[256];
		pb_value_type init = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
		pb_value_type *count = &w->vt[2 * i], *weight = &w->vt[2 * i + 1];

		w->col_of[w->shown[i]] = (int)(2 * i);
		*count = init;
		*weight = init;
		if (e->time == PC_TIME_WALL && w->o->pprof_for == PPROF_FOR_DATADOG) {
			/* the names of Datadog's wall-time profile */
			count->type = pdict_str(&w->d, "wall-samples");
			weight->type = pdict_str(&w->d, "wall-time");
		} else if (e->is_clock && !clock_named) {
			/* what Datadog's native profiler sends for CPU time; Go's CPU
			 * profile's names for Pyroscope, Parca and Go */
			clock_named = 1;
			count->type = pdict_str(&w->d, go ? "samples" : "cpu-samples");
			weight->type = pdict_str(&w->d, go ? "cpu" : "cpu-time");
		} else {
			pdict_type_name(tbuf, sizeof(tbuf), name, bl, "-samples", go);
			count->type = pdict_str(&w->d, tbuf);
			pdict_type_name(tbuf, sizeof(tbuf), name, bl, e->is_clock ? "-time" : "", go);
			weight->type = pdict_str(&w->d, tbuf);
		}
		count->unit = pdict_str(&w->d, "count");
		weight->unit = pdict_str(&w->d, pc_unit_name(e->unit));
		w->vt_ptrs[2 * i] = count;
		w->vt_ptrs[2 * i + 1] = weight;
	}
}

/* Whether sample `s` is in the file: of an event shown, in the span asked for. */
static int sample_shown(const struct profile *p, const struct write_options *o,
			const struct pc_sample *s)
{
	if (s->event >= p->nevents || (o->event >= 0 && s->event != o->event))
		return 0;
	if (o->event < 0 && !p->events[s->event].nsamples)
		return 0;
	return !(o->to_time && (s->time < o->from_time || s->time >= o->to_time));
}

/*
 * Samples with the same stack and labels are one: hashed as they come, their values
 * summed, then only the distinct ones sorted (for a deterministic file). A
 * differential profile's base values are scaled and negated, as go tool pprof
 * -diff_base subtracts them (its -normalize scales the base so too).
 */
static void merge_samples(struct pw *w)
{
	const struct profile *p = w->p;
	const struct write_options *o = w->o;
	size_t nvalues = w->nvalues, rows_cap = 0, acc_cap = 0;
	struct u64map seen;

	u64map_init(&seen);
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct pc_sample *s = &p->samples[i];
		struct row r;
		uint64_t key;
		uint32_t *v, idx;
		int64_t *a;

		if (!sample_shown(p, o, s))
			continue;
		memset(&r, 0, sizeof(r));
		r.stack = s->stack;
		r.pid = s->pid;
		r.tid = o->merge_threads ? 0 : s->tid;
		r.comm = o->merge_threads ? 0 : s->comm;
		r.time = o->timestamps ? s->time + (uint64_t)o->wall_offset : 0;
		r.cpu = o->cpu_label ? s->cpu : PC_NO_CPU;
		r.state = s->state;
		r.side = o->diff ? s->side : 0;
		key = hash_bytes(&r, offsetof(struct row, acc)) | 1;
		for (;; key = hash_u64(key) | 1) {
			v = u64map_get(&seen, key);
			if (!v || row_cmp(&w->rows[*v], &r) == 0)
				break;
		}
		if (v) {
			idx = w->rows[*v].acc;
		} else {
			idx = (uint32_t)w->nrows;
			r.acc = idx;
			VEC_PUSH(w->rows, w->nrows, rows_cap, r);
			u64map_put(&seen, key, idx);
			if ((w->nrows * nvalues) > acc_cap) {
				size_t old = acc_cap;

				grow_array((void **)&w->acc, &acc_cap, w->nrows * nvalues,
					   sizeof(*w->acc));
				memset(w->acc + old, 0, (acc_cap - old) * sizeof(*w->acc));
			}
		}
		a = &w->acc[(size_t)idx * nvalues + (size_t)w->col_of[s->event]];
		a[0] += (int64_t)s->count;
		a[1] += (int64_t)s->period;
	}
	u64map_release(&seen);
	for (size_t i = 0; o->diff && i < w->nrows; i++) {
		int64_t *a = &w->acc[(size_t)w->rows[i].acc * nvalues];

		if (w->rows[i].side != PC_SIDE_BASE)
			continue;
		for (size_t v = 0; v < nvalues; v++)
			a[v] = -llround((double)a[v] * o->diff->scale[v & 1]);
	}
	if (w->nrows > 1)
		qsort(w->rows, w->nrows, sizeof(*w->rows), row_cmp);
}

/* The label keys every sample may carry, made once (0: not in this file). */
struct label_keys {
	uint32_t pid, tid, comm, cpu, proc, state, time;
	const struct proc_name *procs;
	size_t nprocs;
};

static void put_label(pb_label *labels, size_t *n, uint32_t key, uint32_t str)
{
	pb_label init = PERFTOOLS__PROFILES__LABEL__INIT;

	labels[*n] = init;
	labels[*n].key = key;
	labels[(*n)++].str = str;
}

/* Row `r`'s labels into `labels` (room for 8 + 1 + o->nlabels): how many. */
static size_t sample_labels(struct pw *w, struct label_keys *k, const struct row *r,
			    pb_label *labels)
{
	const struct write_options *o = w->o;
	size_t n = 0;

	put_label(labels, &n, k->pid, pdict_num(&w->d, r->pid));
	if (!o->merge_threads)
		put_label(labels, &n, k->tid, pdict_num(&w->d, r->tid));
	if (r->comm)
		put_label(labels, &n, k->comm, pdict_model_str(&w->d, r->comm));
	if (r->cpu != PC_NO_CPU)
		put_label(labels, &n, k->cpu, pdict_num(&w->d, r->cpu));
	if (r->state) {
		if (!k->state)
			k->state = pdict_str(&w->d, LABEL_STATE);
		put_label(labels, &n, k->state, pdict_str(&w->d, pc_state_name(r->state)));
	}
	if (k->proc) {
		uint32_t name = process_name(k->procs, k->nprocs, r->pid);

		if (name)
			put_label(labels, &n, k->proc, pdict_model_str(&w->d, name));
	}
	/* a key's string before its value's (the order of the file's string table):
	 * not both as arguments of one call, whose order C leaves open */
	for (size_t l = 0; l < o->nlabels; l++) {
		uint32_t key = pdict_str(&w->d, o->labels[l].key);

		put_label(labels, &n, key, pdict_str(&w->d, o->labels[l].value));
	}
	if (r->side) {
		/* pprof::base is the label go tool pprof -diff_base puts on the base's
		 * samples: its percentages are then of the base's total */
		uint32_t key = pdict_str(&w->d, LABEL_SIDE);

		put_label(labels, &n, key, pdict_str(&w->d, r->side == PC_SIDE_BASE ? "base" : "new"));
		if (r->side == PC_SIDE_BASE) {
			key = pdict_str(&w->d, "pprof::base");
			put_label(labels, &n, key, pdict_str(&w->d, "true"));
		}
	}
	if (k->time) {
		put_label(labels, &n, k->time, 0);
		labels[n - 1].num = (int64_t)r->time;
	}
	return n;
}

/*
 * Each distinct sample packed onto `gz` as it is made, its stack's locations made in
 * the dictionary on the way; each leaf's mapping counts its samples (for the choice
 * of the main mapping). What only the samples needed is freed after.
 */
static void write_samples(struct pw *w, struct pb_gz *gz)
{
	const struct write_options *o = w->o;
	size_t per_sample = 8 + (o->pprof_for ? 1 : 0) + o->nlabels, nprocs = 0;
	pb_label *labels = xcalloc(per_sample, sizeof(*labels));
	pb_label **label_ptrs = xcalloc(per_sample, sizeof(*label_ptrs));
	struct proc_name *procs = NULL;
	uint64_t stack[PDICT_MAX_DEPTH];
	struct label_keys k;

	for (size_t l = 0; l < per_sample; l++)
		label_ptrs[l] = &labels[l];
	if (o->pprof_for)
		process_names(w->rows, w->nrows, w->acc, w->nvalues, &procs, &nprocs);
	k.pid = pdict_str(&w->d, LABEL_PID);
	k.tid = pdict_str(&w->d, go_names(o) ? LABEL_TID_PROM : LABEL_TID);
	k.comm = pdict_str(&w->d, LABEL_COMM);
	k.cpu = o->cpu_label ? pdict_str(&w->d, LABEL_CPU) : 0;
	k.proc = o->pprof_for ? pdict_str(&w->d, LABEL_PROCESS) : 0;
	k.state = 0;
	k.time = o->timestamps ? pdict_str(&w->d, LABEL_TIME) : 0;
	k.procs = procs;
	k.nprocs = nprocs;
	for (size_t i = 0; i < w->nrows; i++) {
		pb_sample sample = PERFTOOLS__PROFILES__SAMPLE__INIT, *s = &sample;
		const struct row *r = &w->rows[i];
		uint32_t node = r->stack, depth = 0;

		s->value = &w->acc[(size_t)r->acc * w->nvalues];
		s->n_value = w->nvalues;
		while (node != 0 && depth < PDICT_MAX_DEPTH) {
			uint32_t next;

			stack[depth++] = pdict_location(&w->d, node, &next);
			node = next;
		}
		s->location_id = stack;
		s->n_location_id = depth;
		if (depth) {
			uint32_t leaf = w->d.locs[stack[0] - 1].mapping;

			maps_reserve(w, leaf + 1);
			for (size_t v = 0; v < w->nvalues; v += 2)
				w->maps[leaf].leaf_samples += (uint64_t)llabs(s->value[v]);
		}
		s->n_label = sample_labels(w, &k, r, labels);
		s->label = label_ptrs;
		pb_gz_pack_sample(gz, s);
	}
	free(w->rows);
	free(w->acc);
	w->rows = NULL;
	w->acc = NULL;
	free(procs);
	free(labels);
	free(label_ptrs);
	free(w->d.node_loc);
	free(w->d.node_next);
	w->d.node_loc = w->d.node_next = NULL;
}

/* Locations and their lines, then functions, in the order locations first use them. */
static void make_locations(struct pw *w)
{
	const struct profile *p = w->p;
	size_t nlines = w->d.npool;

	w->lines = xcalloc(nlines + 1, sizeof(*w->lines));
	w->line_ptrs = xcalloc(nlines + 1, sizeof(*w->line_ptrs));
	w->locs = xcalloc(w->d.nlocs + 1, sizeof(*w->locs));
	w->loc_ptrs = xcalloc(w->d.nlocs + 1, sizeof(*w->loc_ptrs));
	maps_reserve(w, p->nmappings + w->d.nsynth);
	for (size_t i = 0; i < w->d.nlocs; i++) {
		const struct pd_loc *l = &w->d.locs[i];
		pb_location init = PERFTOOLS__PROFILES__LOCATION__INIT, *loc = &w->locs[i];
		struct map_use *mu = &w->maps[l->mapping];

		*loc = init;
		loc->id = i + 1;
		loc->address = l->addr;
		loc->line = &w->line_ptrs[l->first];
		for (uint32_t j = 0; j < l->n; j++) {
			uint32_t fr = w->d.pool[l->first + j];
			const struct pc_frame *f = &p->frames[fr];
			pb_line linit = PERFTOOLS__PROFILES__LINE__INIT;
			pb_line *ln = &w->lines[l->first + j];

			/* no symbol: address and mapping only, for a reader to symbolize;
			 * but at address 0 there is nothing to symbolize, and Pyroscope
			 * drops the samples of a Location with neither line nor address:
			 * shaped for a backend, it gets a line naming it ([unknown]) */
			if (!f->symbolized && (l->addr || !w->o->pprof_for))
				break;
			*ln = linit;
			ln->function_id = pdict_function(&w->d, fr);
			ln->line = f->line;
			ln->column = f->column;
			w->line_ptrs[l->first + j] = ln;
			loc->n_line++;
			mu->has_functions = 1;
			mu->has_filenames |= f->file != 0;
			mu->has_line_numbers |= f->line != 0;
			mu->has_inline_frames |= f->kind == FRAME_INLINED;
		}
		w->loc_ptrs[i] = loc;
	}
	w->fns = xcalloc(w->d.nfns + 1, sizeof(*w->fns));
	w->fn_ptrs = xcalloc(w->d.nfns + 1, sizeof(*w->fn_ptrs));
	for (size_t i = 0; i < w->d.nfns; i++) {
		pb_function init = PERFTOOLS__PROFILES__FUNCTION__INIT, *fn = &w->fns[i];

		*fn = init;
		fn->id = i + 1;
		fn->name = pdict_model_str(&w->d, w->d.fns[i].name);
		fn->system_name = pdict_model_str(&w->d, w->d.fns[i].system_name);
		fn->filename = pdict_model_str(&w->d, w->d.fns[i].file);
		/* the model does not know where a function starts: start_line stays 0 */
		w->fn_ptrs[i] = fn;
	}
}

/* The native mapping the file's main one is: readers take mapping 1 for the main
 * binary; the program's, else the one where most samples are (0: none). */
static uint32_t main_mapping(const struct pw *w)
{
	const struct profile *p = w->p;
	uint32_t main_map = 0;

	for (size_t i = 1; i < p->nmappings; i++) {
		int prog = is_program(profile_text(p, p->mappings[i].file));
		int main_prog = main_map && is_program(profile_text(p, p->mappings[main_map].file));

		if (w->maps[i].id && p->mappings[i].kind == FRAME_NATIVE &&
		    (!main_map || prog > main_prog ||
		     (prog == main_prog && w->maps[i].leaf_samples > w->maps[main_map].leaf_samples)))
			main_map = (uint32_t)i;
	}
	return main_map;
}

/* Writer mapping `i` (in use, used as `mu`) as a pprof Mapping. */
static void fill_mapping(struct pw *w, size_t i, struct map_use *mu, pb_mapping *pm)
{
	const struct profile *p = w->p;
	pb_mapping init = PERFTOOLS__PROFILES__MAPPING__INIT;

	*pm = init;
	if (i < p->nmappings) {
		const struct pc_mapping *m = &p->mappings[i];

		pm->memory_start = m->start;
		pm->memory_limit = m->limit;
		pm->file_offset = m->offset;
		pm->filename = pdict_model_str(&w->d, m->file);
		pm->build_id = pdict_model_str(&w->d, m->build_id);
		mu->has_inline_frames |= m->has_inline_frames && mu->has_line_numbers;
	} else {
		const struct pd_synth *s = &w->d.synth[i - p->nmappings];

		pm->memory_start = s->start;
		pm->memory_limit = s->limit;
		pm->filename = s->kind == FRAME_KERNEL ? pdict_str(&w->d, "[kernel.kallsyms]")
						       : pdict_model_str(&w->d, s->module);
		if (s->kind == FRAME_JIT && !s->module)
			pm->filename = pdict_str(&w->d, "[jit]");
	}
	pm->has_functions = mu->has_functions;
	pm->has_filenames = mu->has_filenames;
	pm->has_line_numbers = mu->has_line_numbers;
	pm->has_inline_frames = mu->has_inline_frames;
}

/*
 * Mappings: the ones locations use; first the native one where most samples are
 * (main_mapping()), then the other native ones, then kernel, then JIT. The
 * locations then name them by their ids in the file.
 */
static void make_mappings(struct pw *w)
{
	const struct profile *p = w->p;
	uint32_t main_map;

	for (size_t i = 0; i < w->d.nlocs; i++)
		if (w->d.locs[i].mapping)
			w->maps[w->d.locs[i].mapping].id = 1;
	main_map = main_mapping(w);
	w->pmaps = xcalloc(w->nmaps + 1, sizeof(*w->pmaps));
	w->pmap_ptrs = xcalloc(w->nmaps + 1, sizeof(*w->pmap_ptrs));
	for (int kind = -1; kind <= FRAME_JIT; kind++)
		for (size_t i = 1; i < w->nmaps; i++) {
			struct map_use *mu = &w->maps[i];
			pb_mapping *pm = &w->pmaps[w->npmaps];
			int mkind;

			if (!mu->id || (kind == -1) != (i == main_map))
				continue;
			mkind = i < p->nmappings ? p->mappings[i].kind
						 : w->d.synth[i - p->nmappings].kind;
			if (kind != -1 && mkind != kind)
				continue;
			fill_mapping(w, i, mu, pm);
			mu->id = (uint32_t)++w->npmaps;
			pm->id = mu->id;
			w->pmap_ptrs[w->npmaps - 1] = pm;
		}
	for (size_t i = 0; i < w->d.nlocs; i++)
		w->locs[i].mapping_id = w->d.locs[i].mapping ? w->maps[w->d.locs[i].mapping].id : 0;
}

/* The Profile's own fields: its tables, what the recording says about itself, the
 * default sample type and period, its time and duration. */
static void fill_profile(struct pw *w, pb_profile *prof, pb_value_type *period_type,
			 int64_t *comments)
{
	const struct profile *p = w->p;
	const struct write_options *o = w->o;
	size_t ncomments = 0;

	add_comment(w, comments, &ncomments, "perf version ", p->perf_version);
	add_comment(w, comments, &ncomments, "command: ", p->cmdline);
	add_comment(w, comments, &ncomments, "host: ", p->hostname);
	add_comment(w, comments, &ncomments, "os release: ", p->osrelease);
	prof->n_mapping = w->npmaps;
	prof->mapping = w->pmap_ptrs;
	prof->n_location = w->d.nlocs;
	prof->location = w->loc_ptrs;
	prof->n_function = w->d.nfns;
	prof->function = w->fn_ptrs;
	prof->n_comment = ncomments;
	prof->comment = comments;
	if (w->nshown) {
		const struct pc_event *e = &p->events[w->shown[0]];
		const char *name = profile_text(p, e->name);
		char tbuf[256];

		prof->default_sample_type = w->vt[1].type;
		if (e->is_clock)
			snprintf(tbuf, sizeof(tbuf), "cpu");
		else
			pdict_type_name(tbuf, sizeof(tbuf), name, pdict_event_base_len(e, name), "",
					go_names(o));
		period_type->type = pdict_str(&w->d, tbuf);
		period_type->unit = pdict_str(&w->d, pc_unit_name(e->unit));
		prof->period_type = period_type;
		prof->period = pdict_event_period(p, e);
	}
	if (p->has_time && w->nrows) {
		/* time_nanos: the wall clock perf recorded beside its own (CLOCK_DATA) */
		if (p->has_wall_clock)
			prof->time_nanos = (int64_t)(p->first_time - p->clock_ns + p->wall_ns);
		prof->duration_nanos = (int64_t)(p->last_time - p->first_time);
	}
	if (o->time_nanos)
		prof->time_nanos = o->time_nanos;
	if (o->duration_nanos)
		prof->duration_nanos = o->duration_nanos;
	/* last: every string is in the table now */
	prof->n_string_table = strtab_count(&w->d.out);
	prof->string_table = (char **)(uintptr_t)w->d.out.strs;
}

static void pw_release(struct pw *w)
{
	free(w->pmaps);
	free(w->pmap_ptrs);
	free(w->fns);
	free(w->fn_ptrs);
	free(w->lines);
	free(w->line_ptrs);
	free(w->locs);
	free(w->loc_ptrs);
	free(w->vt);
	free(w->vt_ptrs);
	free(w->shown);
	free(w->col_of);
	free(w->maps);
	pdict_release(&w->d);
}

/*
 * The Profile goes out in field-number order, the order protobuf-c packs a whole
 * message in (a message is the concatenation of its fields): sample_type (1); each
 * sample (2) as it is made, a Profile of that one sample; then the rest, whose
 * locations, functions and strings the samples have all named by then.
 */
int pprof_write(const struct profile *p, const struct write_options *o, FILE *out)
{
	struct pw w;
	pb_profile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
	pb_profile head = PERFTOOLS__PROFILES__PROFILE__INIT;
	pb_value_type period_type = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	int64_t comments[4];
	struct pb_gz gz = { gzout_open(out, GZIP_LEVEL), NULL, 0, 0 };
	int ret;

	memset(&w, 0, sizeof(w));
	w.p = p;
	w.o = o;
	pdict_init(&w.d, p);
	sample_types(&w);
	merge_samples(&w);
	head.n_sample_type = w.nvalues;
	head.sample_type = w.vt_ptrs;
	pb_gz_pack(&gz, &head);
	write_samples(&w, &gz);
	make_locations(&w);
	make_mappings(&w);
	fill_profile(&w, &prof, &period_type, comments);
	pb_gz_pack(&gz, &prof);
	ret = gzout_close(gz.gz);
	if (o->stats) {
		o->stats->bytes = gz.raw;
		o->stats->samples = w.nrows;
	}
	free(gz.buf);
	pw_release(&w);
	return write_end(out, ret);
}
