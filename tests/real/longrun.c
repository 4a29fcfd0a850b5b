/* For attach/detach: ITERS iterations of ~PERIOD_MS each.  In every iteration
 * the main thread calls tick() TICKS times and each of two worker threads
 * calls tock() TICKS/2 times (the three meet at a barrier before and after),
 * then main prints a progress line and writes the number of completed
 * iterations to the file argv[1] (read by the test to bound the counts of
 * an attach window: lazyprobe can only count calls made in the iterations
 * that were running between its start and its end).
 * run_loop() and main() are on the stack for the whole run: entered once,
 * before any attach, so an attached lazyprobe must count them 0. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define ITERS 40
#define TICKS 2000
#define PERIOD_MS 80

static pthread_barrier_t start_b, end_b;
static const char *progress;
volatile long acc;

__attribute__((noipa)) void tick(long i) { acc += i; }
__attribute__((noipa)) void tock(long i) { __atomic_fetch_add(&acc, i, __ATOMIC_RELAXED); }

__attribute__((noipa)) static void *worker(void *arg) {
  (void)arg;
  for (int it = 0; it < ITERS; it++) {
    pthread_barrier_wait(&start_b);
    for (long i = 0; i < TICKS / 2; i++) tock(i);
    pthread_barrier_wait(&end_b);
  }
  return NULL;
}

static void write_progress(int done) {
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp", progress);
  FILE *f = fopen(tmp, "w");
  if (!f) exit(3);
  fprintf(f, "%d\n", done);
  fclose(f);
  rename(tmp, progress);
}

__attribute__((noipa)) void run_loop(void) {
  for (int it = 0; it < ITERS; it++) {
    pthread_barrier_wait(&start_b);
    for (long i = 0; i < TICKS; i++) tick(i);
    pthread_barrier_wait(&end_b);
    printf("iteration %d\n", it);
    fflush(stdout);
    write_progress(it + 1);
    struct timespec ts = {0, PERIOD_MS * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {}
  }
}

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  progress = argv[1];
  write_progress(0);
  pthread_barrier_init(&start_b, NULL, 3);
  pthread_barrier_init(&end_b, NULL, 3);
  pthread_t t[2];
  for (int k = 0; k < 2; k++) pthread_create(&t[k], NULL, worker, NULL);
  run_loop();
  for (int k = 0; k < 2; k++) pthread_join(t[k], NULL);
  printf("done ticks=%d\n", ITERS * TICKS);
  return 0;
}
