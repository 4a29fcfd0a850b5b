/* test_stub.c — arch/x86_64/x64_stub.c run in this process: calls made
 * through the stubs of three functions (stubs 0, 1 and 4099 of 4100, the
 * others fn0's) reach their entries with every argument (six integer
 * registers, rax, an xmm register, one on the stack) and return to the caller
 * with the result, the stack as before; the first call of each marks its word
 * requested, sets the summary bit of its group of 64 (4099: bit 0 of the
 * second summary word), rings the bell once and waits until a server thread
 * (the tracer's part), which reads the words of the groups the summary names
 * alone, marks it served; a call after that rings nothing.  Two threads
 * racing on one stub ring it once and both wait for the same service.  A
 * fourth function (stub 2) has a go-on address, a copy of its first
 * instructions (x64_displace.h): its first call rings once and returns its
 * result with no server running (a wait would end in the alarm), its word
 * left requested; a second call rings nothing.  No arguments; exit status 0
 * when all pass. */
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "unit.h"
#include "x64_displace.h"
#include "x64_stub.h"

#define NFN 4100
#define LAST (NFN - 1)

static volatile uint32_t *words, *bell;
static volatile uint64_t *summary;
static volatile int served_order[8], nserved;

__attribute__((noipa)) static long fn0(long a, long b, long c, long d, long e, long f, double x, long g) {
  return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + (long)(x * 10) + 8 * g;
}
__attribute__((noipa)) static long fn1(long a, long b, long c, long d, long e, long f, double x, long g) {
  return a * b * c * d * e * f + (long)x - g;
}
__attribute__((noipa)) static long fn2(long a, long b, long c, long d, long e, long f, double x, long g) {
  return a - b - c - d - e - f - (long)x - g;
}
typedef long fn_t(long, long, long, long, long, long, double, long);

static long futex(volatile uint32_t *w, int op, uint32_t v) { return syscall(SYS_futex, w, op, v, NULL, NULL, 0); }

/* The tracer's part: each time the bell moves, serves the words asked for
 * (after a pause, so that the callers wait). */
static void *server(void *arg) {
  int rounds = (int)(intptr_t)arg;
  uint32_t seen = 0;
  for (int r = 0; r < rounds;) {
    while (*bell == seen) futex(bell, FUTEX_WAIT, seen);
    seen = *bell;
    usleep(20000);
    for (size_t w = 0; w < x64_stubs_summary_words(NFN); w++)
      for (uint64_t bits = __atomic_exchange_n(&summary[w], 0, __ATOMIC_SEQ_CST); bits; bits &= bits - 1)
        for (int i = (int)(w * 64 + (size_t)__builtin_ctzll(bits)) * 64, hi = i + 64; i < hi && i < NFN; i++)
          if (words[i] == X64_STUB_REQUESTED) {
            served_order[nserved++] = i;
            __atomic_store_n(&words[i], X64_STUB_SERVED, __ATOMIC_SEQ_CST);
            futex(&words[i], FUTEX_WAKE, INT32_MAX);
            r++;
          }
  }
  return NULL;
}

static fn_t *stub(uint8_t *code, int i) { return (fn_t *)(void *)(code + i * X64_STUB_SIZE); }

static void *call_fn1(void *code) { return (void *)stub(code, 1)(1, 2, 3, 4, 5, 6, 7.9, 8); }

int main(void) {
  const char *name = "stub";
  size_t size = x64_stubs_size(NFN), data = 8 * 4096; /* the words, the summary, the bell */
  uint8_t *page = mmap(NULL, data + size, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) return 1;
  words = (volatile uint32_t *)page;
  summary = (volatile uint64_t *)(page + 6 * 4096);
  bell = (volatile uint32_t *)(page + 6 * 4096 + 64);
  uint8_t *code = page + data;
  static uint64_t entries[NFN], go_on[NFN];
  for (int i = 0; i < NFN; i++) entries[i] = (uintptr_t)fn0;
  entries[1] = (uintptr_t)fn1;
  entries[LAST] = (uintptr_t)fn2;
  /* stub 2: a + b + c, its window (push rbx; mov rbx, rdi; lea rax, [rbx+rsi]) copied, its entry int3s */
  static const uint8_t sum3[] = {0x53, 0x48, 0x89, 0xfb, 0x48, 0x8d, 0x04, 0x33, 0x48, 0x01, 0xd0, 0x5b, 0xc3};
  uint8_t *fn3 = page + 7 * 4096, *copy3 = fn3 + 64;
  memcpy(fn3, sum3, sizeof sum3);
  x64_insn in[X64_DISPLACE_MAX];
  size_t nin, len = x64_displace_window(fn3, sizeof sum3, (uintptr_t)fn3, in, &nin);
  x64_writer w;
  CHECK(len == 8 && x64_writer_init(&w, copy3, (uintptr_t)copy3, 0) == LP_OK, "fn3's window: %zu", len);
  x64_put_displaced(&w, in, nin, (uintptr_t)fn3 + len);
  CHECK(x64_writer_flush(&w) == LP_OK, "fn3's copy");
  x64_writer_clear(&w);
  memset(fn3, 0xcc, len);
  entries[2] = (uintptr_t)fn3;
  go_on[2] = (uintptr_t)copy3;
  CHECK(x64_stubs_write(code, (uintptr_t)code, NFN, entries, go_on, (uintptr_t)words, (uintptr_t)summary,
                        (uintptr_t)bell) == LP_OK,
        "write: %s", lp_error());

  alarm(10); /* a first call that waits for a server that is not there */
  long (*sum)(long, long, long) = (long (*)(long, long, long))(void *)(code + 2 * X64_STUB_SIZE);
  CHECK(sum(100, 20, 3) == 123 && words[2] == X64_STUB_REQUESTED && *bell == 1 && summary[0] == 1,
        "fn3's first call: word %u, bell %u, summary %#lx", words[2], *bell, (unsigned long)summary[0]);
  CHECK(sum(1, 2, 3) == 6 && *bell == 1, "fn3's second call rang: bell %u", *bell);
  words[2] = X64_STUB_SERVED; /* as the tracer would: the server below counts only the others */
  summary[0] = 0;
  *bell = 0;

  pthread_t srv;
  pthread_create(&srv, NULL, server, (void *)(intptr_t)3);
  long want0 = fn0(11, 12, 13, 14, 15, 16, 1.75, 17);
  long got0 = stub(code, 0)(11, 12, 13, 14, 15, 16, 1.75, 17);
  CHECK(got0 == want0, "fn0 through its stub: %ld, natively %ld", got0, want0);
  CHECK(words[0] == X64_STUB_SERVED && *bell == 1, "word %u, bell %u after the first call", words[0], *bell);
  CHECK(stub(code, 0)(1, 1, 1, 1, 1, 1, 0.0, 1) == fn0(1, 1, 1, 1, 1, 1, 0.0, 1), "second call of fn0");
  CHECK(*bell == 1, "a served stub rang again: bell %u", *bell);

  pthread_t racer[2]; /* two first calls of fn1 at once: one ring, one service */
  for (int k = 0; k < 2; k++) pthread_create(&racer[k], NULL, call_fn1, code);
  void *r1[2];
  for (int k = 0; k < 2; k++) pthread_join(racer[k], &r1[k]);
  long want1 = fn1(1, 2, 3, 4, 5, 6, 7.9, 8);
  CHECK((long)r1[0] == want1 && (long)r1[1] == want1, "fn1 racing: %ld %ld, natively %ld", (long)r1[0], (long)r1[1],
        want1);
  CHECK(*bell == 2, "two racing first calls rang %u times", *bell - 1);

  long got2 = stub(code, LAST)(100, 1, 2, 3, 4, 5, 6.0, 7);
  CHECK(got2 == fn2(100, 1, 2, 3, 4, 5, 6.0, 7), "fn2 through its stub: %ld", got2);
  pthread_join(srv, NULL);
  CHECK(nserved == 3 && served_order[0] == 0 && served_order[1] == 1 && served_order[2] == LAST,
        "served %d requests", nserved);
  CHECK(summary[0] == 0 && summary[1] == 0, "summary words left %#lx %#lx", (unsigned long)summary[0],
        (unsigned long)summary[1]);
  printf("%s: %d checks, %d failures\n", name, checks, failures);
  return failures != 0;
}
