/* fuzz_perfdata: libFuzzer target for the perf.data reader (perf_reader_open_mem). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "formats/read/perfdata.h"
#include "formats/read/simpleperf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

volatile uint64_t fuzz_sink;

/* Touch what a record lends, so that the sanitizers see any bad pointer. */
static uint64_t touch(const struct perf_record *rec)
{
	uint64_t sum = rec->type + rec->size + rec->sid.pid + rec->sid.time;
	uint64_t i;

	sum += ((const uint8_t *)rec->raw)[rec->size - 1];
	switch (rec->type) {
	case PERF_RECORD_SAMPLE:
		for (i = 0; i < rec->u.sample.nr_callchain; i++)
			sum += rec->u.sample.callchain[i];
		for (i = 0; i < rec->u.sample.nr_branches; i++)
			sum += rec->u.sample.branches[i].from + rec->u.sample.branches[i].to +
			       rec->u.sample.branches[i].flags;
		sum += rec->u.sample.branch_hw_idx;
		if (rec->u.sample.raw_size)
			sum += ((const uint8_t *)rec->u.sample.raw)[rec->u.sample.raw_size - 1];
		break;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		sum += strlen(rec->u.mmap.filename) + rec->u.mmap.start;
		break;
	case PERF_RECORD_COMM:
		sum += strlen(rec->u.comm.comm);
		break;
	case PERF_RECORD_KSYMBOL:
		sum += strlen(rec->u.ksymbol.name);
		break;
	default:
		break;
	}
	return sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct perf_header_info *h;
	const struct sp_info *sp;
	struct perf_record rec;
	struct perf_reader *r;
	struct diag d;
	uint64_t sum = 0;
	size_t i, j;
	int pass;

	static FILE *devnull;

	if (!devnull)
		devnull = fopen("/dev/null", "w");
	diag_init(&d);
	d.quiet = 1;
	d.out = devnull; /* errors print even when quiet */
	r = perf_reader_open_mem(data, size, "fuzz.data", &d);
	if (!r)
		return 0;
	h = perf_reader_header(r);
	for (i = 0; i < h->nbuild_ids; i++)
		sum += strlen(h->build_ids[i].filename) + h->build_ids[i].id[0];
	if (h->cmdline)
		sum += strlen(h->cmdline);
	for (i = 0; i < perf_reader_nevents(r); i++) {
		const struct perf_event_desc *e = perf_reader_event(r, i);

		sum += strlen(e->name);
		for (j = 0; j < e->nids; j++)
			sum += e->ids[j];
	}
	/* simpleperf's features: every string, and a lookup in each table */
	if ((sp = perf_reader_simpleperf(r))) {
		for (i = 0; i < sp->nfiles; i++) {
			const struct sp_file *f = &sp->files[i];
			const struct sp_symbol *y;

			sum += strlen(f->path) + (sp_info_file(sp, f->path) == f);
			for (j = 0; j < f->nsyms; j++)
				sum += strlen(f->syms[j].name) + f->syms[j].len;
			if (f->nsyms && (y = sp_file_symbol(f, sp_file_vaddr(f, f->syms[0].vaddr))))
				sum += y->vaddr;
		}
		for (i = 0; i < sp->nmeta; i++)
			sum += strlen(sp->meta[i].key) + strlen(sp->meta[i].value);
	}
	/* as the pipeline reads: process state without samples, then everything */
	for (pass = 0; pass < 2; pass++) {
		perf_reader_skip_type(r, pass == 0 ? PERF_RECORD_SAMPLE : 0);
		while (perf_reader_next(r, &rec) == 1)
			sum += touch(&rec);
		perf_reader_rewind(r);
	}
	sum += perf_reader_stats(r)->records;
	fuzz_sink = sum;
	perf_reader_close(r);
	return 0;
}
