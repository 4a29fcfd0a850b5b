// fork() in a program whose other threads throw all along: three workers
// throw and catch without pause while main forks ROUNDS children one after
// the other, each of which throws and catches 1000 times (child_work) and
// exits 0 when it caught them all.  At the fork a worker may hold the
// unwinder's lock (taken by every lookup once lazyprobe has registered the
// copies' unwind information), be registering copies, or the tracer may
// register some for the parent that the child was forked without.  Prints
// "children ok 10".  child_work is called once in each child: 10.
#include <atomic>
#include <cstdio>
#include <stdexcept>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#define ROUNDS 10

static std::atomic<bool> stop{false};

__attribute__((noipa)) int leaf(long i) {
  if (i % 3 == 0) throw std::runtime_error("leaf");
  return static_cast<int>(i);
}

__attribute__((noipa)) long throw_some(long n) {
  long caught = 0;
  for (long i = 0; i < n; i++) {
    try {
      leaf(i);
    } catch (std::exception &) {
      caught++;
    }
  }
  return caught;
}

__attribute__((noipa)) void worker() {
  while (!stop) throw_some(100);
}

__attribute__((noipa)) long child_work() { return throw_some(3000); }

int main() {
  std::vector<std::thread> workers;
  for (int k = 0; k < 3; k++) workers.emplace_back(worker);
  long ok = 0;
  for (int r = 0; r < ROUNDS; r++) {
    pid_t pid = fork();
    if (pid == 0) _exit(child_work() == 1000 ? 0 : 3);
    int status;
    waitpid(pid, &status, 0);
    ok += WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  stop = true;
  for (auto &w : workers) w.join();
  std::printf("children ok %ld\n", ok);
}
