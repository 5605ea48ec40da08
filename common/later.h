/* later: work that may finish after its caller goes on, on a thread of its own (files
 * written for another run, whose bytes nothing in this run reads again). */
#ifndef PERFCONV_LATER_H
#define PERFCONV_LATER_H

struct later;

/* A queue with no thread yet: the first work queued starts one. */
struct later *later_new(void);
/*
 * Run fn(arg) on l's thread, after the work queued before it; fn owns arg. With `l`
 * NULL, or where no thread can be started, fn(arg) runs before this returns. Safe from
 * any thread but l's own.
 */
void later_run(struct later *l, void (*fn)(void *arg), void *arg);
/* Return when all work queued on `l` so far is done (its thread then ends). NULL-safe;
 * safe from any thread but l's own. */
void later_wait(struct later *l);
/* later_wait, then free `l`. NULL-safe. */
void later_free(struct later *l);

#endif
