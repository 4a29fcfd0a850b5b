// C++ exceptions through instrumented frames.  Each of ROUNDS rounds:
// level0 (catches, counts, rethrows) -> level1 (Guard) -> level2 (Guard) ->
// level3 (Guard, throws Oops).  The guards' destructors run during unwinding;
// main catches the rethrown exception.  A second path throws and catches
// inside one function (local_catch).  A third (guarded_fail, LOCAL times)
// calls a [[noreturn]] function that throws with a Guard alive: at -O0 the
// landing pad that destroys it comes right after the call, where a decoder
// that does not know the callee never returns runs on into it.
// std::terminate must not be reached (its handler would print and exit 9).
// Counts by construction (ROUNDS = 20, LOCAL = 5):
//   level0 20, level1 20, level2 20, level3 20, Guard::~Guard 60 + 5 + 5,
//   Guard::Guard 70, thrower 5, local_catch 5, fail 5, guarded_fail 5,
//   on_terminate 0
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>

#define NOIPA __attribute__((noipa))
static int destroyed, caught_inner, caught_outer, caught_local;
volatile int sink;
static int started = std::atoi("1"); /* a dynamic initializer: code gcov does not list */

struct Oops : std::runtime_error {
  int depth;
  Oops(int d) : std::runtime_error("oops"), depth(d) {}
};

struct Guard {
  int id;
  NOIPA Guard(int i) : id(i) { sink = i; }
  NOIPA ~Guard() { destroyed += 1; sink = id; }
};

NOIPA void level3(int i) {
  Guard g(3);
  if (i >= 0) throw Oops(3);
  sink = i;
}
NOIPA void level2(int i) {
  Guard g(2);
  level3(i);
  sink = 2;
}
NOIPA void level1(int i) {
  Guard g(1);
  level2(i);
  sink = 1;
}
NOIPA void level0(int i) {
  try {
    level1(i);
  } catch (Oops &e) {
    caught_inner += e.depth;
    throw;
  }
}
NOIPA void thrower(int i) { throw i; }
NOIPA int local_catch(  // a signature on two lines: the prologue is on the next
    int i) {
  Guard g(9);
  try {
    thrower(i);
  } catch (int v) {
    caught_local += v;
  }
  return caught_local;
}
[[noreturn]] NOIPA void fail(int i) { throw Oops(i); }
NOIPA int guarded_fail(int i) {
  Guard g(7);
  if (i < 0) return i; /* never */
  fail(i);
}
NOIPA void on_terminate() {
  std::printf("terminate reached\n");
  std::fflush(stdout);
  std::_Exit(9);
}

int main() {
  std::set_terminate(on_terminate);
  for (int i = 0; i < 20; i++) {
    try {
      level0(i);
      std::printf("not thrown\n");
    } catch (std::exception &e) {
      caught_outer++;
    }
  }
  for (int i = 0; i < 5; i++) local_catch(i + 1);
  for (int i = 0; i < 5; i++) {
    try {
      guarded_fail(i);
    } catch (Oops &e) {
      caught_local += e.depth;
    }
  }
  std::printf("destroyed=%d inner=%d outer=%d local=%d\n", destroyed, caught_inner, caught_outer,
              caught_local * started);
  return 0;
}
