/* dispatch.c — a bytecode loop: a switch on 32 opcodes behind a jump table,
 * the shape of an interpreter's dispatch (sqlite3VdbeExec, luaV_execute) in
 * a few hundred bytes (bench/copies.py).  Its copy without probes shows
 * what relocation alone costs such a loop: rel32 jumps where the compiler
 * wrote rel8 and a loop head off its alignment cost 17 % here. */
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
__attribute__((noinline)) uint64_t helper(uint64_t x) { return x * 2654435761u ^ (x >> 7); }
__attribute__((noinline)) uint64_t run(const uint8_t *code, size_t n, uint64_t iters) {
  uint64_t a = 1, b = 2, c = 3;
  for (uint64_t it = 0; it < iters; it++)
    for (size_t pc = 0; pc < n; pc++) {
      switch (code[pc]) {
#define C(k, e) case k: e; break;
        C(0, a += b) C(1, b ^= a) C(2, c += a * 3) C(3, a = helper(a)) C(4, b -= c) C(5, c ^= b << 1)
        C(6, a += 7) C(7, b = (b >> 3) | 1) C(8, c = c * 5 + a) C(9, a ^= c) C(10, b += helper(c))
        C(11, c -= 9) C(12, a = a * 3 + b) C(13, b ^= 0x55) C(14, c += b) C(15, a -= c >> 2)
        C(16, b = b * 7) C(17, c ^= a >> 5) C(18, a += c) C(19, b -= a) C(20, c = helper(b))
        C(21, a ^= b) C(22, b += 11) C(23, c = c * 9) C(24, a -= 3) C(25, b ^= c)
        C(26, c += 13) C(27, a = a * 11) C(28, b -= 5) C(29, c ^= 77) C(30, a += b * c)
        default: a++;
      }
    }
  return a ^ b ^ c;
}
int main(int argc, char **argv) {
  size_t n = 4096; uint8_t *code = malloc(n); uint64_t s = 12345;
  for (size_t i = 0; i < n; i++) { s = s * 6364136223846793005u + 1; code[i] = (s >> 33) % 32; }
  uint64_t iters = argc > 1 ? strtoull(argv[1], 0, 10) : 20000;
  printf("%llu\n", (unsigned long long)run(code, n, iters));
  return 0;
}
