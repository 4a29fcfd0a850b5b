/* Threads in hot loops while lazyprobe removes covered probes from the very
 * code they run (coverage sweeps every 50 ms): results must not change.
 * Counted single-threaded parts only: the threads' counts race without
 * --atomic. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

/* expect: main 1 */
/* expect: spawn 1 */

#define THREADS 4
#define CHUNKS 10      /* a pause after each: the program outlives several sweeps */
#define ROUNDS 400000L /* per chunk */

__attribute__((noipa)) static long mix(long x) { return (x * 2654435761L) ^ (x >> 7); }

__attribute__((noipa)) static long step(long acc, long i) {
  if (i % 3 == 0) return acc + mix(i);
  if (i % 5 == 0) return acc - mix(i >> 1);
  return acc ^ i;
}

__attribute__((noipa)) static void *work(void *arg) {
  long id = (long)arg, acc = id;
  for (long c = 0; c < CHUNKS; c++) {
    for (long i = 0; i < ROUNDS; i++) acc = step(acc, c * ROUNDS + i + id);
    usleep(25000);
  }
  return (void *)acc;
}

__attribute__((noipa)) static void spawn(pthread_t *t) {
  for (long k = 0; k < THREADS; k++) pthread_create(&t[k], NULL, work, (void *)k);
}

int main(void) {
  pthread_t t[THREADS];
  spawn(t);
  long total = 0;
  for (int k = 0; k < THREADS; k++) {
    void *r;
    pthread_join(t[k], &r);
    total += (long)r;
  }
  printf("total=%ld\n", total);
  return 0;
}
