// A catch in a loop: at -O2 gcc moves the catch into main.cold, after a nop
// (a landing pad may not be the first byte of its region), and main jumps
// into main.cold past its start to throw: main.cold is never entered at its
// entry.  Prints 703.  main 1.
#include <cstdio>

int f(int x) {
  if (x > 2) throw x;
  return x;
}

int main() {
  int s = 0;
  for (int i = 0; i < 5; i++) {
    try {
      s += f(i);
    } catch (int x) {
      s += 100 * x;
    }
  }
  std::printf("%d\n", s);
}
