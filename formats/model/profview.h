/* profview: the profile seen by function and by thread, for the timeline writers. */
#ifndef PERFCONV_PROFVIEW_H
#define PERFCONV_PROFVIEW_H

#include "formats/model/profile.h"
#include "formats/model/timeline.h"

/*
 * Frames are per address; a user sees functions. A function is the frames with the
 * same (func, file, module, kind): the frames of one function at different lines or
 * addresses are one function. Its line is the smallest nonzero line among its frames
 * that the profile's stacks use (the model has no declaration lines yet), 0 if none.
 *
 * Function stacks ("fnodes") are the stack tree again over functions: two stacks that
 * differ only in addresses are one fnode. fnode 0 is the root; a parent's id is
 * smaller than its children's.
 *
 * Memory grows with distinct frames and stacks (and, without a timeline, with the
 * samples). Everything is owned by the view and freed by profview_release().
 */
struct pc_function {
	uint32_t name, file, module; /* string ids of the profile */
	uint32_t line;
	uint8_t kind;                /* enum frame_kind */
};

struct pc_fnode {
	uint32_t parent, func, depth; /* the root is its own parent, depth 0 */
};

struct pc_thread {
	uint32_t pid, tid;
	uint32_t comm;      /* the thread's last name (profile_thread_name), else its
			       name at its last sample */
	size_t first, n;    /* its samples: order[first .. first + n), or (a profile
			       with a timeline) thread `first` of the timeline, of which
			       n are of the view's event */
	uint64_t weight;    /* summed period, or the sample count (see profview_init) */
	uint64_t first_time;             /* of its first sample */
	uint64_t last_time, last_period; /* of its last */
};

struct profview {
	const struct profile *p;
	int event;                 /* the samples seen: of this event, -1 all */
	struct pc_function *funcs; size_t nfuncs;
	uint32_t *func_of_frame;   /* [p->nframes] */
	struct pc_fnode *fnodes; size_t nfnodes;
	uint32_t *fnode_of_node;   /* [p->nnodes] */
	/* Threads sorted by name, then pid, then tid. Without a timeline, order[] holds
	 * sample indexes, grouped by thread, each thread's in time order. */
	struct pc_thread *threads; size_t nthreads;
	uint32_t *order; size_t norder;
	/* an off-CPU interval's stack ends in a function for its state ("[off-CPU:
	 * sleeping]", kind FRAME_NATIVE, no file): (fnode << 8 | state) + 1 -> fnode */
	struct u64map state_fnodes;
	/* the first sample of the view's samples in time order: its time and event */
	int has_first;
	uint64_t first_time;
	int first_event;
};

/*
 * Build the view of the samples of event `event` (-1: all) of `p`: from its timeline
 * when it has one (profile_keep_timeline), else from its samples, which must then be
 * sorted by time. A thread's weight counts periods when `weight_period`, else samples.
 */
void profview_init(struct profview *v, const struct profile *p, int event, int weight_period);
void profview_release(struct profview *v);
/* 0, or the errno of a failed read or write of the timeline's temporary files. */
int profview_error(const struct profview *v);

/* The fnode of a sample's stack, its state's function at the leaf when it has one. */
static inline uint32_t profview_fnode(const struct profview *v, const struct pc_sample *s)
{
	uint32_t f = v->fnode_of_node[s->stack];

	if (s->state) {
		const uint32_t *x = u64map_get(&v->state_fnodes, ((uint64_t)f << 8 | s->state) + 1);

		if (x)
			return *x;
	}
	return f;
}

/* A thread's samples of the view's event, in time order, read one by one: the memory
 * a thread of any length takes is the cursor's. */
struct profview_cursor {
	const struct profview *v;
	size_t k, end;                  /* without a timeline: order[k .. end) */
	struct timeline_cursor tc;
};
void profview_cursor_init(struct profview_cursor *c, const struct profview *v,
			  const struct pc_thread *t);
/* The next sample, or NULL after the last (borrowed until the next call). */
const struct pc_sample *profview_cursor_next(struct profview_cursor *c);
void profview_cursor_release(struct profview_cursor *c);

#endif
