/* firefox: the Firefox Profiler's processed profile format, one track per thread.
 *
 * Format: the processed profile of github.com/firefox-devtools/profiler, its types in
 * src/types/profile.ts (RawProfileSharedData, RawThread, ProfileMeta), its changes by
 * version in docs-developer/CHANGELOG-formats.md and its upgraders in
 * src/profile-logic/processed-profile-versioning.ts; samply's fxprof-processed-profile
 * writes the same tables. Every column of a table is present, nulls where a value is
 * unknown: the profiler reads them without checking, and a missing one fails the
 * load with a generic error. Tables are columns (one array per field, `length`
 * beside them); stacks, frames, functions, resources and native symbols are shared by
 * the threads (version 60), strings in shared.stringArray (56). Stacks come after
 * their prefixes (prefixOffset, 66); a frame's library is its own (`lib`, 70).
 *
 * Memory: the shared tables follow the profile's frames and stacks; a thread's
 * samples are read once from the timeline (formats/model/timeline.h) into spools of a
 * bounded size (common/spool.h), from which each column is written in turn.
 */
#include "formats/write/firefox.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/spool.h"
#include "common/version.h"
#include "formats/write/json.h"
#include "formats/write/firefox_internal.h"
#include "formats/model/profview.h"

static const char *const jit_colors[] = { "green", "purple", "lightblue", "magenta",
					  "brown", "red", "lightred", "darkgrey" };

/* What each of a thread's spools keeps in memory before it goes to a file. */
#define FF_SPOOL_MEMORY (1u << 16)

static void write_categories(struct ff_writer *w)
{
	FILE *out = w->out;

	fputs("\"categories\":[{\"name\":\"Other\",\"color\":\"grey\",\"subcategories\":[\"Other\"]},\n"
	      "{\"name\":\"Idle\",\"color\":\"transparent\",\"subcategories\":[\"Other\"", out);
	for (int s = 1; s < PC_NSTATES; s++) {
		fputc(',', out);
		json_string(out, pc_state_name((enum pc_state)s));
	}
	fputs("]},\n{\"name\":\"User\",\"color\":\"blue\",\"subcategories\":[\"Other\"]},\n"
	      "{\"name\":\"Kernel\",\"color\":\"orange\",\"subcategories\":[\"Other\"]}", out);
	for (size_t i = 0; i < w->njit; i++) {
		const char *name = profile_text(w->p, w->jit_name[i]);
		size_t len = strlen(name);
		char *label = xmalloc(len + 8);

		memcpy(label, "JIT: ", 5);
		memcpy(label + 5, name, len + 1);
		fputs(",\n{\"name\":", out);
		json_string(out, label);
		fputs(",\"color\":", out);
		json_string(out, jit_colors[i % (sizeof(jit_colors) / sizeof(jit_colors[0]))]);
		fputs(",\"subcategories\":[\"Other\"]}", out);
		free(label);
	}
	fputc(']', out);
}

/* The markers' schemas; every marker's data has the "type" of one. */
static const char marker_schema[] =
	"\"markerSchema\":[{\"name\":\"OffCPU\",\"display\":[\"marker-chart\",\"marker-table\","
	"\"timeline-overview\"],\"chartLabel\":\"{marker.data.state}\",\"tableLabel\":"
	"\"off-CPU: {marker.data.state}\",\"tooltipLabel\":\"off-CPU: {marker.data.state}\","
	"\"description\":\"The thread was off the CPU: the state it left the CPU in\","
	"\"fields\":[{\"key\":\"state\",\"label\":\"State\",\"format\":\"string\"}]},\n"
	"{\"name\":\"Task\",\"display\":[\"marker-chart\",\"marker-table\",\"timeline-overview\"],"
	"\"chartLabel\":\"{marker.data.what} {marker.data.name}\",\"tableLabel\":"
	"\"{marker.data.what} {marker.data.name}\",\"tooltipLabel\":\"{marker.data.what} "
	"{marker.data.name}\",\"description\":\"The thread began (fork, clone), ran a new program "
	"(exec) or ended (exit)\",\"fields\":[{\"key\":\"what\",\"label\":\"Event\","
	"\"format\":\"string\"},{\"key\":\"name\",\"label\":\"New name\",\"format\":\"string\"}]},\n"
	"{\"name\":\"Lost\",\"display\":[\"marker-chart\",\"marker-table\",\"timeline-overview\"],"
	"\"chartLabel\":\"lost {marker.data.count} {marker.data.what}\",\"tableLabel\":"
	"\"lost {marker.data.count} {marker.data.what}\",\"tooltipLabel\":\"lost {marker.data.count} "
	"{marker.data.what}\",\"description\":\"perf lost records (its ring buffer was full): "
	"samples are missing around this time, on this CPU\",\"fields\":[{\"key\":\"count\","
	"\"label\":\"Lost\",\"format\":\"integer\"},{\"key\":\"what\",\"label\":\"Of\","
	"\"format\":\"string\"},{\"key\":\"cpu\",\"label\":\"CPU\",\"format\":\"string\"}]},\n"
	"{\"name\":\"Input\",\"display\":[\"marker-chart\",\"marker-table\",\"timeline-overview\"],"
	"\"chartLabel\":\"{marker.data.input}\",\"tableLabel\":\"input {marker.data.input}\","
	"\"tooltipLabel\":\"input {marker.data.input}\",\"description\":\"One of the merged "
	"recordings: its first sample to its last\",\"fields\":[{\"key\":\"input\","
	"\"label\":\"Recording\",\"format\":\"string\"}]}]";

static void extra_entry(FILE *out, int *first, const char *label, const char *value)
{
	fputs(*first ? "{\"label\":" : ",{\"label\":", out);
	*first = 0;
	json_string(out, label);
	fputs(",\"format\":\"string\",\"value\":", out);
	json_string(out, value);
	fputc('}', out);
}

/* The recording's facts in the profile's information panel, an "Event" entry for
 * each event written (its tracks' names end in " (EVENT)" when there are several). */
static void write_extra(struct ff_writer *w)
{
	const struct profile *p = w->p;
	int first = 1;

	fputs(",\"extra\":[{\"label\":\"Recording\",\"entries\":[", w->out);
	if (p->hostname)
		extra_entry(w->out, &first, "Host", profile_text(p, p->hostname));
	if (p->perf_version)
		extra_entry(w->out, &first, "perf version", profile_text(p, p->perf_version));
	for (size_t e = 0; e < p->nevents && e < 64; e++)
		if (w->events_written >> e & 1)
			extra_entry(w->out, &first, "Event", profile_text(p, p->events[e].name));
	fputs("]}]", w->out);
}

static void write_meta(struct ff_writer *w)
{
	const struct profile *p = w->p;
	FILE *out = w->out;
	uint64_t start_ms_ns = 0; /* the origin's wall-clock time, ns since the epoch */

	if (p->has_wall_clock && w->origin + p->wall_ns >= p->clock_ns)
		start_ms_ns = w->origin - p->clock_ns + p->wall_ns;
	else if (p->start_wall_ns)
		start_ms_ns = p->start_wall_ns +
			(p->first_time_set && w->origin > p->first_time ? w->origin - p->first_time : 0);
	fputs("\"meta\":{\"version\":24,\"preprocessedProfileVersion\":", out);
	json_u64(out, FIREFOX_PROFILE_VERSION);
	fputs(",\"interval\":", out);
	ff_put_ms(out, w->interval_ns);
	fputs(",\"startTime\":", out);
	ff_put_ms(out, start_ms_ns);
	/* the profiler's range: from the first sample to the end of the last (never empty:
	 * a profile of no range fails its assertions) */
	fputs(",\"profilingStartTime\":0,\"profilingEndTime\":", out);
	ff_put_ms(out, w->end_ns ? w->end_ns : w->interval_ns);
	fputs(",\"processType\":0,\"product\":", out);
	json_string(out, p->cmdline ? profile_text(p, p->cmdline) : "perf");
	fputs(",\"importedFrom\":\"perfconv " PERFCONV_VERSION "\",\"stackwalk\":1,\"debug\":false,"
	      "\"symbolicated\":true,\"usesOnlyOneStackType\":true,"
	      "\"sourceCodeIsNotOnSearchfox\":true,\"pausedRanges\":[],\"platform\":\"X11\"", out);
	if (p->osrelease) {
		fputs(",\"oscpu\":", out);
		json_string(out, profile_text(p, p->osrelease));
	}
	if (p->cpudesc) {
		fputs(",\"CPUName\":", out);
		json_string(out, profile_text(p, p->cpudesc));
	}
	if (p->arch) {
		fputs(",\"abi\":", out);
		json_string(out, profile_text(p, p->arch));
	}
	if (p->nr_cpus) {
		fputs(",\"logicalCPUs\":", out);
		json_u64(out, p->nr_cpus);
	}
	write_extra(w);
	fputs(",\"sampleUnits\":{\"time\":\"ms\",\"eventDelay\":\"ms\",\"threadCPUDelta\":\"ns\"},"
	      "\"extensions\":{\"length\":0,\"baseURL\":[],\"id\":[],\"name\":[]},\n", out);
	write_categories(w);
	fputs(",\n", out);
	fputs(marker_schema, out);
	fputs("},\n", out);
}

/* A build id (hex) as Breakpad names it: its first 16 bytes as a GUID, the first
 * three fields byte-swapped (little-endian), upper case, then the age 0. */
static void breakpad_id(const char *hex, char *dst /* 34 */)
{
	uint8_t b[16] = { 0 };
	static const int order[16] = { 3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15 };
	static const char digits[] = "0123456789ABCDEF";

	for (size_t i = 0; i < 16 && hex[2 * i] && hex[2 * i + 1]; i++) {
		unsigned v;

		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			break;
		b[i] = (uint8_t)v;
	}
	for (int i = 0; i < 16; i++) {
		dst[2 * i] = digits[b[order[i]] >> 4];
		dst[2 * i + 1] = digits[b[order[i]] & 15];
	}
	dst[32] = '0';
	dst[33] = 0;
}

static void write_libs(struct ff_writer *w)
{
	const struct profile *p = w->p;
	FILE *out = w->out;

	fputs("\"libs\":[", out);
	for (size_t i = 0; i < w->nlibs; i++) {
		const struct pc_mapping *m = &p->mappings[w->lib_mapping[i]];
		const char *path = profile_text(p, m->file), *bid = profile_text(p, m->build_id);
		char bp[34];

		fputs(i ? ",\n{\"arch\":" : "\n{\"arch\":", out);
		json_string(out, p->arch ? profile_text(p, p->arch) : "");
		fputs(",\"name\":", out);
		json_string(out, path_base(path));
		fputs(",\"path\":", out);
		json_string(out, path);
		fputs(",\"debugName\":", out);
		json_string(out, path_base(path));
		fputs(",\"debugPath\":", out);
		json_string(out, path);
		fputs(",\"breakpadId\":", out);
		if (*bid) {
			breakpad_id(bid, bp);
			json_string(out, bp);
			fputs(",\"codeId\":", out);
			json_string(out, bid);
		} else {
			fputs("\"\",\"codeId\":null", out);
		}
		fputc('}', out);
	}
	fputs("],\n", out);
}

static int thread_order_cmp(const void *a, const void *b, void *arg)
{
	const struct pc_thread *t = arg;
	const struct pc_thread *x = &t[*(const uint32_t *)a], *y = &t[*(const uint32_t *)b];

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

static const char *weight_type(const struct ff_writer *w, int event)
{
	if (!w->o->weight_period)
		return "samples";
	switch (profile_event_unit(w->p, event)) {
	case PC_UNIT_NANOSECONDS: return "tracing-ms";
	case PC_UNIT_BYTES: return "bytes";
	default: return "samples";
	}
}

/* Does event `event` say how long a thread was on a CPU (threadCPUDelta)? */
static int event_has_cpu(const struct profile *p, int event)
{
	const struct pc_event *e;

	if (event < 0 || (size_t)event >= p->nevents)
		return 0;
	e = &p->events[event];
	return e->is_clock || e->time == PC_TIME_WALL;
}

/* One column of a thread's samples, from its spool. */
enum { C_STACK, C_TIME, C_WEIGHT, C_CPU };

static void write_sample_column(struct ff_writer *w, struct ff_slot *sl, int which, int ms)
{
	struct spool_reader r;
	const struct ff_rec *x;
	int first = 1;

	spool_reader_init(&r, sl->recs, 0, spool_count(sl->recs), 0);
	while ((x = spool_read(&r)) != NULL) {
		if (!first)
			fputc(',', w->out);
		first = 0;
		switch (which) {
		case C_STACK:
			if (x->stack == UINT32_MAX)
				fputs("null", w->out);
			else
				json_u64(w->out, x->stack);
			break;
		case C_TIME:
			ff_put_ms(w->out, x->time);
			break;
		case C_WEIGHT:
			if (ms)
				ff_put_ms(w->out, x->weight);
			else
				json_u64(w->out, x->weight);
			break;
		default:
			json_u64(w->out, x->cpu);
			break;
		}
	}
	spool_reader_release(&r);
}

enum { M_NAME, M_START, M_END, M_PHASE, M_CAT, M_DATA };

static void write_mark_data(struct ff_writer *w, const struct ff_mark *m)
{
	FILE *out = w->out;
	static const char *const what[] = { "", "start", "exit", "exec", "records", "samples" };

	switch (m->kind) {
	case MK_OFFCPU:
		fputs("{\"type\":\"OffCPU\",\"state\":", out);
		json_string(out, pc_state_name((enum pc_state)m->arg));
		break;
	case MK_FORK:
	case MK_EXIT:
	case MK_EXEC:
		fputs("{\"type\":\"Task\",\"what\":", out);
		json_string(out, what[m->kind]);
		fputs(",\"name\":", out);
		json_string(out, m->arg ? profile_text(w->p, m->arg) : "");
		break;
	case MK_LOST:
	case MK_LOST_SAMPLES:
		fputs("{\"type\":\"Lost\",\"count\":", out);
		json_u64(out, m->count);
		fputs(",\"what\":", out);
		json_string(out, what[m->kind]);
		fputs(",\"cpu\":", out);
		if (m->arg == PC_NO_CPU) {
			json_string(out, "not recorded");
		} else {
			char cpu[16];

			snprintf(cpu, sizeof(cpu), "%" PRIu32, m->arg);
			json_string(out, cpu);
		}
		break;
	default:
		fputs("{\"type\":\"Input\",\"input\":", out);
		json_string(out, profile_text(w->p, m->arg));
		break;
	}
	fputc('}', out);
}

static void write_marker_column(struct ff_writer *w, struct ff_slot *sl, int which)
{
	struct spool_reader r;
	const struct ff_mark *m;
	int first = 1;

	spool_reader_init(&r, sl->marks, 0, spool_count(sl->marks), 0);
	while ((m = spool_read(&r)) != NULL) {
		int interval = m->kind == MK_OFFCPU || m->kind == MK_INPUT;

		if (!first)
			fputc(',', w->out);
		first = 0;
		switch (which) {
		case M_NAME: json_u64(w->out, w->mark_name[m->kind]); break;
		case M_START: ff_put_ms(w->out, m->start); break;
		case M_END: ff_put_ms(w->out, interval ? m->end : m->start); break;
		case M_PHASE: fputc(interval ? '1' : '0', w->out); break; /* 0: an instant */
		case M_CAT: json_u64(w->out, m->kind == MK_OFFCPU ? CAT_IDLE : CAT_OTHER); break;
		default: write_mark_data(w, m); break;
		}
	}
	spool_reader_release(&r);
}

/* When a thread or process began and ended, from the origin. */
struct ff_span {
	uint64_t start, end;
	int ended;           /* its exit was recorded */
};

struct proc_span {
	uint32_t pid, name;
	struct ff_span s;
};

/* A time of the recording's clock from the origin (0 before it). */
static uint64_t mark_time(const struct ff_writer *w, uint64_t t)
{
	return t > w->origin ? t - w->origin : 0;
}

static int tmark_cmp(const void *a, const void *b, void *arg)
{
	const struct pc_mark *x = &((const struct pc_mark *)arg)[*(const uint32_t *)a];
	const struct pc_mark *y = &((const struct pc_mark *)arg)[*(const uint32_t *)b];

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return (*(const uint32_t *)a > *(const uint32_t *)b) - (*(const uint32_t *)a < *(const uint32_t *)b);
}

/* The profile's marks: a thread's (forks, exits, execs, its own lost records) by pid,
 * tid and time; the others (lost on a CPU, a merge's inputs) for every thread. */
static void index_marks(struct ff_writer *w)
{
	const struct profile *p = w->p;
	size_t n = p->nmarks ? p->nmarks : 1;

	w->tmarks = xmalloc(n * sizeof(*w->tmarks));
	w->gmarks = xmalloc(n * sizeof(*w->gmarks));
	for (size_t i = 0; i < p->nmarks; i++) {
		const struct pc_mark *m = &p->marks[i];

		if (m->kind == PC_MARK_INPUT || (m->kind == PC_MARK_LOST &&
						 (m->cpu != PC_NO_CPU || m->tid == UINT32_MAX)))
			w->gmarks[w->ngmarks++] = (uint32_t)i;
		else
			w->tmarks[w->ntmarks++] = (uint32_t)i;
	}
	qsort_r(w->tmarks, w->ntmarks, sizeof(*w->tmarks), tmark_cmp, p->marks);
}

/* The thread's marks: tmarks[*lo, return). */
static size_t thread_marks(const struct ff_writer *w, uint32_t pid, uint32_t tid, size_t *lo)
{
	const struct pc_mark *mk = w->p->marks;
	size_t a = 0, b = w->ntmarks;

	while (a < b) {
		size_t mid = a + (b - a) / 2;
		const struct pc_mark *m = &mk[w->tmarks[mid]];

		if (m->pid < pid || (m->pid == pid && m->tid < tid))
			a = mid + 1;
		else
			b = mid;
	}
	*lo = a;
	while (b < w->ntmarks && mk[w->tmarks[b]].pid == pid && mk[w->tmarks[b]].tid == tid)
		b++;
	return b;
}

/* A thread's span: its first sample, or its fork before it; its exit, if recorded. */
static struct ff_span thread_span(const struct ff_writer *w, const struct pc_thread *t)
{
	struct ff_span sp = { mark_time(w, t->first_time), 0, 0 };
	size_t lo, hi = thread_marks(w, t->pid, t->tid, &lo);

	for (size_t i = lo; i < hi; i++) {
		const struct pc_mark *m = &w->p->marks[w->tmarks[i]];

		if (m->kind == PC_MARK_FORK && mark_time(w, m->time) < sp.start)
			sp.start = mark_time(w, m->time);
		if (m->kind == PC_MARK_EXIT) {
			sp.end = mark_time(w, m->time);
			sp.ended = 1;
		}
	}
	if (sp.ended && sp.end < sp.start)
		sp.ended = 0;
	return sp;
}

/* Mark `m` as the markers of a thread whose samples were on the CPUs of `cpus` (a
 * bit each of the first 1024; `other` any beyond). */
static void add_mark(const struct ff_writer *w, struct ff_slot *sl, const struct pc_mark *m,
		     const uint64_t *cpus, int other)
{
	struct ff_mark fm;

	memset(&fm, 0, sizeof(fm));
	fm.start = mark_time(w, m->time);
	fm.end = mark_time(w, m->end > m->time ? m->end : m->time);
	fm.count = m->count;
	fm.arg = m->text;
	switch (m->kind) {
	case PC_MARK_FORK: fm.kind = MK_FORK; break;
	case PC_MARK_EXIT: fm.kind = MK_EXIT; break;
	case PC_MARK_EXEC: fm.kind = MK_EXEC; break;
	case PC_MARK_LOST:
		if (m->cpu != PC_NO_CPU &&
		    !(m->cpu < 1024 ? (int)(cpus[m->cpu / 64] >> (m->cpu % 64) & 1) : other))
			return; /* another CPU's */
		fm.kind = m->lost_samples ? MK_LOST_SAMPLES : MK_LOST;
		fm.arg = m->cpu;
		break;
	case PC_MARK_INPUT: fm.kind = MK_INPUT; break;
	default: return;
	}
	spool_append(sl->marks, &fm);
}

static void write_thread(struct ff_writer *w, const struct pc_thread *t, struct ff_slot *sl,
			 const struct proc_span *ps, const struct ff_span *ts)
{
	const struct profile *p = w->p;
	FILE *out = w->out;
	const char *comm = profile_text(p, t->comm);
	int cpu = event_has_cpu(p, sl->event);
	const char *wt = weight_type(w, sl->event);
	char ids[32];

	fputs("{\"name\":", out);
	if (w->nevents_written > 1) {
		const char *ev = profile_text(p, p->events[sl->event].name);
		size_t cl = strlen(comm), el = strlen(ev);
		char *name = xmalloc(cl + el + 4);

		memcpy(name, comm, cl);
		memcpy(name + cl, " (", 2);
		memcpy(name + cl + 2, ev, el);
		memcpy(name + cl + 2 + el, ")", 2);
		json_string(out, name);
		free(name);
	} else {
		json_string(out, comm);
	}
	fputs(",\"processName\":", out);
	json_string(out, profile_text(p, ps->name ? ps->name : t->comm));
	snprintf(ids, sizeof(ids), "%" PRIu32, t->pid);
	fputs(",\"processType\":\"default\",\"pid\":", out);
	json_string(out, ids);
	fputs(",\"tid\":", out);
	json_u64(out, t->tid);
	fputs(t->pid == t->tid ? ",\"isMainThread\":true" : ",\"isMainThread\":false", out);
	fputs(",\"processStartupTime\":", out);
	ff_put_ms(out, ps->s.start);
	fputs(",\"processShutdownTime\":", out);
	if (ps->s.ended)
		ff_put_ms(out, ps->s.end);
	else
		fputs("null", out);
	fputs(",\"registerTime\":", out);
	ff_put_ms(out, ts->start);
	fputs(",\"unregisterTime\":", out);
	if (ts->ended)
		ff_put_ms(out, ts->end);
	else
		fputs("null", out);
	fputs(",\"pausedRanges\":[],\"showMarkersInTimeline\":true,\n"
	      "\"samples\":{\"weightType\":", out);
	json_string(out, wt);
	fputs(",\"length\":", out);
	json_u64(out, sl->n);
	ff_col(out, "stack", 1);
	write_sample_column(w, sl, C_STACK, 0);
	ff_col(out, "time", 0);
	write_sample_column(w, sl, C_TIME, 0);
	ff_col(out, "weight", 0);
	write_sample_column(w, sl, C_WEIGHT, strcmp(wt, "tracing-ms") == 0);
	if (cpu) {
		ff_col(out, "threadCPUDelta", 0);
		write_sample_column(w, sl, C_CPU, 0);
	}
	fputs("]},\n\"markers\":{\"length\":", out);
	json_u64(out, spool_count(sl->marks));
	ff_col(out, "name", 1);
	write_marker_column(w, sl, M_NAME);
	ff_col(out, "startTime", 0);
	write_marker_column(w, sl, M_START);
	ff_col(out, "endTime", 0);
	write_marker_column(w, sl, M_END);
	ff_col(out, "phase", 0);
	write_marker_column(w, sl, M_PHASE);
	ff_col(out, "category", 0);
	write_marker_column(w, sl, M_CAT);
	ff_col(out, "data", 0);
	write_marker_column(w, sl, M_DATA);
	fputs("]}}", out);
}

/* A thread's samples read once, into a spool per event. Returns the slots used. */
static size_t read_thread(struct ff_writer *w, const struct pc_thread *t, struct ff_slot *slots,
			  size_t nslots)
{
	struct profview_cursor c;
	const struct pc_sample *s;
	size_t used = 0, lo, hi;
	uint64_t k = 0, cpus[16] = { 0 };
	int other_cpu = 0;

	profview_cursor_init(&c, &w->v, t);
	while ((s = profview_cursor_next(&c)) != NULL) {
		struct ff_slot *sl = NULL;
		struct ff_rec r;

		for (size_t i = 0; i < used; i++)
			if (slots[i].event == s->event)
				sl = &slots[i];
		if (!sl) {
			if (used == nslots)
				continue; /* not reached: a slot per event */
			sl = &slots[used++];
			sl->event = s->event;
			sl->n = 0;
			spool_clear(sl->recs);
			spool_clear(sl->marks);
		}
		memset(&r, 0, sizeof(r));
		r.time = w->p->has_time ? (s->time > w->origin ? s->time - w->origin : 0)
					: k * w->interval_ns;
		k++;
		r.weight = sample_weight(w->o, s);
		r.state = s->state;
		r.cpu = s->state ? 0 : s->period;
		if (s->state) {
			uint32_t *st = u64map_get(&w->state_stacks,
						  ((uint64_t)s->stack << 8 | s->state) + 1);

			r.stack = st ? *st : w->stack_of_node[s->stack];
			if (w->p->has_time && s->state < PC_NSTATES) {
				struct ff_mark m = { .start = r.time, .end = r.time + s->period,
						     .kind = MK_OFFCPU, .arg = s->state };

				spool_append(sl->marks, &m);
			}
		} else {
			r.stack = w->stack_of_node[s->stack];
		}
		spool_append(sl->recs, &r);
		sl->n++;
		if (s->cpu < 1024)
			cpus[s->cpu / 64] |= 1ull << (s->cpu % 64);
		else if (s->cpu != PC_NO_CPU)
			other_cpu = 1;
	}
	profview_cursor_release(&c);
	/* the thread's marks on each of its tracks */
	hi = thread_marks(w, t->pid, t->tid, &lo);
	for (size_t j = 0; j < used; j++) {
		for (size_t i = lo; i < hi; i++)
			add_mark(w, &slots[j], &w->p->marks[w->tmarks[i]], cpus, other_cpu);
		for (size_t i = 0; i < w->ngmarks; i++)
			add_mark(w, &slots[j], &w->p->marks[w->gmarks[i]], cpus, other_cpu);
	}
	return used;
}

/* Returns 0, or the errno of a spool's failed write or read. */
static int write_threads(struct ff_writer *w)
{
	const struct profile *p = w->p;
	size_t nt = w->v.nthreads, nslots = p->nevents ? p->nevents : 1, nps = 0, ps_cap = 0;
	uint32_t *order = xmalloc((nt ? nt : 1) * sizeof(*order));
	struct ff_slot *slots = xcalloc(nslots, sizeof(*slots));
	struct proc_span *ps = NULL;
	static const char *const names[MK_N] = { "Off-CPU", "Thread start", "Exit", "Exec",
						 "Lost records", "Lost samples", "Input" };
	int first = 1, err = 0;

	for (int i = 0; i < MK_N; i++)
		w->mark_name[i] = ff_out_lit(w, names[i]);
	index_marks(w);
	for (size_t i = 0; i < nslots; i++) {
		slots[i].recs = spool_new(sizeof(struct ff_rec), FF_SPOOL_MEMORY);
		slots[i].marks = spool_new(sizeof(struct ff_mark), FF_SPOOL_MEMORY / 4);
	}
	for (size_t i = 0; i < nt; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, nt, sizeof(*order), thread_order_cmp, w->v.threads);
	/* each process's span: its threads', its main thread's fork and exit */
	for (size_t i = 0; i < nt; i++) {
		const struct pc_thread *t = &w->v.threads[order[i]];
		struct ff_span ts = thread_span(w, t);

		if (!nps || ps[nps - 1].pid != t->pid) {
			struct proc_span s = { t->pid, profile_thread_name(p, t->pid, t->pid), ts };
			struct pc_thread main_thread = *t;

			s.s.ended = 0;
			main_thread.tid = t->pid;
			ts = thread_span(w, &main_thread); /* its fork and exit, if recorded */
			if (ts.start < s.s.start)
				s.s.start = ts.start;
			s.s.end = ts.end;
			s.s.ended = ts.ended;
			VEC_PUSH(ps, nps, ps_cap, s);
			ts = thread_span(w, t);
		}
		if (ts.start < ps[nps - 1].s.start)
			ps[nps - 1].s.start = ts.start;
		if (t->tid == t->pid && !ps[nps - 1].name)
			ps[nps - 1].name = t->comm;
	}
	fputs("\"threads\":[", w->out);
	for (size_t i = 0, k = 0; i < nt; i++) {
		const struct pc_thread *t = &w->v.threads[order[i]];
		size_t used = read_thread(w, t, slots, nslots);

		struct ff_span ts = thread_span(w, t);

		while (ps[k].pid != t->pid)
			k++;
		/* in the events' order */
		for (size_t e = 0; e < p->nevents || (e == 0 && !p->nevents); e++)
			for (size_t j = 0; j < used; j++)
				if ((size_t)slots[j].event == e) {
					fputs(first ? "\n" : ",\n", w->out);
					first = 0;
					write_thread(w, t, &slots[j], &ps[k], &ts);
				}
	}
	if (first) /* the profiler refuses a profile of no threads: one, empty */
		fputs("\n{\"name\":\"no samples\",\"processName\":\"no samples\","
		      "\"processType\":\"default\",\"pid\":\"0\",\"tid\":0,\"isMainThread\":true,"
		      "\"processStartupTime\":0,\"processShutdownTime\":null,\"registerTime\":0,"
		      "\"unregisterTime\":null,\"pausedRanges\":[],\"samples\":{\"weightType\":"
		      "\"samples\",\"length\":0,\"stack\":[],\"time\":[],\"weight\":[]},"
		      "\"markers\":{\"length\":0,\"name\":[],\"startTime\":[],\"endTime\":[],"
		      "\"phase\":[],\"category\":[],\"data\":[]}}", w->out);
	fputs("],\n", w->out);
	for (size_t i = 0; i < nslots; i++) {
		if (!err)
			err = spool_error(slots[i].recs) ? spool_error(slots[i].recs)
							 : spool_error(slots[i].marks);
		spool_free(slots[i].recs);
		spool_free(slots[i].marks);
	}
	free(slots);
	free(order);
	free(ps);
	free(w->tmarks);
	free(w->gmarks);
	return err;
}

/* The sampling interval: the first event's period (or 1/frequency), else 1 ms. */
static uint64_t interval_of(const struct profile *p, int event)
{
	const struct pc_event *e;

	if (event < 0 || (size_t)event >= p->nevents)
		return 1000000;
	e = &p->events[event];
	if (e->freq && e->sample_period)
		return 1000000000 / e->sample_period ? 1000000000 / e->sample_period : 1;
	if (e->unit == PC_UNIT_NANOSECONDS && e->sample_period)
		return e->sample_period;
	return 1000000;
}

int firefox_write(const struct profile *p, const struct write_options *o, FILE *out)
{
	struct ff_writer w;
	int err = 0;

	memset(&w, 0, sizeof(w));
	w.p = p;
	w.o = o;
	w.out = out;
	profview_init(&w.v, p, o->event, o->weight_period);
	if (w.v.has_first)
		w.origin = w.v.first_time;
	w.interval_ns = interval_of(p, w.v.has_first ? w.v.first_event : -1);
	{
		uint64_t seen = 0; /* events with samples (a mask of the first 64) */

		for (size_t i = 0; i < p->nsamples; i++)
			if (ff_sample_wanted(&w, &p->samples[i]) && p->samples[i].event < 64)
				seen |= 1ull << p->samples[i].event;
		w.nevents_written = __builtin_popcountll(seen);
		w.events_written = seen;
	}
	for (size_t i = 0; i < w.v.nthreads; i++) {
		const struct pc_thread *t = &w.v.threads[i];
		uint64_t end = p->has_time ? t->last_time + t->last_period - w.origin
					   : t->n * w.interval_ns;

		if (end > w.end_ns)
			w.end_ns = end;
	}
	w.pstr = xcalloc(strtab_count(&p->strings) + 1, sizeof(*w.pstr));
	w.frame_row = xcalloc(p->nframes ? p->nframes : 1, sizeof(*w.frame_row));
	w.func_row = xcalloc(w.v.nfuncs ? w.v.nfuncs : 1, sizeof(*w.func_row));
	w.lib_of_mapping = xmalloc((p->nmappings ? p->nmappings : 1) * sizeof(*w.lib_of_mapping));
	for (size_t i = 0; i < p->nmappings; i++)
		w.lib_of_mapping[i] = -2;
	u64map_init(&w.state_stacks);
	u64map_init(&w.frame_rows);
	u64map_init(&w.resources);
	u64map_init(&w.sources);
	u64map_init(&w.libs);
	u64map_init(&w.nsyms);
	ff_build_tables(&w);

	fputc('{', out);
	write_meta(&w);
	write_libs(&w);
	err = write_threads(&w); /* before the shared tables: its marker names are strings */
	ff_write_shared(&w);
	fputs("\"pages\":[],\"profilerOverhead\":[],\"counters\":[]}\n", out);

	if (!err)
		err = profview_error(&w.v);
	profview_release(&w.v);
	ff_release_tables(&w);
	if (err) {
		errno = err;
		return -1;
	}
	if (ferror(out)) {
		if (!errno)
			errno = EIO;
		return -1;
	}
	return 0;
}
