/* replay: processes, threads and their mappings, each over time. */
#ifndef PERFCONV_REPLAY_H
#define PERFCONV_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "common/perf_abi.h"
#include "common/util.h"
#include "symbolize/symbolizer.h"

/*
 * Non-sample records are collected in any order (perf does not write them in time
 * order across CPUs), then replay_finish() replays them sorted by time (file order
 * among equal times): fork copies the parent's mappings into a new process and a
 * new thread joins its process; exec ends the process's mappings; mmap adds one.
 * Afterwards a sample asks what was mapped at an address in its process at its
 * time, and what its thread was called then.
 *
 * Time is whatever clock the recording uses; a recording without times passes
 * the record's position in the file instead, which gives file-order semantics.
 */

#define REPLAY_KERNEL_PID UINT32_MAX  /* pid -1: kernel and module mappings */
#define REPLAY_FOREVER UINT64_MAX

/* What a dso is; every kind but USER is kernel code. */
enum replay_dso_kind {
	REPLAY_DSO_USER = 0,
	REPLAY_DSO_KERNEL = 1,     /* the kernel image or a module, named by kallsyms */
	REPLAY_DSO_KSYM_BPF = 2,   /* a BPF program (KSYMBOL): the path is its name */
	REPLAY_DSO_KSYM_OTHER = 3, /* other KSYMBOL code (trampolines, ftrace): the same */
};

/* An object that code is mapped from. */
struct replay_dso {
	uint32_t path;        /* string id, as the recording names it */
	uint8_t build_id[PERF_BUILD_ID_MAX];
	uint8_t build_id_size;
	uint8_t kernel;       /* enum replay_dso_kind: non-zero for kernel code */
	uint8_t anonymous;    /* no file holds its code (map_origin() is MAP_NO_FILE: JIT
				 code, [heap], memfd:): decided once, not per address */
	struct sym_file_id file; /* without a build id: the MMAP2 record's device and
				    inode, which tell files of one name apart (else 0) */
};

struct replay_map {
	uint64_t start, end;  /* end exclusive */
	uint64_t pgoff;       /* file offset of start */
	uint64_t time;        /* mapped at */
	uint64_t end_time;    /* unmapped by exec at, or REPLAY_FOREVER */
	uint32_t seq;         /* position among the records, for ties */
	uint32_t dso;
	uint32_t id;          /* this map of this process: its identity (a map may move in
				 memory while records are replayed, see replay_advance) */
};

struct replay;

/* Strings (paths, thread names) are interned in `strings`, which must outlive the replay. */
struct replay *replay_new(struct strtab *strings);
void replay_free(struct replay *r);

/* The dso for a path and build id (size 0 when unknown); the same pair gives the same id.
 * `kernel`: an enum replay_dso_kind (any other non-zero value is REPLAY_DSO_KERNEL). */
uint32_t replay_dso(struct replay *r, const char *path, const uint8_t *build_id,
		    size_t build_id_size, int kernel);
/* replay_dso() for a file the recording names without a build id: `file` (may be NULL)
 * is its MMAP2 device and inode, and files of one name with other inodes are other
 * dsos. */
uint32_t replay_dso_file(struct replay *r, const char *path, const uint8_t *build_id,
			 size_t build_id_size, int kernel, const struct sym_file_id *file);
const struct replay_dso *replay_dso_get(const struct replay *r, uint32_t dso);
size_t replay_ndsos(const struct replay *r);

void replay_mmap(struct replay *r, uint64_t time, uint32_t pid, uint64_t start, uint64_t len,
		 uint64_t pgoff, uint32_t dso);
/* The mappings of `pid` that start at `start` end at `time` (a KSYMBOL unregister). */
void replay_munmap(struct replay *r, uint64_t time, uint32_t pid, uint64_t start);
void replay_comm(struct replay *r, uint64_t time, uint32_t pid, uint32_t tid, const char *comm,
		 int exec);
void replay_fork(struct replay *r, uint64_t time, uint32_t pid, uint32_t ppid, uint32_t tid,
		 uint32_t ptid);
void replay_exit(struct replay *r, uint64_t time, uint32_t pid, uint32_t tid);

/*
 * Before replay_finish(), while the records are read: the mapping process `pid` has
 * at `addr` as the records read so far tell it (the latest one mapped there; a fork
 * inherits its parent's). Records are not in time order, so this is a guess, for
 * work that may be wasted but never makes a wrong frame (reading ahead). 1 and *out
 * filled, 0 when there is none (or after replay_finish).
 */
int replay_find_so_far(const struct replay *r, uint32_t pid, uint64_t addr,
		       struct replay_map *out);

/* Build the time-indexed state. Call once, after the last record. */
void replay_finish(struct replay *r);

/*
 * Releasing each process's tables once no record still to come asks for it, so that
 * the second pass over a whole-machine recording holds what is live rather than every
 * process the recording had. Pass 1 tells every record that pass 2 will look a
 * process up for: replay_note() with its pid, its time (as the lookup will be given)
 * and its index (perf_record.index, the same in both passes); replay_note_unknown()
 * for one whose pid or time cannot be read, which keeps every process. Forks are
 * told as they are (replay_fork), so that a reused pid is another process. Then in
 * pass 2, before the record of index `index`, replay_release() frees the tables of the
 * processes no record from there on asks for (their replay_proc stays, with no
 * mappings), and says about how many bytes it freed (0: none; else a caller's memo
 * of a process may be stale). Without
 * replay_note() before replay_finish(), or after replay_advance(), nothing is freed.
 */
void replay_note(struct replay *r, uint32_t pid, uint64_t time, uint64_t index);
void replay_note_unknown(struct replay *r);
size_t replay_release(struct replay *r, uint64_t index);
/* The index past which replay_release() has something to free (UINT64_MAX: nothing
 * more): a caller asks it only then, not at every record. */
uint64_t replay_next_release(const struct replay *r);
/* About how many bytes replay_release() will free in all (0: nothing is released). */
size_t replay_releasable_bytes(const struct replay *r);
/* After the last lookup of a process (pass 2 over): every process freed, and
 * replay_proc_at() answers NULL; dsos and thread names remain. Returns about how many
 * bytes were freed. */
size_t replay_forget_processes(struct replay *r);
/* Lookups (replay_proc_at) that found a released process: 0 unless a record was not
 * told to replay_note(). */
uint64_t replay_late(const struct replay *r);

/*
 * One pass instead of two: replay the events recorded so far up to `horizon` (a time
 * no record still to come is earlier than, as perf's rounds tell it), so that the
 * lookups below answer for times up to it as the finished replay will. Processes
 * (replay_proc) keep their address; maps may move (replay_map.id is theirs), so a map
 * pointer is not to be kept across a call. Later calls take later horizons;
 * replay_finish() replays the rest.
 */
void replay_advance(struct replay *r, uint64_t horizon);
/*
 * Since the first replay_advance(), did something happen that makes an answer given
 * before differ from the finished replay's: an event at or before a horizon replayed
 * already, a process that a lookup was told did not exist (replay_asked) or a name
 * given to a thread a lookup called ":TID"?
 */
int replay_inexact(const struct replay *r);
/* replay_proc_at() said NULL for `pid`: a process for it later makes the replay
 * inexact. */
void replay_asked(struct replay *r, uint32_t pid);

/* One process over its life, from its fork or first record to the next process
 * with the same pid (a reused pid is another process). */
struct replay_proc;

/* The process that was `pid` at `time` (REPLAY_KERNEL_PID: the kernel's mappings),
 * or NULL when the recording has none. Valid until replay_free(). */
const struct replay_proc *replay_proc_at(const struct replay *r, uint32_t pid, uint64_t time);

/*
 * The mapping that held `addr` in process `p` (NULL-safe) at `time`: among the
 * mappings that cover it and were live then, the one mapped last. NULL when none.
 */
const struct replay_map *replay_proc_find(const struct replay_proc *p, uint64_t time,
					  uint64_t addr);

/* The same for the process that was `pid` at `time`. */
const struct replay_map *replay_find(const struct replay *r, uint32_t pid, uint64_t time,
				     uint64_t addr);

/* Times [from, until). */
struct replay_span {
	uint64_t from, until;
};

/*
 * A number for the mappings process `pid` had at `time`: equal at two times only when
 * the same process had the same mappings live at both (so every address resolved
 * then resolves alike now). 0 when there is no such process. `*span` is set to the
 * times around `time` that have the same number, so that a caller can keep it.
 */
uint64_t replay_epoch(const struct replay *r, uint32_t pid, uint64_t time,
		      struct replay_span *span);
/* The same for process `p` (NULL-safe: 0). */
uint64_t replay_proc_epoch(const struct replay *r, const struct replay_proc *p, uint64_t time,
			   struct replay_span *span);

/* The name of thread `tid` at `time` (string id); ":TID" when never named. */
uint32_t replay_thread_name(struct replay *r, uint32_t pid, uint32_t tid, uint64_t time);

/*
 * The last name of the thread that was `tid` at `time`: its name then, or the one it
 * was given after (prctl, exec) before it ended, as ps would show it at its end. A
 * later thread that reuses the tid does not count.
 */
uint32_t replay_thread_last_name(struct replay *r, uint32_t pid, uint32_t tid, uint64_t time);

#endif
