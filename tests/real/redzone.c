/* Leaf functions that keep their locals in the red zone (below rsp, no
 * `sub rsp`) at -O2, with branches and loops in them, so that block and arc
 * probes land between red-zone stores and loads.  A probe that pushes (flags,
 * a register) would overwrite them and change the results.
 * Counts: rz_sum 3000, rz_table 3000, rz_swap 3000, main 1. */
#include <stdio.h>

__attribute__((noipa)) long rz_sum(long n) {
  volatile long buf[12];  /* 96 bytes below rsp */
  for (int i = 0; i < 12; i++) buf[i] = n * i + (i & 1 ? n : -n);
  long s = 0;
  for (int i = 0; i < 12; i++) {
    if (buf[i] > n)
      s += buf[i];
    else
      s -= buf[(i + 5) % 12];
  }
  return s;
}
__attribute__((noipa)) int rz_table(int k) {
  volatile int t[28];     /* 112 bytes */
  for (int i = 0; i < 28; i++) t[i] = i * k;
  int s = 0;
  switch (k % 5) {
  case 0: s = t[3] + t[27]; break;
  case 1: s = t[k % 28] - t[1]; break;
  case 2: s = t[20] * 2; break;
  case 3: s = t[(k * 7) % 28]; break;
  default: s = t[0] - t[13]; break;
  }
  return s + t[k % 28];
}
__attribute__((noipa)) long rz_swap(long a, long b) {
  volatile long v[14];    /* 112 bytes */
  v[0] = a;
  v[13] = b;
  for (int i = 1; i < 13; i++) v[i] = (i % 3 == 0) ? v[i - 1] ^ b : v[i - 1] + a;
  long r = v[13] > v[12] ? v[13] - v[12] : v[12] - v[13];
  return r + v[6];
}

int main(void) {
  long s = 0;
  for (long i = 0; i < 3000; i++) s += rz_sum(i) + rz_table((int)i) + rz_swap(i, 3000 - i);
  printf("s=%ld\n", s);
  return 0;
}
