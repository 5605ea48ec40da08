/* mt: multi-threaded CPU-bound test program for perfconv recordings. */
/*
 * Usage: mt [MILLISECONDS]   (default 1000)
 *
 * main starts three threads, each with its own call chain of non-inlined,
 * non-static functions, so that frame-pointer stacks are stable at -O2:
 *   main        -> run_workers -> main_spin -> main_hash
 *   "mt-alpha"  -> worker_alpha -> alpha_crunch -> alpha_mix_step -> mix_rounds (inline mix32)
 *   "mt-beta"   -> worker_beta  -> beta_crunch  -> beta_sort_pass
 *      renames itself "mt-beta2" halfway through (second COMM record for one tid)
 *   "mt-gamma"  -> worker_gamma -> gamma_outer -> gamma_middle -> gamma_inner -> gamma_leaf
 * mix32 is a static inline helper that gcc inlines at -O2 (for DWARF
 * inline-frame tests).
 *
 * FRAMED: gcc 12 gives a leaf function that uses no stack no frame pointer,
 * even with -fno-omit-frame-pointer, and a frame-pointer unwind then skips
 * the leaf's caller. The hot leaves of the worker threads keep a small
 * volatile array on the stack so that their callers appear. main_hash is
 * left frameless on purpose: samples in it skip main_spin, as real
 * recordings of frameless leaves do.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

static long run_ms = 1000;
static volatile uint64_t sink;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static inline uint32_t mix32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352dU;
	x ^= x >> 15;
	x *= 0x846ca68bU;
	x ^= x >> 16;
	return x;
}

NOINLINE uint32_t mix_rounds(uint32_t x, int n)
{
	volatile uint32_t frame[4];	/* needs a stack frame: see FRAMED */

	for (int i = 0; i < n; i++)
		x = mix32(x + (uint32_t)i);
	frame[x & 3] = x;
	return x + frame[0];
}

NOINLINE uint32_t alpha_mix_step(uint32_t x)
{
	x = mix_rounds(x, 200);
	__asm__ volatile("" : "+r"(x));
	return x;
}

NOINLINE uint32_t alpha_crunch(uint32_t seed)
{
	uint32_t x = seed;

	for (int i = 0; i < 50; i++)
		x ^= alpha_mix_step(x + (uint32_t)i);
	return x;
}

NOINLINE void *worker_alpha(void *arg)
{
	double end = *(double *)arg;
	uint32_t x = 1;

	pthread_setname_np(pthread_self(), "mt-alpha");
	while (now_ms() < end)
		x = alpha_crunch(x);
	sink += x;
	return NULL;
}

NOINLINE void beta_sort_pass(uint32_t *a, int n)
{
	volatile uint32_t frame[4];	/* needs a stack frame: see FRAMED */

	frame[n & 3] = (uint32_t)n;
	for (int i = 1; i < n; i++) {
		uint32_t v = a[i];
		int j = i - 1;

		while (j >= 0 && a[j] > v) {
			a[j + 1] = a[j];
			j--;
		}
		a[j + 1] = v;
	}
	(void)frame[n & 3];
}

NOINLINE uint32_t beta_crunch(uint32_t seed)
{
	uint32_t a[128];

	for (int i = 0; i < 128; i++)
		a[i] = seed = seed * 1103515245U + 12345U;
	beta_sort_pass(a, 128);
	return a[seed % 128];
}

NOINLINE void *worker_beta(void *arg)
{
	double start = now_ms();
	double end = *(double *)arg;
	double half = start + (end - start) / 2;
	int renamed = 0;
	uint32_t x = 7;

	pthread_setname_np(pthread_self(), "mt-beta");
	while (now_ms() < end) {
		x += beta_crunch(x);
		if (!renamed && now_ms() >= half) {
			pthread_setname_np(pthread_self(), "mt-beta2");
			renamed = 1;
		}
	}
	sink += x;
	return NULL;
}

NOINLINE uint64_t gamma_leaf(uint64_t v)
{
	volatile uint64_t frame[2];	/* needs a stack frame: see FRAMED */

	for (int i = 0; i < 1000; i++)
		v = v * 6364136223846793005ULL + 1442695040888963407ULL;
	frame[v & 1] = v;
	return v + frame[1];
}

NOINLINE uint64_t gamma_inner(uint64_t v)
{
	v = gamma_leaf(v);
	__asm__ volatile("" : "+r"(v));
	return v + 1;
}

NOINLINE uint64_t gamma_middle(uint64_t v)
{
	v = gamma_inner(v);
	__asm__ volatile("" : "+r"(v));
	return v ^ 3;
}

NOINLINE uint64_t gamma_outer(uint64_t v)
{
	v = gamma_middle(v);
	__asm__ volatile("" : "+r"(v));
	return v + 5;
}

NOINLINE void *worker_gamma(void *arg)
{
	double end = *(double *)arg;
	uint64_t v = 3;

	pthread_setname_np(pthread_self(), "mt-gamma");
	while (now_ms() < end)
		v = gamma_outer(v);
	sink += v;
	return NULL;
}

NOINLINE uint64_t main_hash(uint64_t h, int n)
{
	for (int i = 0; i < n; i++)
		h = (h ^ (uint64_t)i) * 1099511628211ULL;
	__asm__ volatile("" : "+r"(h));
	return h;
}

NOINLINE uint64_t main_spin(double end)
{
	uint64_t h = 14695981039346656037ULL;

	while (now_ms() < end)
		h = main_hash(h, 20000);
	return h;
}

NOINLINE int run_workers(long ms)
{
	pthread_t t[3];
	double end = now_ms() + (double)ms;
	void *(*fn[3])(void *) = { worker_alpha, worker_beta, worker_gamma };

	for (int i = 0; i < 3; i++)
		if (pthread_create(&t[i], NULL, fn[i], &end) != 0) {
			fprintf(stderr, "mt: pthread_create failed\n");
			return 1;
		}
	sink += main_spin(end);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		run_ms = strtol(argv[1], NULL, 10);
	if (run_ms <= 0) {
		fprintf(stderr, "usage: mt [MILLISECONDS]\n");
		return 2;
	}
	return run_workers(run_ms);
}
