/* A switch on a word that nothing bounds (gnulib's regex in Debian's
 * csplit, expr, nl and tac: a token type a callee wrote to the stack): the
 * default case is unreachable, so gcc checks no bound and reads the entry at
 * the index as it is (`mov (%rdi), %eax; movslq (%rdx,%rax,4), %rax; add;
 * jmp *%rax`, in the PIE builds; the non-PIE ones use `jmp *T(,%rax,8)`).
 * The copy keeps the entries that decode as code and compares the index with
 * their number first.  Input: word_dispatch over i % 9 for i = 0..899 (100
 * of each). */
#include <stdio.h>

/* expect: main 1 */
/* expect: word_dispatch 900 */
/* expect: tok_a 300 */
/* expect: tok_b 200 */
/* expect: tok_c 200 */
/* expect: tok_d 200 */

volatile long sink;
__attribute__((noipa)) long tok_a(long x, long k) { sink += k; return x + k; }
__attribute__((noipa)) long tok_b(long x, long k) { sink ^= k; return x - k; }
__attribute__((noipa)) long tok_c(long x, long k) { sink |= k; return x * k; }
__attribute__((noipa)) long tok_d(long x, long k) { sink &= k; return x ^ k; }

__attribute__((noipa)) long word_dispatch(const unsigned *t, long x)
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
    default: __builtin_unreachable();
    }
}

int main(void)
{
    long a = 0;
    for (unsigned i = 0; i < 900; i++) {
        unsigned t = i % 9;
        a += word_dispatch(&t, a & 0xffff);
    }
    printf("%ld %ld\n", a, sink);
    return 0;
}
