/* cold_side_main.c — drives cold_side.S: hot(200 + i) 40 times (each through
 * hot.cold's side entry), hot(i) 60 times.  hot 100, main 1. */
#include <stdio.h>

int hot(int x);

int main(void) {
  long sum = 0;
  for (int i = 0; i < 40; i++) sum += hot(200 + i);
  for (int i = 0; i < 60; i++) sum += hot(i);
  printf("%ld\n", sum);
  return 0;
}
