/* Threads stress: THREADS threads, released together by a barrier, each call
 * all NFUNCS distinct functions (made by a macro) ROUNDS times.  In round 0
 * every call is a first call of some function by some thread while the others
 * make theirs: threads 2k and 2k+1 walk the table from the same offset, so
 * pairs race on the very same first call, the pairs on different functions.
 * Every function returns a value the thread sums; the program prints the total,
 * which does not depend on the order of the calls.  Arguments: [ROUNDS
 * [PAUSE_US]] (default 3, 0): PAUSE_US is slept before each round (to outlive
 * several coverage sweeps).
 * Counts by construction: every f_NNNN runs THREADS * ROUNDS times, worker
 * THREADS times, round_sum THREADS * ROUNDS times, main once. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define THREADS 8
#define NFUNCS 2000

#define F(a, b, c, d)                                                      \
  __attribute__((noipa)) long f_##a##b##c##d(long x) {                   \
    long k = a * 1000 + b * 100 + c * 10 + d;                            \
    return (x ^ k) * 3 + (x >> (k & 7)) - (k % 13 == 0 ? 7 : 0);          \
  }
#define D(a, b, c) F(a, b, c, 0) F(a, b, c, 1) F(a, b, c, 2) F(a, b, c, 3) F(a, b, c, 4) \
  F(a, b, c, 5) F(a, b, c, 6) F(a, b, c, 7) F(a, b, c, 8) F(a, b, c, 9)
#define C(a, b) D(a, b, 0) D(a, b, 1) D(a, b, 2) D(a, b, 3) D(a, b, 4) D(a, b, 5) D(a, b, 6) \
  D(a, b, 7) D(a, b, 8) D(a, b, 9)
#define B(a) C(a, 0) C(a, 1) C(a, 2) C(a, 3) C(a, 4) C(a, 5) C(a, 6) C(a, 7) C(a, 8) C(a, 9)
B(0) B(1)

#undef F
#define F(a, b, c, d) f_##a##b##c##d,
static long (*const table[NFUNCS])(long) = {B(0) B(1)};

static pthread_barrier_t barrier;
static int rounds = 3, pause_us;

__attribute__((noipa)) long round_sum(long id, long offset) {
  long s = 0;
  for (long i = 0; i < NFUNCS; i++) s += table[(offset + i) % NFUNCS](id + i);
  return s;
}

__attribute__((noipa)) void *worker(void *arg) {
  long id = (long)arg, offset = (id / 2) * (NFUNCS / (THREADS / 2)), s = 0;
  for (int r = 0; r < rounds; r++) {
    if (pause_us) usleep(pause_us);
    pthread_barrier_wait(&barrier);
    s += round_sum(id * 7 + r, offset);
  }
  return (void *)s;
}

int main(int argc, char **argv) {
  if (argc > 1) rounds = atoi(argv[1]);
  if (argc > 2) pause_us = atoi(argv[2]);
  pthread_t t[THREADS];
  pthread_barrier_init(&barrier, NULL, THREADS);
  for (long k = 0; k < THREADS; k++)
    if (pthread_create(&t[k], NULL, worker, (void *)k) != 0) return 2;
  long total = 0;
  for (int k = 0; k < THREADS; k++) {
    void *r;
    pthread_join(t[k], &r);
    total += (long)r;
  }
  printf("functions=%d threads=%d rounds=%d total=%ld\n", NFUNCS, THREADS, rounds, total);
  return 0;
}
