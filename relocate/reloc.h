/* reloc.h — relocate one whole function to a new address, with probes.
 *
 * Architecture-neutral interface.  Planning decodes the function recursively
 * from its entry (never a blind sweep), finds its basic blocks, edges, jump
 * tables and call sites, the flags liveness at every probe point, a spanning
 * tree of the edges (arcs) and the size of the copy; emitting writes the copy
 * for a given run-time address: branches re-targeted into the copy,
 * RIP-relative operands rewritten, calls and jumps to other functions sent to
 * their original entries, the probes inlined (entry, blocks, edges, call
 * sites).  The copy's size does not depend on where it goes or where the
 * counters are.  Knows nothing of processes, files or Lua. */
#ifndef RELOC_H
#define RELOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lp_status.h"

struct reloc_cfi; /* reloc_unwind.h */

typedef struct reloc_function_desc {
  uint64_t entry;        /* run-time address of the entry */
  uint64_t lo, hi;       /* run-time bounds [lo, hi) of the function's bytes */
  const uint8_t *code;   /* original bytes; code[0] is at run-time address code_base */
  uint64_t code_base;
  size_t code_size;      /* decoding never reads outside [code_base, code_base+code_size) */
  uint64_t bias;         /* run-time minus link-time addresses: the absolute addresses a
                            PIE's jump tables hold in the file are link-time */
  const uint64_t (*readonly)[2]; /* [lo, hi) at link time: bytes the program cannot change (a
                                    jump table bounded only by its index's width must lie there) */
  size_t nreadonly;
  const struct reloc_cfi *cfi; /* the original's call frame information, or NULL: an indirect
                                  jmp that reads no table where the frame is gone is a tail
                                  call, not a way back into the original body */
  const uint64_t *entered;     /* run-time addresses where code outside jumps into the
                                  function (its other part, FUNC.cold, comes back), NENTERED
                                  of them: decoded, and entered by no edge, as landing pads */
  size_t nentered;
} reloc_function_desc;

/* What to count in a copy.  Every probe updates one 8-byte slot of a
 * contiguous array the caller allocates after planning (reloc_info.ncounters
 * slots, see reloc_emit), in this order: slot 0 is the entry counter when
 * entry, then one slot per block (block order) when blocks !=
 * RELOC_BLOCKS_NONE, then one per counted edge (edge order) when arcs, then
 * one per call site (reloc_calls order) when calls, then under arcs one per
 * block entered from outside (reloc_block.entered); reloc_info gives where
 * each group starts.
 *
 * Where the probes go: the entry counter on top of the copy (only calls reach
 * it: branches inside the function to its entry land below it); a block probe
 * at the start of the block's copy, which every path into the block passes; a
 * counted edge's probe after the last instruction of a falling-through block
 * (FALL; before it when that is a call returning twice), before the last
 * instruction when that ends the block's only edge (a ret, a jmp, an indirect
 * jmp, a noreturn call), else at the start of the
 * target block's copy when the edge is its only way in (never block 0: the
 * entry comes in too), else in a stub after the code that the branch or the
 * jump table entry is sent to (probe; jmp target);
 * a call-site counter right before its call; the counter of the block after a
 * call returning twice decremented before the call and incremented after it
 * (every return), which leaves it the second returns.  Counters use inc; where the
 * flags liveness says the flags are live, mov/lea/mov through rax saved on
 * the stack, which leaves them alone (one save for adjacent probes); lock inc
 * when atomic, inside pushfq/popfq where the flags are live. */
typedef enum reloc_block_probe {
  RELOC_BLOCKS_NONE,
  RELOC_BLOCKS_COVER, /* mov byte [slot], 1: never touches flags */
  RELOC_BLOCKS_COUNT, /* add 1 to the slot; through rax where the flags are live */
} reloc_block_probe;

/* How a direct call to a function returns (reloc_probes.callee). */
typedef enum reloc_callee {
  RELOC_CALLEE_RETURNS,        /* once, as calls do */
  RELOC_CALLEE_RETURNS_TWICE,  /* setjmp, vfork, fork (the child's counters are its own): the
                                  block after the call is then also entered from outside
                                  (reloc_block.entered: the second returns), which arcs count
                                  apart, a decrement of its counter before the call and an
                                  increment after it */
  RELOC_CALLEE_NEVER_RETURNS,  /* exit, abort: the call ends its path, as one followed by no
                                  code does */
  RELOC_CALLEE_EXITS_ON_STATUS, /* error(status, ...): never returns when the instructions
                                   before the call set edi to a constant other than 0 */
  RELOC_CALLEE_SYSCALL          /* syscall(number, ...): returns twice when the instructions
                                   before the call set edi to a fork's number (clone, clone3,
                                   fork, vfork) */
} reloc_callee;

typedef struct reloc_probes {
  bool entry;                /* count calls into the function (slot 0); a jump to
                                the entry from inside it is no call */
  bool entry_cover;          /* with entry: only mark that it was called, a
                                removable `mov byte [slot 0], 1` (reloc_entry_probe_offset) */
  reloc_block_probe blocks;
  bool arcs;                 /* count the edges off a spanning tree (the rest follow
                                by flow conservation, reloc_flow.h) */
  bool calls;                /* count every call instruction, direct and indirect
                                (see reloc_calls); flags are dead at a call */
  bool atomic;               /* lock-prefixed counter updates */
  /* With arcs: how often each edge ran (NEDGE_COUNTS of them, in the order an
   * earlier plan of the same function gave its edges, reloc_edges), measured
   * by that plan's counters.  The tree then keeps the edges that ran most
   * (times what their probes cost), so that the counted ones run least: a
   * function re-placed on its own counts (core/breaks.c).  NULL, or a count
   * that is not the plan's number of edges: the static estimate. */
  const uint64_t *edge_counts;
  size_t nedge_counts;
  /* With blocks "cover": the blocks (NCOVERED, by index) whose cover probe is
   * left out, their slots being set already: a second copy of a function
   * that ran (core/breaks.c).  Block 0's is the entry's mark under
   * entry_cover.  The plan is the same; only those probes are not written. */
  const uint8_t *covered;
  size_t ncovered;
  /* Is ADDR another function's entry?  A jump there is a tail call, after which
   * flags are dead (ABI); a jump anywhere else outside the function (FUNC.cold)
   * keeps them live.  NULL: every outside target is an entry. */
  bool (*is_entry)(void *ctx, uint64_t addr);
  /* How a direct call to ADDR returns.  NULL: as calls do, except where no
   * code follows the call. */
  reloc_callee (*callee)(void *ctx, uint64_t addr);
  void *ctx;
} reloc_probes;

/* The control-flow graph of a planned function, for reports.  Blocks begin at
 * the entry (block 0), at every branch and jump-table target inside the
 * function and after every block end; they end at jmp, jcc, jrcxz/loop, ret,
 * calls (direct and indirect: the return lands in the next block), indirect
 * jmps, ud2/hlt/int3 and noreturn calls.  Blocks are numbered in the copy's
 * layout order: the entry's block first, then by address from there on, then
 * those below the entry. */
typedef struct reloc_block {
  uint64_t addr;       /* original run-time address of its first instruction */
  uint32_t size;       /* bytes in the original */
  uint32_t ninsns;
  bool leaks;          /* ends in a call and falls through, or escapes: a virtual edge to
                          EXIT carries the calls that never return (reloc_flow.h), the
                          dispatches that ran in the original */
  bool escapes;        /* ends in a guarded table's dispatch, whose indexes past the
                          entries the copy kept go to the original (x64_jumptable.h) */
  bool entered;        /* entered by no edge: a C++ landing pad (the unwinder), where the
                          function's other part jumps back, or after a call that returns
                          twice (RELOC_CALLEE_RETURNS_TWICE; its fall edge counts the first
                          returns); under arcs its own counter measures a virtual edge EXIT->it */
  uint8_t cover;       /* reloc_cover_kind: how block probes "cover" tell it ran */
  uint32_t idom;       /* with "cover": its immediate dominator (block 0's own
                          index, and that of any block the entry does not reach) */
} reloc_block;

/* How a block is known to have run under block probes "cover" (reloc_cover.c);
 * every block has a probe of its own under "count". */
typedef enum reloc_cover_kind {
  RELOC_COVER_PROBE,     /* its own probe */
  RELOC_COVER_ENTRY,     /* block 0: the entry's probe */
  RELOC_COVER_DOMINATED, /* no probe: it ran when a block it dominates ran */
} reloc_cover_kind;

/* RAN[b] is 1 when the probe that tells block b ran (its own, or the entry's)
 * did, else 0 (always 0 for RELOC_COVER_DOMINATED); on return every block
 * that a block that ran is dominated by has 1 too.  IDOM[b] is
 * reloc_block.idom.  False when out of memory. */
bool reloc_cover_solve(const uint32_t *idom, size_t nblocks, uint64_t *ran);

#define RELOC_EXIT UINT32_MAX /* edge target: leaves the function */

typedef enum reloc_edge_kind {
  RELOC_EDGE_FALL,     /* falls through to the next block (also after a call) */
  RELOC_EDGE_TAKEN,    /* conditional branch taken */
  RELOC_EDGE_JUMP,     /* unconditional direct jump */
  RELOC_EDGE_TABLE,    /* one target of a jump table */
  RELOC_EDGE_RETURN,   /* ret, or a tail call / jump leaving the function */
  RELOC_EDGE_ESCAPE,   /* an unresolved indirect jump or a fall off the known body */
} reloc_edge_kind;

/* Edges are sorted by FROM, then kind, then target.  A jump table gives one
 * TABLE edge per distinct target inside the function and one RETURN edge per
 * distinct target outside it; jmp [rip+x] (a tail call through the GOT) is a
 * RETURN with target 0; ud2/hlt/int3 and noreturn calls end in an ESCAPE to
 * RELOC_EXIT (no FALL), so that flow is conserved at every block. */
typedef struct reloc_edge {
  uint32_t from, to;   /* block indices; to == RELOC_EXIT when leaving */
  uint8_t kind;        /* reloc_edge_kind */
  bool counted;        /* has its own counter slot (arcs: off the spanning tree);
                          the k-th counted edge uses slot reloc_info.edge_slot + k */
  uint64_t branch;     /* original address of the instruction that transfers
                          (the last of the FROM block) */
  uint64_t target;     /* original target address: the next block's for FALL,
                          0 for ret, jmp [rip+x] and escapes */
} reloc_edge;

/* A call site: the k-th call uses slot reloc_info.call_slot + k when calls. */
typedef struct reloc_call {
  uint64_t site;       /* original address of the call instruction */
  uint64_t target;     /* original address of a direct callee; 0 when indirect */
} reloc_call;

typedef struct reloc_plan reloc_plan; /* opaque */

typedef struct reloc_info {
  size_t copy_size;          /* bytes reloc_emit may write, at most (reloc_copy_size
                                after it: how many it wrote) */
  size_t ninstructions;
  size_t nblocks;
  size_t nedges;
  size_t ncounted;           /* edges off the spanning tree (counted when arcs):
                                nedges + leaks - nblocks when the entry is
                                counted (its counter measures the virtual edge
                                EXIT->entry), one more otherwise */
  size_t ncalls;             /* call instructions, direct and indirect */
  size_t ncounters;          /* counter slots reloc_emit needs (see reloc_probes) */
  size_t block_slot;         /* first slot of each group (meaningful when the */
  size_t edge_slot;          /*   group is asked for): blocks, counted edges, */
  size_t call_slot;          /*   call sites, and under arcs */
  size_t side_slot;          /*   the side entries' entries (one each, in block order) */
  size_t ncover_probes;      /* blocks with a probe of their own under "cover" */
  size_t nsaved;             /* probes that must save and restore the flags
                                (adjacent ones share one save) */
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

/* Writes the copy for run-time address DEST into OUT (room for info.copy_size
 * bytes; reloc_copy_size then says how many it took), its probes updating
 * the info.ncounters 8-byte slots at run-time address COUNTERS, and records
 * where each instruction, probe and origin went (reloc_copy_offset, ...: they
 * are known from here on).  Calls and jumps leaving the function go to
 * REDIRECT(target) (NULL: to their original targets), perhaps twice for one
 * target; a call to the function's own entry goes to the copy.  Fails when a
 * displacement does not reach from DEST. */
lp_status reloc_emit(reloc_plan *plan, uint64_t dest, uint8_t *out, uint64_t counters, reloc_redirect redirect,
                     void *ctx);

/* The graph: info.nblocks blocks (block 0 holds the entry) and info.nedges
 * edges, valid while the plan lives. */
const reloc_block *reloc_blocks(const reloc_plan *plan);
const reloc_edge *reloc_edges(const reloc_plan *plan);

/* The info.ncalls call sites, by address, valid while the plan lives. */
const reloc_call *reloc_calls(const reloc_plan *plan);

/* The distinct targets of the direct calls and jumps that leave the function
 * (its callees and tail callees), at most MAX of them into OUT; returns how
 * many there are. */
size_t reloc_callees(const reloc_plan *plan, uint64_t *out, size_t max);

/* The distinct targets in [LO, HI) of the direct jumps (jmp, jcc) of the
 * code at run-time [FROM, TO) of CODE's bytes (its code, code_base and
 * code_size), decoded one instruction after another from FROM until one
 * does not decode; at most MAX of them into OUT; returns how many there are.
 * Where a function's other part jumps into it (reloc_function_desc.entered). */
size_t reloc_jumps_into(const reloc_function_desc *code, uint64_t from, uint64_t to, uint64_t lo, uint64_t hi,
                        uint64_t *out, size_t max);

/* The conditional branches (jcc, and jrcxz and loop) met decoding CODE's
 * bytes at [FROM, TO) one instruction after another, up to the first that
 * does not decode: their addresses, the first MAX of them in OUT; returns how
 * many there are.  What a report lists for a function that never ran,
 * whether or not it has a graph (lua/lp_source.c). */
size_t reloc_conditional_branches(const reloc_function_desc *code, uint64_t from, uint64_t to, uint64_t *out,
                                  size_t max);

/* Whether the code at run-time [FROM, TO) of CODE's bytes decodes, one
 * instruction after another, up to TO, and each of the N addresses AT (sorted)
 * starts one of those instructions: where an int3 may go (core/breaks.c,
 * watching a function's other part). */
bool reloc_starts_insns(const reloc_function_desc *code, uint64_t from, uint64_t to, const uint64_t *at, size_t n);

/* Where the instruction at original address ORIG landed in the copy (offset),
 * or -1 if it was not copied. */
int64_t reloc_copy_offset(const reloc_plan *plan, uint64_t orig);

/* Where the side entry at original address ORIG is in the copy (offset),
 * where the copy's LSDA sends the unwinder and the other part's copy jumps:
 * the start of its block, its probes first; under arcs, where the block
 * counts the entries from outside: its start when only they enter it (a
 * landing pad), else a stub after the blocks that counts and jumps there
 * (the other part's jump back to a block its own edges reach too); -1 when
 * ORIG was not decoded as one: the original body. */
int64_t reloc_side_entry_offset(const reloc_plan *plan, uint64_t orig);

/* Where a thread of the original goes on in the copy (offset), or -1: one
 * stopped at the instruction at ORIG goes to that instruction's copy (past
 * the probes written before it: its block is counted from its next run);
 * with AFTER_CALL, ORIG is a return address and the answer is where the
 * copy of the call before it returns to.  For activations already running
 * when lazyprobe attaches (seed 002: frames moved into the copy). */
int64_t reloc_resume_offset(const reloc_plan *plan, uint64_t orig, bool after_call);

/* With block cover probes: the offset in the copy of block B's probe, a
 * RELOC_COVER_PROBE_SIZE-byte `mov byte [rip+slot], 1` that may be replaced by
 * a NOP of the same size once the slot is set; -1 without one. */
#define RELOC_COVER_PROBE_SIZE 7
int64_t reloc_cover_probe_offset(const reloc_plan *plan, size_t block);

/* Leaves out, from now on, the cover probes of the blocks COVERED says (N of
 * them, as reloc_probes.covered) and measures the copy again: INFO's
 * copy_size and nsaved change, nothing else of the plan does.  For a copy
 * made again from a plan kept (core/breaks.c). */
lp_status reloc_plan_cover_again(reloc_plan *plan, const uint8_t *covered, size_t n, reloc_info *info);

/* With entry_cover: the offset of the entry's cover probe (the copy's first
 * bytes, the same `mov byte` as a block's); -1 without one (or when block 0
 * is covered, reloc_probes.covered). */
int64_t reloc_entry_probe_offset(const reloc_plan *plan);

/* The origin map, for unwind information: the copy cut into ranges, each
 * named by the original address whose stack and saved registers it shares.
 * An instruction's copy and the probes written before it have its address;
 * the probes and the jmp after a falling-through instruction have the address
 * that follows it; an edge stub has its target's address (the branch's own
 * when the target is outside the function); the rewritten jump tables have
 * RELOC_ORIGIN_DATA (no code runs there).  Inside a probe's save rsp
 * is below where the original has it: sp_below says by how much.  Range k
 * is [offset, next offset), the last ends at copy_size.  Sorted by offset,
 * no two neighbours alike; valid while the plan lives. */
#define RELOC_ORIGIN_DATA 0
typedef struct reloc_origin {
  size_t offset;     /* in the copy */
  uint64_t orig;     /* original run-time address, or RELOC_ORIGIN_DATA */
  uint32_t sp_below; /* bytes rsp is below the original's here (0, 128, 136) */
} reloc_origin;
const reloc_origin *reloc_origins(const reloc_plan *plan, size_t *n);

/* The copy's size: after reloc_emit, the bytes it wrote; before, at most that
 * (reloc_info.copy_size). */
size_t reloc_copy_size(const reloc_plan *plan);

/* Moves PLAN DELTA bytes (its function's module loaded at another bias, in
 * another process): every original address it holds.  A plan depends only on
 * the module's bytes and the probes asked for, so one planned for one
 * process image serves the next; reloc_emit then writes the copy for the new
 * place (the sizes it found stay right: copies are 16-aligned, biases are
 * page multiples). */
void reloc_plan_rebase(reloc_plan *plan, int64_t delta);

void reloc_plan_free(reloc_plan *plan);

#endif
