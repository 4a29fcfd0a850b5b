/* x64_jumptable.c — backward pattern match of gcc's switch dispatch (see x64_jumptable.h). */
#include "x64_jumptable.h"

#include <Zydis/Zydis.h>

#define SCAN_LIMIT 32    /* instructions walked back from the jmp */
#define MAX_ENTRIES 4096 /* larger bounds are not believed */

static bool is_reg(const x64_operand *o, int reg) { return o->type == X64_OP_REG && o->reg == reg; }

static bool writes(const x64_insn *i, int reg) {
  for (unsigned k = 0; k < i->nops; k++)
    if (i->op[k].written && is_reg(&i->op[k], reg)) return true;
  return false;
}

/* Walks back from FROM for the bound check on IDX and, when LEA_REG != 0, for
 * `lea LEA_REG, [rip+T]`. */
static bool find_bound(const x64_insn *from, int idx, int lea_reg, x64_prev_insn prev, void *ctx,
                       x64_table_match *out) {
  bool have_bound = false, have_lea = lea_reg == 0;
  int pending = 0; /* 1: ja just seen (walking back), 2: jae */
  const x64_insn *i = prev(ctx, from);
  for (int steps = 0; i && steps < SCAN_LIMIT && !(have_bound && have_lea);
       steps++, i = prev(ctx, i)) {
    if (!have_lea) {
      if (i->mnemonic == ZYDIS_MNEMONIC_LEA && is_reg(&i->op[0], lea_reg) && i->rip_relative) {
        out->table = i->rip_target;
        out->ref = i->addr;
        have_lea = true;
        continue;
      }
      if (writes(i, lea_reg)) return false;
    }
    if (have_bound) continue;
    int was_pending = pending;
    pending = 0;
    if (i->mnemonic == ZYDIS_MNEMONIC_JNBE) {
      pending = 1;
    } else if (i->mnemonic == ZYDIS_MNEMONIC_JNB) {
      pending = 2;
    } else if (i->mnemonic == ZYDIS_MNEMONIC_CMP && is_reg(&i->op[0], idx) &&
               i->op[1].type == X64_OP_IMM) {
      if (!was_pending) continue; /* a compare whose flags nobody reads here */
      int64_t n = i->op[1].imm + (was_pending == 1 ? 1 : 0);
      if (n <= 0 || n > MAX_ENTRIES) return false;
      out->nentries = (size_t)n;
      have_bound = true;
    } else if ((i->mnemonic == ZYDIS_MNEMONIC_MOV || i->mnemonic == ZYDIS_MNEMONIC_MOVZX) &&
               is_reg(&i->op[0], idx) && i->op[1].type == X64_OP_REG && i->op[0].size >= 32) {
      idx = i->op[1].reg; /* mov eX, eY / movzx eX, Yl: the index came from Y */
    } else if (writes(i, idx)) {
      return false;
    }
  }
  return have_bound && have_lea;
}

static bool match_rel32(const x64_insn *jmp, x64_prev_insn prev, void *ctx, x64_table_match *out) {
  const x64_operand *t = &jmp->op[0];
  if (t->type != X64_OP_REG || t->size != 64) return false;
  int jreg = t->reg, other = 0;
  const x64_insn *i = prev(ctx, jmp);
  for (int steps = 0; i && steps < SCAN_LIMIT; steps++, i = prev(ctx, i)) { /* add jreg, other */
    if (i->mnemonic == ZYDIS_MNEMONIC_ADD && is_reg(&i->op[0], jreg) &&
        i->op[1].type == X64_OP_REG && i->op[0].size == 64) {
      other = i->op[1].reg;
      break;
    }
    if (writes(i, jreg)) return false;
  }
  if (!i || !other) return false;
  for (i = prev(ctx, i); i; i = prev(ctx, i)) { /* movsxd loaded, [base + idx*4] */
    if (i->mnemonic == ZYDIS_MNEMONIC_MOVSXD && i->op[0].type == X64_OP_REG &&
        i->op[1].type == X64_OP_MEM && (i->op[0].reg == jreg || i->op[0].reg == other)) {
      const x64_operand *m = &i->op[1];
      int base = i->op[0].reg == jreg ? other : jreg;
      if (m->base != base || m->index == 0 || m->scale != 4 || m->disp != 0 || m->size != 32)
        return false;
      out->kind = X64_TABLE_REL32;
      return find_bound(i, m->index, base, prev, ctx, out);
    }
    if (writes(i, jreg) || writes(i, other)) return false;
  }
  return false;
}

static bool match_abs64(const x64_insn *jmp, x64_prev_insn prev, void *ctx, x64_table_match *out) {
  const x64_operand *m = &jmp->op[0];
  if (m->type != X64_OP_MEM || m->base != 0 || m->index == 0 || m->scale != 8 ||
      jmp->disp_size != 32 || m->size != 64)
    return false;
  out->kind = X64_TABLE_ABS64;
  out->table = (uint64_t)m->disp;
  out->ref = jmp->addr;
  return find_bound(jmp, m->index, 0, prev, ctx, out);
}

bool x64_match_jump_table(const x64_insn *jmp, x64_prev_insn prev, void *ctx,
                          x64_table_match *out) {
  if (jmp->flow != X64_FLOW_JMP_INDIRECT) return false;
  return match_rel32(jmp, prev, ctx, out) || match_abs64(jmp, prev, ctx, out);
}
