/* glibc backtrace() from nested calls (outer -> middle -> inner -> show),
 * built -rdynamic so that backtrace_symbols names the program's functions
 * through dladdr.  Prints the number of frames and, for each frame, the
 * function name only (never an address or offset), so the output is
 * comparable with the native run's.  Each function does work after its call,
 * so no call is a tail call.  Counts: outer 3, middle 3, inner 3, show 3. */
#include <execinfo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

volatile int sink;

__attribute__((noipa)) void show(int round) {
  void *pcs[64];
  int n = backtrace(pcs, 64);
  char **names = backtrace_symbols(pcs, n);
  printf("round %d: %d frames:", round, n);
  for (int i = 0; i < n; i++) {
    /* "path(name+0x1d) [0x...]" -> "name"; "path() [..]" or "path [..]" -> "?" */
    const char *open = strchr(names[i], '(');
    const char *end = open ? strpbrk(open, "+)") : NULL;
    if (open && end && end > open + 1)
      printf(" %.*s", (int)(end - open - 1), open + 1);
    else
      printf(" ?");
  }
  printf("\n");
  free(names);
  sink++;
}
__attribute__((noipa)) void inner(int r) { show(r); sink++; }
__attribute__((noipa)) void middle(int r) { inner(r); sink++; }
__attribute__((noipa)) void outer(int r) { middle(r); sink++; }

int main(void) {
  for (int r = 0; r < 3; r++) outer(r);
  return 0;
}
