/* shared_table_main.c — drives shared_table.S: step(i % 4, i % 3) for i =
 * 0..299.  The first dispatch takes each case 75 times; case 0 (i = 0, 4,
 * 8, ...: i % 3 cycles through 0, 1, 2) dispatches again to cases 1, 2, 3,
 * 25 times each.  step 300, main 1.  Then stepper(i % 3, finish) for i =
 * 0..99: its dispatch takes case 0 34 times, case 1 34 + 33 = 67, case 2
 * 100; finish 100. */
#include <stdio.h>

unsigned step(unsigned a, unsigned b);
unsigned stepper(unsigned n, unsigned (*tail)(unsigned));

__attribute__((noinline)) unsigned finish(unsigned sum) { return sum + 1000; }

int main(void) {
  unsigned long sum = 0;
  for (unsigned i = 0; i < 300; i++) sum += step(i % 4, i % 3);
  printf("%lu\n", sum);
  sum = 0;
  for (unsigned i = 0; i < 100; i++) sum += stepper(i % 3, finish);
  printf("%lu\n", sum);
  return 0;
}
