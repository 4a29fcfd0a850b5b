/* A function and a part of it named as gcc names a cold part (hotfn,
 * hotfn.cold: core/module.c links them), whose bytes after its ret are data
 * that a linear decode reads as "jmp hotfn+2", into hotfn's first
 * instruction.  lazyprobe takes the places one part jumps to in the other
 * for side entries of its copy (core/breaks.c, "a function's other part"):
 * this one would make hotfn's plan fail (overlapping instructions), so hotfn
 * must be planned without it and still be relocated and counted
 * (tests/real_tests.py, machine/coldpart/bogus). */
        .text
        .globl  hotfn
        .type   hotfn, @function
hotfn:
        movl    $0x12345678, %eax
        addl    %edi, %eax
        ret
        .size   hotfn, .-hotfn

        .type   hotfn.cold, @function
hotfn.cold:
        ret
        .byte   0xe9
        .long   hotfn + 2 - (. + 4)
        .size   hotfn.cold, .-hotfn.cold
        .section .note.GNU-stack,"",@progbits
