/* gcc's cold parts made while another thread runs.  At -O2 gcc moves
 * work()'s unlikely branch into work.cold, which jumps back into work; main
 * calls work() for the first time only once a second thread is running
 * (spin: a fixed number of rounds), so the side jumps from work.cold's copy
 * into work's are pointed at work's copy under int3s.  work 1000 calls
 * (its unlikely branch 10 times), always_cold 5 (its unlikely branch every
 * time), twice 0, spin 1, rare 15, main 1. */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>

static sem_t started;
static volatile unsigned long sink;

__attribute__((noinline, cold)) static unsigned long rare(int i) {
  fprintf(stderr, "rare %d\n", i);
  return (unsigned long)i * 7;
}

__attribute__((noinline)) unsigned long work(int i) {
  unsigned long r = (unsigned long)i * 3;
  if (__builtin_expect(i % 100 == 7, 0)) {
    r += rare(i);
    if (r & 1) r ^= 0x55;
  }
  r ^= (unsigned long)i >> 2;
  if (i & 1) r += 11;
  return r;
}

__attribute__((noinline)) static unsigned long twice(unsigned long r) { return 2 * r + 1; }

/* The unlikely branch (in always_cold.cold) is the one taken, every time:
 * the likely one, a call of twice, never runs, though the blocks after the
 * join are dominated by it from the entry alone. */
__attribute__((noinline)) unsigned long always_cold(int i) {
  unsigned long r = (unsigned long)i * 5;
  if (__builtin_expect(i >= 0, 0)) {
    r += rare(i + 1000);
    if (r & 1) r ^= 0x55;
  } else {
    r = twice(r);
  }
  r ^= (unsigned long)i >> 3;
  if (i & 2) r += 5;
  return r;
}

__attribute__((noinline)) static void *spin(void *arg) {
  (void)arg;
  sem_post(&started);
  unsigned long x = 0;
  for (unsigned long k = 0; k < 200000000ul; k++) x += k ^ (x >> 3);
  sink = x;
  return NULL;
}

/* Through a pointer: not relocated along with main, before spin starts. */
static unsigned long (*volatile work_ptr)(int) = work;

int main(void) {
  pthread_t t;
  sem_init(&started, 0, 0);
  if (pthread_create(&t, NULL, spin, NULL)) return 2;
  sem_wait(&started);
  unsigned long s = 0;
  for (int i = 0; i < 1000; i++) s += work_ptr(i);
  for (int i = 0; i < 5; i++) s += always_cold(i);
  pthread_join(t, NULL);
  printf("%lu\n", s);
  return 0;
}
