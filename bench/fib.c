/* Call-heavy C microbenchmark for bench/run.py.
 *
 *   fib N [ROUNDS]
 *
 * Two kernels, both dominated by calls to tiny functions of the main executable:
 *   - fib(N): naive recursive Fibonacci (~1.6^N calls of a 20-byte function);
 *   - sort: ROUNDS x qsort() of 4096 pseudo-random keys with a comparator of this executable,
 *     i.e. calls coming from libc through a function pointer, plus a small recursive tree walk.
 * Prints a checksum so that the native, gcov and lazyprobe runs can be compared.
 * Built -O2 (PIE); the functions are noinline so that the number of calls does not depend on
 * gcc's inlining decisions.
 */
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

NOINLINE static long fib(int n)
{
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

NOINLINE static int cmp_u32(const void *a, const void *b)
{
    unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
    return (x > y) - (x < y);
}

struct node { struct node *l, *r; unsigned v; };

NOINLINE static unsigned long walk(const struct node *t)
{
    if (!t)
        return 0;
    return t->v + 3 * walk(t->l) + walk(t->r);
}

NOINLINE static struct node *build(struct node *pool, int *next, int depth, unsigned seed)
{
    if (depth == 0)
        return NULL;
    struct node *n = &pool[(*next)++];
    n->v = seed * 2654435761u;
    n->l = build(pool, next, depth - 1, seed * 2 + 1);
    n->r = build(pool, next, depth - 1, seed * 2 + 2);
    return n;
}

NOINLINE static unsigned xorshift(unsigned *s)
{
    unsigned x = *s;
    x ^= x << 13; x ^= x >> 17; x ^= x << 5;
    return *s = x;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 35;
    int rounds = argc > 2 ? atoi(argv[2]) : 200;
    unsigned long sum = (unsigned long)fib(n);

    enum { N = 4096, DEPTH = 12 };
    static unsigned a[N];
    static struct node pool[1 << DEPTH];
    unsigned s = 12345;
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < N; i++)
            a[i] = xorshift(&s);
        qsort(a, N, sizeof a[0], cmp_u32);
        int next = 0;
        struct node *t = build(pool, &next, DEPTH, a[r % N]);
        sum = sum * 31 + a[N / 2] + walk(t);
    }
    printf("fib(%d)=%ld checksum=%lu\n", n, fib(n > 20 ? 20 : n), sum);
    return 0;
}
