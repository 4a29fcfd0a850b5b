/* never_run_main.c — drives tests/real/never_run.c: with one argument or
 * more, caller() runs (small_callee is then relocated ahead of a call that
 * never comes); with none, it does not.  Prints what ran. */
#include <stdio.h>

int small_callee(int x);

__attribute__((noinline)) int caller(int argc) { return argc > 5 ? small_callee(argc) : argc; }
int (*volatile call_it)(int) = caller; /* called through: not a callee of main, relocated ahead with it */

int main(int argc, char **argv) {
  (void)argv;
  printf("%d\n", argc > 1 ? call_it(argc) : 0);
  return 0;
}
