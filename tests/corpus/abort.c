/* Death by a signal: abort() -> SIGABRT, status 134.  Output is flushed
 * first so stdout is deterministic. */
#include <stdio.h>
#include <stdlib.h>

/* expect: main 1 */
/* expect: prepare 4 */
/* expect: die 1 */

__attribute__((noipa)) int prepare(int i) { return i + 10; }

__attribute__((noipa)) void die(int s)
{
    printf("about to abort, s=%d\n", s);
    fflush(stdout);
    abort();
}

int main(void)
{
    int s = 0;
    for (int i = 0; i < 4; i++)
        s += prepare(i);
    die(s);
    return 0;
}
