/* reloc_flow.h — every edge and block count of a function from the counts of
 * the edges off its spanning tree, by flow conservation (Knuth; as gcc's
 * -fprofile-arcs): into a block flows what flows out of it, and what leaves
 * the function (RELOC_EXIT) equals what entered it (the entry count, and the
 * entries at its side entries, each measured by a counter: the unwinder's
 * at landing pads, the jumps back from the function's other part). */
#ifndef RELOC_FLOW_H
#define RELOC_FLOW_H

#include <stddef.h>
#include <stdint.h>

#include "lp_status.h"
#include "reloc.h"

/* A block that ends in a call and falls through to the next: the call need
 * not return (exit, abort, a longjmp past it), so the block also has a
 * virtual edge to EXIT for the flow that never came back, as gcc's fake exit
 * edges.  The spanning tree holds these edges (reloc_probes.c), so the
 * counted edges determine them. */
bool reloc_flow_leaks(const reloc_edge *edges, size_t nedges, uint32_t block, bool ends_in_call);

/* EDGE_COUNTS[e] holds the count of every counted edge on input and of every
 * edge on output; BLOCK_COUNTS[b] gets each block's count.  LEAKY[b] (NULL:
 * none) says which blocks have a virtual leak edge (reloc_flow_leaks);
 * ENTERED[b] (NULL: none) how often block b was entered from outside, a
 * side entry (a virtual edge EXIT->b of known count).  Fails (with the block it
 * could not solve) when the counts are not consistent, e.g. after a crash
 * inside a block. */
lp_status reloc_flow_solve(const reloc_edge *edges, size_t nedges, size_t nblocks, uint64_t entry_count,
                           const bool *leaky, const uint64_t *entered, uint64_t *edge_counts,
                           uint64_t *block_counts);

/* The same from counters read while they move (a running program: blocks
 * part-way through, a thread between two probes): a derived count that would
 * be negative is 0 and nothing is checked, so it never fails but on memory.
 * For weights (reloc_probes.edge_counts), not for reports. */
lp_status reloc_flow_estimate(const reloc_edge *edges, size_t nedges, size_t nblocks, uint64_t entry_count,
                              const bool *leaky, const uint64_t *entered, uint64_t *edge_counts,
                              uint64_t *block_counts);

#endif
