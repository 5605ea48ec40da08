/* callchain: the one walk over a sample's raw stack, for pass 2 and the read-ahead. */
#ifndef PERFCONV_CALLCHAIN_H
#define PERFCONV_CALLCHAIN_H

#include <stddef.h>
#include <stdint.h>

#include "common/perf_abi.h"

/*
 * A raw stack is a callchain (context markers and addresses, leaf first) or a lone
 * IP. A context marker says whose addresses follow: the kernel's, user space's, or a
 * guest's or the hypervisor's, which are skipped (their code is not the recording
 * machine's). Each context starts at the address it was interrupted at: the first
 * address after a marker is a leaf, every later one a return address.
 */
struct callchain_walk {
	const uint64_t *words;
	size_t n, i;
	int kernel;   /* the context of the next address */
	int leaf;     /* the next address is where its context was interrupted */
	int skip;     /* a guest's or the hypervisor's context */
};

/* `kernel`: the sample was taken in the kernel (cpumode), for a chain without markers. */
static inline void callchain_walk_init(struct callchain_walk *w, const uint64_t *words,
				       size_t n, int kernel)
{
	w->words = words;
	w->n = n;
	w->i = 0;
	w->kernel = kernel;
	w->leaf = 1;
	w->skip = 0;
}

/*
 * The next address: 1 and *addr, *ret (a return address) and *kernel (in kernel
 * context) set, or 0 at the end.
 */
static inline int callchain_walk_next(struct callchain_walk *w, uint64_t *addr, int *ret,
				      int *kernel)
{
	while (w->i < w->n) {
		uint64_t a = w->words[w->i++];

		if (a >= PERF_CONTEXT_MAX) {
			w->skip = a == PERF_CONTEXT_GUEST || a == PERF_CONTEXT_GUEST_KERNEL ||
				  a == PERF_CONTEXT_GUEST_USER || a == PERF_CONTEXT_HV;
			w->kernel = a == PERF_CONTEXT_KERNEL;
			w->leaf = 1;
			continue;
		}
		if (w->skip)
			continue;
		*addr = a;
		*ret = !w->leaf;
		*kernel = w->kernel;
		w->leaf = 0;
		return 1;
	}
	return 0;
}

#endif
