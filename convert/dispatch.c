/* dispatch: pass 1, the records that are not samples into process state. */
#include "convert/dispatch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is_kernel_name(const char *name)
{
	return starts_with(name, "[kernel.kallsyms]") || starts_with(name, "[guest.kernel");
}

/* "jit-PID.dump": 1 and the pid. */
static int jit_dump_name(const char *name, uint32_t *pid)
{
	unsigned int v;
	int end = 0;

	if (sscanf(name, "jit-%u.dump%n", &v, &end) != 1 || end == 0 || name[end])
		return 0;
	*pid = v;
	return 1;
}

static void on_mmap(struct dispatch *d, const struct perf_record *rec, uint64_t time)
{
	const struct perf_mmap_rec *m = &rec->u.mmap;
	const uint8_t *bid = NULL;
	size_t bidlen = 0;
	int kernel = m->pid == UINT32_MAX || rec->cpumode == PERF_RECORD_MISC_KERNEL;
	const char *path = m->filename;
	int kernel_image; /* the kernel's own map, not a module's */

	if (!kernel) {
		uint32_t pid;

		jit_procs_seen(d->jits, m->pid);
		/* a process maps its own dump (the marker perf looks for), named by its
		 * pid in its pid namespace: in a container not the pid recorded */
		if (jit_dump_name(path_base(path), &pid)) {
			struct jit_mapping jm = { 0, 0, 0, time };

			if (rec->type == PERF_RECORD_MMAP2 && !m->has_build_id) {
				jm.maj = m->maj;
				jm.min = m->min;
				jm.ino = m->ino;
			}
			d->jit_dumps = 1;
			jit_procs_expect(d->jits, m->pid, path, &jm);
			jit_procs_ns_pid(d->jits, m->pid, pid);
		}
	}
	if (!m->executable)
		return;
	kernel_image = kernel && is_kernel_name(path);
	if (kernel_image)
		path = "[kernel.kallsyms]";
	if (m->has_build_id) {
		bid = m->build_id;
		bidlen = m->build_id_size;
	} else {
		const struct perf_build_id *b = recording_build_id(perf_reader_header(d->r), path);

		if (b) {
			bid = b->id;
			bidlen = b->id_size;
		}
	}
	if (!bid && !kernel && rec->type == PERF_RECORD_MMAP2 && m->ino) {
		/* no build id: the device and inode are all that can tell the file */
		struct sym_file_id fid = { m->maj, m->min, m->ino, m->ino_generation,
					   recording_made_here(d->r) };
		uint32_t dso = replay_dso_file(d->rp, path, NULL, 0, kernel, &fid);

		if (d->sym)
			symbolizer_object_file_id(d->sym, dso, &fid);
		replay_mmap(d->rp, time, m->pid, m->start, m->len, m->pgoff, dso);
		return;
	}
	if (kernel_image && m->pgoff > m->start && m->pgoff - m->start < m->len) {
		/* perf 3.x wrote the kernel's map from 0 (or from below the kernel) with its
		 * reference symbol's address (_text, _stext) as pgoff: the kernel starts
		 * there, as later perf writes it. Below it, a frame is not the kernel's. */
		uint64_t cut = m->pgoff - m->start;

		replay_mmap(d->rp, time, REPLAY_KERNEL_PID, m->pgoff, m->len - cut, m->pgoff,
			    replay_dso(d->rp, path, bid, bidlen, kernel));
		return;
	}
	replay_mmap(d->rp, time, kernel ? REPLAY_KERNEL_PID : m->pid, m->start, m->len, m->pgoff,
		    replay_dso(d->rp, path, bid, bidlen, kernel));
}

/*
 * KSYMBOL: kernel code that kallsyms may not name, or not at the time of a sample
 * (BPF programs loaded and unloaded, trampolines). As perf does, each becomes a
 * kernel mapping named after its symbol for as long as it is registered.
 */
static void on_ksymbol(struct dispatch *d, const struct perf_record *rec, uint64_t time)
{
	const struct perf_ksymbol_rec *k = &rec->u.ksymbol;
	uint32_t dso;

	if (k->flags & PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER) {
		replay_munmap(d->rp, time, REPLAY_KERNEL_PID, k->addr);
		return;
	}
	if (!k->name || !k->name[0] || !k->len)
		return;
	dso = replay_dso(d->rp, k->name, NULL, 0,
			 k->ksym_type == PERF_RECORD_KSYMBOL_TYPE_BPF ? REPLAY_DSO_KSYM_BPF
								       : REPLAY_DSO_KSYM_OTHER);
	replay_mmap(d->rp, time, REPLAY_KERNEL_PID, k->addr, k->len, 0, dso);
}

static void on_time_conv(struct dispatch *d, const struct perf_record *rec, uint64_t time)
{
	(void)time;
	d->time_conv.time_shift = (uint16_t)rec->u.time_conv.time_shift;
	d->time_conv.time_mult = (uint32_t)rec->u.time_conv.time_mult;
	d->time_conv.time_zero = rec->u.time_conv.time_zero;
	d->time_conv.time_cycles = rec->u.time_conv.time_cycles;
	d->time_conv.time_mask = rec->u.time_conv.time_mask;
	d->time_conv.cap_user_time_short = rec->u.time_conv.cap_user_time_short;
	d->have_time_conv = 1;
}

static int ns_task_cmp(const void *a, const void *b)
{
	const struct ns_task *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/*
 * The pids processes had in their own pid namespaces (perf record --namespaces), for
 * the perf maps and dumps they named by them (a container's /tmp/perf-1.map). A pid
 * namespace born during the recording numbers its tasks, threads too, 1, 2, ... in
 * the order they were made (the kernel gives the next free pid, and none is freed
 * before the counter wraps): its first task is 1. A namespace that was there when the
 * recording began (its tasks told at time 0, synthesized) is not counted: its numbers
 * are not known.
 */
static void ns_pids(struct dispatch *d, struct ns_task *v, size_t n)
{
	struct ns_count {
		uint64_t dev, ino;
		uint32_t next;   /* 0: numbers unknown */
	} *ns = NULL;
	size_t nns = 0, cap = 0;
	struct u64map told;  /* tid + 1 -> its namespace's index + 1 */

	if (!n)
		return;
	u64map_init(&told);
	qsort(v, n, sizeof(*v), ns_task_cmp);
	for (size_t i = 0; i < n; i++) {
		size_t k;
		uint32_t *was;

		for (k = 0; k < nns && (ns[k].dev != v[i].dev || ns[k].ino != v[i].ino); k++)
			;
		if (k == nns) {
			struct ns_count c = { v[i].dev, v[i].ino, v[i].time ? 1 : 0 };

			VEC_PUSH(ns, nns, cap, c);
		}
		/* a task told again (an unshare of its own) keeps its number */
		was = u64map_get(&told, (uint64_t)v[i].tid + 1);
		if (was && *was == k + 1)
			continue;
		u64map_put(&told, (uint64_t)v[i].tid + 1, (uint32_t)k + 1);
		if (ns[k].next) {
			if (v[i].tid == v[i].pid)
				jit_procs_ns_pid(d->jits, v[i].pid, ns[k].next);
			ns[k].next++;
		}
	}
	u64map_release(&told);
	free(ns);
}

static void on_comm(struct dispatch *d, const struct perf_record *rec, uint64_t time)
{
	const struct perf_comm_rec *c = &rec->u.comm;

	replay_comm(d->rp, time, c->pid, c->tid, c->comm, c->exec);
	jit_procs_seen(d->jits, c->pid);
	if (c->pid == c->tid)
		jit_procs_named(d->jits, c->pid, c->comm);
	if (c->exec && c->pid == c->tid)
		jit_procs_execed(d->jits, c->pid);
}

static void on_fork(struct dispatch *d, const struct perf_record *rec, uint64_t time)
{
	const struct perf_fork_rec *f = &rec->u.fork;

	replay_fork(d->rp, f->time ? f->time : time, f->pid, f->ppid, f->tid, f->ptid);
	if (f->pid == f->tid && !f->synthesized)
		jit_procs_began(d->jits, f->pid);
	if (f->pid == f->tid)
		jit_procs_forked(d->jits, f->pid, f->ppid, f->synthesized);
}

static void on_exit_rec(struct dispatch *d, const struct perf_record *rec, uint64_t time)
{
	replay_exit(d->rp, time, rec->u.fork.pid, rec->u.fork.tid);
	if (rec->u.fork.pid == rec->u.fork.tid)
		jit_procs_exited(d->jits, rec->u.fork.pid);
}

static void on_sample(struct dispatch *d, const struct perf_record *rec, uint64_t time)
{
	(void)time;
	if (d->ra && !readahead_sample(d->ra, rec))
		perf_reader_skip_type(d->r, PERF_RECORD_SAMPLE);
}

static void on_switch(struct dispatch *d, const struct perf_record *rec, uint64_t time)
{
	(void)rec, (void)time;
	d->switch_records = 1;
}

static void on_namespaces(struct dispatch *d, const struct perf_record *rec, uint64_t time)
{
	const struct perf_namespaces_rec *n = &rec->u.namespaces;

	if (n->pid_ns_ino && rec->sid.has_time) {
		struct ns_task k = { time, n->pid_ns_dev, n->pid_ns_ino, n->pid, n->tid };

		VEC_PUSH(d->tasks, d->ntasks, d->tasks_cap, k);
	}
}

/* What pass 1 does with each record type (perf's struct perf_tool, one member a type),
 * indexed as the reader's table is (formats/read/perfdata_types.c); NULL: nothing. */
static void (*const on_record[PERF_RECORD_TYPES])(struct dispatch *, const struct perf_record *,
						   uint64_t) = {
	[PERF_RECORD_MMAP] = on_mmap,
	[PERF_RECORD_MMAP2] = on_mmap,
	[PERF_RECORD_KSYMBOL] = on_ksymbol,
	[PERF_RECORD_COMM] = on_comm,
	[PERF_RECORD_TIME_CONV] = on_time_conv,
	[PERF_RECORD_FORK] = on_fork,
	[PERF_RECORD_SAMPLE] = on_sample,
	[PERF_RECORD_EXIT] = on_exit_rec,
	[PERF_RECORD_SWITCH] = on_switch,
	[PERF_RECORD_SWITCH_CPU_WIDE] = on_switch,
	[PERF_RECORD_NAMESPACES] = on_namespaces,
};

void dispatch_record(struct dispatch *d, const struct perf_record *rec)
{
	uint64_t t = recording_time(d->facts, rec);

	if (d->facts->has_time && rec->sid.has_time && t) {
		if (!d->have_times || t < d->first_time)
			d->first_time = t;
		if (!d->have_times || t > d->last_time)
			d->last_time = t;
		d->have_times = 1;
	}

	/* a record pass 2 may look its process up for (replay_release) */
	if (rec->sid.has_tid)
		replay_note(d->rp, rec->sid.pid, t, rec->index);
	if (rec->type < PERF_RECORD_TYPES && on_record[rec->type])
		on_record[rec->type](d, rec, t);
}

void dispatch_end(struct dispatch *d)
{
	ns_pids(d, d->tasks, d->ntasks);
	free(d->tasks);
	d->tasks = NULL;
	d->ntasks = d->tasks_cap = 0;
}

/* A sample not decoded in pass 1: its process is asked for in pass 2. */
static void on_skipped_sample(void *arg, uint64_t index, const struct perf_sample_id *sid)
{
	struct dispatch *d = arg;

	if (!sid)
		replay_note_unknown(d->rp);
	else if (sid->has_tid)
		replay_note(d->rp, sid->pid,
			    !d->facts->has_time ? index : sid->has_time ? sid->time : 0, index);
}

int dispatch_pass(struct dispatch *d)
{
	struct perf_record rec;
	int ret;

	/* samples are for pass 2: not even decoded here, but for the first ones, which
	 * the symbolizer reads ahead; their pid and time are read, for replay_release */
	perf_reader_on_skipped_sample(d->r, on_skipped_sample, d);
	if (!d->ra)
		perf_reader_skip_type(d->r, PERF_RECORD_SAMPLE);
	while ((ret = perf_reader_next(d->r, &rec)) == 1)
		dispatch_record(d, &rec);
	perf_reader_on_skipped_sample(d->r, NULL, NULL);
	dispatch_end(d);
	return ret;
}
