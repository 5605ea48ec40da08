/* output: the table of output formats, and writing a file safely. */
#ifndef PERFCONV_OUTPUT_H
#define PERFCONV_OUTPUT_H

#include "common/diag.h"
#include "formats/write/writer.h"

/* What a format's row says beyond its writer: struct output_format's flags. */
enum {
	OF_PROTOBUF = 1 << 0,     /* binary: not written to a terminal */
	OF_SHAPED = 1 << 1,       /* --for shapes it for a backend (pprof) */
	OF_META = 1 << 2,         /* takes --service, --label and --start-time */
	/* always carries the recording's start, host and labels, in its own body even
	 * when uploaded (OTLP's resource), never as a backend's tags */
	OF_OWN_META = 1 << 3,
	OF_SAMPLE_TIMES = 1 << 4, /* each sample's time kept: aggregated within an instant only */
	OF_DIFF = 1 << 5,         /* perfconv diff writes it */
	OF_DIFF_ONLY = 1 << 6,    /* perfconv diff's alone: no conversion finds it */
	OF_GZIPPED = 1 << 7,      /* its writer gzips what it writes: uploaded as written */
	OF_ADDRESSES = 1 << 8,    /* writes each frame's address and mapping in its process
				     (else the profile's frames_by_object) */
	OF_NO_THREADS = 1 << 9,   /* shows no pid or tid but with --with-pid, --with-tid */
	OF_MARKS = 1 << 10,       /* shows the profile's marks (forks, exits, execs, lost
				     records, merged inputs): profile.keep_marks */
	OF_GZ_PATH = 1 << 11,     /* an output path ending in ".gz" is gzipped */
};

struct output_format {
	const char *name;
	const char *suffixes[4];  /* NULL-terminated; matched at the end of -o's path */
	profile_writer write;
	const char *help;
	int weight_period;        /* --weight's default: 1 period, 0 samples */
	int one_event;            /* shows one event: the first with samples unless --event */
	int totals_only;          /* shows no times: samples may be aggregated as they come */
	int timeline;             /* draws each thread's samples in time order, which the
				     profile then keeps in bounded memory (p->timeline) */
	unsigned flags;           /* OF_ */
};

/* Before samples are added: how `p` keeps them for format `f` (aggregated for a
 * format of totals, each in a timeline for one that draws timelines; one frame for
 * the same code in every process for one that writes no addresses). */
void output_shape_profile(const struct output_format *f, struct profile *p);

/* Every format, NULL-terminated: perfconv --help lists them in this order. */
extern const struct output_format *const output_formats[];

/* A conversion's format (none OF_DIFF_ONLY) named `name`, or NULL. */
const struct output_format *output_by_name(const char *name);
/* The conversion's format whose suffix ends `path`, or NULL. */
const struct output_format *output_by_path(const char *path);

/* How output_write() went. */
enum output_result {
	OUTPUT_FAILED = -1,      /* said through `d` */
	OUTPUT_WRITTEN = 0,
	/* the reader of standard output or of a FIFO went away (EPIPE): nothing to say,
	 * as `| head` expects; the command's status is SIGPIPE's (which must be ignored
	 * for this) */
	OUTPUT_BROKEN_PIPE = 1,
};

/*
 * Write `p` in format `f` to `path` ("-" for standard output). A regular file is
 * written as an atomic_file (common/mapfile.h): a failed or killed conversion leaves
 * no partial file and the old one in place; a `path` that is a symbolic link stays
 * one, its target written. Anything else that exists (a device such as /dev/null, a
 * FIFO) is written in place. A format with OF_GZ_PATH is gzipped when `path` ends in
 * ".gz".
 */
enum output_result output_write(const struct output_format *f, const struct profile *p,
				const struct write_options *o, const char *path, struct diag *d);

/*
 * Before converting: 0 when writing `path` cannot destroy the input `input` (a file,
 * a `perf record --threads` directory, or "-"); -1 after one error line when `path`
 * is the input or one of the directory's files (the same device and inode: also
 * through a hard link or a symbolic link).
 */
int output_check_not_input(const char *path, const char *input, struct diag *d);

/*
 * Before converting: 0 when `path` can be written ("-", an existing file or device
 * that is not a directory, or a new name in a directory that exists and is writable);
 * -1 after one error line saying why not, so that nothing is converted for nothing.
 */
int output_check_writable(const char *path, struct diag *d);

/* A conversion's formats' names into buf[0..size), "folded, samples, pprof, ...",
 * NUL-terminated. */
void output_format_names(char *buf, size_t size);

#endif
