/* A hot function that goes home under -c coverage (core/breaks.c, "going
 * home": its original code again, an int3 on each block not run yet) and
 * blocks of it first run after that (tests/real_tests.py, test_home).
 *
 * Phase 0 calls hot(i, 0) over and over: for MS milliseconds (argv[2],
 * default 300) and then until hot() has gone home (its entry's first byte is
 * neither the jmp to a copy or stub nor an int3: natively at once; at most
 * 30 s), or, with MODE "signal", until SIGUSR1 comes (after printing "ready";
 * lazyprobe attaches, sends hot() home, which prints "home", then goes, and
 * the int3s must have gone with it).  Then, by MODE (argv[1]):
 *   run, signal  phase 1 here: the @late line runs;
 *   fork         phase 1 in a child forked now (whose memory has the same
 *                int3s), then phase 2 in the parent: @late and @parent run;
 *   threads      THREADS threads do phase 0 while hot() goes home, meet at a
 *                barrier, then all run phase 1 at once (one int3, met by
 *                several threads).
 * The @never line never runs.  The output does not depend on how many calls
 * phase 0 made. */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

volatile int never;
static volatile sig_atomic_t go_on;
long sink;

__attribute__((noipa)) long late(long i) { return i * 3 + 1; }
__attribute__((noipa)) long parent_only(long i) { return i * 5 + 2; }
__attribute__((noipa)) long nothing(long i) { return -i; }

__attribute__((noipa)) long hot(long i, int phase) {
  long r = i & 3;
  if (__builtin_expect(phase == 1, 0))
    r += late(i); /* @late */
  if (__builtin_expect(phase == 2, 0))
    r += parent_only(i); /* @parent */
  if (never)
    r += nothing(i); /* @never */
  return r;
}

static void on_usr1(int sig) {
  (void)sig;
  go_on = 1;
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Has hot() gone home: is its first byte its own again? */
static int gone_home(void) {
  uint8_t first = *(volatile const uint8_t *)(const void *)hot;
  return first != 0xe9 && first != 0xcc;
}

/* Phase 0 goes on: before UNTIL, then until hot() has gone home (30 s at most). */
static int in_phase0(double until) {
  double now = now_ms();
  return now < until || (!gone_home() && now < until + 30000);
}

static long phase(int which, long n) {
  long sum = 0;
  for (long i = 0; i < n; i++) sum += hot(i, which);
  return sum;
}

#define THREADS 4

static double until_ms;
static pthread_barrier_t together;

static void *worker(void *arg) {
  long *late_sum = arg;
  while (in_phase0(until_ms)) sink += phase(0, 1 << 14);
  pthread_barrier_wait(&together);
  *late_sum = phase(1, 1000);
  return NULL;
}

/* THREADS threads: phase 0 until the deadline, then phase 1 together. */
static int run_threads(double ms) {
  pthread_t t[THREADS];
  long sums[THREADS];
  until_ms = now_ms() + ms;
  pthread_barrier_init(&together, NULL, THREADS);
  for (int k = 0; k < THREADS; k++)
    if (pthread_create(&t[k], NULL, worker, &sums[k])) return 1;
  long total = 0;
  for (int k = 0; k < THREADS; k++) {
    pthread_join(t[k], NULL);
    total += sums[k];
  }
  printf("threads late=%ld\n", total);
  return 0;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "run";
  double ms = argc > 2 ? atof(argv[2]) : 300;
  if (!strcmp(mode, "threads")) return run_threads(ms);
  int by_signal = !strcmp(mode, "signal");
  if (by_signal) {
    signal(SIGUSR1, on_usr1);
    printf("ready\n");
    fflush(stdout);
  }
  double until = now_ms() + ms;
  int moved = 0, told = 0; /* "signal": hot()'s entry seen moved on, then its own again */
  while (by_signal ? !go_on : in_phase0(until)) {
    sink += phase(0, 1 << 12); /* checks often: two passes may fall between two checks */
    if (!by_signal || told) continue;
    moved |= !gone_home();
    if (moved && gone_home()) {
      printf("home\n"); /* the attached lazyprobe sent it home: it may go now */
      fflush(stdout);
      told = 1;
    }
  }
  if (!strcmp(mode, "fork")) {
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
      printf("child late=%ld\n", phase(1, 1000));
      return 0;
    }
    if (child < 0 || waitpid(child, NULL, 0) != child) return 1;
    printf("parent=%ld\n", phase(2, 1000));
    return 0;
  }
  printf("late=%ld\n", phase(1, 1000));
  return 0;
}
