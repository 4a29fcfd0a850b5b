/* Calls hotfn (tests/real/coldpart.S) 1000 times: hotfn 1000, main 1. */
#include <stdio.h>

int hotfn(int);

int main(void) {
  long s = 0;
  for (int i = 0; i < 1000; i++) s += hotfn(i);
  printf("%ld\n", s);
  return 0;
}
