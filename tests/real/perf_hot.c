/* For perf: nearly all the time is spent in hot_loop (called HOT times), so
 * perf's samples land in its copy under lazyprobe.  Counts: hot_loop 40, main 1. */
#include <stdio.h>

#define HOT 40

__attribute__((noipa)) unsigned long hot_loop(unsigned long seed) {
  unsigned long x = seed;
  for (long i = 0; i < 5000000; i++) x = x * 6364136223846793005UL + 1442695040888963407UL + (x >> 29);
  return x;
}

int main(void) {
  unsigned long s = 0;
  for (int i = 0; i < HOT; i++) s ^= hot_loop(s + i);
  printf("s=%lu\n", s);
  return 0;
}
