/* A non-zero exit status (exit(3) from inside a nested call). */
#include <stdio.h>
#include <stdlib.h>

/* expect: main 1 */
/* expect: work 5 */
/* expect: bail 1 */

__attribute__((noipa)) int work(int i) { return i * i; }

__attribute__((noipa)) void bail(int s)
{
    printf("bailing out with sum %d\n", s);
    exit(3);
}

int main(void)
{
    int s = 0;
    for (int i = 0; i < 5; i++)
        s += work(i);
    bail(s);
    puts("not reached");
    return 0;
}
