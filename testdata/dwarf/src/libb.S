/* spin_b: counts %rdi down with 4 KB of stack. Its CFI leaves the 4 KB out (CFA = rsp + 8 throughout): wrong on purpose */
	.text
	.globl spin_b
	.type spin_b, @function
spin_b:
	.cfi_startproc
	sub $4096, %rsp
1:	movq %rdi, (%rsp)
	dec %rdi
	jnz 1b
	add $4096, %rsp
	ret
	.cfi_endproc
	.size spin_b, .-spin_b
	.section .note.GNU-stack,"",@progbits
