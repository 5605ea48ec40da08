/* recording: what a recording's header says, for the passes and for the profile. */
#include "convert/recording.h"

#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const struct perf_build_id *recording_build_id(const struct perf_header_info *h,
					       const char *path)
{
	for (size_t i = 0; i < h->nbuild_ids; i++)
		if (h->build_ids[i].filename && strcmp(h->build_ids[i].filename, path) == 0)
			return &h->build_ids[i];
	return NULL;
}

/* cpu-clock and task-clock count nanoseconds */
static int is_clock_event(const struct perf_event_desc *e)
{
	return e->type == PERF_TYPE_SOFTWARE &&
	       (e->config == PERF_COUNT_SW_CPU_CLOCK || e->config == PERF_COUNT_SW_TASK_CLOCK);
}

void recording_read(const struct perf_reader *r, struct profile *p, struct recording_facts *f)
{
	const struct perf_header_info *h = perf_reader_header(r);
	const struct perf_build_id *kb = recording_build_id(h, "[kernel.kallsyms]");

	memset(f, 0, sizeof(*f));
	p->hostname = h->hostname ? profile_str(p, h->hostname) : 0;
	p->osrelease = h->osrelease ? profile_str(p, h->osrelease) : 0;
	p->perf_version = h->version ? profile_str(p, h->version) : 0;
	p->arch = h->arch ? profile_str(p, h->arch) : 0;
	p->cmdline = h->cmdline ? profile_str(p, h->cmdline) : 0;
	p->cpudesc = h->cpudesc ? profile_str(p, h->cpudesc) : 0;
	p->nr_cpus = h->nr_cpus_online;
	if (h->has_clock_data) {
		p->has_wall_clock = 1;
		p->wall_ns = h->clock_data_wall_ns;
		p->clock_ns = h->clock_data_clock_ns;
	}
	if (kb) {
		f->kernel_bid = kb->id;
		f->kernel_bid_size = kb->id_size;
	}
	for (size_t i = 0; i < perf_reader_nevents(r); i++) {
		const struct perf_event_desc *e = perf_reader_event(r, i);
		struct pc_event pe;

		memset(&pe, 0, sizeof(pe));
		pe.name = profile_str(p, e->name ? e->name : "");
		pe.is_clock = is_clock_event(e);
		pe.unit = pe.is_clock ? PC_UNIT_NANOSECONDS : PC_UNIT_COUNT;
		pe.type = e->type;
		pe.config = e->config;
		pe.sample_period = e->sample_period;
		pe.freq = e->freq;
		profile_add_event(p, &pe);
		if (e->sample_type & PERF_SAMPLE_TIME)
			f->has_time = 1;
		if (!e->exclude_kernel)
			f->records_kernel = 1;
	}
	p->has_time = f->has_time;
}

int recording_clock_monotonic(const struct perf_reader *r)
{
	size_t n = perf_reader_nevents(r);

	for (size_t i = 0; i < n; i++) {
		const struct perf_event_desc *e = perf_reader_event(r, i);

		if (!e->use_clockid || e->clockid != PERF_CLOCKID_MONOTONIC)
			return 0;
	}
	return n > 0;
}

int recording_made_here(const struct perf_reader *r)
{
	const char *rec = perf_reader_header(r)->hostname;
	char here[256];

	if (gethostname(here, sizeof(here)) != 0)
		return 0;
	here[sizeof(here) - 1] = '\0';
	return rec && strcmp(rec, here) == 0;
}

char *recording_input_dir(const char *input)
{
	char *copy, *dir;
	size_t len;

	if (strcmp(input, "-") == 0)
		return xstrdup(".");
	copy = xstrdup(input);
	len = strlen(copy);
	/* a --threads directory: its files' neighbours are beside the directory */
	while (len > 1 && copy[len - 1] == '/')
		copy[--len] = '\0';
	dir = xstrdup(dirname(copy));
	free(copy);
	return dir;
}
