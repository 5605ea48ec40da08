/* readahead: pass 1 tells the symbolizer which addresses pass 2 will ask for. */
#include "convert/readahead.h"

#include <stdlib.h>
#include <string.h>

/* A file mapping as pass 1 has seen it so far. */
struct ra_map {
	uint64_t start, end, pgoff;
	uint32_t dso;
};

struct ra_proc {
	struct ra_map *v;
	size_t n, cap;
};

struct readahead {
	struct symbolizer *sym;
	const struct replay *rp;
	const struct strtab *strings;
	uint64_t samples;
	struct u64map index;  /* pid + 1 -> procs index + 1 */
	struct ra_proc *procs;
	size_t nprocs, procs_cap;
	struct u64map asked;  /* (dso, offset, return) + 1 */
	uint64_t recent[1024]; /* addresses seen lately, by hash: most repeat */
};

struct readahead *readahead_new(struct symbolizer *sym, const struct replay *rp,
				const struct strtab *strings,
				const struct perf_header_info *header)
{
	struct readahead *ra = xcalloc(1, sizeof(*ra));
	struct sym_object *objs = xmalloc((header->nbuild_ids + 1) * sizeof(*objs));
	size_t n = 0;

	ra->sym = sym;
	ra->rp = rp;
	ra->strings = strings;
	u64map_init(&ra->index);
	u64map_init(&ra->asked);
	for (size_t i = 0; i < header->nbuild_ids; i++) {
		const struct perf_build_id *b = &header->build_ids[i];

		if (b->filename && (b->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER &&
		    (b->filename[0] == '/' || strcmp(b->filename, "[vdso]") == 0))
			objs[n++] = (struct sym_object){ b->filename, b->id, b->id_size };
	}
	symbolizer_preload(sym, objs, n);
	free(objs);
	return ra;
}

void readahead_free(struct readahead *ra)
{
	if (!ra)
		return;
	for (size_t i = 0; i < ra->nprocs; i++)
		free(ra->procs[i].v);
	free(ra->procs);
	u64map_release(&ra->index);
	u64map_release(&ra->asked);
	free(ra);
}

static struct ra_proc *proc_for(struct readahead *ra, uint32_t pid)
{
	uint32_t *v = u64map_get(&ra->index, (uint64_t)pid + 1);
	struct ra_proc none = { NULL, 0, 0 };

	if (v)
		return &ra->procs[*v - 1];
	VEC_PUSH(ra->procs, ra->nprocs, ra->procs_cap, none);
	u64map_put(&ra->index, (uint64_t)pid + 1, (uint32_t)ra->nprocs);
	return &ra->procs[ra->nprocs - 1];
}

void readahead_mmap(struct readahead *ra, uint32_t pid, uint64_t start, uint64_t len,
		    uint64_t pgoff, uint32_t dso)
{
	struct ra_proc *p;
	struct ra_map m = { start, start + len, pgoff, dso };

	if (start + len <= start)
		return;
	p = proc_for(ra, pid);
	VEC_PUSH(p->v, p->n, p->cap, m);
}

void readahead_fork(struct readahead *ra, uint32_t pid, uint32_t ppid)
{
	uint32_t *v = u64map_get(&ra->index, (uint64_t)ppid + 1), parent;
	struct ra_proc *child;
	size_t n;

	if (!v || pid == ppid)
		return;
	parent = *v - 1;
	n = ra->procs[parent].n;
	child = proc_for(ra, pid); /* may move the parent's entry: index it again below */
	for (size_t i = 0; i < n; i++)
		VEC_PUSH(child->v, child->n, child->cap, ra->procs[parent].v[i]);
}

int readahead_sample(struct readahead *ra, const struct perf_record *rec)
{
	const struct perf_sample *s = &rec->u.sample;
	const struct ra_proc *p;
	uint32_t *v;
	int kernel_ctx = rec->cpumode == PERF_RECORD_MISC_KERNEL, leaf = 1;
	int more = ++ra->samples < READAHEAD_SAMPLES;

	if (ra->samples > READAHEAD_SAMPLES || !s->has_callchain)
		return more;
	v = u64map_get(&ra->index, (uint64_t)rec->sid.pid + 1);
	if (!v)
		return more;
	p = &ra->procs[*v - 1];
	for (uint64_t i = 0; i < s->nr_callchain; i++) {
		uint64_t a = s->callchain[i], off, key;
		const struct ra_map *m = NULL;
		const struct replay_dso *dso;
		int ret = !leaf;

		if (a >= PERF_CONTEXT_MAX) {
			kernel_ctx = a != PERF_CONTEXT_USER;
			leaf = 1;
			continue;
		}
		leaf = 0;
		if (kernel_ctx || a >= X86_64_KERNEL_START)
			continue;
		key = (a ^ ((uint64_t)rec->sid.pid << 47)) * 2 + (uint64_t)ret;
		if (ra->recent[hash_u64(key) & 1023] == key)
			continue;
		ra->recent[hash_u64(key) & 1023] = key;
		for (size_t k = p->n; k-- > 0;) /* the latest mapping holding it */
			if (a >= p->v[k].start && a < p->v[k].end) {
				m = &p->v[k];
				break;
			}
		if (!m)
			continue;
		off = a - m->start + m->pgoff;
		if (m->dso >= (1u << 22) || off >= (1ULL << 40))
			continue;
		key = (((uint64_t)m->dso << 41) | (off << 1) | (uint64_t)ret) + 1;
		if (u64map_get(&ra->asked, key))
			continue;
		u64map_put(&ra->asked, key, 1);
		dso = replay_dso_get(ra->rp, m->dso);
		symbolizer_prefetch(ra->sym, m->dso, strtab_str(ra->strings, dso->path),
				    dso->build_id, dso->build_id_size, off, ret);
	}
	return more;
}
