/* resolve: an address of a process at a time into the profile's frames, each once. */
#include "convert/resolve.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A resolved address: a run of frame ids in the pool, innermost first. Its handle is
 * its index in res, or for one frame (nearly all: every placeholder and kernel frame),
 * RES_ONE | the frame's id with nothing in res or the pool. */
struct resolved {
	uint32_t first, n;
};
#define RES_ONE 0x80000000u

struct resolver {
	struct resolver_config c;
	struct u64map map_ids;        /* replay_map id + 1 -> profile mapping */
	struct u64map addr_cache;     /* (mapping, offset, return) -> resolved */
	struct u64map nomap_cache;    /* address -> resolved, for addresses in no mapping */
	struct u64map obj_cache;      /* with the profile's frames_by_object: (dso, file
					 offset, return) -> resolved, for every process */
	struct resolved *res;
	size_t nres, res_cap;
	uint32_t *pool;
	size_t npool, pool_cap;
	uint32_t *mapping_dso;        /* profile mapping -> replay dso */
	size_t mapping_dso_cap;
	uint32_t *kpending;           /* defer_kernel: frames to name */
	size_t nkpending, kpending_cap;
	struct user_pending *upending; /* defer_user: placeholders to expand */
	size_t nupending, upending_cap;
	/* per JIT table, frames by (code, offset in it, return address) */
	struct u64map *jit_cache;
	size_t njit_cache;
	/* names interned once, not once per address (a function's thousands of sampled
	 * addresses, its name 200 KB long, or a perf map's name of megabytes):
	 * the symbolizer's strings by address (they stay put and unchanged until
	 * symbolizer_free, after this), a JIT table's code by (fallback, code) */
	struct u64map sym_strs;       /* a symbolizer string's address -> profile string + 1 */
	struct u64map *jit_names;     /* per JIT table: code key -> index in jit_named + 1 */
	struct jit_named { uint32_t func, system_name; } *jit_named;
	size_t njit_named, jit_named_cap;
	struct res_memo *memo;        /* RES_MEMO_SIZE entries, made on first use */
	uint32_t one;                 /* resolver_frames()'s answer of one frame */
};

/*
 * What resolve() said for one address in one pair of epochs (the same mappings live:
 * the same mapping found, the same key into addr_cache or nomap_cache), kept in a
 * direct-mapped table: a repeated frame costs one probe instead of a search of the
 * process's mappings and two hash lookups. Not for JIT code, whose table changes
 * within an epoch, nor for the addresses resolve_new() is asked afresh each time.
 */
struct res_memo {
	uint64_t addr, user_epoch, kernel_epoch;
	uint32_t flags;               /* 0: empty; else 4 | kernel context << 1 | return */
	uint32_t idx;                 /* its handle */
};
#define RES_MEMO_SIZE 4096 /* a power of two */

struct resolver *resolver_new(const struct resolver_config *c)
{
	struct resolver *r = xcalloc(1, sizeof(*r));

	r->c = *c;
	u64map_init(&r->map_ids);
	u64map_init(&r->addr_cache);
	u64map_init(&r->nomap_cache);
	u64map_init(&r->obj_cache);
	u64map_init(&r->sym_strs);
	return r;
}

void resolver_free(struct resolver *r)
{
	if (!r)
		return;
	resolver_trim(r); /* the caches by address, the JIT names, the memo */
	free(r->mapping_dso);
	free(r->kpending);
	free(r->upending);
	u64map_release(&r->sym_strs);
	free(r);
}

void resolver_trim(struct resolver *r)
{
	u64map_release(&r->map_ids);
	u64map_release(&r->addr_cache);
	u64map_release(&r->nomap_cache);
	u64map_release(&r->obj_cache);
	u64map_init(&r->map_ids);
	u64map_init(&r->addr_cache);
	u64map_init(&r->nomap_cache);
	u64map_init(&r->obj_cache);
	free(r->res);
	free(r->pool);
	r->res = NULL;
	r->pool = NULL;
	r->nres = r->res_cap = r->npool = r->pool_cap = 0;
	for (size_t i = 0; i < r->njit_cache; i++) {
		u64map_release(&r->jit_cache[i]);
		u64map_release(&r->jit_names[i]);
	}
	free(r->jit_cache);
	free(r->jit_names);
	free(r->jit_named);
	r->jit_cache = r->jit_names = NULL;
	r->jit_named = NULL;
	r->njit_cache = r->njit_named = r->jit_named_cap = 0;
	free(r->memo);
	r->memo = NULL;
}

void resolver_user_pending_done(struct resolver *r)
{
	free(r->upending);
	r->upending = NULL;
	r->nupending = r->upending_cap = 0;
}

const char *resolve_module_name(const char *path)
{
	return path[0] == '[' ? path : path_base(path);
}

static uint32_t mapping_for(struct resolver *r, const struct replay_map *m)
{
	/* a replay map may move while the replay advances: its id is its identity */
	uint64_t key = (uint64_t)m->id + 1;
	uint32_t *v = u64map_get(&r->map_ids, key);
	const struct replay_dso *dso;
	struct pc_mapping pm;
	char hex[PERF_BUILD_ID_HEX_SIZE];
	uint32_t id;

	if (v)
		return *v;
	dso = replay_dso_get(r->c.rp, m->dso);
	memset(&pm, 0, sizeof(pm));
	pm.start = m->start;
	pm.limit = m->end;
	pm.offset = m->pgoff;
	pm.file = dso->path;
	hex_bytes(hex, dso->build_id, dso->build_id_size);
	pm.build_id = profile_str(r->c.p, hex);
	pm.kind = dso->kernel ? FRAME_KERNEL : FRAME_NATIVE;
	id = profile_mapping(r->c.p, &pm);
	u64map_put(&r->map_ids, key, id);
	if (id >= r->mapping_dso_cap) {
		size_t old = r->mapping_dso_cap;

		grow_array((void **)&r->mapping_dso, &r->mapping_dso_cap, id + 1,
			   sizeof(*r->mapping_dso));
		memset(r->mapping_dso + old, 0xff, (r->mapping_dso_cap - old) * sizeof(*r->mapping_dso));
	}
	r->mapping_dso[id] = m->dso;
	return id;
}

uint32_t resolver_mapping_dso(const struct resolver *r, uint32_t mapping)
{
	return mapping && mapping < r->mapping_dso_cap ? r->mapping_dso[mapping] : UINT32_MAX;
}

static uint32_t new_resolved(struct resolver *r, const uint32_t *frames, uint32_t n)
{
	struct resolved x;

	if (n == 1 && frames[0] < RES_ONE - 1) /* (not UINT32_MAX: "none" to resolve()) */
		return RES_ONE | frames[0];
	x.first = (uint32_t)r->npool;
	x.n = n;
	for (uint32_t i = 0; i < n; i++)
		VEC_PUSH(r->pool, r->npool, r->pool_cap, frames[i]);
	VEC_PUSH(r->res, r->nres, r->res_cap, x);
	return (uint32_t)r->nres - 1;
}

/* The profile's id of a symbolizer string `s` (NULL: ""). */
static uint32_t sym_str(struct resolver *r, const char *s)
{
	uint64_t key = (uint64_t)(uintptr_t)s;
	uint32_t *v, id;

	if (!s)
		return profile_str(r->c.p, "");
	v = u64map_get(&r->sym_strs, key);
	if (v)
		return *v - 1;
	id = profile_str(r->c.p, s);
	u64map_put(&r->sym_strs, key, id + 1);
	return id;
}

uint32_t resolver_intern(struct resolver *r, const struct replay_map *m, uint32_t mapping,
			 uint64_t addr, int kernel, const struct sym_frame *sf, size_t n,
			 const char *kmod, uint32_t *ids)
{
	struct profile *p = r->c.p;
	const struct replay_dso *dso = m ? replay_dso_get(r->c.rp, m->dso) : NULL;
	const char *path = dso ? profile_text(p, dso->path) : NULL;
	struct pc_frame f;
	char buf[512];

	memset(&f, 0, sizeof(f));
	f.addr = addr;
	f.mapping = mapping;
	f.kind = kernel ? FRAME_KERNEL : FRAME_NATIVE;
	if (n == 0) {
		f.symbolized = 0;
		if (m) {
			uint64_t off = kernel ? addr - m->start : resolve_user_offset(m, addr);

			snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, resolve_module_name(path), off);
			f.module = profile_str(p, resolve_module_name(path));
		} else {
			snprintf(buf, sizeof(buf), "[unknown]");
			f.module = profile_str(p, kernel ? "[kernel.kallsyms]" : "[unknown]");
		}
		f.func = profile_str(p, buf);
		ids[0] = profile_frame(p, &f);
		return 1;
	}
	if (kernel) {
		if (kmod) {
			snprintf(buf, sizeof(buf), "[%s]", kmod);
			f.module = profile_str(p, buf);
		} else {
			f.module = profile_str(p, "[kernel.kallsyms]");
		}
	} else {
		f.module = profile_str(p, resolve_module_name(path));
	}
	for (size_t i = 0; i < n; i++) {
		f.symbolized = 1;
		f.func = sym_str(r, sf[i].name);
		f.system_name = sym_str(r, sf[i].system_name);
		f.file = sym_str(r, sf[i].file);
		f.line = sf[i].line;
		f.column = sf[i].column;
		if (!kernel)
			f.kind = sf[i].inlined ? FRAME_INLINED : FRAME_NATIVE;
		ids[i] = profile_frame(p, &f);
	}
	return (uint32_t)n;
}

/* Symbolize `addr` of mapping `m` (NULL: in no mapping). `ret`: a return address. */
static uint32_t resolve_new(struct resolver *r, const struct replay_map *m, uint32_t mapping,
			    uint64_t addr, int ret, int kernel_ctx)
{
	struct sym_frame sf[RESOLVE_MAX_INLINE];
	uint32_t ids[RESOLVE_MAX_INLINE];
	struct pc_frame f;
	size_t n = 0;
	struct profile *p = r->c.p;
	const struct replay_dso *dso = m ? replay_dso_get(r->c.rp, m->dso) : NULL;
	const char *path = dso ? profile_text(p, dso->path) : NULL;
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
		ids[0] = profile_frame(p, &f);
		return new_resolved(r, ids, 1);
	}
	if (kernel && r->c.defer_kernel) {
		/* named after pass 2 (fixups_name_kernel); the address makes it unique */
		f.module = profile_str(p, "[kernel.kallsyms]");
		ids[0] = profile_frame(p, &f);
		VEC_PUSH(r->kpending, r->nkpending, r->kpending_cap, ids[0]);
		return new_resolved(r, ids, 1);
	}
	if (!kernel && dso && r->c.defer_user) {
		/* a placeholder until fixups_expand_user(): no name yet, and `line`
		 * telling a return address from a leaf at the same address */
		struct user_pending u = { 0, m->dso };

		f.line = ret ? 1 : 0;
		u.frame = ids[0] = profile_frame(p, &f);
		VEC_PUSH(r->upending, r->nupending, r->upending_cap, u);
		symbolizer_prefetch(r->c.sym, m->dso, path, dso->build_id, dso->build_id_size,
				    resolve_user_offset(m, addr), ret);
		return new_resolved(r, ids, 1);
	}
	if (!r->c.no_symbols) {
		if (kernel) {
			if (symbolizer_kernel(r->c.sym, addr, r->c.kernel_bid, r->c.kernel_bid_size,
					      &sf[0], &kmod))
				n = 1;
		} else if (dso) {
			n = symbolizer_native(r->c.sym, m->dso, path, dso->build_id,
					      dso->build_id_size, resolve_user_offset(m, addr), ret,
					      sf, RESOLVE_MAX_INLINE);
		}
	}
	return new_resolved(r, ids, resolver_intern(r, m, mapping, addr, kernel, sf, n, kmod, ids));
}

/* JIT code at `addr` in process table `t` at `time`: 1 and its handle in *out, or 0
 * when the table has no code there then. `m`: the anonymous mapping around it, or NULL; with
 * `in_file`, `m` is a file's mapping, and only code a jitdump loaded counts (V8's
 * builtins, in node's own text), as perf inject --jit maps it over the file. */
static int resolve_jit(struct resolver *r, int t, const struct replay_map *m, uint64_t addr,
		       int ret, uint64_t time, int in_file, uint32_t *out)
{
	struct jitcode_frame jf;
	struct pc_frame f;
	struct pc_mapping pm;
	struct profile *p = r->c.p;
	uint32_t id, *v, idx;
	uint64_t key = 0, off, fallback = 0;
	const char *module = jit_procs_module(r->c.jits, t);
	/* a return address's call is the byte before it */
	uint64_t at = ret ? addr - 1 : addr;

	if (!r->jit_cache) {
		r->njit_cache = jit_procs_count(r->c.jits);
		r->jit_cache = xcalloc(r->njit_cache + 1, sizeof(*r->jit_cache));
		r->jit_names = xcalloc(r->njit_cache + 1, sizeof(*r->jit_names));
	}
	if (!jitcode_lookup(jit_procs_table(r->c.jits, t), time, at, &jf)) {
		if (in_file || !jit_procs_fallback(r->c.jits, t, at, r->c.d, &jf, &module))
			return 0;
		fallback = 1ULL << 63;
	} else if (in_file && jf.from_map) {
		return 0;
	}
	if (in_file)
		m = NULL;
	off = addr - jf.start;
	if (off < (1ULL << 30)) {
		key = ((((uint64_t)jf.code << 32) | (off << 1) | (uint64_t)ret) + 1) | fallback;
		v = u64map_get(&r->jit_cache[t], key);
		if (v) {
			*out = *v;
			return 1;
		}
	}
	memset(&pm, 0, sizeof(pm));
	pm.start = m ? m->start : jf.start;
	pm.limit = m ? m->end : jf.start + (jf.size ? jf.size : 1);
	pm.file = profile_str(p, module);
	pm.kind = FRAME_JIT;
	memset(&f, 0, sizeof(f));
	f.addr = addr;
	f.mapping = profile_mapping(p, &pm);
	f.kind = FRAME_JIT;
	f.symbolized = 1;
	/* a code's names are the same at each of its addresses */
	v = u64map_get(&r->jit_names[t], (((uint64_t)jf.code << 1) | (fallback != 0)) + 1);
	if (!v) {
		struct jit_named n;

		n.func = profile_str(p, jf.name);
		n.system_name = profile_str(p, jf.raw_name ? jf.raw_name : jf.name);
		VEC_PUSH(r->jit_named, r->njit_named, r->jit_named_cap, n);
		u64map_put(&r->jit_names[t], (((uint64_t)jf.code << 1) | (fallback != 0)) + 1,
			   (uint32_t)r->njit_named);
		v = u64map_get(&r->jit_names[t], (((uint64_t)jf.code << 1) | (fallback != 0)) + 1);
	}
	f.func = r->jit_named[*v - 1].func;
	f.system_name = r->jit_named[*v - 1].system_name;
	f.file = profile_str(p, jf.file ? jf.file : "");
	f.line = jf.line;
	f.module = pm.file;
	id = profile_frame(p, &f);
	idx = new_resolved(r, &id, 1);
	if (key)
		u64map_put(&r->jit_cache[t], key, idx);
	*out = idx;
	return 1;
}

/* The resolved frames of one address, from the cache or symbolized now. */
/* resolve() without its memo: *kept is set to the handle when the answer is one every
 * later call in the same epochs would give (left alone otherwise). */
static uint32_t resolve_now(struct resolver *r, const struct sample_ctx *c, uint64_t addr,
			    int ret, int kernel_ctx, uint32_t *kept)
{
	const struct replay_map *m;
	uint32_t mapping = 0, *v, idx;
	uint64_t key;

	m = replay_proc_find(kernel_ctx ? c->kernel : c->proc, c->time, addr);
	/* a user-mode address up there is the vsyscall page's or the kernel's (as perf
	 * looks it up); one that no kernel map holds either is a stray frame pointer's,
	 * not a kernel frame */
	if (!m && !kernel_ctx && addr >= X86_64_KERNEL_START) {
		m = replay_proc_find(c->kernel, c->time, addr);
		kernel_ctx = m != NULL;
	}
	if (!kernel_ctx && !r->c.no_symbols && c->jit_table >= 0) {
		int in_file = m && !replay_dso_get(r->c.rp, m->dso)->anonymous;
		uint32_t x;

		if (resolve_jit(r, c->jit_table, m, addr, ret, c->time, in_file, &x))
			return x;
	}
	if (!m) {
		key = (addr ^ ((uint64_t)kernel_ctx << 63)) * 2 + (uint64_t)ret + 1;
		v = u64map_get(&r->nomap_cache, key);
		if (v)
			idx = *v;
		else {
			idx = resolve_new(r, NULL, 0, addr, ret, kernel_ctx);
			u64map_put(&r->nomap_cache, key, idx);
		}
		*kept = idx;
		return idx;
	}
	if (r->c.p->frames_by_object && !kernel_ctx) {
		const struct replay_dso *dso = replay_dso_get(r->c.rp, m->dso);
		uint64_t off = resolve_user_offset(m, addr);

		/* the same code of the same file in every process: one frame, the first
		 * process's (the thousands of short processes of a machine's recording
		 * map the same binaries each at its own address) */
		if (!dso->kernel && !dso->anonymous && off < (1ULL << 40) && m->dso < (1u << 23)) {
			key = ((uint64_t)m->dso << 41) | (off << 1) | (uint64_t)ret;
			v = u64map_get(&r->obj_cache, key);
			if (v) {
				idx = *v;
			} else {
				idx = resolve_new(r, m, mapping_for(r, m), addr, ret, kernel_ctx);
				u64map_put(&r->obj_cache, key, idx);
			}
			*kept = idx;
			return idx;
		}
	}
	mapping = mapping_for(r, m);
	{
		uint64_t off = addr - m->start;

		if (off < (1ULL << 40) && mapping < (1u << 23)) {
			key = ((uint64_t)mapping << 41) | (off << 1) | (uint64_t)ret;
			v = u64map_get(&r->addr_cache, key);
			if (v) {
				idx = *v;
			} else {
				idx = resolve_new(r, m, mapping, addr, ret, kernel_ctx);
				u64map_put(&r->addr_cache, key, idx);
			}
			*kept = idx;
		} else {
			idx = resolve_new(r, m, mapping, addr, ret, kernel_ctx);
		}
	}
	return idx;
}

static uint32_t resolve(struct resolver *r, const struct sample_ctx *c, uint64_t addr, int ret,
			int kernel_ctx)
{
	uint32_t flags = 4u | (uint32_t)!!kernel_ctx << 1 | (uint32_t)!!ret, kept = UINT32_MAX;
	uint32_t x;
	struct res_memo *e;
	uint64_t h;

	if (c->jit_table >= 0)
		return resolve_now(r, c, addr, ret, kernel_ctx, &kept);
	if (!r->memo)
		r->memo = xcalloc(RES_MEMO_SIZE, sizeof(*r->memo));
	h = hash_u64(addr ^ c->user_epoch * 0x9e3779b97f4a7c15ULL ^ c->kernel_epoch ^ flags);
	e = &r->memo[h & (RES_MEMO_SIZE - 1)];
	if (e->addr == addr && e->flags == flags && e->user_epoch == c->user_epoch &&
	    e->kernel_epoch == c->kernel_epoch)
		return e->idx;
	x = resolve_now(r, c, addr, ret, kernel_ctx, &kept);
	if (kept != UINT32_MAX) {
		e->addr = addr;
		e->user_epoch = c->user_epoch;
		e->kernel_epoch = c->kernel_epoch;
		e->flags = flags;
		e->idx = kept;
	}
	return x;
}

const uint32_t *resolver_frames(struct resolver *r, const struct sample_ctx *c, uint64_t addr,
				int ret, int kernel, uint32_t *n)
{
	uint32_t h = resolve(r, c, addr, ret, kernel);

	if (h & RES_ONE) {
		r->one = h & ~RES_ONE;
		*n = 1;
		return &r->one;
	}
	*n = r->res[h].n;
	return r->pool + r->res[h].first;
}

const struct user_pending *resolver_user_pending(const struct resolver *r, size_t *n)
{
	*n = r->nupending;
	return r->upending;
}

const uint32_t *resolver_kernel_pending(const struct resolver *r, size_t *n)
{
	*n = r->nkpending;
	return r->kpending;
}
