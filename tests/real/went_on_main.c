/* went_on_main.c — drives tests/real/went_on.S (marked/went_on): sum3 and
 * loop_head once each, then a fork child calls late, its first call, and
 * ends at once with _exit: what it ran is counted in its own file, whether
 * or not the tracer came to its stub's ring before it ended.  Prints the
 * results (zero's, masked's and via_call's too); never() is only named, not called.  With the argument "fault",
 * deref(NULL) instead, its SIGSEGV handler saying where the fault was. */
#define _GNU_SOURCE /* REG_RIP */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

long sum3(long a, long b, long c);
int loop_head(int x, int n);
long late(long x);
long deref(const long *p);
int zero(void);
long masked(long x);
long via_call(long x);
long never(long x);

/* X when called from via_call's own bytes (its return address there), else -1. */
long where_from(long x) {
  uintptr_t back = (uintptr_t)__builtin_return_address(0), at = (uintptr_t)via_call;
  return back > at && back < at + 16 ? x : -1;
}

/* Where the fault was, as its handler sees it: deref's first instruction. */
static void on_segv(int sig, siginfo_t *si, void *context) {
  (void)sig;
  (void)si;
  uintptr_t rip = (uintptr_t)((ucontext_t *)context)->uc_mcontext.gregs[REG_RIP];
  char line[64];
  long off = (long)(rip - (uintptr_t)deref);
  int n = off ? snprintf(line, sizeof line, "fault elsewhere: deref%+ld\n", off)
              : snprintf(line, sizeof line, "fault at deref\n");
  if (write(1, line, (size_t)n) < 0) _exit(4);
  _exit(3);
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "fault")) { /* deref's first call faults */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
    printf("deref %ld\n", deref(NULL));
    return 0;
  }
  printf("sum3 %ld zero %d masked %ld via_call %ld\n", sum3(1, 20, 300), zero(), masked(1), via_call(41));
  printf("loop_head %d\n", loop_head(3, 1000000));
  fflush(stdout);
  pid_t child = fork();
  if (child == 0) _exit((int)late(argc) & 0x7f);
  int status = 0;
  waitpid(child, &status, 0);
  printf("child %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  if (argc > 5) printf("never %ld\n", never(argc));
  return 0;
}
