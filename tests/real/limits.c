/* limits.c — counts known by construction, for a run under resource limits
 * (tests/real_tests.py, test_data_limit): mid() 100 times, leaf() 300 times,
 * and the sum printed. */
#include <stdio.h>

__attribute__((noipa)) static long leaf(long x) { return x * 3 + 1; }

__attribute__((noipa)) static long mid(long x) { return leaf(x) + leaf(x + 1) + leaf(x + 2); }

int main(void) {
  long sum = 0;
  for (long i = 0; i < 100; i++) sum += mid(i);
  printf("sum %ld\n", sum);
  return 0;
}
