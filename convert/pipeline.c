/* pipeline: perf.data in, profile model out: replay, symbolize, build stacks. */
#include "convert/pipeline.h"

#include <inttypes.h>
#include <libgen.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/perfdata.h"
#include "symbolize/jitprocs.h"
#include "convert/readahead.h"
#include "convert/replay.h"

#define MAX_STACK 1024
#define MAX_INLINE 32

/*
 * A sample's raw stack already turned into a node: the same addresses in the same
 * process with the same mappings (replay_epoch) give the same frames, so a repeated
 * stack costs one hash lookup instead of one per frame.
 */
struct chain {
	uint64_t hash, user_epoch, kernel_epoch;
	uint64_t first;               /* in chain_words */
	uint32_t n, node;
	uint32_t flags;               /* bit 0: kernel context first; bit 1: a callchain */
};

/* The last epoch looked up for a pid, and the times it holds for. */
struct epoch_memo {
	int valid;
	uint32_t pid;
	uint64_t epoch;
	struct replay_span span;
};

/* Raw stacks kept for the chain cache at most, in words (32 MB). */
#define CHAIN_WORDS_MAX (4u << 20)

/* A user address pass 2 left for later: its placeholder frame and what to symbolize. */
struct user_pending {
	const struct replay_map *m;   /* stable once replay_finish() ran */
	uint64_t addr;
	uint32_t frame, mapping;
	int ret;
};

/* A resolved address: a run of frame ids in the pool, innermost first. */
struct resolved {
	uint32_t first, n;
};

struct conv {
	const struct convert_options *opt;
	struct profile *p;
	struct convert_stats *st;
	struct diag *d;
	struct perf_reader *r;
	struct replay *rp;
	struct symbolizer *sym;
	int use_record_time;          /* the recording has times */
	const uint8_t *kernel_bid;
	size_t kernel_bid_size;
	/* caches */
	struct u64map map_ids;        /* replay_map index + 1 -> profile mapping */
	struct u64map addr_cache;     /* (mapping, offset, return) -> resolved */
	struct u64map nomap_cache;    /* address -> resolved, for addresses in no mapping */
	struct resolved *res;
	size_t nres, res_cap;
	uint32_t *pool;
	size_t npool, pool_cap;
	struct chain *chains;
	size_t nchains, chains_cap;
	struct id_index chain_index;
	struct epoch_memo user_epoch, kernel_epoch; /* consecutive samples share them */
	uint64_t *chain_words;
	size_t nchain_words, chain_words_cap;
	uint32_t *mapping_dso;        /* profile mapping -> replay dso */
	size_t mapping_dso_cap;
	/* kernel frames interned by address while kernel symbols load on another
	 * thread, named once pass 2 is over */
	int defer_kernel;
	uint32_t *pending;
	size_t npending, pending_cap;
	/* user frames interned by address in pass 2 while the helper thread symbolizes
	 * them, expanded into their frames afterwards (expand_user_frames) */
	int defer_user;
	struct user_pending *upending;
	size_t nupending, upending_cap;
	/* JIT code: the processes' dumps and maps, and per table a cache of frames by
	 * (code, offset in it, return address) */
	struct jit_procs *jits;
	struct u64map *jit_cache;
	struct jitdump_time_conv time_conv;
	int have_time_conv;
	const char *input_dir;
	struct readahead *ra;         /* pass 1 telling the symbolizer what pass 2 needs */
	/* the closing summary, computed from the finished profile */
	uint64_t *dso_unsym;
	uint64_t kernel_unsym, nomap_unsym;
};

static uint64_t rec_time(const struct conv *c, const struct perf_record *rec)
{
	if (!c->use_record_time)
		return rec->index;
	return rec->sid.has_time ? rec->sid.time : 0;
}

static const struct perf_build_id *header_build_id(const struct perf_header_info *h,
						   const char *path)
{
	for (size_t i = 0; i < h->nbuild_ids; i++)
		if (h->build_ids[i].filename && strcmp(h->build_ids[i].filename, path) == 0)
			return &h->build_ids[i];
	return NULL;
}

static int is_kernel_name(const char *name)
{
	return strncmp(name, "[kernel.kallsyms]", 17) == 0 || strncmp(name, "[guest.kernel", 13) == 0;
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

static void on_mmap(struct conv *c, const struct perf_record *rec, uint64_t time)
{
	const struct perf_mmap_rec *m = &rec->u.mmap;
	const struct perf_header_info *h = perf_reader_header(c->r);
	const uint8_t *bid = NULL;
	size_t bidlen = 0;
	int kernel = m->pid == UINT32_MAX || rec->cpumode == PERF_RECORD_MISC_KERNEL;
	const char *path = m->filename;
	uint32_t dso;

	if (!kernel) {
		uint32_t pid;

		jit_procs_seen(c->jits, m->pid);
		if (jit_dump_name(path_base(path), &pid) && pid == m->pid)
			jit_procs_expect(c->jits, m->pid, path);
	}
	if (!m->executable)
		return;
	if (kernel && is_kernel_name(path))
		path = "[kernel.kallsyms]";
	if (m->has_build_id) {
		bid = m->build_id;
		bidlen = m->build_id_size;
	} else {
		const struct perf_build_id *b = header_build_id(h, path);

		if (b) {
			bid = b->id;
			bidlen = b->id_size;
		}
	}
	dso = replay_dso(c->rp, path, bid, bidlen, kernel);
	replay_mmap(c->rp, time, kernel ? REPLAY_KERNEL_PID : m->pid, m->start, m->len, m->pgoff,
		    dso);
	if (c->ra && !kernel && (!path_is_anonymous(path) || strcmp(path, "[vdso]") == 0))
		readahead_mmap(c->ra, m->pid, m->start, m->len, m->pgoff, dso);
}

/*
 * KSYMBOL: kernel code that kallsyms may not name, or not at the time of a sample
 * (BPF programs loaded and unloaded, trampolines). As perf does, each becomes a
 * kernel mapping named after its symbol for as long as it is registered.
 */
static void on_ksymbol(struct conv *c, const struct perf_record *rec, uint64_t time)
{
	const struct perf_ksymbol_rec *k = &rec->u.ksymbol;
	uint32_t dso;

	if (k->flags & PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER) {
		replay_munmap(c->rp, time, REPLAY_KERNEL_PID, k->addr);
		return;
	}
	if (!k->name || !k->name[0] || !k->len)
		return;
	dso = replay_dso(c->rp, k->name, NULL, 0,
			 k->ksym_type == PERF_RECORD_KSYMBOL_TYPE_BPF ? REPLAY_DSO_KSYM_BPF : REPLAY_DSO_KSYM_OTHER);
	replay_mmap(c->rp, time, REPLAY_KERNEL_PID, k->addr, k->len, 0, dso);
}

/* Pass 1: process state. */
static int pass_state(struct conv *c)
{
	struct perf_record rec;
	int ret;

	/* samples are for pass 2: not even decoded here, but for the first ones, which
	 * the symbolizer reads ahead */
	if (!c->ra)
		perf_reader_skip_type(c->r, PERF_RECORD_SAMPLE);
	while ((ret = perf_reader_next(c->r, &rec)) == 1) {
		uint64_t t = rec_time(c, &rec);

		switch (rec.type) {
		case PERF_RECORD_MMAP:
		case PERF_RECORD_MMAP2:
			on_mmap(c, &rec, t);
			break;
		case PERF_RECORD_KSYMBOL:
			on_ksymbol(c, &rec, t);
			break;
		case PERF_RECORD_COMM:
			replay_comm(c->rp, t, rec.u.comm.pid, rec.u.comm.tid, rec.u.comm.comm,
				    rec.u.comm.exec);
			jit_procs_seen(c->jits, rec.u.comm.pid);
			break;
		case PERF_RECORD_TIME_CONV:
			c->time_conv.time_shift = (uint16_t)rec.u.time_conv.time_shift;
			c->time_conv.time_mult = (uint32_t)rec.u.time_conv.time_mult;
			c->time_conv.time_zero = rec.u.time_conv.time_zero;
			c->time_conv.time_cycles = rec.u.time_conv.time_cycles;
			c->time_conv.time_mask = rec.u.time_conv.time_mask;
			c->time_conv.cap_user_time_short = rec.u.time_conv.cap_user_time_short;
			c->have_time_conv = 1;
			break;
		case PERF_RECORD_FORK:
			replay_fork(c->rp, rec.u.fork.time ? rec.u.fork.time : t, rec.u.fork.pid,
				    rec.u.fork.ppid, rec.u.fork.tid, rec.u.fork.ptid);
			if (c->ra)
				readahead_fork(c->ra, rec.u.fork.pid, rec.u.fork.ppid);
			break;
		case PERF_RECORD_SAMPLE:
			if (c->ra && !readahead_sample(c->ra, &rec))
				perf_reader_skip_type(c->r, PERF_RECORD_SAMPLE);
			break;
		case PERF_RECORD_EXIT:
			replay_exit(c->rp, t, rec.u.fork.pid, rec.u.fork.tid);
			break;
		default:
			break;
		}
	}
	return ret;
}

static uint32_t mapping_for(struct conv *c, const struct replay_map *m)
{
	/* replay maps do not move after replay_finish: their address is their identity */
	uint64_t key = (uint64_t)(uintptr_t)m;
	uint32_t *v = u64map_get(&c->map_ids, key);
	const struct replay_dso *dso;
	struct pc_mapping pm;
	char hex[41];
	uint32_t id;

	if (v)
		return *v;
	dso = replay_dso_get(c->rp, m->dso);
	memset(&pm, 0, sizeof(pm));
	pm.start = m->start;
	pm.limit = m->end;
	pm.offset = m->pgoff;
	pm.file = dso->path;
	hex_bytes(hex, dso->build_id, dso->build_id_size);
	pm.build_id = profile_str(c->p, hex);
	pm.kind = dso->kernel ? FRAME_KERNEL : FRAME_NATIVE;
	id = profile_mapping(c->p, &pm);
	u64map_put(&c->map_ids, key, id);
	if (id >= c->mapping_dso_cap) {
		size_t old = c->mapping_dso_cap;

		grow_array((void **)&c->mapping_dso, &c->mapping_dso_cap, id + 1,
			   sizeof(*c->mapping_dso));
		memset(c->mapping_dso + old, 0xff, (c->mapping_dso_cap - old) * sizeof(*c->mapping_dso));
	}
	c->mapping_dso[id] = m->dso;
	return id;
}

static uint32_t new_resolved(struct conv *c, const uint32_t *frames, uint32_t n)
{
	struct resolved r;

	r.first = (uint32_t)c->npool;
	r.n = n;
	for (uint32_t i = 0; i < n; i++)
		VEC_PUSH(c->pool, c->npool, c->pool_cap, frames[i]);
	VEC_PUSH(c->res, c->nres, c->res_cap, r);
	return (uint32_t)c->nres - 1;
}

static const char *module_name(const char *path)
{
	return path[0] == '[' ? path : path_base(path);
}

/*
 * Intern the frames of `addr` in mapping `m` (NULL: in no mapping) from a
 * symbolization result sf[0..n), innermost first; with n 0, the one frame that says
 * where the address is (module+0xoffset, [unknown]). Returns how many ids it wrote.
 */
static uint32_t intern_frames(struct conv *c, const struct replay_map *m, uint32_t mapping,
			      uint64_t addr, int kernel, const struct sym_frame *sf, size_t n,
			      const char *kmod, uint32_t *ids)
{
	const struct replay_dso *dso = m ? replay_dso_get(c->rp, m->dso) : NULL;
	const char *path = dso ? profile_text(c->p, dso->path) : NULL;
	struct pc_frame f;
	char buf[512];

	memset(&f, 0, sizeof(f));
	f.addr = addr;
	f.mapping = mapping;
	f.kind = kernel ? FRAME_KERNEL : FRAME_NATIVE;
	if (n == 0) {
		f.symbolized = 0;
		if (m) {
			uint64_t off = kernel ? addr - m->start : addr - m->start + m->pgoff;

			snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, module_name(path), off);
			f.module = profile_str(c->p, module_name(path));
		} else {
			snprintf(buf, sizeof(buf), "[unknown]");
			f.module = profile_str(c->p, kernel ? "[kernel.kallsyms]" : "[unknown]");
		}
		f.func = profile_str(c->p, buf);
		ids[0] = profile_frame(c->p, &f);
		return 1;
	}
	if (kernel) {
		if (kmod) {
			snprintf(buf, sizeof(buf), "[%s]", kmod);
			f.module = profile_str(c->p, buf);
		} else {
			f.module = profile_str(c->p, "[kernel.kallsyms]");
		}
	} else {
		f.module = profile_str(c->p, module_name(path));
	}
	for (size_t i = 0; i < n; i++) {
		f.symbolized = 1;
		f.func = profile_str(c->p, sf[i].name);
		f.system_name = profile_str(c->p, sf[i].system_name ? sf[i].system_name : "");
		f.file = profile_str(c->p, sf[i].file ? sf[i].file : "");
		f.line = sf[i].line;
		f.column = sf[i].column;
		if (!kernel)
			f.kind = sf[i].inlined ? FRAME_INLINED : FRAME_NATIVE;
		ids[i] = profile_frame(c->p, &f);
	}
	return (uint32_t)n;
}

/* The file offset of `addr` in user mapping `m`. */
static uint64_t user_offset(const struct replay_map *m, uint64_t addr)
{
	return addr - m->start + m->pgoff;
}

/* Symbolize `addr` of mapping `m` (NULL: in no mapping). `ret`: a return address. */
static uint32_t resolve_new(struct conv *c, const struct replay_map *m, uint32_t mapping,
			    uint64_t addr, int ret, int kernel_ctx)
{
	struct sym_frame sf[MAX_INLINE];
	uint32_t ids[MAX_INLINE];
	struct pc_frame f;
	size_t n = 0;
	const struct replay_dso *dso = m ? replay_dso_get(c->rp, m->dso) : NULL;
	const char *path = dso ? profile_text(c->p, dso->path) : NULL;
	int kernel = dso ? dso->kernel : kernel_ctx;
	const char *kmod = NULL;

	memset(&f, 0, sizeof(f));
	f.addr = addr;
	f.mapping = mapping;
	f.kind = kernel ? FRAME_KERNEL : FRAME_NATIVE;
	if (dso && dso->kernel >= REPLAY_DSO_KSYM_BPF) {
		/* KSYMBOL code: its mapping is its symbol, named as perf names it */
		f.symbolized = 1;
		f.func = f.system_name = f.module = dso->path;
		ids[0] = profile_frame(c->p, &f);
		return new_resolved(c, ids, 1);
	}
	if (kernel && c->defer_kernel) {
		/* named after pass 2 (name_kernel_frames); the address makes it unique */
		f.module = profile_str(c->p, "[kernel.kallsyms]");
		ids[0] = profile_frame(c->p, &f);
		VEC_PUSH(c->pending, c->npending, c->pending_cap, ids[0]);
		return new_resolved(c, ids, 1);
	}
	if (!kernel && dso && c->defer_user) {
		/* a placeholder until expand_user_frames(): no name yet, and `line`
		 * telling a return address from a leaf at the same address */
		struct user_pending u = { m, addr, 0, mapping, ret };

		f.line = ret ? 1 : 0;
		u.frame = ids[0] = profile_frame(c->p, &f);
		VEC_PUSH(c->upending, c->nupending, c->upending_cap, u);
		symbolizer_prefetch(c->sym, m->dso, path, dso->build_id, dso->build_id_size,
				    user_offset(m, addr), ret);
		return new_resolved(c, ids, 1);
	}
	if (!c->opt->no_symbols) {
		if (kernel) {
			if (symbolizer_kernel(c->sym, addr, c->kernel_bid,
					      c->kernel_bid_size, &sf[0], &kmod))
				n = 1;
		} else if (dso) {
			n = symbolizer_native(c->sym, m->dso, path, dso->build_id, dso->build_id_size,
					      user_offset(m, addr), ret, sf, MAX_INLINE);
		}
	}
	return new_resolved(c, ids, intern_frames(c, m, mapping, addr, kernel, sf, n, kmod, ids));
}

/*
 * Symbolize the user addresses pass 2 left as placeholders and put their frames in
 * the stacks. The helper thread took them in order as pass 2 met them; this thread
 * takes them from the other end, so that the two meet in the middle (each finds
 * what the other did in the symbolizer's per-object results).
 */
static void expand_user_frames(struct conv *c)
{
	struct profile *p = c->p;
	size_t covered = p->nframes;
	uint32_t *first = xcalloc(covered ? covered : 1, sizeof(*first));
	uint32_t *count = xcalloc(covered ? covered : 1, sizeof(*count));
	uint32_t *pool = NULL;
	size_t npool = 0, pool_cap = 0;

	for (size_t i = c->nupending; i-- > 0;) {
		const struct user_pending *u = &c->upending[i];
		const struct replay_dso *dso = replay_dso_get(c->rp, u->m->dso);
		struct sym_frame sf[MAX_INLINE];
		uint32_t ids[MAX_INLINE], k;
		size_t n;

		n = symbolizer_native(c->sym, u->m->dso, profile_text(p, dso->path), dso->build_id,
				      dso->build_id_size, user_offset(u->m, u->addr), u->ret, sf,
				      MAX_INLINE);
		k = intern_frames(c, u->m, u->mapping, u->addr, 0, sf, n, NULL, ids);
		first[u->frame] = (uint32_t)npool;
		count[u->frame] = k;
		for (uint32_t j = 0; j < k; j++)
			VEC_PUSH(pool, npool, pool_cap, ids[j]);
	}
	profile_expand_frames(p, first, count, pool, covered);
	free(first);
	free(count);
	free(pool);
}

/* JIT code at `addr` in process table `t` at `time`: its frame, or NULL when the
 * table has no code there then. */
static const struct resolved *resolve_jit(struct conv *c, int t, const struct replay_map *m,
					  uint64_t addr, int ret, uint64_t time)
{
	struct jitcode_frame jf;
	struct pc_frame f;
	struct pc_mapping pm;
	uint32_t id, *v, idx;
	uint64_t key = 0, off, fallback = 0;
	const char *module = jit_procs_module(c->jits, t);
	/* a return address's call is the byte before it */
	uint64_t at = ret ? addr - 1 : addr;

	if (!jitcode_lookup(jit_procs_table(c->jits, t), time, at, &jf)) {
		if (!jit_procs_fallback(c->jits, t, at, c->d, &jf, &module))
			return NULL;
		fallback = 1ULL << 63;
	}
	off = addr - jf.start;
	if (off < (1ULL << 30)) {
		key = ((((uint64_t)jf.code << 32) | (off << 1) | (uint64_t)ret) + 1) | fallback;
		v = u64map_get(&c->jit_cache[t], key);
		if (v)
			return &c->res[*v];
	}
	memset(&pm, 0, sizeof(pm));
	pm.start = m ? m->start : jf.start;
	pm.limit = m ? m->end : jf.start + (jf.size ? jf.size : 1);
	pm.file = profile_str(c->p, module);
	pm.kind = FRAME_JIT;
	memset(&f, 0, sizeof(f));
	f.addr = addr;
	f.mapping = profile_mapping(c->p, &pm);
	f.kind = FRAME_JIT;
	f.symbolized = 1;
	f.func = profile_str(c->p, jf.name);
	f.system_name = profile_str(c->p, jf.raw_name ? jf.raw_name : jf.name);
	f.file = profile_str(c->p, jf.file ? jf.file : "");
	f.line = jf.line;
	f.module = pm.file;
	id = profile_frame(c->p, &f);
	idx = new_resolved(c, &id, 1);
	if (key)
		u64map_put(&c->jit_cache[t], key, idx);
	return &c->res[idx];
}

/* The frames of one address, from the cache or symbolized now. */
static const struct resolved *resolve(struct conv *c, uint32_t pid, uint64_t time, uint64_t addr,
				      int ret, int kernel_ctx)
{
	const struct replay_map *m;
	uint32_t mapping = 0, *v, idx;
	uint64_t key;

	m = replay_find(c->rp, kernel_ctx ? REPLAY_KERNEL_PID : pid, time, addr);
	if (!m && !kernel_ctx && addr >= X86_64_KERNEL_START)
		m = replay_find(c->rp, REPLAY_KERNEL_PID, time, addr), kernel_ctx = 1;
	if (!kernel_ctx && !c->opt->no_symbols && jit_procs_count(c->jits)) {
		int t = jit_procs_find(c->jits, pid);

		if (t >= 0 && (!m || path_is_anonymous(profile_text(
					     c->p, replay_dso_get(c->rp, m->dso)->path)))) {
			const struct resolved *r = resolve_jit(c, t, m, addr, ret, time);

			if (r)
				return r;
		}
	}
	if (!m) {
		key = (addr ^ ((uint64_t)kernel_ctx << 63)) * 2 + (uint64_t)ret + 1;
		v = u64map_get(&c->nomap_cache, key ? key : 1);
		if (v)
			idx = *v;
		else {
			idx = resolve_new(c, NULL, 0, addr, ret, kernel_ctx);
			u64map_put(&c->nomap_cache, key ? key : 1, idx);
		}
		return &c->res[idx];
	}
	mapping = mapping_for(c, m);
	{
		uint64_t off = addr - m->start;

		if (off < (1ULL << 40) && mapping < (1u << 23)) {
			key = ((uint64_t)mapping << 41) | (off << 1) | (uint64_t)ret;
			v = u64map_get(&c->addr_cache, key);
			if (v) {
				idx = *v;
			} else {
				idx = resolve_new(c, m, mapping, addr, ret, kernel_ctx);
				u64map_put(&c->addr_cache, key, idx);
			}
		} else {
			idx = resolve_new(c, m, mapping, addr, ret, kernel_ctx);
		}
	}
	return &c->res[idx];
}

static int wanted(const struct conv *c, uint32_t pid, uint32_t tid, uint32_t comm)
{
	const struct convert_options *o = c->opt;
	int ok;

	if (o->npids) {
		ok = 0;
		for (size_t i = 0; i < o->npids; i++)
			ok |= o->pids[i] == pid;
		if (!ok)
			return 0;
	}
	if (o->ntids) {
		ok = 0;
		for (size_t i = 0; i < o->ntids; i++)
			ok |= o->tids[i] == tid;
		if (!ok)
			return 0;
	}
	if (o->ncomms) {
		const char *name = profile_text(c->p, comm);

		ok = 0;
		for (size_t i = 0; i < o->ncomms; i++)
			ok |= strcmp(o->comms[i], name) == 0;
		if (!ok)
			return 0;
	}
	return 1;
}

/* The leaf node of a raw stack: its frames resolved and interned. */
/*
 * The leaf node of a raw stack, `nw` words: a callchain (context markers and
 * addresses, leaf first), or one IP. `kernel_ctx`: the sample was taken in the kernel.
 */
static uint32_t stack_node(struct conv *c, const uint64_t *words, size_t nw, int kernel_ctx,
			   uint32_t pid, uint64_t time)
{
	uint32_t frames[MAX_STACK];
	size_t nf = 0;
	uint32_t node = 0;
	int leaf = 1, skip = 0;

	for (size_t i = 0; i < nw && nf < MAX_STACK; i++) {
		uint64_t a = words[i];
		const struct resolved *r;

		if (a >= PERF_CONTEXT_MAX) {
			skip = a == PERF_CONTEXT_GUEST || a == PERF_CONTEXT_GUEST_KERNEL ||
			       a == PERF_CONTEXT_GUEST_USER || a == PERF_CONTEXT_HV;
			kernel_ctx = a == PERF_CONTEXT_KERNEL;
			/* each context starts at the IP it was interrupted at */
			leaf = 1;
			continue;
		}
		if (skip)
			continue;
		r = resolve(c, pid, time, a, !leaf, kernel_ctx);
		leaf = 0;
		for (uint32_t j = 0; j < r->n && nf < MAX_STACK; j++)
			frames[nf++] = c->pool[r->first + j];
	}
	while (nf-- > 0)
		node = profile_node(c->p, node, frames[nf]);
	return node;
}

static uint64_t chain_hash(const void *items, size_t id)
{
	return ((const struct chain *)items)[id].hash;
}

/* replay_epoch(), kept in `m` for as long as it holds (one lookup a change, not a sample) */
static uint64_t epoch_at(struct conv *c, struct epoch_memo *m, uint32_t pid, uint64_t time)
{
	if (!m->valid || m->pid != pid || time < m->span.from || time >= m->span.until) {
		m->epoch = replay_epoch(c->rp, pid, time, &m->span);
		m->pid = pid;
		m->valid = 1;
	}
	return m->epoch;
}

/* stack_node() through the chain cache, where the process's frames depend only on
 * its mappings (JIT code changes without them) */
static uint32_t stack_node_cached(struct conv *c, const struct perf_record *rec, uint32_t pid,
				  uint64_t time)
{
	const struct perf_sample *s = &rec->u.sample;
	int is_chain = s->has_callchain && s->nr_callchain;
	const uint64_t *words = is_chain ? s->callchain : &s->ip;
	size_t nw = is_chain ? (size_t)s->nr_callchain : 1, i;
	int kernel_ctx = rec->cpumode == PERF_RECORD_MISC_KERNEL;
	struct chain ch;

	if ((jit_procs_count(c->jits) && jit_procs_find(c->jits, pid) >= 0) || nw > MAX_STACK)
		return stack_node(c, words, nw, kernel_ctx, pid, time);
	ch.user_epoch = epoch_at(c, &c->user_epoch, pid, time);
	ch.kernel_epoch = epoch_at(c, &c->kernel_epoch, REPLAY_KERNEL_PID, time);
	ch.flags = (uint32_t)kernel_ctx | (uint32_t)is_chain << 1;
	ch.hash = hash_bytes(words, nw * sizeof(*words)) ^
		  hash_u64(ch.user_epoch ^ hash_u64(ch.kernel_epoch * 4 + ch.flags));
	id_index_reserve(&c->chain_index, c->nchains, chain_hash, c->chains);
	for (i = ch.hash & (c->chain_index.nslots - 1); c->chain_index.slots[i];
	     i = (i + 1) & (c->chain_index.nslots - 1)) {
		const struct chain *e = &c->chains[c->chain_index.slots[i] - 1];

		if (e->hash == ch.hash && e->n == nw && e->user_epoch == ch.user_epoch &&
		    e->kernel_epoch == ch.kernel_epoch && e->flags == ch.flags &&
		    memcmp(c->chain_words + e->first, words, nw * sizeof(*words)) == 0)
			return e->node;
	}
	ch.node = stack_node(c, words, nw, kernel_ctx, pid, time);
	if (c->nchain_words + nw > CHAIN_WORDS_MAX)
		return ch.node;
	ch.first = c->nchain_words;
	ch.n = (uint32_t)nw;
	if (c->nchain_words + nw > c->chain_words_cap)
		grow_array((void **)&c->chain_words, &c->chain_words_cap, c->nchain_words + nw,
			   sizeof(*c->chain_words));
	memcpy(c->chain_words + c->nchain_words, words, nw * sizeof(*words));
	c->nchain_words += nw;
	VEC_PUSH(c->chains, c->nchains, c->chains_cap, ch);
	c->chain_index.slots[i] = (uint32_t)c->nchains;
	return ch.node;
}

static void on_sample(struct conv *c, const struct perf_record *rec, uint64_t time)
{
	const struct perf_sample *s = &rec->u.sample;
	uint32_t pid = rec->sid.pid, tid = rec->sid.tid;
	struct pc_sample ps;
	const struct perf_event_desc *ev;

	memset(&ps, 0, sizeof(ps));
	ps.comm = replay_thread_name(c->rp, pid, tid, time);
	if (!wanted(c, pid, tid, ps.comm)) {
		c->st->samples_filtered++;
		return;
	}
	ev = rec->event >= 0 ? perf_reader_event(c->r, (size_t)rec->event) : NULL;
	ps.stack = stack_node_cached(c, rec, pid, time);
	ps.time = c->use_record_time ? time : 0;
	ps.pid = pid;
	ps.tid = tid;
	ps.cpu = rec->sid.has_cpu ? rec->sid.cpu : PC_NO_CPU;
	ps.event = (uint16_t)(rec->event >= 0 ? rec->event : 0);
	ps.count = 1;
	ps.period = s->has_period ? s->period : (ev && !ev->freq ? ev->sample_period : 1);
	profile_add_sample(c->p, &ps);
	c->st->samples++;
}

/*
 * What the frames of each mapping carry, for writers that say so (pprof's has_*
 * flags). Runs after the last mapping is interned: the flags are not part of a
 * mapping's identity from here on.
 */
static void mapping_flags(struct conv *c)
{
	struct profile *p = c->p;
	int inl = c->opt->sym.inline_frames && !c->opt->no_symbols;

	for (size_t i = 0; i < p->nframes; i++) {
		const struct pc_frame *f = &p->frames[i];
		struct pc_mapping *m;

		if (!f->mapping || !f->symbolized)
			continue;
		m = &p->mappings[f->mapping];
		m->has_functions = 1;
		m->has_filenames |= f->file != 0;
		m->has_line_numbers |= f->line != 0;
		/* inlined calls were looked for wherever there were source lines */
		m->has_inline_frames |= inl && (f->line != 0 || f->kind == FRAME_INLINED);
	}
}

/* Are the sampling events' times CLOCK_MONOTONIC, the clock jitdumps use (-k 1)? */
static int clock_monotonic(const struct perf_reader *r)
{
	size_t n = perf_reader_nevents(r);

	for (size_t i = 0; i < n; i++) {
		const struct perf_event_desc *e = perf_reader_event(r, i);

		if (!e->use_clockid || e->clockid != PERF_CLOCKID_MONOTONIC)
			return 0;
	}
	return n > 0;
}

/* Was the recording made on this machine (so that /tmp/perf-PID.map is its own)? */
static int same_host(const struct perf_reader *r)
{
	const char *rec = perf_reader_header(r)->hostname;
	char here[256];

	if (gethostname(here, sizeof(here)) != 0)
		return 0;
	here[sizeof(here) - 1] = '\0';
	return rec && strcmp(rec, here) == 0;
}

static void load_jit(struct conv *c)
{
	struct jit_search s;

	/* the search is set now: the clock and TIME_CONV are known after pass 1 */
	memset(&s, 0, sizeof(s));
	s.input_dir = c->input_dir;
	s.jit_dirs = c->opt->jit_dirs;
	s.njit_dirs = c->opt->njit_dirs;
	s.use_tmp_maps = same_host(c->r);
	s.clock_monotonic = clock_monotonic(c->r);
	s.time_conv = c->have_time_conv ? &c->time_conv : NULL;
	s.demangle = c->opt->sym.demangle;
	jit_procs_configure(c->jits, &s);
	jit_procs_load(c->jits, c->d, c->opt->quiet);
	c->jit_cache = xcalloc(jit_procs_count(c->jits) + 1, sizeof(*c->jit_cache));
}

/* Pass 2: samples. */
static int pass_samples(struct conv *c)
{
	struct perf_record rec;
	int ret;

	perf_reader_skip_type(c->r, 0);
	while ((ret = perf_reader_next(c->r, &rec)) == 1) {
		uint64_t t = rec_time(c, &rec);

		if (rec.type == PERF_RECORD_SAMPLE)
			on_sample(c, &rec, t);
	}
	return ret;
}

/* Name the kernel frames pass 2 interned by address, now that kernel symbols are loaded. */
static void name_kernel_frames(struct conv *c)
{
	struct profile *p = c->p;
	char buf[512];

	for (size_t i = 0; i < c->npending; i++) {
		struct pc_frame *f = &p->frames[c->pending[i]];
		struct sym_frame sf;
		const char *kmod = NULL;

		if (f->func)
			continue; /* the same frame pending twice */
		if (symbolizer_kernel(c->sym, f->addr, c->kernel_bid, c->kernel_bid_size, &sf,
				      &kmod)) {
			f->symbolized = 1;
			f->func = profile_str(p, sf.name);
			f->system_name = f->func;
			if (kmod) {
				snprintf(buf, sizeof(buf), "[%s]", kmod);
				f->module = profile_str(p, buf);
			}
			continue;
		}
		if (f->mapping)
			snprintf(buf, sizeof(buf), "%s+0x%" PRIx64,
				 module_name(profile_text(p, p->mappings[f->mapping].file)),
				 f->addr - p->mappings[f->mapping].start);
		else
			snprintf(buf, sizeof(buf), "[unknown]");
		f->func = profile_str(p, buf);
	}
	/* the names took part in no lookup yet: only the interning index is stale */
	profile_reindex_frames(p);
}

/*
 * For the summary: how many samples have at least one frame without a symbol, and
 * where those frames are (per object, the kernel, no mapping), each sample counted
 * once per place.
 */
static void count_unsymbolized(struct conv *c)
{
	const struct profile *p = c->p;
	size_t ndsos = replay_ndsos(c->rp);
	uint64_t *mark = xcalloc(ndsos + 2, sizeof(*mark));

	c->dso_unsym = xcalloc(ndsos ? ndsos : 1, sizeof(*c->dso_unsym));
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
			dso = f->mapping && f->mapping < c->mapping_dso_cap ? c->mapping_dso[f->mapping]
									  : UINT32_MAX;
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
				c->kernel_unsym += n;
			else if (slot == ndsos + 1)
				c->nomap_unsym += n;
			else
				c->dso_unsym[slot] += n;
		}
		c->st->samples_unsymbolized += any ? n : 0;
	}
	free(mark);
}

static int is_clock_event(const struct perf_event_desc *e)
{
	/* PERF_TYPE_SOFTWARE cpu-clock (0) and task-clock (1) count nanoseconds */
	return e->type == PERF_TYPE_SOFTWARE &&
	       (e->config == PERF_COUNT_SW_CPU_CLOCK || e->config == PERF_COUNT_SW_TASK_CLOCK);
}

static void copy_header(struct conv *c)
{
	const struct perf_header_info *h = perf_reader_header(c->r);
	struct profile *p = c->p;
	const struct perf_build_id *kb = header_build_id(h, "[kernel.kallsyms]");

	p->hostname = h->hostname ? profile_str(p, h->hostname) : 0;
	p->osrelease = h->osrelease ? profile_str(p, h->osrelease) : 0;
	p->perf_version = h->version ? profile_str(p, h->version) : 0;
	p->arch = h->arch ? profile_str(p, h->arch) : 0;
	p->cmdline = h->cmdline ? profile_str(p, h->cmdline) : 0;
	p->cpudesc = h->cpudesc ? profile_str(p, h->cpudesc) : 0;
	p->nr_cpus = h->nr_cpus_online;
	if (h->has_clock_data) {
		p->has_wall_clock = 1;
		p->wall_ns = h->clock_data_wall_ns;
		p->clock_ns = h->clock_data_clock_ns;
	}
	if (kb) {
		c->kernel_bid = kb->id;
		c->kernel_bid_size = kb->id_size;
	}
	c->use_record_time = 0;
	for (size_t i = 0; i < perf_reader_nevents(c->r); i++) {
		const struct perf_event_desc *e = perf_reader_event(c->r, i);
		struct pc_event pe;

		memset(&pe, 0, sizeof(pe));
		pe.name = profile_str(p, e->name ? e->name : "");
		pe.is_clock = is_clock_event(e);
		pe.unit = profile_str(p, pe.is_clock ? "nanoseconds" : "count");
		pe.type = e->type;
		pe.config = e->config;
		pe.sample_period = e->sample_period;
		pe.freq = e->freq;
		profile_add_event(p, &pe);
		if (e->sample_type & PERF_SAMPLE_TIME)
			c->use_record_time = 1;
	}
	p->has_time = c->use_record_time;
}

/* Can the recording hold kernel frames? (Any event that did not exclude the kernel.) */
static int records_kernel(const struct perf_reader *r)
{
	for (size_t i = 0; i < perf_reader_nevents(r); i++)
		if (!perf_reader_event(r, i)->exclude_kernel)
			return 1;
	return 0;
}

static int dso_cmp_count(const void *a, const void *b, void *arg)
{
	const uint64_t *counts = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (counts[y] > counts[x]) - (counts[y] < counts[x]);
}

static void summary(struct conv *c)
{
	const struct perf_reader_stats *rs = perf_reader_stats(c->r);
	struct convert_stats *st = c->st;
	uint32_t *order;
	size_t n = 0;

	st->lost_events = rs->lost_events;
	st->lost_samples = rs->lost_samples;
	st->skipped_records = rs->skipped_bad + rs->skipped_unknown;
	if (c->opt->quiet)
		return;
	diag_note(c->d, "%" PRIu64 " samples, %zu unique stacks, %zu events%s", st->samples,
		  c->p->nnodes - 1, c->p->nevents,
		  st->samples_filtered ? " (others filtered out)" : "");
	if (rs->lost_events || rs->lost_samples)
		diag_note(c->d, "perf lost %" PRIu64 " events and %" PRIu64 " samples while recording",
			  rs->lost_events, rs->lost_samples);
	if (rs->skipped_bad)
		diag_note(c->d, "%" PRIu64 " damaged records skipped", rs->skipped_bad);
	if (c->opt->no_symbols)
		return;
	count_unsymbolized(c);
	if (!st->samples_unsymbolized)
		return;
	diag_note(c->d, "%" PRIu64 " samples have frames with no symbol:", st->samples_unsymbolized);
	order = xmalloc((replay_ndsos(c->rp) ? replay_ndsos(c->rp) : 1) * sizeof(*order));
	for (size_t i = 0; i < replay_ndsos(c->rp); i++)
		if (c->dso_unsym[i])
			order[n++] = (uint32_t)i;
	qsort_r(order, n, sizeof(*order), dso_cmp_count, c->dso_unsym);
	for (size_t i = 0; i < n && i < 10; i++) {
		const struct replay_dso *d = replay_dso_get(c->rp, order[i]);

		diag_note(c->d, "  %8" PRIu64 " in %s (%s)", c->dso_unsym[order[i]],
			  profile_text(c->p, d->path),
			  sym_obj_problem_str(symbolizer_problem(c->sym, order[i])));
	}
	if (n > 10)
		diag_note(c->d, "  ... and %zu more files", n - 10);
	if (c->kernel_unsym)
		diag_note(c->d, "  %8" PRIu64 " in the kernel (%s)", c->kernel_unsym,
			  symbolizer_kernel_source(c->sym) ? symbolizer_kernel_source(c->sym)
							     : "no kernel symbols");
	if (c->nomap_unsym)
		diag_note(c->d, "  %8" PRIu64 " at addresses in no recorded mapping", c->nomap_unsym);
	free(order);
}

int convert_read(const struct convert_options *o, struct profile *p, struct convert_stats *st,
		 struct diag *d)
{
	struct conv c;
	struct sym_options so = o->sym;
	char *dir = NULL;
	int ret = -1;

	memset(&c, 0, sizeof(c));
	memset(st, 0, sizeof(*st));
	c.opt = o;
	c.p = p;
	c.st = st;
	c.d = d;
	c.r = perf_reader_open(o->input, d);
	if (!c.r)
		return -1;
	if (!so.input_dir) {
		if (strcmp(o->input, "-") == 0) {
			so.input_dir = ".";
		} else {
			char *copy = xstrdup(o->input);
			size_t len = strlen(copy);

			/* a --threads directory: its files' neighbours are beside the directory */
			while (len > 1 && copy[len - 1] == '/')
				copy[--len] = '\0';
			dir = xstrdup(dirname(copy));
			free(copy);
			so.input_dir = dir;
		}
	}
	c.sym = symbolizer_new(&so, d);
	c.rp = replay_new(&p->strings);
	c.input_dir = so.input_dir;
	{
		struct jit_search js;

		memset(&js, 0, sizeof(js));
		c.jits = jit_procs_new(&p->strings, &js);
	}
	u64map_init(&c.map_ids);
	u64map_init(&c.addr_cache);
	u64map_init(&c.nomap_cache);
	copy_header(&c);
	if (!o->no_symbols && records_kernel(c.r)) {
		symbolizer_kernel_prefetch(c.sym, c.kernel_bid, c.kernel_bid_size);
		c.defer_kernel = 1;
	}
	c.defer_user = !o->no_symbols;
	if (!o->no_symbols)
		c.ra = readahead_new(c.sym, c.rp, &p->strings, perf_reader_header(c.r));
	if (pass_state(&c) < 0)
		goto out;
	replay_finish(c.rp);
	if (!o->no_symbols)
		load_jit(&c);
	perf_reader_rewind(c.r);
	if (pass_samples(&c) < 0)
		goto out;
	if (c.defer_user)
		expand_user_frames(&c);
	symbolizer_prefetch_stop(c.sym);
	if (c.defer_kernel)
		name_kernel_frames(&c);
	mapping_flags(&c);
	if (!p->aggregate)
		profile_sort_samples(p);
	summary(&c);
	ret = 0;
out:
	u64map_release(&c.map_ids);
	free(c.chains);
	id_index_release(&c.chain_index);
	free(c.chain_words);
	u64map_release(&c.addr_cache);
	u64map_release(&c.nomap_cache);
	readahead_free(c.ra);
	free(c.res);
	free(c.pool);
	free(c.dso_unsym);
	free(c.mapping_dso);
	free(c.pending);
	free(c.upending);
	if (c.jit_cache)
		for (size_t i = 0; i < jit_procs_count(c.jits); i++)
			u64map_release(&c.jit_cache[i]);
	free(c.jit_cache);
	jit_procs_free(c.jits);
	replay_free(c.rp);
	symbolizer_free(c.sym);
	perf_reader_close(c.r);
	free(dir);
	return ret;
}
