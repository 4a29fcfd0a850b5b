/* A SIGSEGV handler that siglongjmps out of the faulting function. */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

/* expect: main 1 */
/* expect: crash 8 */
/* expect: on_segv 8 */
/* expect: recovered 8 */

static sigjmp_buf env;
int *volatile bad_ptr; /* NULL */

__attribute__((noipa)) int crash(int v) { *bad_ptr = v; return v + 1; }
__attribute__((noipa)) void on_segv(int sig) { siglongjmp(env, sig); }
__attribute__((noipa)) int recovered(int n) { return n + 1; }

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_segv;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, NULL);
    volatile int n = 0;
    while (n < 8) {
        if (sigsetjmp(env, 1) == 0)
            crash(n);
        else
            n = recovered(n);
    }
    printf("recovered %d times\n", n);
    return 0;
}
