/* V8's embedded builtins, in miniature: functions named Builtins_* whose
 * return addresses the program itself maps back to their code (V8's garbage
 * collector does so for every frame on the stack, and dies of a failed check
 * when one lies elsewhere).  Builtins_Walk calls where_from, which checks that
 * its return address lies in Builtins_Walk; main calls Builtins_Walk 1000
 * times and prints how many returns were found where they belong. */
#include <stdint.h>
#include <stdio.h>

void Builtins_Walk(int);

__attribute__((noinline)) static int where_from(uintptr_t lo, uintptr_t hi) {
  uintptr_t ret = (uintptr_t)__builtin_return_address(0);
  return ret >= lo && ret < hi;
}

volatile int found;

__attribute__((noinline)) void Builtins_Walk(int i) {
  found += where_from((uintptr_t)Builtins_Walk, (uintptr_t)Builtins_Walk + 256);
  __asm__ volatile("" ::"r"(i));
}

int main(void) {
  for (int i = 0; i < 1000; i++) Builtins_Walk(i);
  printf("%d returns where they belong\n", found);
  return found == 1000 ? 0 : 1;
}
