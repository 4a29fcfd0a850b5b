/* The floor of a lazy first hit on this machine: one int3 -> ptrace stop -> tracer wakes in
 * waitpid -> PTRACE_GETREGS -> PTRACE_CONT -> tracee resumes, with nothing else done.
 *
 *   trap_floor [N]    (default 3000 traps)
 *
 * Prints `trap_floor: traps=N wall_us_per_trap=X cpu_us_per_trap=Y` where cpu is the tracer's
 * plus the tracee's user+sys. bench/run.py runs it in every round of the `many` workload.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double tv(struct timeval t) { return t.tv_sec + t.tv_usec * 1e-6; }

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 3000;
    pid_t pid = fork();
    if (pid < 0) { perror("fork"); return 1; }
    if (pid == 0) {
        if (ptrace(PTRACE_TRACEME, 0, 0, 0) != 0) _exit(2);
        raise(SIGSTOP);
        for (int i = 0; i < n; i++)
            __asm__ volatile("int3");
        _exit(0);
    }
    int st;
    if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st)) { fprintf(stderr, "no initial stop\n"); return 1; }
    ptrace(PTRACE_SETOPTIONS, pid, 0, PTRACE_O_EXITKILL);
    struct rusage r0;
    getrusage(RUSAGE_SELF, &r0);
    double t0 = now();
    int traps = 0;
    for (;;) {
        if (ptrace(PTRACE_CONT, pid, 0, 0) != 0) { perror("PTRACE_CONT"); return 1; }
        if (waitpid(pid, &st, 0) != pid) { perror("waitpid"); return 1; }
        if (WIFEXITED(st) || WIFSIGNALED(st)) break;
        if (WIFSTOPPED(st) && WSTOPSIG(st) == SIGTRAP) {
            struct user_regs_struct regs;
            ptrace(PTRACE_GETREGS, pid, 0, &regs);   /* what any handler does first */
            traps++;
        }
    }
    double wall = now() - t0;
    struct rusage self, kids;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &kids);
    double cpu = tv(self.ru_utime) + tv(self.ru_stime) - tv(r0.ru_utime) - tv(r0.ru_stime)
               + tv(kids.ru_utime) + tv(kids.ru_stime);
    printf("trap_floor: traps=%d wall_us_per_trap=%.2f cpu_us_per_trap=%.2f\n",
           traps, traps ? wall / traps * 1e6 : 0, traps ? cpu / traps * 1e6 : 0);
    return traps == n ? 0 : 1;
}
