/* guard_escape_main.c — drives guard_escape.S: dispatch(i % 3) for i =
 * 0..299, 100 times each index.  dispatch 300, main 1. */
#include <stdio.h>

unsigned dispatch(unsigned i);

int main(void) {
  unsigned long sum = 0;
  for (unsigned i = 0; i < 300; i++) sum += dispatch(i % 3);
  printf("%lu\n", sum);
  return 0;
}
