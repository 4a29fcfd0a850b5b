/* reloc_dom.c — the dominator tree and the loops of a plan's graph.
 *
 * Dominators: Cooper, Harvey and Kennedy, "A simple, fast dominance
 * algorithm" (2001), over the blocks reached from the entry in reverse
 * postorder.  Dominance queries go through the preorder intervals of the
 * dominator tree.  Loops are natural loops: an edge B->H is a back edge when
 * H dominates B, and H's loop is H and the blocks that reach B without going
 * through H (back edges to one head make one loop).  Each block knows the
 * head of the innermost loop that holds it, each head the head of the loop
 * around its own.  Edges into a head that it does not dominate (irreducible
 * cycles) make no loop.
 *
 * Used by reloc_cover.c (which blocks a cover probe tells about) and by
 * reloc_probes.c (loops in its estimate of how often each edge runs). */
#include <stdlib.h>

#include "reloc_internal.h"

#define UNDEFINED RELOC_DOM_UNDEFINED

/* The blocks reached from block 0 in reverse postorder (into RPO, returns how
 * many), their positions in it in POS (UNDEFINED: not reached). */
static size_t reverse_postorder(const reloc_plan *p, uint32_t *rpo, uint32_t *pos, uint32_t *stack,
                                uint32_t *next_edge) {
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
 * others; PRED_FIRST/PREDS the in-edges' sources, grouped by target. */
static void dominators(size_t nb, const uint32_t *rpo, size_t nreached, const uint32_t *pos, const uint32_t *pred_first,
                       const uint32_t *preds, uint32_t *idom) {
  for (size_t b = 0; b < nb; b++) idom[b] = UNDEFINED;
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

/* PRE[b]: b's preorder number in the dominator tree, LAST[b] the largest
 * number in its subtree (the NREACHED blocks reached only).  CHILD_FIRST (nb
 * + 1), CHILDREN and ORDER (nb each) are work space. */
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

bool reloc_dom_strictly(const reloc_dom *d, uint32_t a, uint32_t b) {
  if (d->idom[a] == UNDEFINED || d->idom[b] == UNDEFINED) return false;
  return a != b && d->pre[a] <= d->pre[b] && d->pre[b] <= d->last[a];
}

/* HEAD[b]: the head of the innermost natural loop that holds b (heads come
 * in reverse postorder: an outer loop's before its inner ones'), OUTER[h]
 * the head of the loop around h's.  SEEN and STACK (nb each) are work
 * space. */
static void loops(const reloc_plan *p, const reloc_dom *d, const uint32_t *pred_first, const uint32_t *preds,
                  uint32_t *seen, uint32_t *stack) {
  size_t nb = p->nblocks;
  for (size_t b = 0; b < nb; b++) d->head[b] = d->outer[b] = seen[b] = UNDEFINED;
  for (size_t k = 0; k < d->nreached; k++) {
    uint32_t h = d->rpo[k], n = 0;
    for (uint32_t j = pred_first[h]; j < pred_first[h + 1]; j++) {
      uint32_t b = preds[j];
      if ((b == h || reloc_dom_strictly(d, h, b)) && seen[b] != h) {
        seen[b] = h; /* a back edge's source: the loop of h holds it */
        stack[n++] = b;
      }
    }
    if (!n) continue;
    seen[h] = h;
    d->outer[h] = d->head[h];
    d->head[h] = h;
    while (n) {
      uint32_t b = stack[--n];
      if (b == h) continue;
      d->head[b] = h;
      for (uint32_t j = pred_first[b]; j < pred_first[b + 1]; j++)
        if (seen[preds[j]] != h && d->idom[preds[j]] != UNDEFINED) {
          seen[preds[j]] = h;
          stack[n++] = preds[j];
        }
    }
  }
}

lp_status reloc_dom_build(const reloc_plan *p, reloc_dom *d) {
  size_t nb = p->nblocks;
  *d = (reloc_dom){0};
  if (nb == 0) return LP_OK;
  d->mem = malloc((6 * nb) * sizeof *d->mem);
  uint32_t *work = malloc((5 * nb + 2 + p->nedges) * sizeof *work);
  if (!d->mem || !work) {
    free(work);
    reloc_dom_free(d);
    return lp_fail("out of memory");
  }
  d->rpo = d->mem;
  d->idom = d->rpo + nb;
  d->pre = d->idom + nb;
  d->last = d->pre + nb;
  d->head = d->last + nb;
  d->outer = d->head + nb;
  uint32_t *pos = work, *a = pos + nb, *b = a + nb, *c = b + nb;
  uint32_t *pred_first = c + nb + 1, *preds = pred_first + nb + 1;
  d->nreached = reverse_postorder(p, d->rpo, pos, a, b);

  for (size_t v = 0; v <= nb; v++) pred_first[v] = 0; /* in-edges grouped by target */
  for (size_t e = 0; e < p->nedges; e++)
    if (p->edges[e].to != RELOC_EXIT) pred_first[p->edges[e].to + 1]++;
  for (size_t v = 0; v < nb; v++) pred_first[v + 1] += pred_first[v];
  for (size_t v = 0; v < nb; v++) a[v] = pred_first[v];
  for (size_t e = 0; e < p->nedges; e++)
    if (p->edges[e].to != RELOC_EXIT) preds[a[p->edges[e].to]++] = p->edges[e].from;

  dominators(nb, d->rpo, d->nreached, pos, pred_first, preds, d->idom);
  number_tree(nb, d->nreached, d->idom, d->pre, d->last, c, a, b);
  loops(p, d, pred_first, preds, a, b);
  free(work);
  return LP_OK;
}

bool reloc_dom_in_loop(const reloc_dom *d, uint32_t b, uint32_t h) {
  for (uint32_t l = d->head[b]; l != UNDEFINED; l = d->outer[l])
    if (l == h) return true;
  return false;
}

void reloc_dom_free(reloc_dom *d) {
  free(d->mem);
  *d = (reloc_dom){0};
}
