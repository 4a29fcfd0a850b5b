/* bench/procs/tiny.c: the child of bench/procs.py forkexec: a few small functions, each called a
 * few times, nothing printed; exits 0 when the arithmetic comes out as expected. */
#define NOIPA __attribute__((noipa))
NOIPA static long sq(long x) { return x * x; }
NOIPA static long add(long a, long b) { return a + b; }
NOIPA static long sum_sq(int n)
{
    long s = 0;
    for (int i = 1; i <= n; i++)
        s = add(s, sq(i));
    return s;
}

int main(void)
{
    return sum_sq(10) == 385 ? 0 : 1;
}
