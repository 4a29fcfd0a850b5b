/* shared_table.S — one table of offsets read by two dispatches, its lea
 * above both (tests/real_tests.py, tables/shared_table).
 *
 * The shape of Rust's std::sync::Once::call (rustup, cargo): the base
 * register is loaded once, a first dispatch reads the table at a & 3, and
 * case 0 dispatches again through the same table at (b + 1) & 3.
 * step(a, b) returns 100 + the case the last dispatch chose: under arcs each
 * dispatch needs a table of its own (its entries lead to its own edges'
 * stubs) that the add after its load still counts from the base register. */
        .text

        .globl step
        .type step, @function
step:
        .cfi_startproc
        push %r15
        .cfi_def_cfa_offset 16
        .cfi_offset %r15, -16
        lea .Ltable(%rip), %r15
        mov %edi, %edx
        and $3, %edx
        movslq (%r15,%rdx,4), %rdx
        add %r15, %rdx
        jmp *%rdx
.Lcase0:
        add $1, %esi
        mov %esi, %eax
        and $3, %eax
        movslq (%r15,%rax,4), %rax
        add %r15, %rax
        jmp *%rax
.Lcase1:
        mov $101, %eax
        pop %r15
        .cfi_remember_state
        .cfi_def_cfa_offset 8
        ret
.Lcase2:
        .cfi_restore_state
        mov $102, %eax
        pop %r15
        .cfi_remember_state
        .cfi_def_cfa_offset 8
        ret
.Lcase3:
        .cfi_restore_state
        mov $103, %eax
        pop %r15
        .cfi_def_cfa_offset 8
        ret
        .cfi_endproc
        .size step, .-step

        .section .rodata
        .p2align 2
.Ltable:
        .long .Lcase0 - .Ltable
        .long .Lcase1 - .Ltable
        .long .Lcase2 - .Ltable
        .long .Lcase3 - .Ltable

        .section .note.GNU-stack, "", @progbits
