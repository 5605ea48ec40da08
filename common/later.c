/* later: work that may finish after its caller goes on, on a thread of its own. */
#include "common/later.h"

#include <pthread.h>
#include <stdlib.h>

#include "common/util.h"

struct job {
	void (*fn)(void *arg);
	void *arg;
	struct job *next;
};

struct worker {
	struct later *l;
	pthread_t thread;
	int stop; /* later_wait's word: end once the queue is empty */
};

/*
 * One worker, started by the first job and ended by later_wait: a first run hands it
 * the cache entries (tens of MB checksummed and written) while its own two threads go
 * on; a run whose cache answers queues nothing and starts no thread.
 */
struct later {
	pthread_mutex_t lock;
	pthread_cond_t work_cond, done_cond;
	struct job *head, *tail;
	size_t pending; /* queued or running */
	struct worker *current;
};

struct later *later_new(void)
{
	struct later *l = xcalloc(1, sizeof(*l));

	pthread_mutex_init(&l->lock, NULL);
	pthread_cond_init(&l->work_cond, NULL);
	pthread_cond_init(&l->done_cond, NULL);
	return l;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct later *l = w->l;

	pthread_mutex_lock(&l->lock);
	for (;;) {
		struct job *j = l->head;

		if (!j) {
			if (w->stop)
				break;
			pthread_cond_wait(&l->work_cond, &l->lock);
			continue;
		}
		l->head = j->next;
		if (!l->head)
			l->tail = NULL;
		pthread_mutex_unlock(&l->lock);
		j->fn(j->arg);
		free(j);
		pthread_mutex_lock(&l->lock);
		if (--l->pending == 0)
			pthread_cond_broadcast(&l->done_cond);
	}
	pthread_mutex_unlock(&l->lock);
	return NULL;
}

void later_run(struct later *l, void (*fn)(void *arg), void *arg)
{
	struct job *j;

	if (!l) {
		fn(arg);
		return;
	}
	pthread_mutex_lock(&l->lock);
	if (!l->current) {
		struct worker *w = xcalloc(1, sizeof(*w));

		w->l = l;
		if (pthread_create(&w->thread, NULL, worker_main, w) != 0) {
			pthread_mutex_unlock(&l->lock);
			free(w);
			fn(arg); /* no thread: the work is done now */
			return;
		}
		l->current = w;
	}
	j = xmalloc(sizeof(*j));
	j->fn = fn;
	j->arg = arg;
	j->next = NULL;
	if (l->tail)
		l->tail->next = j;
	else
		l->head = j;
	l->tail = j;
	l->pending++;
	pthread_cond_signal(&l->work_cond);
	pthread_mutex_unlock(&l->lock);
}

void later_wait(struct later *l)
{
	struct worker *w;

	if (!l)
		return;
	pthread_mutex_lock(&l->lock);
	while (l->pending)
		pthread_cond_wait(&l->done_cond, &l->lock);
	w = l->current;
	l->current = NULL;
	if (w) {
		w->stop = 1;
		pthread_cond_broadcast(&l->work_cond);
	}
	pthread_mutex_unlock(&l->lock);
	if (w) {
		pthread_join(w->thread, NULL);
		free(w);
	}
}

void later_free(struct later *l)
{
	if (!l)
		return;
	later_wait(l);
	pthread_cond_destroy(&l->work_cond);
	pthread_cond_destroy(&l->done_cond);
	pthread_mutex_destroy(&l->lock);
	free(l);
}
