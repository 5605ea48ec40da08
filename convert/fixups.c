/* fixups: what pass 2 left for later, done once it is over. */
#include "convert/fixups.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/model/timeline.h"

void fixups_expand_user(struct resolver *res, struct profile *p, const struct replay *rp,
			struct symbolizer *sym)
{
	size_t covered = p->nframes, nu;
	const struct user_pending *up = resolver_user_pending(res, &nu);
	uint32_t *first = xcalloc(covered ? covered : 1, sizeof(*first));
	uint32_t *count = xcalloc(covered ? covered : 1, sizeof(*count));
	uint32_t *pool = NULL;
	size_t npool = 0, pool_cap = 0;

	for (size_t i = nu; i-- > 0;) {
		const struct user_pending *u = &up[i];
		const struct replay_dso *dso = replay_dso_get(rp, u->dso);
		const struct pc_frame *f = &p->frames[u->frame];
		const struct pc_mapping *pm = &p->mappings[f->mapping];
		struct sym_frame sf[RESOLVE_MAX_INLINE];
		uint32_t ids[RESOLVE_MAX_INLINE], k;
		struct replay_map m; /* what resolver_intern() reads of it */
		uint64_t addr = f->addr;
		uint32_t mapping = f->mapping;
		int ret = f->line != 0;
		size_t n;

		memset(&m, 0, sizeof(m));
		m.start = pm->start;
		m.pgoff = pm->offset;
		m.dso = u->dso;
		n = symbolizer_native(sym, u->dso, profile_text(p, dso->path), dso->build_id,
				      dso->build_id_size, resolve_user_offset(&m, addr), ret, sf,
				      RESOLVE_MAX_INLINE);
		/* addr and mapping copied out: interning may move the frames f is in */
		k = resolver_intern(res, &m, mapping, addr, 0, sf, n, NULL, ids);
		first[u->frame] = (uint32_t)npool;
		count[u->frame] = k;
		for (uint32_t j = 0; j < k; j++)
			VEC_PUSH(pool, npool, pool_cap, ids[j]);
	}
	/* gone before the frames are expanded beside them */
	resolver_user_pending_done(res);
	profile_expand_frames(p, first, count, pool, covered);
	free(first);
	free(count);
	free(pool);
}

void fixups_name_kernel(struct resolver *res, struct profile *p, struct symbolizer *sym,
			const uint8_t *kernel_bid, size_t kernel_bid_size)
{
	size_t n;
	const uint32_t *pending = resolver_kernel_pending(res, &n);
	char buf[512];

	for (size_t i = 0; i < n; i++) {
		struct pc_frame *f = &p->frames[pending[i]];
		struct sym_frame sf;
		const char *kmod = NULL;

		if (f->func)
			continue; /* the same frame pending twice */
		/* a module the recording has a table of (simpleperf): named from it */
		if (f->mapping &&
		    symbolizer_kernel_module(sym, profile_text(p, p->mappings[f->mapping].file),
					     f->addr - p->mappings[f->mapping].start, &sf)) {
			const char *path = profile_text(p, p->mappings[f->mapping].file);
			const char *base = strrchr(path, '/');
			size_t len = strlen(base = base ? base + 1 : path);

			if (len > 3 && strcmp(base + len - 3, ".ko") == 0)
				len -= 3;
			snprintf(buf, sizeof(buf), "[%.*s]", (int)(len < 400 ? len : 400), base);
			f->symbolized = 1;
			f->func = profile_str(p, sf.name);
			f->system_name = profile_str(p, sf.system_name);
			f->module = profile_str(p, buf);
			continue;
		}
		if (symbolizer_kernel(sym, f->addr, kernel_bid, kernel_bid_size, &sf, &kmod)) {
			f->symbolized = 1;
			f->func = profile_str(p, sf.name);
			f->system_name = f->func;
			if (kmod) {
				snprintf(buf, sizeof(buf), "[%s]", kmod);
				f->module = profile_str(p, buf);
			}
			continue;
		}
		if (f->mapping)
			snprintf(buf, sizeof(buf), "%s+0x%" PRIx64,
				 resolve_module_name(profile_text(p, p->mappings[f->mapping].file)),
				 f->addr - p->mappings[f->mapping].start);
		else
			snprintf(buf, sizeof(buf), "[unknown]");
		f->func = profile_str(p, buf);
	}
	/* the names took part in no lookup yet: only the interning index is stale */
	profile_reindex_frames(p);
}

void fixups_thread_names(struct profile *p, struct replay *rp)
{
	struct u64map index;  /* (pid, tid) + 1 -> last_time index + 1 */
	struct { uint32_t pid, tid; uint64_t time; } *last = NULL;
	size_t n = 0, cap = 0;

	if (p->timeline) { /* p->samples are aggregates: the timeline saw each sample's time */
		for (size_t i = 0; i < timeline_nseen(p->timeline); i++) {
			uint32_t pid, tid;
			uint64_t time;

			timeline_seen(p->timeline, i, &pid, &tid, &time);
			profile_set_thread_name(p, pid, tid, replay_thread_last_name(rp, pid, tid, time));
		}
		return;
	}
	u64map_init(&index);
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct pc_sample *s = &p->samples[i];
		uint64_t key = (((uint64_t)s->pid << 32) | s->tid) + 1;
		uint32_t *v = u64map_get(&index, key);

		if (!v) {
			grow_array((void **)&last, &cap, n + 1, sizeof(*last));
			last[n].pid = s->pid;
			last[n].tid = s->tid;
			last[n].time = s->time;
			u64map_put(&index, key, (uint32_t)++n);
		} else if (s->time > last[*v - 1].time) {
			last[*v - 1].time = s->time;
		}
	}
	for (size_t i = 0; i < n; i++)
		profile_set_thread_name(p, last[i].pid, last[i].tid,
					replay_thread_last_name(rp, last[i].pid, last[i].tid,
								last[i].time));
	free(last);
	u64map_release(&index);
}

void fixups_mapping_flags(struct profile *p, int inline_frames)
{
	for (size_t i = 0; i < p->nframes; i++) {
		const struct pc_frame *f = &p->frames[i];
		struct pc_mapping *m;

		if (!f->mapping || !f->symbolized)
			continue;
		m = &p->mappings[f->mapping];
		m->has_functions = 1;
		m->has_filenames |= f->file != 0;
		m->has_line_numbers |= f->line != 0;
		/* inlined calls were looked for wherever there were source lines */
		m->has_inline_frames |= inline_frames && (f->line != 0 || f->kind == FRAME_INLINED);
	}
}
