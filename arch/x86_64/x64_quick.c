/* x64_quick.c — the instructions compilers emit most, decoded from a table
 * (see x64_quick.h).
 *
 * DynamoRIO decodes in levels, most instructions only as far as their length
 * and whether they change control flow; this is that idea for x64_decode.
 * Handled: the integer ALU ops, mov, lea, push/pop, test, inc/dec, not/neg,
 * imul, movzx/movsx/movsxd, cbw/cwde/cdqe and cwd/cdq/cqo, nop (90, 0f 1f),
 * shifts and rotates of a register (with their operands: shift_operands),
 * setcc, cmovcc, jcc, jmp and call rel, ret, int3 and ud2; with no prefix but
 * REX and 66, and a long nop's 66 and 2e.  A RIP-relative operand's
 * instruction comes with its operands (wanted at once: rip_operands).  Left
 * to Zydis (false): anything with another prefix, an indirect jmp or call or
 * a shift of memory (their operands are wanted at once too), and every opcode
 * not in the tables.  The general-purpose registers such an instruction
 * writes are read from its bytes when asked (x64_quick_gprs_written).
 * tests/unit/test_decode.c checks every field, the operands given, those
 * registers and the flow scan (x64_quick_flow) against Zydis over whole
 * binaries and random bytes. */
#include "x64_quick.h"

#include <string.h>

#include "x64_zydis.h"

enum {
  ALL = X64_FLAGS_ALL,
  NOT_CF = X64_FLAGS_ALL & ~X64_FLAG_CF,
};

/* How an opcode goes on after its byte(s). */
typedef enum shape {
  NONE,       /* not handled */
  BARE,       /* nothing */
  RM,         /* ModRM */
  RM_IMM8,    /* ModRM, imm8 */
  RM_IMMZ,    /* ModRM, imm16 (66) or imm32 */
  IMM8,       /* imm8 */
  IMMZ,       /* imm16 (66) or imm32 */
  IMMV,       /* imm16 (66), imm32, or imm64 (REX.W): mov r, imm */
  REL8,       /* jcc/jmp rel8 */
  REL32,      /* jcc/jmp/call rel32 */
  GROUP,      /* ModRM whose reg field picks the operation (group_op) */
} shape;

typedef struct op_info {
  uint8_t shape;
  uint8_t flow; /* x64_flow */
  uint8_t read, written;
  uint16_t mnemonic;
} op_info;

static const uint16_t alu_mnemonic[8] = {ZYDIS_MNEMONIC_ADD, ZYDIS_MNEMONIC_OR,  ZYDIS_MNEMONIC_ADC,
                                         ZYDIS_MNEMONIC_SBB, ZYDIS_MNEMONIC_AND, ZYDIS_MNEMONIC_SUB,
                                         ZYDIS_MNEMONIC_XOR, ZYDIS_MNEMONIC_CMP};

/* The flags condition code CC (low nibble of 7x, 0F 8x, 0F 9x, 0F 4x) tests. */
static const uint8_t cc_reads[16] = {
    X64_FLAG_OF, X64_FLAG_OF, X64_FLAG_CF, X64_FLAG_CF, X64_FLAG_ZF, X64_FLAG_ZF,
    X64_FLAG_CF | X64_FLAG_ZF, X64_FLAG_CF | X64_FLAG_ZF, X64_FLAG_SF, X64_FLAG_SF, X64_FLAG_PF, X64_FLAG_PF,
    X64_FLAG_SF | X64_FLAG_OF, X64_FLAG_SF | X64_FLAG_OF, X64_FLAG_ZF | X64_FLAG_SF | X64_FLAG_OF,
    X64_FLAG_ZF | X64_FLAG_SF | X64_FLAG_OF};

static const uint16_t jcc_mnemonic[16] = {
    ZYDIS_MNEMONIC_JO, ZYDIS_MNEMONIC_JNO, ZYDIS_MNEMONIC_JB,  ZYDIS_MNEMONIC_JNB,
    ZYDIS_MNEMONIC_JZ, ZYDIS_MNEMONIC_JNZ, ZYDIS_MNEMONIC_JBE, ZYDIS_MNEMONIC_JNBE,
    ZYDIS_MNEMONIC_JS, ZYDIS_MNEMONIC_JNS, ZYDIS_MNEMONIC_JP,  ZYDIS_MNEMONIC_JNP,
    ZYDIS_MNEMONIC_JL, ZYDIS_MNEMONIC_JNL, ZYDIS_MNEMONIC_JLE, ZYDIS_MNEMONIC_JNLE};

static const uint16_t setcc_mnemonic[16] = {
    ZYDIS_MNEMONIC_SETO, ZYDIS_MNEMONIC_SETNO, ZYDIS_MNEMONIC_SETB,  ZYDIS_MNEMONIC_SETNB,
    ZYDIS_MNEMONIC_SETZ, ZYDIS_MNEMONIC_SETNZ, ZYDIS_MNEMONIC_SETBE, ZYDIS_MNEMONIC_SETNBE,
    ZYDIS_MNEMONIC_SETS, ZYDIS_MNEMONIC_SETNS, ZYDIS_MNEMONIC_SETP,  ZYDIS_MNEMONIC_SETNP,
    ZYDIS_MNEMONIC_SETL, ZYDIS_MNEMONIC_SETNL, ZYDIS_MNEMONIC_SETLE, ZYDIS_MNEMONIC_SETNLE};

static const uint16_t cmovcc_mnemonic[16] = {
    ZYDIS_MNEMONIC_CMOVO, ZYDIS_MNEMONIC_CMOVNO, ZYDIS_MNEMONIC_CMOVB,  ZYDIS_MNEMONIC_CMOVNB,
    ZYDIS_MNEMONIC_CMOVZ, ZYDIS_MNEMONIC_CMOVNZ, ZYDIS_MNEMONIC_CMOVBE, ZYDIS_MNEMONIC_CMOVNBE,
    ZYDIS_MNEMONIC_CMOVS, ZYDIS_MNEMONIC_CMOVNS, ZYDIS_MNEMONIC_CMOVP,  ZYDIS_MNEMONIC_CMOVNP,
    ZYDIS_MNEMONIC_CMOVL, ZYDIS_MNEMONIC_CMOVNL, ZYDIS_MNEMONIC_CMOVLE, ZYDIS_MNEMONIC_CMOVNLE};

/* One-byte opcodes. */
static op_info one_byte(uint8_t b) {
  if (b < 0x40 && (b & 7) < 6) { /* the eight ALU ops, six forms each */
    uint8_t op = b >> 3, form = b & 7;
    uint8_t read = op == 2 || op == 3 ? X64_FLAG_CF : 0; /* adc, sbb */
    uint8_t shape = form < 4 ? RM : form == 4 ? IMM8 : IMMZ;
    return (op_info){shape, X64_FLOW_NEXT, read, ALL, alu_mnemonic[op]};
  }
  if (b >= 0x50 && b <= 0x57) return (op_info){BARE, X64_FLOW_NEXT, 0, 0, ZYDIS_MNEMONIC_PUSH};
  if (b >= 0x58 && b <= 0x5f) return (op_info){BARE, X64_FLOW_NEXT, 0, 0, ZYDIS_MNEMONIC_POP};
  if (b >= 0x70 && b <= 0x7f) return (op_info){REL8, X64_FLOW_JCC, cc_reads[b & 15], 0, jcc_mnemonic[b & 15]};
  if (b >= 0xb0 && b <= 0xb7) return (op_info){IMM8, X64_FLOW_NEXT, 0, 0, ZYDIS_MNEMONIC_MOV};
  if (b >= 0xb8 && b <= 0xbf) return (op_info){IMMV, X64_FLOW_NEXT, 0, 0, ZYDIS_MNEMONIC_MOV};
  switch (b) {
  case 0x90: return (op_info){BARE, X64_FLOW_NEXT, 0, 0, ZYDIS_MNEMONIC_NOP};
  case 0x98: return (op_info){BARE, X64_FLOW_NEXT, 0, 0, ZYDIS_MNEMONIC_CDQE}; /* cbw, cwde by size */
  case 0x99: return (op_info){BARE, X64_FLOW_NEXT, 0, 0, ZYDIS_MNEMONIC_CQO};  /* cwd, cdq by size */
  case 0x63: return (op_info){RM, X64_FLOW_NEXT, 0, 0, ZYDIS_MNEMONIC_MOVSXD};
  case 0x68: return (op_info){IMMZ, X64_FLOW_NEXT, 0, 0, ZYDIS_MNEMONIC_PUSH};
  case 0x69: return (op_info){RM_IMMZ, X64_FLOW_NEXT, 0, ALL, ZYDIS_MNEMONIC_IMUL};
  case 0x6a: return (op_info){IMM8, X64_FLOW_NEXT, 0, 0, ZYDIS_MNEMONIC_PUSH};
  case 0x6b: return (op_info){RM_IMM8, X64_FLOW_NEXT, 0, ALL, ZYDIS_MNEMONIC_IMUL};
  case 0x80: case 0x81: case 0x83: case 0xf6: case 0xf7: case 0xfe: case 0xff:
  case 0xc0: case 0xc1: case 0xd0: case 0xd1: case 0xd2: case 0xd3:
    return (op_info){GROUP, X64_FLOW_NEXT, 0, 0, 0};
  case 0x84: case 0x85: return (op_info){RM, X64_FLOW_NEXT, 0, ALL, ZYDIS_MNEMONIC_TEST};
  case 0x88: case 0x89: case 0x8a: case 0x8b: return (op_info){RM, X64_FLOW_NEXT, 0, 0, ZYDIS_MNEMONIC_MOV};
  case 0x8d: return (op_info){RM, X64_FLOW_NEXT, 0, 0, ZYDIS_MNEMONIC_LEA};
  case 0xa8: return (op_info){IMM8, X64_FLOW_NEXT, 0, ALL, ZYDIS_MNEMONIC_TEST};
  case 0xa9: return (op_info){IMMZ, X64_FLOW_NEXT, 0, ALL, ZYDIS_MNEMONIC_TEST};
  case 0xc3: return (op_info){BARE, X64_FLOW_RET, 0, 0, ZYDIS_MNEMONIC_RET};
  case 0xc6: return (op_info){RM_IMM8, X64_FLOW_NEXT, 0, 0, ZYDIS_MNEMONIC_MOV};
  case 0xc7: return (op_info){RM_IMMZ, X64_FLOW_NEXT, 0, 0, ZYDIS_MNEMONIC_MOV};
  case 0xcc: return (op_info){BARE, X64_FLOW_STOP, 0, 0, ZYDIS_MNEMONIC_INT3};
  case 0xe8: return (op_info){REL32, X64_FLOW_CALL, 0, 0, ZYDIS_MNEMONIC_CALL};
  case 0xe9: return (op_info){REL32, X64_FLOW_JMP, 0, 0, ZYDIS_MNEMONIC_JMP};
  case 0xeb: return (op_info){REL8, X64_FLOW_JMP, 0, 0, ZYDIS_MNEMONIC_JMP};
  default: return (op_info){NONE, 0, 0, 0, 0};
  }
}

/* Two-byte opcodes (0F xx). */
static op_info two_byte(uint8_t b) {
  if (b >= 0x40 && b <= 0x4f) return (op_info){RM, X64_FLOW_NEXT, cc_reads[b & 15], 0, cmovcc_mnemonic[b & 15]};
  if (b >= 0x80 && b <= 0x8f) return (op_info){REL32, X64_FLOW_JCC, cc_reads[b & 15], 0, jcc_mnemonic[b & 15]};
  if (b >= 0x90 && b <= 0x9f) return (op_info){RM, X64_FLOW_NEXT, cc_reads[b & 15], 0, setcc_mnemonic[b & 15]};
  switch (b) {
  case 0x0b: return (op_info){BARE, X64_FLOW_STOP, 0, 0, ZYDIS_MNEMONIC_UD2};
  case 0x1f: return (op_info){RM, X64_FLOW_NEXT, 0, 0, ZYDIS_MNEMONIC_NOP};
  case 0xaf: return (op_info){RM, X64_FLOW_NEXT, 0, ALL, ZYDIS_MNEMONIC_IMUL};
  case 0xb6: case 0xb7: return (op_info){RM, X64_FLOW_NEXT, 0, 0, ZYDIS_MNEMONIC_MOVZX};
  case 0xbe: case 0xbf: return (op_info){RM, X64_FLOW_NEXT, 0, 0, ZYDIS_MNEMONIC_MOVSX};
  default: return (op_info){NONE, 0, 0, 0, 0};
  }
}

/* The operation a group opcode's ModRM reg field picks; NONE for those left
 * to Zydis (shifts are not grouped here; ff /2 /3 /4 /5 are indirect
 * branches, f6/f7 /4-/7 multiply and divide, /1 is undefined). */
static op_info group_op(uint8_t opcode, uint8_t reg) {
  static const uint16_t shift_mnemonic[8] = {ZYDIS_MNEMONIC_ROL, ZYDIS_MNEMONIC_ROR, ZYDIS_MNEMONIC_RCL,
                                             ZYDIS_MNEMONIC_RCR, ZYDIS_MNEMONIC_SHL, ZYDIS_MNEMONIC_SHR,
                                             0,                  ZYDIS_MNEMONIC_SAR};
  switch (opcode) {
  case 0xc0: case 0xc1: case 0xd0: case 0xd1: case 0xd2: case 0xd3: /* shifts and rotates; /6 left to Zydis */
    if (reg == 6) break;
    return (op_info){opcode <= 0xc1 ? RM_IMM8 : RM, X64_FLOW_NEXT, reg == 2 || reg == 3 ? X64_FLAG_CF : 0,
                     reg < 4 ? X64_FLAG_CF | X64_FLAG_OF : ALL, shift_mnemonic[reg]};
  case 0x80: return (op_info){RM_IMM8, X64_FLOW_NEXT, reg == 2 || reg == 3 ? X64_FLAG_CF : 0, ALL, alu_mnemonic[reg]};
  case 0x81: return (op_info){RM_IMMZ, X64_FLOW_NEXT, reg == 2 || reg == 3 ? X64_FLAG_CF : 0, ALL, alu_mnemonic[reg]};
  case 0x83: return (op_info){RM_IMM8, X64_FLOW_NEXT, reg == 2 || reg == 3 ? X64_FLAG_CF : 0, ALL, alu_mnemonic[reg]};
  case 0xf6: case 0xf7:
    if (reg == 0) return (op_info){opcode == 0xf6 ? RM_IMM8 : RM_IMMZ, X64_FLOW_NEXT, 0, ALL, ZYDIS_MNEMONIC_TEST};
    if (reg == 2) return (op_info){RM, X64_FLOW_NEXT, 0, 0, ZYDIS_MNEMONIC_NOT};
    if (reg == 3) return (op_info){RM, X64_FLOW_NEXT, 0, ALL, ZYDIS_MNEMONIC_NEG};
    break;
  case 0xfe: case 0xff:
    if (reg == 0) return (op_info){RM, X64_FLOW_NEXT, 0, NOT_CF, ZYDIS_MNEMONIC_INC};
    if (reg == 1) return (op_info){RM, X64_FLOW_NEXT, 0, NOT_CF, ZYDIS_MNEMONIC_DEC};
    if (reg == 6 && opcode == 0xff) return (op_info){RM, X64_FLOW_NEXT, 0, 0, ZYDIS_MNEMONIC_PUSH};
    break;
  default: break;
  }
  return (op_info){NONE, 0, 0, 0, 0};
}

/* The bytes a ModRM at CODE[AT] takes with its SIB and displacement; 0 for
 * too few bytes.  *DISP_AT and *DISP_SIZE: where the displacement is and its
 * bits (0: none); a RIP-relative operand ([rip+disp32]) has 32 bits of it. */
static size_t modrm_length(const uint8_t *code, size_t avail, size_t at, uint8_t *disp_at, uint8_t *disp_size) {
  if (at >= avail) return 0;
  uint8_t modrm = code[at], mod = modrm >> 6, rm = modrm & 7;
  size_t n = 1;
  *disp_size = 0;
  if (mod == 3) return n;
  if (rm == 4) { /* SIB */
    if (at + n >= avail) return 0;
    uint8_t base = code[at + n] & 7;
    n++;
    if (mod == 0 && base == 5) *disp_size = 32; /* no base: disp32 */
  } else if (mod == 0 && rm == 5) {
    *disp_size = 32; /* [rip+disp32] */
  }
  if (mod == 1) *disp_size = 8;
  if (mod == 2) *disp_size = 32;
  *disp_at = (uint8_t)(at + n);
  n += *disp_size / 8;
  return at + n <= avail ? n : 0;
}

/* {=== the general-purpose registers an instruction of the table writes ===*/

enum { RAX = 1u << 0, RSP = 1u << 4, ALL_GPRS = 0xffffu };
/* what a call may change besides rsp: the caller-saved registers (SysV ABI):
 * rax, rcx, rdx, rsi, rdi, r8-r11 */
#define CALLER_SAVED 0x0fc7u

/* Register number N (REX bit included) as a bit; a byte register 4-7 without
 * a REX prefix is ah, ch, dh or bh: part of rax .. rbx. */
static uint16_t gpr(unsigned n, bool byte, bool rex) {
  if (byte && !rex && n >= 4 && n < 8) n -= 4;
  return (uint16_t)(1u << n);
}

/* What x64_insn_gprs_written says of the instruction the table decoded from
 * OPCODE (TWO: after 0F) with REX prefix byte REX (0: none) and ModRM byte
 * MODRM (for the shapes that have one), as Zydis's operands would say it: the
 * registers an operand writes (conditionally, for cmovcc), widened; rsp for
 * push, pop, call and ret; a call's clobbers; everything for int3. */
static uint16_t gprs_written(bool two, uint8_t opcode, uint8_t rex, uint8_t modrm) {
  bool has_rex = rex != 0, mem = modrm >> 6 != 3;
  unsigned reg = ((modrm >> 3) & 7) | (rex & 4 ? 8u : 0u), rm = (modrm & 7) | (rex & 1 ? 8u : 0u);
  unsigned opreg = (opcode & 7) | (rex & 1 ? 8u : 0u), group = (modrm >> 3) & 7;
  if (two) {
    if (opcode >= 0x40 && opcode <= 0x4f) return gpr(reg, false, has_rex);  /* cmovcc */
    if (opcode >= 0x90 && opcode <= 0x9f) return mem ? 0 : gpr(rm, true, has_rex); /* setcc */
    if (opcode == 0xaf || opcode == 0xb6 || opcode == 0xb7 || opcode == 0xbe || opcode == 0xbf)
      return gpr(reg, false, has_rex); /* imul, movzx, movsx */
    return 0;                          /* jcc, ud2, nop */
  }
  if (opcode < 0x40) { /* the ALU ops: cmp writes nothing */
    bool byte = (opcode & 1) == 0;
    if (opcode >> 3 == 7) return 0;
    switch (opcode & 7) {
    case 0: case 1: return mem ? 0 : gpr(rm, byte, has_rex);
    case 2: case 3: return gpr(reg, byte, has_rex);
    default: return RAX;
    }
  }
  if (opcode >= 0x50 && opcode <= 0x57) return RSP;
  if (opcode >= 0x58 && opcode <= 0x5f) return RSP | gpr(opreg, false, has_rex);
  if (opcode >= 0xb0 && opcode <= 0xbf) return gpr(opreg, opcode < 0xb8, has_rex);
  switch (opcode) {
  case 0x63: case 0x69: case 0x6b: case 0x8b: case 0x8d: return gpr(reg, false, has_rex);
  case 0x8a: return gpr(reg, true, has_rex);
  case 0x68: case 0x6a: case 0xc3: return RSP;
  case 0x98: return RAX;     /* cbw, cwde, cdqe */
  case 0x99: return 1u << 2; /* cwd, cdq, cqo: rdx */
  case 0x80: case 0x81: case 0x83: return group == 7 || mem ? 0 : gpr(rm, opcode == 0x80, has_rex);
  case 0x88: case 0x89: case 0xc6: case 0xc7: return mem ? 0 : gpr(rm, opcode == 0x88 || opcode == 0xc6, has_rex);
  case 0xc0: case 0xc1: case 0xd0: case 0xd1: case 0xd2: case 0xd3: /* shifts: register forms only */
    return mem ? 0 : gpr(rm, opcode == 0xc0 || opcode == 0xd0 || opcode == 0xd2, has_rex);
  case 0xcc: return ALL_GPRS;
  case 0xe8: return CALLER_SAVED | RSP;
  case 0xf6: case 0xf7: return group == 0 || mem ? 0 : gpr(rm, opcode == 0xf6, has_rex); /* test; not, neg */
  case 0xfe: case 0xff: return group == 6 ? RSP : mem ? 0 : gpr(rm, opcode == 0xfe, has_rex); /* push; inc, dec */
  default: return 0;                                                                   /* test, jcc, jmp */
  }
}

/* {=== the operands of a RIP-relative instruction, as Zydis gives them ===*/

/* How an opcode's visible operands go: E the ModRM's memory operand, G its
 * register, I the immediate. */
typedef enum order { E_G, G_E, E_I, E_ONLY } order;

static x64_operand reg_operand(unsigned n, bool byte, bool rex, uint16_t size, bool written) {
  if (byte && !rex && n >= 4 && n < 8) n -= 4; /* ah .. bh, widened */
  return (x64_operand){.type = X64_OP_REG, .size = size, .written = written, .reg = ZYDIS_REGISTER_RAX + (int)n};
}

/* Fills OUT's op[] and nops for an instruction of the table whose ModRM names
 * [rip+DISP] (not a nop: left to Zydis): OPCODE (TWO: after 0F), REG the
 * ModRM's reg field with REX.R, OSIZE the operand size, IMM its immediate of
 * IMM_SIZE bits (0: none). */
static void rip_operands(x64_insn *out, bool two, uint8_t opcode, unsigned reg, bool rex, uint16_t osize, int64_t disp,
                         int64_t imm, uint16_t imm_size) {
  unsigned group = reg & 7;
  bool alu = !two && opcode < 0x40, cmp = alu && opcode >> 3 == 7;
  bool byte = !two && ((alu && (opcode & 1) == 0) || opcode == 0x80 || opcode == 0x84 || opcode == 0x88 ||
                       opcode == 0x8a || opcode == 0xc6 || opcode == 0xf6 || opcode == 0xfe);
  uint16_t size = byte ? 8 : osize, mem_size = size, reg_size = size;
  order how = G_E;
  bool mem_written = false, reg_written = true;
  if (two) {
    if (opcode >= 0x90 && opcode <= 0x9f) how = E_ONLY, mem_size = 8, mem_written = true; /* setcc */
    if (opcode == 0xb6 || opcode == 0xbe) mem_size = 8;                                    /* movzx, movsx */
    if (opcode == 0xb7 || opcode == 0xbf) mem_size = 16;
  } else if (alu) {
    how = (opcode & 7) < 2 ? E_G : G_E;
    mem_written = how == E_G && !cmp;
    reg_written = how == G_E && !cmp;
  } else {
    switch (opcode) {
    case 0x84: case 0x85: how = E_G, reg_written = false; break;            /* test */
    case 0x88: case 0x89: how = E_G, mem_written = true, reg_written = false; break;
    case 0x8d: mem_size = 64; break;                                         /* lea: the address */
    case 0x63: mem_size = 32; break;                                         /* movsxd */
    case 0x80: case 0x81: case 0x83: how = E_I, mem_written = group != 7; break;
    case 0xc6: case 0xc7: how = E_I, mem_written = true; break;
    case 0xf6: case 0xf7: how = group == 0 ? E_I : E_ONLY, mem_written = group != 0; break; /* test; not, neg */
    case 0xfe: case 0xff:
      how = E_ONLY, mem_written = group != 6; /* inc, dec; push */
      if (group == 6) mem_size = 64;
      break;
    default: break; /* mov, imul, cmovcc: G_E */
    }
  }
  x64_operand mem = {.type = X64_OP_MEM, .size = mem_size, .written = mem_written, .base = x64_widen(ZYDIS_REGISTER_RIP),
                     .disp = disp};
  x64_operand r = reg_operand(reg, byte, rex, reg_size, reg_written);
  switch (how) {
  case E_G: out->op[0] = mem, out->op[1] = r, out->nops = 2; break;
  case G_E: out->op[0] = r, out->op[1] = mem, out->nops = 2; break;
  case E_I:
    out->op[0] = mem;
    out->op[1] = (x64_operand){.type = X64_OP_IMM, .size = imm_size, .imm = imm};
    out->nops = 2;
    break;
  case E_ONLY: out->op[0] = mem, out->nops = 1; break;
  }
  out->operands_decoded = true;
}

/* A register shift's or rotate's operands (wanted at once: x64_decode.h),
 * and the flags it may leave as they were: none written when its count may
 * be 0 (cl, or an immediate masked to 0). */
static void shift_operands(x64_insn *out, uint8_t opcode, uint8_t modrm, uint8_t rex, bool opsize, bool rex_w) {
  bool byte = opcode == 0xc0 || opcode == 0xd0 || opcode == 0xd2;
  uint16_t size = byte ? 8 : rex_w ? 64 : opsize ? 16 : 32;
  out->op[0] = reg_operand((modrm & 7) | (rex & 1 ? 8u : 0u), byte, rex != 0, size, true);
  if (opcode >= 0xd2) { /* by cl */
    out->op[1] = (x64_operand){.type = X64_OP_REG, .size = 8, .reg = ZYDIS_REGISTER_RCX};
    out->flags_written = 0;
  } else {
    uint8_t count = opcode <= 0xc1 ? out->bytes[out->len - 1] : 1;
    out->op[1] = (x64_operand){.type = X64_OP_IMM, .size = 8, .imm = count};
    if ((count & (size == 64 ? 63 : 31)) == 0) out->flags_written = 0;
  }
  out->nops = 2;
  out->operands_decoded = true;
}

/* }=== */

uint16_t x64_quick_gprs_written(const x64_insn *in) {
  size_t at = 0;
  while (in->bytes[at] == 0x66 || in->bytes[at] == 0x2e) at++;
  uint8_t rex = (in->bytes[at] & 0xf0) == 0x40 ? in->bytes[at++] : 0;
  bool two = in->bytes[at] == 0x0f;
  at += two;
  uint8_t opcode = in->bytes[at++];
  return gprs_written(two, opcode, rex, at < in->len ? in->bytes[at] : 0);
}

/* }=== */

/* x64_decode_quick, or with OUT NULL only the length and flow (x64_quick_flow):
 * one body, whose helpers the compiler inlines. */
static bool decode(const uint8_t *code, size_t avail, uint64_t addr, x64_insn *out, size_t *len, x64_flow *flow) {
  size_t at = 0;
  bool opsize = false, rex_w = false, rex = false, padding = false;
  uint8_t rex_byte = 0;
  if (avail > 15) avail = 15;
  if (at < avail && code[at] == 0x66) opsize = true, at++;
  while (at < avail && (code[at] == 0x66 || code[at] == 0x2e)) padding = true, at++; /* a long nop's: data16 cs nopw */
  if (at < avail && (code[at] & 0xf0) == 0x40) {
    rex = true;
    rex_byte = code[at];
    rex_w = (code[at] & 8) != 0;
    at++;
  }
  if (at >= avail) return false;
  uint8_t opcode = code[at++];
  op_info op;
  bool two = opcode == 0x0f;
  if (two) {
    if (at >= avail) return false;
    opcode = code[at++];
    op = two_byte(opcode);
  } else {
    op = one_byte(opcode);
  }
  uint8_t disp_at = 0, disp_size = 0;
  size_t modrm_at = at;
  if (op.shape == GROUP) {
    if (at >= avail) return false;
    op = group_op(opcode, (code[at] >> 3) & 7);
  }
  switch (op.shape) {
  case NONE: return false;
  case RM: case RM_IMM8: case RM_IMMZ: {
    size_t n = modrm_length(code, avail, at, &disp_at, &disp_size);
    if (!n) return false;
    at += n;
    break;
  }
  default: break;
  }
  /* forms Zydis decodes otherwise or rejects */
  uint8_t mod = modrm_at < avail ? code[modrm_at] >> 6 : 0, reg = modrm_at < avail ? (code[modrm_at] >> 3) & 7 : 0;
  switch (two ? 0x100 | opcode : opcode) {
  case 0x8d: if (mod == 3) return false; break;                 /* lea without memory: invalid */
  case 0xc6: case 0xc7: if (reg != 0) return false; break;      /* c6/c7 /1-/7: not mov */
  case 0x11f: if (reg != 0) return false; break;                /* 0f 1f /1-/7: reserved nops */
  case 0xc3: case 0x90: if (rex) return false; break;           /* 90: xchg with r8, or a nop Zydis names otherwise */
  case 0x98: case 0x99: {
    static const int widen[2][3] = {{ZYDIS_MNEMONIC_CWDE, ZYDIS_MNEMONIC_CBW, ZYDIS_MNEMONIC_CDQE},
                                    {ZYDIS_MNEMONIC_CDQ, ZYDIS_MNEMONIC_CWD, ZYDIS_MNEMONIC_CQO}};
    op.mnemonic = (uint16_t)widen[opcode & 1][rex_w ? 2 : opsize];
    break;
  }
  default: break;
  }
  if (opsize && (op.flow != X64_FLOW_NEXT || op.mnemonic == ZYDIS_MNEMONIC_PUSH || op.mnemonic == ZYDIS_MNEMONIC_POP ||
                 op.mnemonic == ZYDIS_MNEMONIC_MOVSXD))
    return false; /* 66 on a branch, push/pop or movsxd: not worth the cases */
  if (padding && op.mnemonic != ZYDIS_MNEMONIC_NOP) return false;
  switch (op.shape) {
  case RM_IMM8: case IMM8: at += 1; break;
  case RM_IMMZ: case IMMZ: at += opsize && !rex_w ? 2 : 4; break; /* REX.W wins over 66 */
  case IMMV: at += rex_w ? 8 : opsize ? 2 : 4; break;
  case REL8: at += 1; break;
  case REL32: at += 4; break;
  default: break;
  }
  if (at > avail) return false;
  bool rip = disp_size == 32 && (code[modrm_at] & 0xc7) == 0x05 && op.shape >= RM && op.shape <= RM_IMMZ;
  bool shift = !two && (opcode == 0xc0 || opcode == 0xc1 || (opcode >= 0xd0 && opcode <= 0xd3));
  if (shift && mod != 3) return false;            /* a shift of memory: its operands from Zydis */
  if (rip && two && opcode == 0x1f) return false; /* nop [rip+d]: two operands by Zydis's count */
  if (!out) {
    *len = at;
    *flow = (x64_flow)op.flow;
    return true;
  }

  memset(out, 0, sizeof *out);
  out->addr = addr;
  out->len = (uint8_t)at;
  if (avail == sizeof out->bytes) memcpy(out->bytes, code, sizeof out->bytes); /* a fixed copy: two moves */
  else memcpy(out->bytes, code, at);
  out->flow = op.flow;
  out->mnemonic = op.mnemonic;
  out->flags_read = op.read;
  out->flags_written = op.written;
  out->disp_size = disp_size;
  out->disp_offset = disp_size ? disp_at : 0;
  if (op.flow == X64_FLOW_JCC) out->cc = opcode & 0x0f;
  out->quick = true;
  if (shift) shift_operands(out, opcode, code[modrm_at], rex_byte, opsize, rex_w);
  if (rip) {
    int32_t disp;
    memcpy(&disp, code + disp_at, sizeof disp);
    size_t imm_bytes = op.shape == RM_IMM8 ? 1 : op.shape == RM_IMMZ ? (opsize && !rex_w ? 2 : 4) : 0;
    int64_t imm = 0;
    if (imm_bytes == 1) imm = (int8_t)code[at - 1];
    if (imm_bytes == 2) imm = (int16_t)(code[at - 2] | code[at - 1] << 8);
    if (imm_bytes == 4) {
      int32_t v;
      memcpy(&v, code + at - 4, sizeof v);
      imm = v;
    }
    uint16_t osize = rex_w ? 64 : opsize ? 16 : 32;
    unsigned reg_n = ((code[modrm_at] >> 3) & 7) | (rex_byte & 4 ? 8u : 0u);
    rip_operands(out, two, opcode, reg_n, rex, osize, disp, imm, (uint16_t)(8 * imm_bytes));
    out->rip_relative = true;
    out->rip_target = addr + at + (uint64_t)(int64_t)disp;
  }
  if (op.shape == REL8) out->target = addr + at + (uint64_t)(int64_t)(int8_t)code[at - 1];
  if (op.shape == REL32) {
    int32_t rel;
    memcpy(&rel, code + at - 4, sizeof rel);
    out->target = addr + at + (uint64_t)(int64_t)rel;
  }
  return true;
}

bool x64_decode_quick(const uint8_t *code, size_t avail, uint64_t addr, x64_insn *out) {
  return decode(code, avail, addr, out, NULL, NULL);
}

bool x64_quick_flow(const uint8_t *code, size_t avail, size_t *len, x64_flow *flow) {
  return decode(code, avail, 0, NULL, len, flow);
}
