/* reloc_probes.c — probe placement: which edges get counters, their slots and
 * where each edge probe goes.
 *
 * Arcs are counted only off a spanning tree of the CFG plus a virtual edge
 * EXIT->entry (Knuth; gcc -fprofile-arcs); the rest follow by flow
 * conservation (reloc_flow.c).  Any spanning tree is correct; the cheapest
 * leaves the most executed probes on it (Ball and Larus, "Optimally
 * profiling and tracing programs", 1994).  So the tree is a greedy maximum
 * spanning tree (Kruskal) over an estimate of how often each edge runs per
 * call (loops from reloc_dom.c, branch heuristics below), or over its
 * measured count when the caller has one (reloc_probes.edge_counts), times what its
 * probe would cost (more where the flags are live: the probe counts through
 * rax saved on the stack; more in a stub: two more jumps).  Before any real
 * edge the tree holds the virtual leak edges of blocks that end in a call
 * (reloc_flow_leaks: a call need not return, and the counted edges must
 * determine these).  The virtual edge EXIT->entry is off the tree when the
 * entry counter measures it (entry counts, as arcs ask), so it takes no place
 * a real edge could have: on it, every function counted one edge more than it
 * needs, most often a return, once per call.  Likewise a side entry's
 * counter (under arcs) measures its virtual edge EXIT->b: the unwinder
 * enters a landing pad by no edge of the graph (the calls that threw leave
 * by their leaks), the other part jumps back by none either. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "lp_sort.h"
#include "reloc_internal.h"

static size_t find(size_t *up, size_t v) {
  while (up[v] != v) v = up[v] = up[up[v]];
  return v;
}

/* Where the probe of counted edge E goes (reloc.h). */
static reloc_place place_of(const reloc_plan *p, const reloc_edge *e) {
  const reloc_bdata *bd = &p->bdata[e->from];
  const reloc_insn *last = &p->insns[p->order[bd->first + bd->count - 1]];
  if (e->kind == RELOC_EDGE_FALL && bd->returns_twice) return PLACE_BEFORE_LAST; /* after it: every return */
  if (e->kind == RELOC_EDGE_FALL) return PLACE_AFTER_LAST;
  if (e->kind == RELOC_EDGE_ESCAPE && reloc_falls_through(last) && !last->noreturn)
    return PLACE_AFTER_LAST;                   /* fell off the known body: before the jmp back */
  if (bd->nout == 1) return PLACE_BEFORE_LAST; /* ret, jmp, indirect jmp, stop, noreturn call */
  if (e->to != RELOC_EXIT && e->to != 0 && !p->blocks[e->to].entered && p->bdata[e->to].npreds == 1)
    return PLACE_AT_TARGET; /* the only way in (block 0 has the entry as well, a pad the unwinder) */
  return PLACE_STUB;
}

/* The flags are live where the probe of E would go: it could not be a plain
 * inc (reloc_layout.c counts through rax saved on the stack there). */
static bool live_at_probe(const reloc_plan *p, const reloc_edge *e) {
  if (place_of(p, e) == PLACE_BEFORE_LAST) return p->bdata[e->from].live_last != 0;
  return reloc_edge_live(p, e) != 0;
}

/* Between edges of equal estimates: the flags live first, then back edges,
 * fall-throughs, other branches, and returns and escapes last. */
static int kind_weight(const reloc_plan *p, const reloc_edge *e, bool live) {
  if (live) return 4;
  if (e->kind == RELOC_EDGE_RETURN || e->kind == RELOC_EDGE_ESCAPE) return 0;
  if (p->blocks[e->to].addr <= p->blocks[e->from].addr) return 3; /* back edge */
  return e->kind == RELOC_EDGE_FALL ? 2 : 1;
}

/* The estimate (after Wu and Larus, "Static branch frequency and program
 * profile analysis", MICRO 1994, and Ball and Larus's heuristics, much
 * simplified): a loop runs LOOP_TRIPS times per entry; the ways out of a
 * block share its executions in proportion to their weights: staying in the
 * block's loop STAY_IN_LOOP to leaving it 1, the fall-through FALL (gcc lays
 * out the likelier way as the fall-through more often than not), into a
 * block that ends in a call CALL (calls sit on the less likely ways: error
 * and slow paths), into a block that only calls something that does not
 * return COLD, and past a switch's range check (into the dispatch) 1/COLD.
 * The constants were chosen on the benchmarks' programs (Lua, sqlite, xz):
 * see docs/PERFORMANCE.md, "Session 7". */
#define LOOP_TRIPS 4.0
#define STAY_IN_LOOP 7.0
#define FALL 2.0
#define CALL 0.5
#define COLD 0.05

static bool only_noreturn(const reloc_plan *p, uint32_t b) {
  const reloc_bdata *bd = &p->bdata[b];
  return bd->nout == 1 && p->edges[bd->first_edge].kind == RELOC_EDGE_ESCAPE &&
         p->insns[p->order[bd->first + bd->count - 1]].noreturn;
}

/* B dispatches through a jump table. */
static bool dispatches(const reloc_plan *p, uint32_t b) {
  const reloc_bdata *bd = &p->bdata[b];
  return p->insns[p->order[bd->first + bd->count - 1]].table_jmp >= 0;
}

static double way_weight(const reloc_plan *p, const reloc_dom *d, const reloc_edge *e) {
  if (e->to == RELOC_EXIT) return 1;
  if (only_noreturn(p, e->to)) return COLD;
  if (dispatches(p, e->to)) return 1 / COLD;
  uint32_t h = d->head[e->from];
  double w = h == RELOC_DOM_UNDEFINED || reloc_dom_in_loop(d, e->to, h) ? STAY_IN_LOOP : 1;
  if (e->kind == RELOC_EDGE_FALL) w *= FALL;
  if (p->blocks[e->to].leaks) w *= CALL;
  return w;
}

/* FREQ[e]: the estimated executions of edge E per call (0 for the blocks
 * the entry does not reach); BFREQ (nblocks) is work space. */
static void estimate_edges(const reloc_plan *p, const reloc_dom *d, double *bfreq, double *freq) {
  for (size_t e = 0; e < p->nedges; e++) freq[e] = 0;
  for (size_t b = 0; b < p->nblocks; b++) bfreq[b] = 0;
  if (p->nblocks) bfreq[0] = 1;
  for (size_t k = 0; k < d->nreached; k++) {
    uint32_t b = d->rpo[k];
    const reloc_bdata *bd = &p->bdata[b];
    if (d->head[b] == b) bfreq[b] *= LOOP_TRIPS;
    double total = 0;
    for (size_t e = bd->first_edge; e < bd->first_edge + bd->nout; e++) {
      freq[e] = way_weight(p, d, &p->edges[e]); /* for now the way's weight */
      total += freq[e];
    }
    for (size_t e = bd->first_edge; e < bd->first_edge + bd->nout; e++) {
      const reloc_edge *ed = &p->edges[e];
      freq[e] = bfreq[b] * freq[e] / total;
      if (ed->to != RELOC_EXIT && ed->to != b && !reloc_dom_strictly(d, ed->to, b)) bfreq[ed->to] += freq[e];
    }
  }
}

/* What a probe costs on E, in plain incs: flags saved (LIVE), or a stub's
 * jumps. */
static double probe_cost(const reloc_plan *p, const reloc_edge *e, bool live) {
  double c = 1;
  if (live) c += 2;
  if (place_of(p, e) == PLACE_STUB) c += 1;
  return c;
}

typedef struct weighted {
  double w;
  int kind;
  size_t e;
} weighted;

/* Does X come before Y: heavier, then of a greater kind weight, then the
 * edge first in the graph (a total order: the tree never depends on the
 * sort).  qsort's call per comparison cost 2 % of the tracer's instructions
 * under arcs on sqlite. */
static bool heavier(const weighted *x, const weighted *y) {
  if (x->w != y->w) return x->w > y->w;
  if (x->kind != y->kind) return x->kind > y->kind;
  return x->e < y->e;
}
LP_MERGE_SORT(sort_heaviest_first, weighted, heavier)

/* Marks in OFF_TREE the edges off the tree. */
static lp_status spanning_tree(reloc_plan *p, const reloc_dom *d, bool *off_tree) {
  size_t exit = p->nblocks;
  size_t *up = malloc((p->nblocks + 1) * sizeof *up);
  weighted *w = malloc((p->nedges ? 2 * p->nedges : 1) * sizeof *w); /* and the sort's room */
  double *freq = malloc((p->nedges + p->nblocks + 1) * sizeof *freq);
  if (!up || !w || !freq) {
    free(up);
    free(w);
    free(freq);
    return lp_fail("out of memory");
  }
  for (size_t v = 0; v <= p->nblocks; v++) up[v] = v;
  for (size_t b = 0; b < p->nblocks; b++) /* the leaks of calls that may not return */
    if (p->blocks[b].leaks) {
      size_t a = find(up, b), x = find(up, exit);
      if (a != x) up[a] = x;
    }
  if (!p->probes.entry || p->probes.entry_cover) /* nothing measures the virtual edge */
    if (find(up, exit) != find(up, 0)) up[find(up, exit)] = find(up, 0);
  /* the edges by estimated cost, heaviest first (without arcs no probe goes on
   * them: any tree tells ncounted, the edges in their own order will do) */
  if (p->probes.arcs) {
    if (p->probes.edge_counts && p->probes.nedge_counts == p->nedges) /* measured */
      for (size_t e = 0; e < p->nedges; e++) freq[e] = (double)p->probes.edge_counts[e];
    else
      estimate_edges(p, d, freq + p->nedges, freq);
    for (size_t e = 0; e < p->nedges; e++) {
      const reloc_edge *ed = &p->edges[e];
      bool live = live_at_probe(p, ed);
      w[e] = (weighted){freq[e] * probe_cost(p, ed, live), kind_weight(p, ed, live), e};
    }
    sort_heaviest_first(w, w + p->nedges, p->nedges);
  } else {
    for (size_t e = 0; e < p->nedges; e++) w[e] = (weighted){0, 0, e};
  }
  for (size_t k = 0; k < p->nedges; k++) {
    const reloc_edge *e = &p->edges[w[k].e];
    size_t a = find(up, e->from), b = find(up, e->to == RELOC_EXIT ? exit : e->to);
    off_tree[w[k].e] = a == b; /* self-loops and cycle closers are counted */
    if (a != b) up[a] = b;
  }
  free(up);
  free(w);
  free(freq);
  return LP_OK;
}

lp_status reloc_place_probes(reloc_plan *p, const reloc_dom *d) {
  const reloc_probes *pr = &p->probes;
  p->edata = calloc(p->nedges ? p->nedges : 1, sizeof *p->edata);
  bool *off = calloc(p->nedges ? p->nedges : 1, sizeof *off);
  if (!p->edata || !off) {
    free(off);
    return lp_fail("out of memory");
  }
  if (spanning_tree(p, d, off) != LP_OK) {
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
  p->side_slot = slot;
  for (size_t b = 0; pr->arcs && b < p->nblocks; b++)
    if (p->blocks[b].entered) p->bdata[b].side = (uint32_t)(slot++ - p->side_slot);
  p->ncounters = slot;
  return LP_OK;
}
