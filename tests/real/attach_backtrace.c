/* For attach: a C program (no function has an LSDA) whose spin() is running
 * when lazyprobe attaches (moved into its copy then, where it stays after the
 * detach).  After SIGUSR1, sent once lazyprobe detached, k() asks backtrace()
 * for its callers: the unwinder must find spin's copy, whose unwind
 * information is made only when first needed, at the detach at the latest.
 * backtrace() is called once before "ready", so that libgcc's unwinder is
 * loaded while lazyprobe is attached.  Prints "ready", then the number of
 * frames backtrace() saw, then "done". */
#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t late;
volatile long sink;

static void on_usr1(int sig) { late = sig; }

__attribute__((noinline)) static int frames(void) {
  void *at[64];
  return backtrace(at, 64);
}

__attribute__((noinline)) int k(long i) {
  if (late) {
    printf("frames %d\n", frames());
    printf("done\n");
    fflush(stdout);
    _exit(0);
  }
  return (int)(i & 7);
}

__attribute__((noinline)) long h(long i) {
  long v = k(i);
  sink += v;
  return v;
}

__attribute__((noinline)) void spin(void) {
  for (long i = 0;; i++) sink += h(i);
}

int main(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_usr1;
  sigaction(SIGUSR1, &sa, NULL);
  sink += frames(); /* libgcc's unwinder loaded now */
  printf("ready\n");
  fflush(stdout);
  spin();
}
