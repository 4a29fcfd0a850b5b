// C++ exceptions across two instrumented modules, the program and its own
// library (tests/real/xlib_throw_lib.cpp), in three rounds of ROUNDS calls
// each; each round's first throw meets copies made since the one before, in
// both modules, whose unwind information is registered then:
//   round 1: main -> round1 -> lib_throw throws, round1 catches
//   round 2: main -> round2 -> lib_catch -> callback throws every other
//            call, lib_catch catches
//   round 3: main -> round3 -> lib_rethrow -> lib_throw throws, lib_rethrow
//            rethrows, round3 catches
// std::terminate must not be reached (its handler prints and exits 9).
// Counts by construction (ROUNDS = 10): round1, round2, round3, lib_throw
// 10 + 10, lib_catch 10, lib_rethrow 10, callback 10; prints "10 -25 30".
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>

void lib_throw(int i);
int lib_catch(int (*callback)(int), int i);
void lib_rethrow(int i);

#define ROUNDS 10

__attribute__((noipa)) int callback(int i) {
  if (i % 2) throw i;
  return 0;
}

__attribute__((noipa)) int round1(int i) {
  try {
    lib_throw(i);
  } catch (std::exception &) {
    return 1;
  }
  return 0;
}

__attribute__((noipa)) int round2(int i) { return lib_catch(callback, i); }

__attribute__((noipa)) int round3(int i) {
  try {
    lib_rethrow(i);
  } catch (std::runtime_error &) {
    return 3;
  }
  return 0;
}

static void on_terminate() {
  std::printf("terminate reached\n");
  std::fflush(stdout);
  std::_Exit(9);
}

int main() {
  std::set_terminate(on_terminate);
  int a = 0, b = 0, c = 0;
  for (int i = 0; i < ROUNDS; i++) a += round1(i);
  for (int i = 0; i < ROUNDS; i++) b += round2(i);
  for (int i = 0; i < ROUNDS; i++) c += round3(i);
  std::printf("%d %d %d\n", a, b, c);
  return 0;
}
