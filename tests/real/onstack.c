/* For attach: functions on the stack when lazyprobe attaches (seed 002).
 * main -> outer -> spin, and spin calls work() in a loop until SIGUSR1; then
 * outer calls after() 5 times and main prints what they returned.  Attached
 * while spin loops, lazyprobe must move spin, outer and main into their
 * copies: spin's call site of work() then counts every call of work() made
 * after the attach (as work's own entry count does), outer's call site of
 * after() counts 5.  Entries made before the attach count 0. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

static volatile sig_atomic_t stop;
volatile long sink;

static void on_usr1(int sig) {
  (void)sig;
  stop = 1;
}

__attribute__((noipa)) long work(long i) { return i * 3 + 1; }
__attribute__((noipa)) long after(long x) { return x + 1; }

__attribute__((noipa)) void spin(void) {
  long s = 0;
  for (long i = 0; !stop; i++) s += work(i);
  sink = s;
}

__attribute__((noipa)) long outer(void) {
  spin();
  long r = 0;
  for (volatile int i = 0; i < 5; i++) r += after(i);
  return r;
}

int main(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_usr1;
  sigaction(SIGUSR1, &sa, NULL);
  printf("ready\n");
  fflush(stdout);
  printf("%ld\n", outer());
  return 0;
}
