/* reloc_cfg.c — basic blocks, edges and call sites of a decoded function.
 *
 * Works on the instructions reloc_function.c decoded (address order, jump
 * tables resolved): marks the leaders, numbers the blocks in layout order,
 * lists each block's out-edges (reloc.h says which kinds) sorted by from,
 * kind, target, marks the blocks that leak (end in a call that may not
 * return: reloc_flow.h) and those entered again after a call that returns
 * twice, and lists the call sites by address. */
#include <stdlib.h>
#include <string.h>

#include "lp_sort.h"
#include "reloc_flow.h"
#include "reloc_internal.h"

static bool ends_block(const reloc_insn *in) {
  return in->x.flow != X64_FLOW_NEXT; /* every branch, call, ret and stop */
}

/* Marks the leaders: the entry, side entries, branch and table targets, and
 * whatever follows a block end or a gap. */
static void mark_leaders(reloc_plan *p) {
  for (size_t i = 0; i < p->n; i++) {
    const reloc_insn *pv = i ? &p->insns[i - 1] : NULL;
    p->insns[i].leader = i == p->entry_index || p->insns[i].entered || !pv || ends_block(pv) ||
                         pv->x.addr + pv->x.len != p->insns[i].x.addr;
  }
  for (size_t i = 0; i < p->n; i++) {
    const x64_insn *in = &p->insns[i].x;
    if (in->flow == X64_FLOW_JMP || in->flow == X64_FLOW_JCC || in->flow == X64_FLOW_JCC_SHORT) {
      long t = reloc_insn_at(p, in->target);
      if (t >= 0) p->insns[t].leader = true;
    }
  }
  for (size_t t = 0; t < p->ntables; t++)
    for (size_t k = 0; k < p->tables[t].nentries; k++) {
      long i = reloc_insn_at(p, p->tables[t].targets[k]);
      if (i >= 0) p->insns[i].leader = true;
    }
}

typedef struct edge_list {
  reloc_edge *v;
  size_t n, cap;
} edge_list;

static lp_status add(edge_list *l, uint32_t from, uint32_t to, reloc_edge_kind kind, uint64_t branch,
                     uint64_t target) {
  if (l->n == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 64;
    reloc_edge *v = realloc(l->v, cap * sizeof *v);
    if (!v) return lp_fail("out of memory");
    l->v = v;
    l->cap = cap;
  }
  l->v[l->n++] = (reloc_edge){from, to, (uint8_t)kind, false, branch, target};
  return LP_OK;
}

/* The block starting at ORIG, or RELOC_EXIT when ORIG is not a decoded leader. */
static uint32_t block_at(const reloc_plan *p, uint64_t orig) {
  long i = reloc_insn_at(p, orig);
  return i >= 0 && p->insns[i].leader ? p->insns[i].block : RELOC_EXIT;
}

/* A transfer to ORIG: inside (KIND to its block) or leaving (RETURN). */
static lp_status add_transfer(const reloc_plan *p, edge_list *l, uint32_t b, reloc_edge_kind kind,
                              uint64_t branch, uint64_t orig) {
  uint32_t to = block_at(p, orig);
  return add(l, b, to, to == RELOC_EXIT ? RELOC_EDGE_RETURN : kind, branch, orig);
}

static bool target_before(const uint64_t *a, const uint64_t *b) { return *a < *b; }
LP_MERGE_SORT(sort_targets, uint64_t, target_before)

/* One edge of block B per distinct target of table T (jumped through at
 * BRANCH), in the order of their targets (CPython's dispatch tables have
 * hundreds of entries: a search of the ones before for each was 4 % of its
 * tracer under arcs). */
static lp_status add_table(const reloc_plan *p, edge_list *l, uint32_t b, uint64_t branch, const reloc_table *t) {
  size_t n = t->nentries;
  uint64_t *v = malloc((2 * n + 1) * sizeof *v);
  if (!v) return lp_fail("out of memory");
  memcpy(v, t->targets, n * sizeof *v);
  sort_targets(v, v + n, n);
  lp_status st = LP_OK;
  for (size_t k = 0; k < n && st == LP_OK; k++)
    if (k == 0 || v[k] != v[k - 1]) st = add_transfer(p, l, b, RELOC_EDGE_TABLE, branch, v[k]);
  free(v);
  return st;
}

static lp_status block_edges(reloc_plan *p, edge_list *l, uint32_t b) {
  const reloc_bdata *bd = &p->bdata[b];
  const reloc_insn *last = &p->insns[p->order[bd->first + bd->count - 1]];
  const x64_insn *in = &last->x;
  uint64_t next = in->addr + in->len;
  if (last->noreturn) return add(l, b, RELOC_EXIT, RELOC_EDGE_ESCAPE, in->addr, 0);
  if (reloc_falls_through(last)) {
    uint32_t to = block_at(p, next);
    if (to == RELOC_EXIT)
      LP_CHECK(add(l, b, RELOC_EXIT, RELOC_EDGE_ESCAPE, in->addr, 0)); /* falls off the body */
    else
      LP_CHECK(add(l, b, to, RELOC_EDGE_FALL, in->addr, next));
  }
  switch (in->flow) {
  case X64_FLOW_JCC:
  case X64_FLOW_JCC_SHORT: return add_transfer(p, l, b, RELOC_EDGE_TAKEN, in->addr, in->target);
  case X64_FLOW_JMP: return add_transfer(p, l, b, RELOC_EDGE_JUMP, in->addr, in->target);
  case X64_FLOW_RET: return add(l, b, RELOC_EXIT, RELOC_EDGE_RETURN, in->addr, 0);
  case X64_FLOW_STOP: return add(l, b, RELOC_EXIT, RELOC_EDGE_ESCAPE, in->addr, 0);
  case X64_FLOW_JMP_INDIRECT:
    if (last->table_jmp >= 0) return add_table(p, l, b, in->addr, &p->tables[last->table_jmp]);
    if (in->rip_relative && in->op[0].type == X64_OP_MEM && in->op[0].index == 0)
      return add(l, b, RELOC_EXIT, RELOC_EDGE_RETURN, in->addr, 0); /* jmp [rip+x]: GOT tail */
    return add(l, b, RELOC_EXIT, RELOC_EDGE_ESCAPE, in->addr, 0);
  default: return LP_OK;
  }
}

static int by_from_kind_target(const void *a, const void *b) {
  const reloc_edge *x = a, *y = b;
  if (x->from != y->from) return x->from < y->from ? -1 : 1;
  if (x->kind != y->kind) return x->kind < y->kind ? -1 : 1;
  if (x->target != y->target) return x->target < y->target ? -1 : 1;
  return 0;
}

static bool edge_before(const reloc_edge *a, const reloc_edge *b) { return by_from_kind_target(a, b) < 0; }
LP_MERGE_SORT(merge_edges, reloc_edge, edge_before)

/* Sorts one block's N edges (two at most, but for a table's, which come in
 * order: merged) by insertion: a qsort of the whole function's edges was ~7 %
 * of planning. */
static void sort_edges(reloc_edge *v, size_t n) {
  if (n > 8) {
    reloc_edge *tmp = malloc(n * sizeof *tmp);
    if (tmp) merge_edges(v, tmp, n);
    else qsort(v, n, sizeof *v, by_from_kind_target);
    free(tmp);
    return;
  }
  for (size_t i = 1; i < n; i++)
    for (size_t j = i; j > 0 && by_from_kind_target(&v[j - 1], &v[j]) > 0; j--) {
      reloc_edge t = v[j];
      v[j] = v[j - 1];
      v[j - 1] = t;
    }
}

/* Block B ends in a call and falls through (reloc_flow_leaks). */
static bool block_leaks(const reloc_plan *p, size_t b) {
  const reloc_bdata *bd = &p->bdata[b];
  const x64_insn *last = &p->insns[p->order[bd->first + bd->count - 1]].x;
  bool call = last->flow == X64_FLOW_CALL || last->flow == X64_FLOW_CALL_INDIRECT;
  return reloc_flow_leaks(p->edges + bd->first_edge, bd->nout, (uint32_t)b, call);
}

/* Block B ends in the dispatch of a guarded table, whose indexes past the
 * copy's entries escape to the original (reloc_table.guard) by no edge of
 * the graph: it leaks as a call does. */
static bool block_escapes(const reloc_plan *p, size_t b) {
  const reloc_bdata *bd = &p->bdata[b];
  const reloc_insn *last = &p->insns[p->order[bd->first + bd->count - 1]];
  return last->table_jmp >= 0 && p->tables[last->table_jmp].guard;
}

/* The blocks that end in a call returning twice (reloc_insn.twice), and the
 * blocks their fall edges enter: entered from outside as well. */
static void mark_returns_twice(reloc_plan *p) {
  for (size_t b = 0; b < p->nblocks; b++) {
    reloc_bdata *bd = &p->bdata[b];
    if (!p->insns[p->order[bd->first + bd->count - 1]].twice) continue;
    for (size_t e = bd->first_edge; e < bd->first_edge + bd->nout; e++) {
      const reloc_edge *ed = &p->edges[e];
      if (ed->kind != RELOC_EDGE_FALL || ed->to == RELOC_EXIT) continue;
      bd->returns_twice = true;
      p->bdata[ed->to].rejoined = true;
      p->blocks[ed->to].entered = true;
    }
  }
}

lp_status reloc_build_cfg(reloc_plan *p) {
  mark_leaders(p);
  size_t nb = 0;
  for (size_t k = 0; k < p->n; k++) nb += p->insns[p->order[k]].leader;
  p->blocks = calloc(nb, sizeof *p->blocks);
  p->bdata = calloc(nb, sizeof *p->bdata);
  if (!p->blocks || !p->bdata) return lp_fail("out of memory");
  p->nblocks = nb;
  size_t b = SIZE_MAX;
  for (size_t k = 0; k < p->n; k++) { /* order[0] is the entry: a leader */
    reloc_insn *in = &p->insns[p->order[k]];
    if (in->leader) {
      b++;
      p->blocks[b].addr = in->x.addr;
      p->blocks[b].entered = in->entered;
      p->bdata[b].first = k;
    }
    in->block = (uint32_t)b;
    p->blocks[b].size += in->x.len;
    p->blocks[b].ninsns++;
    p->bdata[b].count++;
  }

  edge_list l = {0};
  for (uint32_t k = 0; k < nb; k++) { /* by from already: each block's own sorted */
    size_t first = l.n;
    if (block_edges(p, &l, k) != LP_OK) {
      free(l.v);
      return LP_ERR;
    }
    sort_edges(l.v + first, l.n - first);
  }
  p->edges = l.v;
  p->nedges = l.n;
  for (size_t e = l.n; e-- > 0;) {
    p->bdata[l.v[e].from].first_edge = e;
    p->bdata[l.v[e].from].nout++;
  }
  for (size_t e = 0; e < l.n; e++)
    if (l.v[e].to != RELOC_EXIT) {
      p->bdata[l.v[e].to].npreds++;
      p->bdata[l.v[e].to].pred = e;
    }
  for (size_t k = 0; k < nb; k++) {
    p->blocks[k].escapes = block_escapes(p, k);
    p->blocks[k].leaks = p->blocks[k].escapes || block_leaks(p, k);
  }
  mark_returns_twice(p);
  for (size_t t = 0; t < p->ntables; t++) p->tables[t].block = -1;
  for (size_t i = 0; i < p->n; i++) {
    int32_t t = p->insns[i].table_jmp;
    if (t < 0) continue;
    if (p->tables[t].block >= 0) /* two dispatches share one table: their entries
                                    cannot send each edge to its own stub */
      p->tables[t].block = -2;
    else if (p->tables[t].block == -1)
      p->tables[t].block = p->insns[i].block;
  }

  for (size_t i = 0; i < p->n; i++)
    p->ncalls += p->insns[i].x.flow == X64_FLOW_CALL || p->insns[i].x.flow == X64_FLOW_CALL_INDIRECT;
  p->calls = calloc(p->ncalls ? p->ncalls : 1, sizeof *p->calls);
  if (!p->calls) return lp_fail("out of memory");
  for (size_t i = 0, c = 0; i < p->n; i++) {
    const x64_insn *in = &p->insns[i].x;
    if (in->flow == X64_FLOW_CALL) p->calls[c++] = (reloc_call){in->addr, in->target};
    if (in->flow == X64_FLOW_CALL_INDIRECT) p->calls[c++] = (reloc_call){in->addr, 0};
  }
  return LP_OK;
}

