/* reloc_probes.c — probe placement: which edges get counters, their slots and
 * where each edge probe goes.
 *
 * Arcs are counted only off a spanning tree of the CFG plus a virtual edge
 * EXIT->entry (Knuth; gcc -fprofile-arcs); the rest follow by flow
 * conservation (reloc_flow.c).  The tree is a greedy maximum spanning tree
 * (Kruskal) whose weights keep likely-hot edges uncounted: first the virtual
 * leak edges of blocks that end in a call (reloc_flow_leaks: a call need not
 * return, and the tree must hold these edges so that the counted ones
 * determine them), then the virtual edge EXIT->entry (it is known anyway:
 * the entry counter; if a leak closes a cycle with it, it stays off the tree
 * uninstrumented), then the edges where the flags are live (their probe
 * would go through rax saved on the stack), then back edges (to a block at or
 * below the branch: loops), then fall-throughs (on the hot path of gcc's
 * layout), then other branches, and returns and escapes last (once per call,
 * cheapest to count).  Any spanning tree is correct. */
#include <inttypes.h>
#include <stdlib.h>

#include "reloc_internal.h"

static size_t find(size_t *up, size_t v) {
  while (up[v] != v) v = up[v] = up[up[v]];
  return v;
}

/* Where the probe of counted edge E goes (reloc.h). */
static reloc_place place_of(const reloc_plan *p, const reloc_edge *e) {
  const reloc_bdata *bd = &p->bdata[e->from];
  const reloc_insn *last = &p->insns[p->order[bd->first + bd->count - 1]];
  if (e->kind == RELOC_EDGE_FALL) return PLACE_AFTER_LAST;
  if (e->kind == RELOC_EDGE_ESCAPE && reloc_falls_through(last) && !last->noreturn)
    return PLACE_AFTER_LAST; /* fell off the known body: before the jmp back */
  if (bd->nout == 1) return PLACE_BEFORE_LAST; /* ret, jmp, indirect jmp, stop, noreturn call */
  if (e->to != RELOC_EXIT && e->to != 0 && p->bdata[e->to].npreds == 1)
    return PLACE_AT_TARGET; /* the only way in (block 0 has the entry as well) */
  return PLACE_STUB;
}

/* The flags are live where the probe of E would go: it could not be a plain
 * inc (reloc_layout.c counts through rax saved on the stack there). */
static bool live_at_probe(const reloc_plan *p, const reloc_edge *e) {
  if (place_of(p, e) == PLACE_BEFORE_LAST) return p->bdata[e->from].live_last != 0;
  return reloc_edge_live(p, e) != 0;
}

enum { NWEIGHTS = 5 };

static int weight(const reloc_plan *p, const reloc_edge *e) {
  if (live_at_probe(p, e)) return 4;
  if (e->kind == RELOC_EDGE_RETURN || e->kind == RELOC_EDGE_ESCAPE) return 0;
  if (p->blocks[e->to].addr <= p->blocks[e->from].addr) return 3; /* back edge */
  return e->kind == RELOC_EDGE_FALL ? 2 : 1;
}

/* Marks in OFF_TREE the edges off the tree. */
static lp_status spanning_tree(reloc_plan *p, bool *off_tree) {
  size_t exit = p->nblocks;
  size_t *up = malloc((p->nblocks + 1) * sizeof *up);
  size_t *byw = malloc((p->nedges ? p->nedges : 1) * sizeof *byw);
  if (!up || !byw) {
    free(up);
    free(byw);
    return lp_fail("out of memory");
  }
  for (size_t v = 0; v <= p->nblocks; v++) up[v] = v;
  for (size_t b = 0; b < p->nblocks; b++) /* the leaks of calls that may not return */
    if (p->blocks[b].leaks) {
      size_t a = find(up, b), x = find(up, exit);
      if (a != x) up[a] = x;
    }
  if (find(up, exit) != find(up, 0)) up[find(up, exit)] = find(up, 0); /* the virtual edge */
  /* the edges by weight, heaviest first, in edge order within a weight (a
   * counting sort: each weight computed once) */
  size_t start[NWEIGHTS + 1] = {0};
  uint8_t *w = malloc(p->nedges ? p->nedges : 1);
  if (!w) {
    free(up);
    free(byw);
    return lp_fail("out of memory");
  }
  for (size_t e = 0; e < p->nedges; e++) {
    w[e] = (uint8_t)(NWEIGHTS - 1 - weight(p, &p->edges[e]));
    start[w[e] + 1]++;
  }
  for (int k = 0; k < NWEIGHTS; k++) start[k + 1] += start[k];
  for (size_t e = 0; e < p->nedges; e++) byw[start[w[e]]++] = e;
  free(w);
  for (size_t k = 0; k < p->nedges; k++) {
    const reloc_edge *e = &p->edges[byw[k]];
    size_t a = find(up, e->from), b = find(up, e->to == RELOC_EXIT ? exit : e->to);
    off_tree[byw[k]] = a == b; /* self-loops and cycle closers are counted */
    if (a != b) up[a] = b;
  }
  free(up);
  free(byw);
  return LP_OK;
}

lp_status reloc_place_probes(reloc_plan *p) {
  const reloc_probes *pr = &p->probes;
  p->edata = calloc(p->nedges ? p->nedges : 1, sizeof *p->edata);
  bool *off = calloc(p->nedges ? p->nedges : 1, sizeof *off);
  if (!p->edata || !off) {
    free(off);
    return lp_fail("out of memory");
  }
  if (spanning_tree(p, off) != LP_OK) {
    free(off);
    return LP_ERR;
  }
  size_t slot = pr->entry ? 1 : 0;
  p->block_slot = slot;
  if (pr->blocks != RELOC_BLOCKS_NONE) slot += p->nblocks;
  p->edge_slot = slot;
  for (size_t e = 0; e < p->nedges; e++) {
    p->ncounted += off[e];
    if (!off[e] || !pr->arcs) continue;
    reloc_edge *ed = &p->edges[e];
    reloc_place place = place_of(p, ed);
    ed->counted = true;
    p->edata[e].slot = slot++;
    p->edata[e].place = place;
      p->edata[e].live = live_at_probe(p, ed);
  }
  free(off);
  p->call_slot = slot;
  if (pr->calls) slot += p->ncalls;
  p->ncounters = slot;
  return LP_OK;
}
