/* went_on_main.c — drives tests/real/went_on.S (marked/went_on): sum3 and
 * loop_head once each, then a fork child calls late, its first call, and
 * ends at once with _exit: what it ran is counted in its own file, whether
 * or not the tracer came to its stub's ring before it ended.  Prints the
 * results; never() is only named, not called. */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

long sum3(long a, long b, long c);
int loop_head(int x, int n);
long late(long x);
long never(long x);

int main(int argc, char **argv) {
  (void)argv;
  printf("sum3 %ld\n", sum3(1, 20, 300));
  printf("loop_head %d\n", loop_head(3, 1000000));
  fflush(stdout);
  pid_t child = fork();
  if (child == 0) _exit((int)late(argc) & 0x7f);
  int status = 0;
  waitpid(child, &status, 0);
  printf("child %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  if (argc > 5) printf("never %ld\n", never(argc));
  return 0;
}
