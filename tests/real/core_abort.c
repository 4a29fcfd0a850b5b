/* abort() inside nested calls (main -> outer -> middle -> inner), for gdb's
 * `bt` on the core file.  Each call is followed by work (no tail calls).
 * Counts: outer 1, middle 1, inner 1. */
#include <stdio.h>
#include <stdlib.h>

volatile int sink;

__attribute__((noipa)) void inner(int x) {
  printf("aborting at %d\n", x);
  fflush(stdout);
  if (x > 0) abort();
  sink++;
}
__attribute__((noipa)) void middle(int x) { inner(x + 1); sink++; }
__attribute__((noipa)) void outer(int x) { middle(x + 1); sink++; }

int main(void) {
  outer(1);
  return 0;
}
