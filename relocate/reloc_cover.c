/* reloc_cover.c — which blocks need a cover probe of their own (block probes
 * "cover"): those whose having run no other probe tells (Tikir and
 * Hollingsworth, "Efficient instrumentation for code coverage testing",
 * ISSTA 2002, from Dyninst).
 *
 * A block that ran ran all the blocks that dominate it (every way into the
 * copy that reaches it goes through them).
 * So a block B needs no probe when every way out of B goes to a block that B
 * strictly dominates: control that entered B must then go on into a block B
 * dominates, and so on down the dominator tree until a block with a probe,
 * since every cycle has an edge into a block its source does not dominate
 * (its head's), whose source is probed.  B ran exactly when one of the
 * blocks it dominates ran (RELOC_COVER_DOMINATED: the report walks up from
 * each covered block, reloc_block.idom).  Blocks that leave the function
 * (ret, tail calls, escapes), that end in a call (it need not return: the
 * leak, as for arcs), that loop to themselves, or that no entry reaches
 * keep their probe.  Block 0 needs none when the entry has its own
 * (RELOC_COVER_ENTRY): it ran when the function was entered.
 *
 * The copy is entered at its side entries too (landing pads, by the
 * unwinder after a throw; where the function's other part jumps back):
 * reloc_dom.c's dominators are those of a root above the entry and the
 * side entries, so a block dominates another when every way into the copy
 * that reaches it goes through the first, and the rule above holds as it
 * is.  A block no block dominates (a side entry's, a join of the entry's
 * ways and a side entry's) is its own idom; an edge into one is a way out
 * of its source like one that leaves the function.
 *
 * What is lost: a block ended by a crash, or by the process exiting in
 * another thread, before control left it counts as run only when it has a
 * probe.  The dominator tree comes from reloc_dom.c. */
#include <stdlib.h>

#include "reloc_internal.h"

lp_status reloc_place_cover(reloc_plan *p, const reloc_dom *d) {
  size_t nb = p->nblocks;
  for (size_t b = 0; b < nb; b++) {
    p->blocks[b].idom = (uint32_t)b;
    p->blocks[b].cover = RELOC_COVER_PROBE;
  }
  if (p->probes.blocks != RELOC_BLOCKS_COVER || nb == 0) return LP_OK;
  for (size_t k = 0; k < d->nreached; k++) {
    uint32_t b = d->rpo[k];
    const reloc_bdata *bd = &p->bdata[b];
    if (b == 0 && p->probes.entry) {
      p->blocks[b].idom = d->idom[b];
      p->blocks[b].cover = RELOC_COVER_ENTRY;
      continue;
    }
    bool needs = p->blocks[b].leaks || bd->nout == 0;
    for (size_t e = bd->first_edge; !needs && e < bd->first_edge + bd->nout; e++) {
      uint32_t to = p->edges[e].to;
      needs = to == RELOC_EXIT || !reloc_dom_strictly(d, b, to);
    }
    p->blocks[b].idom = d->idom[b];
    if (!needs) p->blocks[b].cover = RELOC_COVER_DOMINATED;
  }
  return LP_OK;
}

bool reloc_cover_solve(const uint32_t *idom, size_t nb, uint64_t *ran) {
  bool *marked = calloc(nb ? nb : 1, sizeof *marked); /* its dominators are set */
  if (!marked) return false;
  for (size_t b = 0; b < nb; b++) {
    if (!ran[b]) continue;
    for (size_t a = b; idom[a] < nb && idom[a] != a && !marked[idom[a]];) {
      a = idom[a];
      marked[a] = true;
      ran[a] = 1;
    }
  }
  free(marked);
  return true;
}
