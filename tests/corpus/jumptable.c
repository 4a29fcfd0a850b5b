/* Dense switches compiled as jump tables (check: objdump -d shows
 * "jmp *%rax"/"notrack jmp *" with a table in .rodata at -O0/-O2/-O3).
 * dispatch(): each case calls a distinct function case_N.
 * tail_dispatch(): each case tail-calls a distinct function tj_N, so at -O2
 * tj_N is reached only through the jump table (an indirect jmp to a "jmp tj_N").
 * Input i = 0..199; selector i % 10 -> every case 20 times. */
#include <stdio.h>

/* expect: main 1 */
/* expect: dispatch 200 */
/* expect: tail_dispatch 200 */
/* expect: case_0 20 */
/* expect: case_1 20 */
/* expect: case_2 20 */
/* expect: case_3 20 */
/* expect: case_4 20 */
/* expect: case_5 20 */
/* expect: case_6 20 */
/* expect: case_7 20 */
/* expect: case_8 20 */
/* expect: case_9 20 */
/* expect: tj_0 20 */
/* expect: tj_1 20 */
/* expect: tj_2 20 */
/* expect: tj_3 20 */
/* expect: tj_4 20 */
/* expect: tj_5 20 */
/* expect: tj_6 20 */
/* expect: tj_7 20 */
/* expect: tj_8 20 */
/* expect: tj_9 20 */
/* expect: fallback 0 */

volatile long sink;
__attribute__((noipa)) long fallback(long x) { return -x; }
__attribute__((noipa)) long case_0(long x) { sink += x; return x * 3 + 0; }
__attribute__((noipa)) long case_1(long x) { sink += x; return x * 4 + 1; }
__attribute__((noipa)) long case_2(long x) { sink += x; return x * 5 + 2; }
__attribute__((noipa)) long case_3(long x) { sink += x; return x * 6 + 3; }
__attribute__((noipa)) long case_4(long x) { sink += x; return x * 7 + 4; }
__attribute__((noipa)) long case_5(long x) { sink += x; return x * 8 + 5; }
__attribute__((noipa)) long case_6(long x) { sink += x; return x * 9 + 6; }
__attribute__((noipa)) long case_7(long x) { sink += x; return x * 10 + 7; }
__attribute__((noipa)) long case_8(long x) { sink += x; return x * 11 + 8; }
__attribute__((noipa)) long case_9(long x) { sink += x; return x * 12 + 9; }
__attribute__((noipa)) long tj_0(long x) { sink ^= x; return x + 1; }
__attribute__((noipa)) long tj_1(long x) { sink ^= x; return x + 101; }
__attribute__((noipa)) long tj_2(long x) { sink ^= x; return x + 201; }
__attribute__((noipa)) long tj_3(long x) { sink ^= x; return x + 301; }
__attribute__((noipa)) long tj_4(long x) { sink ^= x; return x + 401; }
__attribute__((noipa)) long tj_5(long x) { sink ^= x; return x + 501; }
__attribute__((noipa)) long tj_6(long x) { sink ^= x; return x + 601; }
__attribute__((noipa)) long tj_7(long x) { sink ^= x; return x + 701; }
__attribute__((noipa)) long tj_8(long x) { sink ^= x; return x + 801; }
__attribute__((noipa)) long tj_9(long x) { sink ^= x; return x + 901; }

__attribute__((noipa)) long dispatch(unsigned sel, long x)
{
    long r;
    switch (sel) {
    case 0: r = case_0(x); break;
    case 1: r = case_1(x); break;
    case 2: r = case_2(x); break;
    case 3: r = case_3(x); break;
    case 4: r = case_4(x); break;
    case 5: r = case_5(x); break;
    case 6: r = case_6(x); break;
    case 7: r = case_7(x); break;
    case 8: r = case_8(x); break;
    case 9: r = case_9(x); break;
    default: r = fallback(x); break;
    }
    return r + 1;
}

__attribute__((noipa)) long tail_dispatch(unsigned sel, long x)
{
    switch (sel) {
    case 0: return tj_0(x);
    case 1: return tj_1(x);
    case 2: return tj_2(x);
    case 3: return tj_3(x);
    case 4: return tj_4(x);
    case 5: return tj_5(x);
    case 6: return tj_6(x);
    case 7: return tj_7(x);
    case 8: return tj_8(x);
    case 9: return tj_9(x);
    default: return fallback(x);
    }
}

int main(void)
{
    long a = 0, b = 0;
    for (long i = 0; i < 200; i++) {
        a += dispatch((unsigned)(i % 10), i);
        b += tail_dispatch((unsigned)((i * 7) % 10), i);
    }
    printf("a=%ld b=%ld sink=%ld\n", a, b, (long)sink);
    return 0;
}
