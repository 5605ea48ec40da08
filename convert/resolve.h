/* resolve: an address of a process at a time into the profile's frames, each once. */
#ifndef PERFCONV_RESOLVE_H
#define PERFCONV_RESOLVE_H

#include <stddef.h>
#include <stdint.h>

#include "common/diag.h"
#include "common/perf_abi.h"
#include "convert/replay.h"
#include "convert/session.h"
#include "formats/model/profile.h"
#include "symbolize/jit/jitprocs.h"
#include "symbolize/symbolizer.h"

/* Frames one address can expand to (inlined calls), at most. */
#define RESOLVE_MAX_INLINE 32

struct resolver_config {
	struct profile *p;
	struct replay *rp;          /* finished (replay_finish) before the first address */
	struct symbolizer *sym;
	struct jit_procs *jits;     /* loaded before the first address */
	struct diag *d;
	int no_symbols;             /* every frame module+0xoffset or [unknown] */
	const uint8_t *kernel_bid;  /* the recorded kernel's, or NULL */
	size_t kernel_bid_size;
	/*
	 * Kernel frames are interned by address only, to be named by
	 * fixups_name_kernel() once kernel symbols have loaded on the symbolizer's
	 * thread; user frames are interned as placeholders while that thread
	 * symbolizes them, to be expanded by fixups_expand_user().
	 */
	int defer_kernel, defer_user;
};

struct resolver;

/* The config's objects must outlive the resolver. */
struct resolver *resolver_new(const struct resolver_config *c);
/* NULL-safe. */
void resolver_free(struct resolver *r);
/*
 * After the last resolver_frames() (pass 2 over): what only resolving addresses uses
 * is freed, its caches by address of every process of a whole-machine recording,
 * 160 MB of a 1 GB one's, which expanding the frames would run beside; the pending
 * frames and resolver_intern() remain.
 */
void resolver_trim(struct resolver *r);

/*
 * The frames of `addr` in the process of sample `c` at its time, innermost first:
 * *n ids (1 at least), valid until the next call. `ret`: a return address (its call is looked up);
 * `kernel`: in kernel context. Native code through the replay's mappings and the
 * symbolizer, JIT code through the process's dump or map at that time, kernel code
 * through kallsyms or its KSYMBOL mapping; what cannot be named is one frame
 * module+0xoffset, or [unknown] outside every mapping. Cached by (mapping, offset,
 * ret), JIT code by (code, offset, ret).
 */
const uint32_t *resolver_frames(struct resolver *r, const struct sample_ctx *c, uint64_t addr,
				int ret, int kernel, uint32_t *n);

/* A user address left as a placeholder frame (defer_user): one per frame of a
 * whole-machine recording's every process, so no more than the frame (its address,
 * profile mapping, and `line` 1 for a return address) and the dso, which the profile
 * mapping does not tell (files of one name told apart by inode share it). */
struct user_pending {
	uint32_t frame;
	uint32_t dso;
};
const struct user_pending *resolver_user_pending(const struct resolver *r, size_t *n);
/* Those done with (fixups_expand_user): freed. */
void resolver_user_pending_done(struct resolver *r);
/* Kernel frames interned by address (defer_kernel); a frame may be listed twice. */
const uint32_t *resolver_kernel_pending(const struct resolver *r, size_t *n);

/*
 * Intern the frames of `addr` in mapping `m` (NULL: in no mapping; profile mapping
 * `mapping`) from a symbolization result sf[0..n), innermost first; with n 0, the one
 * frame that says where the address is (module+0xoffset, [unknown]). `kmod`: the
 * kernel module of a kernel symbol, or NULL. Writes ids[], returns how many.
 */
uint32_t resolver_intern(struct resolver *r, const struct replay_map *m, uint32_t mapping,
			 uint64_t addr, int kernel, const struct sym_frame *sf, size_t n,
			 const char *kmod, uint32_t *ids);

/* The replay dso of profile mapping `mapping`, UINT32_MAX for none (JIT, no mapping). */
uint32_t resolver_mapping_dso(const struct resolver *r, uint32_t mapping);

/* The short name frames show for an object: "[vdso]" as it is, a path's base name. */
const char *resolve_module_name(const char *path);

/* The file offset of `addr` in user mapping `m`. */
static inline uint64_t resolve_user_offset(const struct replay_map *m, uint64_t addr)
{
	return addr - m->start + m->pgoff;
}

#endif
