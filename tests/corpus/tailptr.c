/* Indirect jumps the relocator cannot follow, and which of them matter.
 * via_pointer(): a tail call through a function pointer in a struct: at
 *   -O2/-O3 `mov (%rbx),%rax; pop %rbx; jmp *%rax`, with its frame gone (CFA =
 *   rsp + 8): control goes to another function's entry, so nothing of
 *   via_pointer is left unmeasured.
 * via_offset(): the same through a pointer at a byte offset from an object
 *   (CPython's vectorcall: `mov (%rbx,%rbp,1),%rax; pop ...; jmp *%rax`), an
 *   indexed load that is no jump table (scale 1): a tail call as well.
 * via_default(): a tail call through a struct's pointer or, when it is
 *   NULL, a default (CPython's object_str: `lea fallback(%rip),%rdx; mov
 *   (%rax),%rax; test %rax,%rax; cmove %rdx,%rax; jmp *%rax` in PIE builds):
 *   a tail call too.
 * via_choice(): a tail call to one of two functions (OpenSSL's BN_nnmod in
 *   Debian's node: `lea twice(%rip),%rdx; ...; lea thrice(%rip),%rax; cmovne
 *   %rdx,%rax; jmp *%rax`): a tail call too.
 * via_table(): a tail call through a table of function pointers (perl's
 *   PL_check: `mov (%rdx,%rax,8),%rax; pop ...; jmp *%rax`; gcc puts this one,
 *   never written, in .data.rel.ro): its first entry, in the file, is another
 *   function's entry: a tail call too.
 * writable_dispatch(): computed gotos through a table in writable memory
 *   (filled on the first call): its entries may change, so the table is not
 *   read and the copy is left at the dispatch: the rest of the function runs
 *   in the original body, unmeasured, and the coverage collector says so.
 * main: via_pointer and via_offset 50 times each (twice and thrice alternately),
 * via_default 20 times (thrice and fallback alternately), via_choice 20 times
 * (thrice and twice alternately), via_table 30 times
 * (helper, twice, thrice in turn), writable_dispatch once. */
#include <stdio.h>

/* expect: main 1 */
/* expect: via_pointer 50 */
/* expect: via_offset 50 */
/* expect: via_table 30 */
/* expect: helper 140 */
/* expect: twice 70 */
/* expect: thrice 80 */
/* expect: via_choice 20 */
/* expect: via_default 20 */
/* expect: fallback 10 */
/* expect: writable_dispatch 1 */

volatile long sink;
struct ops { long (*fn)(long); };

__attribute__((noipa)) long helper(long x) { sink += x; return x + 1; }
__attribute__((noipa)) long twice(long x) { sink ^= x; return 2 * x; }
__attribute__((noipa)) long thrice(long x) { sink |= x; return 3 * x; }

__attribute__((noipa)) long via_pointer(const struct ops *o, long x)
{
    long y = helper(x);
    return o->fn(y);
}

__attribute__((noipa)) long via_offset(const char *obj, long off, long x)
{
    long y = helper(x);
    long (*fn)(long) = *(long (*const *)(long))(obj + off);
    return fn(y);
}

static __attribute__((noinline)) long fallback(long x) { sink += x; return x; }

__attribute__((noipa)) long via_default(const struct ops *o, long x)
{
    long (*fn)(long) = o->fn;
    return (fn ? fn : fallback)(x);
}

__attribute__((noipa)) long via_choice(long i, long x)
{
    long y = x + 1;
    return (i & 1 ? twice : thrice)(y);
}

static long (*table[3])(long) = {helper, twice, thrice};

__attribute__((noipa)) long via_table(long i, long x)
{
    long y = helper(x);
    return table[i % 3](y);
}

__attribute__((noipa)) long writable_dispatch(const unsigned char *code, long n)
{
    static void *tab[4];
    long acc = 0, pc = 0;
    if (!tab[0]) {
        tab[0] = &&op_a;
        tab[1] = &&op_b;
        tab[2] = &&op_c;
        tab[3] = &&op_d;
    }
#define NEXT goto *tab[code[pc++] & 3]
    NEXT;
op_a: acc += 5; if (pc >= n) goto done; NEXT;
op_b: acc ^= pc; if (pc >= n) goto done; NEXT;
op_c: acc -= 1; if (pc >= n) goto done; NEXT;
op_d: acc *= 3; if (pc >= n) goto done; NEXT;
done:
    return acc;
#undef NEXT
}

int main(void)
{
    static const struct ops two = {twice}, three = {thrice};
    unsigned char code[64];
    long a = 0;
    for (int k = 0; k < 64; k++) code[k] = (unsigned char)(k * 7 + 3);
    for (long i = 0; i < 50; i++) a += via_pointer(i % 2 ? &three : &two, i);
    for (long i = 0; i < 50; i++) a += via_offset((const char *)(i % 2 ? &three : &two), 0, i);
    static const struct ops none = {0};
    for (long i = 0; i < 20; i++) a += via_default(i % 2 ? &three : &none, i);
    for (long i = 0; i < 20; i++) a += via_choice(i, i);
    for (long i = 0; i < 30; i++) a += via_table(i, i);
    a += writable_dispatch(code, 64);
    printf("a=%ld sink=%ld\n", a, (long)sink);
    return 0;
}
