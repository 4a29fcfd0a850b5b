/* Tail calls between distinct functions: at -O2/-O3 step_a ends in
 * "jmp step_b", step_b in "jmp step_c" (check: objdump -d). Every entry counts
 * as a call.  drive() calls step_a 100 times; the chain a->b->c->leaf is
 * entered once per step_a; step_b is also called directly 10 times. */
#include <stdio.h>

/* expect: main 1 */
/* expect: drive 1 */
/* expect: step_a 100 */
/* expect: step_b 110 */
/* expect: step_c 110 */
/* expect: leaf 110 */

volatile long total;

__attribute__((noipa)) long leaf(long x) { total += x; return x * 3; }
__attribute__((noipa)) long step_c(long x) { return leaf(x + 1); }
__attribute__((noipa)) long step_b(long x) { return step_c(x ^ 5); }
__attribute__((noipa)) long step_a(long x) { return step_b(x * 2); }

__attribute__((noipa)) long drive(void)
{
    long s = 0;
    for (long i = 0; i < 100; i++)
        s += step_a(i);
    for (long i = 0; i < 10; i++)
        s += step_b(i);
    return s;
}

int main(void)
{
    long s = drive();
    printf("sum=%ld total=%ld\n", s, (long)total);
    return 0;
}
