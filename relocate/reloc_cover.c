/* reloc_cover.c — which blocks need a cover probe of their own (block probes
 * "cover"): those whose having run no other probe tells (Tikir and
 * Hollingsworth, "Efficient instrumentation for code coverage testing",
 * ISSTA 2002, from Dyninst).
 *
 * A block that ran ran all the blocks that dominate it (every path from the
 * entry to it goes through them: a copy is only ever entered at its entry).
 * So a block B needs no probe when every way out of B goes to a block that B
 * strictly dominates: control that entered B must then go on into a block B
 * dominates, and so on down the dominator tree until a block with a probe,
 * since every cycle has an edge into a block its source does not dominate
 * (its head's), whose source is probed.  B ran exactly when one of the
 * blocks it dominates ran (RELOC_COVER_DOMINATED: the report walks up from
 * each covered block, reloc_block.idom).  Blocks that leave the function
 * (ret, tail calls, escapes), that end in a call (it need not return: the
 * leak, as for arcs), that loop to themselves, or that the entry does not
 * reach keep their probe.  Block 0 needs none when the entry has its own
 * (RELOC_COVER_ENTRY): it ran when the function was entered.
 *
 * What is lost: a block ended by a crash, or by the process exiting in
 * another thread, before control left it counts as run only when it has a
 * probe.  Dominators: Cooper, Harvey and Kennedy, "A simple, fast dominance
 * algorithm" (2001), over the blocks in reverse postorder. */
#include <stdlib.h>

#include "reloc_internal.h"

#define UNDEFINED UINT32_MAX

/* The blocks reached from block 0 in reverse postorder (into RPO, returns how
 * many), their positions in it in POS (UNDEFINED: not reached). */
static size_t reverse_postorder(const reloc_plan *p, uint32_t *rpo, uint32_t *pos, uint32_t *stack,
                                size_t *next_edge) {
  size_t nb = p->nblocks, done = 0, depth = 0;
  for (size_t b = 0; b < nb; b++) {
    pos[b] = UNDEFINED;
    next_edge[b] = 0;
  }
  pos[0] = 0; /* seen; the real position comes at the end */
  stack[depth++] = 0;
  while (depth) {
    uint32_t b = stack[depth - 1];
    const reloc_bdata *bd = &p->bdata[b];
    if (next_edge[b] < bd->nout) {
      uint32_t to = p->edges[bd->first_edge + next_edge[b]++].to;
      if (to != RELOC_EXIT && pos[to] == UNDEFINED) {
        pos[to] = 0;
        stack[depth++] = to;
      }
      continue;
    }
    rpo[nb - 1 - done++] = b; /* postorder, filled from the end */
    depth--;
  }
  uint32_t *first = rpo + nb - done;
  for (size_t k = 0; k < done; k++) {
    rpo[k] = first[k];
    pos[rpo[k]] = (uint32_t)k;
  }
  return done;
}

static uint32_t intersect(const uint32_t *idom, const uint32_t *pos, uint32_t a, uint32_t b) {
  while (a != b) {
    while (pos[a] > pos[b]) a = idom[a];
    while (pos[b] > pos[a]) b = idom[b];
  }
  return a;
}

/* IDOM[b] for the blocks reached (the entry's own is 0), UNDEFINED for the
 * others; PRED/NPRED the in-edges' sources, grouped by target. */
static void dominators(const reloc_plan *p, const uint32_t *rpo, size_t nreached, const uint32_t *pos,
                       const uint32_t *pred_first, const uint32_t *preds, uint32_t *idom) {
  for (size_t b = 0; b < p->nblocks; b++) idom[b] = UNDEFINED;
  idom[0] = 0;
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t k = 1; k < nreached; k++) {
      uint32_t b = rpo[k], best = UNDEFINED;
      for (uint32_t j = pred_first[b]; j < pred_first[b + 1]; j++) {
        uint32_t q = preds[j];
        if (idom[q] == UNDEFINED) continue; /* not processed yet, or not reached */
        best = best == UNDEFINED ? q : intersect(idom, pos, q, best);
      }
      if (best != idom[b]) {
        idom[b] = best;
        changed = true;
      }
    }
  }
}

/* Does A strictly dominate B (both reached)?  Through the preorder
 * intervals of the dominator tree. */
static bool strictly_dominates(const uint32_t *pre, const uint32_t *last, uint32_t a, uint32_t b) {
  return a != b && pre[a] <= pre[b] && pre[b] <= last[a];
}

/* PRE[b]: b's preorder number in the dominator tree, LAST[b] the largest
 * number in its subtree (the NREACHED blocks reached only; ORDER gets the
 * preorder). */
static void number_tree(size_t nb, size_t nreached, const uint32_t *idom, uint32_t *pre, uint32_t *last,
                        uint32_t *child_first, uint32_t *children, uint32_t *order) {
  for (size_t b = 0; b <= nb; b++) child_first[b] = 0; /* children grouped by parent */
  for (size_t b = 1; b < nb; b++)
    if (idom[b] != UNDEFINED) child_first[idom[b] + 1]++;
  for (size_t b = 0; b < nb; b++) child_first[b + 1] += child_first[b];
  for (size_t b = 0; b < nb; b++) pre[b] = child_first[b]; /* for now: where the next child goes */
  for (size_t b = 1; b < nb; b++)
    if (idom[b] != UNDEFINED) children[pre[idom[b]]++] = (uint32_t)b;
  size_t n = 0, depth = 0;
  uint32_t *stack = last; /* LAST is free until the sizes */
  stack[depth++] = 0;
  while (depth) {
    uint32_t b = stack[--depth];
    pre[b] = (uint32_t)n;
    order[n++] = b;
    for (uint32_t j = child_first[b]; j < child_first[b + 1]; j++) stack[depth++] = children[j];
  }
  for (size_t k = 0; k < nreached; k++) last[order[k]] = 1; /* subtree sizes, children first */
  for (size_t k = nreached; k-- > 1;) last[idom[order[k]]] += last[order[k]];
  for (size_t k = 0; k < nreached; k++) last[order[k]] += pre[order[k]] - 1;
}

lp_status reloc_place_cover(reloc_plan *p) {
  size_t nb = p->nblocks;
  for (size_t b = 0; b < nb; b++) {
    p->blocks[b].idom = (uint32_t)b;
    p->blocks[b].cover = RELOC_COVER_PROBE;
  }
  if (p->probes.blocks != RELOC_BLOCKS_COVER || nb == 0) return LP_OK;
  uint32_t *v = malloc((9 * nb + 2 + p->nedges) * sizeof *v);
  size_t *next_edge = malloc(nb * sizeof *next_edge);
  if (!v || !next_edge) {
    free(v);
    free(next_edge);
    return lp_fail("out of memory");
  }
  uint32_t *rpo = v, *pos = rpo + nb, *idom = pos + nb, *pre = idom + nb, *last = pre + nb;
  uint32_t *work = last + nb; /* the search's stack, then the dominator tree's preorder */
  uint32_t *child_first = work + nb, *children = child_first + nb + 1;
  uint32_t *pred_first = children + nb, *preds = pred_first + nb + 1;
  size_t nreached = reverse_postorder(p, rpo, pos, work, next_edge);

  for (size_t b = 0; b <= nb; b++) pred_first[b] = 0; /* in-edges grouped by target */
  for (size_t e = 0; e < p->nedges; e++)
    if (p->edges[e].to != RELOC_EXIT) pred_first[p->edges[e].to + 1]++;
  for (size_t b = 0; b < nb; b++) pred_first[b + 1] += pred_first[b];
  for (size_t b = 0; b < nb; b++) next_edge[b] = pred_first[b];
  for (size_t e = 0; e < p->nedges; e++)
    if (p->edges[e].to != RELOC_EXIT) preds[next_edge[p->edges[e].to]++] = p->edges[e].from;

  dominators(p, rpo, nreached, pos, pred_first, preds, idom);
  number_tree(nb, nreached, idom, pre, last, child_first, children, work);

  for (size_t k = 0; k < nreached; k++) {
    uint32_t b = rpo[k];
    const reloc_bdata *bd = &p->bdata[b];
    bool needs = p->blocks[b].leaks || bd->nout == 0;
    for (size_t e = bd->first_edge; !needs && e < bd->first_edge + bd->nout; e++) {
      uint32_t to = p->edges[e].to;
      needs = to == RELOC_EXIT || !strictly_dominates(pre, last, b, to);
    }
    p->blocks[b].idom = idom[b];
    if (b == 0 && p->probes.entry) p->blocks[b].cover = RELOC_COVER_ENTRY;
    else if (!needs) p->blocks[b].cover = RELOC_COVER_DOMINATED;
  }
  free(v);
  free(next_edge);
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
