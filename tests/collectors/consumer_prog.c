/* consumer_prog.c — the program tests/collectors/consumers.sh builds, runs
 * under callgrind to make a run table, and feeds through the writers: loops,
 * a conditional chain, a dense switch (jump table), recursion, a static
 * function, a libc callback (qsort) and a function that never runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int __attribute__((noinline)) classify(int c)
{
    if (c >= 'a' && c <= 'z')
        return 1;
    if (c >= '0' && c <= '9')
        return 2;
    return 0;
}

static int __attribute__((noinline)) fib(int n)
{
    if (n < 2)
        return n;
    return fib(n - 1) + fib(n - 2);
}

int __attribute__((noinline)) dispatch(int k, int x)
{
    switch (k) {
    case 0: return x + 1;
    case 1: return x * 3;
    case 2: return x - 7;
    case 3: return x ^ 0x55;
    case 4: return x << 2;
    case 5: return x >> 1;
    case 6: return x | 9;
    default: return -x;
    }
}

static int cmp(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int __attribute__((noinline)) never_called(int x)
{
    if (x > 3)
        return x * 2;
    return x;
}

int main(int argc, char **argv)
{
    const char *text = "hello world 123 lazy probe 42";
    int counts[3] = {0, 0, 0};
    for (const char *p = text; *p; p++)
        counts[classify(*p)]++;
    int acc = 0;
    for (int i = 0; i < 100; i++)
        acc += dispatch(i % 9, i);
    int v[64];
    for (int i = 0; i < 64; i++)
        v[i] = (i * 37) % 64;
    qsort(v, 64, sizeof v[0], cmp);
    if (argc > 5)
        acc += never_called(argc);
    printf("%d %d %d %d %d %d\n", counts[0], counts[1], counts[2], acc, fib(15), v[10]);
    return 0;
}
