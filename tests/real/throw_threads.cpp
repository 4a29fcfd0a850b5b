// C++ exceptions thrown in four threads at once: each thread's first throw
// meets the break where lazyprobe registers the copies' unwind information
// while another thread is registering it.  The threads wait for each other
// before each of two phases (the second calls functions not run before, so
// their copies are registered then).  Without an argument each thread runs
// ITERATIONS per phase and main prints "caught N" (by construction: leaf
// throws when i % 3 == 0, 667 of 2000, so N = 4 * 2 * 667 = 5336; leaf and
// leaf2 run 8000 times each, mid and mid_b 4000, mid2 and mid2_b 4000);
// with "loop" it prints "ready", the threads throw until SIGUSR1, then
// "done" (for lazyprobe attach).
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

#define THREADS 4
#define ITERATIONS 2000

static std::atomic<bool> stop{false};
static std::atomic<int> arrived{0};
static std::atomic<long> caught{0};
static bool loop;

__attribute__((noipa)) int leaf(long i) {
  if (i % 3 == 0) throw std::runtime_error("leaf");
  return static_cast<int>(i);
}
__attribute__((noipa)) int mid(long i) { return leaf(i) + 1; }
__attribute__((noipa)) int mid2(long i) { return leaf(i) + 2; }

__attribute__((noipa)) int leaf2(long i) {
  if (i % 3 == 0) throw i;
  return static_cast<int>(i);
}
__attribute__((noipa)) int mid_b(long i) { return leaf2(i) + 1; }
__attribute__((noipa)) int mid2_b(long i) { return leaf2(i) + 2; }

static void all_here(int phase) { /* every thread, then all go at once */
  arrived++;
  while (arrived.load() < THREADS * phase) {
  }
}

static void worker(int id) {
  all_here(1);
  for (long i = 0; loop ? !stop.load() : i < ITERATIONS; i++) {
    try {
      if (id & 1) mid(i);
      else mid2(i);
    } catch (std::exception &) {
      caught++;
    }
  }
  all_here(2);
  for (long i = 0; loop ? !stop.load() : i < ITERATIONS; i++) {
    try {
      if (id & 1) mid_b(i);
      else mid2_b(i);
    } catch (long) {
      caught++;
    }
  }
}

static void on_usr1(int) { stop = true; }

int main(int argc, char **argv) {
  loop = argc > 1 && !std::strcmp(argv[1], "loop");
  std::signal(SIGUSR1, on_usr1);
  std::vector<std::thread> threads;
  for (int k = 0; k < THREADS; k++) threads.emplace_back(worker, k);
  if (loop) {
    std::printf("ready\n");
    std::fflush(stdout);
  }
  for (auto &t : threads) t.join();
  if (loop) std::printf("done\n");
  else std::printf("caught %ld\n", caught.load());
}
