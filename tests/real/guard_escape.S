/* guard_escape.S — a jump table of offsets that nothing bounds, one of whose
 * entries the relocator cannot take for code (tests/real_tests.py,
 * tables/guard_escape).
 *
 * dispatch(i) reads its table at i with no compare before (gnulib's regex:
 * the default case unreachable).  Entry 2 jumps into the middle of case 0's
 * `mov $0x90c3c031, %eax`, whose immediate's bytes are `xor %eax, %eax; ret`:
 * decoding the entries in order, the relocator meets an instruction that
 * overlaps one decoded and keeps entries 0 and 1; the copy's guard sends
 * index 2 to the original load, where it runs natively.  dispatch(0) =
 * 0x90c3c031 + 7, dispatch(1) = 20 + 7 (the +7 in a block of its own after
 * the cases), dispatch(2) = 0. */
        .text

        .globl dispatch
        .type dispatch, @function
dispatch:
        .cfi_startproc
        mov %edi, %edi
        lea .Ltable(%rip), %rdx
        movslq (%rdx,%rdi,4), %rax
        add %rdx, %rax
        jmp *%rax
.Lcase0:
        mov $0x90c3c031, %eax
        jmp .Ladd
.Lcase1:
        mov $20, %eax
.Ladd:
        add $7, %eax
        ret
        .cfi_endproc
        .size dispatch, .-dispatch

        .section .rodata
        .p2align 2
.Ltable:
        .long .Lcase0 - .Ltable
        .long .Lcase1 - .Ltable
        .long .Lcase0 + 1 - .Ltable

        .section .note.GNU-stack, "", @progbits
