/* offcpu: threads that wait in known ways for known times, for off-CPU tests.
 *
 *   sleeper  nanosleep(200 ms) three times (600 ms asleep, in sleep_200ms)
 *   locker   blocks on a mutex main holds for 300 ms (in lock_wait)
 *   reader   blocks in read() on a pipe main writes after 400 ms (in pipe_wait)
 *   spinner  spins 500 ms on the CPU (in spin), never blocks on purpose
 *   main     holds the mutex while sleeping 300 ms, writes the pipe at 400 ms,
 *            joins everything
 * Each thread names itself (prctl), so its samples carry the name.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t start;
static int fds[2];

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void __attribute__((noinline)) sleep_200ms(void)
{
	struct timespec t = { 0, 200000000 };

	nanosleep(&t, NULL);
}

static void *sleeper(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "sleeper");
	pthread_barrier_wait(&start);
	for (int i = 0; i < 3; i++)
		sleep_200ms();
	return NULL;
}

static void __attribute__((noinline)) lock_wait(void)
{
	pthread_mutex_lock(&lock);
	pthread_mutex_unlock(&lock);
}

static void *locker(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "locker");
	pthread_barrier_wait(&start);
	lock_wait();
	return NULL;
}

static void __attribute__((noinline)) pipe_wait(void)
{
	char c;

	if (read(fds[0], &c, 1) != 1)
		perror("read");
}

static void *reader(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "reader");
	pthread_barrier_wait(&start);
	pipe_wait();
	return NULL;
}

static volatile unsigned long sink;

static void __attribute__((noinline)) spin(double seconds)
{
	double end = now() + seconds;

	while (now() < end)
		for (int i = 0; i < 1000; i++)
			sink += (unsigned long)i * i;
}

static void *spinner(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "spinner");
	pthread_barrier_wait(&start);
	spin(0.5);
	return NULL;
}

int main(void)
{
	pthread_t t[4];
	void *(*fn[4])(void *) = { sleeper, locker, reader, spinner };
	struct timespec ms300 = { 0, 300000000 }, ms100 = { 0, 100000000 };
	double t0;

	if (pipe(fds) != 0)
		return 1;
	pthread_barrier_init(&start, NULL, 5);
	pthread_mutex_lock(&lock);
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, fn[i], NULL);
	pthread_barrier_wait(&start);
	t0 = now();
	nanosleep(&ms300, NULL);         /* locker waits for this */
	pthread_mutex_unlock(&lock);
	nanosleep(&ms100, NULL);         /* reader waits 400 ms in all */
	if (write(fds[1], "x", 1) != 1)
		return 1;
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	printf("offcpu: done in %.3f s\n", now() - t0);
	return 0;
}
