/* cold_side.S — a cold part entered only past its start, as gcc's hot parts
 * sometimes jump into the shared tail of their FUNC.cold (tests/real_tests.py,
 * cold/side_only; Debian's python3 has ~40 such parts).
 *
 * hot(x): x > 100 jumps into hot.cold past its start, where one block jumps
 * back; hot.cold's first bytes (a branch on x's sign) never run.  Its only
 * counted edge, the branch's, stays 0: the counts of hot.cold come from its
 * side entry alone.  hot(x) = 2x for x > 100, x + 1 otherwise. */
        .text

        .globl hot
        .type hot, @function
hot:
        .cfi_startproc
        push %rbx
        .cfi_def_cfa_offset 16
        .cfi_offset %rbx, -16
        mov %edi, %ebx
        cmp $100, %edi
        jg .Lside
        lea 1(%rbx), %eax
.Lback:
        pop %rbx
        .cfi_def_cfa_offset 8
        ret
        .cfi_endproc
        .size hot, .-hot

        .type hot.cold, @function
hot.cold:
        .cfi_startproc
        .cfi_def_cfa_offset 16
        .cfi_offset %rbx, -16
        test %ebx, %ebx
        js .Lnegative
        lea 3(%rbx), %eax
        jmp .Lback
.Lnegative:
        mov %ebx, %eax
        neg %eax
        jmp .Lback
.Lside:
        lea (%rbx,%rbx), %eax
        jmp .Lback
        .cfi_endproc
        .size hot.cold, .-hot.cold

        .section .note.GNU-stack, "", @progbits
