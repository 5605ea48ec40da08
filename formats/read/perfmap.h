/* perfmap: a streaming reader of the /tmp/perf-PID.map files JIT runtimes write for perf.
 *
 * Spec: tools/perf/Documentation/jit-interface.txt in the Linux tree. One symbol a line,
 * `START SIZE name`: START and SIZE in hex, with or without 0x (JDK's
 * `jcmd Compiler.perfmap` writes 0x), the name the rest of the line (spaces allowed).
 * No timestamps: when two lines cover the same range, the later one wins (the caller's
 * business; see symbolize/jit/jitcode.h).
 */
#ifndef PERFCONV_PERFMAP_H
#define PERFCONV_PERFMAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "common/diag.h"

struct perfmap_entry {
	uint64_t start, size;
	const char *name;      /* borrowed until the next call; NUL-terminated, without the
				  line end (a trailing \r is dropped too) */
	uint64_t line;         /* 1-based line number */
	uint64_t offset;       /* file offset of the line */
};

struct perfmap_stats {
	uint64_t lines;        /* lines read, blank ones included */
	uint64_t entries;      /* returned */
	uint64_t skipped_bad;  /* malformed lines, warned about and skipped */
};

struct perfmap_reader;

/* Open a map (never waiting on a FIFO; a regular file only). Returns NULL after one
 * error line through `d`. It is read, a window at a time, never mapped: a file cut short
 * or written again while it is read (runtimes rewrite theirs with O_TRUNC) is read up
 * to where it then ends, and that is said once through `d`. */
struct perfmap_reader *perfmap_reader_open(const char *path, struct diag *d);
/* The same over bytes in memory, which must outlive the reader; `name` is for messages. */
struct perfmap_reader *perfmap_reader_open_mem(const void *buf, size_t len, const char *name,
					       struct diag *d);

/*
 * The next entry: 1 and *e filled, 0 at the end. Blank lines are skipped silently; a
 * malformed line (no hex START or SIZE, a number over 64 bits, no name, a NUL byte,
 * START + SIZE past the end of the address space) is warned about with its line number
 * and skipped. A last line without its newline is read like the others.
 */
int perfmap_reader_next(struct perfmap_reader *r, struct perfmap_entry *e);

/* Read on from file offset `offset` (an entry's `offset`, to read that entry again). */
void perfmap_reader_seek(struct perfmap_reader *r, uint64_t offset);

/*
 * For reading a map a runtime still writes in steps (a watcher, chunk after chunk):
 * the file's status as opened (zero from memory); the offset just past its last
 * newline, where its whole lines end (a last line without one may be half written);
 * reading stopped there (perfmap_reader_end); and a digest of the bytes just before
 * an offset, with the offset, to tell a file read on from one rewritten since.
 */
const struct stat *perfmap_reader_stat(const struct perfmap_reader *r);
uint64_t perfmap_reader_whole_lines(struct perfmap_reader *r);
void perfmap_reader_end(struct perfmap_reader *r, uint64_t end);
uint64_t perfmap_reader_digest(struct perfmap_reader *r, uint64_t end);
const struct perfmap_stats *perfmap_reader_stats(const struct perfmap_reader *r);

/* NULL-safe. */
void perfmap_reader_close(struct perfmap_reader *r);

#endif
