/* Recursion: fib(n) calls itself 2*F(n+1)-1 times in total.
 * fib(18): F(19) = 4181 -> 8361 calls.  The store to a volatile after the
 * second call keeps gcc from turning "a + fib(n-2)" into an accumulator loop. */
#include <stdio.h>

/* expect: main 1 */
/* expect: fib 8361 */
/* expect: show 3 */

volatile unsigned sink;

__attribute__((noipa)) unsigned fib(unsigned n)
{
    if (n < 2)
        return n;
    unsigned a = fib(n - 1);
    unsigned b = fib(n - 2);
    sink = b;
    return a + b;
}

__attribute__((noipa)) void show(const char *what, unsigned v)
{
    printf("%s = %u\n", what, v);
}

int main(void)
{
    unsigned r = fib(18);
    show("fib(18)", r);
    show("sink", sink);
    show("done", 1);
    return 0;
}
