/* bench/procs/attach_target.c: the process bench/procs.py attach attaches to. Linked with a
 * program of bench/gen_many.py whose main is renamed many_main (-Dmain=many_main): ~10000
 * functions. Calls all of them once, prints "ready PID" (stdout, flushed), then calls the first
 * 100 of them every millisecond until killed, so an attached tracer sees first hits and traps. */
#include <stdio.h>
#include <unistd.h>

int many_main(int argc, char **argv);

int main(void)
{
    char *all[] = {"many", NULL}, *some[] = {"many", "100", NULL};
    FILE *null = freopen("/dev/null", "w", stdout) ? stdout : NULL;
    many_main(1, all);
    fflush(stdout);
    if (!null)
        return 1;
    fprintf(stderr, "ready %d\n", (int)getpid());
    for (;;) {
        many_main(2, some);
        usleep(1000);
    }
}
