/* fault_cost.c — what a machine charges for memory touched the first time:
 * N (argv[1], default 10000) pages of fresh anonymous memory written once,
 * as 4 KB pages on demand, with MAP_POPULATE, and advised MADV_HUGEPAGE;
 * CPU time per 4 KB page.  docs/PERFORMANCE.md, session 19: 11.5-15.9 us a
 * fault on that session's virtual machine, where a system call costs ~1 us.
 *
 *   gcc -O2 -o /tmp/fault_cost bench/fault_cost.c && /tmp/fault_cost 10000 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#define PAGE 4096ul
#define HUGE (2ul << 20)

static double cpu_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/* CPU us per page of touching N pages mapped with FLAGS, advised HUGE. */
static double touch(size_t n, int flags, int huge) {
  size_t size = n * PAGE + HUGE;
  double t0 = cpu_us();
  char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);
  if (p == MAP_FAILED) {
    perror("mmap");
    exit(1);
  }
  char *at = (char *)(((unsigned long)p + HUGE - 1) & ~(HUGE - 1));
  if (huge && madvise(at, n * PAGE, MADV_HUGEPAGE) != 0) perror("madvise");
  for (size_t i = 0; i < n; i++) at[i * PAGE] = 1;
  double us = (cpu_us() - t0) / (double)n;
  munmap(p, size);
  return us;
}

int main(int argc, char **argv) {
  size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 10000;
  printf("4 KB pages on demand:  %.2f us a page\n", touch(n, 0, 0));
  printf("MAP_POPULATE:          %.2f us a page\n", touch(n, MAP_POPULATE, 0));
  printf("MADV_HUGEPAGE:         %.2f us a 4 KB page\n", touch(n, 0, 1));
  return 0;
}
