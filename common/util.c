/* util: allocation that never returns NULL, growable arrays, sorting, hashing, string
 * interning, directories. */
#include "common/util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

void xalloc_failed(size_t n)
{
	fprintf(stderr, "perfconv: out of memory allocating %zu bytes\n", n);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		xalloc_failed(n);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		xalloc_failed(n * size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		xalloc_failed(n);
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
		xalloc_failed(SIZE_MAX);
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

static void checksum_blocks(struct checksum *c, const unsigned char *s, size_t nblocks)
{
	uint64_t h0 = c->h[0], h1 = c->h[1], h2 = c->h[2], h3 = c->h[3], v;

	/* independent lanes: the multiplications overlap */
	for (; nblocks; nblocks--, s += 32) {
#define LANE(h, at)                                  \
	memcpy(&v, s + (at), 8);                     \
	h = (h ^ v) * 0xff51afd7ed558ccdULL;         \
	h ^= h >> 32
		LANE(h0, 0);
		LANE(h1, 8);
		LANE(h2, 16);
		LANE(h3, 24);
#undef LANE
	}
	c->h[0] = h0;
	c->h[1] = h1;
	c->h[2] = h2;
	c->h[3] = h3;
}

void checksum_begin(struct checksum *c, size_t total)
{
	c->h[0] = 0x9e3779b97f4a7c15ULL ^ total;
	c->h[1] = 0xc2b2ae3d27d4eb4fULL;
	c->h[2] = 0x165667b19e3779f9ULL;
	c->h[3] = 0x27d4eb2f165667c5ULL;
	c->fill = 0;
}

void checksum_add(struct checksum *c, const void *p, size_t n)
{
	const unsigned char *s = p;

	if (n == 0)
		return; /* an empty part may have no bytes at all (p NULL) */
	if (c->fill) {
		size_t take = 32 - c->fill < n ? 32 - c->fill : n;

		memcpy(c->buf + c->fill, s, take);
		c->fill += take;
		s += take;
		n -= take;
		if (c->fill < 32)
			return;
		checksum_blocks(c, c->buf, 1);
		c->fill = 0;
	}
	checksum_blocks(c, s, n / 32);
	memcpy(c->buf, s + n / 32 * 32, n % 32);
	c->fill = n % 32;
}

void checksum_add_zeros(struct checksum *c, size_t n)
{
	static const unsigned char zeros[4096];

	for (size_t k; n; n -= k) {
		k = n < sizeof(zeros) ? n : sizeof(zeros);
		checksum_add(c, zeros, k);
	}
}

uint64_t checksum_end(const struct checksum *c)
{
	return hash_u64(c->h[0] ^
			hash_u64(c->h[1] ^ hash_u64(c->h[2] ^ hash_u64(c->h[3] ^ hash_bytes(c->buf, c->fill)))));
}

uint64_t checksum64(const void *p, size_t n)
{
	struct checksum c;

	checksum_begin(&c, n);
	checksum_add(&c, p, n);
	return checksum_end(&c);
}

void sort_pairs(struct sort_pair *v, struct sort_pair *tmp, size_t n)
{
	size_t count[8][256];
	uint64_t all_or = 0, all_and = ~(uint64_t)0;
	struct sort_pair *src = v, *dst = tmp;

	memset(count, 0, sizeof(count));
	for (size_t i = 0; i < n; i++) {
		uint64_t k = v[i].key;

		all_or |= k;
		all_and &= k;
		for (int b = 0; b < 8; b++)
			count[b][(k >> (8 * b)) & 0xff]++;
	}
	for (int b = 0; b < 8; b++) {
		size_t sum = 0;

		if ((((all_or ^ all_and) >> (8 * b)) & 0xff) == 0)
			continue; /* the same byte in every key */
		for (int d = 0; d < 256; d++) {
			size_t c = count[b][d];

			count[b][d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[count[b][(src[i].key >> (8 * b)) & 0xff]++] = src[i];
		src = dst;
		dst = src == v ? tmp : v;
	}
	if (src != v)
		memcpy(v, src, n * sizeof(*v));
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
	if (!key)
		return m->has_zero ? &m->vals[m->cap] : NULL;
	for (size_t i = hash_u64(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key)
			return &m->vals[i];
		if (!m->keys[i])
			return NULL;
	}
}

/* The table `cap` slots (a power of two, over the keys held), the keys put again. */
static void u64map_resize(struct u64map *m, size_t cap)
{
	struct u64map n;

	n.cap = cap;
	n.len = 0;
	n.has_zero = m->has_zero;
	n.keys = xcalloc(n.cap, sizeof(*n.keys));
	n.vals = xmalloc((n.cap + 1) * sizeof(*n.vals));
	if (m->has_zero)
		n.vals[n.cap] = m->vals[m->cap];
	for (size_t i = 0; i < m->cap; i++)
		if (m->keys[i])
			u64map_put(&n, m->keys[i], m->vals[i]);
	free(m->keys);
	free(m->vals);
	*m = n;
}

static void u64map_grow(struct u64map *m)
{
	u64map_resize(m, m->cap ? m->cap * 2 : 64);
}

void u64map_reserve(struct u64map *m, size_t n)
{
	size_t cap = m->cap ? m->cap : 64;

	while ((n + 1) * 4 >= cap * 3)
		cap *= 2;
	if (cap > m->cap)
		u64map_resize(m, cap);
}

void u64map_put(struct u64map *m, uint64_t key, uint32_t val)
{
	if ((m->len + 1) * 4 >= m->cap * 3)
		u64map_grow(m);
	if (!key) {
		m->vals[m->cap] = val;
		m->has_zero = 1;
		return;
	}
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
	id_index_release(&t->index);
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

size_t count_keys_le(const void *v, size_t n, size_t stride, size_t at, uint64_t key)
{
	const unsigned char *b = v;
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t k;

		memcpy(&k, b + mid * stride + at, sizeof(k));
		if (k <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void id_index_refill(struct id_index *x, size_t n, id_hash_fn hash, const void *items)
{
	size_t mask = x->nslots - 1;

	if (!x->nslots)
		return; /* nothing was ever reserved: nothing to index */
	memset(x->slots, 0, x->nslots * sizeof(*x->slots));
	for (size_t id = 0; id < n; id++) {
		size_t i = hash(items, id) & mask;

		while (x->slots[i])
			i = (i + 1) & mask;
		x->slots[i] = (uint32_t)id + 1;
	}
}

void id_index_reserve(struct id_index *x, size_t n, id_hash_fn hash, const void *items)
{
	if ((n + 1) * 2 < x->nslots)
		return;
	free(x->slots);
	x->nslots = x->nslots ? x->nslots * 2 : 1024;
	x->slots = xcalloc(x->nslots, sizeof(*x->slots));
	id_index_refill(x, n, hash, items);
}

void id_index_release(struct id_index *x)
{
	free(x->slots);
	x->slots = NULL;
	x->nslots = 0;
}

static uint64_t strtab_hash(const void *items, size_t id)
{
	const struct strtab *t = items;

	return hash_bytes(t->strs[id], t->lens[id]);
}

uint32_t strtab_intern_n(struct strtab *t, const char *s, size_t n)
{
	size_t i;

	id_index_reserve(&t->index, t->len, strtab_hash, t);
	for (i = hash_bytes(s, n) & (t->index.nslots - 1); t->index.slots[i];
	     i = (i + 1) & (t->index.nslots - 1)) {
		uint32_t id = t->index.slots[i] - 1;

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
	t->index.slots[i] = (uint32_t)t->len + 1;
	return (uint32_t)t->len++;
}

uint32_t strtab_intern(struct strtab *t, const char *s)
{
	return strtab_intern_n(t, s, strlen(s));
}

int parse_size(const char *s, uint64_t *v, int *had_suffix)
{
	char *end;
	unsigned long long n;
	unsigned shift = 0;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno)
		return -1;
	*had_suffix = *end != '\0';
	switch (*end) {
	case '\0': break;
	case 'k': case 'K': shift = 10; break;
	case 'M': shift = 20; break;
	case 'G': shift = 30; break;
	case 'T': shift = 40; break;
	default: return -1;
	}
	if (*end)
		end++;
	if (strcmp(end, "") != 0 && strcmp(end, "B") != 0 && strcmp(end, "iB") != 0)
		return -1;
	if (shift && n > (UINT64_MAX >> shift))
		return -1;
	*v = (uint64_t)n << shift;
	return 0;
}

const char *path_base(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

char *path_join(const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b);
	char *p;

	while (na > 0 && a[na - 1] == '/')
		na--;
	p = xmalloc(na + nb + 2);
	memcpy(p, a, na);
	if (b[0] != '/')
		p[na++] = '/';
	memcpy(p + na, b, nb + 1);
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	int n;
	char *p;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		abort();
	p = xmalloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}

void hex_bytes(char *out, const uint8_t *bytes, size_t n)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[bytes[i] >> 4];
		out[2 * i + 1] = digits[bytes[i] & 15];
	}
	out[2 * n] = '\0';
}

/*
 * The length of the well-formed UTF-8 sequence at `s` (at most `n` bytes), or 0 when
 * it is ill-formed; `*bad` is then the length of its maximal ill-formed part (>= 1).
 * Bytes are unsigned here: a signed char would make 0xc3 a negative number.
 * Well-formed UTF-8 is Table 3-7 of the Unicode Standard, chapter 3.9.
 */
size_t utf8_seq_len(const unsigned char *s, size_t n, size_t *bad)
{
	unsigned char b = s[0], lo = 0x80, hi = 0xbf;
	size_t len;

	if (b >= 0xc2 && b <= 0xdf)
		len = 2;
	else if (b >= 0xe0 && b <= 0xef)
		len = 3;
	else if (b >= 0xf0 && b <= 0xf4)
		len = 4;
	else {
		*bad = 1; /* 0x80-0xc1 (continuation or overlong lead), 0xf5-0xff */
		return 0;
	}
	/* the second byte's range excludes overlongs, surrogates and > U+10FFFF */
	if (b == 0xe0)
		lo = 0xa0;
	else if (b == 0xed)
		hi = 0x9f;
	else if (b == 0xf0)
		lo = 0x90;
	else if (b == 0xf4)
		hi = 0x8f;
	for (size_t i = 1; i < len; i++) {
		if (i >= n || s[i] < lo || s[i] > hi) {
			*bad = i;
			return 0;
		}
		lo = 0x80;
		hi = 0xbf;
	}
	return len;
}

char *utf8_sanitize(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str), i = 0, w = 0, len = 0, bad = 0;
	char *out;

	for (; i < n; i += len) {
		len = s[i] < 0x80 ? 1 : utf8_seq_len(s + i, n - i, &bad);
		if (!len)
			break;
	}
	if (i == n)
		return NULL;
	out = xmalloc(3 * n + 1); /* each ill-formed byte at most one U+FFFD of 3 */
	memcpy(out, s, i);
	w = i;
	while (i < n) {
		if (s[i] < 0x80) {
			out[w++] = (char)s[i++];
		} else if ((len = utf8_seq_len(s + i, n - i, &bad)) != 0) {
			memcpy(out + w, s + i, len);
			w += len;
			i += len;
		} else {
			memcpy(out + w, "\xef\xbf\xbd", 3); /* U+FFFD */
			w += 3;
			i += bad;
		}
	}
	out[w] = 0;
	return out;
}

#define HUGE_PAGE ((size_t)2 << 20)

void *xmalloc_written(size_t n)
{
	void *p;

	if (n < HUGE_PAGE)
		return xmalloc(n);
	if (posix_memalign(&p, HUGE_PAGE, n) != 0)
		xalloc_failed(n);
#ifdef MADV_HUGEPAGE
	(void)madvise(p, n / HUGE_PAGE * HUGE_PAGE, MADV_HUGEPAGE);
#endif
	prefault(p, n);
	return p;
}

void prefault(void *p, size_t n)
{
#ifdef MADV_POPULATE_WRITE
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t from = ((uintptr_t)p + page - 1) & ~(page - 1);
	uintptr_t to = ((uintptr_t)p + n) & ~(page - 1);

	if (to > from)
		(void)madvise((void *)from, to - from, MADV_POPULATE_WRITE);
#else
	(void)p;
	(void)n;
#endif
}
