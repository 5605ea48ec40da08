/* watchfile: a chunk `perf record --switch-output` finished, as the watcher sees it (its
 * name, header, state and run), and the watched folder's lock. */
#ifndef PERFCONV_WATCHFILE_H
#define PERFCONV_WATCHFILE_H

#include <stdint.h>
#include <sys/stat.h>

#include "common/diag.h"

/* A file left with data.size 0 (perf killed), or cut short, this long ago is taken as
 * it is (converted, or given up on). */
#define CHUNK_STALE_S 60

/* Does NAME end in ".<at least 8 digits>", perf's switch-output suffix? 1 or 0. */
int chunk_name(const char *name);
/* Chunk names in perf's order: by the timestamp (as a number: equal lengths compare
 * as strings), then by name. <0, 0, >0. */
int chunk_name_cmp(const char *x, const char *y);
/* `name` in `dirfd`, opened for reading without following a link or blocking on a
 * FIFO; -1 unless it is a regular file (*st filled). */
int chunk_open(int dirfd, const char *name, struct stat *st);

enum {
	CHUNK_READY,     /* its header says where its data ends, within the file; or perf was
			    killed (data.size 0) CHUNK_STALE_S ago */
	CHUNK_GROWING,   /* its data runs past the file's end and it changed lately: still
			    being written or copied in */
	CHUNK_CUT,       /* the same, unchanged for CHUNK_STALE_S: cut short */
	CHUNK_NOT_PERF,  /* no perf.data header */
};
/* What the chunk open on `fd` (`st` its status) is: CHUNK_*. */
int chunk_state(int fd, const struct stat *st);
/*
 * Which perf record wrote it: the id the kernel gave its first event (the attrs
 * section's first entry is an attr of attr_size - 16 bytes and the { u64 offset, size }
 * of its ids). 0 when the header does not give one.
 */
uint64_t chunk_run(int fd, uint64_t fsize);

/*
 * One watcher a folder: a second would send each chunk again. The lock is on the folder
 * `dfd` itself (flock, held while the descriptor is open, gone with the process), so
 * nothing is written into a folder others may write; the holder is named from
 * /proc/locks. 0, or -1 after saying who holds it (`dir` names the folder).
 */
int chunk_folder_lock(int dfd, const char *dir, struct diag *d);

#endif
