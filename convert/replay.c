/* replay: processes, threads and their mappings, each over time. */
#include "convert/replay_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/locate.h"

struct replay *replay_new(struct strtab *strings)
{
	struct replay *r = xcalloc(1, sizeof(*r));

	r->strings = strings;
	u64map_init(&r->dso_index);
	u64map_init(&r->proc_index);
	u64map_init(&r->thread_index);
	u64map_init(&r->sofar_index);
	u64map_init(&r->asked_pids);
	u64map_init(&r->asked_tids);
	u64map_init(&r->uses_index);
	return r;
}

static void free_sofar(struct replay *r)
{
	for (size_t i = 0; i < r->nsofar; i++)
		free(r->sofar[i].evs);
	free(r->sofar);
	r->sofar = NULL;
	r->nsofar = r->sofar_cap = 0;
	u64map_release(&r->sofar_index);
}

static struct sofar_proc *sofar_for(struct replay *r, uint32_t pid)
{
	uint32_t *v = u64map_get(&r->sofar_index, (uint64_t)pid + 1);
	struct sofar_proc none = { NULL, 0, 0 };

	if (v)
		return &r->sofar[*v - 1];
	VEC_PUSH(r->sofar, r->nsofar, r->sofar_cap, none);
	u64map_put(&r->sofar_index, (uint64_t)pid + 1, (uint32_t)r->nsofar);
	return &r->sofar[r->nsofar - 1];
}

void replay_free(struct replay *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nprocs; i++) {
		struct replay_proc *p = r->procs[i];

		free(p->maps);
		free(p->maxend);
		free(p->run_first);
		free(p->changes);
		free(p->live);
		free(p->same_prev);
		u64map_release(&p->by_start);
		free(p);
	}
	for (size_t i = 0; i < r->nthreads; i++)
		free(r->threads[i].names);
	free_sofar(r);
	replay_free_uses(r);
	free(r->rel);
	free(r->procs);
	free(r->dirty);
	free(r->threads);
	free(r->evs);
	free(r->dsos);
	u64map_release(&r->dso_index);
	u64map_release(&r->proc_index);
	u64map_release(&r->thread_index);
	u64map_release(&r->asked_pids);
	u64map_release(&r->asked_tids);
	free(r);
}

uint32_t replay_dso(struct replay *r, const char *path, const uint8_t *build_id,
		    size_t build_id_size, int kernel)
{
	return replay_dso_file(r, path, build_id, build_id_size, kernel, NULL);
}

uint32_t replay_dso_file(struct replay *r, const char *path, const uint8_t *build_id,
			 size_t build_id_size, int kernel, const struct sym_file_id *file)
{
	struct replay_dso d;
	uint64_t key;
	uint32_t *v;

	memset(&d, 0, sizeof(d));
	d.path = strtab_intern(r->strings, path);
	if (build_id_size > sizeof(d.build_id))
		build_id_size = sizeof(d.build_id);
	if (build_id_size)
		memcpy(d.build_id, build_id, build_id_size);
	d.build_id_size = (uint8_t)build_id_size;
	d.kernel = (uint8_t)(kernel >= REPLAY_DSO_KERNEL && kernel <= REPLAY_DSO_KSYM_OTHER ?
			     kernel : kernel ? REPLAY_DSO_KERNEL : REPLAY_DSO_USER);
	d.anonymous = map_origin(path) == MAP_NO_FILE;
	if (file && !build_id_size) { /* field by field: the key is hashed with its padding */
		d.file.maj = file->maj;
		d.file.min = file->min;
		d.file.ino = file->ino;
		d.file.generation = file->generation;
		d.file.same_host = file->same_host;
	}
	key = hash_bytes(&d, sizeof(d)) | 1;
	/* linear probing on collision: try successive keys until the dso matches */
	for (;; key = hash_u64(key) | 1) {
		v = u64map_get(&r->dso_index, key);
		if (!v)
			break;
		if (memcmp(&r->dsos[*v], &d, sizeof(d)) == 0)
			return *v;
	}
	VEC_PUSH(r->dsos, r->ndsos, r->dsos_cap, d);
	u64map_put(&r->dso_index, key, (uint32_t)r->ndsos - 1);
	return (uint32_t)r->ndsos - 1;
}

const struct replay_dso *replay_dso_get(const struct replay *r, uint32_t dso)
{
	return dso < r->ndsos ? &r->dsos[dso] : NULL;
}

size_t replay_ndsos(const struct replay *r)
{
	return r->ndsos;
}

static struct rev *add_ev(struct replay *r, int type, uint64_t time)
{
	struct rev e;

	memset(&e, 0, sizeof(e));
	e.type = (uint8_t)type;
	e.time = time;
	e.seq = r->nseq++;
	/* replayed already up to a later time: answers given may have missed it */
	if (r->advanced && time <= r->horizon)
		r->inexact = 1;
	VEC_PUSH(r->evs, r->nevs, r->evs_cap, e);
	return &r->evs[r->nevs - 1];
}

void replay_mmap(struct replay *r, uint64_t time, uint32_t pid, uint64_t start, uint64_t len,
		 uint64_t pgoff, uint32_t dso)
{
	struct rev *e;

	if (!len || start + len < start)
		return;
	e = add_ev(r, EV_MMAP, time);
	e->pid = pid;
	e->start = start;
	e->len = len;
	e->pgoff = pgoff;
	e->arg = dso;
	if (pid != REPLAY_KERNEL_PID && !r->advanced) {
		struct sofar_proc *p = sofar_for(r, pid);
		uint32_t ev = (uint32_t)(r->nevs - 1);

		VEC_PUSH(p->evs, p->n, p->cap, ev);
	}
}

void replay_munmap(struct replay *r, uint64_t time, uint32_t pid, uint64_t start)
{
	struct rev *e = add_ev(r, EV_MUNMAP, time);

	e->pid = pid;
	e->start = start;
}

void replay_comm(struct replay *r, uint64_t time, uint32_t pid, uint32_t tid, const char *comm,
		 int exec)
{
	struct rev *e = add_ev(r, EV_COMM, time);

	e->pid = pid;
	e->tid = tid;
	e->arg = strtab_intern(r->strings, comm);
	e->exec = exec ? 1 : 0;
}

void replay_fork(struct replay *r, uint64_t time, uint32_t pid, uint32_t ppid, uint32_t tid,
		 uint32_t ptid)
{
	struct rev *e = add_ev(r, EV_FORK, time);

	e->pid = pid;
	e->ppid = ppid;
	e->tid = tid;
	e->ptid = ptid;
	if (pid != ppid && !r->advanced && pid != REPLAY_KERNEL_PID)
		replay_uses_fork(r, pid, time);
	if (pid != ppid && !r->advanced) {
		/* the child runs its parent's code until it execs */
		uint32_t *v = u64map_get(&r->sofar_index, (uint64_t)ppid + 1), parent;
		struct sofar_proc *child;
		size_t n;

		if (!v)
			return;
		parent = *v - 1;
		n = r->sofar[parent].n;
		child = sofar_for(r, pid); /* may move the parent's entry: index it again */
		/* a pid used again is a new process: what its last owner mapped is not
		 * its (appended, a whole-machine recording's reused pids made these lists
		 * grow with every owner and every parent's list: 6.4 GB for 1 GB) */
		child->n = 0;
		for (size_t i = 0; i < n; i++)
			VEC_PUSH(child->evs, child->n, child->cap, r->sofar[parent].evs[i]);
	}
}

int replay_find_so_far(const struct replay *r, uint32_t pid, uint64_t addr,
		       struct replay_map *out)
{
	const uint32_t *v = u64map_get(&r->sofar_index, (uint64_t)pid + 1);
	const struct sofar_proc *p;

	if (r->finished || r->advanced || !v)
		return 0;
	p = &r->sofar[*v - 1];
	for (size_t k = p->n; k-- > 0;) { /* the latest mapping holding it */
		const struct rev *e = &r->evs[p->evs[k]];

		if (addr >= e->start && addr - e->start < e->len) {
			memset(out, 0, sizeof(*out));
			out->start = e->start;
			out->end = e->start + e->len;
			out->pgoff = e->pgoff;
			out->time = e->time;
			out->end_time = REPLAY_FOREVER;
			out->seq = e->seq;
			out->dso = e->arg;
			return 1;
		}
	}
	return 0;
}

void replay_exit(struct replay *r, uint64_t time, uint32_t pid, uint32_t tid)
{
	struct rev *e = add_ev(r, EV_EXIT, time);
	uint32_t *v;

	e->pid = pid;
	e->tid = tid;
	if (pid == tid && !r->advanced && (v = u64map_get(&r->sofar_index, (uint64_t)pid + 1))) {
		/* the process is gone: its guesses are held no longer (at worst a sample
		 * written after its exit record is not read ahead for) */
		struct sofar_proc *p = &r->sofar[*v - 1];

		free(p->evs);
		p->evs = NULL;
		p->n = p->cap = 0;
	}
}

static int rev_cmp(const void *a, const void *b)
{
	const struct rev *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

static void mark_dirty(struct replay *r, struct replay_proc *p);

static struct replay_proc *new_proc(struct replay *r, uint32_t pid, uint64_t time)
{
	struct replay_proc *p = xcalloc(1, sizeof(*p));
	uint32_t *v = u64map_get(&r->proc_index, (uint64_t)pid + 1);

	p->pid = pid;
	p->index = (uint32_t)r->nprocs;
	p->older = v ? *v : 0;
	p->start_time = time;
	p->newer_start = REPLAY_FOREVER;
	if (v)
		r->procs[*v - 1]->newer_start = time;
	else if (u64map_get(&r->asked_pids, (uint64_t)pid + 1))
		r->inexact = 1; /* a sample was told there was no such process */
	VEC_PUSH(r->procs, r->nprocs, r->procs_cap, p);
	u64map_put(&r->proc_index, (uint64_t)pid + 1, (uint32_t)r->nprocs);
	mark_dirty(r, p); /* its (empty) tables */
	return p;
}

/* The newest process with this pid, created on first sight (with start time 0). */
static struct replay_proc *cur_proc(struct replay *r, uint32_t pid)
{
	uint32_t *v = u64map_get(&r->proc_index, (uint64_t)pid + 1);

	return v ? r->procs[*v - 1] : new_proc(r, pid, 0);
}

static struct thread *get_thread(struct replay *r, uint32_t tid)
{
	uint32_t *v = u64map_get(&r->thread_index, (uint64_t)tid + 1);
	struct thread t;

	if (v)
		return &r->threads[*v];
	memset(&t, 0, sizeof(t));
	t.tid = tid;
	VEC_PUSH(r->threads, r->nthreads, r->threads_cap, t);
	u64map_put(&r->thread_index, (uint64_t)tid + 1, (uint32_t)r->nthreads - 1);
	return &r->threads[r->nthreads - 1];
}

static void name_thread(struct replay *r, uint32_t tid, uint64_t time, uint32_t name,
			uint32_t born)
{
	struct thread *t = get_thread(r, tid);
	struct name_at n = { time, name, born };

	if (!t->nnames && u64map_get(&r->asked_tids, (uint64_t)tid + 1))
		r->inexact = 1; /* a sample was told it had no name */
	VEC_PUSH(t->names, t->nnames, t->names_cap, n);
}

static void add_map(struct replay *r, struct replay_proc *p, const struct replay_map *m)
{
	uint32_t *v = u64map_get(&p->by_start, m->start + 1);
	uint32_t prev = v ? *v : 0;
	size_t n = p->nlive;

	VEC_PUSH(p->live, p->nlive, p->live_cap, *m);
	p->live[p->nlive - 1].id = r->nmap_ids++;
	VEC_PUSH(p->same_prev, n, p->same_cap, prev);
	u64map_put(&p->by_start, m->start + 1, (uint32_t)p->nlive);
	mark_dirty(r, p);
}

static void do_fork(struct replay *r, const struct rev *e)
{
	struct thread *parent = get_thread(r, e->ptid);

	/* the child thread starts with its parent thread's current name */
	if (parent->nnames)
		name_thread(r, e->tid, e->time, parent->names[parent->nnames - 1].name, 1);
	if (e->pid == e->ppid)
		return; /* a new thread shares its process */
	{
		struct replay_proc *pp = cur_proc(r, e->ppid);
		struct replay_proc *child = new_proc(r, e->pid, e->time);

		for (size_t i = 0; i < pp->nlive; i++)
			if (pp->live[i].end_time == REPLAY_FOREVER)
				add_map(r, child, &pp->live[i]);
	}
}

/*
 * An exec: the old image's mappings are not ended. The kernel tells the exec (COMM
 * with its exec bit) from inside execve, before the call returns: a sample taken there
 * later (loading the new binary, its page faults) has the old image's user context,
 * its user frame in the old libc's execve. As perf does, they stay until the new
 * image's mappings, which are newer, cover their addresses.
 */
static void do_exec(struct replay *r, const struct rev *e)
{
	(void)cur_proc(r, e->pid);
}

/* The live mappings that start at `start` end at the event's time. */
static void do_munmap(struct replay *r, const struct rev *e)
{
	struct replay_proc *p = cur_proc(r, e->pid);
	uint32_t *v;

	mark_dirty(r, p);
	if (e->start + 1 == 0) { /* a start that has no key */
		for (size_t i = 0; i < p->nlive; i++)
			if (p->live[i].start == e->start && p->live[i].end_time == REPLAY_FOREVER)
				p->live[i].end_time = e->time;
		return;
	}
	/* the maps with that start, newest first: each is walked once, the chain then
	 * dropped (a scan of every map was quadratic in KSYMBOL register/unregister pairs) */
	v = u64map_get(&p->by_start, e->start + 1);
	if (!v)
		return;
	for (uint32_t i = *v; i; i = p->same_prev[i - 1])
		if (p->live[i - 1].end_time == REPLAY_FOREVER)
			p->live[i - 1].end_time = e->time;
	*v = 0;
}

/* By start, then by the order a lookup prefers the latest in: (time, seq). */
static int map_start_cmp(const void *a, const void *b)
{
	const struct replay_map *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Replay one event (in (time, seq) order). */
static void apply_ev(struct replay *r, const struct rev *e)
{
	switch (e->type) {
	case EV_MMAP: {
		struct replay_map m;

		m.start = e->start;
		m.end = e->start + e->len;
		m.pgoff = e->pgoff;
		m.time = e->time;
		m.end_time = REPLAY_FOREVER;
		m.seq = e->seq;
		m.dso = e->arg;
		m.id = 0;
		add_map(r, cur_proc(r, e->pid), &m);
		break;
	}
	case EV_MUNMAP:
		do_munmap(r, e);
		break;
	case EV_COMM:
		if (e->exec)
			do_exec(r, e);
		else
			(void)cur_proc(r, e->pid);
		name_thread(r, e->tid, e->time, e->arg, 0);
		break;
	case EV_FORK:
		do_fork(r, e);
		break;
	default:
		break;
	}
}

/* The lookups' tables of `p` from its live maps. */
static void build_tables(struct replay_proc *p)
{
	uint64_t maxend = 0;
	size_t n = p->nlive;

	free(p->maps);
	free(p->maxend);
	free(p->run_first);
	free(p->changes);
	p->maps = xmalloc((n ? n : 1) * sizeof(*p->maps));
	if (n)
		memcpy(p->maps, p->live, n * sizeof(*p->maps));
	p->nmaps = n;
	if (n)
		qsort(p->maps, n, sizeof(*p->maps), map_start_cmp);
	p->maxend = xmalloc((n ? n : 1) * sizeof(*p->maxend));
	p->run_first = xmalloc((n ? n : 1) * sizeof(*p->run_first));
	for (size_t j = 0; j < n; j++) {
		if (p->maps[j].end > maxend)
			maxend = p->maps[j].end;
		p->maxend[j] = maxend;
		p->run_first[j] = j && p->maps[j - 1].start == p->maps[j].start
				  ? p->run_first[j - 1] : (uint32_t)j;
	}
	p->changes = xmalloc((2 * n + 1) * sizeof(*p->changes));
	p->nchanges = 0;
	for (size_t j = 0; j < n; j++) {
		p->changes[p->nchanges++] = p->maps[j].time;
		if (p->maps[j].end_time != REPLAY_FOREVER)
			p->changes[p->nchanges++] = p->maps[j].end_time;
	}
	if (p->nchanges > 1)
		qsort(p->changes, p->nchanges, sizeof(*p->changes), u64_cmp);
	p->dirty = 0;
}

/* The replay's own state of `p`, which only its events use. */
static void free_live(struct replay_proc *p)
{
	u64map_release(&p->by_start);
	free(p->same_prev);
	p->same_prev = NULL;
	p->same_cap = 0;
	free(p->live);
	p->live = NULL;
	p->nlive = p->live_cap = 0;
}

static void mark_dirty(struct replay *r, struct replay_proc *p)
{
	if (p->dirty)
		return;
	p->dirty = 1;
	VEC_PUSH(r->dirty, r->ndirty, r->dirty_cap, p->index);
}

/* For the last replay: the place + 1 in evs of the last event that touches each pid's
 * process (its own, or a fork's parent's). */
static void note_last_events(const struct replay *r, struct u64map *last)
{
	for (size_t k = 0; k < r->nevs; k++) {
		const struct rev *e = &r->evs[k];

		u64map_put(last, (uint64_t)e->pid + 1, (uint32_t)k + 1);
		if (e->type == EV_FORK && e->ppid != e->pid)
			u64map_put(last, (uint64_t)e->ppid + 1, (uint32_t)k + 1);
	}
}

/* Its tables built now and its live maps let go of: no event is to change `p`. */
static void settle(struct replay_proc *p)
{
	if (p->dirty)
		build_tables(p);
	free_live(p);
}

/*
 * In the last replay, after event k: the processes it was the last event of are
 * settled, and so is the one a fork's child took the pid of (its events went to the
 * new one from then on). Else a machine's recording held every process's live maps
 * at once until the end: 800 MB of a 1 GB one's first pass.
 */
static void settle_done(struct replay *r, const struct rev *e, size_t k, const struct u64map *last)
{
	uint32_t pids[2] = { e->pid, e->ppid };
	int n = e->type == EV_FORK && e->ppid != e->pid ? 2 : 1;

	for (int i = 0; i < n; i++) {
		const uint32_t *at = u64map_get(last, (uint64_t)pids[i] + 1);
		const uint32_t *v = u64map_get(&r->proc_index, (uint64_t)pids[i] + 1);

		if (!v)
			continue;
		if (i == 0 && n == 2 && r->procs[*v - 1]->older)
			settle(r->procs[r->procs[*v - 1]->older - 1]);
		if (at && *at == k + 1)
			settle(r->procs[*v - 1]);
	}
}

/* The events up to `horizon` replayed; `last`: by replay_finish(), no event is to come,
 * and what only the replay uses goes as soon as it is done with (the events, then
 * each process's live maps once its tables are built: all of them beside every
 * process's tables were the peak of a whole-machine recording's first pass). */
static void advance_to(struct replay *r, uint64_t horizon, int last)
{
	size_t k = 0;
	struct u64map lastev;

	if (r->finished || (r->advanced && horizon <= r->horizon))
		return;
	if (!r->advanced)
		free_sofar(r); /* it points at events by place, which now move */
	r->advanced = 1;
	r->horizon = horizon;
	if (r->nevs)
		qsort(r->evs, r->nevs, sizeof(*r->evs), rev_cmp);
	u64map_init(&lastev);
	if (last)
		note_last_events(r, &lastev);
	for (; k < r->nevs && r->evs[k].time <= horizon; k++) {
		apply_ev(r, &r->evs[k]);
		if (last)
			settle_done(r, &r->evs[k], k, &lastev);
	}
	u64map_release(&lastev);
	if (k) {
		memmove(r->evs, r->evs + k, (r->nevs - k) * sizeof(*r->evs));
		r->nevs -= k;
	}
	if (last) {
		free(r->evs);
		r->evs = NULL;
		r->nevs = r->evs_cap = 0;
	}
	for (size_t i = 0; i < r->ndirty; i++) {
		if (!r->procs[r->dirty[i]]->dirty)
			continue; /* settled */
		build_tables(r->procs[r->dirty[i]]);
		if (last)
			free_live(r->procs[r->dirty[i]]);
	}
	r->ndirty = 0;
}

void replay_advance(struct replay *r, uint64_t horizon)
{
	advance_to(r, horizon, 0);
}

int replay_inexact(const struct replay *r)
{
	return r->inexact;
}

void replay_asked(struct replay *r, uint32_t pid)
{
	if (r->advanced && !r->finished && !u64map_get(&r->proc_index, (uint64_t)pid + 1))
		u64map_put(&r->asked_pids, (uint64_t)pid + 1, 1);
}

void replay_finish(struct replay *r)
{
	if (r->finished)
		return;
	advance_to(r, REPLAY_FOREVER, 1);
	replay_schedule_releases(r);
	r->finished = 1;
	free_sofar(r);
	free(r->evs);
	r->evs = NULL;
	r->nevs = r->evs_cap = 0;
	for (size_t i = 0; i < r->nprocs; i++)
		free_live(r->procs[i]);
}

const struct replay_proc *replay_proc_at(const struct replay *r, uint32_t pid, uint64_t time)
{
	uint32_t *v = u64map_get(&r->proc_index, (uint64_t)pid + 1);
	const struct replay_proc *p;

	if (!v)
		return NULL;
	p = r->procs[*v - 1];
	while (p->start_time > time && p->older)
		p = r->procs[p->older - 1];
	if (p->released) /* a record pass 1 did not tell of (a bug): its frames [unknown] */
		((struct replay *)r)->late++;
	return p;
}

const struct replay_map *replay_proc_find(const struct replay_proc *p, uint64_t time,
					  uint64_t addr)
{
	const struct replay_map *best = NULL;
	size_t hi;

	if (!p || !p->nmaps)
		return NULL;
	/*
	 * Back from the last map starting at or below addr, one start at a time (a map
	 * further back that ends at or below addr, as they all do once maxend does,
	 * cannot hold it). Among the maps of one start, in (time, seq) order, the
	 * latest mapped by `time` that holds addr then is that start's answer: the
	 * maps mapped later are passed over by a binary search, the older ones are not
	 * looked at (a process that maps one address again and again costs a search).
	 */
	hi = COUNT_LE(p->maps, p->nmaps, start, addr);
	while (hi > 0 && p->maxend[hi - 1] > addr) {
		size_t first = p->run_first[hi - 1];
		size_t i = first + COUNT_LE(p->maps + first, hi - first, time, time);

		while (i-- > first) {
			const struct replay_map *m = &p->maps[i];

			if (addr >= m->end || time >= m->end_time)
				continue;
			if (!best || m->time > best->time ||
			    (m->time == best->time && m->seq > best->seq))
				best = m;
			break;
		}
		hi = first;
	}
	return best;
}

const struct replay_map *replay_find(const struct replay *r, uint32_t pid, uint64_t time,
				     uint64_t addr)
{
	return replay_proc_find(replay_proc_at(r, pid, time), time, addr);
}

uint32_t replay_thread_name(struct replay *r, uint32_t pid, uint32_t tid, uint64_t time)
{
	uint32_t *v = u64map_get(&r->thread_index, (uint64_t)tid + 1);
	const struct thread *t;
	size_t lo = 0, hi;
	char buf[32];

	if (!v || !r->threads[*v].nnames) {
		if (r->advanced && !r->finished)
			u64map_put(&r->asked_tids, (uint64_t)tid + 1, 1);
		/* the idle task: perf names it whether or not the recording has its COMM
		 * (perf 3.x and 4.x wrote none) */
		if (tid == 0)
			return strtab_intern(r->strings, "swapper");
		snprintf(buf, sizeof(buf), ":%d", (int)tid); /* -1: no task, as perf says */
		return strtab_intern(r->strings, buf);
	}
	t = &r->threads[*v];
	hi = t->nnames;
	lo = COUNT_LE(t->names, hi, time, time);
	/* before the first name the thread had, the earliest one is the best guess */
	return t->names[lo ? lo - 1 : 0].name;
}

uint32_t replay_thread_last_name(struct replay *r, uint32_t pid, uint32_t tid, uint64_t time)
{
	uint32_t *v = u64map_get(&r->thread_index, (uint64_t)tid + 1);
	const struct thread *t;
	size_t i;

	if (!v || !r->threads[*v].nnames)
		return replay_thread_name(r, pid, tid, time);
	t = &r->threads[*v];
	i = COUNT_LE(t->names, t->nnames, time, time);
	i = i ? i - 1 : 0;
	/* renamed later, until a new thread with the same tid begins */
	while (i + 1 < t->nnames && !t->names[i + 1].born)
		i++;
	return t->names[i].name;
}

uint64_t replay_proc_epoch(const struct replay *r, const struct replay_proc *p, uint64_t time,
			   struct replay_span *span)
{
	size_t lo;

	span->from = 0;
	span->until = REPLAY_FOREVER;
	if (!p)
		return 0;
	/* the process holds from its start (the oldest one from the beginning) to the
	 * next one's; its mappings from the last change at or before `time` to the next */
	if (p->older)
		span->from = p->start_time;
	span->until = p->newer_start;
	lo = count_keys_le(p->changes, p->nchanges, sizeof(uint64_t), 0, time);
	if (lo && p->changes[lo - 1] > span->from)
		span->from = p->changes[lo - 1];
	if (lo < p->nchanges && p->changes[lo] < span->until)
		span->until = p->changes[lo];
	(void)r;
	return ((uint64_t)(p->index + 1) << 32) | lo;
}

uint64_t replay_epoch(const struct replay *r, uint32_t pid, uint64_t time,
		      struct replay_span *span)
{
	return replay_proc_epoch(r, replay_proc_at(r, pid, time), time, span);
}
