/* shared_table_main.c — drives shared_table.S: step(i % 4, i % 3) for i =
 * 0..299.  The first dispatch takes each case 75 times; case 0 (i = 0, 4,
 * 8, ...: i % 3 cycles through 0, 1, 2) dispatches again to cases 1, 2, 3,
 * 25 times each.  step 300, main 1. */
#include <stdio.h>

unsigned step(unsigned a, unsigned b);

int main(void) {
  unsigned long sum = 0;
  for (unsigned i = 0; i < 300; i++) sum += step(i % 4, i % 3);
  printf("%lu\n", sum);
  return 0;
}
