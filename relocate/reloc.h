/* reloc.h — relocate one whole function to a new address, with probes.
 *
 * Architecture-neutral interface.  Planning decodes the function recursively
 * from its entry (never a blind sweep), finds its basic blocks, jump tables and
 * the size of the copy; emitting writes the copy for a given run-time address:
 * branches re-targeted into the copy, RIP-relative operands rewritten, calls and
 * jumps to other functions sent to their original entries, an entry counter
 * inlined at the top.  The copy's size does not depend on where it goes.
 * Knows nothing of processes, files or Lua. */
#ifndef RELOC_H
#define RELOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lp_status.h"

typedef struct reloc_function_desc {
  uint64_t entry;        /* run-time address of the entry */
  uint64_t lo, hi;       /* run-time bounds [lo, hi) of the function's bytes */
  const uint8_t *code;   /* original bytes; code[0] is at run-time address code_base */
  uint64_t code_base;
  size_t code_size;      /* decoding never reads outside [code_base, code_base+code_size) */
} reloc_function_desc;

/* What to count in a copy.  Every probe updates one 8-byte slot of a
 * contiguous array the caller allocates after planning (reloc_info.ncounters
 * slots, see reloc_emit): slot 0 is the entry counter, then one slot per block
 * (block order) when blocks != RELOC_BLOCKS_NONE, then one per counted edge
 * (edge order) when arcs. */
typedef enum reloc_block_probe {
  RELOC_BLOCKS_NONE,
  RELOC_BLOCKS_COVER, /* mov byte [slot], 1: never touches flags */
  RELOC_BLOCKS_COUNT, /* add 1 to the slot; flags saved only where live */
} reloc_block_probe;

typedef struct reloc_probes {
  bool entry;                /* count entries (slot 0) */
  reloc_block_probe blocks;
  bool arcs;                 /* count the edges off a spanning tree (the rest follow
                                by flow conservation, reloc_flow.h) */
  bool atomic;               /* lock-prefixed counter updates */
  /* Is ADDR another function's entry?  A jump there is a tail call, after which
   * flags are dead (ABI); a jump anywhere else outside the function (FUNC.cold)
   * keeps them live.  NULL: every outside target is an entry. */
  bool (*is_entry)(void *ctx, uint64_t addr);
  void *ctx;
} reloc_probes;

/* The control-flow graph of a planned function, for reports.  Blocks end at
 * branches, calls and returns, and begin at branch targets. */
typedef struct reloc_block {
  uint64_t addr;       /* original run-time address of its first instruction */
  uint32_t size;       /* bytes in the original */
  uint32_t ninsns;
} reloc_block;

#define RELOC_EXIT UINT32_MAX /* edge target: leaves the function */

typedef enum reloc_edge_kind {
  RELOC_EDGE_FALL,     /* falls through to the next block (also after a call) */
  RELOC_EDGE_TAKEN,    /* conditional branch taken */
  RELOC_EDGE_JUMP,     /* unconditional direct jump */
  RELOC_EDGE_TABLE,    /* one target of a jump table */
  RELOC_EDGE_RETURN,   /* ret, or a tail call / jump leaving the function */
  RELOC_EDGE_ESCAPE,   /* an unresolved indirect jump or a fall off the known body */
} reloc_edge_kind;

typedef struct reloc_edge {
  uint32_t from, to;   /* block indices; to == RELOC_EXIT when leaving */
  uint8_t kind;        /* reloc_edge_kind */
  bool counted;        /* has its own counter slot (arcs: off the spanning tree) */
  uint64_t branch;     /* original address of the instruction that transfers
                          (the last of the FROM block) */
  uint64_t target;     /* original target address (0 for ret and escapes) */
} reloc_edge;

typedef struct reloc_plan reloc_plan; /* opaque */

typedef struct reloc_info {
  size_t copy_size;          /* bytes reloc_emit writes */
  size_t ninstructions;
  size_t nblocks;
  size_t nedges;
  size_t ncounters;          /* counter slots reloc_emit needs (see reloc_probes) */
  size_t nsaved;             /* probes that must save and restore the flags */
  size_t njump_tables;       /* tables found and rewritten into the copy */
  bool leaves_to_original;   /* an indirect jump that was not resolved may land in
                                the original body (semantics kept, precision not) */
  uint64_t min_inner_target; /* smallest offset > 0 from entry that a branch inside
                                the function targets; UINT64_MAX if none */
  size_t entry_insn_bytes;   /* length of instructions starting at entry that
                                together cover at least 5 bytes */
} reloc_info;

/* Decodes and analyses; on failure the message says why the function cannot be
 * relocated (e.g. "undecodable instruction at 0x401234"). */
lp_status reloc_plan_function(const reloc_function_desc *fn, const reloc_probes *probes,
                              reloc_plan **out, reloc_info *info);

/* Where a call or jump to another function should go: the callee's copy when it
 * has one, else TARGET itself. */
typedef uint64_t (*reloc_redirect)(void *ctx, uint64_t target);

/* Writes the copy for run-time address DEST into OUT (info.copy_size bytes),
 * its probes updating the info.ncounters 8-byte slots at run-time address
 * COUNTERS.  Calls and jumps leaving the function go to REDIRECT(target)
 * (NULL: to their original targets); a call to the function's own entry goes
 * to the copy.  Fails when a displacement does not reach from DEST. */
lp_status reloc_emit(const reloc_plan *plan, uint64_t dest, uint8_t *out, uint64_t counters,
                     reloc_redirect redirect, void *ctx);

/* The graph: info.nblocks blocks (block 0 holds the entry) and info.nedges
 * edges, valid while the plan lives. */
const reloc_block *reloc_blocks(const reloc_plan *plan);
const reloc_edge *reloc_edges(const reloc_plan *plan);

/* The distinct targets of the direct calls and jumps that leave the function
 * (its callees and tail callees), at most MAX of them into OUT; returns how
 * many there are. */
size_t reloc_callees(const reloc_plan *plan, uint64_t *out, size_t max);

/* Where the instruction at original address ORIG landed in the copy (offset),
 * or -1 if it was not copied. */
int64_t reloc_copy_offset(const reloc_plan *plan, uint64_t orig);

void reloc_plan_free(reloc_plan *plan);

#endif
