/* x64_displace.c — a function's first instructions copied to run elsewhere,
 * and where its bytes read as direct branches land (see x64_displace.h). */
#include "x64_displace.h"

#include <emmintrin.h>
#include <stdlib.h>
#include <string.h>

#include "x64_relocator.h"
#include "x64_zydis.h"

#define JMP_SIZE 5
#define REL8_REACH 129 /* a rel8 branch lands at most 126 bytes before where it starts */

static int32_t rel32_at(const uint8_t *p) {
  int32_t rel;
  memcpy(&rel, p, sizeof rel);
  return rel;
}

/* Where the rel8 jmp, jcc, loop or jrcxz or the rel32 jmp or jcc possibly
 * encoded at CODE[AT] (SIZE bytes in all) lands, an offset from CODE, in
 * *TO; false when none is encoded there. */
static bool branch_at(const uint8_t *code, size_t size, size_t at, int64_t *to) {
  uint8_t b = code[at];
  if (at + 2 <= size && ((b >= 0x70 && b <= 0x7f) || b == 0xeb || (b >= 0xe0 && b <= 0xe3)))
    *to = (int64_t)at + 2 + (int8_t)code[at + 1];
  else if (b == 0xe9 && at + 5 <= size)
    *to = (int64_t)at + 5 + rel32_at(code + at + 1);
  else if (b == 0x0f && at + 6 <= size && (code[at + 1] & 0xf0) == 0x80)
    *to = (int64_t)at + 6 + rel32_at(code + at + 2);
  else
    return false;
  return true;
}

/* Calls VISIT(CTX, AT, TO) for each byte offset AT of CODE (SIZE bytes) where
 * a direct branch may be encoded (branch_at), the rel8 forms only in
 * [NEAR_LO, NEAR_HI) (beyond, they cannot reach where the caller looks),
 * until one returns true; whether one did.  The opcodes are looked for 16
 * bytes at a time (SSE2): every function of a module is read when its stubs
 * are written (cc1: 19 MB, ~15 ms with the windows' decoding). */
typedef bool (*branch_visit)(void *ctx, size_t at, int64_t to);

static bool scan_branches(const uint8_t *code, size_t size, size_t near_lo, size_t near_hi, branch_visit visit,
                          void *ctx) {
  size_t at = 0;
  int64_t to;
  const __m128i jmp32 = _mm_set1_epi8((char)0xe9), escape = _mm_set1_epi8(0x0f), jmp8 = _mm_set1_epi8((char)0xeb);
  const __m128i high = _mm_set1_epi8((char)0xf0), jcc32 = _mm_set1_epi8((char)0x80), jcc8 = _mm_set1_epi8(0x70);
  const __m128i high6 = _mm_set1_epi8((char)0xfc), loop8 = _mm_set1_epi8((char)0xe0);
  for (; at + 17 <= size; at += 16) {
    __m128i b = _mm_loadu_si128((const __m128i *)(code + at));
    __m128i next = _mm_loadu_si128((const __m128i *)(code + at + 1));
    __m128i is =
        _mm_or_si128(_mm_cmpeq_epi8(b, jmp32),
                     _mm_and_si128(_mm_cmpeq_epi8(b, escape), _mm_cmpeq_epi8(_mm_and_si128(next, high), jcc32)));
    if (at + 16 > near_lo && at < near_hi)
      is = _mm_or_si128(_mm_or_si128(is, _mm_cmpeq_epi8(_mm_and_si128(b, high), jcc8)),
                        _mm_or_si128(_mm_cmpeq_epi8(b, jmp8), _mm_cmpeq_epi8(_mm_and_si128(b, high6), loop8)));
    for (unsigned mask = (unsigned)_mm_movemask_epi8(is); mask; mask &= mask - 1) {
      size_t k = at + (size_t)__builtin_ctz(mask);
      if (branch_at(code, size, k, &to) && visit(ctx, k, to)) return true;
    }
  }
  for (; at < size; at++)
    if (branch_at(code, size, at, &to) && visit(ctx, at, to)) return true;
  return false;
}

/* Does AT lie strictly inside one of the instructions that run one after
 * another from CODE's start, up to the first that may not fall through (a
 * jmp, ret or anything that stops; an indirect call, or a call into the
 * function's own bytes: `call 1f` over data whose address it pushes; or
 * bytes that do not decode)?  Those bytes are that instruction's, every time
 * it runs: what looks like a branch there is an immediate or a displacement
 * (gcc's `mov $0xfc75, %ecx`), not code anything jumps to (a compiler never
 * makes instructions overlap, and what follows a call to another function
 * is code even where the callee does not return).  Where the run ends
 * earlier, or AT starts one of them, the branch may be real. */
static bool inside_first_run(const uint8_t *code, size_t size, size_t at) {
  x64_insn in;
  for (size_t k = 0; k < size && k <= at;) {
    if (!x64_decode(code + k, size - k, k, &in)) return false; /* at address 0: targets are offsets */
    if (k < at && at < k + in.len) return true;
    k += in.len;
    bool goes_on = in.flow == X64_FLOW_NEXT || in.flow == X64_FLOW_JCC || in.flow == X64_FLOW_JCC_SHORT ||
                   (in.flow == X64_FLOW_CALL && in.target >= size); /* outside: another function */
    if (!goes_on) return false;
  }
  return false;
}

/* Does a direct branch encoded at some byte of CODE (SIZE bytes) land 1..N-1
 * bytes past its start, but for bytes inside the first run's instructions?
 * A call does not: calls go to entries. */
typedef struct window_scan {
  const uint8_t *code;
  size_t size, n;
} window_scan;

static bool into_window(void *ctx, size_t at, int64_t to) {
  const window_scan *w = ctx;
  return to > 0 && to < (int64_t)w->n && !inside_first_run(w->code, w->size, at);
}

static bool window_targeted(const uint8_t *code, size_t size, size_t n) {
  window_scan w = {code, size, n};
  return scan_branches(code, size, 0, REL8_REACH + n, into_window, &w);
}

/* x64_branches_into's places, collected. */
typedef struct into_scan {
  int64_t lo, hi;
  int64_t *out;
  size_t n, max;
} into_scan;

static bool collect_into(void *ctx, size_t at, int64_t to) {
  (void)at;
  into_scan *c = ctx;
  if (to < c->lo || to >= c->hi) return false;
  for (size_t k = 0; k < c->n && k < c->max; k++)
    if (c->out[k] == to) return false;
  if (c->n < c->max) c->out[c->n] = to;
  c->n++;
  return false;
}

static int by_offset(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

size_t x64_branches_into(const uint8_t *code, size_t size, int64_t lo, int64_t hi, int64_t *out, size_t max) {
  into_scan c = {lo, hi, out, 0, max};
  int64_t near_lo = lo - REL8_REACH, near_hi = hi + REL8_REACH; /* where a rel8 branch can land in [lo, hi) */
  scan_branches(code, size, near_lo > 0 ? (size_t)near_lo : 0, near_hi > 0 ? (size_t)near_hi : 0, collect_into, &c);
  qsort(out, c.n < max ? c.n : max, sizeof *out, by_offset);
  return c.n;
}

/* Can IN run in a copy at another address?  A few plain instructions
 * (their memory operand, if any, reads the same memory there: a fault in the
 * copy is moved home by the tracer), direct jmps and jccs, and ret. */
static bool displaceable(const x64_insn *in) {
  if (in->flow == X64_FLOW_JMP || in->flow == X64_FLOW_JCC) return true;
  if (in->flow == X64_FLOW_CALL) return true; /* 5 bytes: the window's last (put_call_home) */
  if (in->flow == X64_FLOW_RET) return in->mnemonic == ZYDIS_MNEMONIC_RET; /* not iret, sysret */
  if (in->flow != X64_FLOW_NEXT) return false;
  switch (in->mnemonic) {
  case ZYDIS_MNEMONIC_ENDBR64:
  case ZYDIS_MNEMONIC_NOP:
  case ZYDIS_MNEMONIC_LEA:
  case ZYDIS_MNEMONIC_MOV:
  case ZYDIS_MNEMONIC_PUSH:
  case ZYDIS_MNEMONIC_MOVZX:
  case ZYDIS_MNEMONIC_MOVSX:
  case ZYDIS_MNEMONIC_MOVSXD:
  case ZYDIS_MNEMONIC_ADD:
  case ZYDIS_MNEMONIC_SUB:
  case ZYDIS_MNEMONIC_AND:
  case ZYDIS_MNEMONIC_OR:
  case ZYDIS_MNEMONIC_XOR:
  case ZYDIS_MNEMONIC_TEST:
  case ZYDIS_MNEMONIC_CMP:
  case ZYDIS_MNEMONIC_INC:
  case ZYDIS_MNEMONIC_DEC:
  case ZYDIS_MNEMONIC_PXOR:
  case ZYDIS_MNEMONIC_XORPS:
  case ZYDIS_MNEMONIC_MOVAPS:
  case ZYDIS_MNEMONIC_MOVUPS:
  case ZYDIS_MNEMONIC_MOVDQA:
  case ZYDIS_MNEMONIC_MOVDQU:
  case ZYDIS_MNEMONIC_MOVD:
  case ZYDIS_MNEMONIC_MOVQ:
  case ZYDIS_MNEMONIC_SHL:
  case ZYDIS_MNEMONIC_SHR:
  case ZYDIS_MNEMONIC_SAR:
  case ZYDIS_MNEMONIC_ROL:
  case ZYDIS_MNEMONIC_ROR:
  case ZYDIS_MNEMONIC_NEG:
  case ZYDIS_MNEMONIC_NOT:
  case ZYDIS_MNEMONIC_IMUL:
  case ZYDIS_MNEMONIC_CDQ:
  case ZYDIS_MNEMONIC_CDQE:
  case ZYDIS_MNEMONIC_CQO: return true;
  default: return false;
  }
}

size_t x64_displace_window(const uint8_t *code, size_t size, uint64_t addr, x64_insn out[X64_DISPLACE_MAX], size_t *n) {
  size_t len = 0;
  bool ends = false; /* a ret or jmp: what follows it in the jmp's bytes never runs from there */
  *n = 0;
  while (len < JMP_SIZE && !ends) {
    x64_insn *in = &out[*n];
    if (*n == X64_DISPLACE_MAX || !x64_decode(code + len, size - len, addr + len, in) || !displaceable(in)) return 0;
    ends = in->flow == X64_FLOW_JMP || in->flow == X64_FLOW_RET;
    len += in->len;
    ++*n;
  }
  return window_targeted(code, size, len > JMP_SIZE ? len : JMP_SIZE) ? 0 : len; /* len <= size: decoded in it */
}

static long no_label(void *ctx, uint64_t orig) {
  (void)ctx;
  (void)orig;
  return -1;
}

static uint64_t same_address(void *ctx, uint64_t orig) {
  (void)ctx;
  return orig;
}

/* The direct call CALL, the window's last instruction, as one that returns
 * home: `push` of the address after it at home (the low half sign-extended,
 * then the high half written over; no flags changed), `jmp` to its callee.
 * The callee returns to the rest of the function, and an unwinder finds the
 * function's own frame there, as natively.  Only the push may fault (the
 * stack's end): nothing is written then, and home_of moves the thread to the
 * call at home. */
static void put_call_home(x64_writer *w, const x64_insn *call) {
  uint64_t back = call->addr + call->len;
  uint32_t low = (uint32_t)back, high = (uint32_t)(back >> 32);
  x64_put_u8(w, 0x68); /* push imm32 */
  x64_put_bytes(w, &low, 4);
  x64_put_bytes(w, "\xc7\x44\x24\x04", 4); /* mov dword [rsp+4], imm32 */
  x64_put_bytes(w, &high, 4);
  x64_put_jmp_rel32_address(w, call->target);
}

/* The copy into W, the offset of each instruction in OFFSETS (or NULL). */
static void put_displaced(x64_writer *w, const x64_insn *in, size_t n, uint64_t resume, size_t *offsets) {
  const x64_targets home = {no_label, same_address, NULL};
  for (size_t k = 0; k < n; k++) {
    if (offsets) offsets[k] = w->offset;
    if (in[k].flow == X64_FLOW_CALL) {
      put_call_home(w, &in[k]); /* returns to RESUME itself */
      return;
    }
    x64_relocate_insn(w, &in[k], &home);
  }
  x64_put_jmp_rel32_address(w, resume);
}

void x64_put_displaced(x64_writer *w, const x64_insn *in, size_t n, uint64_t resume) {
  put_displaced(w, in, n, resume, NULL);
}

size_t x64_displaced_layout(const x64_insn *in, size_t n, size_t offsets[X64_DISPLACE_MAX]) {
  x64_writer w;
  if (x64_writer_init(&w, NULL, 0, 0) != LP_OK) return 0;
  put_displaced(&w, in, n, 0, offsets); /* measured only: no target need be in reach */
  size_t size = w.offset;
  x64_writer_clear(&w);
  return size;
}
