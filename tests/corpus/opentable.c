/* A switch on a byte whose table only the byte bounds (gnulib's regex in
 * Debian's csplit and ptx; check: objdump -d): the default case is
 * unreachable, so gcc checks no bound, lays out 12 entries of offsets, and
 * reads the entry at the byte zero-extended (`movzbl; movslq (%rdx,%rax,4);
 * add; jmp *%rax`); next in .rodata lies kind_dispatch's table, whose offsets,
 * taken relative to the first table, land inside the code.
 * Input: tok_dispatch over tokens i % 12 for i = 0..599 (50 of each),
 * kind_dispatch over i % 7 for i = 0..349 (50 of each). */
#include <stdio.h>

/* expect: main 1 */
/* expect: tok_dispatch 600 */
/* expect: kind_dispatch 350 */
/* expect: tok_a 150 */
/* expect: tok_b 150 */
/* expect: tok_c 150 */
/* expect: tok_d 150 */
/* expect: kind_a 200 */
/* expect: kind_b 150 */

volatile long sink;
__attribute__((noipa)) long tok_a(long x, long k) { sink += k; return x + k; }
__attribute__((noipa)) long tok_b(long x, long k) { sink ^= k; return x - k; }
__attribute__((noipa)) long tok_c(long x, long k) { sink |= k; return x * k; }
__attribute__((noipa)) long tok_d(long x, long k) { sink &= k; return x ^ k; }
__attribute__((noipa)) long kind_a(long x) { sink += 1; return x + 1; }
__attribute__((noipa)) long kind_b(long x) { sink += 2; return x + 2; }

__attribute__((noipa)) long tok_dispatch(const unsigned char *t, long x)
{
    switch (*t) {
    case 0: return tok_a(x, 3) + 1;
    case 1: return tok_b(x, 5) + 2;
    case 2: return tok_c(x, 7) + 3;
    case 3: return tok_d(x, 11) + 4;
    case 4: return tok_a(x, 13) * 2;
    case 5: return tok_b(x, 17) * 3;
    case 6: return tok_c(x, 19) * 5;
    case 7: return tok_d(x, 23) * 7;
    case 8: return tok_a(x, 29) - 1;
    case 9: return tok_b(x, 31) - 2;
    case 10: return tok_c(x, 37) - 3;
    case 11: return tok_d(x, 41) - 4;
    default: __builtin_unreachable();
    }
}

__attribute__((noipa)) long kind_dispatch(const unsigned char *t, long x)
{
    switch (*t) {
    case 0: return kind_a(x) + 10;
    case 1: return kind_b(x) + 20;
    case 2: return kind_a(x) * 30;
    case 3: return kind_b(x) * 40;
    case 4: return kind_a(x) - 50;
    case 5: return kind_b(x) - 60;
    case 6: return kind_a(x) ^ 70;
    default: __builtin_unreachable();
    }
}

int main(void)
{
    long a = 0;
    for (int i = 0; i < 600; i++) {
        unsigned char t = (unsigned char)(i % 12);
        a += tok_dispatch(&t, i);
    }
    for (int i = 0; i < 350; i++) {
        unsigned char t = (unsigned char)(i % 7);
        a += kind_dispatch(&t, i);
    }
    printf("%ld %ld\n", a, sink);
    return 0;
}
