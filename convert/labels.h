/* labels: where and when a profile was made (--service, --label, --start-time, the
 * recording's host, kernel and wall-clock start), for pprof files and uploads. */
#ifndef PERFCONV_LABELS_H
#define PERFCONV_LABELS_H

#include <stddef.h>
#include <stdint.h>

#include "common/diag.h"
#include "formats/model/profile.h"
#include "formats/write/writer.h"

/* What the command line said. Strings are borrowed from argv. */
struct meta_options {
	const char *service;        /* --service NAME, NULL when not given */
	struct write_label *labels; /* --label KEY=VALUE, in order; keys and values
				       point into argv and into `kv` copies (owned) */
	size_t nlabels, labels_cap;
	char **kv;                  /* the copies, freed by meta_options_release */
	size_t nkv, kv_cap;
	int64_t start_time;         /* --start-time, ns since the epoch */
	int start_time_set;
};

/*
 * Take --label KEY=VALUE. KEY: [a-zA-Z_][a-zA-Z0-9_]* and not one perfconv writes
 * itself (service, host, kernel_release, process_id, thread_id, thread_name,
 * process_name, cpu) nor starting with "__"; VALUE: UTF-8 without control
 * characters, `,`, `{` or `}` (Pyroscope's name syntax and Datadog's tag list), at
 * most 200 bytes. A key given twice keeps its last value. 0, or -1 with *why set to
 * a static reason.
 */
int meta_add_label(struct meta_options *m, const char *kv, const char **why);
/* Take --service NAME: runes [A-Za-z0-9_.-/] (Pyroscope's application name), at most
 * 200 bytes. 0, or -1 with *why set. */
int meta_set_service(struct meta_options *m, const char *name, const char **why);
/*
 * Parse --start-time: RFC 3339 ("2026-05-01T12:00:00Z", "...12:00:00.5+02:00") or
 * Unix seconds ("1777636800", "1777636800.25"). 0 with *ns set, or -1.
 */
int meta_parse_time(const char *s, int64_t *ns);
void meta_options_release(struct meta_options *m);

enum start_source {
	START_UNKNOWN = 0,
	START_CLOCK_DATA,   /* perf's CLOCK_DATA (perf record -k CLOCKID) */
	START_FILE_TIME,    /* the file's modification time less the recording's span */
	START_STREAM_END,   /* a pipe: when the stream ended, less its span */
	START_OPTION,       /* --start-time */
};

/* A converted profile's facts for a file or an upload. */
struct profile_meta {
	int64_t start_ns, duration_ns; /* wall clock; duration 0 without sample times */
	int start_from;                /* enum start_source */
	const char *host, *kernel_release; /* from the recording ("" when absent) */
	/* service (when given), the --label ones, then host and kernel_release unless
	 * a --label set them: what an upload sends as the backend's labels or tags */
	struct write_label *labels;
	size_t nlabels;
	size_t nuser;                  /* of which the first nuser: service and --label */
};

/*
 * The facts of `p` (converted from `input`), the options applied. Strings point into
 * `o` and `p`, which must outlive `m`. When the start is an estimate, says so once
 * through `d` unless `quiet`.
 */
void profile_meta_make(const struct meta_options *o, const struct profile *p, const char *input,
		       int quiet, struct profile_meta *m, struct diag *d);
void profile_meta_release(struct profile_meta *m);

/* The start and end as RFC 3339 UTC with nanoseconds ("2026-05-01T12:00:00.000000000Z")
 * into buf (at least 32 bytes). */
void meta_rfc3339(int64_t ns, char *buf, size_t cap);

#endif
