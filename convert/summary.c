/* summary: what a conversion saw, counted, and the closing lines that say so. */
#include "convert/summary.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "convert/lbr.h"

/* Samples with frames without a symbol: per dso, in the kernel, in no mapping, and
 * in anonymous memory per process (JIT code whose dump or map was not found). */
struct unsym {
	uint64_t *dso;
	uint64_t kernel, nomap;
	struct u64map anon_index;  /* pid + 1 -> anon index + 1 */
	uint32_t *anon_pid;
	uint64_t *anon;
	size_t nanon, anon_cap, nanon_pid, anon_pid_cap;
	/* of a process whose dump or map was read: why it names no code there, per
	 * enum jitcode_absence, for each of anon */
	uint64_t (*why)[3];
	size_t nwhy, why_cap;
};

static void count_anon(struct unsym *u, uint32_t pid, uint64_t n)
{
	uint32_t *v = u64map_get(&u->anon_index, (uint64_t)pid + 1);

	if (v) {
		u->anon[*v - 1] += n;
		return;
	}
	VEC_PUSH(u->anon_pid, u->nanon_pid, u->anon_pid_cap, pid);
	VEC_PUSH(u->anon, u->nanon, u->anon_cap, n);
	u64map_put(&u->anon_index, (uint64_t)pid + 1, (uint32_t)u->nanon);
}

/* After count_anon: a sample in anonymous code of a process whose JIT file was read,
 * with why that file names no code at `addr` at the sample's time (an aggregate's
 * time is its first sample's). */
static void count_why(const struct summary_input *in, struct unsym *u,
		      const struct pc_sample *s, uint64_t addr)
{
	int t = in->jits ? jit_procs_find(in->jits, s->pid) : -1;
	size_t k;

	if (t < 0)
		return;
	k = *u64map_get(&u->anon_index, (uint64_t)s->pid + 1) - 1;
	if (k >= u->nwhy) {
		grow_array((void **)&u->why, &u->why_cap, k + 1, sizeof(*u->why));
		memset(u->why + u->nwhy, 0, (k + 1 - u->nwhy) * sizeof(*u->why));
		u->nwhy = k + 1;
	}
	u->why[k][jitcode_why_absent(jit_procs_table(in->jits, t), s->time, addr)] += s->count;
}

/* What a process's JIT file says of its samples in anonymous code it names nothing
 * at: "jit-42.dump names no code there at their time: ..." */
static void describe_absent(const struct summary_input *in, uint32_t pid, const uint64_t *why,
			    char *buf, size_t size)
{
	static const char *const what[3] = {
		"where it names no code then",
		"before its first code load (code made before the agent or runtime began to "
		"write it)",
		"in code loaded there later (its load written after the code began to run, as "
		"HotSpot does)",
	};
	size_t n = (size_t)snprintf(buf, size, "%s names no code there at their time",
				    jit_procs_module(in->jits, jit_procs_find(in->jits, pid)));
	const char *sep = ": ";

	for (int k = 2; k >= 0; k--) {
		if (!why[k] || n >= size)
			continue;
		n += (size_t)snprintf(buf + n, size - n, "%s%" PRIu64 " %s", sep, why[k], what[k]);
		sep = ", ";
	}
}

static void count_unsymbolized(const struct summary_input *in, struct convert_stats *st,
			       struct unsym *u)
{
	const struct profile *p = in->p;
	size_t ndsos = replay_ndsos(in->rp);
	uint64_t *mark = xcalloc(ndsos + 2, sizeof(*mark));
	uint8_t *anon = xcalloc(ndsos + 1, 1);

	u->dso = xcalloc(ndsos ? ndsos : 1, sizeof(*u->dso));
	for (size_t i = 0; i < ndsos; i++) {
		const struct replay_dso *x = replay_dso_get(in->rp, (uint32_t)i);

		anon[i] = !x->kernel && x->anonymous;
	}
	for (size_t i = 0; i < p->nsamples; i++) {
		uint64_t n = p->samples[i].count;
		int any = 0;

		for (uint32_t node = p->samples[i].stack; node; node = p->nodes[node].parent) {
			const struct pc_frame *f = &p->frames[p->nodes[node].frame];
			size_t slot;
			uint32_t dso;

			if (f->symbolized)
				continue;
			any = 1;
			dso = resolver_mapping_dso(in->res, f->mapping);
			if (f->kind == FRAME_KERNEL)
				slot = ndsos;
			else if (dso == UINT32_MAX)
				slot = ndsos + 1;
			else
				slot = dso;
			if (mark[slot] == i + 1)
				continue;
			mark[slot] = i + 1;
			if (slot == ndsos)
				u->kernel += n;
			else if (slot == ndsos + 1)
				u->nomap += n;
			else if (anon[slot]) {
				count_anon(u, p->samples[i].pid, n);
				count_why(in, u, &p->samples[i], f->addr);
			}
			else
				u->dso[slot] += n;
		}
		st->samples_unsymbolized += any ? n : 0;
	}
	free(mark);
	free(anon);
}

/*
 * Files used that could not be checked against the recording (no build id: issue 22
 * item 4): the samples with a frame in each, said so that a rebuilt file's names are
 * not taken on trust.
 */
static void report_unverified(const struct summary_input *in, struct diag *d)
{
	const struct profile *p = in->p;
	size_t ndsos = replay_ndsos(in->rp), n = 0;
	uint64_t *count, *mark, total = 0;
	uint8_t *unverified = xcalloc(ndsos + 1, 1);

	for (size_t i = 0; i < ndsos; i++)
		n += unverified[i] = symbolizer_unverified(in->sym, (uint32_t)i, NULL) != NULL;
	if (!n) {
		free(unverified);
		return;
	}
	count = xcalloc(ndsos, sizeof(*count));
	mark = xcalloc(ndsos, sizeof(*mark));
	for (size_t i = 0; i < p->nsamples; i++) {
		int any = 0;

		for (uint32_t node = p->samples[i].stack; node; node = p->nodes[node].parent) {
			uint32_t dso = resolver_mapping_dso(in->res,
							    p->frames[p->nodes[node].frame].mapping);

			if (dso < ndsos && unverified[dso] && mark[dso] != i + 1) {
				mark[dso] = i + 1;
				count[dso] += p->samples[i].count;
				any = 1;
			}
		}
		total += any ? p->samples[i].count : 0;
	}
	diag_note(d, "%" PRIu64 " samples have frames from files that could not be checked "
		  "against the recording:", total);
	for (size_t i = 0; i < ndsos; i++) {
		const char *file, *why;

		if (!unverified[i])
			continue;
		why = symbolizer_unverified(in->sym, (uint32_t)i, &file);
		diag_note(d, "  %8" PRIu64 " in %s: %s (%s)", count[i],
			  profile_text(p, replay_dso_get(in->rp, (uint32_t)i)->path), file, why);
	}
	free(count);
	free(mark);
	free(unverified);
}

static int dso_cmp_count(const void *a, const void *b, void *arg)
{
	const uint64_t *counts = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (counts[y] > counts[x]) - (counts[y] < counts[x]);
}

/* Samples' distinct stacks: distinct leaf nodes (the tree's inner nodes are no stack). */
static size_t distinct_stacks(const struct profile *p)
{
	uint8_t *seen = xcalloc(p->nnodes / 8 + 1, 1);
	size_t n = 0;

	for (size_t i = 0; i < p->nsamples; i++) {
		uint32_t s = p->samples[i].stack;

		if (!(seen[s / 8] & (1u << (s % 8)))) {
			seen[s / 8] |= (uint8_t)(1u << (s % 8));
			n++;
		}
	}
	free(seen);
	return n;
}

/* Where a thread's stack begins: a whole stack reaches one of these. */
static int is_thread_start(const char *f)
{
	static const char *const starts[] = {
		"_start", "__libc_start_main", "__libc_start_call_main", "start_thread", "clone",
		"clone3", "_dl_start", "_dl_start_user", "thread_start", NULL,
	};

	for (size_t i = 0; starts[i]; i++)
		if (strcmp(f, starts[i]) == 0)
			return 1;
	/* Go's goroutines and threads */
	return strncmp(f, "runtime.goexit", 14) == 0 || strncmp(f, "runtime.mstart", 14) == 0 ||
	       strncmp(f, "runtime.rt0_go", 14) == 0;
}

/*
 * A frame-pointer recording whose user stacks mostly stop before their thread's start
 * (code built without frame pointers: libc, most distributions' packages): say that
 * --call-graph dwarf would give whole stacks.
 */
static void hint_dwarf(const struct summary_input *in, struct diag *d)
{
	const struct profile *p = in->p;
	uint64_t user = 0, early = 0;

	for (size_t i = 0; i < p->nsamples; i++) {
		uint32_t n = p->samples[i].stack;
		const struct pc_frame *root;

		if (!n)
			continue;
		while (p->nodes[n].parent)
			n = p->nodes[n].parent;
		root = &p->frames[p->nodes[n].frame];
		if (root->kind == FRAME_KERNEL)
			continue; /* a kernel thread's */
		user += p->samples[i].count;
		if (!is_thread_start(profile_text(p, root->func)))
			early += p->samples[i].count;
	}
	if (user && early * 2 > user)
		diag_note(d, "%" PRIu64 " of %" PRIu64 " user stacks (%.1f%%) stop before their "
			  "thread's start, in code without frame pointers: record with "
			  "--call-graph dwarf for whole stacks", early, user,
			  100.0 * (double)early / (double)user);
}

/*
 * Objects whose symbols are their exported ones only (.dynsym: a stripped library
 * without its debug file) where samples fall: their own functions show as the exported
 * one before them. Say so, and the package that would name them (libc6-dbg for libc).
 */
static void hint_debug_symbols(const struct summary_input *in, struct diag *d)
{
	const struct profile *p = in->p;
	size_t ndsos = replay_ndsos(in->rp);
	uint64_t *leaves = xcalloc(ndsos + 1, sizeof(*leaves)), total = 0;

	for (size_t i = 0; i < p->nsamples; i++) {
		uint32_t node = p->samples[i].stack, dso;

		if (!node)
			continue;
		dso = resolver_mapping_dso(in->res, p->frames[p->nodes[node].frame].mapping);
		if (dso < ndsos)
			leaves[dso] += p->samples[i].count;
		total += p->samples[i].count;
	}
	for (size_t i = 0; i < ndsos; i++) {
		const struct replay_dso *x = replay_dso_get(in->rp, (uint32_t)i);
		const char *path = profile_text(p, x->path), *base = strrchr(path, '/');
		struct sym_location *loc;

		if (!leaves[i] || leaves[i] * 100 < total || x->kernel || x->anonymous)
			continue;
		loc = xmalloc(sizeof(*loc));
		symbolizer_locate_object(in->sym, (uint32_t)i, path, x->build_id, x->build_id_size,
					 loc);
		base = base ? base + 1 : path;
		if (loc->symbols && strstr(loc->symbols, ".dynsym"))
			diag_note(d, "%s has its exported symbols only (.dynsym): %" PRIu64 " samples "
				  "in it may show a function of its own as the exported one before "
				  "it; its debug symbols would name them (%s)", path, leaves[i],
				  strncmp(base, "libc.so.6", 9) == 0
				  ? "Debian, Ubuntu: apt-get install libc6-dbg"
				  : "its package's -dbgsym or -dbg package, or debuginfod");
		free(loc);
	}
	free(leaves);
}

void summary_report(const struct summary_input *in, struct convert_stats *st, struct diag *d)
{
	const struct perf_reader_stats *rs = perf_reader_stats(in->r);
	size_t ndsos = replay_ndsos(in->rp);
	struct unsym u;
	uint32_t *order;
	size_t n = 0, nevents = 0;
	int graphs = 0, fp_only = 1;

	/* the events recorded, but perf's dummy one (side-band records, no samples);
	 * whether any samples carry call graphs */
	for (size_t i = 0; i < perf_reader_nevents(in->r); i++) {
		const struct perf_event_desc *e = perf_reader_event(in->r, i);

		if (e->type == PERF_TYPE_SOFTWARE && e->config == PERF_COUNT_SW_DUMMY)
			continue;
		nevents++;
		graphs |= (e->sample_type & (PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_STACK_USER)) != 0;
		/* LBR stacks stop at the hardware's depth, not for want of frame pointers:
		 * convert/lbr.c says so */
		fp_only &= !(e->sample_type & PERF_SAMPLE_STACK_USER) && !lbr_event(e);
	}
	memset(&u, 0, sizeof(u));
	u64map_init(&u.anon_index);
	st->lost_events = rs->lost_events;
	st->lost_samples = rs->lost_samples;
	st->skipped_records = rs->skipped_bad + rs->skipped_unknown;
	if (in->quiet)
		return;
	st->stacks = distinct_stacks(in->p);
	diag_note(d, "%" PRIu64 " samples in %" PRIu64 " distinct stacks (by address), %zu event%s%s",
		  st->samples, st->stacks, nevents, nevents == 1 ? "" : "s",
		  st->samples_filtered ? " (others filtered out)" : "");
	if (st->samples && !graphs)
		diag_note(d, "the recording has no call graphs (perf record without -g): each "
			  "stack is its sampled address alone; record with -g, or --call-graph "
			  "dwarf for code without frame pointers");
	else if (st->samples && fp_only)
		hint_dwarf(in, d);
	if (rs->lost_events || rs->lost_samples)
		diag_note(d, "perf lost %" PRIu64 " events and %" PRIu64 " samples while recording",
			  rs->lost_events, rs->lost_samples);
	if (rs->skipped_bad && rs->resync_bytes)
		diag_note(d, "%" PRIu64 " damaged records skipped (%" PRIu64 " bytes passed over "
			  "to the next plausible record)", rs->skipped_bad, rs->resync_bytes);
	else if (rs->skipped_bad)
		diag_note(d, "%" PRIu64 " damaged records skipped", rs->skipped_bad);
	if (rs->skipped_unknown)
		diag_note(d, "%" PRIu64 " records of unknown type skipped", rs->skipped_unknown);
	if (in->no_symbols)
		return;
	report_unverified(in, d);
	hint_debug_symbols(in, d);
	count_unsymbolized(in, st, &u);
	if (!st->samples_unsymbolized)
		goto out;
	diag_note(d, "%" PRIu64 " samples have frames with no symbol:", st->samples_unsymbolized);
	order = xmalloc((ndsos ? ndsos : 1) * sizeof(*order));
	for (size_t i = 0; i < ndsos; i++)
		if (u.dso[i])
			order[n++] = (uint32_t)i;
	qsort_r(order, n, sizeof(*order), dso_cmp_count, u.dso);
	for (size_t i = 0; i < n && i < 10; i++) {
		const struct replay_dso *x = replay_dso_get(in->rp, order[i]);

		diag_note(d, "  %8" PRIu64 " in %s (%s)", u.dso[order[i]],
			  profile_text(in->p, x->path),
			  sym_obj_problem_str(symbolizer_problem(in->sym, order[i])));
	}
	if (n > 10)
		diag_note(d, "  ... and %zu more files", n - 10);
	if (u.kernel)
		diag_note(d, "  %8" PRIu64 " in the kernel (%s)", u.kernel,
			  symbolizer_kernel_source(in->sym) ? symbolizer_kernel_source(in->sym)
							    : "no kernel symbols");
	for (size_t i = 0; i < u.nanon && i < 10; i++) {
		char where[1024];

		if (i < u.nwhy && (u.why[i][0] || u.why[i][1] || u.why[i][2]))
			describe_absent(in, u.anon_pid[i], u.why[i], where, sizeof(where));
		else
			jit_procs_describe_search(in->jits, u.anon_pid[i], where, sizeof(where));
		diag_note(d, "  %8" PRIu64 " in anonymous (JIT) code of pid %u (%s): %s",
			  u.anon[i], u.anon_pid[i],
			  profile_text(in->p, replay_thread_name(in->rp, u.anon_pid[i], u.anon_pid[i],
								  REPLAY_FOREVER - 1)),
			  where);
	}
	if (u.nanon > 10)
		diag_note(d, "  ... and %zu more processes with anonymous code", u.nanon - 10);
	if (u.nomap)
		diag_note(d, "  %8" PRIu64 " at addresses in no recorded mapping", u.nomap);
	free(order);
out:
	free(u.dso);
	free(u.anon);
	free(u.anon_pid);
	free(u.why);
	u64map_release(&u.anon_index);
}
