/* Signal handlers on an alternate stack (sigaltstack + SA_ONSTACK) that call
 * instrumented functions, raised from instrumented functions: the handler
 * checks that its own frame is on the alternate stack.  The last signal is a
 * real stack overflow in a recursive function (deep): the handler, on the
 * alternate stack, siglongjmps back to main.
 * Counts: on_usr1 20, nested_a 20, nested_b 20, raiser 20, on_segv 1, main 1.
 * deep's count depends on the stack size and is not checked. */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALT_SIZE (256 * 1024)
static char *alt;
static int on_alt, off_alt;
static sigjmp_buf back;
volatile long sink;

static int on_alternate_stack(void) {
  char here;
  return &here >= alt && &here < alt + ALT_SIZE;
}
__attribute__((noipa)) long nested_b(long x) { return x * 3 + on_alternate_stack(); }
__attribute__((noipa)) long nested_a(long x) { return nested_b(x + 1) + 1; }
__attribute__((noipa)) void on_usr1(int sig) {
  (void)sig;
  if (on_alternate_stack()) on_alt++; else off_alt++;
  sink += nested_a(on_alt);
}
__attribute__((noipa)) void on_segv(int sig) {
  (void)sig;
  if (on_alternate_stack()) on_alt++; else off_alt++;
  siglongjmp(back, 1);
}
__attribute__((noipa)) void raiser(int i) {
  raise(SIGUSR1);
  sink += i;
}
__attribute__((noipa)) long deep(long n) {
  volatile char pad[512];
  pad[0] = (char)n;
  if (sink >= 0) return deep(n + 1) + pad[0];
  return 0;
}

int main(void) {
  alt = malloc(ALT_SIZE);
  stack_t ss = {.ss_sp = alt, .ss_size = ALT_SIZE, .ss_flags = 0};
  if (sigaltstack(&ss, NULL) != 0) return 3;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_flags = SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  sa.sa_handler = on_usr1;
  sigaction(SIGUSR1, &sa, NULL);
  sa.sa_handler = on_segv;
  sa.sa_flags = SA_ONSTACK | SA_NODEFER;
  sigaction(SIGSEGV, &sa, NULL);
  for (int i = 0; i < 20; i++) raiser(i);
  if (sigsetjmp(back, 1) == 0) sink += deep(0);
  printf("on_alt=%d off_alt=%d sink=%ld\n", on_alt, off_alt, sink);
  return 0;
}
