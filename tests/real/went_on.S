/* went_on.S — functions whose first call goes on without waiting for the
 * tracer, or must not (tests/real_tests.py, marked/went_on).
 *
 * sum3(a, b, c) = a + b + c: push rbx; mov rbx, rdi; lea: a window of 8 bytes
 * that may run elsewhere (x64_displace.h), as may late's.  loop_head(x, n) =
 * n * x: its loop's head lies 2 bytes past its entry, inside the bytes a jmp
 * there covers; its first call must wait (else the loop's first jump back
 * lands in the jmp: a crash).  zero() = 0, `xor eax, eax; ret`, 3 bytes: its
 * window ends with its ret, the jmp taking 2 bytes of the padding after it.
 * masked(x): bytes of an immediate that read as a branch into its window.
 * via_call(x): a window that ends with a call.
 * deref(p) = *p + 1 loads through p first: its
 * window may run elsewhere too, and deref(NULL) faults there.  never() is
 * never called. */
        .text

        .globl sum3
        .type sum3, @function
sum3:
        .cfi_startproc
        push %rbx
        .cfi_def_cfa_offset 16
        .cfi_offset %rbx, -16
        mov %rdi, %rbx
        lea (%rbx,%rsi), %rax
        add %rdx, %rax
        pop %rbx
        .cfi_def_cfa_offset 8
        ret
        .cfi_endproc
        .size sum3, .-sum3

        .globl loop_head
        .type loop_head, @function
loop_head:
        .cfi_startproc
        xor %eax, %eax
.Lagain:
        add %edi, %eax
        dec %esi
        jnz .Lagain
        ret
        .cfi_endproc
        .size loop_head, .-loop_head

        .globl late
        .type late, @function
late:
        .cfi_startproc
        push %rbp
        .cfi_def_cfa_offset 16
        .cfi_offset %rbp, -16
        mov %rdi, %rbp
        lea 7(%rbp), %rax
        pop %rbp
        .cfi_def_cfa_offset 8
        ret
        .cfi_endproc
        .size late, .-late

        .globl zero
        .type zero, @function
zero:
        .cfi_startproc
        xor %eax, %eax
        ret
        .cfi_endproc
        .size zero, .-zero
        .p2align 4              /* room for the entry's jmp: padding, not another function */

/* masked(x) = x + 0xfc75: the bytes 75 fc of its immediate, 6 bytes past
 * its entry, read as `jnz -4`, which would land inside the entry's jmp; they
 * are part of an instruction run from the entry, no branch: its first call
 * goes on. */
        .globl masked
        .type masked, @function
masked:
        .cfi_startproc
        mov %rdi, %rax
        nop
        nop
        mov $0xfc75, %ecx
        add %rcx, %rax
        ret
        .cfi_endproc
        .size masked, .-masked

/* via_call(x) = where_from(x) + 1: its window ends with the call (push rbx;
 * call: 6 bytes), whose copy pushes the address after the call at home:
 * where_from (went_on_main.c) sees its return address inside via_call, as
 * natively (in a copy of the call it would be in the arena). */
        .globl via_call
        .type via_call, @function
via_call:
        .cfi_startproc
        push %rbx
        .cfi_def_cfa_offset 16
        .cfi_offset %rbx, -16
        call where_from
        add $1, %rax
        pop %rbx
        .cfi_def_cfa_offset 8
        ret
        .cfi_endproc
        .size via_call, .-via_call

        .globl deref
        .type deref, @function
deref:
        .cfi_startproc
        mov (%rdi), %rax
        add $1, %rax
        ret
        .cfi_endproc
        .size deref, .-deref

        .globl never
        .type never, @function
never:
        .cfi_startproc
        push %rbx
        .cfi_def_cfa_offset 16
        .cfi_offset %rbx, -16
        mov %rdi, %rbx
        lea 1(%rbx), %rax
        pop %rbx
        .cfi_def_cfa_offset 8
        ret
        .cfi_endproc
        .size never, .-never

        .section .note.GNU-stack,"",@progbits
