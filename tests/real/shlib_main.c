/* Shared libraries: libfoo.so linked (DT_NEEDED, RUNPATH $ORIGIN), libbar.so
 * dlopen'd from argv[1], called, dlclose'd, dlopen'd again and called again.
 * Counts by construction:
 *   shlib_main: main 1, main_cb 2 * APPLY, main_work LOOP
 *   libfoo.so:  foo_add LOOP + BAR1 + BAR2 (main_work and bar_fn call it),
 *               foo_helper the same, foo_mul LOOP, foo_apply APPLY
 *   libbar.so:  bar_fn BAR1 + BAR2, bar_unused 0
 *   libc.so.6:  strverscmp LIBC (only with --include 'libc.so*'; nothing else in this
 *               program or in glibc's startup calls it; atoi would not do: the
 *               headers inline it as strtol) */
#define _GNU_SOURCE /* strverscmp */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOOP 100
#define APPLY 7
#define BAR1 5
#define BAR2 9
#define LIBC 17

long foo_add(long a, long b);
long foo_mul(long a, long b);
long foo_apply(long (*cb)(long), long x);

__attribute__((noipa)) long main_cb(long x) { return x * x; }
__attribute__((noipa)) long main_work(long i) { return foo_add(i, i) + foo_mul(i, 3); }

static long call_bar(const char *path, int n) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    printf("dlopen failed\n");
    exit(3);
  }
  long (*bar)(long) = (long (*)(long))dlsym(h, "bar_fn");
  long s = 0;
  for (int i = 0; i < n; i++) s += bar(i);
  dlclose(h);
  return s;
}

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  long s = 0;
  for (long i = 0; i < LOOP; i++) s += main_work(i);
  for (long i = 0; i < APPLY; i++) s += foo_apply(main_cb, i);
  s += call_bar(argv[1], BAR1);
  s += call_bar(argv[1], BAR2);
  char a[16], b[16];
  for (int i = 0; i < LIBC; i++) {
    snprintf(a, sizeof a, "v%d.%d", i, i * 31);
    snprintf(b, sizeof b, "v%d.%d", i, 100 - i);
    s += strverscmp(a, b);
  }
  printf("sum=%ld\n", s);
  return 0;
}
