/* spin_a: counts %rdi down with 4 KB of stack. Its CFI says so */
	.text
	.globl spin_a
	.type spin_a, @function
spin_a:
	.cfi_startproc
	sub $4096, %rsp
	.cfi_def_cfa_offset 4104
1:	movq %rdi, (%rsp)
	dec %rdi
	jnz 1b
	add $4096, %rsp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size spin_a, .-spin_a
	.section .note.GNU-stack,"",@progbits
