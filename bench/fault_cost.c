/* fault_cost.c — what a machine charges for memory touched the first time:
 * N (argv[1], default 10000) pages of fresh anonymous memory written once,
 * as 4 KB pages on demand, with MAP_POPULATE, and advised MADV_HUGEPAGE;
 * then pages of a sparse file mapped shared (what the counters file is,
 * shm/counters.h) in the directory DIR (argv[2], default /tmp: the output
 * directory's file system), on demand and with MADV_POPULATE_WRITE.  CPU
 * time per 4 KB page.  docs/PERFORMANCE.md, session 19: 11.5-15.9 us a fault
 * on that session's virtual machine, where a system call costs ~1 us;
 * session 28: ~22 us, anonymous or shared, ext4 or tmpfs alike.
 *
 *   gcc -O2 -o /tmp/fault_cost bench/fault_cost.c && /tmp/fault_cost 10000 /tmp */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096ul
#define HUGE (2ul << 20)
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

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

/* CPU us per page of writing N pages of a sparse file in DIR mapped shared,
 * populated first with MADV_POPULATE_WRITE when POPULATE. */
static double touch_file(size_t n, const char *dir, int populate) {
  char path[4096];
  snprintf(path, sizeof path, "%s/fault_cost.%d", dir, (int)getpid());
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
  if (fd < 0 || ftruncate(fd, (off_t)(n * PAGE)) != 0) {
    perror(path);
    exit(1);
  }
  unlink(path);
  double t0 = cpu_us();
  char *p = mmap(NULL, n * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    perror("mmap");
    exit(1);
  }
  if (populate && madvise(p, n * PAGE, MADV_POPULATE_WRITE) != 0) perror("madvise");
  for (size_t i = 0; i < n; i++) p[i * PAGE] = 1;
  double us = (cpu_us() - t0) / (double)n;
  munmap(p, n * PAGE);
  close(fd);
  return us;
}

int main(int argc, char **argv) {
  size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 10000;
  const char *dir = argc > 2 ? argv[2] : "/tmp";
  printf("4 KB pages on demand:  %.2f us a page\n", touch(n, 0, 0));
  printf("MAP_POPULATE:          %.2f us a page\n", touch(n, MAP_POPULATE, 0));
  printf("MADV_HUGEPAGE:         %.2f us a 4 KB page\n", touch(n, 0, 1));
  printf("a file in %s, shared:  %.2f us a page\n", dir, touch_file(n, dir, 0));
  printf("  MADV_POPULATE_WRITE: %.2f us a page\n", touch_file(n, dir, 1));
  return 0;
}
