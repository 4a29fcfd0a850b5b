/* setjmp/longjmp across frames: level3 longjmps back to main, skipping the
 * returns of level1..level3.  10 rounds. */
#include <setjmp.h>
#include <stdio.h>

/* expect: main 1 */
/* expect: level1 10 */
/* expect: level2 10 */
/* expect: level3 10 */
/* expect: after_jump 10 */
/* expect: never_called 0 */

static jmp_buf env;
volatile int depth_sum;

__attribute__((noipa)) void never_called(void) { puts("never"); }
__attribute__((noipa)) void level3(int r) { depth_sum += 3; longjmp(env, r + 1); }
__attribute__((noipa)) void level2(int r) { depth_sum += 2; level3(r); never_called(); }
__attribute__((noipa)) void level1(int r) { depth_sum += 1; level2(r); never_called(); }
__attribute__((noipa)) int after_jump(int v) { return v * 2; }

int main(void)
{
    volatile int rounds = 0, acc = 0;
    int v = setjmp(env);
    if (v != 0)
        acc += after_jump(v);
    if (rounds < 10) {
        rounds++;
        level1(rounds);
    }
    printf("rounds=%d acc=%d depth_sum=%d\n", rounds, acc, depth_sum);
    return 0;
}
