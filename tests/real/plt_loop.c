/* For attach and PLT slots: calls libfoo's foo_add through the PLT in a loop
 * until SIGUSR1, then prints "done".  Under an attached lazyprobe the slot
 * is pointed at foo_add's copy; after the detach it must hold foo_add's
 * entry again (read by the test from /proc/PID/mem). */
#include <signal.h>
#include <stdio.h>
#include <string.h>

long foo_add(long a, long b);

static volatile sig_atomic_t stop;
volatile long sink;

static void on_usr1(int sig) {
  (void)sig;
  stop = 1;
}

int main(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_usr1;
  sigaction(SIGUSR1, &sa, NULL);
  sink = foo_add(0, 0); /* the slot is bound before the attach */
  printf("ready\n");
  fflush(stdout);
  for (long i = 0; !stop; i++) sink += foo_add(i, 1);
  printf("done\n");
  return 0;
}
