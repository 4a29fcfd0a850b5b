// For attach and gcc's cold parts: a catch in a loop (at -O2 in main.cold,
// which main jumps into past its start to throw) that throws only once
// SIGUSR1 came, after lazyprobe detached, main still in the copy the attach
// moved it into.  g throws and catches all along, so that the copies are
// registered with the unwinder while attached (copies still run after a
// detach).  Prints "ready", then, after SIGUSR1 and 1000 throws caught in
// main, "done".
#include <csignal>
#include <cstdio>
#include <cstring>

static volatile std::sig_atomic_t late;
volatile long sink;

static void on_usr1(int) { late = 1; }

int f(int x) {
  if (x > 2) throw x;
  return x;
}

__attribute__((noinline)) void g(long i) {
  try {
    if (i % 4096 == 0) throw 1;
  } catch (int) {
    sink++;
  }
}

int main() {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_usr1;
  sigaction(SIGUSR1, &sa, nullptr);
  std::printf("ready\n");
  std::fflush(stdout);
  long caught = 0;
  for (long i = 0; caught < 1000; i++) {
    g(i);
    int x = late ? static_cast<int>(i % 5) : 0;
    try {
      sink += f(x);
    } catch (int y) {
      sink += 100 * y;
      caught++;
    }
  }
  std::printf("done\n");
}
