/* For attach and gdb: outer() calls middle() -> inner() in a loop; SIGUSR1
 * makes inner() abort.  Attached before the signal, lazyprobe has moved
 * main and outer into copies and made the others: gdb's `bt` on the core must
 * show inner, middle, outer, main as on a native core. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile sig_atomic_t go;
volatile long sink;

static void on_usr1(int sig) {
  (void)sig;
  go = 1;
}

__attribute__((noipa)) void inner(int x) {
  if (go) abort();
  sink += x;
}
__attribute__((noipa)) void middle(int x) {
  inner(x + 1);
  sink++;
}
__attribute__((noipa)) void outer(int x) {
  for (;;) middle(x + 1);
}

int main(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_usr1;
  sigaction(SIGUSR1, &sa, NULL);
  printf("ready\n");
  fflush(stdout);
  outer(1);
  return 0;
}
