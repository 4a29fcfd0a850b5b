// For attach: the program's first throw comes after lazyprobe detached,
// through copies made while it was attached: main (moved into its copy by
// the attach) calls h, h calls k, both relocated at their first hit; after
// SIGUSR1 k throws and main catches, through the copies of k, h and main.
// Nothing throws while attached, so all their unwind information is still
// pending at the detach.  Prints "ready", then, after SIGUSR1 and 1000
// throws caught, "done".
#include <csignal>
#include <cstdio>
#include <cstring>

static volatile std::sig_atomic_t late;
volatile long sink;

static void on_usr1(int) { late = 1; }

__attribute__((noinline)) int k(long i) {
  if (late && i % 3 == 0) throw static_cast<int>(i & 0xff);
  return static_cast<int>(i & 7);
}

__attribute__((noinline)) long h(long i) {
  long v = k(i);
  sink += v;
  return v;
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
    try {
      sink += h(i);
    } catch (int y) {
      sink += y;
      caught++;
    }
  }
  std::printf("done\n");
}
