/* reloc_layout.c — writes the copy of a planned function, probes included.
 *
 * One code path measures (writer without a buffer) and emits, so sizes never
 * depend on the destination or the counters (e9patch style).  Layout: blocks
 * in block order (entry first), the entry counter on top of block 0, each
 * block's probe at its start (not the cover probes reloc_probes.covered says
 * ran, in a second copy), with a side entry's counter (arcs; when only
 * entries from outside enter the block) and the probe of the counted edge
 * that is its only way in, a jmp where a fall-through is broken (a call
 * returning twice decrements the next block's side counter before it and
 * increments it after it; one that never returns by its callee is followed
 * by a jmp back to the original); then the
 * stubs of the counted edges that need one (probe; jmp target), those of
 * the side entries into blocks their own edges enter too (counter; jmp
 * block), the escapes of the guarded tables' dispatches (the index past
 * the copy's table: the original table's lea, then the original load), then
 * the rewritten jump tables.  A block the compiler aligned is
 * aligned again, and jumps to labels are short where they reach
 * (x64_writer.h, relaxation): the copy keeps the shape of the code it stands
 * for, whose rel32 forms and lost alignment cost a dispatch loop 17 %
 * (docs/PERFORMANCE.md).  Probes that land at one point are queued and
 * written together, sharing one save of rax (or of the flags, for lock inc)
 * where the flags are live (DynamoRIO's drx style).  The emission also
 * records the origin map (reloc.h): which original address each range of
 * the copy stands for, for unwind information. */
#include <stdlib.h>

#include "reloc_internal.h"
#include "x64_relocator.h"

/* Labels: one per block start, the copy's top, the tables, the edge stubs,
 * the guarded tables' escapes. */
#define L_BLOCK(b) ((size_t)(b))
#define L_TOP(p) ((p)->nblocks)
#define L_TABLE(p, t) ((p)->nblocks + 1 + (t))
#define L_STUB(p, e) ((p)->nblocks + 1 + (p)->ntables + (e))
#define L_ESCAPE(p, t) ((p)->nblocks + 1 + (p)->ntables + (p)->nedges + (t))

size_t reloc_layout_labels(const reloc_plan *p) { return p->nblocks + 1 + 2 * p->ntables + p->nedges; }

typedef struct probe {
  size_t slot;
  bool cover; /* mov byte 1, else inc */
  bool dec;   /* dec instead of inc */
  bool live;  /* flags live here */
  long block; /* the block whose cover probe this is, or -1 */
} probe;

typedef struct layout_ctx {
  const reloc_plan *p;
  x64_writer *w;
  uint64_t counters;
  reloc_redirect redirect;
  void *redirect_ctx;
  probe queue[6]; /* at most: block, side entry, the edge counted at it, call site, edge before the last insn
                     (before a call returning twice: call site, fall edge, the next block's side entry) */
  size_t nqueued;
  size_t nsaved;
  int64_t *cover_off;
  reloc_plan *record; /* the plan whose origin map is recorded, or NULL */
  bool record_failed;
} layout_ctx;

/* From offset AT on, the copy stands for original address ORIG with rsp
 * SP_BELOW bytes lower than there (reloc_origins). */
static void origin_at(layout_ctx *c, size_t at, uint64_t orig, uint32_t sp_below) {
  reloc_plan *p = c->record;
  if (!p || c->record_failed) return;
  reloc_origin *last = p->norigins ? &p->origins[p->norigins - 1] : NULL;
  if (last && last->orig == orig && last->sp_below == sp_below) return;
  if (last && last->offset == at) { /* nothing written under it */
    p->norigins--;
    last = p->norigins ? &p->origins[p->norigins - 1] : NULL;
    if (last && last->orig == orig && last->sp_below == sp_below) return;
  }
  if (p->norigins == p->caporigins) {
    size_t cap = p->caporigins ? 2 * p->caporigins : 64;
    reloc_origin *grown = realloc(p->origins, cap * sizeof *grown);
    if (!grown) {
      c->record_failed = true;
      return;
    }
    p->origins = grown;
    p->caporigins = cap;
  }
  p->origins[p->norigins++] = (reloc_origin){at, orig, sp_below};
}

/* From here on the copy stands for original address ORIG. */
static void origin(layout_ctx *c, uint64_t orig) {
  if (c->record) origin_at(c, c->w->offset, orig, 0); /* the measure pass records none */
}

/* A save moves rsp under the current origin. */
static void origin_sp(layout_ctx *c, size_t at, uint32_t sp_below) {
  const reloc_plan *p = c->record;
  if (p && p->norigins) origin_at(c, at, p->origins[p->norigins - 1].orig, sp_below);
}

static void queue(layout_ctx *c, size_t slot, bool cover, bool live) {
  c->queue[c->nqueued++] = (probe){slot, cover, false, live && !cover, -1};
}

/* Writes the queued probes.  When the flags are live for any of them, all
 * add through rax, saved around them (lock inc, under atomic, through a
 * pushfq/popfq instead): one save for them all. */
static void flush(layout_ctx *c) {
  bool save = false, atomic = c->p->probes.atomic;
  for (size_t k = 0; k < c->nqueued; k++) {
    save |= c->queue[k].live;
    c->nsaved += c->queue[k].live;
  }
  if (save) {
    size_t at = c->w->offset;
    if (atomic) x64_put_flags_save(c->w);
    else x64_put_rax_save(c->w);
    origin_sp(c, at + X64_SAVE_LEA_LEN, X64_RED_ZONE);
    origin_sp(c, c->w->offset, X64_SAVED_BELOW);
  }
  for (size_t k = 0; k < c->nqueued; k++) {
    uint64_t at = c->counters + 8 * (uint64_t)c->queue[k].slot;
    if (c->queue[k].cover && c->cover_off && c->queue[k].block >= 0)
      c->cover_off[c->queue[k].block] = (int64_t)c->w->offset;
    if (c->queue[k].cover)
      x64_put_mov_byte_rip_one(c->w, at);
    else if (save && !atomic)
      x64_put_add_rip_counter_rax(c->w, at, c->queue[k].dec ? -1 : 1);
    else if (c->queue[k].dec)
      x64_put_dec_rip_counter(c->w, at, atomic);
    else
      x64_put_inc_rip_counter(c->w, at, atomic);
  }
  if (save) {
    size_t at = c->w->offset;
    if (atomic) x64_put_flags_restore(c->w);
    else x64_put_rax_restore(c->w);
    origin_sp(c, at + X64_RESTORE_POP_LEN, X64_RED_ZONE);
    origin_sp(c, c->w->offset, 0);
  }
  c->nqueued = 0;
}

static void queue_edge(layout_ctx *c, size_t e) {
  queue(c, c->p->edata[e].slot, false, c->p->edata[e].live != 0);
}

static long block_label(void *ctx, uint64_t orig) {
  const reloc_plan *p = ((layout_ctx *)ctx)->p;
  long i = reloc_insn_at(p, orig);
  return i >= 0 && p->insns[i].leader ? (long)L_BLOCK(p->insns[i].block) : -1;
}

static uint64_t redirect(void *ctx, uint64_t orig) {
  const layout_ctx *c = ctx;
  return c->redirect ? c->redirect(c->redirect_ctx, orig) : orig;
}

/* The jump to edge E's target (from a stub or a broken fall-through). */
static void jmp_to(layout_ctx *c, const reloc_edge *e, uint64_t orig) {
  if (e->to != RELOC_EXIT)
    x64_put_jmp_label(c->w, L_BLOCK(e->to));
  else if (e->kind == RELOC_EDGE_ESCAPE)
    x64_put_jmp_rel32_address(c->w, orig); /* back to the original body */
  else
    x64_put_jmp_rel32_address(c->w, redirect(c, orig));
}

/* The counted edge of block B that leaves by the branch of its last insn
 * (not the fall-through) and has a stub, or -1. */
static long branch_stub(const reloc_plan *p, size_t b, uint64_t target) {
  const reloc_bdata *bd = &p->bdata[b];
  for (size_t e = bd->first_edge; e < bd->first_edge + bd->nout; e++) {
    const reloc_edge *ed = &p->edges[e];
    if (ed->counted && p->edata[e].place == PLACE_STUB && ed->kind != RELOC_EDGE_FALL &&
        ed->target == target)
      return (long)e;
  }
  return -1;
}

/* branch_stub of table block B's entry for TARGET: its table edges come
 * sorted by target (reloc_cfg.c), looked up by halves (CPython's dispatch
 * table has hundreds of entries, each looked up in both passes). */
static long table_stub(const reloc_plan *p, size_t b, uint64_t target) {
  const reloc_bdata *bd = &p->bdata[b];
  size_t lo = bd->first_edge, hi = bd->first_edge + bd->nout, end = hi;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    const reloc_edge *e = &p->edges[mid];
    if (e->kind < RELOC_EDGE_TABLE || (e->kind == RELOC_EDGE_TABLE && e->target < target)) lo = mid + 1;
    else hi = mid;
  }
  const reloc_edge *e = lo < end ? &p->edges[lo] : NULL;
  bool stub = e && e->kind == RELOC_EDGE_TABLE && e->target == target && e->counted &&
              p->edata[lo].place == PLACE_STUB;
  return stub ? (long)lo : -1;
}

static void write_insn(layout_ctx *c, size_t i, bool last) {
  const reloc_plan *p = c->p;
  const reloc_insn *ri = &p->insns[i];
  const x64_insn *in = &ri->x;
  const x64_targets targets = {block_label, redirect, c};
  if (ri->table_ref >= 0) {
    x64_relocate_table_ref(c->w, in, L_TABLE(p, (size_t)ri->table_ref));
    return;
  }
  const reloc_table *loaded = ri->table_load >= 0 ? &p->tables[ri->table_load] : NULL;
  if (loaded && loaded->guard) /* indexes past the copy's table go home */
    x64_put_bound_check(c->w, loaded->guard_reg, (uint32_t)(loaded->nentries * loaded->guard_unit),
                        L_ESCAPE(p, (size_t)ri->table_load));
  if (loaded && loaded->first >= 0) { /* its own copy of the table the base register holds */
    x64_relocate_table_load(c->w, in, L_TABLE(p, (size_t)ri->table_load), L_TABLE(p, (size_t)loaded->first));
    return;
  }
  if (in->flow == X64_FLOW_CALL && in->target == p->entry) { /* recursion: a call, counted */
    x64_put_call_rel32_label(c->w, L_TOP(p));
    return;
  }
  bool branch = in->flow == X64_FLOW_JMP || in->flow == X64_FLOW_JCC || in->flow == X64_FLOW_JCC_SHORT;
  long e = branch && last ? branch_stub(p, ri->block, in->target) : -1;
  if (e >= 0)
    x64_relocate_branch_label(c->w, in, L_STUB(p, (size_t)e));
  else
    x64_relocate_insn(c->w, in, &targets);
}

static size_t call_index(const reloc_plan *p, uint64_t site) {
  size_t lo = 0, hi = p->ncalls;
  while (lo + 1 < hi) {
    size_t mid = (lo + hi) / 2;
    if (p->calls[mid].site <= site) lo = mid; else hi = mid;
  }
  return lo;
}

/* Did the compiler align block B: at a 16-byte boundary with padding
 * before it (nops or a gap)?  Its copy is aligned the same: a loop's head
 * off its alignment cost a dispatch loop several percent. */
static bool aligned_by_compiler(const reloc_plan *p, size_t b) {
  uint64_t a = p->blocks[b].addr;
  if (b == 0 || a % 16) return false;
  size_t i = p->order[p->bdata[b].first];
  if (i == 0) return true;
  const x64_insn *prev = &p->insns[i - 1].x;
  return prev->addr + prev->len != a || x64_is_nop(prev);
}

/* Where the nops that end block B begin (a position in block order), when
 * they pad the block after it to the compiler's alignment: the copy aligns
 * that block again, so they are left out (else the copy would run both).
 * The block's end when there are none, and never its first instruction. */
static size_t padding_from(const reloc_plan *p, size_t b) {
  const reloc_bdata *bd = &p->bdata[b];
  size_t end = bd->first + bd->count, k = end;
  const x64_insn *last = &p->insns[p->order[end - 1]].x;
  if (b + 1 >= p->nblocks || !aligned_by_compiler(p, b + 1) || last->addr + last->len != p->blocks[b + 1].addr)
    return end;
  while (k > bd->first + 1 && x64_is_nop(&p->insns[p->order[k - 1]].x)) k--;
  return k;
}

/* Whether block B, entered from outside its graph, counts those entries
 * (arcs) in a stub of its own: its edges enter it too (not the second
 * returns of a call: they are counted around the call, rejoined_by). */
static bool side_stub(const reloc_plan *p, size_t b) {
  return p->probes.arcs && p->blocks[b].entered && p->bdata[b].npreds > 0 && !p->bdata[b].rejoined;
}

/* Under arcs, the block that block B's call returning twice falls into,
 * whose side entry counts the returns after the first, or -1. */
static long rejoined_by(const reloc_plan *p, size_t b) {
  const reloc_bdata *bd = &p->bdata[b];
  if (!p->probes.arcs || !bd->returns_twice) return -1;
  for (size_t e = bd->first_edge; e < bd->first_edge + bd->nout; e++)
    if (p->edges[e].kind == RELOC_EDGE_FALL) return (long)p->edges[e].to;
  return -1;
}

/* Writes block B; FALLS_IN: the block written before runs into it.  True
 * when B runs into the next block. */
static bool write_block(layout_ctx *c, size_t b, int64_t *copy_off, bool falls_in) {
  const reloc_plan *p = c->p;
  const reloc_probes *pr = &p->probes;
  const reloc_bdata *bd = &p->bdata[b];
  origin(c, p->blocks[b].addr);
  if (aligned_by_compiler(p, b)) { /* nops where the block before runs into it */
    if (falls_in) x64_put_nops(c->w, 16);
    else x64_put_align(c->w, 16, /*int3=*/0xcc);
  }
  bool covered = reloc_probe_covered(p, b); /* a second copy: its cover probe ran in the first */
  if (b == 0) {
    x64_put_label(c->w, L_TOP(p));
    if (pr->entry && pr->entry_cover) {
      if (!covered) x64_put_mov_byte_rip_one(c->w, c->counters);
    } else if (pr->entry) {
      x64_put_inc_rip_counter(c->w, c->counters, pr->atomic); /* flags dead at an ABI entry */
    }
  }
  x64_put_label(c->w, L_BLOCK(b));
  bool entered_here = p->blocks[b].entered && !side_stub(p, b) && !bd->rejoined;
  if (entered_here && c->record && c->record->side_off) c->record->side_off[b] = (int64_t)c->w->offset;
  if (pr->blocks == RELOC_BLOCKS_COUNT ||
      (pr->blocks == RELOC_BLOCKS_COVER && p->blocks[b].cover == RELOC_COVER_PROBE && !covered)) {
    queue(c, p->block_slot + b, pr->blocks == RELOC_BLOCKS_COVER, bd->live_in != 0);
    c->queue[c->nqueued - 1].block = (long)b;
  }
  if (pr->arcs && entered_here) /* the entries from outside: a virtual edge of the flow */
    queue(c, p->side_slot + bd->side, false, bd->live_in != 0);
  if (bd->npreds == 1 && p->edges[bd->pred].counted && p->edata[bd->pred].place == PLACE_AT_TARGET)
    queue_edge(c, bd->pred);
  size_t pad = padding_from(p, b);
  long rejoined = rejoined_by(p, b);
  for (size_t k = bd->first; k < bd->first + bd->count; k++) {
    size_t i = p->order[k];
    const x64_insn *in = &p->insns[i].x;
    bool last = k + 1 == bd->first + bd->count;
    if (last && pr->calls && (in->flow == X64_FLOW_CALL || in->flow == X64_FLOW_CALL_INDIRECT))
      queue(c, p->call_slot + call_index(p, in->addr), false, false); /* dead at a call */
    if (last)
      for (size_t e = bd->first_edge; e < bd->first_edge + bd->nout; e++)
        if (p->edges[e].counted && p->edata[e].place == PLACE_BEFORE_LAST) queue_edge(c, e);
    if (last && rejoined >= 0) { /* every return adds one after the call: the first is taken off */
      queue(c, p->side_slot + p->bdata[rejoined].side, false, false); /* dead at a call */
      c->queue[c->nqueued - 1].dec = true;
    }
    origin(c, in->addr);
    flush(c);
    if (copy_off) copy_off[i] = k < pad ? (int64_t)c->w->offset : -1; /* padding left out: no copy */
    if (k < pad) write_insn(c, i, last);
  }
  const reloc_insn *last = &p->insns[p->order[bd->first + bd->count - 1]];
  if (last->x.flow == X64_FLOW_STOP) { /* ud2, int3, hlt: a signal handler may step over it */
    x64_put_jmp_rel32_address(c->w, last->x.addr + last->x.len); /* into the original body */
    return false;
  }
  if (!reloc_falls_through(last)) return false;
  origin(c, last->x.addr + last->x.len);
  if (last->noreturn && last->exits) { /* known by its callee: should it return, as natively */
    x64_put_jmp_rel32_address(c->w, last->x.addr + last->x.len);
    return false;
  }
  if (last->noreturn) {
    x64_put_ud2(c->w);
    return false;
  }
  if (rejoined >= 0) /* where the call returns, each time: flags dead after a call */
    queue(c, p->side_slot + p->bdata[rejoined].side, false, false);
  for (size_t e = bd->first_edge; e < bd->first_edge + bd->nout; e++) {
    const reloc_edge *ed = &p->edges[e];
    if (ed->kind != RELOC_EDGE_FALL && ed->kind != RELOC_EDGE_ESCAPE) continue;
    if (ed->counted && p->edata[e].place == PLACE_AFTER_LAST) queue_edge(c, e);
    flush(c);
    if (ed->to == RELOC_EXIT || ed->to != b + 1) {
      jmp_to(c, ed, last->x.addr + last->x.len);
      return false;
    }
    return true;
  }
  return false;
}

static void write_tables(layout_ctx *c) {
  const reloc_plan *p = c->p;
  x64_writer *w = c->w;
  if (p->ntables) origin(c, RELOC_ORIGIN_DATA);
  for (size_t t = 0; t < p->ntables; t++) {
    const reloc_table *tb = &p->tables[t];
    size_t base = L_TABLE(p, tb->first >= 0 ? (size_t)tb->first : t); /* what the base register holds */
    x64_put_align(w, tb->kind == X64_TABLE_REL32 ? 4 : 8, /*int3=*/0xcc);
    x64_put_label(w, L_TABLE(p, t));
    for (size_t k = 0; k < tb->nentries; k++) {
      long l = block_label(c, tb->targets[k]);
      long e = tb->block >= 0 ? table_stub(p, (size_t)tb->block, tb->targets[k]) : -1;
      if (e >= 0) l = (long)L_STUB(p, (size_t)e);
      if (tb->kind == X64_TABLE_REL32 && l >= 0)
        x64_put_label_diff32(w, (size_t)l, base);
      else if (tb->kind == X64_TABLE_REL32)
        x64_put_address_diff32(w, tb->targets[k], base);
      else if (l >= 0)
        x64_put_label_abs64(w, (size_t)l);
      else
        x64_put_u64(w, tb->targets[k]);
    }
  }
}

lp_status reloc_layout(const reloc_plan *p, x64_writer *w, int64_t *copy_off, int64_t *cover_off,
                       uint64_t counters, reloc_redirect redirect_fn, void *redirect_ctx, size_t *nsaved,
                       reloc_plan *record) {
  layout_ctx c = {.p = p, .w = w, .counters = counters, .redirect = redirect_fn,
                  .redirect_ctx = redirect_ctx, .cover_off = cover_off, .record = record};
  if (record) record->norigins = 0;
  for (size_t b = 0; cover_off && b < p->nblocks; b++) cover_off[b] = -1;
  bool falls = false;
  for (size_t b = 0; b < p->nblocks; b++) falls = write_block(&c, b, copy_off, falls);
  for (size_t e = 0; e < p->nedges; e++) { /* stubs */
    if (!p->edges[e].counted || p->edata[e].place != PLACE_STUB) continue;
    const reloc_edge *ed = &p->edges[e];
    origin(&c, ed->to != RELOC_EXIT ? p->blocks[ed->to].addr : ed->branch);
    x64_put_label(w, L_STUB(p, e));
    queue_edge(&c, e);
    flush(&c);
    jmp_to(&c, &p->edges[e], p->edges[e].target);
  }
  for (size_t b = 0; b < p->nblocks; b++) { /* side stubs */
    if (!side_stub(p, b)) continue;
    origin(&c, p->blocks[b].addr);
    if (c.record && c.record->side_off) c.record->side_off[b] = (int64_t)w->offset;
    queue(&c, p->side_slot + p->bdata[b].side, false, p->bdata[b].live_in != 0);
    flush(&c);
    x64_put_jmp_label(w, L_BLOCK(b));
  }
  for (size_t t = 0; t < p->ntables; t++) { /* guards' escapes: the base register holds the */
    const reloc_table *tb = &p->tables[t];  /* original table again, the original loads */
    if (!tb->guard) continue;
    origin(&c, tb->guard);
    x64_put_label(w, L_ESCAPE(p, t));
    x64_relocate_insn(w, &p->insns[reloc_insn_at(p, tb->guard_ref)].x, &(x64_targets){block_label, redirect, &c});
    x64_put_jmp_rel32_address(w, tb->guard);
  }
  write_tables(&c);
  if (nsaved) *nsaved = c.nsaved;
  if (c.record_failed) return lp_fail("out of memory");
  return x64_writer_flush(w);
}
