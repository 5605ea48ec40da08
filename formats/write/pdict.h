/* pdict: the tables a profile's frames become in pprof and OTLP alike: strings (UTF-8,
 * in first-use order), functions, locations (a run of inlined frames and the frame they
 * are inlined into, callee first), and the mappings kernel and JIT code at addresses in
 * no recorded mapping are given. The writers number and pack them their own way. */
#ifndef PERFCONV_PDICT_H
#define PERFCONV_PDICT_H

#include <stddef.h>
#include <stdint.h>

#include "common/util.h"
#include "formats/model/profile.h"

/* Frames in one location at most; frames of a stack at most. */
#define PDICT_MAX_GROUP 64
#define PDICT_MAX_DEPTH 2048

struct pd_fn {
	uint32_t name, system_name, file; /* model string ids */
};

struct pd_loc {
	uint32_t first, n;     /* frame ids in `pool`, innermost first */
	uint32_t mapping;      /* the model's mapping id, or nmappings + a synth index; 0 none */
	uint64_t addr;
};

/* A mapping the model lacks: kernel or JIT code at addresses in no recorded mapping. */
struct pd_synth {
	uint8_t kind;
	uint32_t module;       /* model string id */
	uint64_t start, limit;
};

struct pdict {
	const struct profile *p;

	struct strtab out;     /* output string table, in first-use order ("" first) */
	uint32_t *str_map;     /* model string id -> output id + 1 */

	struct pd_fn *fns;
	size_t nfns, fns_cap;
	struct u64map fn_index;
	uint32_t *frame_fn;    /* frame id -> function id (1-based), 0 not yet */

	struct pd_loc *locs;
	size_t nlocs, locs_cap;
	uint32_t *pool;        /* the locations' frames */
	size_t npool, pool_cap;
	struct u64map loc_index;
	struct u64map num_index; /* number + 1 -> its output string id + 1 (pdict_num) */
	uint32_t *node_loc;    /* node -> location id (1-based), 0 not yet */
	uint32_t *node_next;   /* node -> the node after its location's frames */

	/* mappings: 1..nmappings-1 are the model's, then these */
	struct pd_synth *synth;
	size_t nsynth, synth_cap;
};

void pdict_init(struct pdict *w, const struct profile *p);
void pdict_release(struct pdict *w);
/* `s` as an output string (ill-formed UTF-8 as U+FFFD): its index. */
uint32_t pdict_str(struct pdict *w, const char *s);
/* The model's string `id` as an output string: its index (0 for 0). */
uint32_t pdict_model_str(struct pdict *w, uint32_t id);
/* A number's text as an output string, each number formatted once. */
uint32_t pdict_num(struct pdict *w, uint64_t v);
/* The function (1-based) of frame `frame`: one per (name, system name, file). */
uint32_t pdict_function(struct pdict *w, uint32_t frame);
/*
 * The location (1-based) of the frames starting at `node`: its frame and, while a frame
 * is inlined, the frames toward the root up to the one it is inlined into. *next is the
 * node after them.
 */
uint32_t pdict_location(struct pdict *w, uint32_t node, uint32_t *next);
/*
 * An event's name without perf's modifiers: "cpu-clock:pppH" -> "cpu-clock" (a
 * tracepoint's name holds a colon of its own: "sched:sched_switch:u" ->
 * "sched:sched_switch"). Its length in `name`.
 */
size_t pdict_event_base_len(const struct pc_event *e, const char *name);
/* name[0 .. len) and `suffix` into buf; with `go`, every character outside
 * [A-Za-z0-9_] as '_' (Go's and Prometheus's names: no '-' or ':'). */
void pdict_type_name(char *buf, size_t cap, const char *name, size_t len, const char *suffix,
		     int go);
/* The events a writer shows into shown[] (room for p->nevents): `event`, or (-1) every
 * one that has samples, or all when none has. Their number. */
size_t pdict_shown_events(const struct profile *p, int event, int *shown);
/* The event's period: its fixed one, a clock's at its frequency (ns), else the average. */
int64_t pdict_event_period(const struct profile *p, const struct pc_event *e);
/* The model or synthetic mapping of location `loc` (1-based): its kind. */
static inline uint8_t pdict_mapping_kind(const struct pdict *w, uint32_t mapping)
{
	return mapping < w->p->nmappings ? w->p->mappings[mapping].kind
					 : w->synth[mapping - w->p->nmappings].kind;
}

#endif
