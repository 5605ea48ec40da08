/* speedscope: speedscope's own JSON file format, one sampled profile per thread.
 *
 * Format: file-format-schema.json in the speedscope npm package (and
 * github.com/jlfwong/speedscope, src/lib/file-format-spec.ts). Stacks are root first;
 * "samples" and "weights" have the same length; endValue - startValue is the width
 * speedscope gives the profile.
 */
#include "formats/write/speedscope.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/version.h"
#include "common/writeend.h"
#include "formats/model/profview.h"
#include "formats/write/json.h"

struct ss_writer {
	const struct profile *p;
	const struct write_options *o;
	struct profview v;
	uint32_t *frame_index;  /* function -> index in shared.frames, UINT32_MAX unused */
	uint32_t *path;         /* scratch: one stack, root first */
	size_t path_cap;
	int nanoseconds;        /* weights and values are times */
	uint64_t origin;        /* time of the first sample written */
	FILE *out;
};

static uint64_t weight_of(const struct ss_writer *w, const struct pc_sample *s)
{
	return sample_weight(w->o, s);
}

/* The shared frames: the functions some written stack uses, numbered in that order. */
static void write_frames(struct ss_writer *w)
{
	const struct profile *p = w->p;
	uint8_t *used = xcalloc(w->v.nfnodes ? w->v.nfnodes : 1, 1);
	uint32_t next = 0;

	w->frame_index = xmalloc((w->v.nfuncs ? w->v.nfuncs : 1) * sizeof(*w->frame_index));
	for (size_t i = 0; i < w->v.nfuncs; i++)
		w->frame_index[i] = UINT32_MAX;
	for (size_t i = 0; i < p->nsamples; i++)
		if (w->v.event < 0 || p->samples[i].event == w->v.event)
			used[profview_fnode(&w->v, &p->samples[i])] = 1;
	for (size_t n = w->v.nfnodes; n-- > 1;)
		if (used[n])
			used[w->v.fnodes[n].parent] = 1;
	fputs("\"shared\":{\"frames\":[", w->out);
	for (size_t n = 1; n < w->v.nfnodes; n++) {
		uint32_t f = w->v.fnodes[n].func;
		const struct pc_function *fn = &w->v.funcs[f];

		if (!used[n] || w->frame_index[f] != UINT32_MAX)
			continue;
		w->frame_index[f] = next;
		fputs(next ? ",\n{\"name\":" : "\n{\"name\":", w->out);
		next++;
		json_string(w->out, profile_text(p, fn->name));
		if (fn->file) {
			fputs(",\"file\":", w->out);
			json_string(w->out, profile_text(p, fn->file));
		}
		if (fn->line) {
			fputs(",\"line\":", w->out);
			json_u64(w->out, fn->line);
		}
		fputc('}', w->out);
	}
	fputs("]},\n", w->out);
	free(used);
}

static void write_stack(struct ss_writer *w, uint32_t fnode)
{
	size_t depth = w->v.fnodes[fnode].depth;

	if (depth > w->path_cap)
		grow_array((void **)&w->path, &w->path_cap, depth, sizeof(*w->path));
	for (size_t d = depth; d-- > 0; fnode = w->v.fnodes[fnode].parent)
		w->path[d] = w->frame_index[w->v.fnodes[fnode].func];
	fputc('[', w->out);
	for (size_t d = 0; d < depth; d++) {
		if (d)
			fputc(',', w->out);
		json_u64(w->out, w->path[d]);
	}
	fputc(']', w->out);
}

/* A thread's samples as speedscope takes them: the runs of samples with the same
 * function stack, each written once ("samples") with its summed weight ("weights"). */
static void write_thread(struct ss_writer *w, const struct pc_thread *t)
{
	const struct profile *p = w->p;
	struct profview_cursor c;
	const struct pc_sample *s;
	uint64_t start = 0, end = t->weight, sum = 0;
	uint32_t run = UINT32_MAX;
	char ids[64];

	if (w->nanoseconds) {
		start = t->first_time - w->origin;
		end = t->last_time + t->last_period - w->origin;
		/* speedscope draws the weights back to back in endValue - startValue */
		if (end - start < t->weight)
			end = start + t->weight;
	}
	fputs("{\"type\":\"sampled\",\"name\":", w->out);
	snprintf(ids, sizeof(ids), " (%d/%d)", (int)t->pid, (int)t->tid);
	{
		const char *comm = profile_text(p, t->comm);
		size_t cl = strlen(comm), il = strlen(ids);
		char *name = xmalloc(cl + il + 1);

		memcpy(name, comm, cl);
		memcpy(name + cl, ids, il + 1);
		json_string(w->out, name);
		free(name);
	}
	fputs(",\"unit\":", w->out);
	json_string(w->out, w->nanoseconds ? "nanoseconds" : "none");
	fputs(",\"startValue\":", w->out);
	json_u64(w->out, start);
	fputs(",\"endValue\":", w->out);
	json_u64(w->out, end);
	fputs(",\n\"samples\":[", w->out);
	profview_cursor_init(&c, &w->v, t);
	while ((s = profview_cursor_next(&c)) != NULL) {
		uint32_t f = profview_fnode(&w->v, s);

		if (f == run)
			continue;
		if (run != UINT32_MAX)
			fputc(',', w->out);
		write_stack(w, f);
		run = f;
	}
	profview_cursor_release(&c);
	fputs("],\n\"weights\":[", w->out);
	run = UINT32_MAX;
	profview_cursor_init(&c, &w->v, t);
	while ((s = profview_cursor_next(&c)) != NULL) {
		uint32_t f = profview_fnode(&w->v, s);

		if (f != run && run != UINT32_MAX) {
			json_u64(w->out, sum);
			fputc(',', w->out);
			sum = 0;
		}
		sum += weight_of(w, s);
		run = f;
	}
	profview_cursor_release(&c);
	if (run != UINT32_MAX)
		json_u64(w->out, sum);
	fputs("]}", w->out);
}

int speedscope_write(const struct profile *p, const struct write_options *o, FILE *out)
{
	struct ss_writer w;
	size_t busiest = 0;
	int event = o->event;
	const char *title = p->cmdline ? profile_text(p, p->cmdline) : "";

	memset(&w, 0, sizeof(w));
	w.p = p;
	w.o = o;
	w.out = out;
	profview_init(&w.v, p, o->event, o->weight_period);
	if (w.v.has_first) {
		w.origin = w.v.first_time;
		event = w.v.first_event;
	}
	w.nanoseconds = o->weight_period && p->has_time &&
		profile_event_unit(p, event) == PC_UNIT_NANOSECONDS;
	for (size_t i = 1; i < w.v.nthreads; i++)
		if (w.v.threads[i].weight > w.v.threads[busiest].weight)
			busiest = i;

	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n"
	      "\"exporter\":\"perfconv " PERFCONV_VERSION "\",\n\"name\":", out);
	json_string(out, *title ? title : "perf.data");
	fputs(",\n\"activeProfileIndex\":", out);
	json_u64(out, busiest);
	fputs(",\n", out);
	write_frames(&w);
	fputs("\"profiles\":[", out);
	for (size_t i = 0; i < w.v.nthreads; i++) {
		fputs(i ? ",\n" : "\n", out);
		write_thread(&w, &w.v.threads[i]);
	}
	fputs("]}\n", out);

	free(w.frame_index);
	free(w.path);
	if (profview_error(&w.v)) {
		errno = profview_error(&w.v);
		profview_release(&w.v);
		return -1;
	}
	profview_release(&w.v);
	return write_end(out, 0);
}
