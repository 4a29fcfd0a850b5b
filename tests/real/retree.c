/* Hot functions whose static arc estimate is wrong, run long enough for
 * lazyprobe to re-place their arcs on their own counts (core/breaks.c), by
 * T threads at once (argv[1], default 2) while the second copies go in.
 *
 * pick(i): "__builtin_expect(..., 0)" tells gcc the likely way is the rare
 * one, so gcc lays the hot call out of line, behind a taken jump, and the
 * estimate (the fall-through more likely) leaves the hot edge off the tree:
 * counted on every call.  Each thread runs i = 0 .. ROUNDS - 1 (argv[2],
 * default 2^21, a multiple of 64): pick and scan run T * ROUNDS times, often() (i % 64 != 0)
 * T * ROUNDS * 63 / 64 times, seldom() T * ROUNDS / 64, work T times; the
 * branch on the @often line goes one way T * ROUNDS * 63 / 64 times and the
 * other T * ROUNDS / 64 (tests/real_tests.py, test_retree).  With argv[3]
 * "fork" a child forked first does the same: every count twice, in two
 * counters files.
 *
 * For coverage (test_strip): last() runs T * ROUNDS times and calls late() on
 * each thread's last round only (T times), long after last's first copy was
 * replaced by one without the probes that had run: the @late line runs, the
 * @never line does not. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_THREADS 8
#define BLOCK 16

long sink;

__attribute__((noipa)) void often(long i) { __atomic_fetch_add(&sink, i & 7, __ATOMIC_RELAXED); }
__attribute__((noipa)) void seldom(long i) { __atomic_fetch_add(&sink, 1000, __ATOMIC_RELAXED); }

__attribute__((noipa)) void pick(long i) {
  if (__builtin_expect(i % 64 != 0, 0)) /* @often */
    often(i);
  else
    seldom(i);
}

static long rounds = 1L << 21;
volatile int never;

__attribute__((noipa)) void late(long i) { __atomic_fetch_add(&sink, i, __ATOMIC_RELAXED); }
__attribute__((noipa)) void nothing(void) { sink = 0; }

__attribute__((noipa)) void last(long i) {
  if (__builtin_expect(i == rounds - 1, 0))
    late(i); /* @late */
  if (never)
    nothing(); /* @never */
}

__attribute__((noipa)) long scan(const long *v) {
  long acc = 0;
  for (long k = 0; __builtin_expect(k < BLOCK, 0); k++) acc += v[k] & 1 ? v[k] : -v[k];
  return acc;
}

__attribute__((noipa)) void *work(void *arg) {
  long id = (long)arg, v[BLOCK], acc = 0;
  for (long k = 0; k < BLOCK; k++) v[k] = k * 7 + id;
  for (long i = 0; i < rounds; i++) {
    pick(i);
    last(i);
    acc += scan(v);
  }
  return (void *)acc;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 2;
  if (argc > 2) rounds = atol(argv[2]);
  if (threads < 1 || threads > MAX_THREADS || rounds < 64 || rounds % 64) return 2;
  pid_t child = argc > 3 && !strcmp(argv[3], "fork") ? fork() : -1;
  pthread_t t[MAX_THREADS];
  for (long k = 0; k < threads; k++)
    if (pthread_create(&t[k], NULL, work, (void *)k)) return 1;
  long total = 0;
  for (long k = 0; k < threads; k++) {
    void *r;
    pthread_join(t[k], &r);
    total += (long)r;
  }
  if (child > 0 && waitpid(child, NULL, 0) != child) return 1; /* the child's line first */
  printf("%s %ld %ld\n", child == 0 ? "child" : "main", total, sink);
  return 0;
}
