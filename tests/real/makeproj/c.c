#include "proj.h"
long part_c(long x) {
  long s = 0;
  for (long i = 0; i < x; i++) s += part_a(i) ^ i;
  return s;
}
