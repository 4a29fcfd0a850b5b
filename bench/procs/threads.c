/* bench/procs/threads.c: the threaded workload of bench/procs.py threads.
 *     threads T N
 * T threads (pthreads) share N iterations of a hot loop; every iteration calls mid(), which calls
 * leaf() twice: 3*N calls of small functions in all, whatever T is, so the native CPU time stays
 * about the same for T = 1, 2, 4 and only the contention on the shared counters changes.
 * Prints a checksum (independent of T) and "leaf calls: 2N", the count lazyprobe must report. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NOIPA __attribute__((noipa))
NOIPA static unsigned long leaf(unsigned long x) { return (x * 2654435761u) ^ (x >> 7); }
NOIPA static unsigned long mid(unsigned long x) { return leaf(x) + leaf(x + 1); }

struct job {
    unsigned long from, to, sum;
    char pad[64];
};

static void *worker(void *arg)
{
    struct job *j = arg;
    unsigned long s = 0;
    for (unsigned long i = j->from; i < j->to; i++)
        s += mid(i);
    j->sum = s;
    return NULL;
}

int main(int argc, char **argv)
{
    int t = argc > 1 ? atoi(argv[1]) : 2;
    unsigned long n = argc > 2 ? strtoul(argv[2], NULL, 10) : 10000000;
    if (t < 1 || t > 64)
        return 2;
    pthread_t tid[64];
    struct job job[64];
    for (int i = 0; i < t; i++) {
        job[i].from = n * i / t;
        job[i].to = n * (i + 1) / t;
        if (pthread_create(&tid[i], NULL, worker, &job[i]) != 0)
            return 1;
    }
    unsigned long s = 0;
    for (int i = 0; i < t; i++) {
        pthread_join(tid[i], NULL);
        s += job[i].sum;
    }
    printf("threads: checksum=%lu leaf calls: %lu mid calls: %lu\n", s, 2 * n, n);
    return 0;
}
