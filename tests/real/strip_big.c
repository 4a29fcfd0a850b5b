/* A function of more than a thousand instructions, hot: under -c
 * coverage,calls its copy is replaced by one without the cover probes that
 * ran (core/breaks.c, strip), planned again from its bytes (test_strip_big).
 *
 * big(i) is a chain of 256 steps, each a test of one bit of i and a block
 * that runs when it is set (12 different bits: every step's block runs within
 * the first 2^12 calls).  main calls it ROUNDS times (argv[1], default 2^20;
 * at least STRIP_MIN, 2^18, before the strip).  The @late line runs on the
 * last round only, long after the strip; the @never line never. */
#include <stdio.h>
#include <stdlib.h>

long sink;
volatile int never;
static long rounds = 1L << 20;

__attribute__((noipa)) void late(long i) { sink += i; }
__attribute__((noipa)) void nothing(void) { sink = 0; }

#define STEP(k)                                                                                                        \
  if (i & (1L << ((k) % 12))) {                                                                                        \
    acc += (k) * (i >> ((k) % 7));                                                                                     \
    __asm__ volatile("" : "+r"(acc));                                                                                  \
  }
#define S4(k) STEP(k) STEP((k) + 1) STEP((k) + 2) STEP((k) + 3)
#define S16(k) S4(k) S4((k) + 4) S4((k) + 8) S4((k) + 12)
#define S64(k) S16(k) S16((k) + 16) S16((k) + 32) S16((k) + 48)

__attribute__((noipa)) long big(long i) {
  long acc = 0;
  S64(0) S64(64) S64(128) S64(192)
  if (__builtin_expect(i == rounds - 1, 0))
    late(i); /* @late */
  if (never)
    nothing(); /* @never */
  return acc;
}

int main(int argc, char **argv) {
  if (argc > 1) rounds = atol(argv[1]);
  long total = 0;
  for (long i = 0; i < rounds; i++) total += big(i);
  printf("%ld %ld\n", total, sink);
  return 0;
}
