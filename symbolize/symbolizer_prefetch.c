/* symbolizer_prefetch: the helper thread that symbolizes ahead and preloads objects. */
#include "symbolize/symbolizer_internal.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The prefetch thread's way to an object's lock: after the main thread's. */
/* Addresses queued before the helper thread is woken for them. */
#define PREFETCH_BATCH 32

static void lock_after_main(struct obj_slot *slot)
{
	while (atomic_load(&slot->main_waiting))
		sched_yield();
	pthread_mutex_lock(&slot->lock);
}

static void *prefetch_main(void *arg)
{
	struct symbolizer *s = arg;

	for (;;) {
		struct prefetch_req q;
		struct obj_slot *slot;

		pthread_mutex_lock(&s->queue_lock);
		while (s->queue_head == s->queue_len && s->objq_head == s->objq_len &&
		       s->kernel_state != KERNEL_QUEUED && !s->prefetch_stop)
			pthread_cond_wait(&s->queue_cond, &s->queue_lock);
		if (s->kernel_state == KERNEL_QUEUED && s->queue_head == s->queue_len &&
		    s->objq_head == s->objq_len) {
			/* needed only when pass 2 is over, the objects (libc's DWARF) during
			 * it: taken after them, and by the main thread when it comes to need
			 * it first (a first run parses 122,000 lines while the objects
			 * inflate, each on a core) */
			s->kernel_state = KERNEL_LOADING;
			pthread_mutex_unlock(&s->queue_lock);
			sym_load_kernel(s, s->kernel_bid, s->kernel_bid_size);
			pthread_mutex_lock(&s->queue_lock);
			s->kernel_state = KERNEL_DONE;
			pthread_cond_broadcast(&s->kernel_cond);
			pthread_mutex_unlock(&s->queue_lock);
			continue;
		}
		if (s->prefetch_stop) {
			pthread_mutex_unlock(&s->queue_lock);
			return NULL;
		}
		if (s->queue_head < s->queue_len)
			q = s->queue[s->queue_head++];
		else
			q = s->objq[s->objq_head++];
		pthread_mutex_unlock(&s->queue_lock);
		if (q.preload) {
			/* one step of three (the object, its DWARF, libdw's table of the
			 * units' address ranges), so that addresses asked for meanwhile
			 * wait for one step only */
			int more = 0;

			slot = q.preload;
			lock_after_main(slot);
			if (!slot->tried) {
				sym_find_object(s, slot, slot->preload_path, slot->preload_bid,
					    slot->preload_bidlen);
				more = slot->elf != NULL;
			} else if (!slot->dwarf_tried && !sym_dwarf_cached(s, slot)) {
				/* opened ahead unless earlier runs' lookups are kept: then
				 * only an address none of them asked for opens it */
				sym_open_dwarf(s, slot);
				more = slot->dwarf != NULL;
			} else if (!slot->prepared) {
				slot->prepared = 1;
				dwarf_info_prepare(slot->dwarf);
			}
			pthread_mutex_unlock(&slot->lock);
			if (more) {
				pthread_mutex_lock(&s->queue_lock);
				s->objq[--s->objq_head] = q;
				pthread_mutex_unlock(&s->queue_lock);
			}
			continue;
		}
		slot = sym_slot_for(s, q.obj, q.path, q.bid, q.bidlen);
		lock_after_main(slot);
		sym_result_for(s, slot, q.path, q.bid, q.bidlen, q.offset, q.ret, 0);
		pthread_mutex_unlock(&slot->lock);
	}
}

/* The helper thread, started by the first thing it is given to do. */
void sym_start_helper(struct symbolizer *s)
{
	if (!s->prefetch_thread && !s->prefetch_stop &&
	    pthread_create(&s->prefetch_tid, NULL, prefetch_main, s) == 0)
		s->prefetch_thread = 1;
}

/*
 * While there is no helper thread: the address symbolized on this thread if the
 * caches answer for it (its object found, its DWARF in the frame cache), as fast as
 * queueing it would be. A thread started for such work only costs: the wake-ups, the
 * other core's TLB flushes, its exit (5% of a warm --call-graph dwarf run's CPU time,
 * whose objects the unwinder has found before their addresses come). 1 when done.
 */
static int done_here(struct symbolizer *s, uint32_t obj, const char *path,
		     const uint8_t *build_id, size_t build_id_size, uint64_t offset, int ret)
{
	struct obj_slot *slot;
	long r;

	if (s->prefetch_thread)
		return 0;
	slot = sym_slot_for(s, obj, path, build_id, build_id_size);
	pthread_mutex_lock(&slot->lock);
	r = sym_result_for(s, slot, path, build_id, build_id_size, offset, ret, 1);
	pthread_mutex_unlock(&slot->lock);
	sym_say_damaged(s);
	return r != -2;
}

void symbolizer_prefetch(struct symbolizer *s, uint32_t obj, const char *path,
			 const uint8_t *build_id, size_t build_id_size, uint64_t offset, int ret)
{
	struct prefetch_req q;

	if (build_id_size > sizeof(q.bid) || s->prefetch_stop)
		return;
	if (sp_syms_covers(s->embedded, path))
		return; /* named from the recording's table, no file to load */
	if (done_here(s, obj, path, build_id, build_id_size, offset, ret))
		return;
	memset(&q, 0, sizeof(q));
	q.obj = obj;
	q.ret = ret != 0;
	q.offset = offset;
	q.path = path;
	if (build_id_size)
		memcpy(q.bid, build_id, build_id_size);
	q.bidlen = build_id_size;
	pthread_mutex_lock(&s->queue_lock);
	/* the requests taken are dropped once they are half the queue: the queue holds
	 * what waits, not every address asked for since the start (a whole-machine
	 * recording asked 260,000 times, 27 MB of a 100 MB recording's peak) */
	if (s->queue_head && s->queue_head * 2 >= s->queue_len) {
		memmove(s->queue, s->queue + s->queue_head,
			(s->queue_len - s->queue_head) * sizeof(*s->queue));
		s->queue_len -= s->queue_head;
		s->queue_head = 0;
	}
	VEC_PUSH(s->queue, s->queue_len, s->queue_cap, q);
	/* woken for a batch, not for each address: where the cache answers every lookup
	 * in a microsecond, the helper emptied the queue between two requests and slept,
	 * and woke for the next (800 thread switches a warm dwarf run, its wall time 20%
	 * over its CPU time); a request it does not take in time is made on this thread */
	if (s->queue_len - s->queue_head >= PREFETCH_BATCH || !s->queue_woken) {
		s->queue_woken = 1;
		pthread_cond_signal(&s->queue_cond);
	}
	pthread_mutex_unlock(&s->queue_lock);
	sym_start_helper(s);
}

struct preload_order {
	uint64_t size;
	size_t i;
};

static int preload_cmp(const void *a, const void *b)
{
	const struct preload_order *x = a, *y = b;

	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

void symbolizer_preload(struct symbolizer *s, const struct sym_object *objs, size_t n)
{
	struct preload_order *order = xmalloc((n ? n : 1) * sizeof(*order));

	if (s->prefetch_stop || !n) {
		free(order);
		return;
	}
	/* the largest first: they take longest, and are mostly where the samples are */
	for (size_t i = 0; i < n; i++) {
		struct stat st;

		order[i].size = stat(objs[i].path, &st) == 0 ? (uint64_t)st.st_size : 0;
		order[i].i = i;
	}
	qsort(order, n, sizeof(*order), preload_cmp);
	pthread_mutex_lock(&s->objs_lock);
	pthread_mutex_lock(&s->queue_lock);
	for (size_t k = 0; k < n; k++) {
		const struct sym_object *o = &objs[order[k].i];
		struct prefetch_req q;
		struct obj_slot *slot;

		if (o->build_id_size > sizeof(slot->preload_bid))
			continue;
		if (sp_syms_covers(s->embedded, o->path))
			continue; /* named from the recording's table */
		slot = sym_new_slot();
		slot->preload_path = o->path;
		if (o->build_id_size)
			memcpy(slot->preload_bid, o->build_id, o->build_id_size);
		slot->preload_bidlen = o->build_id_size;
		VEC_PUSH(s->preloads, s->npreloads, s->preloads_cap, slot);
		memset(&q, 0, sizeof(q));
		q.preload = slot;
		VEC_PUSH(s->objq, s->objq_len, s->objq_cap, q);
	}
	pthread_cond_signal(&s->queue_cond);
	pthread_mutex_unlock(&s->queue_lock);
	pthread_mutex_unlock(&s->objs_lock);
	free(order);
	sym_start_helper(s);
}

void symbolizer_prefetch_stop(struct symbolizer *s)
{
	pthread_mutex_lock(&s->queue_lock);
	s->prefetch_stop = 1;
	pthread_cond_signal(&s->queue_cond);
	pthread_mutex_unlock(&s->queue_lock);
	if (s->prefetch_thread) {
		pthread_join(s->prefetch_tid, NULL);
		s->prefetch_thread = 0;
	}
	sym_say_damaged(s);
}
