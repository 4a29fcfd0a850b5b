#include "proj.h"
long part_a(long x) { return x * 7 + part_b(x) % 11; }
