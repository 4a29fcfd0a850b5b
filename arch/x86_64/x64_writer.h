/* x64_writer.h — emits x86-64 machine code bytes, nothing else.
 *
 * put_<op>_<operand shape> calls append to a buffer whose first byte will run
 * at run-time address PC.  With a NULL buffer the writer only measures, so one
 * code path gives both the size and the bytes.  Labels are small integer ids
 * placed with x64_put_label; references to them are fixed up in
 * x64_writer_flush, which reports a label never placed or a value out of
 * range.  References to absolute addresses are computed at once (and checked
 * for reach) when a buffer is present.
 *
 * Branch relaxation: jmp and jcc to a label are written with rel32, unless
 * SHORTS (a bitmap over the label branches of a pass, in the order they are
 * written) says rel8.  x64_writer_relax reads a pass written all rel32 and
 * marks the branches a rel8 reaches; written short, they bring others nearer,
 * but alignment padding may grow, so the next pass is checked
 * (x64_writer_unrelax) and written again until every rel8 reaches.  The
 * rel32 forms cost ~12 % of a dispatch loop's time on Zen 4
 * (docs/PERFORMANCE.md). */
#ifndef X64_WRITER_H
#define X64_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lp_status.h"

typedef enum x64_fixup_kind {
  X64_FIXUP_REL32,  /* int32 = label - (pc + end) */
  X64_FIXUP_REL8,   /* int8 = label - (pc + end) */
  X64_FIXUP_ABS32S, /* int32 = absolute address of label (sign-extended use) */
  X64_FIXUP_DIFF32, /* int32 = label - base label */
  X64_FIXUP_ABS64,  /* uint64 = absolute address of label */
} x64_fixup_kind;

typedef struct x64_fixup {
  x64_fixup_kind kind;
  size_t at;     /* offset of the field */
  size_t end;    /* X64_FIXUP_REL32: offset the displacement is relative to */
  size_t label, base;
  long branch;   /* a label branch (rel32 or rel8): its number in the pass, else -1 */
  size_t start;  /* … and the offset of its first byte */
} x64_fixup;

typedef struct x64_writer {
  uint8_t *code;    /* NULL: measure only */
  uint64_t pc;      /* run-time address of code[0] */
  size_t offset;    /* bytes emitted so far */
  size_t nlabels;
  int64_t *label_at; /* offset of each label, -1 = not placed */
  x64_fixup *fixups;
  size_t nfixups, capfixups;
  const uint8_t *shorts; /* bit k: label branch k is written rel8; NULL: none */
  size_t nbranches;      /* label branches written so far */
  bool failed;      /* first failure kept in error */
  char error[200];
} x64_writer;

lp_status x64_writer_init(x64_writer *w, uint8_t *code, uint64_t pc, size_t nlabels);
void x64_writer_clear(x64_writer *w);
/* Resolves label references; fails on an earlier error, an unplaced label or a
 * value out of range. */
lp_status x64_writer_flush(x64_writer *w);
/* After a pass written without SHORTS, flushed: *SHORTS (malloc'd) marks
 * the label branches whose rel8 form reaches their label. */
lp_status x64_writer_relax(const x64_writer *w, uint8_t **shorts);
/* After a pass written with SHORTS, flushed: clears the bits of the rel8
 * branches that do not reach their label; true when it cleared any (the pass
 * must be written again). */
bool x64_writer_unrelax(const x64_writer *w, uint8_t *shorts);

void x64_put_label(x64_writer *w, size_t label);
void x64_put_bytes(x64_writer *w, const void *bytes, size_t n);
void x64_put_u8(x64_writer *w, uint8_t v);
void x64_put_align(x64_writer *w, size_t to, uint8_t fill); /* relative to code[0] */
void x64_put_nops(x64_writer *w, size_t to);                 /* the same with executable nops */
void x64_put_ud2(x64_writer *w);

void x64_put_jmp_label(x64_writer *w, size_t label);              /* E9 rel32 or EB rel8 */
void x64_put_jmp_rel32_label(x64_writer *w, size_t label);        /* E9 rel32 always */
void x64_put_jmp_rel32_address(x64_writer *w, uint64_t target);
void x64_put_jcc_label(x64_writer *w, uint8_t cc, size_t label);  /* 0F 8cc rel32 or 7cc rel8 */
void x64_put_jcc_rel32_address(x64_writer *w, uint8_t cc, uint64_t target);
void x64_put_call_rel32_address(x64_writer *w, uint64_t target);  /* E8 rel32 */
void x64_put_call_rel32_label(x64_writer *w, size_t label);
/* cmp REG, BOUND (REX.W 83 /7 ib, or 81 /7 id from 128 on; REG numbered as
 * encoded, rax 0 .. r15 15), then jae LABEL: a guarded jump table's index
 * past the copy's entries leaves for LABEL (x64_jumptable.h). */
void x64_put_bound_check(x64_writer *w, unsigned reg, uint32_t bound, size_t label);

/* Counter probes (the shapes of DynamoRIO's drx_insert_counter_update):
 *   [lock] inc qword ptr [rip+disp32] naming COUNTER: (F0) 48 FF 05 disp32;
 *   mov byte ptr [rip+disp32], 1 (a coverage mark, flags untouched): C6 05 disp32 01;
 *   where the flags are live, rax is saved instead and the counter added to
 *   without touching them: lea rsp,[rsp-128]; push rax (48 8D 64 24 80 50),
 *   then per counter mov rax,[rip+disp32]; lea rax,[rax+1]; mov [rip+disp32],rax
 *   (48 8B 05 disp32 48 8D 40 01 48 89 05 disp32), then pop rax;
 *   lea rsp,[rsp+128] (58 48 8D A4 24 80 00 00 00).  The lea leaves the red
 *   zone alone.  popfq costs ~10 cycles; this costs a load and a store.
 *   lock inc has no such form: atomic counters save the flags, lea rsp,[rsp-128];
 *   pushfq (48 8D 64 24 80 9C) … popfq; lea rsp,[rsp+128] (9D 48 8D A4 24 80 00 00 00).
 * A counter is decremented the same ways: [lock] dec (F0) 48 FF 0D disp32, or
 * lea rax,[rax-1] (48 8D 40 FF) between the mov through rax (DELTA -1). */
void x64_put_inc_rip_counter(x64_writer *w, uint64_t counter, bool lock);
void x64_put_dec_rip_counter(x64_writer *w, uint64_t counter, bool lock);
void x64_put_mov_byte_rip_one(x64_writer *w, uint64_t counter);
void x64_put_rax_save(x64_writer *w);
void x64_put_add_rip_counter_rax(x64_writer *w, uint64_t counter, int8_t delta);
void x64_put_rax_restore(x64_writer *w);
void x64_put_flags_save(x64_writer *w);
void x64_put_flags_restore(x64_writer *w);
/* How far below its value before the save rsp is, after each instruction of
 * a save and a restore, either kind (for unwind information). */
#define X64_SAVE_LEA_LEN 5    /* lea rsp,[rsp-128]: then 128 below */
#define X64_RESTORE_POP_LEN 1 /* pop rax or popfq: then 128 below, 0 after the lea */
#define X64_RED_ZONE 128
#define X64_SAVED_BELOW (X64_RED_ZONE + 8) /* after push rax or pushfq */

/* Copies an instruction of LEN bytes and rewrites its disp32 at DISP_OFFSET:
 * RIP-relative to TARGET, RIP-relative to LABEL, or the absolute address of
 * LABEL (a [index*scale+disp32] operand). */
void x64_put_insn_rip_address(x64_writer *w, const uint8_t *insn, size_t len, size_t disp_offset,
                              uint64_t target);
void x64_put_insn_rip_label(x64_writer *w, const uint8_t *insn, size_t len, size_t disp_offset,
                            size_t label);
void x64_put_insn_abs32_label(x64_writer *w, const uint8_t *insn, size_t len, size_t disp_offset,
                              size_t label);

/* Data: int32 (LABEL - BASE) and the uint64 absolute address of LABEL. */
void x64_put_label_diff32(x64_writer *w, size_t label, size_t base);
void x64_put_label_abs64(x64_writer *w, size_t label);

/* Data naming an address outside the code: int32 (ADDRESS - BASE), where BASE
 * is already placed, and a plain uint64. */
void x64_put_address_diff32(x64_writer *w, uint64_t address, size_t base);
void x64_put_u64(x64_writer *w, uint64_t v);

#endif
