/* bench/procs/forkexec.c: the driver of bench/procs.py forkexec.
 *     forkexec N PROGRAM [ARGS...]
 * fork()s and execv()s PROGRAM N times, one after the other, waiting for each; fails (status 1)
 * if a child does not exit with status 0. Prints "forkexec: N children" at the end. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: forkexec N PROGRAM [ARGS...]\n");
        return 2;
    }
    long n = atol(argv[1]);
    for (long i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid < 0) {
            perror("fork");
            return 1;
        }
        if (pid == 0) {
            execv(argv[2], argv + 2);
            perror("execv");
            _exit(127);
        }
        int st;
        if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "forkexec: child %ld failed (status 0x%x)\n", i, st);
            return 1;
        }
    }
    printf("forkexec: %ld children\n", n);
    return 0;
}
