/* cfi_check: a JIT function's .eh_frame read through before libdw is given it.
 *
 * Spec: the LSB's "Exception Frames" (.eh_frame: CIEs, FDEs, pointer encodings) and
 * DWARF 5's call frame instructions (section 6.4.2). A runtime writes this CFI into
 * its jitdump (UNWINDING_INFO); crafted or damaged bytes once made libdw allocate
 * gigabytes, so every length, encoding and instruction is checked here first.
 */
#include "symbolize/cfi_check.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#include "common/bytes.h"
#include "common/util.h"

/* Register numbers a CFI program of JIT code may name, at most (x86-64 has 67). */
#define CFI_REG_MAX 127

/* A ULEB128 or SLEB128 at *p, no further than `end`; 0 when it runs past it. */
static int leb(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	uint64_t x = 0;
	unsigned shift = 0;

	while (*p < end) {
		uint8_t b = *(*p)++;

		if (shift < 64)
			x |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			*v = x;
			return 1;
		}
	}
	return 0;
}

/* The size of a pointer in DW_EH_PE encoding `enc`: 0 for a LEB128, -1 when unknown. */
static int enc_size(uint8_t enc)
{
	switch (enc & 0x0f) {
	case 0x00: case 0x04: case 0x0c: return 8;
	case 0x02: case 0x0a: return 2;
	case 0x03: case 0x0b: return 4;
	case 0x01: case 0x09: return 0;
	default: return -1;
	}
}

/* Skip an encoded pointer; 0 when it runs past `end` or the encoding is unknown. */
static int skip_ptr(const uint8_t **p, const uint8_t *end, uint8_t enc)
{
	int n = enc_size(enc);
	uint64_t v;

	if (n < 0)
		return 0;
	if (n == 0)
		return leb(p, end, &v);
	if ((size_t)(end - *p) < (size_t)n)
		return 0;
	*p += n;
	return 1;
}

/*
 * A CIE's or FDE's call frame instructions, checked before libdw runs them: every
 * opcode known, every operand inside the record, every register number small. libdw
 * sizes its register table by the largest register a program names, so one crafted
 * number asks it for gigabytes (found by fuzzing the JIT path).
 */
static int cfa_program_ok(const uint8_t *p, const uint8_t *end, uint8_t fde_enc)
{
	uint64_t a, b;

	while (p < end) {
		uint8_t op = *p++;

		switch (op >> 6) {
		case 1: /* advance_loc */
			continue;
		case 2: /* offset: register in the low bits */
			if (!leb(&p, end, &a))
				return 0;
			continue;
		case 3: /* restore */
			continue;
		}
		switch (op) {
		case DW_CFA_nop: case DW_CFA_remember_state: case DW_CFA_restore_state:
		case DW_CFA_GNU_window_save:
			break;
		case DW_CFA_set_loc:
			if (!skip_ptr(&p, end, fde_enc))
				return 0;
			break;
		case DW_CFA_advance_loc1: case DW_CFA_advance_loc2: case DW_CFA_advance_loc4: {
			size_t n = op == DW_CFA_advance_loc1 ? 1 : op == DW_CFA_advance_loc2 ? 2 : 4;

			if ((size_t)(end - p) < n)
				return 0;
			p += n;
			break;
		}
		case DW_CFA_def_cfa_offset: case DW_CFA_def_cfa_offset_sf:
		case DW_CFA_GNU_args_size:
			if (!leb(&p, end, &a))
				return 0;
			break;
		case DW_CFA_restore_extended: case DW_CFA_undefined: case DW_CFA_same_value:
		case DW_CFA_def_cfa_register:
			if (!leb(&p, end, &a) || a > CFI_REG_MAX)
				return 0;
			break;
		case DW_CFA_offset_extended: case DW_CFA_offset_extended_sf: case DW_CFA_def_cfa:
		case DW_CFA_def_cfa_sf: case DW_CFA_val_offset: case DW_CFA_val_offset_sf:
		case DW_CFA_GNU_negative_offset_extended:
			if (!leb(&p, end, &a) || a > CFI_REG_MAX || !leb(&p, end, &b))
				return 0;
			break;
		case DW_CFA_register:
			if (!leb(&p, end, &a) || a > CFI_REG_MAX || !leb(&p, end, &b) ||
			    b > CFI_REG_MAX)
				return 0;
			break;
		case DW_CFA_def_cfa_expression:
			if (!leb(&p, end, &b) || b > (uint64_t)(end - p))
				return 0;
			p += b;
			break;
		case DW_CFA_expression: case DW_CFA_val_expression:
			if (!leb(&p, end, &a) || a > CFI_REG_MAX || !leb(&p, end, &b) ||
			    b > (uint64_t)(end - p))
				return 0;
			p += b;
			break;
		default:
			return 0;
		}
	}
	return 1;
}

/* A CIE as its FDEs need it. */
struct cie_info {
	uint64_t off;
	uint8_t fde_enc;
	int z;
};

/*
 * File format (.eh_frame, LSB 64-bit, as runtimes write it): records of u32 length
 * (0 ends), u32 id (0: a CIE; else the distance back to its CIE), then a CIE's
 * version, augmentation string, code and data alignment, return address register
 * and augmentation data ('z': its length first; 'R' the FDEs' pointer encoding),
 * or an FDE's initial location and range (in that encoding) and augmentation data;
 * then call frame instructions to the record's end. 1 when every record is well
 * formed and cfa_program_ok.
 */
int cfi_eh_frame_ok(const uint8_t *data, size_t size)
{
	struct cie_info *cies = NULL;
	size_t ncies = 0, cap = 0, off = 0;
	int ok = 0;

	while (off + 4 <= size) {
		uint32_t len = ld32(data + off, 0), id;
		const uint8_t *p, *end;

		if (len == 0)
			break;
		if (len == 0xffffffffu || len < 4 || len > size - off - 4)
			goto out;
		p = data + off + 8;
		end = data + off + 4 + len;
		id = ld32(data + off + 4, 0);
		if (id == 0) {
			struct cie_info c = { off, 0, 0 };
			const char *aug;
			uint64_t v, auglen = 0;
			uint8_t version;
			const uint8_t *ad;

			if (p >= end)
				goto out;
			version = *p++;
			aug = (const char *)p;
			while (p < end && *p)
				p++;
			if (p >= end || (version != 1 && version != 3))
				goto out;
			p++;
			if (!leb(&p, end, &v) || !leb(&p, end, &v))
				goto out;
			if (version == 1) {
				if (p >= end || *p++ > CFI_REG_MAX)
					goto out;
			} else if (!leb(&p, end, &v) || v > CFI_REG_MAX) {
				goto out;
			}
			c.z = aug[0] == 'z';
			if (c.z && (!leb(&p, end, &auglen) || auglen > (uint64_t)(end - p)))
				goto out;
			ad = p;
			for (const char *a = aug + c.z; c.z && *a; a++) {
				if (*a == 'R' || *a == 'L') {
					if (ad >= p + auglen)
						goto out;
					if (*a == 'R')
						c.fde_enc = *ad;
					ad++;
				} else if (*a == 'P') {
					uint8_t enc;

					if (ad >= p + auglen)
						goto out;
					enc = *ad++;
					if (!skip_ptr(&ad, p + auglen, enc))
						goto out;
				} else if (*a != 'S') {
					goto out;
				}
			}
			if (!c.z && aug[0])
				goto out;
			p += auglen;
			if (enc_size(c.fde_enc) < 0 || !cfa_program_ok(p, end, c.fde_enc))
				goto out;
			VEC_PUSH(cies, ncies, cap, c);
		} else {
			const struct cie_info *c = NULL;
			uint64_t cie_off = off + 4 >= id ? off + 4 - id : UINT64_MAX, auglen;

			for (size_t i = 0; i < ncies; i++)
				if (cies[i].off == cie_off)
					c = &cies[i];
			if (!c || !skip_ptr(&p, end, c->fde_enc) || !skip_ptr(&p, end, c->fde_enc & 0x0f))
				goto out;
			if (c->z && (!leb(&p, end, &auglen) || auglen > (uint64_t)(end - p)))
				goto out;
			if (c->z)
				p += auglen;
			if (!cfa_program_ok(p, end, c->fde_enc))
				goto out;
		}
		off += 4 + (size_t)len;
	}
	ok = 1;
out:
	free(cies);
	return ok;
}

