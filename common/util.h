/* util: allocation that never returns NULL, growable arrays, sorting, hashing, string
 * interning, directories. */
#ifndef PERFCONV_UTIL_H
#define PERFCONV_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Allocation failure aborts with a message: perfconv cannot continue without memory. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* What they do when it fails: "perfconv: out of memory allocating N bytes" on stderr,
 * then abort(). */
__attribute__((noreturn)) void xalloc_failed(size_t n);

/* Grow `*arr` (of `*cap` elements of `size` bytes) to hold at least `need`. */
void grow_array(void **arr, size_t *cap, size_t need, size_t size);
/* The same for code that keeps the pointer in an expression: returns the grown array. */
static inline void *xgrow(void *arr, size_t *cap, size_t need, size_t size)
{
	grow_array(&arr, cap, need, size);
	return arr;
}
#define VEC_PUSH(arr, n, cap, val)                                                     \
	do {                                                                           \
		if ((n) >= (cap))                                                      \
			grow_array((void **)&(arr), &(cap), (n) + 1, sizeof(*(arr)));  \
		(arr)[(n)++] = (val);                                                  \
	} while (0)

/* `x` rounded up to a multiple of 8: where the next field of a file's layout begins. */
static inline uint64_t align8(uint64_t x)
{
	return (x + 7) & ~(uint64_t)7;
}

/* 64-bit mixing hash (splitmix64 finalizer) and FNV-1a over bytes. */
static inline uint64_t hash_u64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}
uint64_t hash_bytes(const void *p, size_t n);
/*
 * A checksum of `n` bytes for telling a damaged file from an intact one: four lanes of
 * hash_bytes' step (each step a bijection, so any change of one 8-byte word changes
 * the result), several GB/s.
 */
uint64_t checksum64(const void *p, size_t n);
/* The same checksum of bytes given in parts: begun with the total length, the parts
 * added in order (zeros too), ended once. */
struct checksum {
	uint64_t h[4];
	unsigned char buf[32];
	size_t fill;
};
void checksum_begin(struct checksum *c, size_t total);
void checksum_add(struct checksum *c, const void *p, size_t n);
void checksum_add_zeros(struct checksum *c, size_t n);
uint64_t checksum_end(const struct checksum *c);

/*
 * Sort (key, val) pairs by key, stably: equal keys keep their order. A radix sort,
 * linear in n, with one pass per byte in which the keys differ; `tmp` has room for n.
 */
struct sort_pair {
	uint64_t key, val;
};
void sort_pairs(struct sort_pair *v, struct sort_pair *tmp, size_t n);

/*
 * A map from 64-bit keys to 32-bit values, open addressing. Every key is a key,
 * 0 included: 0 marks an empty slot, so key 0 lives beside the table (vals[cap],
 * has_zero). Callers' keys are often an id + 1, which wraps to 0 for an id of
 * all ones (a pid or tid of -1, as perf writes for a task that has exited).
 */
struct u64map {
	uint64_t *keys;
	uint32_t *vals; /* cap + 1 of them: vals[cap] is key 0's */
	size_t cap, len; /* cap is a power of two; len counts the table's keys, not key 0 */
	int has_zero;
};
void u64map_init(struct u64map *m);
void u64map_release(struct u64map *m);
/* Returns a pointer to the value for `key`, or NULL. */
uint32_t *u64map_get(const struct u64map *m, uint64_t key);
/* Inserts or overwrites. */
void u64map_put(struct u64map *m, uint64_t key, uint32_t val);
/* Room for `n` keys in all without growing (an empty map's table made at once). */
void u64map_reserve(struct u64map *m, size_t n);

/*
 * In `v`, `n` elements of `stride` bytes sorted by the uint64_t at byte `at` of
 * each: how many have a key <= `key` (the last of them is at the result - 1).
 * COUNT_LE() takes an array and the name of its key field.
 */
size_t count_keys_le(const void *v, size_t n, size_t stride, size_t at, uint64_t key);
#define COUNT_LE(arr, n, field, key)                                                   \
	count_keys_le((arr), (n), sizeof(*(arr)), offsetof(__typeof__(*(arr)), field), (key))

/*
 * An index by hash of items kept in an array (ids 0..n-1), for interning tables:
 * open addressing, each slot holds id + 1 (0 empty), the size a power of two. The
 * caller probes from hash & (nslots - 1) onwards, comparing items itself.
 */
struct id_index {
	uint32_t *slots;
	size_t nslots;
};
typedef uint64_t (*id_hash_fn)(const void *items, size_t id);
/* Room for one more item beside the `n` there are: grown (and refilled) when half full. */
void id_index_reserve(struct id_index *x, size_t n, id_hash_fn hash, const void *items);
/* Refill at the same size, after the items changed in place. */
void id_index_refill(struct id_index *x, size_t n, id_hash_fn hash, const void *items);
void id_index_release(struct id_index *x);

/*
 * Interned strings: each distinct string gets one id, 0 is "". The text is
 * stored once in chunks that never move, so pointers from strtab_str() stay
 * valid until strtab_release().
 */
struct strtab {
	char **chunks;
	size_t nchunks, chunks_cap;
	size_t chunk_used, chunk_size;
	const char **strs; /* id -> text */
	uint32_t *lens;
	size_t len, cap;
	struct id_index index;
};
void strtab_init(struct strtab *t);
void strtab_release(struct strtab *t);
uint32_t strtab_intern(struct strtab *t, const char *s);
uint32_t strtab_intern_n(struct strtab *t, const char *s, size_t n);
static inline const char *strtab_str(const struct strtab *t, uint32_t id)
{
	return t->strs[id];
}
static inline size_t strtab_count(const struct strtab *t)
{
	return t->len;
}

/* A size as the command line takes it: a number, then optionally K, M, G or T (powers
 * of 1024) and B or iB. 0 with *v set (and *had_suffix: whether a unit was given), or
 * -1. */
int parse_size(const char *s, uint64_t *v, int *had_suffix);

/* Does `s` begin with `prefix`? */
static inline int starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* basename without modifying its argument. */
const char *path_base(const char *path);
/* `a`/`b`, malloc'ed: `a`'s trailing slashes dropped, one slash between them. */
char *path_join(const char *a, const char *b);
/* printf into a malloc'ed string. */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * The length of the well-formed UTF-8 sequence at `s` (at most `n` bytes, s[0] >= 0x80),
 * or 0 when it is ill-formed; `*bad` is then the length of its maximal ill-formed part
 * (>= 1), which the writers replace with one U+FFFD, as the Unicode Standard advises.
 */
size_t utf8_seq_len(const unsigned char *s, size_t n, size_t *bad);
/* `s` with each maximal ill-formed part replaced by U+FFFD, malloc'ed; NULL when `s`
 * is well-formed already (the common case: nothing copied). */
char *utf8_sanitize(const char *s);

/* `n` bytes as lower-case hex into `out` (2n + 1 bytes, NUL-terminated). */
void hex_bytes(char *out, const uint8_t *bytes, size_t n);

/* The pages of p[0..n) made present and writable now, in one call, where each would
 * fault on its first write (a fault is 2 us in a VM); a hint: nothing on failure. */
void prefault(void *p, size_t n);
/*
 * `n` bytes that are all to be written at once (an inflated section, a file read
 * whole), free()d as any: from 2 MB on, aligned to 2 MB, in huge pages where the
 * kernel has them (MADV_HUGEPAGE), and made present in one call. In a VM whose first
 * touch of a 4 KB page costs 6-16 us (bench/README.md), 8 MB so made cost 1.8 us a
 * 4 KB page instead of 12-16.
 */
void *xmalloc_written(size_t n);

#endif
