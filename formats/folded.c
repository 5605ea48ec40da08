/* folded: collapsed stacks, as stackcollapse-perf.pl writes them.
 *
 * Format: github.com/brendangregg/FlameGraph stackcollapse-perf.pl output, read by
 * flamegraph.pl, speedscope, inferno and most flame graph tools. A differential
 * profile's lines are "stack BASE NEW", as FlameGraph's difffolded.pl writes them
 * (read by flamegraph.pl and inferno-flamegraph for a differential flame graph).
 */
#include "formats/folded.h"

#include "formats/frametext.h"

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

struct line {
	char *text;
	uint64_t weight[3]; /* by enum pc_side */
};

static int line_cmp(const void *a, const void *b)
{
	const struct line *x = a, *y = b;

	return strcmp(x->text, y->text);
}

struct sbuf {
	char *s;
	size_t len, cap;
};

static void sb_add(struct sbuf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap)
		grow_array((void **)&b->s, &b->cap, b->len + n + 1, 1);
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void sb_str(struct sbuf *b, const char *s)
{
	sb_add(b, s, strlen(s));
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

struct stack_bufs {
	uint32_t *frames;
	size_t frames_cap;
	char *text;
	size_t text_cap;
};

/* Append the frames of `node`, root first, each preceded by ';': all of them, whole
 * (names cut at 4 KB made two long names one). */
static void add_stack(const struct profile *p, uint32_t node, const struct write_options *o,
		      struct sbuf *b, struct stack_bufs *sb)
{
	size_t n = profile_stack_all(p, node, &sb->frames, &sb->frames_cap);

	while (n-- > 0) {
		const struct pc_frame *f = &p->frames[sb->frames[n]];

		sb_add(b, ";", 1);
		sb_str(b, frame_text_all(p, f, o, &sb->text, &sb->text_cap));
		if (o->annotate)
			sb_str(b, suffix_for(f));
	}
}

int folded_write(const struct profile *p, const struct write_options *o, FILE *out)
{
	struct agg *aggs = NULL;
	struct line *lines = NULL;
	size_t nagg = 0, agg_cap = 0, nlines = 0, lines_cap = 0;
	struct sbuf b = { NULL, 0, 0 };
	struct stack_bufs sbufs = { NULL, 0, NULL, 0 };
	struct u64map seen;
	int ret = 0;

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
	if (nagg > 1)
		qsort(aggs, nagg, sizeof(*aggs), agg_cmp);
	for (size_t i = 0; i < nagg; i++) {
		uint64_t w = aggs[i].weight;

		b.len = 0;
		sb_str(&b, root_label_all(p, o, aggs[i].comm, aggs[i].pid, aggs[i].tid, &sbufs.text,
					  &sbufs.text_cap));
		add_stack(p, aggs[i].stack, o, &b, &sbufs);
		if (nlines >= lines_cap)
			grow_array((void **)&lines, &lines_cap, nlines + 1, sizeof(*lines));
		lines[nlines].text = xstrndup(b.s, b.len);
		memset(lines[nlines].weight, 0, sizeof(lines[nlines].weight));
		lines[nlines].weight[aggs[i].side < 3 ? aggs[i].side : 0] = w;
		nlines++;
	}
	if (nlines > 1)
		qsort(lines, nlines, sizeof(*lines), line_cmp);
	for (size_t i = 0; i < nlines;) {
		size_t j = i;
		uint64_t w[3] = { 0, 0, 0 };

		/* different addresses in one function give the same text: one line (and
		 * in a differential profile, the two builds' addresses) */
		for (; j < nlines && strcmp(lines[i].text, lines[j].text) == 0; j++)
			for (int k = 0; k < 3; k++)
				w[k] += lines[j].weight[k];
		if (o->diff) {
			/* scaled as difffolded.pl -n scales, but rounded rather than cut */
			double base = (double)w[PC_SIDE_BASE] * o->diff->scale[o->weight_period ? 1 : 0];

			if (fprintf(out, "%s %" PRIu64 " %" PRIu64 "\n", lines[i].text,
				    (uint64_t)llround(base), w[PC_SIDE_NEW]) < 0)
				ret = -1;
		} else if (fprintf(out, "%s %" PRIu64 "\n", lines[i].text, w[0]) < 0) {
			ret = -1;
		}
		i = j;
	}
	for (size_t i = 0; i < nlines; i++)
		free(lines[i].text);
	free(lines);
	free(aggs);
	free(b.s);
	free(sbufs.frames);
	free(sbufs.text);
	if (ret == 0 && ferror(out))
		ret = -1;
	if (ret && !errno)
		errno = EIO;
	return ret;
}
