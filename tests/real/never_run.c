/* never_run.c — two functions that never run (tests/real_tests.py,
 * coverage/never_run_branches): small_callee, which caller() calls only when
 * asked (and so is relocated ahead of its first call when caller runs: it is
 * small), and big_unrun, which nothing calls.  Their conditional branches
 * must be listed alike whether or not a copy was made of them. */
int small_callee(int x) {
  int r = 0;
  if (x > 3) r += 2;
  if (x & 1) r ^= 5;
  return r;
}

int big_unrun(int x) {
  int r = 0;
  for (int i = 0; i < x; i++) {
    if (i % 3 == 0) r += i;
    else if (i % 5 == 0) r -= i;
  }
  return r;
}
