/* A signal handler entered by the kernel: raise(SIGUSR1) 25 times. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

/* expect: main 1 */
/* expect: on_usr1 25 */
/* expect: handler_work 25 */
/* expect: fire 25 */

static volatile sig_atomic_t hits;

__attribute__((noipa)) void handler_work(int sig) { hits += sig == SIGUSR1; }
__attribute__((noipa)) void on_usr1(int sig) { handler_work(sig); }
__attribute__((noipa)) void fire(void) { raise(SIGUSR1); }

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    for (int i = 0; i < 25; i++)
        fire();
    printf("hits=%d\n", (int)hits);
    return 0;
}
