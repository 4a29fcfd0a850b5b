/* Branch and jump-table edges whose counts are known by construction (the
 * arcs/ tests; built there with -g so that lazyprobe.lines finds the lines).
 * A comment "@LABEL" marks a source line; see tests/README.md for
 * "expect-branch" and "expect-case".
 *
 * mod7(): i = 0..999, "i % 7 == 0" holds for 143 values (0, 7, ..., 994):
 *   the conditional branch on the @mod7 line goes one way 143 times and the
 *   other way 857 times.  The calls on both sides keep it a real branch
 *   (no cmov/setcc) at every -O level.
 * div15(): i = 0..999, "i % 3 == 0" on the @div3 line: 334 true / 666
 *   false; the result of is5(i), called only for the 334 multiples of 3,
 *   is tested on the @div5 line: 67 true / 267 false (multiples of 15
 *   below 1000: 67).  The call, in an inner if of its own, keeps gcc from
 *   fusing the two tests into one (it does for "i % 3 == 0 && i % 5 == 0"
 *   at -O2) and puts the second test on its own line.
 * classify(k): a dense 10-case switch (a jump table at -O0/-O2/-O3, checked
 *   with objdump -d); main calls it 3*(k+1) times for k = 0..9 (case k runs
 *   3, 6, ..., 30 times: 165 in all) and once each for k = 10, 11, 12
 *   (default: 3).  Every case calls a distinct function c_K, so no two case
 *   bodies can be merged. */
#include <stdio.h>

/* expect: main 1 */
/* expect: mod7 1 */
/* expect: hit7 143 */
/* expect: miss7 857 */
/* expect: div15 1 */
/* expect: is5 334 */
/* expect: hit15 67 */
/* expect: classify 168 */
/* expect: c_0 3 */
/* expect: c_1 6 */
/* expect: c_2 9 */
/* expect: c_3 12 */
/* expect: c_4 15 */
/* expect: c_5 18 */
/* expect: c_6 21 */
/* expect: c_7 24 */
/* expect: c_8 27 */
/* expect: c_9 30 */
/* expect: c_default 3 */

/* expect-branch: mod7 143/857 */
/* expect-branch: div3 334/666 */
/* expect-branch: div5 67/267 */
/* expect-case: case0 3 */
/* expect-case: case1 6 */
/* expect-case: case2 9 */
/* expect-case: case3 12 */
/* expect-case: case4 15 */
/* expect-case: case5 18 */
/* expect-case: case6 21 */
/* expect-case: case7 24 */
/* expect-case: case8 27 */
/* expect-case: case9 30 */

volatile long sink;

__attribute__((noipa)) void hit7(int i) { sink += i; }
__attribute__((noipa)) void miss7(int i) { sink -= i; }
__attribute__((noipa)) void hit15(int i) { sink ^= i; }
__attribute__((noipa)) int is5(int i) { return i % 5 == 0; }

__attribute__((noipa)) void mod7(int n)
{
    for (int i = 0; i < n; i++) {
        if (i % 7 == 0) /* @mod7 */
            hit7(i);
        else
            miss7(i);
    }
}

__attribute__((noipa)) void div15(int n)
{
    for (int i = 0; i < n; i++) {
        if (i % 3 == 0) {   /* @div3 */
            if (is5(i))     /* @div5 */
                hit15(i);
        }
    }
}

__attribute__((noipa)) long c_0(long x) { sink += x; return x * 3 + 0; }
__attribute__((noipa)) long c_1(long x) { sink += x; return x * 4 + 1; }
__attribute__((noipa)) long c_2(long x) { sink += x; return x * 5 + 2; }
__attribute__((noipa)) long c_3(long x) { sink += x; return x * 6 + 3; }
__attribute__((noipa)) long c_4(long x) { sink += x; return x * 7 + 4; }
__attribute__((noipa)) long c_5(long x) { sink += x; return x * 8 + 5; }
__attribute__((noipa)) long c_6(long x) { sink += x; return x * 9 + 6; }
__attribute__((noipa)) long c_7(long x) { sink += x; return x * 10 + 7; }
__attribute__((noipa)) long c_8(long x) { sink += x; return x * 11 + 8; }
__attribute__((noipa)) long c_9(long x) { sink += x; return x * 12 + 9; }
__attribute__((noipa)) long c_default(long x) { return -x; }

__attribute__((noipa)) long classify(unsigned k)
{
    long r;
    switch (k) {
    case 0: r = c_0(k); break; /* @case0 */
    case 1: r = c_1(k); break; /* @case1 */
    case 2: r = c_2(k); break; /* @case2 */
    case 3: r = c_3(k); break; /* @case3 */
    case 4: r = c_4(k); break; /* @case4 */
    case 5: r = c_5(k); break; /* @case5 */
    case 6: r = c_6(k); break; /* @case6 */
    case 7: r = c_7(k); break; /* @case7 */
    case 8: r = c_8(k); break; /* @case8 */
    case 9: r = c_9(k); break; /* @case9 */
    default: r = c_default(k); break;
    }
    return r + 1;
}

int main(void)
{
    long total = 0;
    mod7(1000);
    div15(1000);
    for (unsigned k = 0; k < 10; k++)
        for (unsigned r = 0; r < 3 * (k + 1); r++)
            total += classify(k);
    for (unsigned k = 10; k < 13; k++)
        total += classify(k);
    printf("sink = %ld total = %ld\n", (long)sink, total);
    return 0;
}
