/* Tiny functions: at -O2 zero() is "xor eax,eax; ret" (3 bytes), nothing()
 * is a lone "ret" (1 byte), one() is "mov eax,1; ret" (6 bytes).  They are
 * too small for an entry jump, so the tool may trap every call; counts
 * must still be exact.  Called back to back so the functions are adjacent. */
#include <stdio.h>

/* expect: main 1 */
/* expect: zero 300 */
/* expect: nothing 200 */
/* expect: one 100 */
/* expect: ident 150 */

__attribute__((noipa)) int zero(void) { return 0; }
__attribute__((noipa)) void nothing(void) { }
__attribute__((noipa)) int one(void) { return 1; }
__attribute__((noipa)) long ident(long x) { return x; }

int main(void)
{
    long s = 0;
    for (int i = 0; i < 100; i++) {
        s += zero() + one() + zero() + zero();
        nothing();
        nothing();
        if (i % 2 == 0)
            s += ident(i) + ident(i) + ident(i);
    }
    printf("s=%ld\n", s);
    return 0;
}
