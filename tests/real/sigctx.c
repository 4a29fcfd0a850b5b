/* Signal handlers that read and CHANGE the interrupted context: the faulting
 * instruction is in an instrumented function, the handler checks the bytes at
 * REG_RIP, moves RIP past the instruction and sets RAX, and the function
 * resumes (in its copy, under lazyprobe) with the new RAX.
 *   bad_op:   ud2 (0f 0b)           SIGILL,  RAX := 1000 + arg
 *   bad_load: mov (%rdx),%eax (8b 02) with rdx = 0: SIGSEGV, RAX := 2000 + arg
 *   own_trap: the program's OWN int3 (cc): SIGTRAP, RIP already past it,
 *             RAX := 3000 + arg (lazyprobe must pass it on, not take it)
 * Code after each faulting instruction must still be there in the copy.
 * argv[1] picks one: "ud2", "segv" or "int3" (the other two are not called).
 * Counts: the chosen function 10, on_signal 10, main 1. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>

static int wrong_bytes;

__attribute__((noipa)) void on_signal(int sig, siginfo_t *si, void *ctx) {
  (void)si;
  ucontext_t *uc = ctx;
  greg_t *g = uc->uc_mcontext.gregs;
  const unsigned char *pc = (const unsigned char *)g[REG_RIP];
  long arg = g[REG_RDI];
  if (sig == SIGILL) {
    if (pc[0] != 0x0f || pc[1] != 0x0b) wrong_bytes++;
    g[REG_RIP] += 2;
    g[REG_RAX] = 1000 + arg;
  } else if (sig == SIGSEGV) {
    if (pc[0] != 0x8b || pc[1] != 0x02) wrong_bytes++;
    g[REG_RIP] += 2;
    g[REG_RAX] = 2000 + arg;
  } else if (sig == SIGTRAP) {
    if (pc[-1] != 0xcc) wrong_bytes++;
    g[REG_RAX] = 3000 + arg;
  }
}

/* Each: rax = -1; the faulting instruction; then code that uses rax. */
__attribute__((noipa)) long bad_op(long arg) {
  long r;
  __asm__ volatile("mov $-1, %%rax\n\tud2\n\tadd $1, %%rax" : "=a"(r) : "D"(arg) : "memory");
  return r * 2;
}
__attribute__((noipa)) long bad_load(long arg) {
  long r;
  __asm__ volatile("mov $-1, %%rax\n\txor %%edx, %%edx\n\t.byte 0x8b, 0x02\n\tadd $2, %%rax"
                   : "=a"(r) : "D"(arg) : "rdx", "memory");
  return r * 3;
}
__attribute__((noipa)) long own_trap(long arg) {
  long r;
  __asm__ volatile("mov $-1, %%rax\n\tint3\n\tadd $3, %%rax" : "=a"(r) : "D"(arg) : "memory");
  return r * 5;
}

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  long (*fn)(long) = !strcmp(argv[1], "ud2") ? bad_op : !strcmp(argv[1], "segv") ? bad_load
                     : !strcmp(argv[1], "int3") ? own_trap : NULL;
  if (!fn) return 2;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_signal;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGILL, &sa, NULL);
  sigaction(SIGSEGV, &sa, NULL);
  sigaction(SIGTRAP, &sa, NULL);
  long s = 0;
  for (long i = 0; i < 10; i++) {
    long a = fn(i);
    if (i < 2) printf("%ld: %ld\n", i, a);
    s += a;
  }
  printf("sum=%ld wrong_bytes=%d\n", s, wrong_bytes);
  return 0;
}
