/* A callback called from libc: qsort's comparator.  The number of
 * comparisons depends on the libc's algorithm, so the program counts them
 * itself (by construction: one increment per entry) and prints
 * "cmp_calls=N"; the expect line refers to that value (@cmp_calls). */
#include <stdio.h>
#include <stdlib.h>

/* expect: main 1 */
/* expect: cmp_int @cmp_calls */
/* expect: fill 1 */

static long cmp_calls;

__attribute__((noipa)) int cmp_int(const void *a, const void *b)
{
    cmp_calls++;
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

__attribute__((noipa)) void fill(int *v, int n)
{
    unsigned s = 12345;
    for (int i = 0; i < n; i++) {
        s = s * 1103515245u + 12345u;
        v[i] = (int)((s >> 8) % 1000);
    }
}

int main(void)
{
    int v[200];
    fill(v, 200);
    qsort(v, 200, sizeof v[0], cmp_int);
    long sum = 0;
    for (int i = 0; i < 200; i++)
        sum = sum * 31 + v[i];
    printf("min=%d max=%d hash=%ld\n", v[0], v[199], sum);
    printf("cmp_calls=%ld\n", cmp_calls);
    return 0;
}
