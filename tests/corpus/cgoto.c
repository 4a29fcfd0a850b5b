/* Bytecode interpreters dispatching with computed gotos (GCC's labels as
 * values, as Lua 5.4 and CPython do): a read-only table holds the labels'
 * addresses, each handler ends with `jmp *%reg` after loading tab[op], and no
 * compare bounds the index (check: objdump -d).
 * run_masked(): tab has 8 entries and the opcode is masked (op & 7): at -O2
 *   `and $0x7,%eax`; in PIE code the table's address is loaded once into a
 *   register (lea tab(%rip),%r8) that every dispatch reads.
 * run_bytes(): tab has 256 entries and the opcode is a whole byte: the only
 *   bound is the zero-extension (movzbl).
 * run_words(): tab has 5 entries and the opcode is a 32-bit word nothing
 *   bounds (CPython's regex engine): in PIE code `mov (%r8,%rcx,8),%rcx; jmp
 *   *%rcx` through the base register, the table read to its first entry that
 *   is no code.
 * main runs each interpreter 3 times (100, 200, 300 opcodes). */
#include <stdio.h>

/* expect: main 1 */
/* expect: run_masked 3 */
/* expect: run_bytes 3 */
/* expect: run_words 3 */
/* expect: note 9 */

volatile long sink;
__attribute__((noipa)) void note(long acc) { sink += acc; }

__attribute__((noipa)) long run_masked(const unsigned char *code, long n)
{
    static void *const tab[8] = {&&op_add, &&op_sub, &&op_dbl, &&op_half,
                                 &&op_inc, &&op_dec, &&op_neg, &&op_tri};
    long acc = 0, pc = 0;
#define NEXT goto *tab[code[pc++] & 7]
    NEXT;
op_add:  acc += pc; if (pc >= n) goto done; NEXT;
op_sub:  acc -= 3; if (pc >= n) goto done; NEXT;
op_dbl:  acc *= 2; if (pc >= n) goto done; NEXT;
op_half: acc /= 2; if (pc >= n) goto done; NEXT;
op_inc:  acc++; if (pc >= n) goto done; NEXT;
op_dec:  acc--; if (pc >= n) goto done; NEXT;
op_neg:  acc = -acc; if (pc >= n) goto done; NEXT;
op_tri:  acc *= 3; if (pc >= n) goto done; NEXT;
done:
    note(acc);
    return acc;
#undef NEXT
}

#define ABC &&op_a, &&op_b, &&op_c
#define ABC4 ABC, ABC, ABC, ABC
#define ABC16 ABC4, ABC4, ABC4, ABC4

__attribute__((noipa)) long run_bytes(const unsigned char *code, long n)
{
    /* 255 = 3 * 85 entries cycling a, b, c, and a last one */
    static void *const tab[256] = {ABC16, ABC16, ABC16, ABC16, ABC16, ABC4, ABC, &&op_a};
    long acc = 0, pc = 0;
#define NEXT goto *tab[code[pc++]]
    NEXT;
op_a: acc += 5; if (pc >= n) goto done; NEXT;
op_b: acc ^= pc; if (pc >= n) goto done; NEXT;
op_c: acc -= 1; if (pc >= n) goto done; NEXT;
done:
    note(acc);
    return acc;
#undef NEXT
}

__attribute__((noipa)) long run_words(const unsigned *code, long n)
{
    static void *const tab[5] = {&&op_add, &&op_sub, &&op_dbl, &&op_half, &&op_inc};
    long acc = 0, pc = 0;
#define NEXT goto *tab[code[pc++]]
    NEXT;
op_add:  acc += pc; if (pc >= n) goto done; NEXT;
op_sub:  acc -= 3; if (pc >= n) goto done; NEXT;
op_dbl:  acc *= 2; if (pc >= n) goto done; NEXT;
op_half: acc /= 2; if (pc >= n) goto done; NEXT;
op_inc:  acc++; if (pc >= n) goto done; NEXT;
done:
    note(acc);
    return acc;
#undef NEXT
}

int main(void)
{
    unsigned char code[300];
    unsigned words[300];
    long a = 0;
    for (int k = 0; k < 300; k++) code[k] = (unsigned char)((k * 37 + 11) % 256);
    for (int k = 0; k < 300; k++) words[k] = (unsigned)(k * 7 + 3) % 5;
    for (int r = 1; r <= 3; r++) {
        a += run_masked(code, 100 * r);
        a += run_bytes(code, 100 * r);
        a += run_words(words, 100 * r);
    }
    printf("a=%ld sink=%ld\n", a, (long)sink);
    return 0;
}
