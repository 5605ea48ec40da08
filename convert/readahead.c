/* readahead: pass 1 tells the symbolizer which addresses pass 2 will ask for. */
#include "convert/readahead.h"

#include "convert/callchain.h"

#include <stdlib.h>
#include <string.h>

#include "symbolize/locate.h"

struct readahead {
	struct symbolizer *sym;
	const struct replay *rp;
	const struct strtab *strings;
	uint64_t samples;
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
	u64map_init(&ra->asked);
	for (size_t i = 0; i < header->nbuild_ids; i++) {
		const struct perf_build_id *b = &header->build_ids[i];

		if (b->filename && (b->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER &&
		    map_origin(b->filename) != MAP_NO_FILE)
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
	u64map_release(&ra->asked);
	free(ra);
}

/* One user-space address `a` (a return address when `ret`) of a sample of `pid`. */
static void ask(struct readahead *ra, uint32_t pid, uint64_t a, int ret)
{
	struct replay_map m;
	const struct replay_dso *dso;
	const char *path;
	uint64_t off, key;

	if (a >= X86_64_KERNEL_START)
		return;
	key = (a ^ ((uint64_t)pid << 47)) * 2 + (uint64_t)ret;
	if (ra->recent[hash_u64(key) & 1023] == key)
		return;
	ra->recent[hash_u64(key) & 1023] = key;
	if (!replay_find_so_far(ra->rp, pid, a, &m))
		return;
	dso = replay_dso_get(ra->rp, m.dso);
	path = strtab_str(ra->strings, dso->path);
	if (dso->anonymous)
		return; /* JIT code or no file: nothing to read ahead */
	off = a - m.start + m.pgoff;
	if (m.dso >= (1u << 22) || off >= (1ULL << 40))
		return;
	key = (((uint64_t)m.dso << 41) | (off << 1) | (uint64_t)ret) + 1;
	if (u64map_get(&ra->asked, key))
		return;
	u64map_put(&ra->asked, key, 1);
	symbolizer_prefetch(ra->sym, m.dso, path, dso->build_id, dso->build_id_size, off, ret);
}

int readahead_sample(struct readahead *ra, const struct perf_record *rec)
{
	const struct perf_sample *s = &rec->u.sample;
	struct callchain_walk w;
	uint64_t a;
	int ret, kernel;
	int more = ++ra->samples < READAHEAD_SAMPLES;

	if (ra->samples > READAHEAD_SAMPLES)
		return more;
	/* an LBR call stack's call sites, looked up exactly (convert/lbr.h) */
	for (uint64_t i = 0; i < s->nr_branches; i++)
		ask(ra, rec->sid.pid, s->branches[i].from, 0);
	if (!s->has_callchain)
		return more;
	callchain_walk_init(&w, s->callchain, s->nr_callchain,
			    rec->cpumode == PERF_RECORD_MISC_KERNEL);
	while (callchain_walk_next(&w, &a, &ret, &kernel))
		if (!kernel)
			ask(ra, rec->sid.pid, a, ret);
	return more;
}
