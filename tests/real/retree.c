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
 * That pick's own counters ran less than half as often as its hot edge does
 * not hang on how soon the second copy goes in: once each thread has run an
 * eighth of its rounds, the threads meet and wait (30 s at most) until pick's
 * entry jumps elsewhere than the copy it jumped to on the 64th round of the
 * first thread there (to a second copy; or it is its own code again).  Natively, or when
 * the entry was no jmp then, they go on at once.  No count depends on the
 * wait.
 *
 * For coverage (test_strip): last() runs T * ROUNDS times and calls late() on
 * each thread's last round only (T times), long after last's first copy was
 * replaced by one without the probes that had run: the @late line runs, the
 * @never line does not. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
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

/* pick's first instruction, after an endbr64 if it has one. */
static const volatile uint8_t *pick_entry(void) {
  const volatile uint8_t *at = (const volatile uint8_t *)(uintptr_t)pick;
  return at[0] == 0xf3 && at[1] == 0x0f && at[2] == 0x1e && at[3] == 0xfa ? at + 4 : at;
}

/* Where pick's entry jumps, or 0 when it is no `jmp rel32`. */
static uintptr_t pick_jumps_to(void) {
  const volatile uint8_t *at = pick_entry();
  if (at[0] != 0xe9) return 0;
  int32_t rel = (int32_t)((uint32_t)at[1] | (uint32_t)at[2] << 8 | (uint32_t)at[3] << 16 | (uint32_t)at[4] << 24);
  return (uintptr_t)at + 5 + rel;
}

static uintptr_t first_copy; /* where pick's entry jumped on the 64th round of the first thread there */
static pthread_barrier_t eighth;

/* Until pick's entry goes elsewhere than FIRST_COPY (30 000 naps of 1 ms at most). */
static void wait_for_second_copy(void) {
  struct timespec nap = {0, 1000000};
  for (int ms = 0; first_copy && ms < 30000; ms++) {
    if (pick_entry()[0] != 0xcc && pick_jumps_to() != first_copy) return; /* 0xcc: being repointed */
    nanosleep(&nap, NULL);
  }
}

__attribute__((noipa)) void *work(void *arg) {
  long id = (long)arg, v[BLOCK], acc = 0;
  for (long k = 0; k < BLOCK; k++) v[k] = k * 7 + id;
  for (long i = 0; i < rounds; i++) {
    if (i == 64) { /* the first thread there: no second copy can have come so soon */
      uintptr_t none = 0;
      __atomic_compare_exchange_n(&first_copy, &none, pick_jumps_to(), 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    }
    if (i == rounds / 8) {
      pthread_barrier_wait(&eighth);
      if (id == 0) wait_for_second_copy();
      pthread_barrier_wait(&eighth);
    }
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
  pthread_barrier_init(&eighth, NULL, (unsigned)threads);
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
