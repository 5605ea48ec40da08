/* symbolizer_kernel: kernel symbols, from the kallsyms that matches the recorded kernel. */
#include "symbolize/symbolizer_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * Kernel symbols from the kallsyms file `path`: through the cache when the kernel's
 * build id is known (a parsed table mapped, made on first use), else parsed.
 */
static struct kallsyms *load_kallsyms(struct symbolizer *s, const char *path,
				      const uint8_t *bid, size_t bidlen, char *err,
				      size_t errlen)
{
	struct file_id src;
	struct kallsyms *k;
	char hex[2 * 20 + 1], *file;
	const char *damage = NULL;

	if (!s->opt.cache_dir || !bidlen || bidlen > 20 || file_id_of(path, &src) != 0)
		return kallsyms_load(path, err, errlen);
	hex_bytes(hex, bid, bidlen);
	file = cache_entry_path(s->opt.cache_dir, CACHE_KALLSYMS, hex, 0);
	k = file ? kallsyms_cache_open(file, path, &src, bid, bidlen, &damage) : NULL;
	if (damage)
		cache_damaged(&s->cache, file, damage);
	if (!k) {
		k = kallsyms_load(path, err, errlen);
		free(file);
		file = k ? cache_entry_path(s->opt.cache_dir, CACHE_KALLSYMS, hex, 1) : NULL;
		if (file)
			kallsyms_cache_write(k, file, path, &src, bid, bidlen);
	}
	free(file);
	return k;
}

/*
 * The running kernel's symbols from its kallsyms file `path` (/proc/kallsyms): the
 * core kernel's part through the cache (see kallsyms_live_id), the rest parsed when
 * a lookup needs it; parsed whole without a cache.
 */
static struct kallsyms *load_live_kallsyms(struct symbolizer *s, const char *path,
					   char *err, size_t errlen)
{
	struct kallsyms_live src = KALLSYMS_LIVE;
	struct kallsyms_live_id *id;
	struct kallsyms *k = NULL;
	char hex[5 + 2 * 64 + 1], *file = NULL;
	const char *damage = NULL;

	src.kallsyms = path;
	id = xmalloc(sizeof(*id));
	if (!s->opt.cache_dir || kallsyms_live_id(&src, id) != 0) {
		free(id);
		return kallsyms_load(path, err, errlen);
	}
	memcpy(hex, "live-", 5);
	hex_bytes(hex + 5, id->build_id, id->build_id_size);
	file = cache_entry_path(s->opt.cache_dir, CACHE_KALLSYMS, hex, 0);
	k = file ? kallsyms_live_open(file, &src, id, &damage) : NULL;
	if (damage)
		cache_damaged(&s->cache, file, damage);
	if (!k) {
		k = kallsyms_load(path, err, errlen);
		free(file);
		file = k ? cache_entry_path(s->opt.cache_dir, CACHE_KALLSYMS, hex, 1) : NULL;
		if (file)
			kallsyms_live_write(k, file, id);
	}
	free(file);
	free(id);
	return k;
}

/* Runs on the prefetch thread or the main one: touches only the kernel fields. The
 * places of locate's table in turn, until one gives symbols. */
void sym_load_kernel(struct symbolizer *s, const uint8_t *bid, size_t bidlen)
{
	struct loc_query q = { .build_id = bid, .build_id_size = bidlen };
	struct loc_list places;
	uint8_t live[64];
	size_t nlive = kernel_live_build_id(live, sizeof(live));
	int same = nlive == bidlen && memcmp(live, bid, nlive) == 0;
	char err[256];

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
				unlink(cached);
			free(cached);
			continue;
		}
		if (c->flags & LOC_F_SAME_KERNEL) {
			/* it changes as modules load: only the core kernel's part cached */
			if (bidlen && !same) {
				snprintf(s->kernel_source, sizeof(s->kernel_source),
					 "the running kernel is not the recorded one: give --kallsyms");
				break;
			}
			s->ksyms = load_live_kallsyms(s, c->path, err, sizeof(err));
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
	sym_start_helper(s);
}

void sym_kernel_ready(struct symbolizer *s)
{
	int here = 0;

	pthread_mutex_lock(&s->queue_lock);
	if (s->kernel_state == KERNEL_QUEUED && (!s->prefetch_thread || s->prefetch_stop)) {
		s->kernel_state = KERNEL_LOADING;
		here = 1;
	}
	while (!here && (s->kernel_state == KERNEL_QUEUED || s->kernel_state == KERNEL_LOADING))
		pthread_cond_wait(&s->kernel_cond, &s->queue_lock);
	pthread_mutex_unlock(&s->queue_lock);
	if (here) {
		sym_load_kernel(s, s->kernel_bid, s->kernel_bid_size);
		pthread_mutex_lock(&s->queue_lock);
		s->kernel_state = KERNEL_DONE;
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

const char *symbolizer_kernel_source(struct symbolizer *s)
{
	sym_kernel_ready(s);
	return s->kernel_source[0] ? s->kernel_source : NULL;
}
