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

typedef struct reloc_probes {
  uint64_t entry_counter; /* run-time address of an 8-byte counter bumped on entry; 0 = none */
  bool atomic;            /* lock-prefixed updates */
} reloc_probes;

typedef struct reloc_plan reloc_plan; /* opaque */

typedef struct reloc_info {
  size_t copy_size;          /* bytes reloc_emit writes */
  size_t ninstructions;
  size_t nblocks;
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

/* Writes the copy for run-time address DEST into OUT (info.copy_size bytes).
 * Calls and jumps leaving the function go to REDIRECT(target) (NULL: to their
 * original targets); a call to the function's own entry goes to the copy.
 * Fails when a displacement does not reach from DEST. */
lp_status reloc_emit(const reloc_plan *plan, uint64_t dest, uint8_t *out, reloc_redirect redirect,
                     void *ctx);

/* The distinct targets of the direct calls and jumps that leave the function
 * (its callees and tail callees), at most MAX of them into OUT; returns how
 * many there are. */
size_t reloc_callees(const reloc_plan *plan, uint64_t *out, size_t max);

/* Where the instruction at original address ORIG landed in the copy (offset),
 * or -1 if it was not copied. */
int64_t reloc_copy_offset(const reloc_plan *plan, uint64_t orig);

void reloc_plan_free(reloc_plan *plan);

#endif
