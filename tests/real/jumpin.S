/* jumpin.S — branches into the first bytes of another entry, as gcc's hot
 * parts do into their FUNC.cold parts (tests/real_tests.py, machine/jumpin).
 *
 * hot(x): x < 0 jumps 2 bytes into an unnamed part (an FDE of its own whose
 * frame is hot's: CFA rsp+16, rbx saved), x > 100 jumps to the part's start;
 * the part returns through hot's epilogue.  hot(200) = 402, hot(-1) = -2,
 * hot(5) = 6.
 * leaf(x) = x + 1, a called function; jumper() tail-jumps 2 bytes into leaf
 * with x = 41 and so returns 42 without entering leaf. */
        .text

        .globl hot
        .type hot, @function
hot:
        .cfi_startproc
        push %rbx
        .cfi_def_cfa_offset 16
        .cfi_offset %rbx, -16
        mov %edi, %ebx
        test %edi, %edi
        js .Lpart_inside
        cmp $100, %edi
        jg .Lpart
        lea 1(%rbx), %eax
.Lback:
        pop %rbx
        .cfi_def_cfa_offset 8
        ret
        .cfi_endproc
        .size hot, .-hot

/* The part: no symbol, an FDE that starts inside hot's frame. */
.Lpart:
        .cfi_startproc
        .cfi_def_cfa_offset 16
        .cfi_offset %rbx, -16
        inc %ebx                      /* 2 bytes */
.Lpart_inside:
        lea (%rbx,%rbx), %eax
        jmp .Lback
        .cfi_endproc

        .globl leaf
        .type leaf, @function
leaf:
        .cfi_startproc
        xor %eax, %eax                /* 2 bytes */
.Lleaf_inside:
        lea 1(%rdi), %eax
        ret
        .cfi_endproc
        .size leaf, .-leaf

        .globl jumper
        .type jumper, @function
jumper:
        .cfi_startproc
        mov $41, %edi
        jmp .Lleaf_inside
        .cfi_endproc
        .size jumper, .-jumper

        .section .note.GNU-stack, "", @progbits
