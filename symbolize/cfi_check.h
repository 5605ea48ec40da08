/* cfi_check: a JIT function's .eh_frame read through before libdw is given it. */
#ifndef PERFCONV_CFI_CHECK_H
#define PERFCONV_CFI_CHECK_H

#include <stddef.h>
#include <stdint.h>

/*
 * Is data[0..size) a well-formed .eh_frame that libdw can be given: every CIE and FDE
 * within its bounds, known pointer encodings and augmentations, every call frame
 * instruction known, its operands within the entry, its registers plausible? 1 or 0.
 */
int cfi_eh_frame_ok(const uint8_t *data, size_t size);

#endif
