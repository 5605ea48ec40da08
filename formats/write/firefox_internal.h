/* firefox_internal: what the parts of the Firefox Profiler writer share; not for callers.
 *
 *	firefox.c		meta, libraries, categories, the threads and their markers
 *	firefox_tables.c	the shared tables: stacks, frames, functions, resources,
 *				native symbols, sources, strings
 */
#ifndef PERFCONV_FIREFOX_INTERNAL_H
#define PERFCONV_FIREFOX_INTERNAL_H

#include <stdint.h>
#include <stdio.h>

#include "formats/model/profview.h"
#include "formats/write/writer.h"

/* The categories (meta.categories), JIT runtimes' from CAT_JIT on. */
enum { CAT_OTHER, CAT_IDLE, CAT_USER, CAT_KERNEL, CAT_JIT };

/* A row of the frame table. */
struct ff_frame {
	uint32_t frame;      /* the profile's, or UINT32_MAX for an off-CPU state's */
	uint32_t func;       /* the view's function */
	uint32_t nsym;       /* native symbol + 1, 0 none */
	int32_t lib;         /* -1 none */
	uint64_t rel;        /* address relative to the library */
	uint8_t depth, cat, sub;
};

struct ff_nsym {
	uint32_t lib, name;  /* name: the profile's string */
	uint64_t addr;       /* the lowest address of its frames (the symbol's start is not known) */
};

/* A sample as a thread's columns take it. */
struct ff_rec {
	uint64_t time, weight, cpu; /* time from the origin, ns */
	uint32_t stack;             /* UINT32_MAX: none */
	uint32_t state;
};

/* A marker of a thread. */
struct ff_mark {
	uint64_t start, end;        /* from the origin, ns */
	uint64_t count;             /* MK_LOST: how many */
	uint32_t kind, arg;         /* kind: MK_; arg: a state, or the profile's string */
};

/* The markers written; the profile's marks in the order of enum pc_mark_kind. */
enum { MK_OFFCPU, MK_FORK, MK_EXIT, MK_EXEC, MK_LOST, MK_LOST_SAMPLES, MK_INPUT, MK_N };

/* The samples of one event of the thread being written. */
struct ff_slot {
	int event;
	struct spool *recs, *marks;
	uint64_t n;
};

struct ff_writer {
	const struct profile *p;
	const struct write_options *o;
	FILE *out;
	struct profview v;
	uint64_t origin;

	/* strings written: profile string id -> index + 1; and their texts in order */
	uint32_t *pstr;
	const char **ostr;
	size_t nostr, ostr_cap;

	uint32_t *stack_of_node;     /* UINT32_MAX: not written */
	uint32_t *stack_frame, *stack_parent; /* parent UINT32_MAX: a root */
	size_t nstacks, stacks_cap;
	struct u64map state_stacks;  /* (node << 8 | state) + 1 -> stack */

	struct ff_frame *frames;
	size_t nframes, frames_cap;
	uint32_t *frame_row;         /* pc frame -> row + 1 at its first depth */
	struct u64map frame_rows;    /* (frame << 8 | depth) + 1 -> row, other depths */
	uint32_t state_frame[PC_NSTATES]; /* row + 1 */

	uint32_t *func_row;          /* view function -> funcTable row + 1 */
	uint32_t *funcs;             /* rows: view functions */
	size_t nfuncs, funcs_cap;
	struct u64map resources;     /* module string + 1 -> resource */
	uint32_t *res_module; size_t nres, res_cap;
	uint8_t *res_lib;            /* a library's (of native or kernel code), not JIT code's */
	struct u64map sources;       /* file string + 1 -> source */
	uint32_t *src_file; size_t nsrc, src_cap;
	struct u64map libs;          /* hash of (file, build id) -> lib */
	int32_t *lib_of_mapping;     /* -2: not looked at */
	uint32_t *lib_mapping; size_t nlibs, libs_cap;
	struct u64map nsyms;         /* (lib << 32 | name) + 1 -> nsym */
	struct ff_nsym *nsym; size_t nnsym, nsym_cap;

	uint8_t *frame_cat;          /* pc frame -> category (JIT runtimes) */
	uint32_t jit_name[64];       /* JIT categories' names (string ids) */
	size_t njit;

	int nevents_written;         /* events with samples in the view */
	uint64_t events_written;     /* their mask (of the first 64) */
	uint64_t interval_ns;
	uint64_t end_ns;             /* the last sample's end, from the origin */

	/* the profile's marks: of one thread (by pid, tid, time), of a CPU, of all */
	uint32_t *tmarks; size_t ntmarks;
	uint32_t *gmarks; size_t ngmarks;
	uint32_t mark_name[MK_N];    /* output strings */
};

/* The output string of the profile's string `id`; of a text that lives as long as
 * the writer. */
uint32_t ff_out_str(struct ff_writer *w, uint32_t id);
uint32_t ff_out_lit(struct ff_writer *w, const char *s);
/* Nanoseconds as milliseconds, exactly: 1500000 is 1.5. */
void ff_put_ms(FILE *out, uint64_t ns);
void ff_put_i64(FILE *out, int64_t v);
/* A column "NAME":[ of a table, after the previous one's ] unless `first` (after "length") */
void ff_col(FILE *out, const char *name, int first);
/* A sample of the events written (o->event, or all). */
int ff_sample_wanted(const struct ff_writer *w, const struct pc_sample *s);
/* The shared tables' rows for every sample written; then "shared":{...},\n. */
void ff_build_tables(struct ff_writer *w);
void ff_write_shared(struct ff_writer *w);
/* What ff_build_tables() made, freed. */
void ff_release_tables(struct ff_writer *w);

/* A column of `n` values, each written by STMT (with `i` its row). */
#define COLUMN(name, first, n, STMT)                                                   \
	do {                                                                           \
		ff_col(out, name, first);                                                 \
		for (size_t i = 0; i < (n); i++) {                                     \
			if (i)                                                         \
				fputc(',', out);                                       \
			STMT;                                                          \
		}                                                                      \
	} while (0)

#endif
