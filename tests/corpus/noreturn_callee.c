/* Calls that never return without the compiler knowing: stop() ends the
 * process from inside finish(), called from main.  The blocks that make
 * these calls run; the blocks after them, which only they lead to, never do,
 * so coverage must not take the first from the second (reloc_cover.c keeps a
 * probe on every block that ends in a call). */
#include <stdio.h>
#include <stdlib.h>

/* expect: main 1 */
/* expect: work 5 */
/* expect: finish 1 */
/* expect: stop 1 */

volatile int sink;

__attribute__((noipa)) void stop(int code) { fflush(stdout); exit(code); }

__attribute__((noipa)) int work(int i) { sink += i; return i * 2; }

__attribute__((noipa)) void finish(int total)
{
    if (total > 0) {
        printf("total=%d\n", total);
        stop(0);
        sink = total; /* never runs */
        printf("not reached\n");
    }
    printf("nothing to do\n");
}

int main(void)
{
    int total = 0;
    for (int i = 0; i < 5; i++)
        total += work(i);
    finish(total);
    return 1;
}
