/* perfdata: a streaming reader of perf.data, file and pipe mode: iteration, passes,
 * open and close.
 *
 * Spec: tools/perf/Documentation/perf.data-file-format.txt in the Linux tree; record
 * layouts in include/uapi/linux/perf_event.h. perf's own reader is
 * tools/perf/util/header.c, session.c and evsel.c (evsel__parse_sample). The parts
 * of the reader, one job each, are listed in formats/read/perfdata_internal.h.
 *
 * The input is mapped, never read into memory; records are decoded where they lie
 * through byte loaders that swap when the file comes from the other byte order, so
 * alignment never matters. Only a callchain that cannot be borrowed as it is
 * (swapped, or not 8-byte aligned) and a string without its NUL are copied, into
 * buffers allocated once. Compressed records are inflated through one zstd stream
 * per file into a buffer of bounded size, a chunk at a time.
 */
#include "formats/read/perfdata_internal.h"

#include "common/bytes.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- passes ---- */

void pd_warn(struct perf_reader *r, const char *path, uint64_t off, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	if (r->seq && r->seq <= r->warned_seq &&
	    (!r->prev_skip || r->cur_type != r->prev_skip || r->index <= r->prev_skip_from))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	diag_warn(r->d, path, off, "%s", msg);
}

const char *pd_cur_path(const struct perf_reader *r)
{
	if (r->cur < r->nfiles)
		return r->files[r->cur].path;
	return r->path;
}

static void start_file(struct perf_reader *r, size_t i)
{
	r->cur = i;
	r->pos = i < r->nfiles ? r->files[i].start : 0;
	r->released = 0;
	r->plausible_at = 0;
	pd_reset_stream(r);
}

/* Count the record framed at `p`; 1 when it is of the type not to decode. */
static int skipped(struct perf_reader *r, const uint8_t *p)
{
	r->cur_type = ld32(p, r->swapped);
	r->index++;
	if (!r->skip_type || r->cur_type != r->skip_type)
		return 0;
	if (r->skipped_sample && r->cur_type == PERF_RECORD_SAMPLE) {
		struct perf_sample_id sid;

		r->skipped_sample(r->skipped_arg, r->index,
				  pd_sample_identity(r, p, ld16(p + 6, r->swapped), &sid) ? &sid
											    : NULL);
	}
	return 1;
}

void perf_reader_on_skipped_sample(struct perf_reader *r,
				   void (*fn)(void *arg, uint64_t index,
					      const struct perf_sample_id *sid),
				   void *arg)
{
	r->skipped_sample = fn;
	r->skipped_arg = arg;
}

void perf_reader_skip_type(struct perf_reader *r, uint32_t type)
{
	if (type != r->skip_type)
		r->skip_from = r->index;
	r->skip_type = type;
}

int perf_reader_next(struct perf_reader *r, struct perf_record *rec)
{
	for (;;) {
		size_t avail = r->dlen - r->dhead;
		struct pd_file *f;
		struct pd_frame fr;
		const uint8_t *p;
		uint64_t rem, ext, off;
		uint16_t size;
		int ret;

		if (r->finished)
			return 0;
		/* records inflated from compressed ones come first */
		if (avail >= 8) {
			p = r->dbuf + r->dhead;
			size = ld16(p + 6, r->swapped);
			if (size < 8) {
				pd_warn(r, pd_cur_path(r), r->zoff, "%s: record size %u below "
					"header size 8 inside compressed data, the compressed data "
					"of this file is skipped from here",
					pd_rec_name(ld32(p, r->swapped)).s, size);
				pd_zstop(r);
				continue;
			}
			if (size <= avail) {
				r->dhead += size;
				if (skipped(r, p))
					continue;
				ret = pd_decode(r, p, size, r->zoff, rec);
				if (ret)
					return ret;
				continue;
			}
		}
		if (r->zin && (r->zin_pos < r->zin_len || r->zmore)) {
			pd_zfill(r);
			continue;
		}

		f = &r->files[r->cur];
		if (r->pos >= f->end) {
			if (r->dlen - r->dhead)
				pd_warn(r, f->path, r->zoff, "compressed data ends inside a record: "
					"%zu bytes dropped", r->dlen - r->dhead);
			if (r->cur + 1 >= r->nfiles) {
				r->finished = 1;
				/* unknown types, once, after the first pass */
				if (r->seq > r->warned_seq && !r->warned_seq &&
				    r->stats.aux_records)
					diag_warn(r->d, r->path, DIAG_NO_OFFSET, "hardware trace "
						  "(AUX area: ETM, Intel PT; %llu bytes) not decoded: "
						  "the profile holds the recording's samples only",
						  (unsigned long long)r->stats.aux_bytes);
				if (r->seq > r->warned_seq && !r->warned_seq &&
				    r->stats.skipped_unknown)
					diag_warn(r->d, r->path, r->stats.first_unknown - 1,
						  "%llu records of unknown type skipped, the first "
						  "here", (unsigned long long)r->stats.skipped_unknown);
				if (r->seq > r->warned_seq)
					r->warned_seq = r->seq;
				return 0;
			}
			start_file(r, r->cur + 1);
			continue;
		}
		off = r->pos;
		rem = f->end - off;
		p = f->base + off;
		r->seq++;
		r->cur_type = 0; /* framing: its warnings come in the first pass, whatever
				    is skipped (skipped() names the type once it is framed) */
		if (f->map && f->size >= (r->hdr.compressed ? RELEASE_MIN_Z : RELEASE_MIN) &&
		    off - r->released >= RELEASE_STEP)
			pd_release_behind(r, f, off);
		if (rem < 8) {
			pd_warn(r, f->path, off, "data section cut short: %llu bytes of an 8-byte "
				"record header missing, reading stops here",
				(unsigned long long)(8 - rem));
			r->stats.truncated_bytes += f->declared_end > f->end ?
				f->declared_end - f->end : 8 - rem;
			r->pos = f->end;
			continue;
		}
		size = ld16(p + 6, r->swapped);
		/* a damaged header (a size below 8, or one that would take the records
		 * behind it along), or a size that leads into the middle of the next
		 * record: skipped to the next plausible one, and said (once a pass saw it) */
		pd_frame(r, p, rem, r->plausible_at == off + 1, &fr);
		r->plausible_at = fr.next_plausible ? off + fr.len + 1 : 0;
		if (fr.kind == PD_DAMAGE || fr.kind == PD_OVERSIZED) {
			pd_skip_damage(r, f, p, off, fr.len, rem);
			continue;
		}
		if (fr.kind == PD_UNKNOWN_RUN) {
			if (!r->stats.first_unknown)
				r->stats.first_unknown = off + 1;
			r->stats.skipped_unknown += fr.n;
			r->pos = off + fr.len;
			continue;
		}
		ext = fr.len;
		if (ext > rem) {
			pd_warn(r, f->path, off, "data section cut short: %llu bytes of a %llu-byte "
				"record missing, reading stops here",
				(unsigned long long)(ext - rem), (unsigned long long)ext);
			r->stats.truncated_bytes += f->declared_end > f->end ?
				f->declared_end - f->end : ext - rem;
			r->pos = f->end;
			continue;
		}
		r->pos += ext;
		if (ld32(p, r->swapped) == PERF_RECORD_COMPRESSED ||
		    ld32(p, r->swapped) == PERF_RECORD_COMPRESSED2) {
			if (pd_start_compressed(r, p, size, off) < 0)
				return -1;
			continue;
		}
		if (skipped(r, p))
			continue;
		ret = pd_decode(r, p, size, off, rec);
		if (ret)
			return ret;
	}
}

void perf_reader_on_reuse(struct perf_reader *r,
			  void (*fn)(void *arg, const void *lo, const void *hi), void *arg)
{
	r->reuse = fn;
	r->reuse_arg = arg;
}

int perf_reader_inflated(const struct perf_reader *r, const void *p, size_t n)
{
	const uint8_t *b = p;

	return r->dbuf && b >= r->dbuf && b <= r->dbuf + r->dlen && n <= (size_t)(r->dbuf + r->dlen - b);
}

void perf_reader_rewind(struct perf_reader *r)
{
	if (r->seq > r->warned_seq)
		r->warned_seq = r->seq;
	r->seq = 0;
	r->index = 0;
	r->prev_skip = r->skip_type;
	r->prev_skip_from = r->skip_from;
	r->finished = 0;
	r->sp_pending = 0;
	memset(&r->stats, 0, sizeof(r->stats));
	start_file(r, 0);
}

/* ---- open and close ---- */

static struct perf_reader *reader_new(const char *name, struct diag *d)
{
	struct perf_reader *r = calloc(1, sizeof(*r));

	if (!r)
		goto nomem;
	r->d = d;
	r->path = strdup(name);
	r->cc = malloc(REC_MAX);
	r->br = malloc(REC_MAX);
	r->str = malloc(REC_MAX + 1);
	r->sp_chain = malloc(REC_MAX);
	r->sp_user = malloc(REC_MAX);
	r->dcap = DBUF_CHUNK + REC_MAX;
	r->dbuf = malloc(r->dcap);
	if (r->path && r->cc && r->br && r->str && r->sp_chain && r->sp_user && r->dbuf)
		return r;
	perf_reader_close(r);
nomem:
	diag_error(d, name, DIAG_NO_OFFSET, "out of memory");
	return NULL;
}


struct perf_reader *perf_reader_open(const char *path, struct diag *d)
{
	struct perf_reader *r = reader_new(path, d);
	struct pd_file *f;
	struct stat st;

	if (!r)
		return NULL;
	if (strcmp(path, "-") && stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		if (pd_open_dir(r, path) < 0)
			goto fail;
	} else {
		f = pd_add_file(r, path);
		if (!f) {
			diag_error(d, path, DIAG_NO_OFFSET, "out of memory");
			goto fail;
		}
		if (strcmp(path, "-") == 0) {
			if (pd_map_fd(r, STDIN_FILENO, path, f, 0) < 0)
				goto fail;
		} else if (pd_map_path(r, path, path, f, 0) < 0) {
			goto fail;
		}
		if (pd_read_header(r) < 0)
			goto fail;
	}
	start_file(r, 0);
	return r;
fail:
	perf_reader_close(r);
	return NULL;
}

struct perf_reader *perf_reader_open_mem(const void *buf, size_t len, const char *name,
					 struct diag *d)
{
	struct perf_reader *r = reader_new(name, d);
	struct pd_file *f;

	if (!r)
		return NULL;
	f = pd_add_file(r, name);
	if (!f) {
		diag_error(d, name, DIAG_NO_OFFSET, "out of memory");
		goto fail;
	}
	f->base = buf;
	f->size = len;
	if (pd_read_header(r) < 0)
		goto fail;
	start_file(r, 0);
	return r;
fail:
	perf_reader_close(r);
	return NULL;
}

const struct perf_header_info *perf_reader_header(const struct perf_reader *r)
{
	return &r->hdr;
}

size_t perf_reader_nevents(const struct perf_reader *r)
{
	return r->nev;
}

const struct perf_event_desc *perf_reader_event(const struct perf_reader *r, size_t i)
{
	return i < r->nev ? &r->ev[i].d : NULL;
}

const struct perf_reader_stats *perf_reader_stats(const struct perf_reader *r)
{
	return &r->stats;
}

const struct sp_info *perf_reader_simpleperf(const struct perf_reader *r)
{
	return r->sp.nfiles || r->sp.nmeta ? &r->sp : NULL;
}

const void *perf_reader_tracing_data(const struct perf_reader *r, size_t *len)
{
	*len = r->tracing_len;
	return r->tracing;
}

void perf_reader_close(struct perf_reader *r)
{
	struct perf_header_info *h;
	size_t i;

	if (!r)
		return;
	h = &r->hdr;
	for (i = 0; i < r->nfiles; i++)
		pd_free_file(&r->files[i]);
	free(r->files);
	for (i = 0; i < r->nev; i++) {
		free(r->ev[i].d.name);
		free(r->ev[i].d.ids);
		free(r->ev[i].synth);
	}
	free(r->ev);
	free(r->ids);
	free(r->evtypes);
	for (i = 0; i < h->nbuild_ids; i++)
		free(h->build_ids[i].filename);
	free(h->build_ids);
	free(h->hostname);
	free(h->osrelease);
	free(h->version);
	free(h->arch);
	free(h->cpudesc);
	free(h->cpuid);
	free(h->cmdline);
	if (r->zd)
		ZSTD_freeDCtx(r->zd);
	free(r->zstage);
	free(r->dbuf);
	free(r->cc);
	free(r->br);
	free(r->str);
	sp_info_release(&r->sp);
	free(r->sp_tracing);
	free(r->sp_chain);
	free(r->sp_user);
	free(r->path);
	free(r);
}
