/* Forced unwinding through copies: in each of ROUNDS rounds one thread
 * leaves by pthread_exit from six calls deep (deep(5) .. deep(0)) and
 * another is cancelled in spin(); each has a cleanup handler (built with
 * -fexceptions the handlers are landing pads in the copies, run by the
 * unwinder; without, glibc's setjmp-based ones).  Prints "7 1" per round,
 * then "cleanups 55".  Counts by construction (ROUNDS = 5): deep 30,
 * exiter 5, victim 5, spin 5, cleanup 10. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define ROUNDS 5

static long cleaned;
volatile long sink;

__attribute__((noipa)) void cleanup(void *arg) { __atomic_fetch_add(&cleaned, (long)arg, __ATOMIC_RELAXED); }

__attribute__((noipa)) void deep(int n) {
  if (n == 0) pthread_exit((void *)7);
  deep(n - 1);
  sink++;
}

__attribute__((noipa)) void *exiter(void *arg) {
  pthread_cleanup_push(cleanup, (void *)1);
  deep(5);
  pthread_cleanup_pop(0);
  return arg;
}

__attribute__((noipa)) void spin(void) {
  for (;;) {
    pthread_testcancel();
    sink++;
    usleep(100);
  }
}

__attribute__((noipa)) void *victim(void *arg) {
  pthread_cleanup_push(cleanup, (void *)10);
  spin();
  pthread_cleanup_pop(0);
  return arg;
}

int main(void) {
  for (int r = 0; r < ROUNDS; r++) {
    pthread_t a, b;
    void *ra, *rb;
    pthread_create(&a, 0, exiter, 0);
    pthread_create(&b, 0, victim, 0);
    usleep(2000);
    pthread_cancel(b);
    pthread_join(a, &ra);
    pthread_join(b, &rb);
    printf("%ld %d\n", (long)ra, rb == PTHREAD_CANCELED);
  }
  printf("cleanups %ld\n", cleaned);
  return 0;
}
