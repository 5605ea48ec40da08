/* perfdata_header: the file-mode header (attrs, data section, feature sections) and
 * the pipe-mode header records, and what the feature sections say. */
#include "formats/read/perfdata_internal.h"

#include "common/bytes.h"

#include <stdlib.h>
#include <string.h>

static const char *feat_name(unsigned feat)
{
	static const char *const names[] = {
		[HEADER_TRACING_DATA] = "TRACING_DATA", [HEADER_BUILD_ID] = "BUILD_ID",
		[HEADER_HOSTNAME] = "HOSTNAME", [HEADER_OSRELEASE] = "OSRELEASE",
		[HEADER_VERSION] = "VERSION", [HEADER_ARCH] = "ARCH",
		[HEADER_NRCPUS] = "NRCPUS", [HEADER_CPUDESC] = "CPUDESC",
		[HEADER_CPUID] = "CPUID", [HEADER_TOTAL_MEM] = "TOTAL_MEM",
		[HEADER_CMDLINE] = "CMDLINE", [HEADER_EVENT_DESC] = "EVENT_DESC",
		[HEADER_SAMPLE_TIME] = "SAMPLE_TIME", [HEADER_CLOCKID] = "CLOCKID",
		[HEADER_DIR_FORMAT] = "DIR_FORMAT", [HEADER_COMPRESSED] = "COMPRESSED",
		[HEADER_CLOCK_DATA] = "CLOCK_DATA",
	};

	if (feat < sizeof(names) / sizeof(names[0]) && names[feat])
		return names[feat];
	if (feat == SP_FEAT_FILE || feat == SP_FEAT_FILE2)
		return feat == SP_FEAT_FILE ? "FILE (simpleperf)" : "FILE2 (simpleperf)";
	if (feat == SP_FEAT_META_INFO)
		return "META_INFO (simpleperf)";
	return "unknown";
}


/* ---- features ---- */

struct cur {
	const uint8_t *p;
	size_t len, pos;
	int sw;
};

static int cur_u32(struct cur *c, uint32_t *v)
{
	if (c->len - c->pos < 4)
		return -1;
	*v = ld32(c->p + c->pos, c->sw);
	c->pos += 4;
	return 0;
}

static int cur_u64(struct cur *c, uint64_t *v)
{
	if (c->len - c->pos < 8)
		return -1;
	*v = ld64(c->p + c->pos, c->sw);
	c->pos += 8;
	return 0;
}

/*
 * File format (a string, perf's do_write_string):
 *	u32 len;		padded length, NUL included
 *	char str[len];
 */
static int cur_str(struct cur *c, char **out)
{
	uint32_t len;

	if (cur_u32(c, &len) < 0 || len > c->len - c->pos)
		return -1;
	*out = strndup((const char *)c->p + c->pos, len);
	c->pos += len;
	return *out ? 0 : -1;
}

static void set_str(char **dst, char *s)
{
	free(*dst);
	*dst = s;
}

/*
 * File format (one build id entry; feature BUILD_ID is a run of them, and pipe
 * mode sends each as a PERF_RECORD_HEADER_BUILD_ID):
 *	struct perf_event_header header;	misc: cpumode, bit 15: size is valid
 *	s32 pid;
 *	u8 build_id[20]; u8 size; u8 reserved[3];
 *	char filename[];			to header.size
 */
int pd_add_build_id(struct perf_reader *r, const uint8_t *p, size_t size)
{
	struct perf_header_info *h = &r->hdr;
	struct perf_build_id *n, *b;
	uint16_t misc = ld16(p + 4, r->swapped);

	if (size < 36)
		return -1;
	n = realloc(h->build_ids, (h->nbuild_ids + 1) * sizeof(*n));
	if (!n)
		return -1;
	h->build_ids = n;
	b = &n[h->nbuild_ids];
	memset(b, 0, sizeof(*b));
	b->pid = (int32_t)ld32(p + 8, r->swapped);
	b->misc = misc;
	memcpy(b->id, p + 12, PERF_BUILD_ID_MAX);
	b->id_size = PERF_BUILD_ID_MAX;
	if ((misc & PERF_RECORD_MISC_BUILD_ID_SIZE) && p[32] <= PERF_BUILD_ID_MAX)
		b->id_size = p[32];
	b->filename = strndup((const char *)p + 36, size - 36);
	if (!b->filename)
		return -1;
	h->nbuild_ids++;
	return 0;
}

/*
 * File format (EVENT_DESC):
 *	u32 nr_events; u32 attr_size;
 *	{ struct perf_event_attr attr;	attr_size bytes
 *	  u32 nr_ids; string name; u64 ids[nr_ids]; } events[nr_events];
 */
static int feat_event_desc(struct perf_reader *r, struct cur *c)
{
	uint32_t nre, asz, i, nids;

	if (cur_u32(c, &nre) < 0 || cur_u32(c, &asz) < 0)
		return -1;
	for (i = 0; i < nre; i++) {
		char *name;
		uint64_t id0 = 0;
		int ev = -1;

		if (asz > c->len - c->pos)
			return -1;
		c->pos += asz;
		if (cur_u32(c, &nids) < 0 || cur_str(c, &name) < 0)
			return -1;
		if (nids > (c->len - c->pos) / 8) {
			free(name);
			return -1;
		}
		if (nids) {
			id0 = ld64(c->p + c->pos, c->sw);
			ev = pd_find_id(r, id0);
		}
		if (ev < 0 && nre == r->nev)
			ev = (int)i;
		pd_set_event_name(r, ev, name, 256);
		free(name);
		c->pos += (size_t)nids * 8;
	}
	return 0;
}

static int feat_cmdline(struct perf_reader *r, struct cur *c)
{
	uint32_t nr, i;
	char *line = NULL;
	size_t len = 0;

	if (cur_u32(c, &nr) < 0 || nr > (c->len - c->pos) / 4)
		return -1;
	for (i = 0; i < nr; i++) {
		char *s, *n;
		size_t sl;

		if (cur_str(c, &s) < 0)
			goto bad;
		sl = strlen(s);
		n = realloc(line, len + sl + 2);
		if (!n) {
			free(s);
			goto bad;
		}
		line = n;
		if (len)
			line[len++] = ' ';
		memcpy(line + len, s, sl + 1);
		len += sl;
		free(s);
	}
	set_str(&r->hdr.cmdline, line ? line : strdup(""));
	return 0;
bad:
	free(line);
	return -1;
}

static int process_feature(struct perf_reader *r, unsigned feat, const uint8_t *p, size_t len)
{
	struct perf_header_info *h = &r->hdr;
	struct cur c = { p, len, 0, r->swapped };
	uint32_t a, b;
	uint64_t x, y;
	char *s;
	size_t pos;

	switch (feat) {
	case HEADER_HOSTNAME:
	case HEADER_OSRELEASE:
	case HEADER_VERSION:
	case HEADER_ARCH:
	case HEADER_CPUDESC:
	case HEADER_CPUID:
		if (cur_str(&c, &s) < 0)
			return -1;
		set_str(feat == HEADER_HOSTNAME ? &h->hostname :
			feat == HEADER_OSRELEASE ? &h->osrelease :
			feat == HEADER_VERSION ? &h->version :
			feat == HEADER_ARCH ? &h->arch :
			feat == HEADER_CPUDESC ? &h->cpudesc : &h->cpuid, s);
		return 0;
	case HEADER_NRCPUS:
		if (cur_u32(&c, &a) < 0 || cur_u32(&c, &b) < 0)
			return -1;
		h->nr_cpus_avail = a;
		h->nr_cpus_online = b;
		return 0;
	case HEADER_CMDLINE:
		return feat_cmdline(r, &c);
	case HEADER_EVENT_DESC:
		return feat_event_desc(r, &c);
	case HEADER_CLOCKID:
		if (cur_u64(&c, &x) < 0)
			return -1;
		h->has_clockid = 1;
		h->clockid_res_ns = x;
		return 0;
	case HEADER_CLOCK_DATA:
		/* u32 version; u32 clockid; u64 wall_ns; u64 clock_ns */
		if (cur_u32(&c, &a) < 0 || cur_u32(&c, &b) < 0 || cur_u64(&c, &x) < 0 ||
		    cur_u64(&c, &y) < 0)
			return -1;
		h->has_clock_data = 1;
		h->clock_data_clockid = b;
		h->clock_data_wall_ns = x;
		h->clock_data_clock_ns = y;
		return 0;
	case HEADER_SAMPLE_TIME:
		if (cur_u64(&c, &x) < 0 || cur_u64(&c, &y) < 0)
			return -1;
		h->has_sample_time = 1;
		h->first_sample_time = x;
		h->last_sample_time = y;
		return 0;
	case HEADER_TRACING_DATA: /* parsed by formats/read/tracefmt.c when asked for */
		r->tracing = p;
		r->tracing_len = len;
		return 0;
	case HEADER_COMPRESSED:
		h->compressed = 1;
		return 0;
	case HEADER_DIR_FORMAT:
		if (cur_u64(&c, &x) < 0)
			return -1;
		h->directory = 1;
		r->dir_version = x;
		return 0;
	case HEADER_BUILD_ID:
		for (pos = 0; len - pos >= 8;) {
			uint16_t sz = ld16(p + pos + 6, r->swapped);

			if (sz < 8 || sz > len - pos)
				return -1;
			if (pd_add_build_id(r, p + pos, sz) < 0)
				return -1;
			pos += sz;
		}
		return 0;
	case SP_FEAT_FILE:
	case SP_FEAT_FILE2:
		return sp_read_files(&r->sp, p, len, r->swapped, feat == SP_FEAT_FILE2);
	case SP_FEAT_META_INFO:
		return sp_read_meta(&r->sp, p, len);
	default:
		return 0;
	}
}

/* ---- file mode header ---- */

/*
 * File format (file mode, perf_file_header):
 *	u64 magic;		"PERFILE2"; byte-swapped: the other byte order
 *	u64 size;		104 (72 before features existed)
 *	u64 attr_size;		bytes per attrs entry: perf_event_attr + ids section
 *	{ u64 offset, size; } attrs, data, event_types;
 *	u64 features[4];	bitmap of HEADER_* features
 * then at data.offset + data.size one { u64 offset, size; } per feature bit set,
 * in bit order. Each attrs entry is an attr of attr.size bytes and the
 * { u64 offset, size; } of its array of u64 ids.
 */
static int read_file_header(struct perf_reader *r, struct pd_file *f, uint64_t hsize)
{
	const uint8_t *p = f->base;
	int sw = r->swapped;
	uint64_t attr_size, ao, as, dof, dsz, feat[4] = { 0 }, fo, i, n, nattrs;
	unsigned bit;

	if (hsize != FILE_HEADER_SIZE && hsize != FILE_HEADER_SIZE_NOFEAT) {
		diag_error(r->d, f->path, 8, "header size %llu is neither %d (file) nor %d (pipe)",
			   (unsigned long long)hsize, FILE_HEADER_SIZE, PIPE_HEADER_SIZE);
		return -1;
	}
	if (f->size < hsize) {
		diag_error(r->d, f->path, 0, "header cut short: file has %zu bytes, the header "
			   "needs %llu", f->size, (unsigned long long)hsize);
		return -1;
	}
	attr_size = ld64(p + 16, sw);
	ao = ld64(p + 24, sw);
	as = ld64(p + 32, sw);
	dof = ld64(p + 40, sw);
	dsz = ld64(p + 48, sw);
	if (hsize == FILE_HEADER_SIZE)
		for (i = 0; i < 4; i++)
			feat[i] = ld64(p + 72 + 8 * i, sw);

	if (ao > f->size || as > f->size - ao) {
		diag_error(r->d, f->path, 24, "attrs section 0x%llx+%llu lies outside the file "
			   "(%zu bytes)", (unsigned long long)ao, (unsigned long long)as, f->size);
		return -1;
	}
	if (attr_size < ATTR_SIZE_VER0 + 16 || attr_size > as || as % attr_size) {
		diag_error(r->d, f->path, 16, "attr_size %llu does not fit the attrs section "
			   "(%llu bytes)", (unsigned long long)attr_size, (unsigned long long)as);
		return -1;
	}
	nattrs = as / attr_size;
	for (n = 0; n < nattrs; n++) {
		uint64_t off = ao + n * attr_size, io, is;
		uint32_t sz = ld32(p + off + 4, sw);

		if (sz == 0)
			sz = ATTR_SIZE_VER0;
		/* the ids section is the entry's last 16 bytes: simpleperf pads each entry to
		 * attr_size after an attr.size that is smaller (perf reads the same way) */
		if ((uint64_t)sz + 16 > attr_size) {
			diag_error(r->d, f->path, off, "attr %llu: attr.size %u + 16 is more than "
				   "attr_size %llu", (unsigned long long)n, sz,
				   (unsigned long long)attr_size);
			return -1;
		}
		io = ld64(p + off + attr_size - 16, sw);
		is = ld64(p + off + attr_size - 8, sw);
		if (io > f->size || is > f->size - io || is % 8) {
			diag_error(r->d, f->path, off + attr_size - 16, "attr %llu: ids section 0x%llx+%llu "
				   "lies outside the file (%zu bytes)", (unsigned long long)n,
				   (unsigned long long)io, (unsigned long long)is, f->size);
			return -1;
		}
		if (pd_add_event(r, p + off, sz) < 0 ||
		    pd_add_ids(&r->ev[r->nev - 1].d, p + io, is / 8, sw) < 0) {
			diag_error(r->d, f->path, DIAG_NO_OFFSET, "out of memory");
			return -1;
		}
	}

	if (dof < hsize || dof > f->size) {
		diag_error(r->d, f->path, 40, "data section offset 0x%llx lies outside the file "
			   "(%zu bytes)", (unsigned long long)dof, f->size);
		return -1;
	}
	r->hdr.data_offset = dof;
	r->hdr.data_size = dsz;
	f->start = dof;
	if (dsz == 0) {
		/* perf was killed before it wrote the real size: read to the end */
		f->end = f->declared_end = f->size;
		if (feat[0] | feat[1] | feat[2] | feat[3])
			diag_warn(r->d, f->path, 48, "data size is 0 (perf record killed?): "
				  "reading records to the end of the file, features ignored");
		memset(feat, 0, sizeof(feat));
	} else if (dsz > f->size - dof) {
		f->end = f->size;
		f->declared_end = dof + dsz;
	} else {
		f->end = f->declared_end = dof + dsz;
	}
	if (pd_finish_events(r) < 0)
		return -1;

	/* features: the names of events need the ids indexed first */
	fo = f->declared_end;
	n = 0;
	for (bit = 0; bit < HEADER_FEAT_BITS; bit++)
		n += (feat[bit / 64] >> (bit % 64)) & 1;
	if (!n)
		return 0;
	if (fo > f->size || n * 16 > f->size - fo) {
		diag_warn(r->d, f->path, fo, "feature sections (%llu) lie outside the file, "
			  "ignored", (unsigned long long)n);
		return 0;
	}
	for (bit = 0; bit < HEADER_FEAT_BITS; bit++) {
		uint64_t so, ss;

		if (!((feat[bit / 64] >> (bit % 64)) & 1))
			continue;
		so = ld64(p + fo, sw);
		ss = ld64(p + fo + 8, sw);
		if (so > f->size || ss > f->size - so)
			diag_warn(r->d, f->path, fo, "feature %s: section 0x%llx+%llu lies outside "
				  "the file, ignored", feat_name(bit), (unsigned long long)so,
				  (unsigned long long)ss);
		else if (process_feature(r, bit, p + so, ss) < 0)
			diag_warn(r->d, f->path, so, "feature %s: damaged section, ignored",
				  feat_name(bit));
		fo += 16;
	}
	sp_info_finish(&r->sp);
	if ((!r->tracing || !sp_info_kernel(&r->sp)) && (r->sp.nfiles || r->sp.nmeta))
		pd_sp_find_tracing(r, f);
	return 0;
}


/*
 * File format (HEADER_ATTR, pipe mode):
 *	struct perf_event_header header;
 *	struct perf_event_attr attr;	attr.size bytes
 *	u64 ids[];			to header.size
 */
static int pipe_attr(struct perf_reader *r, const uint8_t *p, uint16_t size, uint64_t off)
{
	uint32_t sz;
	size_t payload = size - 8u;

	if (payload < 8) {
		diag_error(r->d, r->path, off, "PERF_RECORD_HEADER_ATTR: record size %u below "
			   "minimum 16", size);
		return -1;
	}
	sz = ld32(p + 12, r->swapped);
	if (sz == 0)
		sz = ATTR_SIZE_VER0;
	if (sz < ATTR_SIZE_VER0 || sz > payload) {
		diag_error(r->d, r->path, off, "PERF_RECORD_HEADER_ATTR: attr size %u does not "
			   "fit the record (size %u)", sz, size);
		return -1;
	}
	if (pd_add_event(r, p + 8, sz) < 0 ||
	    pd_add_ids(&r->ev[r->nev - 1].d, p + 8 + sz, (payload - sz) / 8, r->swapped) < 0) {
		diag_error(r->d, r->path, DIAG_NO_OFFSET, "out of memory");
		return -1;
	}
	return 0;
}

/*
 * File format (pipe mode): a 16-byte header { u64 magic; u64 size = 16; }, then
 * records. The header records (HEADER_ATTR 64, HEADER_EVENT_TYPE 65,
 * HEADER_BUILD_ID 67, EVENT_UPDATE 78, HEADER_FEATURE 80 = { u64 feat_id; the
 * feature's file-mode section }) may come anywhere, build ids often at the end:
 * scan the whole stream once for them.
 */
static int read_pipe_header(struct perf_reader *r, struct pd_file *f)
{
	const uint8_t *p = f->base;
	uint64_t pos = PIPE_HEADER_SIZE;
	int sw = r->swapped;
	size_t nfeat_names = 0;
	struct { uint64_t id; uint64_t pos; uint16_t size; } *upd = NULL;
	size_t nupd = 0, i;
	int ret = -1;

	r->hdr.pipe_mode = 1;
	f->start = PIPE_HEADER_SIZE;
	f->end = f->declared_end = f->size;
	while (f->size - pos >= 8) {
		const uint8_t *q = p + pos;
		uint32_t type = ld32(q, sw);
		uint16_t size = ld16(q + 6, sw);
		struct pd_frame fr;

		/* framed as next() frames it, which warns about damage when it gets there;
		 * a header record whose size is too large is read to where the next
		 * record is (an attr's ids then end there) */
		pd_frame(r, q, f->size - pos, 0, &fr);
		if (fr.kind == PD_OVERSIZED && type >= PERF_RECORD_HEADER_ATTR &&
		    fr.len >= 8 && fr.len < size)
			size = (uint16_t)fr.len;
		else if (fr.kind != PD_RECORD) {
			pos += fr.len;
			continue;
		}
		if (fr.len > f->size - pos)
			break; /* cut short */
		switch (type) {
		case PERF_RECORD_HEADER_ATTR:
			if (pipe_attr(r, q, size, pos) < 0)
				goto out;
			break;
		case PERF_RECORD_HEADER_EVENT_TYPE:
			/* u64 event_id; char name[64] */
			if (size >= 16) {
				struct evtype *n = realloc(r->evtypes,
							   (r->nevtypes + 1) * sizeof(*n));
				size_t nl = size - 16u < 64 ? size - 16u : 64;

				if (!n)
					goto nomem;
				r->evtypes = n;
				n[r->nevtypes].config = ld64(q + 8, sw);
				memcpy(n[r->nevtypes].name, q + 16, nl);
				n[r->nevtypes].name[nl] = 0;
				r->nevtypes++;
			}
			break;
		case PERF_RECORD_HEADER_BUILD_ID:
			if (pd_add_build_id(r, q, size) < 0)
				diag_warn(r->d, f->path, pos, "PERF_RECORD_HEADER_BUILD_ID: damaged, "
					  "ignored");
			break;
		case PERF_RECORD_EVENT_UPDATE:
			/* u64 type (2: name); u64 id; char name[] */
			if (size > 24 && ld64(q + 8, sw) == 2) {
				void *n = realloc(upd, (nupd + 1) * sizeof(*upd));

				if (!n)
					goto nomem;
				upd = n;
				upd[nupd].id = ld64(q + 16, sw);
				upd[nupd].pos = pos;
				upd[nupd++].size = size;
			}
			break;
		case PERF_RECORD_HEADER_FEATURE:
			nfeat_names++;
			break;
		case PERF_RECORD_HEADER_TRACING_DATA:
			/* u32 size; then that many bytes after the record (pd_rec_extent) */
			if (!r->tracing && fr.len > size) {
				r->tracing = q + size;
				r->tracing_len = (size_t)(fr.len - size);
			}
			break;
		default:
			break;
		}
		pos += fr.len;
	}
	if (pd_finish_events(r) < 0)
		goto out;
	/* names and features once the ids are indexed */
	for (i = 0; i < nupd; i++)
		pd_set_event_name(r, pd_find_id(r, upd[i].id), (const char *)p + upd[i].pos + 24,
			       upd[i].size - 24u);
	for (pos = PIPE_HEADER_SIZE; nfeat_names && f->size - pos >= 8;) {
		const uint8_t *q = p + pos;
		uint16_t size = ld16(q + 6, sw);
		struct pd_frame fr;

		pd_frame(r, q, f->size - pos, 0, &fr);
		if (fr.kind == PD_RECORD && fr.len > f->size - pos)
			break;
		if (fr.kind == PD_OVERSIZED && fr.len < size)
			size = (uint16_t)fr.len; /* as the scan above reads it */
		if (fr.kind != PD_DAMAGE && ld32(q, sw) == PERF_RECORD_HEADER_FEATURE &&
		    size >= 16) {
			uint64_t feat = ld64(q + 8, sw);

			if (feat < HEADER_FEAT_BITS && process_feature(r, (unsigned)feat, q + 16,
								size - 16u) < 0)
				diag_warn(r->d, f->path, pos, "feature %s: damaged section, ignored",
					  feat_name((unsigned)feat));
		}
		pos += fr.len;
	}
	ret = 0;
	goto out;
nomem:
	diag_error(r->d, f->path, DIAG_NO_OFFSET, "out of memory");
out:
	free(upd);
	return ret;
}


/*
 * Version 1 ("PERFFILE", perf before 2.6.37 or so) has version 2's layout, but its
 * magic reads the same in both byte orders: as perf does, the order is the one in
 * which the header's attr_size is a perf_event_attr's size (of any ABI) + 16.
 */
static int v1_byte_order(struct perf_reader *r, struct pd_file *f)
{
	static const uint64_t attr_sizes[] = { 64, 72, 80, 96, 104, 112, 120, 128, 136 };
	uint64_t as;
	size_t i;
	int sw;

	if (f->size < 24) {
		diag_error(r->d, f->path, 0, "header cut short: file has %zu bytes, a version 1 "
			   "header's attr_size is at 16", f->size);
		return -1;
	}
	for (sw = 0; sw < 2; sw++) {
		as = ld64(f->base + 16, sw);
		for (i = 0; i < sizeof(attr_sizes) / sizeof(attr_sizes[0]); i++)
			if (as == attr_sizes[i] + 16) {
				r->swapped = sw;
				return 0;
			}
	}
	diag_error(r->d, f->path, 16, "perf.data version 1 (PERFFILE): attr_size %llu is no "
		   "perf_event_attr size + 16 in either byte order", (unsigned long long)
		   ld64(f->base + 16, 0));
	return -1;
}

/* Read the header of files[0], whatever mode it is in. */
int pd_read_header(struct perf_reader *r)
{
	struct pd_file *f = &r->files[0];
	uint64_t magic, native, hsize;
	int ret;

	if (f->size < 8) {
		diag_error(r->d, f->path, 0, "header cut short: file has %zu bytes, not even "
			   "the 8-byte magic", f->size);
		return -1;
	}
	magic = ld64(f->base, 0);
	native = host_big_endian() ? __builtin_bswap64(PERF_FILE_MAGIC2) : PERF_FILE_MAGIC2;
	if (magic == __builtin_bswap64(native)) {
		r->swapped = 1;
	} else if (magic == PERF_FILE_MAGIC1 || magic == __builtin_bswap64(PERF_FILE_MAGIC1)) {
		if (v1_byte_order(r, f) < 0)
			return -1;
	} else if (magic != native) {
		diag_error(r->d, f->path, 0, "bad magic 0x%016llx: not a perf.data file",
			   (unsigned long long)magic);
		return -1;
	}
	r->hdr.swapped = r->swapped;
	if (f->size < 16) {
		diag_error(r->d, f->path, 0, "header cut short: file has %zu bytes, the header "
			   "needs at least 16", f->size);
		return -1;
	}
	hsize = ld64(f->base + 8, r->swapped);
	if (hsize == PIPE_HEADER_SIZE)
		ret = read_pipe_header(r, f);
	else
		ret = read_file_header(r, f, hsize);
	if (ret == 0)
		pd_name_events(r);
	return ret;
}
