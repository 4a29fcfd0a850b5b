/* More processes at once than the tracer watches bells of (core/doorbell.h:
 * 127): main forks NPROCS children, which all wait until every one exists
 * (the pipe's write end closes), then each makes its first call of work()
 * through a pointer (never relocated along with a caller) and exits with
 * its result.  The children past the limit have their stubs turned back
 * into breaks (core/stubs.c: stubs_disable): their first hits trap.  Prints
 * the sum of the children's exit statuses.
 * Counts by construction: work runs once in each child (NPROCS in all),
 * main once. */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#define NPROCS 132

__attribute__((noipa)) long work(long x) { return (x * 7 + 3) & 0x7f; }
long (*volatile work_fn)(long) = work;

int main(void) {
  int go[2];
  if (pipe(go) != 0) return 1;
  for (int i = 0; i < NPROCS; i++) {
    pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) {
      char c;
      close(go[1]);
      while (read(go[0], &c, 1) > 0) continue; /* end of file: every child exists */
      _exit((int)work_fn(i));
    }
  }
  close(go[0]);
  close(go[1]);
  long sum = 0;
  for (int i = 0; i < NPROCS; i++) {
    int status;
    if (wait(&status) > 0 && WIFEXITED(status)) sum += WEXITSTATUS(status);
  }
  printf("%d children, sum %ld\n", NPROCS, sum);
  return 0;
}
