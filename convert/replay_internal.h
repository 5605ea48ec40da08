/* replay_internal: the replay's state, shared by its parts (replay.c, replay_release.c). */
#ifndef PERFCONV_REPLAY_INTERNAL_H
#define PERFCONV_REPLAY_INTERNAL_H

#include "convert/replay.h"

enum { EV_MMAP, EV_MUNMAP, EV_COMM, EV_FORK, EV_EXIT };

struct rev {
	uint64_t time;
	uint64_t start, len, pgoff;
	uint32_t seq;
	uint32_t pid, tid, ppid, ptid;
	uint32_t arg;         /* dso for EV_MMAP, name for EV_COMM */
	uint8_t type, exec;
};

struct replay_proc {
	uint32_t pid;
	uint32_t index;       /* in procs: its place never changes */
	uint32_t older;       /* index + 1 of the previous process with this pid, 0 none */
	uint64_t start_time;
	uint64_t newer_start; /* start of the next process with this pid, or REPLAY_FOREVER */
	/* the lookups' tables, built from `live` by each replay_advance() that changed it */
	struct replay_map *maps; /* by (start, time, seq) */
	size_t nmaps;
	uint64_t *maxend;     /* maxend[i] = max end of maps[0..i] */
	uint32_t *run_first;  /* the first map with maps[i]'s start (maps of one start are
				 in order of (time, seq)) */
	uint64_t *changes;    /* sorted times at which a map begins or ends */
	size_t nchanges;
	int dirty;            /* live changed since the tables were built */
	int released;         /* its tables freed: no record still to come asks for it */
	/* during the replay: the maps in the order they were made; start + 1 -> index + 1
	 * of the newest map starting there since the last unmap of that start, and
	 * same_prev[i] the one before map i */
	struct replay_map *live;
	size_t nlive, live_cap;
	struct u64map by_start;
	uint32_t *same_prev;
	size_t same_cap;
};

struct name_at {
	uint64_t time;
	uint32_t name;
	uint32_t born;        /* 1: the thread began here (a fork), not renamed */
};

struct thread {
	uint32_t tid;
	struct name_at *names;
	size_t nnames, names_cap;
};

/*
 * Pass 1: which records will ask for the processes of one pid, by time. Each fork of
 * the pid begins a process, as the replay will make it; a record asks for the one
 * begun last at or before its time. Forks are read in file order, not time order,
 * so a record may be counted to an older process than its own when that one's fork
 * comes later in the file: a process then begun in the older one's time takes the
 * older one's last record as its own too (too late a release, never too early).
 */
struct use_gen {
	uint64_t start;       /* the fork's time */
	uint64_t last;        /* index of the last record in its time so far (0: none) */
};

struct pid_uses {
	struct use_gen *g;    /* by start (file order among equal starts) */
	size_t n, cap;
	uint64_t before;      /* the last record before every fork */
};

/* Pass 2: a process to release after the record of index `last`. */
struct release {
	uint64_t last;
	uint32_t proc;
};

/* A process's mappings as the records read so far have them (before replay_finish). */
struct sofar_proc {
	uint32_t *evs;        /* EV_MMAP events, in file order */
	size_t n, cap;
};

struct replay {
	struct strtab *strings;
	struct sofar_proc *sofar;
	size_t nsofar, sofar_cap;
	struct u64map sofar_index; /* pid + 1 -> sofar index + 1 */
	struct rev *evs;
	size_t nevs, evs_cap;
	struct replay_dso *dsos;
	size_t ndsos, dsos_cap;
	struct u64map dso_index;   /* hash(path, build id) -> dso */
	struct replay_proc **procs; /* each allocated alone: a pointer to one stays valid */
	size_t nprocs, procs_cap;
	struct u64map proc_index;  /* pid -> index + 1 of the newest process */
	struct thread *threads;
	size_t nthreads, threads_cap;
	struct u64map thread_index; /* tid -> index */
	uint32_t *dirty;           /* procs whose tables are to be built again */
	size_t ndirty, dirty_cap;
	uint32_t nseq;             /* events recorded so far: the next one's seq */
	uint32_t nmap_ids;         /* maps made so far: the next one's id */
	int finished;
	/* replay_advance(): the events up to `horizon` are replayed */
	int advanced;
	uint64_t horizon;
	int inexact;               /* an answer given may differ from the finished replay's */
	struct u64map asked_pids;  /* pid + 1: asked for before the replay had a process */
	struct u64map asked_tids;  /* tid + 1: named ":TID" before the replay had a name */
	/* releasing processes in pass 2 (replay_note, replay_release) */
	struct pid_uses *uses;
	size_t nuses, uses_cap;
	struct u64map uses_index;  /* pid + 1 -> uses index + 1 */
	/* the pid of the last lookup + 1 (0: none) and its uses index: a recording's
	 * records come in runs of one process's, so most lookups are this one's */
	uint64_t uses_last_key;
	uint32_t uses_last;
	int noted;                 /* replay_note() was called */
	uint64_t forks, moves;     /* forks told, and the moves their lists took */
	int unknown;               /* a record asks for a process it could not tell, or
				      forks came too far out of order: none released */
	struct release *rel;       /* by last, from rel_head on still held */
	size_t nrel, rel_cap, rel_head;
	uint64_t late;             /* lookups that found a process released */
	size_t held;               /* bytes of the tables replay_release() will free */
};

/* ---- replay_release.c ---- */

/* Pass 1: a fork began a process of `pid` at `time` (replay_fork). */
void replay_uses_fork(struct replay *r, uint32_t pid, uint64_t time);
/* After the replay (replay_finish): when each process is last asked for, and pass 1's
 * notes freed. */
void replay_schedule_releases(struct replay *r);
/* Pass 1's notes freed (replay_free). */
void replay_free_uses(struct replay *r);

#endif
