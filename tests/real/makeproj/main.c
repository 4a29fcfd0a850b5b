#include <stdio.h>
#include "proj.h"
int main(void) {
  for (long i = 0; i < 5; i++) printf("%ld %ld\n", i, part_c(i * 100));
  return 0;
}
