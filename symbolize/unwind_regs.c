/* unwind_regs: a sample's REGS_USER dump as the unwinder's registers (see unwind.h). */
#include "symbolize/unwind.h"

#include <string.h>

/* perf_regs (x86-64) number -> DWARF number, -1 for none */
static const int8_t to_dwarf[24] = {
	0, 3, 2, 1, 4, 5, 6, 7, 16, -1, -1, -1, -1, -1, -1, -1,
	8, 9, 10, 11, 12, 13, 14, 15,
};

void unwind_regs_layout_arch(struct unwind_regs_layout *l, uint64_t mask, unsigned arch)
{
	/* aarch64's perf_regs numbers are DWARF's (x0..x30, sp), the pc 32 as ours;
	 * bits past them (VG, 46, for SVE) hold values of their own, in bit order */
	unsigned known = arch == UNWIND_AARCH64 ? 33 : 24;
	size_t k = 0;

	memset(l, 0, sizeof(*l));
	l->mask = mask;
	l->arch = (uint8_t)arch;
	for (uint64_t m = mask & ((1ULL << known) - 1); m; m &= m - 1, k++) {
		int b = __builtin_ctzll(m);
		int d = arch == UNWIND_AARCH64 ? b : to_dwarf[b];

		if (d >= 0) {
			l->reg[l->n] = (uint8_t)d;
			l->at[l->n++] = (uint8_t)k;
			l->valid |= (unwind_mask)1 << d;
			l->need = k + 1;
		}
	}
}

void unwind_regs_layout_init(struct unwind_regs_layout *l, uint64_t mask)
{
	unwind_regs_layout_arch(l, mask, UNWIND_X86_64);
}

int unwind_regs_placed(const struct unwind_regs_layout *l, struct unwind_regs *out,
		       const uint64_t *vals, size_t nvals)
{
	int sp = unwind_reg_sp(l->arch), ip = unwind_reg_ip(l->arch);

	memset(out, 0, sizeof(*out));
	out->arch = l->arch;
	if (nvals >= l->need) {
		for (size_t i = 0; i < l->n; i++)
			out->r[l->reg[i]] = vals[l->at[i]];
		out->valid = l->valid;
	} else {
		/* a dump cut short: the registers it holds */
		for (size_t i = 0; i < l->n; i++)
			if (l->at[i] < nvals) {
				out->r[l->reg[i]] = vals[l->at[i]];
				out->valid |= (unwind_mask)1 << l->reg[i];
			}
	}
	return (out->valid >> sp & 1) && (out->valid >> ip & 1) ? 0 : -1;
}

int unwind_regs_from_perf(struct unwind_regs *out, uint64_t mask, const uint64_t *vals,
			  size_t nvals)
{
	struct unwind_regs_layout l;

	unwind_regs_layout_init(&l, mask);
	return unwind_regs_placed(&l, out, vals, nvals);
}
