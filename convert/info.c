/* info: what a recording holds, for a bug report (`perfconv info`).
 *
 * The facts are gathered into one cJSON tree; --json prints it, the text is written
 * from it, so that both always say the same.
 */
#include "convert/info.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/version.h"
#include "common/writeend.h"
#include "convert/lbr.h"
#include "convert/recording.h"
#include "convert/replay.h"
#include "convert/session.h"
#include "formats/read/perfdata.h"
#include "formats/model/profile.h"
#include "symbolize/jit/jitprocs.h"
#include "symbolize/locate.h"


struct tally {
	uint32_t pid, tid, comm;
	uint64_t samples, anon;      /* anon: of a process, samples in anonymous memory */
};

struct obj_tally {
	uint64_t leaf, stack, mark;
};

struct counts {
	struct tally *procs, *threads;
	size_t nprocs, procs_cap, nthreads, threads_cap;
	struct u64map proc_index, thread_index;
	struct obj_tally *objs;
	uint64_t *event_samples;
	uint64_t samples, nomap;
	uint64_t first, last;
	int has_time;
};

static struct tally *tally_of(struct tally **v, size_t *n, size_t *cap, struct u64map *index,
			      uint64_t key, uint32_t pid, uint32_t tid)
{
	uint32_t *at = u64map_get(index, key);
	struct tally t;

	if (at)
		return &(*v)[*at];
	memset(&t, 0, sizeof(t));
	t.pid = pid;
	t.tid = tid;
	VEC_PUSH(*v, *n, *cap, t);
	u64map_put(index, key, (uint32_t)*n - 1);
	return &(*v)[*n - 1];
}

static int is_anon(const struct replay *rp, const struct strtab *st, const struct replay_map *m)
{
	const struct replay_dso *x = replay_dso_get(rp, m->dso);

	return !x->kernel && x->anonymous;
}

/* What pass 2 of info counts with. */
struct counting {
	struct counts *c;
	struct replay *rp;
	const struct strtab *st;
	struct lbr *lbr;          /* --call-graph lbr: user stacks from the LBR */
};

static int is_sample(uint32_t type)
{
	return type == PERF_RECORD_SAMPLE;
}

static void count_sample(void *arg, const struct sample_ctx *x)
{
	const struct counting *k = arg;
	struct counts *c = k->c;
	struct replay *rp = k->rp;
	const struct strtab *st = k->st;
	const struct perf_record *rec = x->rec;
	const struct perf_sample *s = &rec->u.sample;
	uint32_t pid = x->pid, tid = x->tid;
	int kernel = rec->cpumode == PERF_RECORD_MISC_KERNEL;
	const struct replay_map *m;
	struct tally *pt, *tt;
	const uint64_t *words = s->callchain;
	size_t nw = s->has_callchain ? (size_t)s->nr_callchain : 0;

	c->samples++;
	if (rec->event >= 0)
		c->event_samples[rec->event]++;
	if (rec->sid.has_time) {
		if (!c->has_time || rec->sid.time < c->first)
			c->first = rec->sid.time;
		if (!c->has_time || rec->sid.time > c->last)
			c->last = rec->sid.time;
		c->has_time = 1;
	}
	pt = tally_of(&c->procs, &c->nprocs, &c->procs_cap, &c->proc_index, (uint64_t)pid + 1, pid, pid);
	pt->samples++;
	tt = tally_of(&c->threads, &c->nthreads, &c->threads_cap, &c->thread_index,
		      hash_u64(((uint64_t)pid << 32 | tid) + 1) | 1, pid, tid);
	tt->samples++;
	tt->comm = x->comm;
	m = replay_proc_find(kernel ? x->kernel : x->proc, x->time, s->ip);
	if (m) {
		c->objs[m->dso].leaf++;
		if (is_anon(rp, st, m))
			pt->anon++;
	} else {
		c->nomap++;
	}
	/* the stack a conversion shows: an LBR sample's user part from its LBR, not the
	 * callchain's frame-pointer walk */
	if (k->lbr) {
		size_t n = 0;
		const uint64_t *w = lbr_sample(k->lbr, x, &n);

		if (w) {
			words = w;
			nw = n;
		}
	}
	for (size_t i = 0; i < nw; i++) {
		uint64_t a = words[i];

		if (a >= PERF_CONTEXT_MAX) {
			kernel = a == PERF_CONTEXT_KERNEL;
			continue;
		}
		m = replay_proc_find(kernel ? x->kernel : x->proc, x->time, a);
		if (m && c->objs[m->dso].mark != c->samples) {
			c->objs[m->dso].mark = c->samples;
			c->objs[m->dso].stack++;
		}
	}
}

static int tally_cmp(const void *a, const void *b)
{
	const struct tally *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

/* JSON strings are UTF-8: COMM names and paths need not be (ill-formed bytes become
 * U+FFFD, as in the other JSON writers). */
static void add_str(cJSON *o, const char *key, const char *v)
{
	char *fixed;

	if (!v) {
		cJSON_AddNullToObject(o, key);
		return;
	}
	fixed = utf8_sanitize(v);
	cJSON_AddStringToObject(o, key, fixed ? fixed : v);
	free(fixed);
}

/* Written as its digits: a double holds integers exactly only up to 2^53, and
 * build-time counters, addresses and times go past it. */
static void add_u64(cJSON *o, const char *key, uint64_t v)
{
	char digits[24];

	snprintf(digits, sizeof(digits), "%" PRIu64, v);
	cJSON_AddRawToObject(o, key, digits);
}

static const char *call_graph_mode(const struct perf_event_desc *e)
{
	if (lbr_event(e))
		return "lbr";
	if ((e->sample_type & PERF_SAMPLE_STACK_USER) && (e->sample_type & PERF_SAMPLE_REGS_USER))
		return "dwarf";
	if (e->sample_type & PERF_SAMPLE_CALLCHAIN)
		return "fp";
	return "none";
}

static const char *dso_kind(const struct replay_dso *x, const char *path)
{
	switch (x->kernel) {
	case REPLAY_DSO_USER:
		if (map_origin(path) == MAP_VDSO)
			return "vdso";
		return x->anonymous ? "anonymous" : "user";
	case REPLAY_DSO_KSYM_BPF: return "bpf";
	case REPLAY_DSO_KSYM_OTHER: return "kernel code (KSYMBOL)";
	default: return "kernel";
	}
}

static int obj_cmp(const void *a, const void *b, void *arg)
{
	const struct obj_tally *t = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (t[x].leaf != t[y].leaf)
		return t[x].leaf > t[y].leaf ? -1 : 1;
	if (t[x].stack != t[y].stack)
		return t[x].stack > t[y].stack ? -1 : 1;
	return (x > y) - (x < y);
}

/* The objects samples fall in, with where their files are. */
static cJSON *objects_json(struct counts *c, struct replay *rp, const struct strtab *st,
			   struct symbolizer *sym, const char *kernel_source)
{
	cJSON *arr = cJSON_CreateArray();
	size_t ndsos = replay_ndsos(rp), n = 0;
	uint32_t *order = xmalloc((ndsos ? ndsos : 1) * sizeof(*order));

	for (size_t i = 0; i < ndsos; i++)
		if (c->objs[i].leaf || c->objs[i].stack)
			order[n++] = (uint32_t)i;
	qsort_r(order, n, sizeof(*order), obj_cmp, c->objs);
	for (size_t i = 0; i < n; i++) {
		const struct replay_dso *x = replay_dso_get(rp, order[i]);
		const char *path = strtab_str(st, x->path), *kind = dso_kind(x, path);
		cJSON *o = cJSON_CreateObject(), *looked;
		char hex[PERF_BUILD_ID_HEX_SIZE];

		add_str(o, "path", path);
		hex_bytes(hex, x->build_id, x->build_id_size);
		add_str(o, "build_id", x->build_id_size ? hex : NULL);
		add_str(o, "kind", kind);
		add_u64(o, "samples", c->objs[order[i]].leaf);
		add_u64(o, "in_stacks", c->objs[order[i]].stack);
		if (strcmp(kind, "kernel") == 0) {
			add_str(o, "found", kernel_source);
			add_str(o, "not_verified", kernel_source ? symbolizer_kernel_unverified(sym)
								 : NULL);
			add_str(o, "problem", kernel_source ? NULL : "no kernel symbols");
		} else if (strcmp(kind, "user") == 0 || strcmp(kind, "vdso") == 0) {
			struct sym_location loc;

			symbolizer_locate_object(sym, order[i], path, x->build_id, x->build_id_size, &loc);
			add_str(o, "found", loc.found[0] ? loc.found : NULL);
			add_str(o, "not_verified", loc.found[0] ? loc.unverified : NULL);
			add_str(o, "symbols", loc.found[0] ? loc.symbols : NULL);
			if (loc.symbols_from[0] && strcmp(loc.symbols_from, loc.found) != 0)
				add_str(o, "symbols_from", loc.symbols_from);
			add_str(o, "problem", loc.problem == SYM_OBJ_FINE ? NULL
					      : sym_obj_problem_str(loc.problem));
			looked = cJSON_AddArrayToObject(o, "looked");
			for (size_t k = 0; k < loc.ntried; k++) {
				cJSON *t = cJSON_CreateObject();

				add_str(t, "path", loc.tried[k].path);
				add_str(t, "result", loc.tried[k].result);
				cJSON_AddItemToArray(looked, t);
			}
		} else {
			add_str(o, "found", strcmp(kind, "anonymous") == 0 ? NULL : "named by the recording");
			add_str(o, "problem", NULL);
		}
		cJSON_AddItemToArray(arr, o);
	}
	free(order);
	return arr;
}

static cJSON *tallies_json(struct tally *v, size_t n, size_t top, int threads,
			   const struct strtab *st, struct replay *rp, uint64_t last)
{
	cJSON *arr = cJSON_CreateArray();

	if (n > 1)
		qsort(v, n, sizeof(*v), tally_cmp);
	for (size_t i = 0; i < n && i < top; i++) {
		cJSON *o = cJSON_CreateObject();

		add_u64(o, "pid", v[i].pid);
		if (threads)
			add_u64(o, "tid", v[i].tid);
		add_str(o, "name", strtab_str(st, threads ? v[i].comm
						 : replay_thread_name(rp, v[i].pid, v[i].pid, last)));
		add_u64(o, "samples", v[i].samples);
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}

/* JIT: each sampled process that mapped a jitdump, has a dump or map, or ran code in
 * anonymous memory. */
static cJSON *jit_json(struct counts *c, struct jit_procs *jits, const struct jit_search *s,
		       const struct strtab *st, struct replay *rp, uint64_t last)
{
	cJSON *arr = cJSON_CreateArray();

	for (size_t i = 0; i < c->nprocs; i++) {
		struct tally *t = &c->procs[i];
		struct jit_where w;
		cJSON *o, *looked;

		jit_procs_where(jits, s, t->pid, &w);
		if (!w.expected && !w.dump && !w.map && !t->anon) {
			jit_where_release(&w);
			continue;
		}
		o = cJSON_CreateObject();
		add_u64(o, "pid", t->pid);
		add_str(o, "name", strtab_str(st, replay_thread_name(rp, t->pid, t->pid, last)));
		add_u64(o, "samples_in_anonymous_memory", t->anon);
		add_str(o, "expected_dump", w.expected);
		add_str(o, "dump", w.dump);
		add_str(o, "map", w.map);
		add_str(o, "served_by", w.dump ? w.dump : w.map);
		add_str(o, "dump_not_used", w.unused);
		add_str(o, "dump_not_used_why", w.unused_why);
		looked = cJSON_AddArrayToObject(o, "looked");
		for (size_t k = 0; k < w.nlooked; k++)
			cJSON_AddItemToArray(looked, cJSON_CreateString(w.looked[k]));
		cJSON_AddItemToArray(arr, o);
		jit_where_release(&w);
	}
	return arr;
}

static cJSON *gather(const struct info_options *o, struct session *ss)
{
	struct perf_reader *r = ss->r;
	const struct perf_header_info *h = perf_reader_header(r);
	const struct perf_reader_stats *rs;
	const struct recording_facts *f = &ss->facts;
	struct profile *p = ss->p;
	struct replay *rp = ss->rp;
	struct counts c;
	struct counting k;
	struct jit_search js;
	cJSON *root = NULL, *events, *x;
	char hex[PERF_BUILD_ID_HEX_SIZE];
	const char *ksrc = NULL;

	memset(&c, 0, sizeof(c));
	u64map_init(&c.proc_index);
	u64map_init(&c.thread_index);
	/* pass 1: process state, samples skipped undecoded; pass 2: samples counted */
	if (session_pass1(ss) < 0)
		goto out;
	c.objs = xcalloc(replay_ndsos(rp) + 1, sizeof(*c.objs));
	c.event_samples = xcalloc(perf_reader_nevents(r) + 1, sizeof(*c.event_samples));
	k.c = &c;
	k.rp = rp;
	k.st = &p->strings;
	k.lbr = lbr_new(r);
	if (session_pass2(ss, is_sample, count_sample, &k) < 0) {
		lbr_free(k.lbr);
		goto out;
	}
	lbr_free(k.lbr);
	rs = perf_reader_stats(r);

	root = cJSON_CreateObject();
	add_str(root, "perfconv_version", PERFCONV_VERSION);
	add_str(root, "file", o->input);
	add_str(root, "mode", h->pipe_mode ? "pipe" : h->directory ? "directory" : "file");
	add_str(root, "perf_version", h->version);
	add_str(root, "host", h->hostname);
	add_str(root, "arch", h->arch);
	add_str(root, "cpu", h->cpudesc);
	add_u64(root, "cpus_online", h->nr_cpus_online);
	add_str(root, "os_release", h->osrelease);
	hex_bytes(hex, f->kernel_bid, f->kernel_bid_size);
	add_str(root, "kernel_build_id", f->kernel_bid_size ? hex : NULL);
	add_str(root, "command", h->cmdline);
	if (p->start_wall_ns) {
		time_t secs = (time_t)(p->start_wall_ns / 1000000000);
		struct tm tm;
		char when[64];

		gmtime_r(&secs, &tm);
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
		add_str(root, "recorded_at", when);
		/* CLOCK_DATA (perf record -k CLOCK) says it; else the file's time less the
		 * samples' span */
		add_str(root, "recorded_at_from", p->has_wall_clock ? "clock data" : "file time");
	}
	events = cJSON_AddArrayToObject(root, "events");
	for (size_t i = 0; i < perf_reader_nevents(r); i++) {
		const struct perf_event_desc *e = perf_reader_event(r, i);
		const char *mode = call_graph_mode(e);

		x = cJSON_CreateObject();
		add_str(x, "name", e->name);
		add_u64(x, "type", e->type);
		add_u64(x, "config", e->config);
		add_u64(x, e->freq ? "frequency" : "period", e->sample_period);
		add_u64(x, "samples", c.event_samples[i]);
		add_str(x, "call_graph", mode);
		if (strcmp(mode, "dwarf") == 0)
			add_u64(x, "dwarf_stack_size", e->sample_stack_user);
		add_str(x, "clock", e->use_clockid ? (e->clockid == PERF_CLOCKID_MONOTONIC
						      ? "monotonic" : "other") : "perf");
		cJSON_AddItemToArray(events, x);
	}
	add_u64(root, "samples", c.samples);
	if (c.has_time) {
		x = cJSON_AddObjectToObject(root, "time");
		add_u64(x, "first_ns", c.first);
		add_u64(x, "last_ns", c.last);
		add_u64(x, "span_ns", c.last - c.first);
	} else {
		cJSON_AddNullToObject(root, "time");
	}
	x = cJSON_AddObjectToObject(root, "lost");
	add_u64(x, "events", rs->lost_events);
	add_u64(x, "samples", rs->lost_samples);
	add_u64(root, "damaged_records", rs->skipped_bad);
	add_u64(root, "processes_with_samples", c.nprocs);
	add_u64(root, "threads_with_samples", c.nthreads);
	cJSON_AddItemToObject(root, "processes",
			      tallies_json(c.procs, c.nprocs, o->top, 0, &p->strings, rp, c.last));
	cJSON_AddItemToObject(root, "threads",
			      tallies_json(c.threads, c.nthreads, o->top, 1, &p->strings, rp, c.last));
	if (f->records_kernel)
		ksrc = symbolizer_kernel_source(ss->sym);
	cJSON_AddItemToObject(root, "objects", objects_json(&c, rp, &p->strings, ss->sym, ksrc));
	add_u64(root, "samples_in_no_mapping", c.nomap);
	add_str(root, "kernel_symbols", f->records_kernel ? (ksrc ? ksrc : "none found") : NULL);
	memset(&js, 0, sizeof(js));
	js.input_dir = ss->o.sym.input_dir;
	js.jit_dirs = o->jit_dirs;
	js.njit_dirs = o->njit_dirs;
	js.use_tmp_maps = recording_made_here(r);
	cJSON_AddItemToObject(root, "jit", jit_json(&c, ss->jits, &js, &p->strings, rp, c.last));
out:
	free(c.procs);
	free(c.threads);
	free(c.objs);
	free(c.event_samples);
	u64map_release(&c.proc_index);
	u64map_release(&c.thread_index);
	return root;
}

static const char *jstr(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static uint64_t jnum(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (cJSON_IsRaw(v))
		return strtoull(v->valuestring, NULL, 10);
	return cJSON_IsNumber(v) ? (uint64_t)v->valuedouble : 0;
}

static const char *or_unknown(const char *s)
{
	return s ? s : "(not recorded)";
}

static void print_text(const cJSON *root, FILE *out)
{
	const cJSON *x, *e, *t;
	uint64_t total = jnum(root, "samples");

	fprintf(out, "perfconv:       %s\n", jstr(root, "perfconv_version"));
	fprintf(out, "recording:      %s (%s mode)\n", jstr(root, "file"), jstr(root, "mode"));
	if (jstr(root, "recorded_at"))
		fprintf(out, "recorded at:    %s (%s)\n", jstr(root, "recorded_at"),
			strcmp(jstr(root, "recorded_at_from"), "clock data") == 0
			? "the recording's clock data"
			: "the file's modification time less the samples' span");
	fprintf(out, "perf version:   %s\n", or_unknown(jstr(root, "perf_version")));
	fprintf(out, "host:           %s (%s, %" PRIu64 " CPUs online%s%s)\n",
		or_unknown(jstr(root, "host")), or_unknown(jstr(root, "arch")),
		jnum(root, "cpus_online"), jstr(root, "cpu") ? ", " : "",
		jstr(root, "cpu") ? jstr(root, "cpu") : "");
	fprintf(out, "kernel:         %s, build id %s\n", or_unknown(jstr(root, "os_release")),
		or_unknown(jstr(root, "kernel_build_id")));
	fprintf(out, "command:        %s\n", or_unknown(jstr(root, "command")));
	fprintf(out, "events:\n");
	cJSON_ArrayForEach(e, cJSON_GetObjectItem(root, "events")) {
		const char *cg = jstr(e, "call_graph");
		char rate[64], graph[64];

		if (cJSON_GetObjectItem(e, "frequency"))
			snprintf(rate, sizeof(rate), "frequency %" PRIu64 " Hz", jnum(e, "frequency"));
		else
			snprintf(rate, sizeof(rate), "period %" PRIu64, jnum(e, "period"));
		if (strcmp(cg, "dwarf") == 0)
			snprintf(graph, sizeof(graph), "dwarf, %" PRIu64 " bytes of stack",
				 jnum(e, "dwarf_stack_size"));
		else
			snprintf(graph, sizeof(graph), "%s", strcmp(cg, "fp") == 0 ? "frame pointer"
							     : strcmp(cg, "lbr") == 0 ? "LBR" : "none");
		fprintf(out, "  %-24s %-20s %8" PRIu64 " samples   call graph: %s\n",
			jstr(e, "name"), rate, jnum(e, "samples"), graph);
	}
	x = cJSON_GetObjectItem(root, "time");
	if (cJSON_IsObject(x))
		fprintf(out, "time:           %.6f s of samples, %.6f to %.6f on the recording's clock\n",
			(double)jnum(x, "span_ns") / 1e9, (double)jnum(x, "first_ns") / 1e9,
			(double)jnum(x, "last_ns") / 1e9);
	else
		fprintf(out, "time:           samples carry no times\n");
	x = cJSON_GetObjectItem(root, "lost");
	fprintf(out, "samples:        %" PRIu64 "; perf lost %" PRIu64 " events and %" PRIu64
		" samples; %" PRIu64 " damaged records\n", total, jnum(x, "events"),
		jnum(x, "samples"), jnum(root, "damaged_records"));
	fprintf(out, "processes (%" PRIu64 " with samples, the busiest):\n",
		jnum(root, "processes_with_samples"));
	cJSON_ArrayForEach(e, cJSON_GetObjectItem(root, "processes"))
		fprintf(out, "  %8" PRIu64 "  %5.1f%%  %s (pid %" PRIu64 ")\n", jnum(e, "samples"),
			total ? 100.0 * (double)jnum(e, "samples") / (double)total : 0,
			jstr(e, "name"), jnum(e, "pid"));
	fprintf(out, "threads (%" PRIu64 " with samples, the busiest):\n",
		jnum(root, "threads_with_samples"));
	cJSON_ArrayForEach(e, cJSON_GetObjectItem(root, "threads"))
		fprintf(out, "  %8" PRIu64 "  %5.1f%%  %s (%" PRIu64 "/%" PRIu64 ")\n",
			jnum(e, "samples"), total ? 100.0 * (double)jnum(e, "samples") / (double)total : 0,
			jstr(e, "name"), jnum(e, "pid"), jnum(e, "tid"));
	fprintf(out, "objects (samples at an address in it, samples with it in the stack):\n");
	cJSON_ArrayForEach(e, cJSON_GetObjectItem(root, "objects")) {
		const char *problem = jstr(e, "problem"), *found = jstr(e, "found");

		fprintf(out, "  %8" PRIu64 " %8" PRIu64 "  %s [%s] build id %s\n", jnum(e, "samples"),
			jnum(e, "in_stacks"), jstr(e, "path"), jstr(e, "kind"),
			or_unknown(jstr(e, "build_id")));
		if (found && !problem)
			fprintf(out, "%21sfound: %s%s%s%s%s%s%s%s\n", "", found,
				jstr(e, "not_verified") ? " (" : "",
				jstr(e, "not_verified") ? jstr(e, "not_verified") : "",
				jstr(e, "not_verified") ? ")" : "",
				jstr(e, "symbols") ? "; symbols: " : "",
				jstr(e, "symbols") ? jstr(e, "symbols") : "",
				jstr(e, "symbols_from") ? " from " : "",
				jstr(e, "symbols_from") ? jstr(e, "symbols_from") : "");
		else if (found)
			fprintf(out, "%21sfound: %s (%s)\n", "", found, problem);
		else if (problem)
			fprintf(out, "%21snot usable: %s\n", "", problem);
		else
			fprintf(out, "%21sno file: code in anonymous memory (JIT code, see below)\n", "");
		if (problem && cJSON_GetObjectItem(e, "looked")) {
			fprintf(out, "%21slooked at:\n", "");
			cJSON_ArrayForEach(t, cJSON_GetObjectItem(e, "looked"))
				fprintf(out, "%23s%s: %s\n", "", jstr(t, "path"), jstr(t, "result"));
		}
	}
	if (jnum(root, "samples_in_no_mapping"))
		fprintf(out, "  %8" PRIu64 "           at addresses in no recorded mapping\n",
			jnum(root, "samples_in_no_mapping"));
	fprintf(out, "kernel symbols: %s\n", jstr(root, "kernel_symbols") ? jstr(root, "kernel_symbols")
			: "(the recording has no kernel samples)");
	fprintf(out, "JIT:%s\n", cJSON_GetArraySize(cJSON_GetObjectItem(root, "jit")) ? ""
			: "            no process ran code in anonymous memory or mapped a jitdump");
	cJSON_ArrayForEach(e, cJSON_GetObjectItem(root, "jit")) {
		fprintf(out, "  pid %" PRIu64 " (%s), %" PRIu64 " samples in anonymous memory: ",
			jnum(e, "pid"), jstr(e, "name"), jnum(e, "samples_in_anonymous_memory"));
		if (jstr(e, "served_by"))
			fprintf(out, "%s\n", jstr(e, "served_by"));
		else if (jstr(e, "dump_not_used"))
			fprintf(out, "%s found at %s but not used: %s; no perf map found%s%s\n",
				path_base(jstr(e, "dump_not_used")), jstr(e, "dump_not_used"),
				jstr(e, "dump_not_used_why"),
				jstr(e, "expected_dump") ? "; it wrote " : "",
				jstr(e, "expected_dump") ? jstr(e, "expected_dump") : "");
		else
			fprintf(out, "no jitdump or perf map found%s%s\n",
				jstr(e, "expected_dump") ? "; it wrote " : "",
				jstr(e, "expected_dump") ? jstr(e, "expected_dump") : "");
		if (!jstr(e, "served_by")) {
			fprintf(out, "      looked at:\n");
			cJSON_ArrayForEach(t, cJSON_GetObjectItem(e, "looked"))
				fprintf(out, "        %s\n", t->valuestring);
		}
	}
}

int info_run(const struct info_options *o, FILE *out, struct diag *d)
{
	struct session_options so;
	struct session ss;
	struct profile p;
	cJSON *root;
	int ret = 0;

	memset(&so, 0, sizeof(so));
	so.input = o->input;
	so.sym = o->sym;
	so.jit_dirs = o->jit_dirs;
	so.njit_dirs = o->njit_dirs;
	so.quiet = 1;
	profile_init(&p);
	if (session_open(&ss, &so, &p, d) < 0) {
		profile_release(&p);
		return -1;
	}
	root = gather(o, &ss);
	session_close(&ss);
	profile_release(&p);
	if (!root)
		return -1;
	if (o->json) {
		char *s = cJSON_Print(root);

		fprintf(out, "%s\n", s);
		cJSON_free(s);
	} else {
		print_text(root, out);
	}
	cJSON_Delete(root);
	if (write_end(out, fflush(out) == 0 ? 0 : -1) != 0) {
		/* the reader went away (| head): nothing to say, as for a conversion */
		if (errno != EPIPE)
			diag_error(d, "standard output", DIAG_NO_OFFSET, "write failed: %s",
				   strerror(errno));
		ret = -1;
	}
	return ret;
}
