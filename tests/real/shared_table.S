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

/* stepper(n, tail): the same table's shape with its lea above a loop (in a
 * block of its own: its jmp is the loop's only way in until the cases are
 * decoded), and rbx written again on the way out; it ends in a tail call
 * through a register once its frame is gone (rustup's toml_parser
 * on_scalar, through a vtable).  From case n it runs the cases n..2
 * (case k adds 10^k) and returns tail(sum). */
        .globl stepper
        .type stepper, @function
stepper:
        .cfi_startproc
        push %rbx
        .cfi_def_cfa_offset 16
        .cfi_offset %rbx, -16
        lea .Lsteps(%rip), %rbx
        xor %eax, %eax
        jmp .Lloop
.Lstep0:
        add $1, %eax
        mov $1, %edi
.Lloop:
        cmp $2, %edi
        ja .Lout
        mov %edi, %ecx
        movslq (%rbx,%rcx,4), %rcx
        add %rbx, %rcx
        jmp *%rcx
.Lstep1:
        add $10, %eax
        mov $2, %edi
        jmp .Lloop
.Lstep2:
        add $100, %eax
        mov $3, %edi
        jmp .Lloop
.Lout:
        mov %rsi, %rbx
        mov %eax, %edi
        mov %rbx, %rax
        pop %rbx
        .cfi_def_cfa_offset 8
        jmp *%rax
        .cfi_endproc
        .size stepper, .-stepper

        .section .rodata
        .p2align 2
.Lsteps:
        .long .Lstep0 - .Lsteps
        .long .Lstep1 - .Lsteps
        .long .Lstep2 - .Lsteps
.Ltable:
        .long .Lcase0 - .Ltable
        .long .Lcase1 - .Ltable
        .long .Lcase2 - .Ltable
        .long .Lcase3 - .Ltable

        .section .note.GNU-stack, "", @progbits
