/* util: allocation that never returns NULL, growable arrays, hashing, string interning. */
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void out_of_memory(size_t n)
{
	fprintf(stderr, "perfconv: out of memory allocating %zu bytes\n", n);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		out_of_memory(n);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		out_of_memory(n * size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		out_of_memory(n);
	return q;
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

void grow_array(void **arr, size_t *cap, size_t need, size_t size)
{
	size_t c = *cap ? *cap : 8;

	if (need <= *cap)
		return;
	while (c < need)
		c *= 2;
	if (c > SIZE_MAX / size)
		out_of_memory(SIZE_MAX);
	*arr = xrealloc(*arr, c * size);
	*cap = c;
}

uint64_t hash_bytes(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ n, v;

	/* eight bytes a step: names of JIT code run to a hundred bytes and more */
	for (; n >= 8; s += 8, n -= 8) {
		memcpy(&v, s, 8);
		h = (h ^ v) * 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
	}
	v = 0;
	memcpy(&v, s, n);
	return hash_u64(h ^ v);
}

void u64map_init(struct u64map *m)
{
	memset(m, 0, sizeof(*m));
}

void u64map_release(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

uint32_t *u64map_get(const struct u64map *m, uint64_t key)
{
	if (!m->cap)
		return NULL;
	for (size_t i = hash_u64(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key)
			return &m->vals[i];
		if (!m->keys[i])
			return NULL;
	}
}

static void u64map_grow(struct u64map *m)
{
	struct u64map n;

	n.cap = m->cap ? m->cap * 2 : 64;
	n.len = 0;
	n.keys = xcalloc(n.cap, sizeof(*n.keys));
	n.vals = xmalloc(n.cap * sizeof(*n.vals));
	for (size_t i = 0; i < m->cap; i++)
		if (m->keys[i])
			u64map_put(&n, m->keys[i], m->vals[i]);
	free(m->keys);
	free(m->vals);
	*m = n;
}

void u64map_put(struct u64map *m, uint64_t key, uint32_t val)
{
	if ((m->len + 1) * 4 >= m->cap * 3)
		u64map_grow(m);
	for (size_t i = hash_u64(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key) {
			m->vals[i] = val;
			return;
		}
		if (!m->keys[i]) {
			m->keys[i] = key;
			m->vals[i] = val;
			m->len++;
			return;
		}
	}
}

void strtab_init(struct strtab *t)
{
	memset(t, 0, sizeof(*t));
	t->chunk_size = 64 * 1024;
	strtab_intern(t, "");
}

void strtab_release(struct strtab *t)
{
	for (size_t i = 0; i < t->nchunks; i++)
		free(t->chunks[i]);
	free(t->chunks);
	free(t->strs);
	free(t->lens);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

static char *strtab_store(struct strtab *t, const char *s, size_t n)
{
	char *dst;

	if (!t->nchunks || t->chunk_used + n + 1 > t->chunk_size) {
		size_t sz = n + 1 > t->chunk_size ? n + 1 : t->chunk_size;

		VEC_PUSH(t->chunks, t->nchunks, t->chunks_cap, xmalloc(sz));
		t->chunk_used = 0;
		if (sz > t->chunk_size) {
			/* an oversized string gets a chunk of its own, which is full */
			t->chunk_used = sz;
			dst = t->chunks[t->nchunks - 1];
			memcpy(dst, s, n);
			dst[n] = '\0';
			return dst;
		}
	}
	dst = t->chunks[t->nchunks - 1] + t->chunk_used;
	memcpy(dst, s, n);
	dst[n] = '\0';
	t->chunk_used += n + 1;
	return dst;
}

static void strtab_rehash(struct strtab *t)
{
	size_t ns = t->nslots ? t->nslots * 2 : 1024;

	free(t->slots);
	t->slots = xcalloc(ns, sizeof(*t->slots));
	t->nslots = ns;
	for (size_t id = 0; id < t->len; id++) {
		size_t i = hash_bytes(t->strs[id], t->lens[id]) & (ns - 1);

		while (t->slots[i])
			i = (i + 1) & (ns - 1);
		t->slots[i] = (uint32_t)id + 1;
	}
}

uint32_t strtab_intern_n(struct strtab *t, const char *s, size_t n)
{
	size_t i;

	if ((t->len + 1) * 2 >= t->nslots)
		strtab_rehash(t);
	for (i = hash_bytes(s, n) & (t->nslots - 1); t->slots[i]; i = (i + 1) & (t->nslots - 1)) {
		uint32_t id = t->slots[i] - 1;

		if (t->lens[id] == n && memcmp(t->strs[id], s, n) == 0)
			return id;
	}
	if (t->len >= t->cap) {
		size_t cap = t->cap;

		grow_array((void **)&t->strs, &cap, t->len + 1, sizeof(*t->strs));
		cap = t->cap;
		grow_array((void **)&t->lens, &cap, t->len + 1, sizeof(*t->lens));
		t->cap = cap;
	}
	t->strs[t->len] = strtab_store(t, s, n);
	t->lens[t->len] = (uint32_t)n;
	t->slots[i] = (uint32_t)t->len + 1;
	return (uint32_t)t->len++;
}

uint32_t strtab_intern(struct strtab *t, const char *s)
{
	return strtab_intern_n(t, s, strlen(s));
}

const char *path_base(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}
