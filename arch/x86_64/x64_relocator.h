/* x64_relocator.h — rewrites one x86-64 instruction to run at a new address.
 *
 * Everything is copied as is except the rewrite paths: direct jmp/jcc (rel32,
 * or rel8 to a label where the writer's relaxation says it reaches),
 * jrcxz/loop (rel8 only: hopped over by a short jmp to a jmp rel32), call
 * rel32 (to the original target), RIP-relative operands (disp32 patched to
 * name the same absolute address) and a jump table's reference (patched to
 * name the copy's table).  The size written never depends on the address. */
#ifndef X64_RELOCATOR_H
#define X64_RELOCATOR_H

#include <stdint.h>

#include "x64_decode.h"
#include "x64_writer.h"

/* Where branch targets go: label_of gives the label of the copy of the
 * instruction at original address ORIG, or -1 when ORIG is not in the copy;
 * such a target then goes to redirect(ORIG) (another function's copy, or ORIG
 * itself). */
typedef struct x64_targets {
  long (*label_of)(void *ctx, uint64_t orig);
  uint64_t (*redirect)(void *ctx, uint64_t orig);
  void *ctx;
} x64_targets;

void x64_relocate_insn(x64_writer *w, const x64_insn *in, const x64_targets *t);

/* Writes the direct jmp/jcc/jrcxz/loop IN with its target replaced by LABEL
 * (an edge probe's stub), in the same shape as x64_relocate_insn. */
void x64_relocate_branch_label(x64_writer *w, const x64_insn *in, size_t label);

/* Writes IN, whose disp32 names a jump table, so that it names TABLE_LABEL:
 * RIP-relative for `lea r, [rip+T]`, absolute for `jmp [r*8+T]`. */
void x64_relocate_table_ref(x64_writer *w, const x64_insn *in, size_t table_label);

/* `mov r64, [rB+rX*8]` (REX.W 8B), `movsxd r64, [rB+rX*4]` (REX.W 63: a table
 * of offsets from rB) or `jmp [rB+rX*8]` ([REX] FF /4), a SIB, no
 * displacement or a zero disp8: can it be written again with a disp32, and
 * write it so, the displacement being TABLE_LABEL - BASE_LABEL (rB holds the
 * copy at BASE_LABEL; this load reads the copy at TABLE_LABEL: one table per
 * dispatch). */
bool x64_can_displace_table_load(const x64_insn *in);
void x64_relocate_table_load(x64_writer *w, const x64_insn *in, size_t table_label, size_t base_label);

#endif
