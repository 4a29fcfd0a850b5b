/* x64_decode.c — Zydis 4 behind x64_decode.h: classify control flow, find the
 * branch target and the disp32, the status flags read and written, simplify
 * operands. */
#include "x64_decode.h"

#include <string.h>

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

static x64_flow classify(const ZydisDecodedInstruction *zi, const ZydisDecodedOperand *ops) {
  bool direct = zi->operand_count_visible > 0 && ops[0].type == ZYDIS_OPERAND_TYPE_IMMEDIATE &&
                ops[0].imm.is_relative;
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
  if (zi->meta.category == ZYDIS_CATEGORY_COND_BR) return X64_FLOW_JCC;
  if (zi->meta.category == ZYDIS_CATEGORY_RET || zi->meta.category == ZYDIS_CATEGORY_SYSRET)
    return X64_FLOW_RET;
  if (direct) return X64_FLOW_UNSUPPORTED; /* xbegin and friends */
  return X64_FLOW_NEXT;
}

static uint8_t compact(ZydisAccessedFlagsMask m) {
  static const struct { ZydisAccessedFlagsMask z; uint8_t f; } map[] = {
      {ZYDIS_CPUFLAG_CF, X64_FLAG_CF}, {ZYDIS_CPUFLAG_PF, X64_FLAG_PF},
      {ZYDIS_CPUFLAG_AF, X64_FLAG_AF}, {ZYDIS_CPUFLAG_ZF, X64_FLAG_ZF},
      {ZYDIS_CPUFLAG_SF, X64_FLAG_SF}, {ZYDIS_CPUFLAG_OF, X64_FLAG_OF},
  };
  uint8_t f = 0;
  for (size_t i = 0; i < sizeof map / sizeof *map; i++)
    if (m & map[i].z) f |= map[i].f;
  return f;
}

/* A shift or rotate by 0 (CL, or an immediate masked to 0) leaves the flags
 * alone; so does a rep-prefixed string instruction with rcx = 0. */
static bool may_keep_flags(const ZydisDecodedInstruction *zi, const ZydisDecodedOperand *ops) {
  if (zi->attributes & (ZYDIS_ATTRIB_HAS_REP | ZYDIS_ATTRIB_HAS_REPE | ZYDIS_ATTRIB_HAS_REPNE))
    return true;
  switch (zi->mnemonic) {
  case ZYDIS_MNEMONIC_SHL: case ZYDIS_MNEMONIC_SHR: case ZYDIS_MNEMONIC_SAR:
  case ZYDIS_MNEMONIC_ROL: case ZYDIS_MNEMONIC_ROR: case ZYDIS_MNEMONIC_RCL:
  case ZYDIS_MNEMONIC_RCR: case ZYDIS_MNEMONIC_SHLD: case ZYDIS_MNEMONIC_SHRD: {
    const ZydisDecodedOperand *count = &ops[zi->operand_count_visible - 1];
    if (count->type != ZYDIS_OPERAND_TYPE_IMMEDIATE) return true;
    return (count->imm.value.u & (zi->operand_width == 64 ? 63 : 31)) == 0;
  }
  default: return false;
  }
}

bool x64_decode(const uint8_t *code, size_t avail, uint64_t addr, x64_insn *out) {
  ZydisDecoderContext ctx;
  ZydisDecodedInstruction zi;
  ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT_VISIBLE];
  /* the visible operands only: the hidden ones (rsp of a push, flags) are
   * not needed here, and decoding them was a third of Zydis's time */
  if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(x64_zydis_decoder(), &ctx, code, avail, &zi)) ||
      !ZYAN_SUCCESS(ZydisDecoderDecodeOperands(x64_zydis_decoder(), &ctx, &zi, ops, zi.operand_count_visible)))
    return false;

  memset(out, 0, sizeof *out);
  out->addr = addr;
  out->len = zi.length;
  memcpy(out->bytes, code, zi.length);
  out->mnemonic = zi.mnemonic;
  out->flow = classify(&zi, ops);
  if (out->flow == X64_FLOW_JCC) out->cc = zi.opcode & 0x0f;
  out->disp_size = zi.raw.disp.size;
  out->disp_offset = zi.raw.disp.offset;
  if (zi.cpu_flags) {
    const ZydisAccessedFlags *f = zi.cpu_flags;
    out->flags_read = compact(f->tested);
    if (!may_keep_flags(&zi, ops))
      out->flags_written = compact(f->modified | f->set_0 | f->set_1 | f->undefined);
  }

  for (unsigned i = 0; i < zi.operand_count_visible; i++) {
    const ZydisDecodedOperand *o = &ops[i];
    if (o->type == ZYDIS_OPERAND_TYPE_IMMEDIATE && o->imm.is_relative) {
      ZyanU64 abs;
      if (ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(&zi, o, addr, &abs))) out->target = abs;
    }
    if (o->type == ZYDIS_OPERAND_TYPE_MEMORY && o->mem.base == ZYDIS_REGISTER_RIP) {
      out->rip_relative = true;
      out->rip_target = addr + zi.length + (uint64_t)o->mem.disp.value;
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
  /* a RIP-relative operand must carry a 32-bit displacement we can patch */
  if (out->rip_relative && out->disp_size != 32) return false;
  return true;
}
