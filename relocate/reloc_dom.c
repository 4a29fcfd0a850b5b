/* reloc_dom.c — the dominator tree and the loops of a plan's graph.
 *
 * Dominators: Cooper, Harvey and Kennedy, "A simple, fast dominance
 * algorithm" (2001), in reverse postorder over the blocks reached from a
 * root above the copy's entry and its side entries (landing pads, where a
 * function's other part jumps back): a block dominates another when every
 * way into the copy that reaches the other goes through it.  A block no
 * block dominates (block 0, a side entry's, a join of both) is its own
 * idom.  Dominance queries go through the preorder intervals of the
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

/* The graph's nodes are its NB blocks and a root, node NB, whose edges go
 * to block 0 and to each block entered from outside (reloc_block.entered):
 * the copy's entry and its side entries. */

/* Whether node V has a K-th successor, into *TO (RELOC_EXIT for an edge that
 * leaves the function). */
static bool successor(const reloc_plan *p, uint32_t v, uint32_t k, const uint32_t *roots, uint32_t nroots,
                      uint32_t *to) {
  if (v == p->nblocks) {
    *to = k < nroots ? roots[k] : 0;
    return k < nroots;
  }
  const reloc_bdata *bd = &p->bdata[v];
  *to = k < bd->nout ? p->edges[bd->first_edge + k].to : 0;
  return k < bd->nout;
}

/* The nodes reached from the root in reverse postorder (into RPO, the root
 * first; returns how many), their positions in it in POS (UNDEFINED: not
 * reached). */
static size_t reverse_postorder(const reloc_plan *p, const uint32_t *roots, uint32_t nroots, uint32_t *rpo,
                                uint32_t *pos, uint32_t *stack, uint32_t *next) {
  size_t n = p->nblocks + 1, done = 0, depth = 0;
  for (size_t v = 0; v < n; v++) {
    pos[v] = UNDEFINED;
    next[v] = 0;
  }
  pos[n - 1] = 0; /* seen; the real position comes at the end */
  stack[depth++] = (uint32_t)(n - 1);
  while (depth) {
    uint32_t v = stack[depth - 1], to;
    if (successor(p, v, next[v], roots, nroots, &to)) {
      next[v]++;
      if (to != RELOC_EXIT && pos[to] == UNDEFINED) {
        pos[to] = 0;
        stack[depth++] = to;
      }
      continue;
    }
    rpo[n - 1 - done++] = v; /* postorder, filled from the end */
    depth--;
  }
  uint32_t *first = rpo + n - done;
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

/* IDOM[v] for the N nodes reached (the root's own is the root), UNDEFINED
 * for the others; PRED_FIRST/PREDS the in-edges' sources, grouped by
 * target. */
static void dominators(size_t n, const uint32_t *rpo, size_t nreached, const uint32_t *pos, const uint32_t *pred_first,
                       const uint32_t *preds, uint32_t *idom) {
  for (size_t v = 0; v < n; v++) idom[v] = UNDEFINED;
  idom[rpo[0]] = rpo[0];
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t k = 1; k < nreached; k++) {
      uint32_t v = rpo[k], best = UNDEFINED;
      for (uint32_t j = pred_first[v]; j < pred_first[v + 1]; j++) {
        uint32_t q = preds[j];
        if (idom[q] == UNDEFINED) continue; /* not processed yet, or not reached */
        best = best == UNDEFINED ? q : intersect(idom, pos, q, best);
      }
      if (best != idom[v]) {
        idom[v] = best;
        changed = true;
      }
    }
  }
}

/* PRE[v]: v's preorder number in the dominator tree of the N nodes (rooted
 * at ROOT), LAST[v] the largest number in its subtree (the NREACHED nodes
 * reached only).  CHILD_FIRST (n + 1), CHILDREN and ORDER (n each) are work
 * space. */
static void number_tree(size_t n, uint32_t root, size_t nreached, const uint32_t *idom, uint32_t *pre,
                        uint32_t *last, uint32_t *child_first, uint32_t *children, uint32_t *order) {
  for (size_t v = 0; v <= n; v++) child_first[v] = 0; /* children grouped by parent */
  for (size_t v = 0; v < n; v++)
    if (v != root && idom[v] != UNDEFINED) child_first[idom[v] + 1]++;
  for (size_t v = 0; v < n; v++) child_first[v + 1] += child_first[v];
  for (size_t v = 0; v < n; v++) pre[v] = child_first[v]; /* for now: where the next child goes */
  for (size_t v = 0; v < n; v++)
    if (v != root && idom[v] != UNDEFINED) children[pre[idom[v]]++] = (uint32_t)v;
  size_t k = 0, depth = 0;
  uint32_t *stack = last; /* LAST is free until the sizes */
  stack[depth++] = root;
  while (depth) {
    uint32_t v = stack[--depth];
    pre[v] = (uint32_t)k;
    order[k++] = v;
    for (uint32_t j = child_first[v]; j < child_first[v + 1]; j++) stack[depth++] = children[j];
  }
  for (size_t i = 0; i < nreached; i++) last[order[i]] = 1; /* subtree sizes, children first */
  for (size_t i = nreached; i-- > 1;) last[idom[order[i]]] += last[order[i]];
  for (size_t i = 0; i < nreached; i++) last[order[i]] += pre[order[i]] - 1;
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
      if (b < nb && (b == h || reloc_dom_strictly(d, h, b)) && seen[b] != h) {
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
        if (preds[j] < nb && seen[preds[j]] != h && d->idom[preds[j]] != UNDEFINED) {
          seen[preds[j]] = h;
          stack[n++] = preds[j];
        }
    }
  }
}

lp_status reloc_dom_build(const reloc_plan *p, reloc_dom *d) {
  size_t nb = p->nblocks, n = nb + 1;
  uint32_t root = (uint32_t)nb, nroots = 0;
  *d = (reloc_dom){0};
  if (nb == 0) return LP_OK;
  d->mem = malloc((4 * n + 2 * nb) * sizeof *d->mem);
  uint32_t *work = malloc((6 * n + 2 + p->nedges + nb) * sizeof *work);
  if (!d->mem || !work) {
    free(work);
    reloc_dom_free(d);
    return lp_fail("out of memory");
  }
  uint32_t *rpo = d->mem;
  d->idom = rpo + n;
  d->pre = d->idom + n;
  d->last = d->pre + n;
  d->head = d->last + n;
  d->outer = d->head + nb;
  uint32_t *pos = work, *a = pos + n, *b = a + n, *c = b + n, *roots = c + n + 1;
  uint32_t *pred_first = roots + n, *preds = pred_first + n + 1;
  for (size_t v = 0; v < nb; v++)
    if (v == 0 || p->blocks[v].entered) roots[nroots++] = (uint32_t)v;
  size_t nreached = reverse_postorder(p, roots, nroots, rpo, pos, a, b);

  for (size_t v = 0; v <= n; v++) pred_first[v] = 0; /* in-edges grouped by target, the root's too */
  for (size_t e = 0; e < p->nedges; e++)
    if (p->edges[e].to != RELOC_EXIT) pred_first[p->edges[e].to + 1]++;
  for (uint32_t r = 0; r < nroots; r++) pred_first[roots[r] + 1]++;
  for (size_t v = 0; v < n; v++) pred_first[v + 1] += pred_first[v];
  for (size_t v = 0; v < n; v++) a[v] = pred_first[v];
  for (size_t e = 0; e < p->nedges; e++)
    if (p->edges[e].to != RELOC_EXIT) preds[a[p->edges[e].to]++] = p->edges[e].from;
  for (uint32_t r = 0; r < nroots; r++) preds[a[roots[r]]++] = root;

  dominators(n, rpo, nreached, pos, pred_first, preds, d->idom);
  number_tree(n, root, nreached, d->idom, d->pre, d->last, c, a, b);
  for (size_t v = 0; v < nb; v++) /* dominated by no block: its own */
    if (d->idom[v] == root) d->idom[v] = (uint32_t)v;
  d->rpo = rpo + 1; /* the blocks, the root left out */
  d->nreached = nreached - 1;
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
