// A fork child throws through copies its parent made before the fork and
// never unwound (their unwind information was still waiting to be
// registered in the parent).  The parent calls run(false) once, forks; the
// child calls run(true): deep() throws, main catches.  Each process prints
// what it saw; the child's pid goes to the file argv[1].
// Counts: in each process run 1, middle 1, deep 1; main 1 (the parent's).
#include <cstdio>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>

volatile int sink;

__attribute__((noipa)) void deep(bool fail) {
  if (fail) throw std::runtime_error("from deep");
  sink++;
}
__attribute__((noipa)) void middle(bool fail) {
  deep(fail);
  sink++;
}
__attribute__((noipa)) int run(bool fail) {
  middle(fail);
  return sink;
}

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  std::printf("parent ran: %d\n", run(false));
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    try {
      run(true);
      std::printf("child: no exception\n");
    } catch (const std::exception &e) {
      std::printf("child caught: %s\n", e.what());
    }
    return 0;
  }
  FILE *f = std::fopen(argv[1], "w");
  if (!f) return 3;
  std::fprintf(f, "%d\n", (int)pid);
  std::fclose(f);
  int status = 0;
  waitpid(pid, &status, 0);
  std::printf("child status %d\n", status);
  return 0;
}
