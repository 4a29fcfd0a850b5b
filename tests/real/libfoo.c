/* libfoo.so, linked by shlib_main (and by libbar.so).  foo_apply calls back
 * into the caller's module.  Counts: see shlib_main.c. */
__attribute__((noipa)) static long foo_helper(long x) { return x * 3 + 1; }
__attribute__((noipa)) long foo_add(long a, long b) { return a + foo_helper(b); }
__attribute__((noipa)) long foo_mul(long a, long b) { return a * b; }
__attribute__((noipa)) long foo_apply(long (*cb)(long), long x) { return cb(x) + cb(x + 1); }
