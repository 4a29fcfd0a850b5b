/* x64_stub.c — the stubs of first calls served without a stop (x64_stub.h). */
#include "x64_stub.h"

#include "x64_writer.h"

#define SPINS 1000   /* pause loops (30-40 us on Zen 4) before the futex wait (docs/PERFORMANCE.md) */
#define SAVED 11     /* pushes below the index: flags, rax, rbx, rcx, rdx, rsi, rdi, r8-r11 */
#define CC_E 0x4
#define CC_NE 0x5

enum { L_COMMON, L_ASKED, L_READY, L_WAIT, L_SPIN, L_SLEEP, L_SERVED, L_ENTRIES, L_GO_ON, NLABELS };

static void put_common(x64_writer *w, uint64_t states, uint64_t summary, uint64_t bell) {
  static const char index_disp = 8 * SAVED;
  /* pop r11, r10, r9, r8, rdi, rsi, rdx, rcx, rbx, rax; popfq */
  static const char pop_all[15] = "\x41\x5b\x41\x5a\x41\x59\x41\x58\x5f\x5e\x5a\x59\x5b\x58\x9d";
  const char store_entry[5] = {'\x48', '\x89', '\x44', '\x24', index_disp}; /* mov [rsp+88], rax */
  const char load_index[4] = {'\x8b', '\x44', '\x24', index_disp};          /* mov eax, [rsp+88] */
  x64_put_bytes(w, "\x9c\x50\x53\x51\x52\x56\x57\x41\x50\x41\x51\x41\x52\x41\x53", 15); /* pushfq, push ... r11 */
  x64_put_bytes(w, load_index, 4);
  x64_put_insn_rip_address(w, (const uint8_t *)"\x48\x8d\x3d\0\0\0\0", 7, 3, states); /* lea rdi, states */
  x64_put_bytes(w, "\x48\x8d\x3c\x87", 4);                /* lea rdi, [rdi+rax*4]: the function's word */
  x64_put_bytes(w, "\x31\xc0\xb9\x01\x00\x00\x00", 7);    /* xor eax, eax; mov ecx, 1 */
  x64_put_bytes(w, "\xf0\x0f\xb1\x0f", 4);                /* lock cmpxchg [rdi], ecx */
  x64_put_jcc_label(w, CC_NE, L_ASKED);         /* asked for already, or served */
  x64_put_bytes(w, load_index, 4);                        /* mov eax, [rsp+88] */
  x64_put_bytes(w, "\xc1\xe8\x06", 3);                    /* shr eax, 6: its group of 64 */
  x64_put_insn_rip_address(w, (const uint8_t *)"\xf0\x48\x0f\xab\x05\0\0\0\0", 9, 5,
                           summary);                      /* lock bts [summary], rax */
  x64_put_insn_rip_address(w, (const uint8_t *)"\xf0\xff\x05\0\0\0\0", 7, 3, bell); /* lock inc [bell] */
  x64_put_bytes(w, "\x57", 1);                            /* push rdi */
  x64_put_insn_rip_address(w, (const uint8_t *)"\x48\x8d\x3d\0\0\0\0", 7, 3, bell); /* lea rdi, bell */
  x64_put_bytes(w, "\xbe\x01\x00\x00\x00\xba\x01\x00\x00\x00", 10); /* mov esi, FUTEX_WAKE; mov edx, 1 */
  x64_put_bytes(w, "\xb8\xca\x00\x00\x00\x0f\x05", 7);    /* mov eax, SYS_futex; syscall */
  x64_put_bytes(w, "\x5f", 1);                            /* pop rdi */
  x64_put_label(w, L_ASKED);
  x64_put_bytes(w, load_index, 4);
  x64_put_insn_rip_label(w, (const uint8_t *)"\x48\x8d\x0d\0\0\0\0", 7, 3, L_GO_ON); /* lea rcx, go_on */
  x64_put_bytes(w, "\x48\x8b\x04\xc1\x48\x85\xc0", 7);    /* mov rax, [rcx+rax*8]; test rax, rax */
  x64_put_jcc_label(w, CC_E, L_WAIT);           /* 0: wait for the tracer */
  x64_put_label(w, L_READY);
  x64_put_bytes(w, store_entry, 5);                       /* mov [rsp+88], rax */
  x64_put_bytes(w, pop_all, 15);
  x64_put_bytes(w, "\xc3", 1);                            /* ret: to the entry or its window's copy */
  x64_put_label(w, L_WAIT);
  const char spins[5] = {'\xb9', SPINS & 0xff, (SPINS >> 8) & 0xff, 0, 0}; /* mov ecx, SPINS */
  x64_put_bytes(w, spins, 5);
  x64_put_label(w, L_SPIN);
  x64_put_bytes(w, "\x83\x3f\x01", 3);                    /* cmp dword [rdi], REQUESTED */
  x64_put_jcc_label(w, CC_NE, L_SERVED);
  x64_put_bytes(w, "\xf3\x90\xff\xc9", 4);                /* pause; dec ecx */
  x64_put_jcc_label(w, CC_NE, L_SPIN);
  x64_put_label(w, L_SLEEP);
  x64_put_bytes(w, "\x57\xb8\xca\x00\x00\x00", 6);        /* push rdi; mov eax, SYS_futex */
  x64_put_bytes(w, "\x31\xf6\xba\x01\x00\x00\x00", 7);    /* xor esi, esi (FUTEX_WAIT); mov edx, REQUESTED */
  x64_put_bytes(w, "\x45\x31\xd2\x0f\x05\x5f", 6);        /* xor r10d, r10d; syscall; pop rdi */
  x64_put_bytes(w, "\x83\x3f\x01", 3);                    /* cmp dword [rdi], REQUESTED */
  x64_put_jcc_label(w, CC_E, L_SLEEP);
  x64_put_label(w, L_SERVED);
  x64_put_bytes(w, "\x31\xc0\x0f\xa2", 4);                /* xor eax, eax; cpuid: serializes */
  x64_put_bytes(w, load_index, 4);
  x64_put_insn_rip_label(w, (const uint8_t *)"\x48\x8d\x0d\0\0\0\0", 7, 3, L_ENTRIES); /* lea rcx, entries */
  x64_put_bytes(w, "\x48\x8b\x04\xc1", 4);                /* mov rax, [rcx+rax*8] */
  x64_put_jmp_label(w, L_READY);                          /* to the entry */
}

static lp_status put_all(x64_writer *w, size_t n, const uint64_t *entries, const uint64_t *go_on, uint64_t states,
                         uint64_t summary, uint64_t bell) {
  for (size_t i = 0; i < n; i++) {
    uint32_t index = (uint32_t)i;
    x64_put_u8(w, 0x68); /* push imm32 */
    x64_put_bytes(w, &index, sizeof index);
    x64_put_jmp_rel32_label(w, L_COMMON);
  }
  x64_put_align(w, 8, 0xcc);
  x64_put_label(w, L_ENTRIES);
  for (size_t i = 0; i < n; i++) x64_put_u64(w, entries ? entries[i] : 0);
  x64_put_label(w, L_GO_ON);
  for (size_t i = 0; i < n; i++) x64_put_u64(w, go_on ? go_on[i] : 0);
  x64_put_label(w, L_COMMON);
  put_common(w, states, summary, bell);
  return x64_writer_flush(w);
}

size_t x64_stubs_size(size_t n) {
  x64_writer w;
  if (x64_writer_init(&w, NULL, 0, NLABELS) != LP_OK) return 0;
  size_t size = put_all(&w, n, NULL, NULL, 0, 0, 0) == LP_OK ? w.offset : 0;
  x64_writer_clear(&w);
  return size;
}

lp_status x64_stubs_write(uint8_t *out, uint64_t at, size_t n, const uint64_t *entries, const uint64_t *go_on,
                          uint64_t states, uint64_t summary, uint64_t bell) {
  x64_writer w;
  LP_CHECK(x64_writer_init(&w, out, at, NLABELS));
  lp_status st = put_all(&w, n, entries, go_on, states, summary, bell);
  x64_writer_clear(&w);
  return st;
}
