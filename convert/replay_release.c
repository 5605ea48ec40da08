/* replay_release: each process's tables freed once no record still to come asks for it. */
#include "convert/replay_internal.h"

#include <stdlib.h>
#include <string.h>

void replay_free_uses(struct replay *r)
{
	for (size_t i = 0; i < r->nuses; i++)
		free(r->uses[i].g);
	free(r->uses);
	r->uses = NULL;
	r->nuses = r->uses_cap = 0;
	r->uses_last_key = 0;
	u64map_release(&r->uses_index);
}

static struct pid_uses *uses_for(struct replay *r, uint32_t pid)
{
	uint64_t key = (uint64_t)pid + 1;
	uint32_t *v;
	struct pid_uses none = { NULL, 0, 0, 0 };

	if (r->uses_last_key == key)
		return &r->uses[r->uses_last];
	v = u64map_get(&r->uses_index, key);
	if (!v) {
		VEC_PUSH(r->uses, r->nuses, r->uses_cap, none);
		u64map_put(&r->uses_index, key, (uint32_t)r->nuses);
	}
	r->uses_last_key = key;
	r->uses_last = v ? *v - 1 : (uint32_t)(r->nuses - 1);
	return &r->uses[r->uses_last];
}

/* How many of u's processes begin at or before `time`. */
static size_t uses_count_le(const struct pid_uses *u, uint64_t time)
{
	if (!u->n || u->g[u->n - 1].start <= time)
		return u->n; /* the newest, as records mostly are */
	return COUNT_LE(u->g, u->n, start, time);
}

void replay_note(struct replay *r, uint32_t pid, uint64_t time, uint64_t index)
{
	struct pid_uses *u;
	size_t k;

	if (r->advanced)
		r->unknown = 1; /* one pass: the records before were not told */
	if (r->unknown || pid == REPLAY_KERNEL_PID)
		return; /* the kernel's mappings are held to the end */
	r->noted = 1;
	u = uses_for(r, pid);
	k = uses_count_le(u, time);
	if (!k)
		u->before = u->before > index ? u->before : index;
	else if (u->g[k - 1].last < index)
		u->g[k - 1].last = index;
}

void replay_note_unknown(struct replay *r)
{
	r->unknown = 1;
	replay_free_uses(r);
}

/* Forks a pid's list took out of time order cost a move of the later ones each: past
 * this many moves a fork, on average, the recording is not a machine's (a hostile
 * one's forks in reverse order would move them all each time) and every process is
 * kept, rather than the time spent. */
#define MOVES_PER_FORK 64

void replay_uses_fork(struct replay *r, uint32_t pid, uint64_t time)
{
	struct pid_uses *u;
	size_t k;
	struct use_gen g;

	if (r->unknown)
		return;
	u = uses_for(r, pid);
	k = uses_count_le(u, time);
	g.start = time;
	g.last = k ? u->g[k - 1].last : u->before;
	r->forks++;
	VEC_PUSH(u->g, u->n, u->cap, g);
	if (k + 1 < u->n) {
		r->moves += u->n - 1 - k;
		if (r->moves > (r->forks + 1024) * MOVES_PER_FORK) {
			replay_note_unknown(r);
			return;
		}
		memmove(u->g + k + 1, u->g + k, (u->n - 1 - k) * sizeof(*u->g));
		u->g[k] = g;
	}
}

static int release_cmp(const void *a, const void *b)
{
	const struct release *x = a, *y = b;

	if (x->last != y->last)
		return x->last < y->last ? -1 : 1;
	return (x->proc > y->proc) - (x->proc < y->proc);
}

/* What the tables of `p` take. */
static size_t proc_bytes(const struct replay_proc *p)
{
	return p->nmaps * (sizeof(*p->maps) + sizeof(*p->maxend) + sizeof(*p->run_first)) +
	       p->nchanges * sizeof(*p->changes);
}

size_t replay_releasable_bytes(const struct replay *r)
{
	return r->held;
}

/* Does [a, b) meet [c, d)? An end of REPLAY_FOREVER is past every time. */
static int spans_meet(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
	return (d == REPLAY_FOREVER || a < d) && (b == REPLAY_FOREVER || c < b);
}

/*
 * The last record that asks for each process of one pid, chain[0..n) oldest first:
 * a process answers for the times from its start (the oldest from the first) to the
 * next one's, a pass 1 process (use_gen) holds the records of the times from its
 * start to the next one's; each process takes the last record of those whose times
 * meet its own. Both are in order of start: one walk.
 */
static void schedule_pid(struct replay *r, struct replay_proc **chain, size_t n,
			 const struct pid_uses *u)
{
	size_t j = 0, ng = u ? u->n + 1 : 0; /* pass 1's, the records before every fork first */

	for (size_t i = 0; i < n; i++) {
		uint64_t from = i ? chain[i]->start_time : 0;
		uint64_t until = i + 1 < n ? chain[i + 1]->start_time : REPLAY_FOREVER;
		struct release x = { 0, chain[i]->index };

		for (size_t k = j; k < ng; k++) {
			uint64_t gfrom = k ? u->g[k - 1].start : 0;
			uint64_t guntil = k < u->n ? u->g[k].start : REPLAY_FOREVER;
			uint64_t last = k ? u->g[k - 1].last : u->before;

			if (guntil != REPLAY_FOREVER && guntil <= from && k == j) {
				j++; /* ends before this process and so before the next ones */
				continue;
			}
			if (gfrom >= until && until != REPLAY_FOREVER)
				break;
			if (spans_meet(from, until, gfrom, guntil) && last > x.last)
				x.last = last;
		}
		VEC_PUSH(r->rel, r->nrel, r->rel_cap, x);
	}
}

/* If pass 1 told every record that asks (replay_note); else none is released. */
void replay_schedule_releases(struct replay *r)
{
	struct replay_proc **chain = NULL;
	size_t n = 0, cap = 0;

	if (r->noted && !r->unknown) {
		for (size_t i = 0; i < r->nprocs; i++) {
			struct replay_proc *p = r->procs[i];
			uint32_t *v = u64map_get(&r->proc_index, (uint64_t)p->pid + 1);
			uint32_t *w = u64map_get(&r->uses_index, (uint64_t)p->pid + 1);

			if (p->pid == REPLAY_KERNEL_PID || !v || *v != p->index + 1)
				continue; /* the kernel's, or not its pid's newest */
			n = 0;
			for (struct replay_proc *q = p;; q = r->procs[q->older - 1]) {
				VEC_PUSH(chain, n, cap, q);
				if (!q->older)
					break;
			}
			for (size_t a = 0, b = n - 1; a < b; a++, b--) {
				struct replay_proc *t = chain[a];

				chain[a] = chain[b];
				chain[b] = t;
			}
			schedule_pid(r, chain, n, w ? &r->uses[*w - 1] : NULL);
		}
		for (size_t i = 0; i < r->nrel; i++)
			r->held += proc_bytes(r->procs[r->rel[i].proc]);
		if (r->nrel > 1)
			qsort(r->rel, r->nrel, sizeof(*r->rel), release_cmp);
	}
	free(chain);
	replay_free_uses(r);
}

size_t replay_release(struct replay *r, uint64_t index)
{
	size_t k = 0;

	for (; r->rel_head < r->nrel && r->rel[r->rel_head].last < index; r->rel_head++) {
		struct replay_proc *p = r->procs[r->rel[r->rel_head].proc];

		k += proc_bytes(p) + 1;
		free(p->maps);
		free(p->maxend);
		free(p->run_first);
		free(p->changes);
		p->maps = NULL;
		p->maxend = NULL;
		p->run_first = NULL;
		p->changes = NULL;
		p->nmaps = p->nchanges = 0;
		p->released = 1;
	}
	if (r->rel_head == r->nrel && r->nrel) {
		free(r->rel);
		r->rel = NULL;
		r->nrel = r->rel_head = r->rel_cap = 0;
	}
	return k;
}

uint64_t replay_next_release(const struct replay *r)
{
	return r->rel_head < r->nrel ? r->rel[r->rel_head].last : UINT64_MAX;
}

uint64_t replay_late(const struct replay *r)
{
	return r->late;
}

size_t replay_forget_processes(struct replay *r)
{
	size_t freed = 0;

	for (size_t i = 0; i < r->nprocs; i++) {
		struct replay_proc *p = r->procs[i];

		freed += sizeof(*p) + proc_bytes(p);
		free(p->maps);
		free(p->maxend);
		free(p->run_first);
		free(p->changes);
		free(p->live);
		free(p->same_prev);
		u64map_release(&p->by_start);
		free(p);
	}
	free(r->procs);
	r->procs = NULL;
	r->nprocs = r->procs_cap = 0;
	u64map_release(&r->proc_index);
	u64map_init(&r->proc_index);
	free(r->rel);
	r->rel = NULL;
	r->nrel = r->rel_cap = r->rel_head = 0;
	return freed;
}
