/* libbar.so, loaded by shlib_main with dlopen (twice).  Calls libfoo.so. */
long foo_add(long a, long b);
__attribute__((noipa)) long bar_fn(long x) { return foo_add(x, 2) ^ 5; }
__attribute__((noipa)) long bar_unused(long x) { return x - 1; }
