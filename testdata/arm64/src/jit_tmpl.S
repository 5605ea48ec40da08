/* jit_tmpl.S: jitprog's JIT function (src/jitprog.c) with its CFI, for gdb: make-arm64.py
 * links it at the address the copy runs at and gives it to gdb (add-symbol-file), so that
 * gdb's backtraces, the truth of jit.data, step through the JIT frame by this CFI. The
 * instructions are jitprog.c's (make-arm64.py checks the bytes). */
	.cfi_sections .eh_frame, .debug_frame
	.text
	.globl jit_loop
	.type jit_loop, %function
jit_loop:
	.cfi_startproc
	sub sp, sp, #48
	.cfi_def_cfa_offset 48
	stp x19, x30, [sp, #16]
	.cfi_offset 19, -32
	.cfi_offset 30, -24
	stp x20, x21, [sp, #32]
	.cfi_offset 20, -16
	.cfi_offset 21, -8
	mov x19, x0
	mov x20, x1
	mov x21, #0
1:	cbz x20, 2f
	mov x0, x20
	blr x19
	add x21, x21, x0
	sub x20, x20, #1
	b 1b
2:	mov x0, x21
	ldp x20, x21, [sp, #32]
	.cfi_restore 20
	.cfi_restore 21
	ldp x19, x30, [sp, #16]
	.cfi_restore 19
	.cfi_restore 30
	add sp, sp, #48
	.cfi_def_cfa_offset 0
	ret
	.cfi_endproc
	.size jit_loop, .-jit_loop
