/* x64_writer.c — byte emission, labels and their fix-ups (see x64_writer.h). */
#include "x64_writer.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fail(x64_writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(x64_writer *w, const char *fmt, ...) {
  if (w->failed) return; /* keep the first reason */
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(w->error, sizeof w->error, fmt, ap);
  va_end(ap);
  w->failed = true;
}

lp_status x64_writer_init(x64_writer *w, uint8_t *code, uint64_t pc, size_t nlabels) {
  memset(w, 0, sizeof *w);
  w->code = code;
  w->pc = pc;
  w->nlabels = nlabels;
  w->label_at = malloc((nlabels ? nlabels : 1) * sizeof *w->label_at);
  if (!w->label_at) return lp_fail("out of memory");
  for (size_t i = 0; i < nlabels; i++) w->label_at[i] = -1;
  return LP_OK;
}

void x64_writer_clear(x64_writer *w) {
  free(w->label_at);
  free(w->fixups);
  memset(w, 0, sizeof *w);
}

static void put_le(x64_writer *w, uint64_t v, size_t n) {
  if (w->code)
    for (size_t i = 0; i < n; i++) w->code[w->offset + i] = (uint8_t)(v >> (8 * i));
  w->offset += n;
}

void x64_put_bytes(x64_writer *w, const void *bytes, size_t n) {
  if (w->code) memcpy(w->code + w->offset, bytes, n);
  w->offset += n;
}

void x64_put_u8(x64_writer *w, uint8_t v) { put_le(w, v, 1); }

void x64_put_align(x64_writer *w, size_t to, uint8_t fill) {
  while (w->offset % to) x64_put_u8(w, fill);
}

void x64_put_nops(x64_writer *w, size_t to) {
  static const uint8_t nops[9][9] = { /* the multi-byte nops of the Intel and AMD manuals */
      {0x90},
      {0x66, 0x90},
      {0x0f, 0x1f, 0x00},
      {0x0f, 0x1f, 0x40, 0x00},
      {0x0f, 0x1f, 0x44, 0x00, 0x00},
      {0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00},
      {0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00},
      {0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00},
      {0x66, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00},
  };
  for (size_t n = (to - w->offset % to) % to; n > 0;) {
    size_t k = n > 9 ? 9 : n;
    x64_put_bytes(w, nops[k - 1], k);
    n -= k;
  }
}

void x64_put_ud2(x64_writer *w) { x64_put_bytes(w, "\x0f\x0b", 2); }

void x64_put_label(x64_writer *w, size_t label) {
  if (label >= w->nlabels)
    fail(w, "label %zu out of bounds", label);
  else if (w->label_at[label] >= 0)
    fail(w, "label %zu placed twice", label);
  else
    w->label_at[label] = (int64_t)w->offset;
}

static void add_fixup(x64_writer *w, x64_fixup_kind kind, size_t at, size_t end, size_t label,
                      size_t base, long branch, size_t start) {
  if (w->nfixups == w->capfixups) {
    size_t cap = w->capfixups ? 2 * w->capfixups : 32;
    x64_fixup *f = realloc(w->fixups, cap * sizeof *f);
    if (!f) {
      fail(w, "out of memory");
      return;
    }
    w->fixups = f;
    w->capfixups = cap;
  }
  w->fixups[w->nfixups++] = (x64_fixup){kind, at, end, label, base, branch, start};
}

/* Writes a rel32 field at AT (already reserved) naming TARGET from END. */
static void patch_rel32_address(x64_writer *w, size_t at, size_t end, uint64_t target) {
  if (!w->code) return;
  int64_t rel = (int64_t)(target - (w->pc + end));
  if (rel != (int32_t)rel) {
    fail(w, "0x%" PRIx64 " is out of rel32 reach from 0x%" PRIx64, target, w->pc + end);
    return;
  }
  uint32_t v = (uint32_t)(int32_t)rel;
  for (int i = 0; i < 4; i++) w->code[at + i] = (uint8_t)(v >> (8 * i));
}

static void put_rel32_label(x64_writer *w, size_t label) {
  add_fixup(w, X64_FIXUP_REL32, w->offset, w->offset + 4, label, 0, -1, 0);
  put_le(w, 0, 4);
}

static void put_rel32_address(x64_writer *w, uint64_t target) {
  size_t at = w->offset;
  put_le(w, 0, 4);
  patch_rel32_address(w, at, w->offset, target);
}

void x64_put_jmp_rel32_label(x64_writer *w, size_t label) {
  x64_put_u8(w, /*jmp rel32=*/0xe9);
  put_rel32_label(w, label);
}

/* A label branch whose long form is OP (1 or 2 bytes) rel32 and short form
 * SHORT_OP rel8. */
static void put_branch_label(x64_writer *w, const uint8_t *op, size_t nop, uint8_t short_op, size_t label) {
  size_t k = w->nbranches++, start = w->offset;
  if (w->shorts && (w->shorts[k / 8] >> (k % 8)) & 1) {
    x64_put_u8(w, short_op);
    add_fixup(w, X64_FIXUP_REL8, w->offset, w->offset + 1, label, 0, (long)k, start);
    put_le(w, 0, 1);
    return;
  }
  x64_put_bytes(w, op, nop);
  add_fixup(w, X64_FIXUP_REL32, w->offset, w->offset + 4, label, 0, (long)k, start);
  put_le(w, 0, 4);
}

void x64_put_jmp_label(x64_writer *w, size_t label) {
  static const uint8_t jmp[1] = {/*jmp rel32=*/0xe9};
  put_branch_label(w, jmp, sizeof jmp, /*jmp rel8=*/0xeb, label);
}

void x64_put_jcc_label(x64_writer *w, uint8_t cc, size_t label) {
  const uint8_t jcc[2] = {0x0f, (uint8_t)(/*jcc rel32=*/0x80 | (cc & 0x0f))};
  put_branch_label(w, jcc, sizeof jcc, (uint8_t)(/*jcc rel8=*/0x70 | (cc & 0x0f)), label);
}

void x64_put_bound_check(x64_writer *w, unsigned reg, uint32_t bound, size_t label) {
  const uint8_t cmp[3] = {(uint8_t)(/*REX.W=*/0x48 | (reg >> 3)), bound < 128 ? 0x83 : 0x81,
                          (uint8_t)(/*mod 11, /7=*/0xf8 | (reg & 7))};
  x64_put_bytes(w, cmp, sizeof cmp);
  if (bound < 128) {
    x64_put_u8(w, (uint8_t)bound);
  } else {
    const uint8_t imm[4] = {(uint8_t)bound, (uint8_t)(bound >> 8), (uint8_t)(bound >> 16), (uint8_t)(bound >> 24)};
    x64_put_bytes(w, imm, sizeof imm);
  }
  x64_put_jcc_label(w, /*jae=*/0x3, label);
}

void x64_put_jmp_rel32_address(x64_writer *w, uint64_t target) {
  x64_put_u8(w, /*jmp rel32=*/0xe9);
  put_rel32_address(w, target);
}

void x64_put_jcc_rel32_address(x64_writer *w, uint8_t cc, uint64_t target) {
  x64_put_u8(w, 0x0f);
  x64_put_u8(w, (uint8_t)(/*jcc rel32=*/0x80 | (cc & 0x0f)));
  put_rel32_address(w, target);
}

void x64_put_call_rel32_label(x64_writer *w, size_t label) {
  x64_put_u8(w, /*call rel32=*/0xe8);
  put_rel32_label(w, label);
}

void x64_put_call_rel32_address(x64_writer *w, uint64_t target) {
  x64_put_u8(w, /*call rel32=*/0xe8);
  put_rel32_address(w, target);
}

void x64_put_inc_rip_counter(x64_writer *w, uint64_t counter, bool lock) {
  if (lock) x64_put_u8(w, /*lock=*/0xf0);
  x64_put_bytes(w, "\x48\xff\x05", 3); /* REX.W, FF /0, modrm rip+disp32 */
  put_rel32_address(w, counter);
}

void x64_put_dec_rip_counter(x64_writer *w, uint64_t counter, bool lock) {
  if (lock) x64_put_u8(w, /*lock=*/0xf0);
  x64_put_bytes(w, "\x48\xff\x0d", 3); /* REX.W, FF /1, modrm rip+disp32 */
  put_rel32_address(w, counter);
}

void x64_put_mov_byte_rip_one(x64_writer *w, uint64_t counter) {
  x64_put_bytes(w, "\xc6\x05", 2); /* mov r/m8, imm8; modrm rip+disp32 */
  size_t at = w->offset;
  put_le(w, 0, 4);
  x64_put_u8(w, /*imm8=*/1);
  patch_rel32_address(w, at, w->offset, counter); /* relative to the end, after imm8 */
}

void x64_put_rax_save(x64_writer *w) {
  x64_put_bytes(w, "\x48\x8d\x64\x24\x80", 5); /* lea rsp, [rsp-128]: past the red zone */
  x64_put_u8(w, /*push rax=*/0x50);
}

void x64_put_add_rip_counter_rax(x64_writer *w, uint64_t counter, int8_t delta) {
  x64_put_bytes(w, "\x48\x8b\x05", 3); /* mov rax, [rip+disp32] */
  put_rel32_address(w, counter);
  x64_put_bytes(w, "\x48\x8d\x40", 3); /* lea rax, [rax+delta] */
  x64_put_u8(w, (uint8_t)delta);
  x64_put_bytes(w, "\x48\x89\x05", 3); /* mov [rip+disp32], rax */
  put_rel32_address(w, counter);
}

void x64_put_rax_restore(x64_writer *w) {
  x64_put_u8(w, /*pop rax=*/0x58);
  x64_put_bytes(w, "\x48\x8d\xa4\x24\x80\x00\x00\x00", 8); /* lea rsp, [rsp+128] */
}

void x64_put_flags_save(x64_writer *w) {
  x64_put_bytes(w, "\x48\x8d\x64\x24\x80", 5); /* lea rsp, [rsp-128]: past the red zone */
  x64_put_u8(w, /*pushfq=*/0x9c);
}

void x64_put_flags_restore(x64_writer *w) {
  x64_put_u8(w, /*popfq=*/0x9d);
  x64_put_bytes(w, "\x48\x8d\xa4\x24\x80\x00\x00\x00", 8); /* lea rsp, [rsp+128] */
}

void x64_put_insn_rip_address(x64_writer *w, const uint8_t *insn, size_t len, size_t disp_offset,
                              uint64_t target) {
  size_t start = w->offset;
  x64_put_bytes(w, insn, len);
  patch_rel32_address(w, start + disp_offset, start + len, target);
}

void x64_put_insn_rip_label(x64_writer *w, const uint8_t *insn, size_t len, size_t disp_offset,
                            size_t label) {
  size_t start = w->offset;
  x64_put_bytes(w, insn, len);
  add_fixup(w, X64_FIXUP_REL32, start + disp_offset, start + len, label, 0, -1, 0);
}

void x64_put_insn_abs32_label(x64_writer *w, const uint8_t *insn, size_t len, size_t disp_offset,
                              size_t label) {
  size_t start = w->offset;
  x64_put_bytes(w, insn, len);
  add_fixup(w, X64_FIXUP_ABS32S, start + disp_offset, 0, label, 0, -1, 0);
}

void x64_put_label_diff32(x64_writer *w, size_t label, size_t base) {
  add_fixup(w, X64_FIXUP_DIFF32, w->offset, 0, label, base, -1, 0);
  put_le(w, 0, 4);
}

void x64_put_label_abs64(x64_writer *w, size_t label) {
  add_fixup(w, X64_FIXUP_ABS64, w->offset, 0, label, 0, -1, 0);
  put_le(w, 0, 8);
}

void x64_put_u64(x64_writer *w, uint64_t v) { put_le(w, v, 8); }

void x64_put_address_diff32(x64_writer *w, uint64_t address, size_t base) {
  if (base >= w->nlabels || w->label_at[base] < 0) {
    fail(w, "table base label %zu not placed before its entries", base);
    return;
  }
  int64_t v = (int64_t)(address - (w->pc + (uint64_t)w->label_at[base]));
  if (w->code && v != (int32_t)v) {
    fail(w, "0x%" PRIx64 " out of 32-bit reach of its table", address);
    return;
  }
  put_le(w, (uint64_t)v, 4);
}

static bool placed(x64_writer *w, size_t label) {
  if (label < w->nlabels && w->label_at[label] >= 0) return true;
  fail(w, "label %zu referenced but never placed", label);
  return false;
}

lp_status x64_writer_flush(x64_writer *w) {
  for (size_t i = 0; i < w->nfixups && !w->failed; i++) {
    const x64_fixup *f = &w->fixups[i];
    if (!placed(w, f->label) || (f->kind == X64_FIXUP_DIFF32 && !placed(w, f->base))) break;
    if (!w->code) continue; /* measuring: only check labels */
    uint64_t addr = w->pc + (uint64_t)w->label_at[f->label];
    int64_t v = 0;
    size_t n = 4;
    switch (f->kind) {
    case X64_FIXUP_REL32: v = (int64_t)(addr - (w->pc + f->end)); break;
    case X64_FIXUP_REL8: v = (int64_t)(addr - (w->pc + f->end)), n = 1; break;
    case X64_FIXUP_ABS32S: v = (int64_t)addr; break;
    case X64_FIXUP_DIFF32: v = w->label_at[f->label] - w->label_at[f->base]; break;
    case X64_FIXUP_ABS64: v = (int64_t)addr; n = 8; break;
    }
    if ((n == 4 && v != (int32_t)v) || (n == 1 && v != (int8_t)v)) {
      fail(w, "label at 0x%" PRIx64 " out of %zu-bit reach (fix-up at offset %zu)", addr, 8 * n, f->at);
      break;
    }
    for (size_t b = 0; b < n; b++) w->code[f->at + b] = (uint8_t)((uint64_t)v >> (8 * b));
  }
  if (w->failed) return lp_fail("%s", w->error);
  return LP_OK;
}

/* Does label branch F's rel8 form reach its label, in this pass's layout? */
static bool short_reaches(const x64_writer *w, const x64_fixup *f) {
  int64_t v = w->label_at[f->label] - (int64_t)(f->start + 2); /* EB/7x rel8: two bytes */
  return w->label_at[f->label] >= 0 && v == (int8_t)v;
}

lp_status x64_writer_relax(const x64_writer *w, uint8_t **shorts) {
  *shorts = calloc(w->nbranches / 8 + 1, 1);
  if (!*shorts) return lp_fail("out of memory");
  for (size_t i = 0; i < w->nfixups; i++) {
    const x64_fixup *f = &w->fixups[i];
    if (f->kind == X64_FIXUP_REL32 && f->branch >= 0 && short_reaches(w, f))
      (*shorts)[f->branch / 8] |= (uint8_t)(1u << (f->branch % 8));
  }
  return LP_OK;
}

bool x64_writer_unrelax(const x64_writer *w, uint8_t *shorts) {
  bool cleared = false;
  for (size_t i = 0; i < w->nfixups; i++) {
    const x64_fixup *f = &w->fixups[i];
    if (f->kind != X64_FIXUP_REL8 || short_reaches(w, f)) continue;
    shorts[f->branch / 8] &= (uint8_t)~(1u << (f->branch % 8));
    cleared = true;
  }
  return cleared;
}
