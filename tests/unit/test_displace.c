/* test_displace.c — arch/x86_64/x64_displace.c: which first instructions of
 * a function may run elsewhere while its entry holds a jmp.  Hand-assembled
 * functions, each with what it must give: a prologue that may (its window's
 * length and instructions), one whose loop head lies inside the window (a
 * rel8 branch back, and a rel32 one 300 bytes on: 0), a syscall or an
 * indirect call in the window (0), a direct call that ends it (taken, and
 * run: its callee returns to the function at home), a window ended early by a ret (taken; refused when a
 * branch lands in the bytes the jmp takes after it), bytes that read as a
 * branch into the window inside an immediate of the instructions run from
 * the entry (taken, after a call of another function too) and after a ret
 * or a call into the function's own bytes (0), memory operands of
 * every kind (allowed: a fault in the copy is moved home); where each
 * instruction lies in a copy; and a window's copy run in this process, which
 * returns what the function does.  No arguments; exit status 0 when all
 * pass. */
#include <string.h>
#include <sys/mman.h>

#include "unit.h"
#include "x64_displace.h"

/* The window of the SIZE bytes CODE (at address 0x1000) and how many
 * instructions it has. */
static size_t window(const uint8_t *code, size_t size, size_t *n) {
  x64_insn in[X64_DISPLACE_MAX];
  return x64_displace_window(code, size, 0x1000, in, n);
}

int main(void) {
  const char *name = "displace";
  size_t n;

  static const uint8_t prologue[] = {0x53, 0x48, 0x89, 0xfb, 0x48,
                                     0x8d, 0x04, 0x33, /* push rbx; mov rbx, rdi; lea rax, [rbx+rsi] */
                                     0x48, 0x01, 0xd0, 0x5b, 0xc3}; /* add rax, rdx; pop rbx; ret */
  CHECK(window(prologue, sizeof prologue, &n) == 8 && n == 3, "prologue: window %zu, %zu instructions",
        window(prologue, sizeof prologue, &n), n);

  static const uint8_t loop8[] = {0x31, 0xc0, 0x01, 0xf8, 0xff,
                                  0xce, 0x75, 0xfa, 0xc3}; /* xor; L: add; dec; jnz L; ret */
  CHECK(window(loop8, sizeof loop8, &n) == 0, "a rel8 loop back to +2 lets the window run elsewhere");
  uint8_t loop8_ok[sizeof loop8];
  memcpy(loop8_ok, loop8, sizeof loop8);
  loop8_ok[7] = 0xf8; /* jnz back to +0: the entry, not the window's inside */
  CHECK(window(loop8_ok, sizeof loop8_ok, &n) == 6 && n == 3, "a loop back to the entry: window %zu",
        window(loop8_ok, sizeof loop8_ok, &n));

  uint8_t loop32[320];
  memset(loop32, 0x90, sizeof loop32); /* nops */
  memcpy(loop32, "\x31\xc0\x01\xf8\xff\xce", 6);
  int32_t back = 2 - (300 + 5);
  loop32[300] = 0xe9; /* jmp rel32 to +2, 300 bytes on (found by the 16-byte scan) */
  memcpy(loop32 + 301, &back, 4);
  loop32[319] = 0xc3;
  CHECK(window(loop32, sizeof loop32, &n) == 0, "a rel32 jmp back to +2 from 300 bytes on");
  back = 3 - (300 + 6);
  memcpy(loop32 + 300, "\x0f\x85", 2); /* jnz rel32 to +3: inside the add, still inside the window */
  memcpy(loop32 + 302, &back, 4);
  CHECK(window(loop32, sizeof loop32, &n) == 0, "a rel32 jcc back to +3 from 300 bytes on");
  back = 6 - (300 + 6);
  memcpy(loop32 + 302, &back, 4); /* to +6: past the window */
  CHECK(window(loop32, sizeof loop32, &n) == 6, "a rel32 jcc past the window: %zu", window(loop32, sizeof loop32, &n));

  /* bytes that read as `jnz -4` (75 fc) at +6, landing at +4, inside the window: part of an
   * immediate of the instructions that run one after another from the entry, they are no
   * branch; the same bytes after a ret, a jmp or a call may be one */
  static const uint8_t imm[] = {0x48, 0x89, 0xf8, 0x90, 0x90, /* mov rax, rdi; nop; nop */
                                0xb9, 0x75, 0xfc, 0x00, 0x00, /* mov ecx, 0xfc75 */
                                0x01, 0xc8, 0xc3};            /* add eax, ecx; ret */
  CHECK(window(imm, sizeof imm, &n) == 5 && n == 3, "an immediate that reads as a jnz into the window: %zu",
        window(imm, sizeof imm, &n));
  static const uint8_t after_ret[] = {0x48, 0x89, 0xf8, 0x90, 0x90, 0xc3, 0x75, 0xfc, 0xc3}; /* ...; ret; jnz -4 */
  CHECK(window(after_ret, sizeof after_ret, &n) == 0, "a jnz into the window after a ret");
  uint8_t after_call[] = {0x48, 0x89, 0xf8, 0x90, 0x90, 0xe8, 0, 0, 0, 0, /* ...; call +10 */
                          0xb9, 0x75, 0xf7, 0x00, 0x00, 0xc3}; /* 75 f7 at +11: lands at +4 */
  CHECK(window(after_call, sizeof after_call, &n) == 0,
        "bytes that read as a jnz into the window after a call into the function (over data)");
  memcpy(after_call + 6, "\x00\x10\x00\x00", 4); /* call +0x100a: another function */
  CHECK(window(after_call, sizeof after_call, &n) == 5,
        "an immediate that reads as a jnz into the window after a call of another function: %zu",
        window(after_call, sizeof after_call, &n));
  uint8_t at_start[sizeof imm];
  memcpy(at_start, imm, sizeof imm);
  memcpy(at_start + 5, "\x75\xfb\x90\x90\x90", 5); /* jnz -5 at +5: an instruction of the run, to +2 */
  CHECK(window(at_start, sizeof at_start, &n) == 0, "a jnz of the run into the window");

  static const uint8_t call[] = {0x53, 0xe8, 0, 0, 0, 0, 0x5b, 0xc3}; /* push rbx; call; pop rbx; ret */
  CHECK(window(call, sizeof call, &n) == 6 && n == 2, "a call that ends the window: %zu",
        window(call, sizeof call, &n));
  static const uint8_t icall[] = {0x53, 0xff, 0xd0, 0x90, 0x90, 0x5b, 0xc3}; /* push rbx; call rax */
  CHECK(window(icall, sizeof icall, &n) == 0, "an indirect call in the window");
  static const uint8_t load[] = {0x48, 0x8b, 0x07, 0x48, 0x83, 0xc0, 0x01, 0xc3}; /* mov rax, [rdi]; add rax, 1; ret */
  CHECK(window(load, sizeof load, &n) == 7 && n == 2, "a load through rdi: window %zu", window(load, sizeof load, &n));
  static const uint8_t moffs[] = {0x48, 0xa1, 1, 2, 3, 4, 5, 6, 7, 8, 0xc3}; /* mov rax, [moffs64] */
  CHECK(window(moffs, sizeof moffs, &n) == 10 && n == 1, "a load from moffs64: window %zu",
        window(moffs, sizeof moffs, &n));
  static const uint8_t sys[] = {0x0f, 0x05, 0x48, 0x83, 0xc0, 0x01, 0xc3}; /* syscall: not a plain instruction */
  CHECK(window(sys, sizeof sys, &n) == 0, "a syscall in the window");
  static const uint8_t shift[] = {0x48, 0x89, 0xf8, 0x48, 0xd1, 0xff, 0xc3}; /* mov rax, rdi; sar rdi */
  CHECK(window(shift, sizeof shift, &n) == 6 && n == 2, "a shift: window %zu", window(shift, sizeof shift, &n));
  static const uint8_t stack[] = {0x48, 0x89, 0x5c, 0x24, 0xf8, 0x31, 0xc0, 0xc3}; /* mov [rsp-8], rbx; xor eax, eax */
  CHECK(window(stack, sizeof stack, &n) == 5 && n == 1, "a store to the stack: window %zu",
        window(stack, sizeof stack, &n));
  static const uint8_t canary[] = {0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0, 0, 0, 0xc3}; /* mov rax, fs:0x28 */
  CHECK(window(canary, sizeof canary, &n) == 9 && n == 1, "fs-relative: window %zu", window(canary, sizeof canary, &n));
  static const uint8_t global[] = {0x80, 0x3d, 0x10, 0, 0, 0, 0, 0x74, 0x01, 0xc3, 0xc3}; /* cmp byte [rip+16], 0; je */
  CHECK(window(global, sizeof global, &n) == 7 && n == 1, "RIP-relative: window %zu",
        window(global, sizeof global, &n));
  static const uint8_t tiny[] = {0x31, 0xc0, 0xc3}; /* xor eax, eax; ret: its padding under the jmp */
  CHECK(window(tiny, sizeof tiny, &n) == 3 && n == 2, "a function of 3 bytes: window %zu",
        window(tiny, sizeof tiny, &n));
  static const uint8_t early[] = {0x74, 0x01, 0xc3, 0x31, 0xc0, 0xc3}; /* je +1 (to 3); ret; xor; ret */
  CHECK(window(early, sizeof early, &n) == 0, "a ret 2 bytes in, a branch to 3: under the jmp");
  static const uint8_t unfinished[] = {0x31, 0xc0}; /* xor eax, eax, and the function's end */
  CHECK(window(unfinished, sizeof unfinished, &n) == 0, "2 bytes without a ret");

  /* Where each instruction of a copy lies: a rel8 jcc becomes rel32 (4 bytes more), the jmp back comes last. */
  x64_insn in[X64_DISPLACE_MAX];
  size_t offsets[X64_DISPLACE_MAX];
  static const uint8_t branchy[] = {0x85, 0xff, 0x74, 0x02, 0x53, 0x5b, 0xc3, 0xc3}; /* test; je +2; push rbx */
  CHECK(x64_displace_window(branchy, sizeof branchy, 0x1000, in, &n) == 5 && n == 3, "test; je; push: window");
  size_t size = x64_displaced_layout(in, n, offsets);
  CHECK(size == 2 + 6 + 1 + 5 && offsets[0] == 0 && offsets[1] == 2 && offsets[2] == 8,
        "layout: %zu bytes, at %zu %zu %zu", size, offsets[0], offsets[1], offsets[2]);
  CHECK(x64_displace_window(prologue, sizeof prologue, 0x1000, in, &n) == 8 &&
            x64_displaced_layout(in, n, offsets) == 8 + 5 && offsets[1] == 1 && offsets[2] == 4,
        "the prologue's layout");

  /* The prologue's window copied next to the function and run: push rbx; mov
   * rbx, rdi; lea, then on at +8. */
  uint8_t *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) return 1;
  memcpy(page, prologue, sizeof prologue);
  size_t len = x64_displace_window(page, sizeof prologue, (uintptr_t)page, in, &n);
  x64_writer w;
  CHECK(len == 8 && x64_writer_init(&w, page + 2048, (uintptr_t)page + 2048, 0) == LP_OK, "window of the copy");
  x64_put_displaced(&w, in, n, (uintptr_t)page + len);
  CHECK(x64_writer_flush(&w) == LP_OK && w.offset <= X64_DISPLACED_MAX_SIZE, "copy written: %zu bytes", w.offset);
  x64_writer_clear(&w);
  memset(page, 0xcc, len); /* the entry no longer holds them */
  long (*f)(long, long, long) = (long (*)(long, long, long))(void *)(page + 2048);
  CHECK(f(100, 20, 3) == 123, "the copy's sum: %ld", f(100, 20, 3));

  /* A window that ends with a call, run: push rbx; mov ebx, edi; call g, whose copy pushes the
   * address after the call at home, where g returns: add eax, ebx; pop rbx; ret. */
  static const uint8_t calls_g[] = {0x53, 0x89, 0xfb, 0xe8, 0, 0, 0, 0, 0x01, 0xd8, 0x5b, 0xc3};
  static const uint8_t g[] = {0x8d, 0x47, 0x0a, 0xc3}; /* lea eax, [rdi+10]; ret */
  memset(page, 0xcc, 4096);
  memcpy(page, calls_g, sizeof calls_g);
  memcpy(page + 64, g, sizeof g);
  int32_t rel = 64 - 8;
  memcpy(page + 4, &rel, 4);
  len = x64_displace_window(page, sizeof calls_g, (uintptr_t)page, in, &n);
  CHECK(len == 8 && n == 3 && x64_writer_init(&w, page + 2048, (uintptr_t)page + 2048, 0) == LP_OK,
        "window ended by a call: %zu", len);
  x64_put_displaced(&w, in, n, (uintptr_t)page + len);
  CHECK(x64_writer_flush(&w) == LP_OK && w.offset <= X64_DISPLACED_MAX_SIZE &&
            w.offset == x64_displaced_layout(in, n, offsets) && offsets[2] == 3,
        "copy with the call written: %zu bytes", w.offset);
  x64_writer_clear(&w);
  memset(page, 0xcc, len);
  long (*h)(long) = (long (*)(long))(void *)(page + 2048);
  CHECK(h(7) == 24, "the copy's call returned home: %ld", h(7));

  printf("%s: %d checks, %d failures\n", name, checks, failures);
  return failures != 0;
}
