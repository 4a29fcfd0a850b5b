/* x64_decode.c — x64_decode.h: x64_quick.c's table first, else Zydis 4:
 * classify control flow, find the branch target and the disp32, the status
 * flags read and written, simplify operands (only where deciding these needs
 * them; x64_decode_operands for the rest, when asked). */
#include "x64_decode.h"

#include <string.h>

#include "x64_quick.h"
#include "x64_zydis.h"

const ZydisDecoder *x64_zydis_decoder(void) {
  static ZydisDecoder d;
  static bool ready;
  if (!ready) {
    ZydisDecoderInit(&d, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
    ready = true;
  }
  return &d;
}

int x64_widen(ZydisRegister r) {
  if (r == ZYDIS_REGISTER_NONE) return 0;
  ZydisRegister w = ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, r);
  return w != ZYDIS_REGISTER_NONE ? (int)w : (int)r;
}

static x64_flow classify(const ZydisDecodedInstruction *zi) {
  bool direct = zi->raw.imm[0].is_relative;
  switch (zi->mnemonic) {
  case ZYDIS_MNEMONIC_JMP: return direct ? X64_FLOW_JMP : X64_FLOW_JMP_INDIRECT;
  case ZYDIS_MNEMONIC_CALL: return direct ? X64_FLOW_CALL : X64_FLOW_CALL_INDIRECT;
  case ZYDIS_MNEMONIC_JRCXZ:
  case ZYDIS_MNEMONIC_JECXZ:
  case ZYDIS_MNEMONIC_LOOP:
  case ZYDIS_MNEMONIC_LOOPE:
  case ZYDIS_MNEMONIC_LOOPNE: return X64_FLOW_JCC_SHORT;
  case ZYDIS_MNEMONIC_UD0:
  case ZYDIS_MNEMONIC_UD1:
  case ZYDIS_MNEMONIC_UD2:
  case ZYDIS_MNEMONIC_HLT:
  case ZYDIS_MNEMONIC_INT3: return X64_FLOW_STOP;
  default: break;
  }
  /* Zydis files xbegin, xend and xabort with the jccs: only a jcc has a
   * condition code and a target of its own (xend and xabort have no target:
   * a transaction's abort resumes at its xbegin's fallback) */
  bool jcc = zi->meta.category == ZYDIS_CATEGORY_COND_BR && zi->mnemonic != ZYDIS_MNEMONIC_XBEGIN &&
             zi->mnemonic != ZYDIS_MNEMONIC_XEND && zi->mnemonic != ZYDIS_MNEMONIC_XABORT;
  if (jcc && direct) return X64_FLOW_JCC;
  if (zi->meta.category == ZYDIS_CATEGORY_RET || zi->meta.category == ZYDIS_CATEGORY_SYSRET)
    return X64_FLOW_RET;
  if (direct) return X64_FLOW_UNSUPPORTED; /* xbegin and friends */
  return X64_FLOW_NEXT;
}

static uint8_t compact(ZydisAccessedFlagsMask m) {
  return (uint8_t)(((m & ZYDIS_CPUFLAG_CF) ? X64_FLAG_CF : 0) | ((m & ZYDIS_CPUFLAG_PF) ? X64_FLAG_PF : 0) |
                   ((m & ZYDIS_CPUFLAG_AF) ? X64_FLAG_AF : 0) | ((m & ZYDIS_CPUFLAG_ZF) ? X64_FLAG_ZF : 0) |
                   ((m & ZYDIS_CPUFLAG_SF) ? X64_FLAG_SF : 0) | ((m & ZYDIS_CPUFLAG_OF) ? X64_FLAG_OF : 0));
}

static bool is_shift(ZydisMnemonic m) {
  switch (m) {
  case ZYDIS_MNEMONIC_SHL: case ZYDIS_MNEMONIC_SHR: case ZYDIS_MNEMONIC_SAR:
  case ZYDIS_MNEMONIC_ROL: case ZYDIS_MNEMONIC_ROR: case ZYDIS_MNEMONIC_RCL:
  case ZYDIS_MNEMONIC_RCR: case ZYDIS_MNEMONIC_SHLD: case ZYDIS_MNEMONIC_SHRD: return true;
  default: return false;
  }
}

/* A shift or rotate by 0 (CL, or an immediate masked to 0) leaves the flags
 * alone; so does a rep-prefixed string instruction with rcx = 0.  OPS: the
 * visible operands, decoded for every shift. */
static bool may_keep_flags(const ZydisDecodedInstruction *zi, const ZydisDecodedOperand *ops) {
  if (zi->attributes & (ZYDIS_ATTRIB_HAS_REP | ZYDIS_ATTRIB_HAS_REPE | ZYDIS_ATTRIB_HAS_REPNE))
    return true;
  if (!is_shift(zi->mnemonic)) return false;
  const ZydisDecodedOperand *count = &ops[zi->operand_count_visible - 1];
  if (count->type != ZYDIS_OPERAND_TYPE_IMMEDIATE) return true;
  return (count->imm.value.u & (zi->operand_width == 64 ? 63 : 31)) == 0;
}

/* The fields that come from the visible operands: a relative immediate's
 * target, a [rip+disp32] operand and what it names, the first two operands
 * simplified. */
static void keep_operands(const ZydisDecodedInstruction *zi, const ZydisDecodedOperand *ops,
                          x64_insn *out) {
  for (unsigned i = 0; i < zi->operand_count_visible; i++) {
    const ZydisDecodedOperand *o = &ops[i];
    if (o->type == ZYDIS_OPERAND_TYPE_IMMEDIATE && o->imm.is_relative) {
      ZyanU64 abs;
      if (ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(zi, o, out->addr, &abs))) out->target = abs;
    }
    if (o->type == ZYDIS_OPERAND_TYPE_MEMORY && o->mem.base == ZYDIS_REGISTER_RIP) {
      out->rip_relative = true;
      out->rip_target = out->addr + zi->length + (uint64_t)o->mem.disp.value;
    }
    if (i < 2) {
      x64_operand *s = &out->op[i];
      s->size = o->size;
      s->written = (o->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE) != 0;
      switch (o->type) {
      case ZYDIS_OPERAND_TYPE_REGISTER:
        s->type = X64_OP_REG;
        s->reg = x64_widen(o->reg.value);
        break;
      case ZYDIS_OPERAND_TYPE_MEMORY:
        s->type = X64_OP_MEM;
        s->base = x64_widen(o->mem.base);
        s->index = x64_widen(o->mem.index);
        s->scale = o->mem.scale;
        s->disp = o->mem.disp.value;
        break;
      case ZYDIS_OPERAND_TYPE_IMMEDIATE:
        s->type = X64_OP_IMM;
        s->imm = o->imm.is_signed ? o->imm.value.s : (int64_t)o->imm.value.u;
        break;
      default: break;
      }
      out->nops = (uint8_t)(i + 1);
    }
  }
  out->operands_decoded = true;
}

/* Does what x64_decode decides need the operands?  A relative immediate (the
 * target), an indirect jmp or call (read by the jump-table matcher and the
 * tail-call test), a memory operand that may be RIP-relative (modrm mod 00,
 * rm 101 is the only encoding of one in 64-bit mode; Zydis says whether it is
 * one), a shift or rotate (whether its count can be 0).  Skipping the others'
 * was two thirds of the operand decoding, a quarter of Zydis's time. */
static bool operands_needed(const ZydisDecodedInstruction *zi, x64_flow flow) {
  if (zi->raw.imm[0].is_relative || zi->raw.imm[1].is_relative) return true;
  if (flow == X64_FLOW_JMP_INDIRECT || flow == X64_FLOW_CALL_INDIRECT) return true;
  if ((zi->attributes & ZYDIS_ATTRIB_HAS_MODRM) && zi->raw.modrm.mod == 0 && zi->raw.modrm.rm == 5)
    return true;
  return is_shift(zi->mnemonic);
}

bool x64_decode_zydis(const uint8_t *code, size_t avail, uint64_t addr, x64_insn *out) {
  ZydisDecoderContext ctx;
  ZydisDecodedInstruction zi;
  ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT_VISIBLE];
  if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(x64_zydis_decoder(), &ctx, code, avail, &zi)))
    return false;

  memset(out, 0, sizeof *out);
  out->addr = addr;
  out->len = zi.length;
  memcpy(out->bytes, code, zi.length);
  out->mnemonic = zi.mnemonic;
  out->flow = classify(&zi);
  if (out->flow == X64_FLOW_JCC) out->cc = zi.opcode & 0x0f;
  out->disp_size = zi.raw.disp.size;
  out->disp_offset = zi.raw.disp.offset;

  /* the visible operands only: the hidden ones (rsp of a push, flags) are
   * not needed here, and decoding them was a third of Zydis's time */
  bool decoded = operands_needed(&zi, out->flow);
  if (decoded) {
    if (!ZYAN_SUCCESS(ZydisDecoderDecodeOperands(x64_zydis_decoder(), &ctx, &zi, ops, zi.operand_count_visible)))
      return false;
    keep_operands(&zi, ops, out);
  }
  if (zi.cpu_flags) {
    const ZydisAccessedFlags *f = zi.cpu_flags;
    out->flags_read = compact(f->tested);
    if (!may_keep_flags(&zi, decoded ? ops : NULL))
      out->flags_written = compact(f->modified | f->set_0 | f->set_1 | f->undefined);
  }
  /* a RIP-relative operand must carry a 32-bit displacement we can patch */
  if (out->rip_relative && out->disp_size != 32) return false;
  return true;
}

bool x64_decode(const uint8_t *code, size_t avail, uint64_t addr, x64_insn *out) {
  return x64_decode_quick(code, avail, addr, out) || x64_decode_zydis(code, avail, addr, out);
}

bool x64_decode_flow(const uint8_t *code, size_t avail, size_t *len, x64_flow *flow) {
  if (x64_quick_flow(code, avail, len, flow)) return true;
  ZydisDecoderContext ctx;
  ZydisDecodedInstruction zi;
  if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(x64_zydis_decoder(), &ctx, code, avail, &zi))) return false;
  *len = zi.length;
  *flow = classify(&zi);
  return true;
}

bool x64_is_nop(const x64_insn *in) { return in->mnemonic == ZYDIS_MNEMONIC_NOP; }

bool x64_decode_operands(x64_insn *in) {
  if (in->operands_decoded) return true;
  ZydisDecoderContext ctx;
  ZydisDecodedInstruction zi;
  ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT_VISIBLE];
  if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(x64_zydis_decoder(), &ctx, in->bytes, in->len, &zi)) ||
      !ZYAN_SUCCESS(ZydisDecoderDecodeOperands(x64_zydis_decoder(), &ctx, &zi, ops, zi.operand_count_visible)))
    return false;
  keep_operands(&zi, ops, in);
  return true;
}
