/* symbolizer_kernel: kernel symbols, from the kallsyms that matches the recorded kernel. */
#include "symbolize/symbolizer_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

/* How one kind of kallsyms cache entry is read and written: the entry `file` if it
 * was made from what `arg` says (NULL, and *damage when it is damaged), and `k`
 * written as one, on the cache's writing thread. */
struct kcache_kind {
	struct kallsyms *(*open)(const char *file, const void *arg, const char **damage);
	void (*write)(struct kallsyms *k, const char *file, const void *arg,
		      const struct cache_ctx *cache);
};

/* The table of `path` from the cache entry `key`, else parsed and the entry made. */
static struct kallsyms *through_cache(struct symbolizer *s, const char *path, const char *key,
				      const struct kcache_kind *kind, const void *arg,
				      char *err, size_t errlen)
{
	char *file = cache_entry_path(s->opt.cache_dir, CACHE_KALLSYMS, key, 0);
	const char *damage = NULL;
	struct kallsyms *k = file ? kind->open(file, arg, &damage) : NULL;

	if (damage)
		cache_damaged(&s->cache, file, damage);
	if (!k) {
		k = kallsyms_load(path, err, errlen);
		free(file);
		file = k ? cache_entry_path(s->opt.cache_dir, CACHE_KALLSYMS, key, 1) : NULL;
		if (file)
			kind->write(k, file, arg, &s->cache);
	}
	free(file);
	return k;
}

/* A saved kallsyms file, by the recorded kernel's build id. */
struct saved_src {
	const char *path;
	struct file_id id;
	const uint8_t *bid;
	size_t bidlen;
};

static struct kallsyms *saved_open(const char *file, const void *arg, const char **damage)
{
	const struct saved_src *a = arg;

	return kallsyms_cache_open(file, a->path, &a->id, a->bid, a->bidlen, damage);
}

static void saved_write(struct kallsyms *k, const char *file, const void *arg,
			const struct cache_ctx *cache)
{
	const struct saved_src *a = arg;

	kallsyms_cache_write(k, file, a->path, &a->id, a->bid, a->bidlen, cache);
}

/*
 * Kernel symbols from the kallsyms file `path`: through the cache when the kernel's
 * build id is known (a parsed table mapped, made on first use), else parsed.
 */
static struct kallsyms *load_kallsyms(struct symbolizer *s, const char *path,
				      const uint8_t *bid, size_t bidlen, char *err,
				      size_t errlen)
{
	static const struct kcache_kind saved = { saved_open, saved_write };
	struct saved_src a = { path, { 0 }, bid, bidlen };
	char hex[2 * 20 + 1];

	if (!s->opt.cache_dir || !bidlen || bidlen > 20 || file_id_of(path, &a.id) != 0)
		return kallsyms_load(path, err, errlen);
	hex_bytes(hex, bid, bidlen);
	return through_cache(s, path, hex, &saved, &a, err, errlen);
}

/* The running kernel's, as kallsyms_live_id describes it now. */
struct live_src {
	struct kallsyms_live src;
	struct kallsyms_live_id id;
};

static struct kallsyms *live_open(const char *file, const void *arg, const char **damage)
{
	const struct live_src *a = arg;

	return kallsyms_live_open(file, &a->src, &a->id, damage);
}

static void live_write(struct kallsyms *k, const char *file, const void *arg,
		       const struct cache_ctx *cache)
{
	const struct live_src *a = arg;

	kallsyms_live_write(k, file, &a->id, cache);
}

/*
 * The running kernel's symbols from its kallsyms file `path` (/proc/kallsyms): the
 * core kernel's part through the cache (see kallsyms_live_id), the rest parsed when
 * a lookup needs it; parsed whole without a cache.
 */
static struct kallsyms *load_live_kallsyms(struct symbolizer *s, const char *path,
					   char *err, size_t errlen)
{
	static const struct kcache_kind live = { live_open, live_write };
	struct live_src *a = xmalloc(sizeof(*a));
	struct kallsyms *k;
	char hex[5 + 2 * 64 + 1];

	a->src = (struct kallsyms_live)KALLSYMS_LIVE;
	a->src.kallsyms = path;
	if (!s->opt.cache_dir || kallsyms_live_id(&a->src, &a->id) != 0) {
		free(a);
		return kallsyms_load(path, err, errlen);
	}
	memcpy(hex, "live-", 5);
	hex_bytes(hex + 5, a->id.build_id, a->id.build_id_size);
	k = through_cache(s, path, hex, &live, a, err, errlen);
	free(a);
	return k;
}

/* With no kernel build id recorded: 1 when the running kernel's release is the recorded
 * one; else 0, with why its /proc/kallsyms is not used in s->kernel_source. */
static int same_release(struct symbolizer *s)
{
	struct utsname u;
	const char *running = uname(&u) == 0 ? u.release : "";

	if (s->kernel_release[0] && strcmp(s->kernel_release, running) == 0)
		return 1;
	if (!s->kernel_release[0])
		snprintf(s->kernel_source, sizeof(s->kernel_source),
			 "the recording names neither its kernel's build id nor its release, so "
			 "/proc/kallsyms may be another kernel's: give --kallsyms FILE");
	else
		snprintf(s->kernel_source, sizeof(s->kernel_source),
			 "recorded on %.255s, running %.64s, no kernel build id recorded: give "
			 "--kallsyms FILE",
			 s->kernel_release, running[0] ? running : "an unknown kernel");
	return 0;
}

/*
 * A recording that names no kernel build id (perf record --switch-output writes none):
 * the kallsyms saved for its kernel's release in the build-id folder,
 * [kernel.kallsyms]/release-RELEASE/kallsyms, as perfconv-record saves it for the
 * sender, whose unit can read neither /proc/kallsyms nor its addresses. Matched by
 * release only, as /proc/kallsyms would be. 1 when it gave symbols.
 */
static int saved_by_release(struct symbolizer *s)
{
	char err[512], *path;

	if (!s->places.buildid_dir || !s->kernel_release[0] || strchr(s->kernel_release, '/') ||
	    strcmp(s->kernel_release, "..") == 0)
		return 0;
	path = xasprintf("%s/[kernel.kallsyms]/release-%s/kallsyms", s->places.buildid_dir,
			 s->kernel_release);
	if (access(path, F_OK) == 0) {
		s->ksyms = load_kallsyms(s, path, NULL, 0, err, sizeof(err));
		snprintf(s->kernel_source, sizeof(s->kernel_source), "%s%s%s", path,
			 s->ksyms ? "" : ": ", s->ksyms ? "" : err);
		if (s->ksyms)
			s->kernel_unverified = "matched by release only: the recording names no "
					       "kernel build id";
	}
	free(path);
	return s->ksyms != NULL;
}

/* Runs on the prefetch thread or the main one: touches only the kernel fields. The
 * places of locate's table in turn, until one gives symbols. */
void sym_load_kernel(struct symbolizer *s, const uint8_t *bid, size_t bidlen)
{
	struct loc_query q = { .build_id = bid, .build_id_size = bidlen };
	struct loc_list places;
	uint8_t live[64];
	size_t nlive = kallsyms_live_build_id(live, sizeof(live));
	int same = nlive == bidlen && memcmp(live, bid, nlive) == 0;
	char err[512];

	locate_list(&s->places, LOC_KALLSYMS, &q, &places);
	for (size_t i = 0; i < places.n; i++) {
		const struct loc_candidate *c = &places.v[i];

		/* perf inject --jit poisons perf's copy: it writes the running kernel's
		 * kallsyms there, whatever kernel was recorded */
		if (c->place == LOC_BUILDID_KALLSYMS && nlive && !same &&
		    kallsyms_same_as_running(c->path, "/proc/kallsyms")) {
			char hex[2 * 64 + 1], *cached;

			snprintf(s->kernel_warning, sizeof(s->kernel_warning),
				 "%.250s is the running kernel's /proc/kallsyms (perf inject --jit "
				 "copies it there), but the recording is of another kernel: not "
				 "used; give the recorded kernel's kallsyms with --kallsyms", c->path);
			hex_bytes(hex, bid, bidlen);
			/* nor what perfconv's cache made of it */
			cached = cache_entry_path(s->opt.cache_dir, CACHE_KALLSYMS, hex, 0);
			if (cached)
				cache_file_remove(&s->cache, cached);
			free(cached);
			continue;
		}
		if (c->flags & LOC_F_SAME_KERNEL) {
			if (!bidlen && saved_by_release(s))
				break;
			/* it changes as modules load: only the core kernel's part cached */
			if (bidlen && !same) {
				snprintf(s->kernel_source, sizeof(s->kernel_source),
					 "the running kernel is not the recorded one: give --kallsyms");
				break;
			}
			/* no build id to compare: another kernel's names would be wrong
			 * names, said nowhere; its release is all there is to go by */
			if (!bidlen && !same_release(s))
				break;
			s->ksyms = load_live_kallsyms(s, c->path, err, sizeof(err));
			if (s->ksyms && !bidlen)
				s->kernel_unverified = "matched by release only: the recording "
						       "names no kernel build id";
		} else {
			s->ksyms = load_kallsyms(s, c->path, bid, bidlen, err, sizeof(err));
		}
		if (s->ksyms) {
			snprintf(s->kernel_source, sizeof(s->kernel_source), "%s", c->path);
			break;
		}
		if (c->flags & (LOC_F_ONLY | LOC_F_SAME_KERNEL))
			snprintf(s->kernel_source, sizeof(s->kernel_source), "%s: %s", c->path, err);
		if (c->flags & LOC_F_ONLY) {
			snprintf(s->kernel_warning, sizeof(s->kernel_warning), "%s", err);
			break;
		}
	}
	loc_list_release(&places);
}

/* Whether the cache has entry `key` of the kernel tables. */
static int kcache_has(const struct symbolizer *s, const char *key)
{
	char *file = cache_entry_path(s->opt.cache_dir, CACHE_KALLSYMS, key, 0);
	int found = file && cache_file_exists(&s->cache, file);

	free(file);
	return found;
}

/* Whether the cache has a table of the kernel's symbols (saved by build id, or the
 * running kernel's): loading it then maps a file, and needs no thread of its own. A
 * recording that names no kernel build id is read with the running kernel's. */
static int kernel_cached(const struct symbolizer *s, const uint8_t *bid, size_t bidlen)
{
	char key[5 + 2 * 64 + 1];
	uint8_t live[64];
	size_t nlive = kallsyms_live_build_id(live, sizeof(live));
	int running = !bidlen || (bidlen == nlive && memcmp(live, bid, bidlen) == 0);

	if (!bidlen) {
		bid = live;
		bidlen = nlive;
	}
	if (!bidlen || bidlen > 64)
		return 0;
	memcpy(key, "live-", 5);
	hex_bytes(key + 5, bid, bidlen);
	return kcache_has(s, key + 5) || (running && kcache_has(s, key));
}

void symbolizer_kernel_prefetch(struct symbolizer *s, const uint8_t *build_id,
				size_t build_id_size)
{
	if (s->kernel_tried || build_id_size > sizeof(s->kernel_bid))
		return;
	s->kernel_tried = 1;
	if (build_id_size)
		memcpy(s->kernel_bid, build_id, build_id_size);
	s->kernel_bid_size = build_id_size;
	pthread_mutex_lock(&s->queue_lock);
	s->kernel_state = KERNEL_QUEUED;
	pthread_cond_signal(&s->queue_cond);
	pthread_mutex_unlock(&s->queue_lock);
	/* a table to parse (122,000 lines): on the helper thread, meanwhile; one in the
	 * cache: by whichever thread needs it first */
	if (!kernel_cached(s, build_id, build_id_size))
		sym_start_helper(s);
}

int sym_kernel_take(struct symbolizer *s)
{
	int here = 0;

	pthread_mutex_lock(&s->queue_lock);
	if (s->kernel_state == KERNEL_QUEUED) {
		s->kernel_state = KERNEL_LOADING;
		here = 1;
	}
	pthread_mutex_unlock(&s->queue_lock);
	if (!here)
		return 0;
	sym_load_kernel(s, s->kernel_bid, s->kernel_bid_size);
	pthread_mutex_lock(&s->queue_lock);
	s->kernel_state = KERNEL_DONE;
	pthread_cond_broadcast(&s->kernel_cond);
	pthread_mutex_unlock(&s->queue_lock);
	return 1;
}

void sym_kernel_ready(struct symbolizer *s)
{
	if (!sym_kernel_take(s)) { /* not begun: loaded here; else wait for it */
		pthread_mutex_lock(&s->queue_lock);
		while (s->kernel_state == KERNEL_QUEUED || s->kernel_state == KERNEL_LOADING)
			pthread_cond_wait(&s->kernel_cond, &s->queue_lock);
		pthread_mutex_unlock(&s->queue_lock);
	}
	if (s->kernel_warning[0]) {
		diag_warn(s->diag, s->opt.kallsyms, DIAG_NO_OFFSET, "%s", s->kernel_warning);
		s->kernel_warning[0] = 0;
	}
	sym_say_damaged(s);
}

int symbolizer_kernel(struct symbolizer *s, uint64_t addr, const uint8_t *build_id,
		      size_t build_id_size, struct sym_frame *out, const char **module)
{
	struct ksym k;

	/* the recording's own kernel table (simpleperf): its kernel, whatever runs here */
	if (sp_syms_has_kernel(s->embedded)) {
		if (module)
			*module = NULL;
		return sp_syms_kernel(s->embedded, addr, out);
	}
	if (!s->kernel_tried) {
		s->kernel_tried = 1;
		sym_load_kernel(s, build_id, build_id_size);
	}
	sym_kernel_ready(s);
	if (!s->ksyms)
		return 0;
	if (!kallsyms_lookup(s->ksyms, addr, &k))
		return 0;
	memset(out, 0, sizeof(*out));
	out->name = out->system_name = k.name;
	if (module)
		*module = k.module;
	return 1;
}

int symbolizer_kernel_module(struct symbolizer *s, const char *path, uint64_t offset,
			     struct sym_frame *out)
{
	return sp_syms_module(s->embedded, path, offset, out);
}

const char *symbolizer_kernel_source(struct symbolizer *s)
{
	if (sp_syms_has_kernel(s->embedded))
		return "the recording's symbol table (simpleperf's FILE feature or KERNEL_SYMBOL record)";
	sym_kernel_ready(s);
	return s->kernel_source[0] ? s->kernel_source : NULL;
}

const char *symbolizer_kernel_unverified(struct symbolizer *s)
{
	if (sp_syms_has_kernel(s->embedded))
		return NULL;
	sym_kernel_ready(s);
	return s->ksyms ? s->kernel_unverified : NULL;
}

void symbolizer_kernel_release(struct symbolizer *s, const char *release)
{
	snprintf(s->kernel_release, sizeof(s->kernel_release), "%s", release ? release : "");
}
