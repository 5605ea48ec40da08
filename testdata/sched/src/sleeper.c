/* sleeper: threads that sleep, block and spin for known times, for a recording of
 * sched:sched_switch (testdata/record-sched.sh).
 *
 *   sleeper            main reads a pipe that "writer" fills after 50 ms, then waits
 *                      on a mutex "locker" holds for 40 ms; "napper" sleeps 20 x 10 ms
 *                      in nanosleep; "spinner" spins 20 x 5 ms, yielding between.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int fds[2];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t locked;
static volatile uint64_t sink;

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0)
		;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static void spin_ms(long ms)
{
	uint64_t end = now_ns() + (uint64_t)ms * 1000000u;

	while (now_ns() < end)
		sink += sink * 31 + 7;
}

static void *writer(void *arg)
{
	(void)arg;
	sleep_ms(50);
	if (write(fds[1], "x", 1) != 1)
		perror("write");
	return NULL;
}

static void *locker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	pthread_barrier_wait(&locked);
	sleep_ms(40);
	pthread_mutex_unlock(&lock);
	return NULL;
}

static void *napper(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < 20; i++)
		sleep_ms(10);
	return NULL;
}

static void *spinner(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < 20; i++) {
		spin_ms(5);
		sched_yield();
	}
	return NULL;
}

__attribute__((noinline)) static void wait_pipe(void)
{
	char c;

	if (read(fds[0], &c, 1) != 1)
		perror("read");
}

__attribute__((noinline)) static void wait_lock(void)
{
	pthread_mutex_lock(&lock);
	pthread_mutex_unlock(&lock);
}

int main(void)
{
	pthread_t t[4];
	int i;

	if (pipe(fds) != 0)
		return 1;
	pthread_barrier_init(&locked, NULL, 2);
	pthread_create(&t[0], NULL, writer, NULL);
	pthread_setname_np(t[0], "writer");
	pthread_create(&t[1], NULL, napper, NULL);
	pthread_setname_np(t[1], "napper");
	pthread_create(&t[2], NULL, spinner, NULL);
	pthread_setname_np(t[2], "spinner");
	wait_pipe();
	pthread_create(&t[3], NULL, locker, NULL);
	pthread_setname_np(t[3], "locker");
	pthread_barrier_wait(&locked);
	wait_lock();
	spin_ms(20);
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	return 0; /* nothing printed: perf record -o - writes the recording to stdout */
}
