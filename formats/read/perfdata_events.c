/* perfdata_events: the events of a recording (perf_event_attr), the sample ids that
 * select them, and their names (given by the recording or made as perf makes them). */
#include "formats/read/perfdata_internal.h"

#include "common/bytes.h"
#include "common/diag.h"
#include "formats/read/tracefmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int attr_flag(const uint8_t *bits, int file_be, unsigned k)
{
	/* A big-endian compiler allocates bitfields from the most significant bit. */
	if (file_be)
		return (bits[k / 8] >> (7 - k % 8)) & 1;
	return (bits[k / 8] >> (k % 8)) & 1;
}

static const char *const hw_names[] = {
	"cycles", "instructions", "cache-references", "cache-misses", "branches",
	"branch-misses", "bus-cycles", "stalled-cycles-frontend", "stalled-cycles-backend",
	"ref-cycles",
};

static const char *const sw_names[] = {
	"cpu-clock", "task-clock", "page-faults", "context-switches", "cpu-migrations",
	"minor-faults", "major-faults", "alignment-faults", "emulation-faults", "dummy",
	"bpf-output", "cgroup-switches",
};

/*
 * A name as perf would print it for an event the recording does not name: the
 * generic name plus the modifiers of evsel__add_modifiers().
 */
static char *synth_name(uint32_t type, uint64_t config, const uint8_t *bits, int be,
			unsigned precise)
{
	char base[64], mods[16], out[96];
	size_t m = 0;
	int exclude_guest_default = 0;
	int ek = attr_flag(bits, be, PERF_ATTR_BIT_EXCLUDE_KERNEL);
	int eu = attr_flag(bits, be, PERF_ATTR_BIT_EXCLUDE_USER);
	int eh = attr_flag(bits, be, PERF_ATTR_BIT_EXCLUDE_HV);
	int ehost = attr_flag(bits, be, PERF_ATTR_BIT_EXCLUDE_HOST);
	int eguest = attr_flag(bits, be, PERF_ATTR_BIT_EXCLUDE_GUEST);

	if (type == PERF_TYPE_HARDWARE && config < sizeof(hw_names) / sizeof(hw_names[0]))
		snprintf(base, sizeof(base), "%s", hw_names[config]);
	else if (type == PERF_TYPE_SOFTWARE && config < sizeof(sw_names) / sizeof(sw_names[0]))
		snprintf(base, sizeof(base), "%s", sw_names[config]);
	else if (type == PERF_TYPE_RAW)
		snprintf(base, sizeof(base), "r%llx", (unsigned long long)config);
	else
		snprintf(base, sizeof(base), "type%u/config 0x%llx", type,
			 (unsigned long long)config);

	if (ek || eu || eh) {
		if (!ek)
			mods[m++] = 'k';
		if (!eu)
			mods[m++] = 'u';
		if (!eh)
			mods[m++] = 'h';
		exclude_guest_default = 1;
	}
	/* perf 6.1's evsel__add_modifiers: a precise event, like one that leaves out a
	 * privilege level, excludes the guest by default, and says H when it does */
	if (precise > 0)
		exclude_guest_default = 1;
	while (precise-- > 0 && m < 8)
		mods[m++] = 'p';
	if (ehost || eguest == exclude_guest_default) {
		if (!ehost)
			mods[m++] = 'H';
		if (!eguest)
			mods[m++] = 'G';
	}
	mods[m] = 0;
	snprintf(out, sizeof(out), "%s%s%s", base, m ? ":" : "", mods);
	return strdup(out);
}

/*
 * File format (perf_event_attr, as many bytes as its `size` says):
 *	u32 type; u32 size; u64 config; u64 sample_period; u64 sample_type;
 *	u64 read_format; u64 flag bits; u32 wakeup; u32 bp_type; u64 config1;
 *	u64 config2; u64 branch_sample_type; u64 sample_regs_user;
 *	u32 sample_stack_user; s32 clockid; u64 sample_regs_intr; ...
 * Fields beyond `size` read as 0. The flag word is a C bitfield: not a number.
 */
int pd_add_event(struct perf_reader *r, const uint8_t *p, uint32_t sz)
{
	uint8_t a[160];
	struct pd_event *n, *e;
	int sw = r->swapped, be = r->swapped ^ host_big_endian();
	const uint8_t *bits = a + 40;

	n = realloc(r->ev, (r->nev + 1) * sizeof(*n));
	if (!n)
		return -1;
	r->ev = n;
	e = &r->ev[r->nev];
	memset(e, 0, sizeof(*e));
	memset(a, 0, sizeof(a));
	memcpy(a, p, sz < sizeof(a) ? sz : sizeof(a));
	e->d.type = ld32(a, sw);
	e->d.config = ld64(a + 8, sw);
	e->d.sample_period = ld64(a + 16, sw);
	e->d.sample_type = ld64(a + 24, sw);
	e->d.read_format = ld64(a + 32, sw);
	e->d.branch_sample_type = ld64(a + 72, sw);
	e->d.sample_regs_user = ld64(a + 80, sw);
	e->d.sample_stack_user = ld32(a + 88, sw);
	e->d.clockid = ld32(a + 92, sw);
	e->d.sample_regs_intr = ld64(a + 96, sw);
	e->d.freq = attr_flag(bits, be, PERF_ATTR_BIT_FREQ);
	e->d.sample_id_all = attr_flag(bits, be, PERF_ATTR_BIT_SAMPLE_ID_ALL);
	e->d.use_clockid = attr_flag(bits, be, PERF_ATTR_BIT_USE_CLOCKID);
	e->d.exclude_kernel = attr_flag(bits, be, PERF_ATTR_BIT_EXCLUDE_KERNEL);
	e->d.exclude_user = attr_flag(bits, be, PERF_ATTR_BIT_EXCLUDE_USER);
	e->d.context_switch = attr_flag(bits, be, PERF_ATTR_BIT_CONTEXT_SWITCH);
	e->synth = synth_name(e->d.type, e->d.config, bits, be,
			      (unsigned)(attr_flag(bits, be, PERF_ATTR_BIT_PRECISE_IP) |
					 attr_flag(bits, be, PERF_ATTR_BIT_PRECISE_IP + 1) << 1));
	r->nev++;
	if (!e->synth)
		return -1;
	return 0;
}

int pd_add_ids(struct perf_event_desc *e, const uint8_t *p, size_t n, int sw)
{
	size_t i;

	if (!n)
		return 0;
	e->ids = malloc(n * sizeof(*e->ids));
	if (!e->ids)
		return -1;
	for (i = 0; i < n; i++)
		e->ids[i] = ld64(p + 8 * i, sw);
	e->nids = n;
	return 0;
}

static int cmp_id(const void *a, const void *b)
{
	const struct id_ent *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

int pd_find_id(const struct perf_reader *r, uint64_t id)
{
	size_t lo = 0, hi = r->nids;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->ids[mid].id == id)
			return (int)r->ids[mid].ev;
		if (r->ids[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* Where perf's __evsel__calc_id_pos / __evsel__calc_is_pos say the id is. */
static int calc_id_pos(uint64_t st)
{
	int idx = 0;

	if (st & PERF_SAMPLE_IDENTIFIER)
		return 0;
	if (!(st & PERF_SAMPLE_ID))
		return -1;
	idx += !!(st & PERF_SAMPLE_IP) + !!(st & PERF_SAMPLE_TID) + !!(st & PERF_SAMPLE_TIME) + !!(st & PERF_SAMPLE_ADDR);
	return idx;
}

static int calc_is_pos(uint64_t st)
{
	int idx = 1;

	if (st & PERF_SAMPLE_IDENTIFIER)
		return 1;
	if (!(st & PERF_SAMPLE_ID))
		return -1;
	idx += !!(st & PERF_SAMPLE_CPU) + !!(st & PERF_SAMPLE_STREAM_ID);
	return idx;
}

void pd_set_event_name(struct perf_reader *r, int ev, const char *name, size_t max)
{
	char *s;

	if (ev < 0 || (size_t)ev >= r->nev || r->ev[ev].d.name)
		return;
	s = strndup(name, max);
	if (s && !*s) {
		free(s);
		return;
	}
	r->ev[ev].d.name = s;
}

/* After all attrs are in: index the ids, check that they agree, name every event. */
int pd_finish_events(struct perf_reader *r)
{
	size_t i, j, n = 0;

	if (!r->nev) {
		diag_error(r->d, r->path, DIAG_NO_OFFSET, "the recording holds no events");
		return -1;
	}
	for (i = 0; i < r->nev; i++)
		n += r->ev[i].d.nids;
	if (n) {
		r->ids = malloc(n * sizeof(*r->ids));
		if (!r->ids)
			goto nomem;
	}
	for (i = 0; i < r->nev; i++)
		for (j = 0; j < r->ev[i].d.nids; j++) {
			r->ids[r->nids].id = r->ev[i].d.ids[j];
			r->ids[r->nids++].ev = i;
		}
	if (r->nids)
		qsort(r->ids, r->nids, sizeof(*r->ids), cmp_id);

	r->sample_id_all = r->ev[0].d.sample_id_all;
	r->id_pos = calc_id_pos(r->ev[0].d.sample_type);
	r->is_pos = calc_is_pos(r->ev[0].d.sample_type);
	for (i = 1; i < r->nev; i++) {
		const struct perf_event_desc *e = &r->ev[i].d;

		if (calc_id_pos(e->sample_type) != r->id_pos ||
		    calc_is_pos(e->sample_type) != r->is_pos) {
			diag_error(r->d, r->path, DIAG_NO_OFFSET,
				   "events 0 and %zu disagree on where the sample id is "
				   "(sample_type 0x%llx and 0x%llx)", i,
				   (unsigned long long)r->ev[0].d.sample_type,
				   (unsigned long long)e->sample_type);
			return -1;
		}
		if (e->sample_id_all != (unsigned)r->sample_id_all) {
			diag_error(r->d, r->path, DIAG_NO_OFFSET,
				   "events 0 and %zu disagree on sample_id_all", i);
			return -1;
		}
	}
	r->ready = 1;
	return 0;
nomem:
	diag_error(r->d, r->path, DIAG_NO_OFFSET, "out of memory");
	return -1;
}

/* A tracepoint's "system:name" from the tracing data's format files, whose ID is
 * the event's config: how perf names the tracepoints of a pipe, which has no
 * EVENT_DESC (uprobes and kprobes made with perf probe too). The data is parsed
 * quietly: a damaged one is said when the session reads its fields. */
static char *tracing_name(struct perf_reader *r, struct tracefmt **tf, int *tried, uint64_t config)
{
	const struct tracefmt_event *te;
	char buf[256];

	if (!*tried) {
		struct diag quiet;

		*tried = 1;
		diag_init(&quiet);
		quiet.quiet = 1;
		if (r->tracing)
			*tf = tracefmt_parse(r->tracing, r->tracing_len, r->path, &quiet);
		diag_release(&quiet);
	}
	te = *tf ? tracefmt_find(*tf, config) : NULL;
	if (!te || !te->name || !te->name[0])
		return NULL;
	snprintf(buf, sizeof(buf), "%s:%s", te->system && te->system[0] ? te->system : "?",
		 te->name);
	return strdup(buf);
}

/*
 * The name simpleperf gives event `e` in META_INFO's event_type_info, or NULL: lines
 * "NAME,TYPE,CONFIG" (decimal), e.g. "cpu-clock,1,0\nsched:sched_switch,2,91". A
 * tracepoint's name is whole; another's gets the modifiers perf would show (from the
 * synthesized name: "cpu-clock:u").
 */
static char *meta_name(const struct perf_reader *r, const struct pd_event *e)
{
	const char *info = sp_info_meta(&r->sp, "event_type_info"), *line, *end;

	for (line = info; line && *line; line = *end ? end + 1 : end) {
		unsigned long long type, config;
		const char *c1, *c2;
		char *stop, out[192];
		const char *mods;
		int n;

		end = strchr(line, '\n');
		if (!end)
			end = line + strlen(line);
		c2 = memrchr(line, ',', (size_t)(end - line));
		c1 = c2 ? memrchr(line, ',', (size_t)(c2 - line)) : NULL;
		if (!c1 || c1 == line || c1 - line > 128)
			continue;
		type = strtoull(c1 + 1, &stop, 10);
		if (stop != c2)
			continue;
		config = strtoull(c2 + 1, &stop, 10);
		if (stop != end || type != e->d.type || config != e->d.config)
			continue;
		mods = e->d.type == PERF_TYPE_TRACEPOINT || !e->synth ? NULL : strchr(e->synth, ':');
		n = snprintf(out, sizeof(out), "%.*s%s", (int)(c1 - line), line, mods ? mods : "");
		return n > 0 ? strdup(out) : NULL;
	}
	return NULL;
}

/* Events the recording does not name get the name of their type in the recording
 * (old perf's event types, simpleperf's META_INFO, the tracing data), else perf's
 * generic names. */
void pd_name_events(struct perf_reader *r)
{
	struct tracefmt *tf = NULL;
	int tried = 0;
	size_t i, j;

	for (i = 0; i < r->nev; i++) {
		struct pd_event *e = &r->ev[i];

		if (!e->d.name && r->sp.nmeta)
			e->d.name = meta_name(r, e);

		if (!e->d.name && e->d.type == PERF_TYPE_TRACEPOINT)
			for (j = 0; j < r->nevtypes; j++)
				if (r->evtypes[j].config == e->d.config && r->evtypes[j].name[0]) {
					e->d.name = strdup(r->evtypes[j].name);
					break;
				}
		if (!e->d.name && e->d.type == PERF_TYPE_TRACEPOINT)
			e->d.name = tracing_name(r, &tf, &tried, e->d.config);
		if (!e->d.name) {
			e->d.name = e->synth;
			e->synth = NULL;
		}
	}
	tracefmt_free(tf);
}

