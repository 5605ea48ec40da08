/* difftop: a differential profile as text, the functions whose shares changed most. */
#include "formats/write/difftop.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/writeend.h"
#include "formats/write/frametext.h"

struct fn {
	double self[3], total[3]; /* by enum pc_side, raw weights */
	size_t seen;              /* the last sample (+1) whose total it counted */
};

struct ranked {
	uint32_t name;
	double dself, dtotal, key;
};

static int ranked_cmp(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->key != y->key)
		return x->key > y->key ? -1 : 1;
	return (x->name > y->name) - (x->name < y->name);
}

static double share(double w, double total)
{
	return total > 0 ? 100.0 * w / total : 0;
}

int difftop_write(const struct profile *p, const struct write_options *o, FILE *out)
{
	struct strtab names;
	struct fn *fns = NULL;
	struct ranked *rank = NULL;
	size_t nfns = 0, fns_cap = 0, nrank = 0, frames_cap = 0, text_cap = 0, shown;
	uint32_t *frames = NULL;
	char *text = NULL;
	double total[3] = { 0, 0, 0 };
	int ret = 0;

	if (!o->diff) {
		errno = EINVAL;
		return -1;
	}
	strtab_init(&names);
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct pc_sample *s = &p->samples[i];
		double w = (double)(o->weight_period ? s->period : s->count);
		size_t n;

		if ((o->event >= 0 && s->event != o->event) || s->side > PC_SIDE_NEW)
			continue;
		total[s->side] += w;
		n = profile_stack_all(p, s->stack, &frames, &frames_cap);
		for (size_t k = 0; k < n; k++) {
			uint32_t id = strtab_intern(&names,
						    frame_text_all(p, &p->frames[frames[k]], o,
								   &text, &text_cap));

			while (nfns <= id) {
				if (nfns >= fns_cap)
					grow_array((void **)&fns, &fns_cap, nfns + 1, sizeof(*fns));
				memset(&fns[nfns++], 0, sizeof(*fns));
			}
			if (k == 0)
				fns[id].self[s->side] += w;
			/* recursion: a stack counts once in its function's total */
			if (fns[id].seen != i + 1) {
				fns[id].seen = i + 1;
				fns[id].total[s->side] += w;
			}
		}
	}
	rank = xcalloc(nfns + 1, sizeof(*rank));
	for (size_t id = 1; id < nfns; id++) {
		struct ranked r;

		r.name = (uint32_t)id;
		r.dself = share(fns[id].self[PC_SIDE_NEW], total[PC_SIDE_NEW]) -
			  share(fns[id].self[PC_SIDE_BASE], total[PC_SIDE_BASE]);
		r.dtotal = share(fns[id].total[PC_SIDE_NEW], total[PC_SIDE_NEW]) -
			   share(fns[id].total[PC_SIDE_BASE], total[PC_SIDE_BASE]);
		r.key = fmax(fabs(r.dself), fabs(r.dtotal));
		if (fns[id].total[PC_SIDE_BASE] > 0 || fns[id].total[PC_SIDE_NEW] > 0)
			rank[nrank++] = r;
	}
	if (nrank > 1)
		qsort(rank, nrank, sizeof(*rank), ranked_cmp);
	shown = o->diff->top && o->diff->top < nrank ? o->diff->top : nrank;
	if (fprintf(out, "%s -> %s: the %zu of %zu functions whose shares changed most\n"
		    "(shares of each side's %s; changes in points of percent)\n\n",
		    o->diff->base_name, o->diff->new_name, shown, nrank,
		    o->weight_period ? "periods" : "samples") < 0)
		ret = -1;
	if (fprintf(out, "%10s %8s %8s | %11s %8s %8s | %s\n", "self: base", "new", "change",
		    "total: base", "new", "change", "function") < 0)
		ret = -1;
	for (size_t i = 0; i < shown; i++) {
		const struct fn *f = &fns[rank[i].name];
		const char *only = f->total[PC_SIDE_BASE] == 0 ? " (only in NEW)"
				   : f->total[PC_SIDE_NEW] == 0 ? " (only in BASE)" : "";

		if (fprintf(out, "%9.2f%% %7.2f%% %+7.2f%% | %10.2f%% %7.2f%% %+7.2f%% | %s%s\n",
			    share(f->self[PC_SIDE_BASE], total[PC_SIDE_BASE]),
			    share(f->self[PC_SIDE_NEW], total[PC_SIDE_NEW]), rank[i].dself,
			    share(f->total[PC_SIDE_BASE], total[PC_SIDE_BASE]),
			    share(f->total[PC_SIDE_NEW], total[PC_SIDE_NEW]), rank[i].dtotal,
			    strtab_str(&names, rank[i].name), only) < 0)
			ret = -1;
	}
	if (fprintf(out, "\nbase: %.0f %s, new: %.0f %s (%+.1f%%)\n", total[PC_SIDE_BASE],
		    o->weight_period ? "in periods" : "samples", total[PC_SIDE_NEW],
		    o->weight_period ? "in periods" : "samples",
		    total[PC_SIDE_BASE] > 0 ? 100.0 * (total[PC_SIDE_NEW] - total[PC_SIDE_BASE]) /
						      total[PC_SIDE_BASE]
					    : 0.0) < 0)
		ret = -1;
	strtab_release(&names);
	free(fns);
	free(rank);
	free(frames);
	free(text);
	return write_end(out, ret);
}
