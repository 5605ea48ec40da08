/* jitcache: a jitdump's code table kept in perfconv's cache. */
#include "symbolize/jit/jitcache.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/mapfile.h"
#include "common/util.h"

#define JCACHE_MAGIC "PCJITDMP"
#define JCACHE_VERSION 5 /* 2: Julia's names shown (demangle_jit_name); 3: msig Java names;
			  * 4: names past the demangler's bounds kept mangled; 5: perf maps' tables
			  * too (perf_map in the key) */
#define TAIL 4096            /* the dump's bytes checked before where the read stopped */

/* An entry: this, then the table (jitcode_save) at an 8-aligned offset. */
struct jcache_header {
	struct cache_head head;
	/* what it is for (struct jit_store_key, field by field) */
	uint64_t dev, ino;
	uint64_t version, total_size, elf_mach, pid, timestamp, flags, swapped, times_converted;
	uint64_t time_shift, time_mult, time_zero, time_cycles, time_mask, cap_user_time_short;
	uint64_t timeless, demangle, perf_map;
	/* how far it was read, and the bytes before that */
	uint64_t resume, tail_len, tail_sum;
};

static void fill_key(struct jcache_header *h, const struct jit_store_key *k)
{
	h->dev = k->dev;
	h->ino = k->ino;
	h->version = k->hdr.version;
	h->total_size = k->hdr.total_size;
	h->elf_mach = k->hdr.elf_mach;
	h->pid = k->hdr.pid;
	h->timestamp = k->hdr.timestamp;
	h->flags = k->hdr.flags;
	h->swapped = (uint64_t)k->hdr.swapped;
	h->times_converted = (uint64_t)k->hdr.times_converted;
	h->time_shift = k->tc.time_shift;
	h->time_mult = k->tc.time_mult;
	h->time_zero = k->tc.time_zero;
	h->time_cycles = k->tc.time_cycles;
	h->time_mask = k->tc.time_mask;
	h->cap_user_time_short = (uint64_t)k->tc.cap_user_time_short;
	h->timeless = (uint64_t)k->timeless;
	h->demangle = (uint64_t)k->demangle;
	h->perf_map = (uint64_t)k->perf_map;
}

/* The key's fields, from `dev` to `perf_map`, as bytes: the entry's name and check. */
static const void *key_bytes(const struct jcache_header *h, size_t *n)
{
	*n = offsetof(struct jcache_header, resume) - offsetof(struct jcache_header, dev);
	return &h->dev;
}

/* The entry's file for `h`'s key, malloc'ed (its folder made with `make`), or NULL. */
static char *entry_file(const struct cache_ctx *cache, const struct jcache_header *h, int make)
{
	char hex[17];
	size_t n;
	const void *k = key_bytes(h, &n);

	snprintf(hex, sizeof(hex), "%016llx", (unsigned long long)hash_bytes(k, n));
	return cache_entry_path(cache->dir, CACHE_JIT, hex, make);
}

/* The checksum of the `len` bytes of `fd` before `resume` (len <= TAIL): -1 when they
 * cannot be read. */
static int tail_sum(int fd, uint64_t resume, uint64_t len, uint64_t *sum)
{
	uint8_t buf[TAIL];

	if (len > TAIL || len > resume ||
	    pread(fd, buf, (size_t)len, (off_t)(resume - len)) != (ssize_t)len)
		return -1;
	*sum = hash_bytes(buf, (size_t)len);
	return 0;
}

struct jitcode *jitcache_open(const struct cache_ctx *cache, const struct jit_store_key *key,
			      int fd, const struct stat *st, uint64_t *resume)
{
	struct jcache_header want, h;
	struct mapped_file mf;
	const char *why = NULL;
	enum cache_verdict v;
	struct jitcode *jc;
	uint64_t sum;
	size_t n;
	char *file;

	*resume = 0;
	if (!cache || !cache->dir || !cache->dir[0])
		return NULL;
	memset(&want, 0, sizeof(want));
	fill_key(&want, key);
	file = entry_file(cache, &want, 0);
	if (!file)
		return NULL;
	v = cache_entry_open(file, JCACHE_MAGIC, JCACHE_VERSION, sizeof(h), &mf, &why);
	if (v != CACHE_GOOD) {
		if (v == CACHE_DAMAGED)
			cache_damaged(cache, file, why);
		free(file);
		return NULL;
	}
	memcpy(&h, mf.map, sizeof(h));
	key_bytes(&h, &n);
	/* made for this dump, and the dump still what was read of it */
	if (memcmp(&h.dev, &want.dev, n) != 0 ||
	    h.resume > (uint64_t)st->st_size || h.resume < key->hdr.total_size ||
	    tail_sum(fd, h.resume, h.tail_len, &sum) != 0 || sum != h.tail_sum) {
		mapped_file_close(&mf);
		free(file);
		return NULL;
	}
	jc = jitcode_load(&mf, align8(sizeof(h)));
	if (!jc) {
		mapped_file_close(&mf);
		cache_damaged(cache, file, "inconsistent");
		free(file);
		return NULL;
	}
	free(file);
	*resume = h.resume;
	return jc;
}

void jitcache_save(const struct cache_ctx *cache, const struct jit_store_key *key, int fd,
		   struct jitcode *jc, uint64_t resume)
{
	struct jcache_header h;
	size_t len;
	uint8_t *entry;
	char *file;

	if (!cache || !cache->dir || !cache->dir[0])
		return;
	memset(&h, 0, sizeof(h));
	fill_key(&h, key);
	h.resume = resume;
	h.tail_len = resume < TAIL ? resume : TAIL;
	if (tail_sum(fd, resume, h.tail_len, &h.tail_sum) != 0)
		return;
	file = entry_file(cache, &h, 1);
	if (!file)
		return;
	entry = jitcode_save(jc, sizeof(h), &len);
	memcpy(entry, &h, sizeof(h));
	cache_entry_write_later(cache, file, entry, len, JCACHE_MAGIC, JCACHE_VERSION,
				sizeof(h));
}
