/* Calls through function pointers (a table indexed at run time, plus a
 * pointer passed as an argument). */
#include <stdio.h>

/* expect: main 1 */
/* expect: op_add 40 */
/* expect: op_sub 30 */
/* expect: op_mul 20 */
/* expect: op_xor 10 */
/* expect: apply 100 */
/* expect: pick 100 */

typedef long (*op_fn)(long, long);

__attribute__((noipa)) long op_add(long a, long b) { return a + b; }
__attribute__((noipa)) long op_sub(long a, long b) { return a - b; }
__attribute__((noipa)) long op_mul(long a, long b) { return a * b; }
__attribute__((noipa)) long op_xor(long a, long b) { return a ^ b; }

static op_fn const table[4] = { op_add, op_sub, op_mul, op_xor };

/* i in 0..99: 0..39 -> add, 40..69 -> sub, 70..89 -> mul, 90..99 -> xor */
__attribute__((noipa)) op_fn pick(int i)
{
    int k = i < 40 ? 0 : i < 70 ? 1 : i < 90 ? 2 : 3;
    return table[k];
}

__attribute__((noipa)) long apply(op_fn f, long a, long b)
{
    long r = f(a, b);
    return r + 1;
}

int main(void)
{
    long acc = 7;
    for (int i = 0; i < 100; i++)
        acc = apply(pick(i), acc, i) & 0xffffff;
    printf("acc=%ld\n", acc);
    return 0;
}
