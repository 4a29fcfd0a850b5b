/* One source line in two functions: pick() is inlined into both even_sum()
 * and odd_sum(), so the lines of pick belong to both (a report adds their
 * counts up) and the branch on the @pick line is a branch point of each
 * (lcov numbers them block 0 and block 1 of that line).
 *
 * even_sum(1000) calls pick for i = 0, 2, ..., 998 (500 values), 167 of them
 * multiples of 3 (multiples of 6); odd_sum(1000) for i = 1, 3, ..., 999
 * (500 values), 167 of them multiples of 3.  hit() and miss() keep the
 * branch a branch (no cmov) at every -O level.  pick's lines are in
 * a_pick.h, and main calls it once too (hit: 335): main, the first function
 * a report meets, has rows of two files, its first row (its entry) in the
 * one that sorts last. */
#include <stdio.h>

/* expect: main 1 */
/* expect: even_sum 1 */
/* expect: odd_sum 1 */
/* expect: hit 335 */
/* expect: miss 666 */

volatile long sink;

__attribute__((noipa)) void hit(long i) { sink += i; }
__attribute__((noipa)) void miss(long i) { sink -= i; }

#include "a_pick.h" /* pick(), whose lines are in a file that sorts before this one */

__attribute__((noipa)) void even_sum(long n)
{
    for (long i = 0; i < n; i += 2)
        pick(i);
}

__attribute__((noipa)) void odd_sum(long n)
{
    for (long i = 1; i < n; i += 2)
        pick(i);
}

int main(void)
{
    pick(3); /* the first function has rows of both files */
    even_sum(1000);
    odd_sum(1000);
    printf("sink = %ld\n", (long)sink);
    return 0;
}
