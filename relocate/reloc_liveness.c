/* reloc_liveness.c — which status flags are live at each block's start and
 * before its last instruction: a backward dataflow to a fixed point over the
 * CFG, from what each instruction reads and always writes (x64_decode).
 *
 * The ABI rules at the function's edges: flags are dead after a ret, at a
 * tail call to another function's entry (probes.is_entry, or every outside
 * target when it is NULL) or through the GOT, and across a call (the callee
 * clobbers them, so no code after a call relies on flags from before it);
 * they are all live at an escape (an unresolved indirect jmp, a fall off the
 * known body) and at a jump to an outside target that is no entry (FUNC.cold). */
#include "reloc_internal.h"

static uint8_t reads(const x64_insn *in) { return in->flags_read; }

static uint8_t writes(const x64_insn *in) {
  if (in->flow == X64_FLOW_CALL || in->flow == X64_FLOW_CALL_INDIRECT) return X64_FLAGS_ALL;
  return in->flags_written;
}

uint8_t reloc_edge_live(const reloc_plan *p, const reloc_edge *e) {
  if (e->to != RELOC_EXIT) return p->bdata[e->to].live_in;
  switch (e->kind) {
  case RELOC_EDGE_RETURN:
    if (e->target == 0) return 0; /* ret, jmp [rip+x] */
    return !p->probes.is_entry || p->probes.is_entry(p->probes.ctx, e->target) ? 0 : X64_FLAGS_ALL;
  default: return X64_FLAGS_ALL; /* escapes */
  }
}

/* Live before the instruction, given what is live after it. */
static uint8_t before(const x64_insn *in, uint8_t after) {
  return (uint8_t)(reads(in) | (after & ~writes(in)));
}

void reloc_flags_liveness(reloc_plan *p) {
  for (size_t b = 0; b < p->nblocks; b++) p->bdata[b].live_in = 0;
  bool changed = true;
  while (changed) { /* masks only grow: at most 6 * nblocks rounds, usually 2 */
    changed = false;
    for (size_t b = p->nblocks; b-- > 0;) {
      reloc_bdata *bd = &p->bdata[b];
      uint8_t live = 0;
      for (size_t e = bd->first_edge; e < bd->first_edge + bd->nout; e++)
        live |= reloc_edge_live(p, &p->edges[e]);
      for (size_t k = bd->first + bd->count; k-- > bd->first;) {
        live = before(&p->insns[p->order[k]].x, live);
        if (k == bd->first + bd->count - 1) bd->live_last = live;
      }
      if (live != bd->live_in) {
        bd->live_in = live;
        changed = true;
      }
    }
  }
}
