/* runtimeid: Datadog's runtime-id and profile_seq for the profiles of one run of perf
 * record, the same across chunks and across restarts of perfconv. */
#ifndef PERFCONV_RUNTIMEID_H
#define PERFCONV_RUNTIMEID_H

#include <stdint.h>

#include "common/diag.h"

#define RUNTIME_ID_LEN 36 /* 8-4-4-4-12 lower-case hex */
#define RUNTIME_RUNS 16   /* the runs remembered */

/* A random UUID version 4, as ddprof makes its runtime-id (lower-case, with dashes). */
void runtime_id_new(char out[RUNTIME_ID_LEN + 1]);
/* Is `s` such a UUID? 1 or 0. */
int runtime_id_valid(const char *s);

struct runtime_run {
	uint64_t run;            /* the kernel's id of the run's first event (chunk_run) */
	int64_t boot_ns;         /* wall clock less perf's clock: when that clock began */
	char id[RUNTIME_ID_LEN + 1];
	int64_t next_seq;
	uint64_t used;           /* for forgetting the least recently used */
};

/*
 * The runs seen, newest used kept: in memory, and with a folder (`dfd` >= 0) also in
 * its file .perfconv-runtime-ids, read at the start (only when it is a regular file of
 * perfconv's user, one link, writable by no one else) and written again each time a
 * profile_seq is taken, so that a perfconv started again goes on with the same
 * runtime-id and the next profile_seq. Written as a new file of a name no one can
 * foresee (.perfconv-runtime-ids.tmp-XXXXXXXX, O_EXCL, not following a link) renamed
 * over it: nothing another user plants in the folder stops it but a thing at the file's
 * own name, and a save that fails is said (runtime_ids_say).
 */
struct runtime_ids {
	int dfd;
	struct runtime_run runs[RUNTIME_RUNS];
	unsigned n;
	uint64_t clock;
	struct diag *d;          /* where a failed save is said, or NULL */
	const char *dir;         /* the folder, for that message */
};

/*
 * Start with the runs of `dfd`'s file (-1: no folder, in memory only). The temporary
 * files a perfconv killed while saving left there are removed: only names of that
 * pattern (and .perfconv-runtime-ids.new, older versions' one name) that are regular
 * files of perfconv's user with one link; anything else is another's, left alone.
 * The caller holds the folder for itself (the watcher's lock).
 */
void runtime_ids_init(struct runtime_ids *r, int dfd);
/* Say through `d` each save that fails, naming the file in `dir` (a string that
 * outlives r) and what it costs. Without it a failure is not said. */
void runtime_ids_say(struct runtime_ids *r, struct diag *d, const char *dir);
/*
 * The runtime-id of run `run` (0: unknown, a new id each time it is asked) whose perf
 * clock began at wall `boot_ns` (0: unknown), and its next profile_seq, taken. A run is
 * the same run when its id is and its clock began within a minute of the one seen (the
 * kernel gives its ids again after a reboot).
 */
void runtime_ids_take(struct runtime_ids *r, uint64_t run, int64_t boot_ns,
		      char id[RUNTIME_ID_LEN + 1], int64_t *seq);

/* The wall clock less perf's clock of run `run`, as last seen (its boot_ns): 1 with
 * *offset set, or 0 when the run is not known. */
int runtime_ids_offset(const struct runtime_ids *r, uint64_t run, int64_t *offset);

#endif
