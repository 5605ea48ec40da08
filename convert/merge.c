/* merge: several inputs' profiles into one, each under a root frame naming its input. */
#include "convert/merge.h"

#include <stdlib.h>
#include <string.h>

char *merge_label(const struct profile *p, const char *path)
{
	if (p->hostname && *profile_text(p, p->hostname))
		return xasprintf("%s (%s)", path, profile_text(p, p->hostname));
	return xstrdup(path);
}

/* src's string `id` in dst, through the table `ids` (0: not mapped yet, but for "") */
static uint32_t str_in(struct profile *dst, const struct profile *src, uint32_t *ids,
		       uint32_t id)
{
	if (!id)
		return 0;
	if (!ids[id])
		ids[id] = profile_str(dst, profile_text(src, id));
	return ids[id];
}

/* The dst event for src's event `e`: the one of the same name and unit, or a copy. */
static uint32_t event_in(struct profile *dst, const struct profile *src, uint32_t *ids,
			 size_t e)
{
	struct pc_event ev = src->events[e];

	ev.name = str_in(dst, src, ids, ev.name);
	ev.nsamples = ev.total_period = 0; /* counted again as the samples are added */
	for (size_t i = 0; i < dst->nevents; i++)
		if (dst->events[i].name == ev.name && dst->events[i].unit == ev.unit)
			return (uint32_t)i;
	return profile_add_event(dst, &ev);
}

/* What to add to src's sample times so that they follow on dst's clock. */
static int64_t time_shift(const struct profile *dst, const struct profile *src)
{
	if (!dst->first_time_set || !src->first_time_set)
		return 0;
	if (dst->start_wall_ns && src->start_wall_ns) {
		int64_t at = (int64_t)dst->first_time +
			     ((int64_t)src->start_wall_ns - (int64_t)dst->start_wall_ns);

		return at - (int64_t)src->first_time;
	}
	return (int64_t)dst->last_time + 1 - (int64_t)src->first_time;
}

/* merge_profile, or with `label` NULL the stacks as they are, each sample of `side`. */
static void merge_into(struct profile *dst, const struct profile *src, const char *label,
		       enum pc_side side)
{
	uint32_t *ids = xcalloc(strtab_count(&src->strings) + 1, sizeof(*ids));
	uint32_t *maps = xcalloc(src->nmappings + 1, sizeof(*maps));
	uint32_t *frames = xcalloc(src->nframes + 1, sizeof(*frames));
	uint32_t *nodes = xcalloc(src->nnodes + 1, sizeof(*nodes));
	uint32_t *events = xcalloc(src->nevents + 1, sizeof(*events));
	struct pc_frame root;
	int64_t shift = time_shift(dst, src);
	int first = !dst->nevents; /* the first input: dst is empty */

	for (size_t i = 1; i < src->nmappings; i++) {
		struct pc_mapping m = src->mappings[i];
		uint32_t id;

		m.file = str_in(dst, src, ids, m.file);
		m.build_id = str_in(dst, src, ids, m.build_id);
		id = profile_mapping(dst, &m);
		dst->mappings[id].has_functions |= m.has_functions;
		dst->mappings[id].has_filenames |= m.has_filenames;
		dst->mappings[id].has_line_numbers |= m.has_line_numbers;
		dst->mappings[id].has_inline_frames |= m.has_inline_frames;
		maps[i] = id;
	}
	for (size_t i = 0; i < src->nframes; i++) {
		struct pc_frame f = src->frames[i];

		f.func = str_in(dst, src, ids, f.func);
		f.system_name = str_in(dst, src, ids, f.system_name);
		f.file = str_in(dst, src, ids, f.file);
		f.module = str_in(dst, src, ids, f.module);
		f.mapping = f.mapping < src->nmappings ? maps[f.mapping] : 0;
		frames[i] = profile_frame(dst, &f);
	}
	memset(&root, 0, sizeof(root));
	if (label) {
		root.func = root.system_name = profile_str(dst, label);
		root.symbolized = 1;
		nodes[0] = profile_node(dst, 0, profile_frame(dst, &root));
	}
	/* a node's parent was made before it: its id is lower */
	for (size_t i = 1; i < src->nnodes; i++)
		nodes[i] = profile_node(dst, nodes[src->nodes[i].parent], frames[src->nodes[i].frame]);
	for (size_t i = 0; i < src->nevents; i++)
		events[i] = event_in(dst, src, ids, i);
	for (size_t i = 0; i < src->nsamples; i++) {
		struct pc_sample s = src->samples[i];
		uint32_t name = profile_thread_name(src, s.pid, s.tid);

		s.stack = nodes[s.stack];
		s.comm = str_in(dst, src, ids, s.comm);
		s.event = (uint16_t)events[s.event];
		s.side = (uint8_t)side;
		if (s.time)
			s.time = (uint64_t)((int64_t)s.time + shift);
		if (name)
			profile_set_thread_name(dst, s.pid, s.tid, str_in(dst, src, ids, name));
		profile_add_sample(dst, &s);
	}
	/* its marks on dst's clock, and the window of its samples (a merge's inputs) */
	for (size_t i = 0; i < src->nmarks; i++) {
		struct pc_mark m = src->marks[i];

		m.text = str_in(dst, src, ids, m.text);
		if (m.time)
			m.time = (uint64_t)((int64_t)m.time + shift);
		if (m.end)
			m.end = (uint64_t)((int64_t)m.end + shift);
		profile_add_mark(dst, &m);
	}
	if (label && src->nsamples) {
		struct pc_mark m;

		memset(&m, 0, sizeof(m));
		m.kind = PC_MARK_INPUT;
		m.text = profile_str(dst, label);
		m.cpu = PC_NO_CPU;
		m.time = src->first_time_set ? src->first_time : UINT64_MAX;
		m.end = src->first_time_set ? src->last_time : 0;
		for (size_t i = 0; !src->first_time_set && i < src->nsamples; i++) {
			if (src->samples[i].time < m.time)
				m.time = src->samples[i].time;
			if (src->samples[i].time > m.end)
				m.end = src->samples[i].time;
		}
		m.time = (uint64_t)((int64_t)m.time + shift);
		m.end = (uint64_t)((int64_t)m.end + shift);
		profile_add_mark(dst, &m);
	}
	dst->marks_dropped += src->marks_dropped;
	if (first) {
		dst->hostname = str_in(dst, src, ids, src->hostname);
		dst->osrelease = str_in(dst, src, ids, src->osrelease);
		dst->perf_version = str_in(dst, src, ids, src->perf_version);
		dst->arch = str_in(dst, src, ids, src->arch);
		dst->cmdline = str_in(dst, src, ids, src->cmdline);
		dst->cpudesc = str_in(dst, src, ids, src->cpudesc);
		dst->nr_cpus = src->nr_cpus;
		dst->has_time = src->has_time;
		dst->has_wall_clock = src->has_wall_clock;
		dst->wall_ns = src->wall_ns;
		dst->clock_ns = src->clock_ns;
		dst->start_wall_ns = src->start_wall_ns;
	} else {
		dst->has_time &= src->has_time;
	}
	free(ids);
	free(maps);
	free(frames);
	free(nodes);
	free(events);
}

void merge_profile(struct profile *dst, const struct profile *src, const char *label)
{
	merge_into(dst, src, label, PC_SIDE_NONE);
}

void merge_side(struct profile *dst, const struct profile *src, enum pc_side side)
{
	merge_into(dst, src, NULL, side);
}
