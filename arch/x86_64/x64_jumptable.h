/* x64_jumptable.h — recognises the jump-table dispatch sequences gcc emits
 * (and LLVM's, the same shapes: Debian's Rust programs).
 *
 *   (REL32, PIC/PIE)  lea rB,[rip+T] … movsxd rI,dword [rB+rX*4] … add rI,rB … jmp rI
 *   (REL32, PIC, -O0) lea rS,[rX*4] … lea rT,[rip+T] … mov eax,dword [rS+rT] … cdqe
 *                     (or movsxd rax,dword [rS+rT]) … lea rU,[rip+T] … add rax,rU … jmp rax
 *   (ABS64, non-PIE)  jmp qword [rX*8+T]
 *   (ABS64, -O0)      mov rJ,qword [rX*8+T] … jmp rJ
 *   (REL32, LLVM)     … add rI,rB … mov [rsp+d],rI … jmp [rsp+d]: the target kept in
 *                     a stack slot, calls between (the lea on the way back)
 * each with a bound check `cmp eX/rX, N` + `ja/jae default` (or `jbe/jb` to
 * the dispatch) found by walking back along the predecessors the caller gives
 * (x64_prev_insn): instructions that write neither the flags nor the index may sit between the cmp and the ja (`mov edi, edi`),
 * register-to-register mov/movzx renames of the index are followed, and an
 * index loaded from memory (`mov eX, [rbp+d]` at -O0, `movzx eax, byte
 * [rcx+rax]` at -O2) is bounded by a compare of that memory of the load's
 * width with no store (but a mov to bytes beside it, or a store into the
 * stack frame when that memory is addressed otherwise), and no change to its
 * address registers, in between (but `lea rI, [rK+d]` of its index, whose
 * address is then [rB+rK*s+d*s]).
 * N is unsigned at the compare's width (`cmp r15b, 0xb5`: 182 entries); a
 * byte or word compare bounds only an index zero-extended from that width,
 * by a movzx met before or after it on the way back.  A table base loaded
 * before a loop (the lea not on the way back) is left to the caller
 * (base_reg), for relative tables as for absolute ones.
 * Without a compare (computed gotos: Lua's and CPython's dispatch), the
 * index's width bounds it: `and eX, 2^k-1` or a zero-extended byte, and
 * (ABS64) `mov rJ, qword [rB+rX*8]` with rB holding T is accepted too; a
 * REL32 table only a zero-extended byte bounds is `open` (gcc laid out fewer
 * than 256 entries); an absolute table that nothing bounds (`jmp [T+rX*8]`,
 * or through a base register) is read to the table's end (`guessed`).  A REL32 dispatch that nothing bounds at all
 * (gnulib's regex: an index loaded from the stack, the default case
 * unreachable; -O2's and -O0's PIC forms) is `guarded`: the copy compares
 * the index with the entries it kept and sends the others to the original
 * load.
 * Reading the entries is the caller's business.
 *
 * x64_insn_may_write(i, reg): may I change REG (widened)?  A call clobbers
 * the caller-saved registers.  x64_insn_lea_rip(i, reg, &t): is I `lea REG,
 * [rip+t]` (64 bits)?  x64_first_arg_constant(call, prev, ctx, &v): does
 * the straight line before CALL (walked back as for a bound check, 16
 * instructions at most) last write edi/rdi, the SysV ABI's first argument,
 * with a `mov` of a constant (then in *v)? */
#ifndef X64_JUMPTABLE_H
#define X64_JUMPTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "x64_decode.h"

typedef enum x64_table_kind {
  X64_TABLE_REL32, /* int32 entries, target = T + entry */
  X64_TABLE_ABS64, /* uint64 entries, target = entry */
} x64_table_kind;

typedef struct x64_table_match {
  x64_table_kind kind;
  uint64_t table;    /* original address T */
  size_t nentries;   /* from the bound check */
  uint64_t ref;      /* instruction whose disp32 names T: the lea, the jmp itself or
                        the mov that loads the entry (ABS64, -O0) */
  uint64_t ref2;     /* a second instruction naming T (the -O0 PIC form's other
                        lea), or 0 */
  uint64_t via;      /* the store into the stack slot the jmp reads the target from,
                        matched in the jmp's place (the base register is read before
                        it), or 0 */
  int base_reg;      /* the register holding T (`mov rJ, [rB+rX*8]`, `movsxd rI, [rB+rX*4]`)
                        when no lea of it is on the way back (table and ref 0): the
                        caller finds it in the whole function; 0 otherwise */
  uint64_t load;     /* ABS64: the instruction that reads the entry (`mov rJ, [rB+rX*8]`, or
                        the jmp itself); REL32 at -O1..-O3 (`movsxd rI, [rB+rX*4]`) and
                        guarded: the load of the entry; 0 otherwise */
  bool implicit;     /* no compare bounds the index: nentries is what its width (movzx
                        from a byte: 256) or a mask (and eX, 2^k-1) allows; the caller
                        must check the entries */
  bool open;         /* implicit, a table of offsets (REL32) bounded by its byte index
                        alone: gcc proved a tighter range and laid out fewer entries, and
                        what follows them (the next table's offsets) is read as entries
                        too; the caller keeps all 256, every one sending where the
                        original's would, and decodes them in order up to the first that
                        does not decode as code of the function (reloc_function.c) */
  bool guessed;      /* ABS64 (`jmp [T+rX*8]`, `mov rJ, [rB+rX*8]`, ...) with nothing that
                        bounds the index on the way back (the callers bound it, or gcc knows
                        the default case unreachable: CPython's Py_UNREACHABLE, its regex
                        engine's opcodes): nentries is MAX_ENTRIES, the caller
                        reads the table to its end (its first entry outside the code) and
                        may find it read too far (entries past it that decode as no code) */
  bool guarded;      /* REL32 and nothing bounds the index on the way back: nentries is
                        MAX_ENTRIES, the caller reads the entries up to the first that is
                        no code and decodes them in order as an open table's, and the copy
                        puts `cmp guard_reg, n * guard_unit; jae` to the original load (its
                        base register given back T by the lea at ref) before its own
                        (x64_put_bound_check): any index, whatever gcc laid out */
  uint8_t guard_reg; /* guarded: the register holding the index times guard_unit at the load,
                        numbered as encoded (rax 0 .. r15 15) */
  uint8_t guard_unit; /* 1 (`[rB+rX*4]`: rX) or 4 (-O0's `[rT+rO]`, rO the index times 4) */
} x64_table_match;

/* The instruction that falls through into CUR (ends at CUR's address and does
 * not end its path), with its operands decoded (x64_decode_operands), or NULL;
 * or, where none falls through, a branch that is the only way into CUR (the
 * bound check then is a jbe/jb taken, as well as a ja/jae not taken).
 * JMP itself is indirect: x64_decode gave it its operands. */
typedef const x64_insn *(*x64_prev_insn)(void *ctx, const x64_insn *cur);

bool x64_match_jump_table(const x64_insn *jmp, x64_prev_insn prev, void *ctx,
                          x64_table_match *out);

/* Does the indirect JMP go where a table says: `jmp [T+rX*8]`, or its register
 * last set by a load indexed by 4 or 8 or by `add rJ, rT` (a relative table's
 * entry plus its base)?  False for a register loaded from a plain memory operand
 * (a function pointer in a struct) or from a byte offset (`[rB+rX]`: a pointer
 * at a computed offset in an object, CPython's vectorcall), copied from
 * another, set to a constant address (`mov $f, %eax`, `lea f(%rip), %rax`),
 * or set before the straight-line code that reaches the jmp (an argument); a
 * `cmovcc` from another register on the way is a copy too, what the register
 * held before it deciding (CPython's object_str: `mov 0x58(%rax), %rax; test;
 * cmove %rdx,%rax; jmp *%rax`, its default in rdx; OpenSSL's BN_nnmod in
 * node: `mov $BN_add, %eax; cmove %rdx, %rax; jmp *%rax`).  *TABLE gets the table's address when the code names it (`jmp
 * [T+rX*8]` with no base; the base register's `lea rB, [rip+T]` on the way
 * back), else 0. */
bool x64_jump_reads_table(const x64_insn *jmp, x64_prev_insn prev, void *ctx, uint64_t *table);

bool x64_insn_may_write(const x64_insn *i, int reg);

/* The general-purpose registers I may write, as x64_insn_may_write answers
 * for them from one decoding: bit K for ZYDIS_REGISTER_RAX + K (rax .. r15,
 * widened), all of them for a system call or bytes Zydis refuses.  For a
 * caller that asks of one instruction again and again (relocate/ keeps it
 * per instruction). */
#define X64_ALL_GPRS 0xffffu
#define X64_GPR_RSP 0x10u /* rsp's bit: the stack pointer */
uint16_t x64_insn_gprs_written(const x64_insn *i);
uint16_t x64_gpr_bit(int reg); /* REG's bit there, 0 for a register not of 64 bits */
bool x64_insn_may_move_stack(const x64_insn *i); /* write rsp: push, sub, a call */

/* Stack slots, [rsp+d] (a table base spilled, relocate/reloc_function.c):
 * is I `mov REG, qword [rsp+d]` (a reload), `mov qword [rsp+d], R` (a
 * spill: *REG gets R), and may it store to any of the 8 bytes at [rsp+d]
 * (a store through rsp with an index may; the pushes of a push or a call go
 * below rsp, and a store through another register is taken to reach no
 * slot of the frame)?  Their operands decoded (x64_decode_operands). */
bool x64_insn_reload(const x64_insn *i, int reg, int64_t *d);
bool x64_insn_copy(const x64_insn *i, int reg, int *src); /* `mov REG, SRC`, 64 bits */
bool x64_insn_loads_entry(const x64_insn *i, int reg, int base); /* `mov REG, [BASE+rX*8]` */
bool x64_insn_spill(const x64_insn *i, int *reg, int64_t *d);
bool x64_insn_may_store_to_slot(const x64_insn *i, int64_t d);
bool x64_insn_lea_rip(const x64_insn *i, int reg, uint64_t *target);
bool x64_first_arg_constant(const x64_insn *call, x64_prev_insn prev, void *ctx, int64_t *value);

#endif
