/* folded: collapsed stacks, as stackcollapse-perf.pl writes them.
 *
 * Format: github.com/brendangregg/FlameGraph stackcollapse-perf.pl output, read by
 * flamegraph.pl, speedscope, inferno and most flame graph tools. A differential
 * profile's lines are "stack BASE NEW", as FlameGraph's difffolded.pl writes them
 * (read by flamegraph.pl and inferno-flamegraph for a differential flame graph).
 */
#include "formats/write/folded.h"

#include "common/strbuf.h"
#include "common/writeend.h"
#include "formats/write/frametext.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

struct agg {
	uint32_t comm, pid, tid, stack, side;
	uint64_t weight;
};

static int agg_cmp(const void *a, const void *b)
{
	const struct agg *x = a, *y = b;

	if (x->comm != y->comm)
		return x->comm < y->comm ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	return (x->side > y->side) - (x->side < y->side);
}

/*
 * A line, as the ids of its fields' texts (in `texts`): the root label, then the
 * frames root first. Two lines are the same text exactly when their ids are the same
 * (no field holds a ';'), so lines are merged and sorted on ids, and the text is
 * written once: a line is never made whole in memory. (Made whole, one per stack
 * before lines were merged, they took 900 MB for an output of 1.3 MB: a function
 * named in 213 KB, sampled at 1,500 addresses.)
 */
struct line {
	size_t first;       /* in `ids` */
	uint32_t n;
	uint64_t weight[3]; /* by enum pc_side */
};

struct lines {
	struct line *v;
	size_t n, cap;
	uint32_t *ids;
	size_t nids, ids_cap;
	struct strtab texts;
};

/*
 * strcmp() of the two lines' texts, without them: fields with the same id are the
 * same text; at the first that differ, their texts decide, and where one is the
 * other's start, the byte after it (';' before the next field, or the line's end)
 * against the longer one's next byte (never ';').
 */
static int line_cmp(const void *a, const void *b, void *arg)
{
	const struct lines *ls = arg;
	const struct line *x = a, *y = b;
	const uint32_t *ix = ls->ids + x->first, *iy = ls->ids + y->first;
	uint32_t n = x->n < y->n ? x->n : y->n, i;

	for (i = 0; i < n && ix[i] == iy[i]; i++)
		;
	if (i == n)
		return (x->n > y->n) - (x->n < y->n);
	{
		const struct strtab *t = &ls->texts;
		const unsigned char *sx = (const unsigned char *)strtab_str(t, ix[i]);
		const unsigned char *sy = (const unsigned char *)strtab_str(t, iy[i]);
		size_t lx = t->lens[ix[i]], ly = t->lens[iy[i]], k = 0;
		unsigned char cx, cy;

		while (k < lx && k < ly && sx[k] == sy[k])
			k++;
		cx = k < lx ? sx[k] : i + 1 < x->n ? ';' : 0;
		cy = k < ly ? sy[k] : i + 1 < y->n ? ';' : 0;
		return (cx > cy) - (cx < cy);
	}
}

static const char *suffix_for(const struct pc_frame *f)
{
	switch (f->kind) {
	case FRAME_KERNEL: return "_[k]";
	case FRAME_JIT: return "_[j]";
	case FRAME_INLINED: return "_[i]";
	default: return "";
	}
}

/* What a frame's text is made of: frames of one function at different addresses
 * share it (a function's 1,500 sampled addresses, its name 200 KB long). */
struct field_key {
	uint32_t func, file, line, kind;
	uint32_t text; /* its id */
};

struct stack_bufs {
	uint32_t *frames;
	size_t frames_cap;
	char *text;
	size_t text_cap;
	uint32_t *frame_text; /* per frame of the profile: its text's id + 1, 0: not made yet */
	struct field_key *keys;
	size_t nkeys, keys_cap;
	struct u64map key_index; /* hash of a field_key -> its index in keys */
	struct strbuf field;
};

/* The id of frame `fi`'s text: whole (names cut at 4 KB made two long names one),
 * with its kind's suffix under o->annotate; made once per distinct text. */
static uint32_t frame_field(const struct profile *p, uint32_t fi, const struct write_options *o,
			    struct lines *ls, struct stack_bufs *sb)
{
	const struct pc_frame *f = &p->frames[fi];
	struct field_key k;
	uint64_t key;
	uint32_t *v;

	if (sb->frame_text[fi])
		return sb->frame_text[fi] - 1;
	memset(&k, 0, sizeof(k));
	k.func = f->func;
	if (o->srcline && f->line && f->file) { /* as frame_text() adds them */
		k.file = f->file;
		k.line = f->line;
	}
	k.kind = o->annotate ? f->kind : 0;
	key = hash_bytes(&k, offsetof(struct field_key, text)) | 1;
	for (;; key = hash_u64(key) | 1) {
		v = u64map_get(&sb->key_index, key);
		if (!v || memcmp(&sb->keys[*v], &k, offsetof(struct field_key, text)) == 0)
			break;
	}
	if (v) {
		k.text = sb->keys[*v].text;
	} else {
		strbuf_reset(&sb->field);
		strbuf_addstr(&sb->field, frame_text_all(p, f, o, &sb->text, &sb->text_cap));
		if (o->annotate)
			strbuf_addstr(&sb->field, suffix_for(f));
		k.text = strtab_intern_n(&ls->texts, sb->field.s, sb->field.len);
		VEC_PUSH(sb->keys, sb->nkeys, sb->keys_cap, k);
		u64map_put(&sb->key_index, key, (uint32_t)sb->nkeys - 1);
	}
	sb->frame_text[fi] = k.text + 1;
	return k.text;
}

/* Append the ids of `node`'s frames, root first. */
static void add_stack(const struct profile *p, uint32_t node, const struct write_options *o,
		      struct lines *ls, struct stack_bufs *sb)
{
	size_t n = profile_stack_all(p, node, &sb->frames, &sb->frames_cap);

	while (n-- > 0) {
		uint32_t id = frame_field(p, sb->frames[n], o, ls, sb);

		VEC_PUSH(ls->ids, ls->nids, ls->ids_cap, id);
	}
}

int folded_write(const struct profile *p, const struct write_options *o, FILE *out)
{
	struct agg *aggs = NULL;
	struct lines ls;
	size_t nagg = 0, agg_cap = 0;
	struct stack_bufs sbufs;
	struct u64map seen, same;
	int ret = 0;

	memset(&ls, 0, sizeof(ls));
	strtab_init(&ls.texts);
	memset(&sbufs, 0, sizeof(sbufs));
	sbufs.frame_text = xcalloc(p->nframes + 1, sizeof(*sbufs.frame_text));
	/* one aggregate per (thread name, pid, tid, stack): hashed, so that only the
	 * unique ones are sorted (the pid and tid take part only with the prefixes) */
	u64map_init(&seen);
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct pc_sample *s = &p->samples[i];
		struct agg a;
		uint64_t key;
		uint32_t *v;

		if (o->event >= 0 && s->event != o->event)
			continue;
		memset(&a, 0, sizeof(a));
		a.comm = s->comm;
		a.pid = (o->with_pid || o->with_tid) ? s->pid : 0;
		a.tid = o->with_tid ? s->tid : 0;
		a.stack = s->stack;
		a.side = o->diff ? s->side : 0;
		a.weight = sample_weight(o, s);
		key = hash_bytes(&a, offsetof(struct agg, weight)) | 1;
		for (;; key = hash_u64(key) | 1) {
			v = u64map_get(&seen, key);
			if (!v || agg_cmp(&aggs[*v], &a) == 0)
				break;
		}
		if (v) {
			aggs[*v].weight += a.weight;
			continue;
		}
		VEC_PUSH(aggs, nagg, agg_cap, a);
		u64map_put(&seen, key, (uint32_t)nagg - 1);
	}
	u64map_release(&seen);
	/* each aggregate's line as ids; different addresses in one function give the
	 * same text: one line (and in a differential profile, the two builds') */
	u64map_init(&same);
	for (size_t i = 0; i < nagg; i++) {
		size_t first = ls.nids;
		uint32_t root, *v;
		uint64_t key;

		root = strtab_intern(&ls.texts, root_label_all(p, o, aggs[i].comm, aggs[i].pid,
								aggs[i].tid, &sbufs.text,
								&sbufs.text_cap));
		VEC_PUSH(ls.ids, ls.nids, ls.ids_cap, root);
		add_stack(p, aggs[i].stack, o, &ls, &sbufs);
		key = hash_bytes(ls.ids + first, (ls.nids - first) * sizeof(*ls.ids)) | 1;
		for (;; key = hash_u64(key) | 1) {
			const struct line *l;

			v = u64map_get(&same, key);
			if (!v)
				break;
			l = &ls.v[*v];
			if (l->n == ls.nids - first &&
			    memcmp(ls.ids + l->first, ls.ids + first, l->n * sizeof(*ls.ids)) == 0)
				break;
		}
		if (v) {
			ls.nids = first;
		} else {
			struct line l;

			memset(&l, 0, sizeof(l));
			l.first = first;
			l.n = (uint32_t)(ls.nids - first);
			VEC_PUSH(ls.v, ls.n, ls.cap, l);
			u64map_put(&same, key, (uint32_t)ls.n - 1);
			v = u64map_get(&same, key);
		}
		ls.v[*v].weight[aggs[i].side < 3 ? aggs[i].side : 0] += aggs[i].weight;
	}
	u64map_release(&same);
	if (ls.n > 1)
		qsort_r(ls.v, ls.n, sizeof(*ls.v), line_cmp, &ls);
	for (size_t i = 0; i < ls.n && ret == 0; i++) {
		const struct line *l = &ls.v[i];
		const uint64_t *w = l->weight;

		for (uint32_t k = 0; k < l->n; k++) {
			uint32_t id = ls.ids[l->first + k];

			if ((k && putc(';', out) == EOF) ||
			    fwrite(strtab_str(&ls.texts, id), 1, ls.texts.lens[id], out) !=
				    ls.texts.lens[id])
				ret = -1;
		}
		if (o->diff) {
			/* scaled as difffolded.pl -n scales, but rounded rather than cut */
			double base = (double)w[PC_SIDE_BASE] * o->diff->scale[o->weight_period ? 1 : 0];

			if (fprintf(out, " %" PRIu64 " %" PRIu64 "\n", (uint64_t)llround(base),
				    w[PC_SIDE_NEW]) < 0)
				ret = -1;
		} else if (fprintf(out, " %" PRIu64 "\n", w[0]) < 0) {
			ret = -1;
		}
	}
	free(ls.v);
	free(ls.ids);
	strtab_release(&ls.texts);
	free(aggs);
	free(sbufs.frames);
	free(sbufs.text);
	free(sbufs.frame_text);
	free(sbufs.keys);
	u64map_release(&sbufs.key_index);
	strbuf_release(&sbufs.field);
	return write_end(out, ret);
}
