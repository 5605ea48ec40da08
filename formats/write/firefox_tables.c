/* firefox_tables: the Firefox Profiler writer's shared tables (see formats/write/firefox.c). */
#include "formats/write/firefox_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "formats/write/json.h"

uint32_t ff_out_str(struct ff_writer *w, uint32_t id)
{
	if (!w->pstr[id]) {
		VEC_PUSH(w->ostr, w->nostr, w->ostr_cap, profile_text(w->p, id));
		w->pstr[id] = (uint32_t)w->nostr;
	}
	return w->pstr[id] - 1;
}

uint32_t ff_out_lit(struct ff_writer *w, const char *s)
{
	VEC_PUSH(w->ostr, w->nostr, w->ostr_cap, s);
	return (uint32_t)w->nostr - 1;
}

/* Nanoseconds as milliseconds, exactly: 1500000 is 1.5. */
void ff_put_ms(FILE *out, uint64_t ns)
{
	uint64_t r = ns % 1000000;
	char frac[8];
	int n = 6;

	json_u64(out, ns / 1000000);
	if (!r)
		return;
	/* digits by hand: a column of times is a writer's most numbers (snprintf's
	 * parsing of its format was most of their cost) */
	frac[0] = '.';
	for (int i = 6; i >= 1; i--, r /= 10)
		frac[i] = (char)('0' + r % 10);
	while (frac[n] == '0')
		n--;
	fwrite(frac, 1, (size_t)n + 1, out);
}

void ff_put_i64(FILE *out, int64_t v)
{
	if (v < 0) {
		fputc('-', out);
		json_u64(out, (uint64_t)-v);
	} else {
		json_u64(out, (uint64_t)v);
	}
}

/* A column "NAME":[ of a table, after the previous one's ] unless `first` (after "length") */
void ff_col(FILE *out, const char *name, int first)
{
	fputs(first ? ",\"" : "],\"", out);
	fputs(name, out);
	fputs("\":[", out);
}

/* The library of mapping `m` (one per file and build id), or -1. */
static int32_t lib_of(struct ff_writer *w, uint32_t m)
{
	const struct pc_mapping *pm;
	uint64_t key;
	uint32_t *v;

	if (!m || m >= w->p->nmappings)
		return -1;
	if (w->lib_of_mapping[m] != -2)
		return w->lib_of_mapping[m];
	pm = &w->p->mappings[m];
	if (pm->kind == FRAME_JIT || !pm->file) {
		w->lib_of_mapping[m] = -1;
		return -1;
	}
	key = ((uint64_t)pm->file << 32 | pm->build_id) + 1;
	v = u64map_get(&w->libs, key);
	if (!v) {
		VEC_PUSH(w->lib_mapping, w->nlibs, w->libs_cap, m);
		u64map_put(&w->libs, key, (uint32_t)w->nlibs - 1);
		v = u64map_get(&w->libs, key);
	}
	w->lib_of_mapping[m] = (int32_t)*v;
	return (int32_t)*v;
}

static uint32_t func_of(struct ff_writer *w, uint32_t vf)
{
	if (!w->func_row[vf]) {
		VEC_PUSH(w->funcs, w->nfuncs, w->funcs_cap, vf);
		w->func_row[vf] = (uint32_t)w->nfuncs;
	}
	return w->func_row[vf] - 1;
}

/* The category of frames of JIT code that ran in process `pid`: one per runtime,
 * named by the process. */
static uint8_t jit_category(struct ff_writer *w, const struct pc_sample *s)
{
	uint32_t name = profile_thread_name(w->p, s->pid, s->pid);

	if (!name)
		name = s->comm;
	for (size_t i = 0; i < w->njit; i++)
		if (w->jit_name[i] == name)
			return (uint8_t)(CAT_JIT + i);
	if (w->njit + CAT_JIT >= 64) /* a machine's many runtimes: the last one shared */
		return (uint8_t)(CAT_JIT + w->njit - 1);
	w->jit_name[w->njit++] = name;
	return (uint8_t)(CAT_JIT + w->njit - 1);
}

int ff_sample_wanted(const struct ff_writer *w, const struct pc_sample *s)
{
	return w->o->event < 0 || s->event == w->o->event;
}

/* The frame table's row for node `n` (its frame at inline depth `depth`). */
static uint32_t frame_row(struct ff_writer *w, uint32_t n, uint8_t depth, uint32_t outer)
{
	const struct profile *p = w->p;
	uint32_t fi = p->nodes[n].frame;
	const struct pc_frame *f = &p->frames[fi];
	struct ff_frame r;
	uint64_t key = ((uint64_t)fi << 8 | depth) + 1;
	uint32_t *have;

	if (w->frame_row[fi] && w->frames[w->frame_row[fi] - 1].depth == depth)
		return w->frame_row[fi] - 1;
	if ((have = u64map_get(&w->frame_rows, key)) != NULL)
		return *have;
	memset(&r, 0, sizeof(r));
	r.frame = fi;
	r.depth = depth;
	r.func = func_of(w, w->v.func_of_frame[fi]);
	r.lib = lib_of(w, f->mapping);
	if (r.lib >= 0) {
		const struct pc_mapping *m = &p->mappings[f->mapping];
		uint32_t name = p->frames[outer].func;
		uint64_t nkey = ((uint64_t)r.lib << 32 | name) + 1;
		uint32_t *ns = u64map_get(&w->nsyms, nkey);

		/* the kernel's mapping's offset is its own address: relative to its start */
		r.rel = f->addr - m->start + (m->kind == FRAME_KERNEL ? 0 : m->offset);
		if (!ns) {
			struct ff_nsym s = { (uint32_t)r.lib, name, r.rel };

			VEC_PUSH(w->nsym, w->nnsym, w->nsym_cap, s);
			u64map_put(&w->nsyms, nkey, (uint32_t)w->nnsym - 1);
			ns = u64map_get(&w->nsyms, nkey);
		} else if (r.rel < w->nsym[*ns].addr) {
			w->nsym[*ns].addr = r.rel;
		}
		r.nsym = *ns + 1;
	}
	switch (f->kind) {
	case FRAME_KERNEL: r.cat = CAT_KERNEL; break;
	case FRAME_JIT: r.cat = w->frame_cat[fi] ? w->frame_cat[fi] : CAT_USER; break;
	default: r.cat = CAT_USER; break;
	}
	VEC_PUSH(w->frames, w->nframes, w->frames_cap, r);
	if (!w->frame_row[fi])
		w->frame_row[fi] = (uint32_t)w->nframes;
	else
		u64map_put(&w->frame_rows, key, (uint32_t)w->nframes - 1);
	return (uint32_t)w->nframes - 1;
}

static void push_stack(struct ff_writer *w, uint32_t frame, uint32_t parent)
{
	if (w->nstacks + 1 > w->stacks_cap) {
		size_t cap = w->stacks_cap;

		grow_array((void **)&w->stack_frame, &cap, w->nstacks + 1, sizeof(uint32_t));
		cap = w->stacks_cap;
		grow_array((void **)&w->stack_parent, &cap, w->nstacks + 1, sizeof(uint32_t));
		w->stacks_cap = cap;
	}
	w->stack_frame[w->nstacks] = frame;
	w->stack_parent[w->nstacks] = parent;
	w->nstacks++;
}

/* The stack, frame, function, resource, library and symbol rows of every sample of
 * the view, in the order the profile made its stack nodes (a prefix first). */
void ff_build_tables(struct ff_writer *w)
{
	const struct profile *p = w->p;
	size_t nn = p->nnodes ? p->nnodes : 1;
	uint8_t *used = xcalloc(nn, 1), *depth = xcalloc(nn, 1);
	uint32_t *outer = xcalloc(nn, sizeof(*outer));

	w->frame_cat = xcalloc(p->nframes ? p->nframes : 1, 1);
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct pc_sample *s = &p->samples[i];

		if (!ff_sample_wanted(w, s))
			continue;
		/* a JIT frame's runtime: the process of the first stack seen to hold it */
		for (uint32_t n = s->stack; n && !used[n]; n = p->nodes[n].parent) {
			uint32_t fi = p->nodes[n].frame;

			used[n] = 1;
			if (p->frames[fi].kind == FRAME_JIT && !w->frame_cat[fi])
				w->frame_cat[fi] = jit_category(w, s);
		}
	}
	w->stack_of_node = xmalloc(nn * sizeof(*w->stack_of_node));
	w->stack_of_node[0] = UINT32_MAX;
	for (size_t n = 1; n < p->nnodes; n++) {
		uint32_t parent = p->nodes[n].parent, fi = p->nodes[n].frame;

		w->stack_of_node[n] = UINT32_MAX;
		if (!used[n])
			continue;
		if (p->frames[fi].kind == FRAME_INLINED && parent) {
			depth[n] = depth[parent] < 255 ? (uint8_t)(depth[parent] + 1) : 255;
			outer[n] = outer[parent];
		} else {
			depth[n] = 0;
			outer[n] = fi;
		}
		push_stack(w, frame_row(w, (uint32_t)n, depth[n], outer[n]),
			   parent ? w->stack_of_node[parent] : UINT32_MAX);
		w->stack_of_node[n] = (uint32_t)w->nstacks - 1;
	}
	/* an off-CPU interval's stack ends in its state, as in every timeline */
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct pc_sample *s = &p->samples[i];
		uint64_t key = ((uint64_t)s->stack << 8 | s->state) + 1;

		if (!ff_sample_wanted(w, s) || !s->state || s->state >= PC_NSTATES ||
		    !p->state_name[s->state] || u64map_get(&w->state_stacks, key))
			continue;
		if (!w->state_frame[s->state]) {
			struct ff_frame r;
			uint32_t vf = profview_fnode(&w->v, s);

			memset(&r, 0, sizeof(r));
			r.frame = UINT32_MAX;
			r.func = func_of(w, w->v.fnodes[vf].func);
			r.lib = -1;
			r.cat = CAT_IDLE;
			r.sub = (uint8_t)s->state;
			VEC_PUSH(w->frames, w->nframes, w->frames_cap, r);
			w->state_frame[s->state] = (uint32_t)w->nframes;
		}
		push_stack(w, w->state_frame[s->state] - 1, w->stack_of_node[s->stack]);
		u64map_put(&w->state_stacks, key, (uint32_t)w->nstacks - 1);
	}
	/* resources and sources of the functions */
	for (size_t i = 0; i < w->nfuncs; i++) {
		const struct pc_function *fn = &w->v.funcs[w->funcs[i]];

		if (fn->module && !u64map_get(&w->resources, (uint64_t)fn->module + 1)) {
			VEC_PUSH(w->res_module, w->nres, w->res_cap, fn->module);
			u64map_put(&w->resources, (uint64_t)fn->module + 1, (uint32_t)w->nres - 1);
		}
	}
	w->res_lib = xcalloc(w->nres ? w->nres : 1, 1);
	for (size_t i = 0; i < w->nfuncs; i++) {
		const struct pc_function *fn = &w->v.funcs[w->funcs[i]];

		if (fn->module && fn->kind != FRAME_JIT)
			w->res_lib[*u64map_get(&w->resources, (uint64_t)fn->module + 1)] = 1;
		if (fn->file && !u64map_get(&w->sources, (uint64_t)fn->file + 1)) {
			VEC_PUSH(w->src_file, w->nsrc, w->src_cap, fn->file);
			u64map_put(&w->sources, (uint64_t)fn->file + 1, (uint32_t)w->nsrc - 1);
		}
	}
	free(used);
	free(depth);
	free(outer);
}

/* A number, or null when `have` is 0. */
static void put_opt(FILE *out, int have, uint64_t v)
{
	if (have)
		json_u64(out, v);
	else
		fputs("null", out);
}

static void write_stacks_frames(struct ff_writer *w)
{
	FILE *out = w->out;
	const struct profile *p = w->p;
	const struct ff_frame *fr = w->frames;

	fputs("\"stackTable\":{\"length\":", out);
	json_u64(out, w->nstacks);
	COLUMN("frame", 1, w->nstacks, json_u64(out, w->stack_frame[i]));
	COLUMN("prefixOffset", 0, w->nstacks,
	       json_u64(out, w->stack_parent[i] == UINT32_MAX ? 0 : i - w->stack_parent[i]));
	fputs("]},\n\"frameTable\":{\"length\":", out);
	json_u64(out, w->nframes);
	COLUMN("address", 1, w->nframes, ff_put_i64(out, fr[i].lib >= 0 ? (int64_t)fr[i].rel : -1));
	COLUMN("lib", 0, w->nframes, ff_put_i64(out, fr[i].lib));
	COLUMN("inlineDepth", 0, w->nframes, json_u64(out, fr[i].depth));
	COLUMN("category", 0, w->nframes, json_u64(out, fr[i].cat));
	COLUMN("subcategory", 0, w->nframes, json_u64(out, fr[i].sub));
	COLUMN("func", 0, w->nframes, json_u64(out, fr[i].func));
	COLUMN("nativeSymbol", 0, w->nframes, put_opt(out, fr[i].nsym != 0, fr[i].nsym - 1));
	COLUMN("innerWindowID", 0, w->nframes, fputc('0', out));
	COLUMN("line", 0, w->nframes,
	       put_opt(out, fr[i].frame != UINT32_MAX && p->frames[fr[i].frame].line,
		       fr[i].frame != UINT32_MAX ? p->frames[fr[i].frame].line : 0));
	COLUMN("column", 0, w->nframes,
	       put_opt(out, fr[i].frame != UINT32_MAX && p->frames[fr[i].frame].column,
		       fr[i].frame != UINT32_MAX ? p->frames[fr[i].frame].column : 0));
	COLUMN("originalLocation", 0, w->nframes, fputs("null", out));
	fputs("]},\n", out);
}

static void write_funcs(struct ff_writer *w)
{
	FILE *out = w->out;
	const struct pc_function *fns = w->v.funcs;
	const uint32_t *f = w->funcs;

	fputs("\"funcTable\":{\"length\":", out);
	json_u64(out, w->nfuncs);
	COLUMN("name", 1, w->nfuncs, json_u64(out, ff_out_str(w, fns[f[i]].name)));
	COLUMN("isJS", 0, w->nfuncs, fputs("false", out));
	COLUMN("relevantForJS", 0, w->nfuncs, fputs("false", out));
	COLUMN("resource", 0, w->nfuncs,
	       ff_put_i64(out, fns[f[i]].module ? (int64_t)*u64map_get(&w->resources,
								(uint64_t)fns[f[i]].module + 1)
					     : -1));
	COLUMN("source", 0, w->nfuncs,
	       put_opt(out, fns[f[i]].file != 0,
		       fns[f[i]].file ? *u64map_get(&w->sources, (uint64_t)fns[f[i]].file + 1) : 0));
	COLUMN("lineNumber", 0, w->nfuncs, put_opt(out, fns[f[i]].line != 0, fns[f[i]].line));
	COLUMN("columnNumber", 0, w->nfuncs, fputs("null", out));
	COLUMN("originalLocation", 0, w->nfuncs, fputs("null", out));
	fputs("]},\n", out);
}

void ff_write_shared(struct ff_writer *w)
{
	FILE *out = w->out;
	const struct profile *p = w->p;

	fputs("\"shared\":{", out);
	write_stacks_frames(w);
	write_funcs(w);
	fputs("\"resourceTable\":{\"length\":", out);
	json_u64(out, w->nres);
	COLUMN("name", 1, w->nres,
	       json_u64(out, ff_out_lit(w, path_base(profile_text(p, w->res_module[i])))));
	COLUMN("host", 0, w->nres, fputs("null", out));
	/* 1: a library; a module of JIT code is not */
	COLUMN("type", 0, w->nres, fputc(w->res_lib[i] ? '1' : '0', out));
	fputs("]},\n\"nativeSymbols\":{\"length\":", out);
	json_u64(out, w->nnsym);
	COLUMN("libIndex", 1, w->nnsym, json_u64(out, w->nsym[i].lib));
	COLUMN("address", 0, w->nnsym, json_u64(out, w->nsym[i].addr));
	COLUMN("name", 0, w->nnsym, json_u64(out, ff_out_str(w, w->nsym[i].name)));
	COLUMN("functionSize", 0, w->nnsym, fputs("null", out));
	fputs("]},\n\"sources\":{\"length\":", out);
	json_u64(out, w->nsrc);
	COLUMN("id", 1, w->nsrc, fputs("null", out));
	COLUMN("filename", 0, w->nsrc, json_u64(out, ff_out_str(w, w->src_file[i])));
	COLUMN("startLine", 0, w->nsrc, fputc('1', out));
	COLUMN("startColumn", 0, w->nsrc, fputc('1', out));
	COLUMN("sourceMapURL", 0, w->nsrc, fputs("null", out));
	COLUMN("content", 0, w->nsrc, fputs("null", out));
	fputs("]},\n\"sourceLocationTable\":{\"length\":0,\"source\":[],\"line\":[],\"column\":[]},\n"
	      "\"stringArray\":[", out);
	for (size_t i = 0; i < w->nostr; i++) {
		fputs(i ? ",\n" : "\n", out);
		json_string(out, w->ostr[i]);
	}
	fputs("]},\n", out);
}

void ff_release_tables(struct ff_writer *w)
{
	free(w->pstr);
	free(w->ostr);
	free(w->stack_of_node);
	free(w->stack_frame);
	free(w->stack_parent);
	u64map_release(&w->state_stacks);
	free(w->frames);
	free(w->frame_row);
	u64map_release(&w->frame_rows);
	free(w->func_row);
	free(w->funcs);
	u64map_release(&w->resources);
	free(w->res_module);
	free(w->res_lib);
	u64map_release(&w->sources);
	free(w->src_file);
	u64map_release(&w->libs);
	free(w->lib_of_mapping);
	free(w->lib_mapping);
	u64map_release(&w->nsyms);
	free(w->nsym);
	free(w->frame_cat);
}
