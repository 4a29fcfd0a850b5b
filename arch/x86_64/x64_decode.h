/* x64_decode.h — x86-64 instruction decoding for the relocator.
 *
 * A table for the common instructions (x64_quick.c) and Zydis 4 for the
 * rest, keeping only what relocation needs: length,
 * raw bytes, the control-flow class, a direct branch's target, the position of
 * a RIP-relative (or absolute) disp32, the status flags it reads and writes
 * (for flags liveness), and up to two simplified operands for the jump-table
 * matcher (decoded on demand: most instructions never need them).  Knows
 * nothing of functions or layout. */
#ifndef X64_DECODE_H
#define X64_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum x64_flow {
  X64_FLOW_NEXT,          /* falls through to the next instruction */
  X64_FLOW_JMP,           /* jmp rel8/rel32 */
  X64_FLOW_JCC,           /* jcc rel8/rel32 */
  X64_FLOW_JCC_SHORT,     /* jrcxz/jecxz/loop/loope/loopne: rel8 only */
  X64_FLOW_CALL,          /* call rel32 */
  X64_FLOW_CALL_INDIRECT, /* call reg/mem */
  X64_FLOW_JMP_INDIRECT,  /* jmp reg/mem */
  X64_FLOW_RET,           /* ret, iret, sysret */
  X64_FLOW_STOP,          /* ud0/ud1/ud2, hlt, int3: never falls through */
  X64_FLOW_UNSUPPORTED,   /* another relative instruction (xbegin …) */
} x64_flow;

/* The six arithmetic status flags, as a compact mask (not EFLAGS positions). */
enum {
  X64_FLAG_CF = 1, X64_FLAG_PF = 2, X64_FLAG_AF = 4,
  X64_FLAG_ZF = 8, X64_FLAG_SF = 16, X64_FLAG_OF = 32,
  X64_FLAGS_ALL = 63,
};

typedef enum x64_optype { X64_OP_NONE, X64_OP_REG, X64_OP_MEM, X64_OP_IMM } x64_optype;

typedef struct x64_operand {
  x64_optype type;
  uint16_t size;   /* bits */
  bool written;
  int reg;         /* X64_OP_REG: ZydisRegister widened to 64 bits */
  int base, index; /* X64_OP_MEM: widened ZydisRegister, 0 = none */
  uint8_t scale;
  int64_t disp;
  int64_t imm;     /* X64_OP_IMM, sign-extended */
} x64_operand;

typedef struct x64_insn {
  uint64_t addr;
  uint8_t len;
  uint8_t bytes[15];
  x64_flow flow;
  int mnemonic;         /* ZydisMnemonic */
  uint8_t cc;           /* X64_FLOW_JCC: condition (low nibble of 7x / 0F 8x) */
  uint64_t target;      /* direct branches: absolute target */
  bool rip_relative;    /* has a [rip+disp32] operand */
  uint64_t rip_target;  /* … and the absolute address it names */
  uint8_t disp_offset;  /* where the disp32 sits in bytes (when disp_size == 32) */
  uint8_t disp_size;    /* bits, 0 = none */
  uint8_t flags_read;   /* X64_FLAG_* the instruction tests */
  uint8_t flags_written;/* X64_FLAG_* it always overwrites (modified, set or left
                           undefined); none for a shift or rotate whose count
                           may be 0 and for rep-prefixed string instructions,
                           which may leave them as they were */
  bool operands_decoded;/* op[] and nops are filled: always for an indirect jmp
                           or call, a RIP-relative operand and a shift; for
                           the others once x64_decode_operands is asked */
  uint8_t nops;         /* visible operands kept in op[] (at most 2) */
  x64_operand op[2];
  bool quick;           /* decoded by x64_quick.c's table (whose questions about
                           it need no decoding by Zydis: x64_quick.h) */
} x64_insn;

/* Decodes one instruction at run-time address ADDR from CODE (AVAIL bytes
 * readable).  False when the bytes are not a valid instruction.  The common
 * instructions come from x64_quick.c's tables, the rest from Zydis. */
bool x64_decode(const uint8_t *code, size_t avail, uint64_t addr, x64_insn *out);

/* The same from Zydis alone (what x64_decode must agree with: tests compare). */
bool x64_decode_zydis(const uint8_t *code, size_t avail, uint64_t addr, x64_insn *out);

/* The length and control-flow class of the instruction at CODE alone, as
 * x64_decode gives them, for a scan that needs no more (a never-run
 * function's conditional branches); false when the bytes are not one. */
bool x64_decode_flow(const uint8_t *code, size_t avail, size_t *len, x64_flow *flow);

/* Is IN a nop (90, 0F 1F, with or without prefixes): alignment padding? */
bool x64_is_nop(const x64_insn *in);

/* Fills IN's op[] and nops when x64_decode left them out (decoding its bytes
 * again); true when they are filled. */
bool x64_decode_operands(x64_insn *in);

#endif
