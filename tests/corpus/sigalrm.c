/* SIGALRM from setitimer(ITIMER_REAL) arriving at an arbitrary point of a
 * busy loop.  The timer is one-shot and re-armed by main after each tick, so
 * exactly 3 signals arrive.  spin() is called a timing-dependent number of
 * times, so it has no expect line. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

/* expect: main 1 */
/* expect: on_alarm 3 */
/* expect: arm 3 */
/* expect: summary 1 */

static volatile sig_atomic_t ticks;
volatile unsigned long work;

__attribute__((noipa)) void on_alarm(int sig) { (void)sig; ticks++; }

__attribute__((noipa)) void arm(void)
{
    struct itimerval it;
    memset(&it, 0, sizeof it);
    it.it_value.tv_usec = 3000; /* 3 ms, no interval */
    setitimer(ITIMER_REAL, &it, NULL);
}

__attribute__((noipa)) void spin(void)
{
    for (int i = 0; i < 1000; i++)
        work += (unsigned long)i * 7;
}

__attribute__((noipa)) void summary(int t) { printf("ticks=%d\n", t); }

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    for (int round = 1; round <= 3; round++) {
        arm();
        while (ticks < round)
            spin();
    }
    summary((int)ticks);
    return 0;
}
