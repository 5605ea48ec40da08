/* uploadparts: a converted profile cut in time into profiles a backend takes, sent in order. */
#include "upload/uploadparts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "common/gzout.h"
#include "formats/write/pprof.h"

/* The distinct times of the samples written, each with how many samples lie at it. */
struct times {
	uint64_t *t;
	size_t *cum;     /* cum[k]: samples at t[0 .. k] */
	size_t n;
};

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static void times_make(const struct profile *p, const struct write_options *wo, uint64_t from,
		       uint64_t to, struct times *t)
{
	uint64_t *all = xmalloc((p->nsamples ? p->nsamples : 1) * sizeof(*all));
	size_t n = 0;

	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct pc_sample *s = &p->samples[i];

		if (s->event >= p->nevents || (wo->event >= 0 && s->event != wo->event) ||
		    (wo->event < 0 && !p->events[s->event].nsamples))
			continue;
		if (to && (s->time < from || s->time >= to))
			continue;
		all[n++] = s->time;
	}
	qsort(all, n, sizeof(*all), u64_cmp);
	t->t = xmalloc((n ? n : 1) * sizeof(*t->t));
	t->cum = xmalloc((n ? n : 1) * sizeof(*t->cum));
	for (size_t i = 0; i < n; i++) {
		if (!t->n || t->t[t->n - 1] != all[i]) {
			t->t[t->n] = all[i];
			t->cum[t->n] = t->n ? t->cum[t->n - 1] : 0;
			t->n++;
		}
		t->cum[t->n - 1]++;
	}
	free(all);
}

static void times_release(struct times *t)
{
	free(t->t);
	free(t->cum);
}

static int fits(const struct upload_limits *l, const struct write_stats *st)
{
	return (!l->bytes || st->bytes <= l->bytes) && (!l->samples || st->samples <= l->samples);
}

/* `len` bytes gzipped into *out (*outlen): 0, or -1 with errno set. */
static int gzip_bytes(const char *in, size_t len, char **out, size_t *outlen)
{
	FILE *mem = open_memstream(out, outlen);
	struct gzout *g;

	if (!mem)
		return -1;
	g = gzout_open(mem, 6);
	gzout_write(g, in, len);
	return (gzout_close(g) != 0) + (fclose(mem) != 0) ? -1 : 0;
}

/* Part `pt` (its range and window set) written: 0, or -1 with errno set. */
static int part_write(const struct profile *p, const struct write_options *wo,
		      const struct upload_writer *w, struct upload_part *pt)
{
	struct write_options o = *wo;
	FILE *mem;
	int bad;
	char *raw = NULL;
	size_t rawlen = 0;

	free(pt->buf);
	pt->buf = NULL;
	pt->len = 0;
	o.from_time = pt->from;
	o.to_time = pt->to;
	o.merge_threads = pt->merged_threads;
	o.time_nanos = pt->start_ns;
	/* a whole profile's window may be empty (one sample: the writer then writes its
	 * samples' span, 0); a part's is its own, 1 ns at least, not the whole's span */
	o.duration_nanos = pt->end_ns - pt->start_ns;
	if (o.duration_nanos <= 0 && pt->to)
		o.duration_nanos = 1;
	o.stats = &pt->st;
	if (!w || !w->write) {
		mem = open_memstream(&pt->buf, &pt->len);
		if (!mem)
			return -1;
		bad = (pprof_write(p, &o, mem) != 0) + (fclose(mem) != 0);
		return bad ? -1 : 0;
	}
	mem = open_memstream(&raw, &rawlen);
	if (!mem)
		return -1;
	bad = (w->write(p, &o, mem) != 0) + (fclose(mem) != 0);
	if (!bad && w->gzip)
		bad = gzip_bytes(raw, rawlen, &pt->buf, &pt->len) != 0;
	if (!bad && !w->gzip) {
		pt->buf = raw;
		pt->len = rawlen;
		raw = NULL;
	}
	free(raw);
	return bad ? -1 : 0;
}

struct cutter {
	const struct profile *p;
	const struct write_options *wo;
	const struct upload_writer *w;
	const struct upload_limits *l;
	int64_t wall_offset, start_ns, end_ns;
	struct times t;
	struct upload_cut *c;
	size_t cap;
};

static int64_t wall_at(const struct cutter *k, uint64_t clock)
{
	int64_t w = (int64_t)clock + k->wall_offset;

	return w < k->start_ns ? k->start_ns : w > k->end_ns ? k->end_ns : w;
}

/* Times [lo, hi) of k->t as parts, each under the limits where one instant allows. */
static int cut(struct cutter *k, size_t lo, size_t hi)
{
	struct upload_part pt;
	uint64_t parts = 2;

	memset(&pt, 0, sizeof(pt));
	pt.from = lo ? k->t.t[lo] : 0;
	pt.to = hi < k->t.n ? k->t.t[hi] : UINT64_MAX;
	pt.start_ns = lo ? wall_at(k, pt.from) : k->start_ns;
	pt.end_ns = hi < k->t.n ? wall_at(k, pt.to) : k->end_ns;
	if (part_write(k->p, k->wo, k->w, &pt) != 0)
		goto fail;
	if (!fits(k->l, &pt.st) && hi - lo >= 2) {
		size_t base = lo ? k->t.cum[lo - 1] : 0, total = k->t.cum[hi - 1] - base, at = lo;

		if (k->l->bytes && pt.st.bytes / k->l->bytes + 1 > parts)
			parts = pt.st.bytes / k->l->bytes + 1;
		if (k->l->samples && pt.st.samples / k->l->samples + 1 > parts)
			parts = pt.st.samples / k->l->samples + 1;
		if (parts > hi - lo)
			parts = hi - lo;
		free(pt.buf);
		/* pieces of about as many samples each, at least one instant each */
		for (uint64_t j = 1; j <= parts; j++) {
			size_t want = base + (size_t)((double)total * (double)j / (double)parts);
			size_t end = at + 1;

			while (end < hi && k->t.cum[end - 1] < want)
				end++;
			/* an instant at least for each piece still to come */
			if (end > hi - (size_t)(parts - j))
				end = hi - (size_t)(parts - j);
			if (j == parts)
				end = hi;
			if (cut(k, at, end) != 0)
				return -1;
			at = end;
		}
		return 0;
	}
	if (!fits(k->l, &pt.st) && k->l->samples && pt.st.samples > k->l->samples) {
		pt.merged_threads = 1;
		if (part_write(k->p, k->wo, k->w, &pt) != 0)
			goto fail;
	}
	pt.over = !fits(k->l, &pt.st);
	VEC_PUSH(k->c->parts, k->c->n, k->cap, pt);
	return 0;
fail:
	free(pt.buf);
	return -1;
}

int upload_cut_make(const struct profile *p, const struct write_options *wo,
		    const struct upload_writer *w, const struct upload_limits *l, int64_t start_ns,
		    int64_t end_ns, int64_t wall_offset, struct upload_cut *c)
{
	struct cutter k = { p, wo, w, l, wall_offset, start_ns, end_ns, { NULL, NULL, 0 }, c, 0 };
	struct upload_part whole;
	int rc;

	memset(c, 0, sizeof(*c));
	memset(&whole, 0, sizeof(whole));
	whole.start_ns = start_ns;
	whole.end_ns = end_ns;
	if (part_write(p, wo, w, &whole) != 0) {
		free(whole.buf);
		return -1;
	}
	c->whole_bytes = whole.st.bytes;
	c->whole_samples = whole.st.samples;
	if (!fits(l, &whole.st) && p->has_time)
		times_make(p, wo, 0, 0, &k.t);
	if (k.t.n < 2 && fits(l, &whole.st)) {
		times_release(&k.t);
		c->parts = xmalloc(sizeof(*c->parts));
		c->parts[0] = whole;
		c->n = 1;
		return 0;
	}
	/* over: cut at its times (one instant alone: written again with threads merged) */
	free(whole.buf);
	c->why = l->samples && whole.st.samples > l->samples ? 2 : 1;
	if (k.t.n) {
		rc = cut(&k, 0, k.t.n);
	} else {
		/* no sample times to cut by: whole, its threads merged where that helps */
		times_release(&k.t);
		k.t.n = 0;
		memset(&whole, 0, sizeof(whole));
		whole.start_ns = start_ns;
		whole.end_ns = end_ns;
		whole.merged_threads = l->samples && c->whole_samples > l->samples;
		rc = part_write(p, wo, w, &whole);
		whole.over = !fits(l, &whole.st);
		if (rc == 0) {
			c->parts = xmalloc(sizeof(*c->parts));
			c->parts[0] = whole;
			c->n = 1;
		} else {
			free(whole.buf);
		}
		return rc;
	}
	times_release(&k.t);
	if (rc != 0)
		upload_cut_release(c);
	return rc;
}

int upload_cut_halve(const struct profile *p, const struct write_options *wo,
		     const struct upload_writer *w, int64_t wall_offset, struct upload_cut *c,
		     size_t i)
{
	struct upload_part *old = &c->parts[i], a, b;
	struct times t;
	size_t half, mid = 0;

	times_make(p, wo, old->from, old->to ? old->to : UINT64_MAX, &t);
	if (t.n < 2) {
		times_release(&t);
		errno = EDOM;
		return -1;
	}
	half = t.cum[t.n - 1] / 2;
	while (mid + 1 < t.n - 1 && t.cum[mid] < half)
		mid++;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	a.from = old->from;
	a.to = b.from = t.t[mid + 1];
	b.to = old->to ? old->to : UINT64_MAX;
	a.start_ns = old->start_ns;
	b.end_ns = old->end_ns;
	a.end_ns = b.start_ns = (int64_t)b.from + wall_offset < old->start_ns ? old->start_ns :
				(int64_t)b.from + wall_offset > old->end_ns ? old->end_ns :
				(int64_t)b.from + wall_offset;
	a.merged_threads = b.merged_threads = old->merged_threads;
	times_release(&t);
	if (part_write(p, wo, w, &a) != 0 || part_write(p, wo, w, &b) != 0) {
		free(a.buf);
		free(b.buf);
		return -1;
	}
	c->parts = xrealloc(c->parts, (c->n + 1) * sizeof(*c->parts));
	old = &c->parts[i];
	free(old->buf);
	memmove(&c->parts[i + 2], &c->parts[i + 1], (c->n - i - 1) * sizeof(*c->parts));
	c->parts[i] = a;
	c->parts[i + 1] = b;
	c->n++;
	return 0;
}

void upload_cut_release(struct upload_cut *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->parts[i].buf);
	free(c->parts);
	memset(c, 0, sizeof(*c));
}

int upload_send_batch(struct upload_batch *b, struct runtime_ids *rids,
		      const struct upload_batch_ops *ops, int64_t *sent_until, size_t *last,
		      struct upload_result *r)
{
	char rid[RUNTIME_ID_LEN + 1];
	int how = 0;

	for (size_t k = 0; k < b->n && how == 0; k++) {
		struct upload_profile *up = &b->parts[k];
		int64_t end = up->start_ns + up->duration_ns;

		*last = k;
		if (sent_until && b->n > 1 && *sent_until && end <= *sent_until)
			continue;
		runtime_ids_take(rids, b->run, b->boot_ns, rid, &up->seq);
		up->runtime_id = rid;
		how = ops->send(ops->ctx, b, k, r);
		if (how != 0 && r->too_large && ops->halve(ops->ctx, b, k, r) == 0) {
			how = 0;
			k--; /* its first half next */
		} else if (how == 0 && sent_until && b->n > 1) {
			*sent_until = end;
		}
	}
	return how;
}
