/* pprof_sample: one pprof Sample packed by hand (see pprof_sample.h). */
#include "formats/write/pprof_sample.h"

#include <string.h>

#include "common/util.h"

/* protobuf's wire types */
#define WIRE_VARINT 0
#define WIRE_LEN 2

static size_t varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static uint8_t *varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* A label's fields, zero ones left out as proto3 leaves them: their bytes' length. */
static size_t label_len(const Perftools__Profiles__Label *l)
{
	int64_t f[4] = { l->key, l->str, l->num, l->num_unit };
	size_t n = 0;

	for (int i = 0; i < 4; i++)
		if (f[i])
			n += 1 + varint_len((uint64_t)f[i]);
	return n;
}

static size_t locations_len(const Perftools__Profiles__Sample *s)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n_location_id; i++)
		n += varint_len(s->location_id[i]);
	return n;
}

static size_t values_len(const Perftools__Profiles__Sample *s)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n_value; i++)
		n += varint_len((uint64_t)s->value[i]);
	return n;
}

size_t pprof_sample_bound(const Perftools__Profiles__Sample *s)
{
	/* a key a byte, a length or a number 10 at most */
	return 2 * 11 + 10 * (s->n_location_id + s->n_value) + s->n_label * (11 + 4 * 11);
}

size_t pprof_sample_pack(const Perftools__Profiles__Sample *s, uint8_t *out)
{
	uint8_t *p = out;
	size_t n;

	if (s->n_location_id) {
		*p++ = 1 << 3 | WIRE_LEN;
		p = varint(p, locations_len(s));
		for (size_t i = 0; i < s->n_location_id; i++)
			p = varint(p, s->location_id[i]);
	}
	if (s->n_value) {
		*p++ = 2 << 3 | WIRE_LEN;
		p = varint(p, values_len(s));
		for (size_t i = 0; i < s->n_value; i++)
			p = varint(p, (uint64_t)s->value[i]);
	}
	for (size_t i = 0; i < s->n_label; i++) {
		const Perftools__Profiles__Label *l = s->label[i];
		int64_t f[4] = { l->key, l->str, l->num, l->num_unit };

		*p++ = 3 << 3 | WIRE_LEN;
		n = label_len(l);
		p = varint(p, n);
		for (int k = 0; k < 4; k++) {
			if (!f[k])
				continue;
			*p++ = (uint8_t)((k + 1) << 3 | WIRE_VARINT);
			p = varint(p, (uint64_t)f[k]);
		}
	}
	return (size_t)(p - out);
}

void pb_gz_pack(struct pb_gz *g, const Perftools__Profiles__Profile *m)
{
	size_t n = perftools__profiles__profile__get_packed_size(m);

	if (n > g->cap)
		grow_array((void **)&g->buf, &g->cap, n, 1);
	perftools__profiles__profile__pack(m, g->buf);
	gzout_write(g->gz, g->buf, n);
	g->raw += n;
}

void pb_gz_pack_sample(struct pb_gz *g, const Perftools__Profiles__Sample *s)
{
	size_t bound = pprof_sample_bound(s), n, k = 0;
	uint64_t len;

	if (bound + 11 > g->cap)
		grow_array((void **)&g->buf, &g->cap, bound + 11, 1);
	/* packed behind room for its key and length, then moved up to them */
	n = pprof_sample_pack(s, g->buf + 11);
	len = n;
	g->buf[k++] = 2 << 3 | 2;
	do {
		g->buf[k++] = (uint8_t)((len & 0x7f) | (len > 0x7f ? 0x80 : 0));
		len >>= 7;
	} while (len);
	memmove(g->buf + k, g->buf + 11, n);
	gzout_write(g->gz, g->buf, k + n);
	g->raw += k + n;
}
