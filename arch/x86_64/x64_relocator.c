/* x64_relocator.c — read one instruction, write one (see x64_relocator.h). */
#include "x64_relocator.h"

/* A jmp to TARGET: to its label (rel8 when the writer says so, unless
 * LONG: a jmp short before it skips exactly its five bytes) or its address. */
static void put_jmp(x64_writer *w, uint64_t target, const x64_targets *t, bool long_only) {
  long l = t->label_of(t->ctx, target);
  if (l >= 0 && long_only)
    x64_put_jmp_rel32_label(w, (size_t)l);
  else if (l >= 0)
    x64_put_jmp_label(w, (size_t)l);
  else
    x64_put_jmp_rel32_address(w, t->redirect(t->ctx, target));
}

void x64_relocate_branch_label(x64_writer *w, const x64_insn *in, size_t label) {
  switch (in->flow) {
  case X64_FLOW_JMP: x64_put_jmp_label(w, label); return;
  case X64_FLOW_JCC: x64_put_jcc_label(w, in->cc, label); return;
  case X64_FLOW_JCC_SHORT:
    x64_put_bytes(w, in->bytes, in->len - 1u);
    x64_put_u8(w, 2);
    x64_put_bytes(w, "\xeb\x05", 2);
    x64_put_jmp_rel32_label(w, label);
    return;
  default: x64_put_bytes(w, in->bytes, in->len); return; /* not a direct branch */
  }
}

void x64_relocate_insn(x64_writer *w, const x64_insn *in, const x64_targets *t) {
  switch (in->flow) {
  case X64_FLOW_JMP: /* jmp rel8/rel32 -> E9 rel32, or EB rel8 where it reaches */
    put_jmp(w, in->target, t, false);
    return;
  case X64_FLOW_JCC: { /* jcc rel8/rel32 -> 0F 8x rel32, or 7x rel8 where it reaches */
    long l = t->label_of(t->ctx, in->target);
    if (l >= 0)
      x64_put_jcc_label(w, in->cc, (size_t)l);
    else
      x64_put_jcc_rel32_address(w, in->cc, t->redirect(t->ctx, in->target));
    return;
  }
  case X64_FLOW_JCC_SHORT: /* [67] op +2; jmp short +5; jmp rel32 target */
    x64_put_bytes(w, in->bytes, in->len - 1u); /* prefixes and opcode, rel8 dropped */
    x64_put_u8(w, 2);
    x64_put_bytes(w, "\xeb\x05", 2);
    put_jmp(w, in->target, t, true);
    return;
  case X64_FLOW_CALL: { /* E8 rel32: recursion to our own entry, others where redirected */
    long l = t->label_of(t->ctx, in->target);
    if (l >= 0)
      x64_put_call_rel32_label(w, (size_t)l);
    else
      x64_put_call_rel32_address(w, t->redirect(t->ctx, in->target));
    return;
  }
  default: break;
  }
  if (in->rip_relative)
    x64_put_insn_rip_address(w, in->bytes, in->len, in->disp_offset, in->rip_target);
  else
    x64_put_bytes(w, in->bytes, in->len);
}

/* Where the ModRM byte of a table load sits: after REX.W 8B (mov r64) or
 * REX.W 63 (movsxd r64), or after FF with ModRM.reg 4 (jmp), with or without
 * a REX; 0 for another. */
static unsigned table_load_modrm(const x64_insn *in) {
  const uint8_t *b = in->bytes;
  unsigned op = in->len > 0 && (b[0] & 0xf0) == 0x40 ? 1 : 0; /* REX */
  if (in->len < op + 3) return 0;
  if ((b[op] == 0x8b || b[op] == 0x63) && op == 1 && (b[0] & 0xf8) == 0x48) return op + 1;
  if (b[op] == 0xff && ((b[op + 1] >> 3) & 7) == 4) return op + 1;
  return 0;
}

bool x64_can_displace_table_load(const x64_insn *in) {
  unsigned at = table_load_modrm(in);
  if (!at) return false;
  const uint8_t *b = in->bytes + at;
  uint8_t mod = b[0] >> 6, rm = b[0] & 7;
  if (rm != 4) return false; /* a SIB */
  if (mod == 0) return in->len == at + 2 && (b[1] & 7) != 5; /* base 101 with mod 00: no base */
  return mod == 1 && in->len == at + 3 && b[2] == 0;
}

void x64_relocate_table_load(x64_writer *w, const x64_insn *in, size_t table_label, size_t base_label) {
  unsigned at = table_load_modrm(in);
  x64_put_bytes(w, in->bytes, at); /* REX, opcode */
  const uint8_t modrm_sib[2] = {(uint8_t)(0x80 | (in->bytes[at] & 0x3f)), in->bytes[at + 1]};
  x64_put_bytes(w, modrm_sib, sizeof modrm_sib); /* mod 10: disp32 */
  x64_put_label_diff32(w, table_label, base_label);
}

void x64_relocate_table_ref(x64_writer *w, const x64_insn *in, size_t table_label) {
  if (in->rip_relative)
    x64_put_insn_rip_label(w, in->bytes, in->len, in->disp_offset, table_label);
  else
    x64_put_insn_abs32_label(w, in->bytes, in->len, in->disp_offset, table_label);
}
