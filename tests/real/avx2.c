/* AVX/AVX2 code (built -O3 -mavx2 -mfma): functions that take and return
 * __m256i / __m256d in ymm registers, auto-vectorised loops, and a function
 * whose caller keeps vectors live across calls to instrumented functions.
 * Counts: vadd 1000, vmul 1000, dot 50, saxpy 50, combine 1000, main 1. */
#include <immintrin.h>
#include <stdio.h>

#define N 1024

__attribute__((noipa)) __m256i vadd(__m256i a, __m256i b) { return _mm256_add_epi32(a, b); }
__attribute__((noipa)) __m256d vmul(__m256d a, __m256d b) { return _mm256_fmadd_pd(a, b, a); }

__attribute__((noipa)) double dot(const double *a, const double *b, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}
__attribute__((noipa)) void saxpy(float *y, const float *x, float k, int n) {
  for (int i = 0; i < n; i++) y[i] = k * x[i] + y[i];
}
/* keeps p, q (ymm) live across the calls */
__attribute__((noipa)) long combine(long i) {
  __m256i p = _mm256_set_epi32(i, i + 1, i + 2, i + 3, i + 4, i + 5, i + 6, i + 7);
  __m256i q = _mm256_set1_epi32((int)(i * 3));
  __m256i r = vadd(p, q);
  __m256d d = vmul(_mm256_set1_pd((double)i), _mm256_set_pd(1, 2, 3, 4));
  r = _mm256_xor_si256(r, _mm256_add_epi32(p, q));
  int out[8];
  double dd[4];
  _mm256_storeu_si256((__m256i *)out, r);
  _mm256_storeu_pd(dd, d);
  return out[0] + out[7] + (long)dd[0] + (long)dd[3];
}

static double a[N], b[N];
static float x[N], y[N];

int main(void) {
  for (int i = 0; i < N; i++) {
    a[i] = i * 0.5;
    b[i] = 1.0 / (i + 1);
    x[i] = (float)i;
    y[i] = 1.0f;
  }
  double ds = 0;
  long cs = 0;
  for (int k = 0; k < 50; k++) {
    ds += dot(a, b, N - k);
    saxpy(y, x, 0.001f * k, N);
  }
  for (long i = 0; i < 1000; i++) cs += combine(i);
  printf("dot=%.6f y=%.6f combine=%ld\n", ds, (double)y[N - 1], cs);
  return 0;
}
