/* reloc_internal.h — the plan shared by the relocator's files (not public).
 *
 *   reloc_function.c  decoding, jump tables, the public entry points
 *   reloc_cfg.c       blocks, edges and call sites of the decoded function
 *   reloc_liveness.c  flags liveness over the blocks
 *   reloc_dom.c       dominator tree and loops
 *   reloc_probes.c    spanning tree, counter slots, where each probe goes
 *   reloc_cover.c     which blocks need a cover probe (dominators)
 *   reloc_layout.c    the copy: one code path for measuring and emitting
 */
#ifndef RELOC_INTERNAL_H
#define RELOC_INTERNAL_H

#include "reloc.h"
#include "x64_decode.h"
#include "x64_jumptable.h"
#include "x64_writer.h"

typedef struct reloc_table {
  x64_table_kind kind;
  uint64_t table;    /* original address */
  size_t nentries;
  uint64_t *targets; /* original targets; those outside the function stay as they are */
  int64_t block;     /* the block whose indirect jmp dispatches through it; -1 none */
  int base_reg;      /* the register every write of which is `lea base_reg, [rip+table]`
                        (computed gotos in PIC code), checked again once all is decoded; 0 */
  int32_t first;     /* under arcs, a copy of tables[first] for another dispatch of the
                        same original table (its entries send to its own stubs; offsets
                        are from tables[first], which the base register holds); -1 */
  uint64_t guard;    /* guarded (x64_table_match.guarded): the original load of the one
                        dispatch through it, which indexes past nentries escape to (its
                        base register given back the original table by the lea at
                        guard_ref); 0 otherwise */
  uint64_t guard_ref;
  uint8_t guard_reg, guard_unit; /* compared before the load: x64_table_match's */
} reloc_table;

typedef struct reloc_insn {
  x64_insn x;
  bool noreturn;     /* a call whose fall-through is not code (ud2 after it in the copy), or
                        to a function that never returns (reloc_probes.callee) */
  bool exits;        /* the latter: known by the callee, not by the code, so the copy jumps
                        back to the original after it, should it return after all */
  bool twice;        /* a call to a function that returns twice (RELOC_CALLEE_RETURNS_TWICE) */
  int32_t table_ref; /* the table whose address this insn's disp32 carries, or -1 */
  int32_t table_jmp; /* an indirect jmp: the table it dispatches through, or -1 */
  int32_t table_load; /* the load of an entry of this table, or -1: copied as it is, or, for
                         an own copy (`mov rJ, [rB+rX*8]`, `movsxd rI, [rB+rX*4]`, rB
                         holding tables[first]'s copy), written with the distance between
                         the two; a guarded table's index compared first */
  uint32_t block;    /* the block holding it */
  bool leader;       /* first of its block */
  bool entered;      /* entered by no branch of the function: a landing pad of its LSDA (the
                        unwinder), or where its other part (FUNC.cold) jumps back */
  bool gprs_known;   /* gprs_written is filled (reloc_function.c: gprs_written) */
  uint16_t gprs_written; /* x64_insn_gprs_written(&x), once asked */
} reloc_insn;

/* Where a counted edge's probe goes (see reloc.h). */
typedef enum reloc_place { PLACE_AFTER_LAST, PLACE_BEFORE_LAST, PLACE_AT_TARGET, PLACE_STUB } reloc_place;

typedef struct reloc_bdata {
  size_t first, count;    /* positions in the layout order p->order */
  size_t first_edge, nout;/* its out-edges: edges[first_edge .. +nout) */
  size_t npreds, pred;    /* how many edges come in; the last of them */
  uint32_t side;          /* entered from outside, under arcs: its counter, side_slot + side */
  bool returns_twice;     /* ends in a call that returns twice (RELOC_CALLEE_RETURNS_TWICE) */
  bool rejoined;          /* entered after such a call: by its fall edge, and from outside by
                             its second returns (counted around the call, not at a stub) */
  uint8_t live_in;        /* flags live at its start */
  uint8_t live_last;      /* flags live before its last instruction */
} reloc_bdata;

typedef struct reloc_edata {
  size_t slot;            /* counter slot when counted */
  reloc_place place;
  uint8_t live;           /* flags live where its probe goes */
} reloc_edata;

struct reloc_plan {
  uint64_t entry, lo, hi;
  reloc_probes probes;
  reloc_insn *insns;  /* in address order once planned */
  size_t n, entry_index;
  int32_t *at;        /* per byte of [lo,hi): index+1 of the insn starting there,
                         -(index+1) inside one, 0 not decoded */
  size_t *order;      /* layout order: the entry and what follows it, then what lies below */
  int64_t *copy_off;
  int64_t *cover_off;  /* per block: offset of its cover probe in the copy, or -1 */
  int64_t *side_off;   /* per block entered from outside its graph: where such an entry lands in
                          the copy (its start, probes first; under arcs, when its edges enter it
                          too, a stub that counts the entry and jumps there), or -1 */
  uint8_t *covered;    /* probes.covered, the plan's own copy */
  reloc_table *tables;
  size_t ntables;

  reloc_block *blocks; /* in layout order, block 0 holds the entry */
  reloc_bdata *bdata;
  size_t nblocks;
  reloc_edge *edges;   /* sorted by from, kind, target */
  reloc_edata *edata;
  size_t nedges, ncounted;
  reloc_call *calls;   /* by address */
  size_t ncalls;
  size_t block_slot, edge_slot, call_slot, side_slot, ncounters;

  size_t copy_size, nsaved;
  uint8_t *shorts;     /* the label branches written rel8 (x64_writer_relax) */
  reloc_origin *origins; /* the origin map (reloc.h), filled by the emission */
  size_t norigins, caporigins;
};

bool reloc_inside(const reloc_plan *p, uint64_t a);
bool reloc_probe_covered(const reloc_plan *p, size_t block); /* its cover probe is left out */
bool reloc_falls_through(const reloc_insn *in); /* control may reach the next address */
/* The index of the instruction starting at ORIG, or -1. */
long reloc_insn_at(const reloc_plan *p, uint64_t orig);

/* reloc_lsda.c: the distinct landing pads of CFI's LSDA that lie in [LO, HI),
 * into *PADS (malloc'd, the caller frees; NULL when none), *N of them. */
lp_status reloc_lsda_pads(const struct reloc_cfi *cfi, uint64_t lo, uint64_t hi, uint64_t **pads, size_t *n);

/* reloc_cfg.c: blocks, edges (sorted) and call sites from the decoded insns. */
lp_status reloc_build_cfg(reloc_plan *p);

/* reloc_liveness.c: bdata live_in/live_last; the flags live on leaving by E. */
void reloc_flags_liveness(reloc_plan *p);
uint8_t reloc_edge_live(const reloc_plan *p, const reloc_edge *e);

/* reloc_dom.c: the dominator tree and the natural loops of the blocks. */
#define RELOC_DOM_UNDEFINED UINT32_MAX
typedef struct reloc_dom {
  size_t nreached;  /* blocks reached from block 0 or a side entry (reloc_block.entered) */
  uint32_t *rpo;    /* those, in reverse postorder */
  uint32_t *idom;   /* immediate dominator (its own when none: block 0's, a side entry's),
                       RELOC_DOM_UNDEFINED: not reached */
  uint32_t *pre, *last; /* preorder interval in the dominator tree */
  uint32_t *head;   /* the head of the innermost loop holding it, or RELOC_DOM_UNDEFINED */
  uint32_t *outer;  /* of a head: the head of the loop around its loop, or RELOC_DOM_UNDEFINED */
  uint32_t *mem;
} reloc_dom;
lp_status reloc_dom_build(const reloc_plan *p, reloc_dom *d);
bool reloc_dom_strictly(const reloc_dom *d, uint32_t a, uint32_t b); /* a strictly dominates b */
bool reloc_dom_in_loop(const reloc_dom *d, uint32_t b, uint32_t h);  /* the loop of head h holds b */
void reloc_dom_free(reloc_dom *d);

/* reloc_probes.c: spanning tree (edge.counted), slots, probe places. */
lp_status reloc_place_probes(reloc_plan *p, const reloc_dom *d);

/* reloc_cover.c: blocks[].cover and blocks[].idom. */
lp_status reloc_place_cover(reloc_plan *p, const reloc_dom *d);

/* reloc_layout.c: writes the copy (W measures when it has no buffer) and
 * counts the probes that save the flags.  COPY_OFF and COVER_OFF (NULL when
 * not wanted) get each instruction's and each block cover probe's offset in
 * the copy; RECORD (NULL when not wanted) gets its origin map. */
lp_status reloc_layout(const reloc_plan *p, x64_writer *w, int64_t *copy_off, int64_t *cover_off,
                       uint64_t counters, reloc_redirect redirect, void *redirect_ctx, size_t *nsaved,
                       reloc_plan *record);
size_t reloc_layout_labels(const reloc_plan *p);

#endif
