/* fixups: what pass 2 left for later, done once it is over. */
#ifndef PERFCONV_FIXUPS_H
#define PERFCONV_FIXUPS_H

#include <stddef.h>
#include <stdint.h>

#include "convert/replay.h"
#include "convert/resolve.h"
#include "formats/model/profile.h"
#include "symbolize/symbolizer.h"

/*
 * Symbolize the user addresses the resolver left as placeholders (defer_user) and
 * put their frames in the stacks (profile_expand_frames: node ids change). The
 * symbolizer's helper thread took them in order as pass 2 met them; this thread
 * takes them from the other end, so the two meet in the middle.
 */
void fixups_expand_user(struct resolver *res, struct profile *p, const struct replay *rp,
			struct symbolizer *sym);
/* (and the resolver's pending frames freed: resolver_user_pending_done) */

/* Name the kernel frames the resolver interned by address (defer_kernel), now that
 * kernel symbols have loaded; what kallsyms does not name becomes module+0xoffset. */
void fixups_name_kernel(struct resolver *res, struct profile *p, struct symbolizer *sym,
			const uint8_t *kernel_bid, size_t kernel_bid_size);

/* Give each thread with samples its last name (profile_set_thread_name), as ps would
 * show it at the thread's end: one it was given after its last sample counts. */
void fixups_thread_names(struct profile *p, struct replay *rp);

/*
 * What the frames of each mapping carry, for writers that say so (pprof's has_*
 * flags). After the last mapping is interned: the flags are not part of a mapping's
 * identity from here on. `inline_frames`: inlined calls were looked for.
 */
void fixups_mapping_flags(struct profile *p, int inline_frames);

#endif
