/* x64_jumptable.c — backward pattern match of gcc's and LLVM's switch dispatch (see x64_jumptable.h). */
#include "x64_jumptable.h"

#include <string.h>

#include "x64_quick.h"
#include "x64_zydis.h"

#define SCAN_LIMIT 32    /* instructions walked back from the jmp */
#define MAX_ENTRIES 4096 /* larger bounds are not believed */

_Static_assert(ZYDIS_REGISTER_RSP - ZYDIS_REGISTER_RAX == 4 && ZYDIS_REGISTER_R15 - ZYDIS_REGISTER_RAX == 15,
               "x64_gpr_bit's mask: rax .. r15 in order, rsp fifth");

static bool is_reg(const x64_operand *o, int reg) { return o->type == X64_OP_REG && o->reg == reg; }

/* {=== what an instruction may change ===*/

/* x64_insn keeps only the visible operands and the flags an instruction always
 * writes; the matcher must also know the hidden ones (cdqe writes rax, push
 * stores to memory) and the flags it may leave changed (a shift by cl), so it
 * decodes the bytes again; but which general-purpose registers a table-decoded
 * instruction writes comes from its bytes (x64_quick_gprs_written). */
typedef struct effects {
  bool everything; /* a system call, an interrupt: anything may change */
  bool memory;     /* may store to memory */
  bool flags;      /* may change a status flag */
  unsigned nregs;
  int regs[ZYDIS_MAX_OPERAND_COUNT + 9]; /* registers it may write, widened to 64 bits */
} effects;

static effects effects_of(const x64_insn *i) {
  effects e = {0};
  ZydisDecodedInstruction zi;
  ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
  if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(x64_zydis_decoder(), i->bytes, i->len, &zi, ops)) ||
      zi.meta.category == ZYDIS_CATEGORY_SYSCALL || zi.meta.category == ZYDIS_CATEGORY_INTERRUPT) {
    e.everything = e.memory = e.flags = true;
    return e;
  }
  if (i->flow == X64_FLOW_CALL || i->flow == X64_FLOW_CALL_INDIRECT) {
    /* the callee may change the caller-saved registers (SysV ABI), flags and memory */
    static const int clobbered[] = {ZYDIS_REGISTER_RAX, ZYDIS_REGISTER_RCX, ZYDIS_REGISTER_RDX,
                                    ZYDIS_REGISTER_RSI, ZYDIS_REGISTER_RDI, ZYDIS_REGISTER_R8,
                                    ZYDIS_REGISTER_R9,  ZYDIS_REGISTER_R10, ZYDIS_REGISTER_R11};
    for (size_t k = 0; k < sizeof clobbered / sizeof *clobbered; k++)
      e.regs[e.nregs++] = clobbered[k];
    e.memory = e.flags = true;
  }
  if (zi.cpu_flags)
    e.flags = (zi.cpu_flags->modified | zi.cpu_flags->set_0 | zi.cpu_flags->set_1 |
               zi.cpu_flags->undefined) != 0;
  for (unsigned k = 0; k < zi.operand_count; k++) {
    const ZydisDecodedOperand *o = &ops[k];
    if (!(o->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE)) continue;
    if (o->type == ZYDIS_OPERAND_TYPE_REGISTER)
      e.regs[e.nregs++] = x64_widen(o->reg.value);
    else if (o->type == ZYDIS_OPERAND_TYPE_MEMORY && o->mem.type == ZYDIS_MEMOP_TYPE_MEM)
      e.memory = true;
  }
  return e;
}

static bool may_write(const effects *e, int reg) {
  if (e->everything) return true;
  for (unsigned k = 0; k < e->nregs; k++)
    if (e->regs[k] == reg) return true;
  return false;
}

uint16_t x64_gpr_bit(int reg) {
  return reg >= ZYDIS_REGISTER_RAX && reg <= ZYDIS_REGISTER_R15 ? (uint16_t)(1u << (reg - ZYDIS_REGISTER_RAX)) : 0;
}

bool x64_insn_may_write(const x64_insn *i, int reg) {
  uint16_t bit = x64_gpr_bit(reg);
  if (bit && i->quick) return (x64_quick_gprs_written(i) & bit) != 0; /* from the bytes: no decoding again */
  effects e = effects_of(i);
  return may_write(&e, reg);
}

uint16_t x64_insn_gprs_written(const x64_insn *i) {
  if (i->quick) return x64_quick_gprs_written(i);
  effects e = effects_of(i);
  if (e.everything) return X64_ALL_GPRS;
  uint16_t gprs = 0;
  for (unsigned k = 0; k < e.nregs; k++) gprs |= x64_gpr_bit(e.regs[k]);
  return gprs;
}

bool x64_insn_may_move_stack(const x64_insn *i) { return x64_insn_may_write(i, ZYDIS_REGISTER_RSP); }

bool x64_insn_reload(const x64_insn *i, int reg, int64_t *d) {
  const x64_operand *a = &i->op[0], *m = &i->op[1];
  if (i->mnemonic != ZYDIS_MNEMONIC_MOV || i->nops != 2 || !is_reg(a, reg) || a->size != 64 ||
      m->type != X64_OP_MEM || m->base != ZYDIS_REGISTER_RSP || m->index != 0 || m->size != 64)
    return false;
  *d = m->disp;
  return true;
}

bool x64_insn_loads_entry(const x64_insn *i, int reg, int base) {
  const x64_operand *a = &i->op[0], *m = &i->op[1];
  return i->mnemonic == ZYDIS_MNEMONIC_MOV && i->nops == 2 && is_reg(a, reg) && a->size == 64 &&
         m->type == X64_OP_MEM && m->base == base && m->index != 0 && m->scale == 8 && m->disp == 0;
}

bool x64_insn_copy(const x64_insn *i, int reg, int *src) {
  const x64_operand *a = &i->op[0], *b = &i->op[1];
  if (i->mnemonic != ZYDIS_MNEMONIC_MOV || i->nops != 2 || !is_reg(a, reg) || a->size != 64 || b->type != X64_OP_REG ||
      b->size != 64)
    return false;
  *src = b->reg;
  return true;
}

bool x64_insn_spill(const x64_insn *i, int *reg, int64_t *d) {
  const x64_operand *m = &i->op[0], *r = &i->op[1];
  if (i->mnemonic != ZYDIS_MNEMONIC_MOV || i->nops != 2 || m->type != X64_OP_MEM || m->base != ZYDIS_REGISTER_RSP ||
      m->index != 0 || m->size != 64 || r->type != X64_OP_REG || r->size != 64)
    return false;
  *reg = r->reg;
  *d = m->disp;
  return true;
}

/* From the operands x64_insn keeps, which hold any memory an instruction
 * names to write (its visible destination is among its first two; a push's
 * or a call's store is hidden, below rsp): no decoding again, which walks
 * back from CPython's dispatches asked ~700 000 times (1.2 G instructions of
 * its tracer under arcs).  tests/unit/test_decode.c checks it against
 * Zydis's full operands. */
bool x64_insn_may_store_to_slot(const x64_insn *i, int64_t d) {
  for (unsigned k = 0; k < i->nops; k++) {
    const x64_operand *o = &i->op[k];
    if (o->type != X64_OP_MEM || !o->written || o->base != ZYDIS_REGISTER_RSP) continue;
    if (o->index) return true;
    int64_t lo = o->disp, hi = lo + (o->size ? o->size / 8 : 1);
    if (lo < d + 8 && d < hi) return true;
  }
  return false;
}

bool x64_insn_lea_rip(const x64_insn *i, int reg, uint64_t *target) {
  if (i->mnemonic != ZYDIS_MNEMONIC_LEA || !i->rip_relative || !is_reg(&i->op[0], reg) || i->op[0].size != 64)
    return false;
  *target = i->rip_target;
  return true;
}

bool x64_first_arg_constant(const x64_insn *call, x64_prev_insn prev, void *ctx, int64_t *value) {
  const x64_insn *i = prev(ctx, call);
  for (int steps = 0; i && steps < 16; steps++, i = prev(ctx, i)) {
    if (!x64_insn_may_write(i, ZYDIS_REGISTER_RDI)) continue;
    if (i->mnemonic != ZYDIS_MNEMONIC_MOV || !is_reg(&i->op[0], ZYDIS_REGISTER_RDI) || i->op[1].type != X64_OP_IMM)
      return false;
    *value = i->op[1].imm;
    return true;
  }
  return false;
}

/* }=== */

/* A store that cannot change LOADED, the memory a switch's index is read
 * from after its bound was checked on it: a `mov [m], x` whose bytes lie
 * apart (same base and index, displacements that do not overlap: gcc stores
 * a flag next to the byte it switches on, `cmpb $8, 0x65(%rbx); movb $1,
 * 0x67(%rbx); ja; movzbl 0x65(%rbx), %eax`), or a store into the stack
 * frame while LOADED is addressed through another register (jsoncpp's
 * Value::asInt: `cmpb $5, 8(%rdi); movaps %xmm2, (%rsp); ja; movzbl
 * 8(%rdi), %eax`; Debian's python3, a prologue shrink-wrapped below the
 * bound check: `cmpl $0x1b, (%rsi); ja; push %r15; ...; mov (%rsi), %eax`).
 * The compiler read the memory twice around the store, which it does only
 * where the two do not overlap.  LOADED_AT, when not 0, is the address of a
 * global LOADED names ([rip+d]: tar's `switch (subcommand_option)`), apart
 * from the stack and from the bytes of another global. */
static bool stores_apart(const x64_insn *i, const x64_operand *loaded, uint64_t loaded_at) {
  const x64_operand *m = &i->op[0];
  bool elsewhere = loaded_at || (loaded->base && loaded->base != ZYDIS_REGISTER_RSP);
  if (i->mnemonic == ZYDIS_MNEMONIC_PUSH) return elsewhere; /* the prologue after the bound check */
  if (m->type != X64_OP_MEM) return false;
  if (i->rip_relative) {
    uint64_t a = i->rip_target, b = loaded_at;
    return loaded_at && i->mnemonic == ZYDIS_MNEMONIC_MOV && (a + m->size / 8 <= b || b + loaded->size / 8 <= a);
  }
  if (m->base == ZYDIS_REGISTER_RSP) return elsewhere;
  if (loaded_at) return false;
  if (i->mnemonic != ZYDIS_MNEMONIC_MOV || m->base != loaded->base || m->index != loaded->index ||
      m->scale != loaded->scale)
    return false;
  int64_t a = m->disp, b = loaded->disp;
  return a + (int64_t)(m->size / 8) <= b || b + (int64_t)(loaded->size / 8) <= a;
}

/* Does operand A of instruction I name the memory LOADED, of the same width:
 * the same base, index, scale and displacement, or (LOADED_AT, a global
 * [rip+d]) the same address. */
static bool same_memory(const x64_insn *i, const x64_operand *a, const x64_operand *loaded, uint64_t loaded_at) {
  if (a->type != X64_OP_MEM || a->size != loaded->size) return false;
  if (loaded_at || i->rip_relative) return i->rip_relative && i->rip_target == loaded_at;
  return a->base == loaded->base && a->index == loaded->index && a->scale == loaded->scale && a->disp == loaded->disp;
}

/* Walks back from FROM, where the index is in register IDX, for the bound
 * check on it and, when LEA_REG != 0, for `lea LEA_REG, [rip+T]`.
 *
 * The bound check is `cmp IDX, N` followed by `ja` (N+1 entries) or `jae` (N),
 * with nothing between them that may write the flags or the index (gcc puts
 * `mov edi, edi`, the zero-extension of the index, or a push there).  N is
 * unsigned at the compare's width (`cmp r15b, 0xb5` bounds 182 entries); a
 * compare narrower than 32 bits bounds the index only when the index is its
 * register or memory zero-extended (`movzx`) from at most that width.
 * Register copies `mov/movzx IDX, rY` (32 or 64 bits) and `movsxd IDX, eY` are
 * followed back to Y.
 * When IDX was loaded from memory (`mov IDX, [rbp+d]` at gcc -O0, `movzx eax,
 * byte [rcx+rax]` at -O2, a global's `mov eax, [rip+d]`), the check is on that memory, `cmp byte/dword [m], N`
 * of the load's width, and nothing between the compare and the load may store
 * to memory or change the registers that address it. */
/* The tighter of two bounds on the number of entries (0: none). */
static size_t tighter(size_t implicit, size_t n) { return n && (!implicit || n < implicit) ? n : implicit; }

/* What an index zero-extended from BITS allows: a byte, 256 entries; words
 * and wider do not bound a table. */
static size_t width_entries(unsigned bits) { return bits == 8 ? 256 : 0; }

/* No compare bounds the index: IMPLICIT (its width or a mask) does, when
 * there is one; the match says so.  For tables of absolute addresses
 * (computed gotos hold their labels'), and for others when MASK (`and eX,
 * 2^k-1`: Duff's device, `switch (len & 7)` in Debian's perl's hashes) says
 * that every entry up to it is read; a table of offsets that only a byte
 * index bounds is `open` (gnulib's regex: a switch's table shorter than its
 * index's width, what follows it read as entries).  Not when a ja/jae tests
 * a bound compare of a register not known to be the index. */
static bool bound_by_width(size_t implicit, size_t mask, bool unknown_check, x64_table_match *out) {
  if (!implicit || unknown_check) return false;
  out->nentries = implicit;
  out->implicit = true;
  out->open = out->kind != X64_TABLE_ABS64 && !mask;
  return true;
}

static bool find_bound(const x64_insn *from, int idx, int lea_reg, x64_prev_insn prev, void *ctx,
                       x64_table_match *out) {
  bool have_bound = false, have_lea = lea_reg == 0;
  int pending = 0; /* 1: ja seen (walking back) and its flags not yet set, 2: jae */
  bool in_memory = false; /* the index came from the memory operand `loaded` */
  x64_operand loaded = {0};
  uint64_t loaded_at = 0; /* `loaded` is [rip+d]: the address it names */
  unsigned narrow = 0; /* the index is zero-extended from this many bits (movzx), 0: not known */
  size_t implicit = 0;  /* entries its width or a mask allows (no compare yet), 0: unbounded */
  size_t mask = 0;      /* entries a mask allows, 0: none */
  bool unknown_check = false; /* a ja/jae tests `cmp R, N` with R not known to be the index */
  int copy = 0;             /* that R (0: none), a bound if it is found to be a copy of the index:
                               `mov R, IDX` or `mov IDX, R` further back (Debian's perl,
                               Perl_sv_upgrade), or of a narrow R `movzx IDX, R` (Perl_sv_setiv:
                               `movzbl %al, %edx; cmp $0xf, %al`), R not written in between */
  unsigned copy_bits = 0;   /* the compare's width */
  size_t copy_entries = 0;
  unsigned confirm = 0; /* a compare of this many bits (< 32) bounds the index if, further
                           back, it is zero-extended from at most as many (movzx) */
  const x64_insn *after = from, *i = prev(ctx, from); /* I comes right before AFTER on the way back */
  for (int steps = 0; i && steps < SCAN_LIMIT && !(have_bound && have_lea && !confirm);
       steps++, after = i, i = prev(ctx, i)) {
    effects e = effects_of(i);
    const x64_operand *a = &i->op[0], *b = &i->op[1];
    if (!have_lea) {
      if (i->mnemonic == ZYDIS_MNEMONIC_LEA && is_reg(&i->op[0], lea_reg) && i->rip_relative) {
        if (!have_bound && !in_memory && idx == lea_reg) return false; /* it clobbers the index */
        out->table = i->rip_target;
        out->ref = i->addr;
        have_lea = true;
        continue;
      }
      if (may_write(&e, lea_reg)) return false;
    }
    if (have_bound) {
      if (!confirm || (!e.everything && (in_memory ? !(e.memory && !stores_apart(i, &loaded, loaded_at))
                                                    : !may_write(&e, idx))))
        continue;
      if (!in_memory && i->mnemonic == ZYDIS_MNEMONIC_MOV && is_reg(a, idx) && a->size >= 32 &&
          b->type == X64_OP_REG && b->size == a->size) {
        idx = b->reg; /* a copy (jsoncpp's Value::operator<): the zero-extension is its source's */
        continue;
      }
      if (in_memory || i->mnemonic != ZYDIS_MNEMONIC_MOVZX || !is_reg(a, idx) || a->size < 32 ||
          b->size > confirm)
        return false;
      confirm = 0;
      continue;
    }
    if (e.everything) {
      if (!bound_by_width(implicit, mask, unknown_check, out)) return false;
      have_bound = true;
      continue;
    }
    bool above = i->mnemonic == ZYDIS_MNEMONIC_JNBE || i->mnemonic == ZYDIS_MNEMONIC_JNB;
    if (above || i->mnemonic == ZYDIS_MNEMONIC_JBE || i->mnemonic == ZYDIS_MNEMONIC_JB) {
      /* the way on: ja/jae not taken, or jbe/jb taken (a branch that is the only way in) */
      bool taken = i->target == after->addr && i->addr + i->len != after->addr;
      if (above != taken) pending = i->mnemonic == ZYDIS_MNEMONIC_JNBE || i->mnemonic == ZYDIS_MNEMONIC_JBE ? 1 : 2;
      else if (above) pending = 0; /* ja/jae taken: the index is past the bound */
      continue;
    }
    bool on_index = in_memory ? same_memory(i, a, &loaded, loaded_at) : is_reg(a, idx);
    if (i->mnemonic == ZYDIS_MNEMONIC_CMP && on_index && b->type == X64_OP_IMM) {
      if (!pending) continue; /* a compare whose flags nobody reads here */
      if (a->size < 32 && !(narrow && narrow <= a->size)) {
        if (in_memory) return false;
        confirm = a->size; /* the movzx may come before the compare */
      }
      uint64_t bound = a->size >= 64 ? (uint64_t)b->imm : (uint64_t)b->imm & ((1ull << a->size) - 1);
      uint64_t n = bound + (pending == 1 ? 1 : 0);
      if (n == 0 || n > MAX_ENTRIES) return false;
      out->nentries = (size_t)n;
      have_bound = true;
      continue;
    }
    if (pending && i->mnemonic == ZYDIS_MNEMONIC_CMP && b->type == X64_OP_IMM) {
      unknown_check = true;
      uint64_t n = (a->size >= 64 ? (uint64_t)b->imm : (uint64_t)b->imm & ((1ull << a->size) - 1)) +
                   (pending == 1 ? 1 : 0);
      bool known = a->type == X64_OP_REG && n > 0 && n <= MAX_ENTRIES && !in_memory && !copy;
      copy = known ? a->reg : copy;
      copy_bits = known ? a->size : copy_bits;
      copy_entries = known ? (size_t)n : copy_entries;
    }
    if (e.flags) pending = 0; /* the ja tests these flags, not an earlier compare's */
    if (in_memory && i->mnemonic == ZYDIS_MNEMONIC_LEA && loaded.index && is_reg(a, loaded.index) &&
        a->size == 64 && b->index == 0 && b->base && b->base != loaded.base && !i->rip_relative) {
      /* lea rI, [rK+d] then [rB+rI*s]: the load reads [rB+rK*s+d*s] (xz's rc_encode) */
      loaded.index = b->base;
      loaded.disp += b->disp * loaded.scale;
      continue;
    }
    if (in_memory) {
      if ((e.memory && !stores_apart(i, &loaded, loaded_at)) ||
          (loaded.base && !loaded_at && may_write(&e, loaded.base)) ||
          (loaded.index && may_write(&e, loaded.index))) {
        if (!bound_by_width(implicit, mask, unknown_check, out)) return false;
        have_bound = true;
      }
      continue;
    }
    bool mov = i->mnemonic == ZYDIS_MNEMONIC_MOV, movzx = i->mnemonic == ZYDIS_MNEMONIC_MOVZX;
    bool movsxd = i->mnemonic == ZYDIS_MNEMONIC_MOVSXD && a->size == 64 && b->size == 32;
    bool copied = mov && copy_bits >= 32 && a->size >= 32 && b->type == X64_OP_REG && b->size == a->size &&
                  ((is_reg(a, copy) && is_reg(b, idx)) || (is_reg(a, idx) && is_reg(b, copy)));
    bool widened = movzx && copy_bits < 32 && is_reg(a, idx) && a->size >= 32 && is_reg(b, copy) &&
                   b->size == copy_bits;
    if (copy && (copied || widened)) {
      out->nentries = copy_entries; /* the compare was on a copy of the index */
      have_bound = true;
      continue;
    }
    if (copy && may_write(&e, copy)) copy = 0;
    if ((mov || movzx || movsxd) && is_reg(a, idx) && a->size >= 32 && b->type == X64_OP_REG) {
      /* mov eX, eY / movzx eX, Yl / movsxd rX, eY: the index came from Y (every bound
       * found on Y is below 2^31, where the sign extension changes nothing) */
      idx = b->reg;
      if (movzx) narrow = b->size, implicit = tighter(implicit, width_entries(b->size));
      continue;
    }
    if (((mov && b->size == a->size) || movzx) && is_reg(a, idx) && a->size >= 32 &&
        b->type == X64_OP_MEM) { /* mov eX, [m] / movzx eX, byte [m] / mov eX, [rip+d] */
      in_memory = true;
      loaded = *b;
      loaded_at = i->rip_relative ? i->rip_target : 0;
      if (movzx) narrow = b->size, implicit = tighter(implicit, width_entries(b->size));
      continue;
    }
    if (i->mnemonic == ZYDIS_MNEMONIC_AND && is_reg(a, idx) && a->size >= 32 && b->type == X64_OP_IMM &&
        b->imm > 0 && b->imm < MAX_ENTRIES && ((b->imm + 1) & b->imm) == 0) {
      implicit = tighter(implicit, (size_t)b->imm + 1); /* and eX, 2^k-1 */
      mask = tighter(mask, (size_t)b->imm + 1);
      continue; /* what X held before is bounded by any compare further back too */
    }
    if (may_write(&e, idx)) {
      if (!bound_by_width(implicit, mask, unknown_check, out)) return false;
      have_bound = true;
    }
  }
  return (have_bound || bound_by_width(implicit, mask, unknown_check, out)) && have_lea && !confirm;
}

/* `add JREG, OTHER` (64 bits) before JMP, JREG not written in between; JMP is `jmp JREG`. */
static const x64_insn *find_add(const x64_insn *jmp, x64_prev_insn prev, void *ctx, int *jreg,
                                int *other) {
  const x64_operand *t = &jmp->op[0];
  if (t->type != X64_OP_REG || t->size != 64) return NULL;
  *jreg = t->reg;
  const x64_insn *i = prev(ctx, jmp);
  for (int steps = 0; i && steps < SCAN_LIMIT; steps++, i = prev(ctx, i)) {
    if (i->mnemonic == ZYDIS_MNEMONIC_ADD && is_reg(&i->op[0], *jreg) &&
        i->op[1].type == X64_OP_REG && i->op[0].size == 64) {
      *other = i->op[1].reg;
      return *other != *jreg ? i : NULL;
    }
    if (x64_insn_may_write(i, *jreg)) return NULL;
  }
  return NULL;
}

static bool address_size_prefix(const x64_insn *i) {
  static const uint8_t legacy[] = {0x26, 0x2e, 0x36, 0x3e, 0x64, 0x65, 0x66, 0x67, 0xf0, 0xf2, 0xf3};
  for (unsigned k = 0; k < i->len && memchr(legacy, i->bytes[k], sizeof legacy); k++)
    if (i->bytes[k] == 0x67) return true;
  return false;
}

/* The match of a dispatch that nothing bounds (gcc knows its default case
 * unreachable: gnulib's regex, its index a token type a callee wrote), read
 * at LOAD through TREG, which `lea TREG, [rip+T]` sets on the straight line
 * before (T is TABLE unless that is 0); when no instruction there writes TREG
 * and HOIST, the lea is the caller's to find (base_reg).  The copy compares
 * REG, the index times UNIT, with the entries it keeps times UNIT.  False
 * when an instruction between LOAD and JMP reads the flags that compare
 * changes (the add of the entry to T overwrites them), or when LOAD's
 * address is 32 bits wide (its index is then REG's low half). */
static bool guard_match(const x64_insn *jmp, const x64_insn *load, int reg, unsigned unit, int treg, uint64_t table,
                        bool hoist, x64_prev_insn prev, void *ctx, x64_table_match *out) {
  if (address_size_prefix(load)) return false;
  const x64_insn *i = prev(ctx, jmp);
  for (int steps = 0; i != load; steps++, i = prev(ctx, i))
    if (!i || steps == SCAN_LIMIT || i->flags_read) return false;
  *out = (x64_table_match){.kind = X64_TABLE_REL32, .nentries = MAX_ENTRIES, .implicit = true, .guarded = true,
                           .load = load->addr, .guard_reg = (uint8_t)ZydisRegisterGetId(reg),
                           .guard_unit = (uint8_t)unit};
  i = prev(ctx, load);
  for (int steps = 0; i && steps < SCAN_LIMIT; steps++, i = prev(ctx, i)) {
    if (!x64_insn_may_write(i, treg)) continue;
    if (!x64_insn_lea_rip(i, treg, &out->table) || (table && out->table != table)) return false;
    out->ref = i->addr;
    return true;
  }
  out->base_reg = treg; /* lea T hoisted: the caller finds it */
  return hoist;
}

/* guard_match for the -O0 form, whose second lea (REF2) names T too. */
static bool split_guard_match(const x64_insn *jmp, const x64_insn *load, int reg, unsigned unit, int treg,
                              uint64_t table, uint64_t ref2, x64_prev_insn prev, void *ctx, x64_table_match *out) {
  if (!guard_match(jmp, load, reg, unit, treg, table, false, prev, ctx, out)) return false;
  out->ref2 = ref2;
  return true;
}

/* gcc -O1..-O3: lea rB,[rip+T] … movsxd rI,dword [rB+rX*4] … add rI,rB … jmp rI;
 * with no bound on rX, guarded (guard_match: gnulib's regex; LLVM may write
 * rX again between the load and the add, fdfind's `mov %rbp,%rbx`). */
static bool match_rel32(const x64_insn *jmp, x64_prev_insn prev, void *ctx, x64_table_match *out) {
  int jreg, other;
  const x64_insn *add = find_add(jmp, prev, ctx, &jreg, &other), *i;
  if (!add) return false;
  for (i = prev(ctx, add); i; i = prev(ctx, i)) { /* movsxd loaded, [base + idx*4] */
    if (i->mnemonic == ZYDIS_MNEMONIC_MOVSXD && i->op[0].type == X64_OP_REG &&
        i->op[1].type == X64_OP_MEM && (i->op[0].reg == jreg || i->op[0].reg == other)) {
      const x64_operand *m = &i->op[1];
      int base = i->op[0].reg == jreg ? other : jreg;
      if (m->base != base || m->index == 0 || m->scale != 4 || m->disp != 0 || m->size != 32)
        return false;
      out->kind = X64_TABLE_REL32;
      out->load = i->addr;
      if (find_bound(i, m->index, base, prev, ctx, out)) return true;
      *out = (x64_table_match){.kind = X64_TABLE_REL32, .base_reg = base, .load = i->addr}; /* lea T hoisted */
      if (find_bound(i, m->index, 0, prev, ctx, out)) return true;
      return m->index != base && guard_match(jmp, i, m->index, 1, base, 0, true, prev, ctx, out);
    }
    if (x64_insn_may_write(i, jreg) || x64_insn_may_write(i, other)) return false;
  }
  return false;
}

/* gcc -O0, PIC: T is loaded twice, the entry's offset is computed apart and the
 * entry sign-extended by cdqe:
 *   mov eax, [rbp+d]   (or a register)       ; the index, bound-checked before
 *   lea rdx, [rax*4]
 *   lea rax, [rip+T]
 *   mov eax, dword [rdx+rax]                 ; or movsxd rax, dword [rdx+rax]
 *   cdqe
 *   lea rdx, [rip+T]
 *   add rax, rdx
 *   jmp rax
 * (the two leas before the load in either order, and [rT+rX*4] accepted too).
 * Both leas name T: ref and ref2.  With no bound on the index, guarded
 * (guard_match; at -O0 too gcc drops it when the default case is
 * unreachable). */
static bool match_rel32_split(const x64_insn *jmp, x64_prev_insn prev, void *ctx, x64_table_match *out) {
  int jreg, other;
  const x64_insn *i = find_add(jmp, prev, ctx, &jreg, &other);
  if (!i) return false;
  int steps = 0;
  for (i = prev(ctx, i); i && steps < SCAN_LIMIT; i = prev(ctx, i), steps++) { /* lea other, [rip+T] */
    if (i->mnemonic == ZYDIS_MNEMONIC_LEA && is_reg(&i->op[0], other) && i->op[0].size == 64 &&
        i->rip_relative)
      break;
    if (x64_insn_may_write(i, other) || x64_insn_may_write(i, jreg)) return false;
  }
  if (!i || steps >= SCAN_LIMIT) return false;
  uint64_t table = i->rip_target;
  out->ref2 = i->addr;

  const x64_insn *load = NULL; /* the entry, sign-extended into jreg */
  for (i = prev(ctx, i); i && !load && steps < SCAN_LIMIT; i = prev(ctx, i), steps++) {
    const x64_operand *a = &i->op[0], *b = &i->op[1];
    if (i->mnemonic == ZYDIS_MNEMONIC_MOVSXD && is_reg(a, jreg) && a->size == 64 &&
        b->type == X64_OP_MEM && b->size == 32) {
      load = i;
      break;
    }
    if (i->mnemonic == ZYDIS_MNEMONIC_CDQE && jreg == ZYDIS_REGISTER_RAX) {
      for (i = prev(ctx, i); i && steps < SCAN_LIMIT; i = prev(ctx, i), steps++) {
        a = &i->op[0], b = &i->op[1];
        if (i->mnemonic == ZYDIS_MNEMONIC_MOV && is_reg(a, jreg) && a->size == 32 &&
            b->type == X64_OP_MEM && b->size == 32) {
          load = i;
          break;
        }
        if (x64_insn_may_write(i, jreg)) return false;
      }
      break;
    }
    if (x64_insn_may_write(i, jreg)) return false;
  }
  if (!load) return false;
  const x64_operand *m = &load->op[1];
  if (load->rip_relative || m->disp != 0 || !m->base || !m->index || m->base == m->index)
    return false;
  out->kind = X64_TABLE_REL32;
  uint64_t ref2 = out->ref2;
  if (m->scale == 4) /* [rT + rX*4] */
    return (find_bound(load, m->index, m->base, prev, ctx, out) && out->table == table) ||
           split_guard_match(jmp, load, m->index, 1, m->base, table, ref2, prev, ctx, out);
  if (m->scale != 1) return false;

  /* [rA + rB]: one holds T (lea [rip+T]), the other the index times 4 (lea [rX*4]) */
  int treg = 0; /* found `lea treg, [rip+T]` */
  for (i = prev(ctx, load); i && steps < SCAN_LIMIT; i = prev(ctx, i), steps++) {
    bool wa = m->base != treg && x64_insn_may_write(i, m->base);
    bool wb = m->index != treg && x64_insn_may_write(i, m->index);
    if (!wa && !wb) continue;
    if (wa && wb) return false;
    int w = wa ? m->base : m->index;
    const x64_operand *a = &i->op[0], *b = &i->op[1];
    if (i->mnemonic != ZYDIS_MNEMONIC_LEA || !is_reg(a, w) || a->size != 64) return false;
    if (i->rip_relative) {
      if (treg || i->rip_target != table) return false;
      treg = w;
      out->table = table;
      out->ref = i->addr;
      continue;
    }
    if (b->base != 0 || b->index == 0 || b->scale != 4 || b->disp != 0) return false;
    int t = w == m->base ? m->index : m->base; /* the register of T; w holds the index times 4 */
    bool bounded = treg ? find_bound(i, b->index, 0, prev, ctx, out)
                        : find_bound(i, b->index, t, prev, ctx, out) && out->table == table;
    return bounded || split_guard_match(jmp, load, w, 4, t, table, ref2, prev, ctx, out);
  }
  return false;
}

/* Nothing on the way back bounds the index of the absolute table T read at
 * LOAD (the callers bound it, gcc knows the default case unreachable,
 * CPython's Py_UNREACHABLE, or a check the walk does not understand): the
 * table is read to its end, guessed.  Its entries are absolute: every real
 * one lands in the code, so reading on to the first that does not never
 * cuts the table short, and what lies past it is another table's labels,
 * never jumped through, or entries that decode as no code, and then
 * decoding starts again without it (relocate/reloc_function.c).  Read
 * through BASE (not 0), T is the caller's to find, as base_reg's is. */
static bool guessed(uint64_t t, uint64_t load, int base, x64_table_match *out) {
  *out = (x64_table_match){.kind = X64_TABLE_ABS64, .table = t, .ref = base ? 0 : load, .base_reg = base,
                           .load = load, .nentries = MAX_ENTRIES, .implicit = true, .guessed = true};
  return true;
}

/* LOAD (the jmp itself, or the mov before it) reads entry [rB+rX*8] (M):
 * rB's `lea rB, [rip+T]` on the way back bounded, or anywhere in the
 * function (base_reg: computed gotos, the table's address loaded once);
 * with no bound, read to its end (guessed: CPython's regex engine in a PIC
 * libpython, `mov 0x4(%r10),%eax; mov (%r8,%rax,8),%rax; jmp *%rax`). */
static bool match_based(const x64_insn *load, const x64_operand *m, x64_prev_insn prev, void *ctx,
                        x64_table_match *out) {
  if (m->disp != 0 || m->base == m->index) return false;
  *out = (x64_table_match){.kind = X64_TABLE_ABS64, .load = load->addr};
  if (find_bound(load, m->index, m->base, prev, ctx, out)) return true;
  *out = (x64_table_match){.kind = X64_TABLE_ABS64, .base_reg = m->base, .load = load->addr};
  return find_bound(load, m->index, 0, prev, ctx, out) || guessed(0, load->addr, m->base, out);
}

/* gcc -O1..-O3, non-PIE: jmp qword [rX*8+T]; PIE: jmp qword [rB+rX*8]
 * (match_based) */
static bool match_abs64(const x64_insn *jmp, x64_prev_insn prev, void *ctx, x64_table_match *out) {
  const x64_operand *m = &jmp->op[0];
  if (m->type != X64_OP_MEM || m->index == 0 || m->scale != 8 || m->size != 64 || jmp->rip_relative)
    return false;
  if (m->base != 0) return match_based(jmp, m, prev, ctx, out);
  if (jmp->disp_size != 32) return false;
  out->kind = X64_TABLE_ABS64;
  out->table = (uint64_t)m->disp;
  out->ref = out->load = jmp->addr;
  return find_bound(jmp, m->index, 0, prev, ctx, out) || guessed(out->table, jmp->addr, 0, out);
}

/* gcc -O0, non-PIE: mov rJ, qword [rX*8+T] … jmp rJ (the mov names T);
 * computed gotos, PIE: lea rB, [rip+T] … mov rJ, qword [rB+rX*8] … jmp rJ, the
 * lea anywhere in the function when not on the way back (base_reg). */
static bool match_abs64_load(const x64_insn *jmp, x64_prev_insn prev, void *ctx,
                             x64_table_match *out) {
  const x64_operand *t = &jmp->op[0];
  if (t->type != X64_OP_REG || t->size != 64) return false;
  int jreg = t->reg;
  const x64_insn *i = prev(ctx, jmp);
  for (int steps = 0; i && steps < SCAN_LIMIT; steps++, i = prev(ctx, i)) {
    const x64_operand *a = &i->op[0], *m = &i->op[1];
    if (i->mnemonic == ZYDIS_MNEMONIC_MOV && is_reg(a, jreg) && a->size == 64 &&
        m->type == X64_OP_MEM && m->index != 0 && m->scale == 8 && m->size == 64 &&
        !i->rip_relative) {
      out->kind = X64_TABLE_ABS64;
      out->load = i->addr;
      if (m->base == 0) {
        if (i->disp_size != 32) return false;
        out->table = (uint64_t)m->disp;
        out->ref = i->addr;
        return find_bound(i, m->index, 0, prev, ctx, out) || guessed(out->table, i->addr, 0, out);
      }
      return match_based(i, m, prev, ctx, out);
    }
    if (x64_insn_may_write(i, jreg)) return false;
  }
  return false;
}

static bool is_cmov(const x64_insn *i) {
  switch (i->mnemonic) {
  case ZYDIS_MNEMONIC_CMOVO: case ZYDIS_MNEMONIC_CMOVNO: case ZYDIS_MNEMONIC_CMOVB: case ZYDIS_MNEMONIC_CMOVNB:
  case ZYDIS_MNEMONIC_CMOVZ: case ZYDIS_MNEMONIC_CMOVNZ: case ZYDIS_MNEMONIC_CMOVBE: case ZYDIS_MNEMONIC_CMOVNBE:
  case ZYDIS_MNEMONIC_CMOVS: case ZYDIS_MNEMONIC_CMOVNS: case ZYDIS_MNEMONIC_CMOVP: case ZYDIS_MNEMONIC_CMOVNP:
  case ZYDIS_MNEMONIC_CMOVL: case ZYDIS_MNEMONIC_CMOVNL: case ZYDIS_MNEMONIC_CMOVLE: case ZYDIS_MNEMONIC_CMOVNLE:
    return true;
  default: return false;
  }
}

/* An operand that reads an entry of a table of 4- or 8-byte entries. */
static bool indexes_entries(const x64_operand *m) { return m->index != 0 && m->scale >= 4; }

/* The address of the table memory operand M of instruction I reads: its
 * displacement with no base, or the `lea rB, [rip+T]` of its base register
 * further back; 0 when not found. */
static uint64_t table_named(const x64_insn *i, const x64_operand *m, x64_prev_insn prev, void *ctx) {
  if (!m->base) return (uint64_t)m->disp;
  uint64_t t = 0;
  const x64_insn *j = prev(ctx, i);
  for (int steps = 0; j && steps < SCAN_LIMIT; steps++, j = prev(ctx, j))
    if (x64_insn_may_write(j, m->base)) return x64_insn_lea_rip(j, m->base, &t) && m->disp == 0 ? t : 0;
  return 0;
}

bool x64_jump_reads_table(const x64_insn *jmp, x64_prev_insn prev, void *ctx, uint64_t *table) {
  const x64_operand *t = &jmp->op[0];
  *table = 0;
  if (t->type == X64_OP_MEM) {
    if (indexes_entries(t)) *table = table_named(jmp, t, prev, ctx);
    return indexes_entries(t);
  }
  if (t->type != X64_OP_REG) return true;
  const x64_insn *i = prev(ctx, jmp);
  for (int steps = 0; i && steps < SCAN_LIMIT; steps++, i = prev(ctx, i)) {
    if (!x64_insn_may_write(i, t->reg)) continue;
    const x64_operand *a = &i->op[0], *b = &i->op[1];
    if (is_cmov(i) && is_reg(a, t->reg) && b->type == X64_OP_REG)
      continue; /* another register's value, or what it held before: that decides */
    if (i->mnemonic == ZYDIS_MNEMONIC_ADD && is_reg(a, t->reg) && b->type == X64_OP_REG) return true;
    if ((i->mnemonic == ZYDIS_MNEMONIC_MOV || i->mnemonic == ZYDIS_MNEMONIC_MOVSXD) && is_reg(a, t->reg) &&
        b->type == X64_OP_MEM) {
      if (indexes_entries(b)) *table = table_named(i, b, prev, ctx);
      return indexes_entries(b);
    }
    bool plain = (i->mnemonic == ZYDIS_MNEMONIC_MOV && (b->type == X64_OP_REG || b->type == X64_OP_IMM)) ||
                 (i->mnemonic == ZYDIS_MNEMONIC_LEA && i->rip_relative); /* another register, an address */
    return !(plain && is_reg(a, t->reg));
  }
  return false;
}

/* LLVM keeps a dispatch's target in a stack slot (a Rust `match` in a loop:
 * `lea T(%rip),%rax; movslq (%rax,%rdx,4),%rdx; add %rax,%rdx; mov
 * %rdx,0x28(%rsp); ...; jmp *0x28(%rsp)`, calls between them too): on the
 * way back from `jmp [rsp+d]`, with rsp as it is at the jmp (calls give it
 * back), the store that fills the slot from rR is taken for a `jmp rR` and
 * matched as a table of offsets whose lea is on the way (a hoisted base
 * would have to hold the table at the jmp, which the walks of the caller
 * check, not at the store). */
static bool match_through_slot(const x64_insn *jmp, x64_prev_insn prev, void *ctx, x64_table_match *out) {
  const x64_operand *m = &jmp->op[0];
  if (m->type != X64_OP_MEM || m->base != ZYDIS_REGISTER_RSP || m->index != 0 || m->size != 64) return false;
  const x64_insn *i = prev(ctx, jmp);
  for (int steps = 0; i && steps < SCAN_LIMIT; steps++, i = prev(ctx, i)) {
    int reg;
    int64_t d;
    if (x64_insn_spill(i, &reg, &d) && d == m->disp) {
      x64_insn at = *i; /* `jmp reg` where the store is */
      at.flow = X64_FLOW_JMP_INDIRECT;
      at.rip_relative = false;
      at.nops = 1;
      at.op[0] = (x64_operand){.type = X64_OP_REG, .size = 64, .reg = reg};
      if (!match_rel32(&at, prev, ctx, out) || out->base_reg) return false;
      out->via = i->addr;
      return true;
    }
    bool call = i->flow == X64_FLOW_CALL || i->flow == X64_FLOW_CALL_INDIRECT;
    if (x64_insn_may_store_to_slot(i, m->disp) || (!call && x64_insn_may_move_stack(i))) return false;
  }
  return false;
}

bool x64_match_jump_table(const x64_insn *jmp, x64_prev_insn prev, void *ctx,
                          x64_table_match *out) {
  static bool (*const matchers[])(const x64_insn *, x64_prev_insn, void *, x64_table_match *) = {
      match_rel32, match_rel32_split, match_abs64, match_abs64_load, match_through_slot};
  if (jmp->flow != X64_FLOW_JMP_INDIRECT) return false;
  for (size_t k = 0; k < sizeof matchers / sizeof *matchers; k++) {
    *out = (x64_table_match){0};
    if (matchers[k](jmp, prev, ctx, out)) return true;
  }
  return false;
}
