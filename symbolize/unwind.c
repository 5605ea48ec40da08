/* unwind: a sampled user stack (perf record --call-graph dwarf) into return addresses. */
#include "symbolize/unwind.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <string.h>

#include "common/util.h"
#include "symbolize/unwind_internal.h"

/* The stack copy and what went wrong reading it. */
struct mem {
	const uint8_t *stack;
	uint64_t sp, size;
	uint64_t ends;        /* offsets below it start 8 bytes in the copy: size - 7, or 0 */
	int short_read;
	struct unwind_trace *tr;     /* NULL: reads not traced */
	const struct unwind_arch_regs *a; /* the walk's architecture */
};

static void mem_init(struct mem *mm, const uint8_t *stack, uint64_t sp, uint64_t size)
{
	mm->stack = stack;
	mm->sp = sp;
	mm->size = size;
	mm->ends = size >= 8 ? size - 7 : 0;
	mm->short_read = 0;
	mm->tr = NULL;
}

/* The walk reads register r of the frame: a dependence on the sample's when the
 * frame's r is still that. */
static inline void uses(struct mem *mm, int r)
{
	if (mm->tr) {
		mm->tr->dep |= mm->tr->init & RBIT(r);
		mm->tr->used |= RBIT(r);
	}
}

/* An expression may read any register. */
static inline void uses_all(struct mem *mm)
{
	if (mm->tr) {
		mm->tr->dep |= mm->tr->init;
		mm->tr->used = ~(unwind_mask)0;
	}
}

static inline __attribute__((always_inline)) int mem_read(struct mem *mm, uint64_t addr,
						     uint64_t *val)
{
	if (addr < mm->sp || addr - mm->sp >= mm->ends) {
		mm->short_read = 1;
		if (mm->tr)
			mm->tr->unsure = 1;
		return -1;
	}
	memcpy(val, mm->stack + (addr - mm->sp), 8);
	if (mm->tr) {
		struct unwind_trace *t = mm->tr;

		if (t->n < UNWIND_TRACE_READS) {
			t->off[t->n] = (uint32_t)(addr - mm->sp);
			t->val[t->n++] = *val;
		} else {
			t->overflow = 1;
		}
	}
	return 0;
}

/* Evaluation of a CFI expression's result. */
enum { EV_ERR = -1, EV_ADDR = 0, EV_VALUE = 1, EV_REG = 2 };

#define EV_STACK 16

/*
 * Evaluates ops[0..n) with `regs` as the frame's registers and `cfa` pushed first
 * when `push_cfa`. Returns EV_ADDR (*out is where the value is), EV_VALUE (*out is
 * the value: DW_OP_stack_value), EV_REG (*out the register number, DW_OP_regN), or
 * EV_ERR with *bad_reg set when a register was missing (-1 otherwise).
 */
static int eval(const Dwarf_Op *ops, size_t n, const struct unwind_regs *regs, struct mem *mm,
		int push_cfa, uint64_t cfa, uint64_t *out, int *bad_reg)
{
	uint64_t st[EV_STACK];
	size_t sp = 0;
	uint64_t a, b;

	*bad_reg = -1;
	if (push_cfa)
		st[sp++] = cfa;
#define PUSH(x) do { if (sp >= EV_STACK) return EV_ERR; st[sp++] = (x); } while (0)
#define POP(x) do { if (sp == 0) return EV_ERR; (x) = st[--sp]; } while (0)
	for (size_t i = 0; i < n; i++) {
		uint8_t op = ops[i].atom;
		int reg;

		if (op >= DW_OP_lit0 && op <= DW_OP_lit31) {
			PUSH((uint64_t)(op - DW_OP_lit0));
			continue;
		}
		if ((op >= DW_OP_breg0 && op <= DW_OP_breg31) || op == DW_OP_bregx) {
			reg = op == DW_OP_bregx ? (int)ops[i].number : op - DW_OP_breg0;
			if (reg < 0 || !unwind_reg_ok(mm->a, (uint64_t)reg) || !(regs->valid & RBIT(reg))) {
				*bad_reg = reg;
				return EV_ERR;
			}
			PUSH(regs->r[reg] + (uint64_t)(op == DW_OP_bregx ? (int64_t)ops[i].number2
							       : (int64_t)ops[i].number));
			continue;
		}
		if ((op >= DW_OP_reg0 && op <= DW_OP_reg31) || op == DW_OP_regx) {
			if (i + 1 != n)
				return EV_ERR;
			*out = op == DW_OP_regx ? ops[i].number : (uint64_t)(op - DW_OP_reg0);
			return EV_REG;
		}
		switch (op) {
		case DW_OP_call_frame_cfa: PUSH(cfa); break;
		case DW_OP_const1u: case DW_OP_const2u: case DW_OP_const4u: case DW_OP_const8u:
		case DW_OP_constu: PUSH(ops[i].number); break;
		case DW_OP_const1s: case DW_OP_const2s: case DW_OP_const4s: case DW_OP_const8s:
		case DW_OP_consts: PUSH((uint64_t)(int64_t)ops[i].number); break;
		case DW_OP_plus_uconst: POP(a); PUSH(a + ops[i].number); break;
		case DW_OP_dup: POP(a); PUSH(a); PUSH(a); break;
		case DW_OP_drop: POP(a); break;
		case DW_OP_swap: POP(a); POP(b); PUSH(a); PUSH(b); break;
		case DW_OP_deref:
			POP(a);
			if (mem_read(mm, a, &b) < 0)
				return EV_ERR;
			PUSH(b);
			break;
		case DW_OP_plus: POP(a); POP(b); PUSH(b + a); break;
		case DW_OP_minus: POP(a); POP(b); PUSH(b - a); break;
		case DW_OP_mul: POP(a); POP(b); PUSH(b * a); break;
		case DW_OP_and: POP(a); POP(b); PUSH(b & a); break;
		case DW_OP_or: POP(a); POP(b); PUSH(b | a); break;
		case DW_OP_xor: POP(a); POP(b); PUSH(b ^ a); break;
		case DW_OP_shl: POP(a); POP(b); PUSH(a < 64 ? b << a : 0); break;
		case DW_OP_shr: POP(a); POP(b); PUSH(a < 64 ? b >> a : 0); break;
		case DW_OP_ge: POP(a); POP(b); PUSH((int64_t)b >= (int64_t)a); break;
		case DW_OP_gt: POP(a); POP(b); PUSH((int64_t)b > (int64_t)a); break;
		case DW_OP_le: POP(a); POP(b); PUSH((int64_t)b <= (int64_t)a); break;
		case DW_OP_lt: POP(a); POP(b); PUSH((int64_t)b < (int64_t)a); break;
		case DW_OP_eq: POP(a); POP(b); PUSH(b == a); break;
		case DW_OP_ne: POP(a); POP(b); PUSH(b != a); break;
		case DW_OP_stack_value:
			if (i + 1 != n)
				return EV_ERR;
			POP(*out);
			return EV_VALUE;
		case DW_OP_nop: break;
		default:
			return EV_ERR;
		}
	}
	POP(*out);
	return EV_ADDR;
#undef PUSH
#undef POP
}

/* aarch64: a return address signed by pointer authentication (-mbranch-protection=
 * pac-ret) carries its code in the bits above the 48 of a user address. */
static inline uint64_t a64_strip(uint64_t ra)
{
	return ra & ((1ULL << 48) - 1);
}

/* Outcome of one step. */
enum step { STEP_OK, STEP_END, STEP_FAIL };

/*
 * The registers a step restored from the stack are read when a later step uses them
 * (a CFA, a copy, an expression), not at once: most are callee-saved registers that
 * no later rule reads (a step of libc's msort restored six of them and the return
 * address, and only the return address was used), and a walk the memo keeps then
 * holds only the words that its result depends on. A word not in the copy leaves the
 * register invalid when it is used, as reading it at once did.
 */
struct lazy {
	unwind_mask mask;             /* bit r: r is the stack word at at[r], unread */
	uint64_t at[UNWIND_NREGS];
};

static inline void need(struct unwind_regs *cur, struct lazy *lz, int r, struct mem *mm)
{
	uint64_t x;

	if (!(lz->mask & RBIT(r)))
		return;
	lz->mask &= ~RBIT(r);
	if (mem_read(mm, lz->at[r], &x) < 0) {
		mm->short_read = 0;
		cur->valid &= ~RBIT(r);
	} else {
		cur->r[r] = x;
	}
}

/* Before an expression, which may read any register. */
static void need_all(struct unwind_regs *cur, struct lazy *lz, struct mem *mm)
{
	while (lz->mask)
		need(cur, lz, __builtin_ctzll(lz->mask), mm);
}

/* Why an expression failed, as a stop reason: a register missing, a read past the
 * copy, or else the CFI itself. */
static void eval_failed(struct unwind_result *res, const struct mem *mm, int bad)
{
	res->stop = bad >= 0 ? UNWIND_NO_REG : mm->short_read ? UNWIND_STACK_SHORT : UNWIND_BAD;
	res->reg = bad;
}

/* Register `r` of the caller by libdw's rule in `f` (an expression): into *next, or
 * left invalid. -1 when the return address cannot be had (res->stop says why). */
static int reg_by_expr(Dwarf_Frame *f, int r, const struct unwind_regs *cur,
		       struct unwind_regs *next, uint64_t cfa, struct mem *mm,
		       struct unwind_result *res)
{
	Dwarf_Op *ops, ops_mem[3];
	size_t nops;
	uint64_t v, x;
	int k, bad;

	if (dwarf_frame_register(f, r, ops_mem, &ops, &nops) != 0 || nops == 0)
		return 0; /* (compiled as such: not reached) */
	uses_all(mm); /* (cur's registers all read by the caller first) */
	k = eval(ops, nops, cur, mm, 0, cfa, &v, &bad);
	if (k == EV_ADDR) {
		if (mem_read(mm, v, &x) < 0) {
			if (r == mm->a->ra) {
				res->stop = UNWIND_STACK_SHORT;
				return -1;
			}
			mm->short_read = 0;
			return 0;
		}
		next->r[r] = x;
		next->valid |= RBIT(r);
	} else if (k == EV_VALUE) {
		next->r[r] = v;
		next->valid |= RBIT(r);
	} else if (k == EV_REG) {
		if (unwind_reg_ok(mm->a, v) && (cur->valid & RBIT(v))) {
			next->r[r] = cur->r[v];
			next->valid |= RBIT(r);
		}
	} else if (r == mm->a->ra) {
		eval_failed(res, mm, bad);
		return -1;
	} else {
		mm->short_read = 0;
	}
	return 0;
}

/* One step with CFI frame state `p`: the caller's registers into *next, those saved
 * on the stack (but the return address) left there in *nlz. */
static enum step step_cfi(const struct cfi_plan *p, struct unwind_regs *cur, struct lazy *lz,
			  struct unwind_regs *next, struct lazy *nlz, struct mem *mm,
			  struct unwind_result *res)
{
	const struct unwind_arch_regs *a = mm->a;
	uint64_t cfa, x;
	unwind_mask valid, carried;
	size_t i;

	if (p->has_expr)
		need_all(cur, lz, mm);
	if (p->cfa_reg != CFA_EXPR) {
		need(cur, lz, p->cfa_reg, mm);
		if (!(cur->valid & RBIT(p->cfa_reg))) {
			res->stop = UNWIND_NO_REG;
			res->reg = p->cfa_reg;
			return STEP_FAIL;
		}
		uses(mm, p->cfa_reg);
		cfa = cur->r[p->cfa_reg] + p->cfa_off;
	} else {
		Dwarf_Op *ops;
		size_t nops;
		int bad;

		if (dwarf_frame_cfa(p->f, &ops, &nops) != 0 || nops == 0) {
			res->stop = UNWIND_BAD;
			return STEP_FAIL;
		}
		uses_all(mm);
		if (eval(ops, nops, cur, mm, 0, 0, &cfa, &bad) != EV_ADDR) {
			eval_failed(res, mm, bad);
			return STEP_FAIL;
		}
	}
	/* every register at once, its validity from the plan: a register without a
	 * rule is left invalid (its value a stale one nothing reads) */
	memcpy(next->r, cur->r, sizeof(next->r));
	valid = (cur->valid & p->same) | p->saved;
	nlz->mask = carried = lz->mask & p->same;
	for (; carried; carried &= carried - 1)
		nlz->at[__builtin_ctzll(carried)] = lz->at[__builtin_ctzll(carried)];
	/* the registers saved in the frame: where, read when used (need()) */
	for (i = 0; i < p->nsaved; i++)
		nlz->at[p->rules[i].regno] = cfa + p->rules[i].off;
	nlz->mask |= p->saved;
	if (i < p->nat) {
		/* the return address, read now */
		if (mem_read(mm, cfa + p->rules[i].off, &x) < 0) {
			res->stop = UNWIND_STACK_SHORT;
			return STEP_FAIL;
		}
		next->r[a->ra] = x;
		valid |= RBIT(a->ra);
		i++;
	}
	next->valid = valid;
	for (; i < p->nrules; i++) {
		const struct reg_rule *rr = &p->rules[i];
		int r = rr->regno;

		nlz->mask &= ~RBIT(r);
		switch (rr->kind) {
		case RULE_CFA_PLUS:
			next->r[r] = cfa + rr->off;
			next->valid |= RBIT(r);
			break;
		case RULE_REG:
			if (cur->valid & RBIT(rr->reg)) {
				/* the same word, still unread, or the value */
				if (lz->mask & RBIT(rr->reg)) {
					nlz->at[r] = lz->at[rr->reg];
					nlz->mask |= RBIT(r);
				}
				uses(mm, rr->reg);
				next->r[r] = cur->r[rr->reg];
				next->valid |= RBIT(r);
			}
			break;
		default:
			if (reg_by_expr(p->f, r, cur, next, cfa, mm, res) < 0)
				return STEP_FAIL;
		}
	}
	/* x86-64, aarch64: the caller's stack pointer is the CFA */
	next->r[a->sp] = cfa;
	next->valid |= RBIT(a->sp);
	nlz->mask &= ~RBIT(a->sp);
	if (a->ip != a->ra) {
		/* aarch64: the caller's pc is the return address column's value (in a
		 * leaf, x30 kept: the link register), which is also the caller's x30 */
		if (p->same & RBIT(a->ra))
			uses(mm, a->ra);
		need(next, nlz, a->ra, mm);
		next->valid &= ~RBIT(a->ip);
		if (next->valid & RBIT(a->ra)) {
			next->r[a->ra] = a64_strip(next->r[a->ra]);
			next->r[a->ip] = next->r[a->ra];
			next->valid |= RBIT(a->ip);
		}
	}
	/* what the rules set holds the sample's value no more */
	if (mm->tr)
		mm->tr->init &= p->same & ~p->set;
	if (!(next->valid & RBIT(a->ip)) || next->r[a->ip] == 0)
		return STEP_END;
	return STEP_OK;
}

/* One step through the frame pointer: it points at the saved frame pointer, the return
 * address above it (x86-64's rbp after push rbp; aarch64's frame record of x29, x30).
 * Only when both lie in the copy, above the stack pointer. */
static enum step step_fp(struct unwind_regs *cur, struct lazy *lz, struct unwind_regs *next,
			 struct lazy *nlz, struct mem *mm)
{
	const struct unwind_arch_regs *a = mm->a;
	unwind_mask moved = RBIT(a->fp) | RBIT(a->sp) | RBIT(a->ip) | RBIT(a->ra);
	uint64_t bp, saved, ra;

	need(cur, lz, a->fp, mm);
	bp = cur->r[a->fp];
	uses(mm, a->fp);
	uses(mm, a->sp);
	if (!(cur->valid & RBIT(a->fp)) || bp < cur->r[a->sp] || (bp & 7) ||
	    mem_read(mm, bp, &saved) < 0 || mem_read(mm, bp + 8, &ra) < 0) {
		/* a frame just past the copy's end (within 1 MiB) is a stack the copy was
		 * too small for, not the end of the frame pointers */
		mm->short_read = (cur->valid & RBIT(a->fp)) && !(bp & 7) &&
				 bp + 16 > mm->sp + mm->size && bp < mm->sp + mm->size + (1u << 20);
		return STEP_FAIL;
	}
	if (a->ip != a->ra)
		ra = a64_strip(ra);
	*next = *cur;
	*nlz = *lz;
	next->r[a->fp] = saved;
	next->r[a->sp] = bp + 16;
	next->r[a->ra] = ra;
	next->r[a->ip] = ra;
	next->valid |= RBIT(a->ra) | RBIT(a->ip);
	nlz->mask &= ~moved;
	if (mm->tr)
		mm->tr->init &= ~moved;
	return ra ? STEP_OK : STEP_END;
}

/*
 * aarch64, a leaf without CFI: a PLT stub or a hand-written leaf has not saved its
 * return address, which is in x30, while x29 still points at its caller's frame
 * record (whose return address is the caller's caller's: the frame pointer's step
 * would skip the caller). Taken when x30 is not that record's return address; the
 * caller runs on the same stack pointer. A leaf that made a frame record, called and
 * has x30 still pointing back into itself gives that address as a frame of its own.
 */
static enum step step_lr(struct unwind_regs *cur, struct lazy *lz, struct unwind_regs *next,
			 struct lazy *nlz, struct mem *mm)
{
	const struct unwind_arch_regs *a = mm->a;
	uint64_t lr, bp, rec = 0;

	need(cur, lz, a->ra, mm);
	need(cur, lz, a->fp, mm);
	uses(mm, a->ra);
	uses(mm, a->fp);
	uses(mm, a->sp);
	if (!(cur->valid & RBIT(a->ra)) || !(lr = a64_strip(cur->r[a->ra])) ||
	    lr == cur->r[a->ip])
		return STEP_FAIL;
	bp = cur->r[a->fp];
	if ((cur->valid & RBIT(a->fp)) && bp >= cur->r[a->sp] && !(bp & 7) &&
	    mem_read(mm, bp + 8, &rec) == 0 && a64_strip(rec) == lr)
		return STEP_FAIL; /* the leaf's own record: the frame pointer's step */
	mm->short_read = 0;
	*next = *cur;
	*nlz = *lz;
	next->r[a->ip] = lr;
	nlz->mask &= ~RBIT(a->ip);
	if (mm->tr)
		mm->tr->init &= ~RBIT(a->ip);
	return STEP_OK;
}

size_t unwind_walk(const struct unwind_regs *regs, const uint8_t *stack, size_t size,
		   unwind_find_fn find, void *ctx, uint64_t *pcs, size_t cap,
		   struct unwind_result *res, struct unwind_trace *tr)
{
	/* a frame's registers and its caller's, the two swapped at each step */
	struct unwind_regs rs[2], *cur = &rs[0], *next = &rs[1], *t;
	struct lazy lzs[2], *lz = &lzs[0], *nlz = &lzs[1], *tl;
	struct mem mm;
	int first = 1, same_sp = 0;
	const struct unwind_arch_regs *a;

	memset(res, 0, sizeof(*res));
	res->reg = -1;
	if (regs->arch > UNWIND_AARCH64) {
		res->stop = UNWIND_BAD;
		return 0;
	}
	a = &unwind_arches[regs->arch];
	*cur = *regs;
	lz->mask = 0;
	mem_init(&mm, stack, regs->r[a->sp], size);
	mm.tr = tr;
	mm.a = a;
	res->stack_end = mm.sp + size;
	if (!(cur->valid & RBIT(a->ip)) || !(cur->valid & RBIT(a->sp))) {
		res->stop = UNWIND_NO_REG;
		res->reg = (cur->valid & RBIT(a->ip)) ? a->sp : a->ip;
		return 0;
	}
	for (;;) {
		uint64_t pc = cur->r[a->ip];
		struct unwind_where w = { NULL, 0, NULL };
		const struct cfi_plan *f = NULL;
		enum step st;
		bool signal = false, by_lr = false;
		unsigned flags = (first ? TRACE_FIRST : 0) | (same_sp ? TRACE_SAME_SP : 0);

		if (tr && tr->memo && res->n) {
			/* the rest as a walk made before from this frame on made it */
			size_t n = unwind_memo_rest(tr->memo, tr, pc, cur->r[a->sp], flags,
						    stack, mm.sp, size, pcs, res->n, cap, &tr->aux);

			if (n) {
				res->n = n;
				res->stop = UNWIND_END;
				tr->from_memo = 1;
				break;
			}
		}
		if (res->n >= cap || res->n >= UNWIND_MAX_FRAMES) {
			res->stop = UNWIND_LIMIT;
			break;
		}
		if (tr) {
			tr->used = RBIT(a->ip) | RBIT(a->sp);
			tr->unsure = 0;
			if (tr->nsteps < UNWIND_TRACE_STEPS) {
				tr->step[tr->nsteps].sp = cur->r[a->sp];
				tr->step[tr->nsteps].first_read = (uint16_t)tr->n;
				tr->step[tr->nsteps].flags = (uint8_t)flags;
			}
		}
		if (first && res->n && res->nsignal < UNWIND_MAX_SIGNALS) {
			res->signal[res->nsignal++] = (uint32_t)res->n;
			if (tr)
				tr->unsure = 1;
		}
		pcs[res->n++] = pc;
		/* a return address's call is the byte before it: look that up */
		if (!find(ctx, first ? pc : pc - 1, &w)) {
			/* no mapping: a frame pointer is still worth a try (JIT code unknown) */
			w.mod = NULL;
			w.name = NULL;
		}
		if (w.mod && unwind_module_arch(w.mod) == regs->arch) {
			uint64_t at = pc - w.bias - (first ? 0 : 1);

			f = unwind_frame_at(w.mod, at);
			if (f)
				signal = f->signal;
		}
		mm.short_read = 0;
		if (f) {
			st = step_cfi(f, cur, lz, next, nlz, &mm, res);
			if (st == STEP_FAIL)
				break;
		} else {
			st = STEP_FAIL;
			if (first && res->n == 1 && a->ip != a->ra)
				by_lr = (st = step_lr(cur, lz, next, nlz, &mm)) == STEP_OK;
			if (st == STEP_FAIL)
				st = step_fp(cur, lz, next, nlz, &mm);
			if (st == STEP_FAIL) {
				res->stop = mm.short_read ? UNWIND_STACK_SHORT
					  : w.name ? UNWIND_NO_CFI : UNWIND_NO_MAP;
				res->module = w.name;
				break;
			}
			res->nocfi++;
		}
		if (tr && tr->nsteps++ < UNWIND_TRACE_STEPS) {
			struct unwind_trace_step *ts = &tr->step[tr->nsteps - 1];

			ts->used = tr->used;
			ts->carried = f ? f->same : by_lr ? ~RBIT(a->ip) :
				      ~(RBIT(a->fp) | RBIT(a->sp) | RBIT(a->ip) | RBIT(a->ra));
			if (tr->unsure || signal)
				ts->flags |= TRACE_UNSURE;
		}
		if (st == STEP_END) {
			res->stop = UNWIND_END;
			break;
		}
		/* the stack pointer moves up; it may stay where CFI gives CFA=rsp+0 with
		 * the return address in a register (an epilogue that popped it, as in
		 * libgcc_s's _Unwind_RaiseException, or an aarch64 leaf's x30), once and to
		 * another pc */
		if (next->r[a->sp] < cur->r[a->sp] ||
		    (next->r[a->sp] == cur->r[a->sp] &&
		     (!(f || by_lr) || same_sp || next->r[a->ip] == pc))) {
			res->stop = UNWIND_BAD;
			break;
		}
		same_sp = next->r[a->sp] == cur->r[a->sp];
		t = cur;
		cur = next;
		next = t;
		tl = lz;
		lz = nlz;
		nlz = tl;
		/* a signal frame's pc is its restorer's, where no call was: exact, as is
		 * the next one, where the signal interrupted its frame */
		if (signal && res->n > 1 && res->nsignal < UNWIND_MAX_SIGNALS &&
		    (!res->nsignal || res->signal[res->nsignal - 1] != res->n - 1))
			res->signal[res->nsignal++] = (uint32_t)res->n - 1;
		first = signal;
	}
	return res->n;
}

size_t unwind_stack(const struct unwind_regs *regs, const uint8_t *stack, size_t size,
		    unwind_find_fn find, void *ctx, uint64_t *pcs, size_t cap,
		    struct unwind_result *res)
{
	return unwind_walk(regs, stack, size, find, ctx, pcs, cap, res, NULL);
}
