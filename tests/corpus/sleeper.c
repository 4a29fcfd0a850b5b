/* For the SIGKILL tests: makes known calls, prints a marker line with its
 * pid (only without arguments, so the generic test's output is stable), then sleeps forever without calling anything of its own.  The harness
 * kills it (or lazyprobe) with SIGKILL after the marker. */
#include <stdio.h>
#include <unistd.h>

/* args: x */
/* expect: main 1 */
/* expect: before_kill 42 */
/* expect: marker 1 */
/* expect: never 0 */

volatile long acc;

__attribute__((noipa)) void before_kill(int i) { acc += i; }
__attribute__((noipa)) void marker(int show_pid)
{
    if (show_pid)
        printf("READY pid=%d acc=%ld\n", (int)getpid(), (long)acc);
    else
        printf("READY acc=%ld\n", (long)acc);
    fflush(stdout);
}
__attribute__((noipa)) void never(void) { acc = -1; }

int main(int argc, char **argv)
{
    (void)argv;
    for (int i = 0; i < 42; i++)
        before_kill(i);
    marker(argc == 1);
    if (argc > 1)   /* "sleeper x": exit at once (used to test it natively) */
        return 0;
    for (;;)
        pause();
    never();
    return 0;
}
