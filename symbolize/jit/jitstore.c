/* jitstore: the JIT dumps a long-lived session has read, kept from one conversion to the
 * next. A handful of dumps (one per JIT process of the service): a list, searched by
 * file. */
#include "symbolize/jit/jitstore.h"

#include <stdlib.h>
#include <string.h>

#include "common/util.h"

struct entry {
	struct jit_store_key key;
	struct jitcode *jc;      /* NULL while taken */
	uint64_t resume;
	uint64_t check;          /* the caller's, given back with the table */
	unsigned gen;            /* the conversion that last took or put it */
};

struct jit_store {
	struct entry *v;
	size_t n, cap;
	unsigned gen;
};

struct jit_store *jit_store_new(void)
{
	return xcalloc(1, sizeof(struct jit_store));
}

void jit_store_free(struct jit_store *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		jitcode_free(s->v[i].jc);
	free(s->v);
	free(s);
}

/* Drop entry `i` (its table freed). */
static void drop(struct jit_store *s, size_t i)
{
	jitcode_free(s->v[i].jc);
	s->v[i] = s->v[--s->n];
}

void jit_store_begin(struct jit_store *s)
{
	for (size_t i = 0; i < s->n;)
		if (s->v[i].gen != s->gen || !s->v[i].jc)
			drop(s, i);
		else
			i++;
	s->gen++;
}

static struct entry *find(struct jit_store *s, uint64_t dev, uint64_t ino)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].key.dev == dev && s->v[i].key.ino == ino)
			return &s->v[i];
	return NULL;
}

/* The same dump read the same way (field by field: padding is not compared). */
static int same_key(const struct jit_store_key *a, const struct jit_store_key *b)
{
	const struct jitdump_header *x = &a->hdr, *y = &b->hdr;
	const struct jitdump_time_conv *p = &a->tc, *q = &b->tc;

	return a->dev == b->dev && a->ino == b->ino && a->timeless == b->timeless &&
	       a->perf_map == b->perf_map &&
	       a->demangle == b->demangle && x->version == y->version &&
	       x->total_size == y->total_size && x->elf_mach == y->elf_mach && x->pid == y->pid &&
	       x->timestamp == y->timestamp && x->flags == y->flags && x->swapped == y->swapped &&
	       x->times_converted == y->times_converted && p->time_shift == q->time_shift &&
	       p->time_mult == q->time_mult && p->time_zero == q->time_zero &&
	       p->time_cycles == q->time_cycles && p->time_mask == q->time_mask &&
	       p->cap_user_time_short == q->cap_user_time_short;
}

struct jitcode *jit_store_take(struct jit_store *s, const struct jit_store_key *k,
			       uint64_t file_size, uint64_t from_time, uint64_t *resume,
			       uint64_t *check)
{
	struct entry *e = find(s, k->dev, k->ino);
	struct jitcode *jc;

	*resume = 0;
	if (check)
		*check = 0;
	if (!e || !e->jc)
		return NULL;
	/* another dump in the same file (rewritten, or replaced and its inode reused),
	 * or what was kept cannot answer for the times to come */
	if (!same_key(&e->key, k) || file_size < e->resume ||
	    from_time < jitcode_exact_from(e->jc) || jitcode_inexact(e->jc)) {
		drop(s, (size_t)(e - s->v));
		return NULL;
	}
	jc = e->jc;
	e->jc = NULL;
	e->gen = s->gen;
	*resume = e->resume;
	if (check)
		*check = e->check;
	return jc;
}

void jit_store_put(struct jit_store *s, const struct jit_store_key *k, struct jitcode *jc,
		   uint64_t resume, uint64_t check)
{
	struct entry *e = find(s, k->dev, k->ino);

	if (e && e->jc && e->jc != jc)
		jitcode_free(e->jc);
	if (!e) {
		struct entry n;

		memset(&n, 0, sizeof(n));
		VEC_PUSH(s->v, s->n, s->cap, n);
		e = &s->v[s->n - 1];
	}
	e->key = *k;
	e->jc = jc;
	e->resume = resume;
	e->check = check;
	e->gen = s->gen;
}

size_t jit_store_count(const struct jit_store *s)
{
	return s ? s->n : 0;
}

size_t jit_store_bytes(const struct jit_store *s)
{
	size_t n = 0;

	for (size_t i = 0; s && i < s->n; i++)
		if (s->v[i].jc)
			n += jitcode_bytes(s->v[i].jc);
	return n;
}
