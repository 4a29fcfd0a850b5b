/* reloc_flow.c — every edge and block count from the counted edges
 * (reloc_flow.h), by flow conservation.
 *
 * Vertices are the blocks plus EXIT; a virtual edge EXIT->block 0 carries the
 * entry count, and one EXIT->b the entries into each side entry b (counted
 * there: the unwinder's into a landing pad, the other part's jumps back, the
 * second returns of a call that returns twice, which are one below zero for
 * each time its callee left by a longjmp instead: sums are taken modulo 2^64,
 * and a derived count is negative when it is as a signed number).
 * A vertex with exactly one edge of unknown count gets it from
 * conservation (in = out; a self-loop is on both sides and cancels), which
 * may leave one of its neighbours with a single unknown edge: a worklist
 * runs until nothing changes.  With the counted edges off a spanning tree
 * every edge is found; the result is then checked at every vertex.  Leaky
 * blocks (calls that may not return) get their virtual edge to EXIT here,
 * appended after the real edges.  The estimate (from counters that move)
 * takes 0 for a negative count and checks nothing. */
#include "reloc_flow.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct flow {
  const reloc_edge *edges;
  size_t nedges, nblocks;
  uint64_t entry;
  const uint64_t *entered; /* per block, or NULL */
  uint64_t side_entries;   /* their sum: out of EXIT with the entry */
  bool exact;          /* fail on counts that are not consistent (else estimate) */
  uint64_t *count;     /* per edge */
  bool *known;
  size_t *first, *inc; /* incident edges of vertex v: inc[first[v] .. first[v+1]) */
  size_t *unknown;     /* per vertex: unknown incident edges, self-loops included */
} flow;

static size_t vertex(const flow *f, uint32_t b) { return b == RELOC_EXIT ? f->nblocks : b; }

/* Known flow into and out of V (with the virtual edge), self-loops left out. */
static void sums(const flow *f, size_t v, uint64_t *in, uint64_t *out) {
  *in = (v == 0 ? f->entry : 0) + (f->entered && v < f->nblocks ? f->entered[v] : 0);
  *out = v == f->nblocks ? f->entry + f->side_entries : 0;
  for (size_t k = f->first[v]; k < f->first[v + 1]; k++) {
    size_t e = f->inc[k];
    size_t from = vertex(f, f->edges[e].from), to = vertex(f, f->edges[e].to);
    if (from == to || !f->known[e]) continue;
    if (to == v) *in += f->count[e];
    if (from == v) *out += f->count[e];
  }
}

static const char *where(const flow *f, size_t v, char *buf, size_t size) {
  if (v == f->nblocks) return "EXIT";
  snprintf(buf, size, "block %zu", v);
  return buf;
}

/* Solves V's single unknown edge, when it has one that is no self-loop. */
static lp_status solve_at(flow *f, size_t v, size_t *solved) {
  *solved = SIZE_MAX;
  if (f->unknown[v] != 1) return LP_OK;
  size_t u = SIZE_MAX;
  for (size_t k = f->first[v]; k < f->first[v + 1]; k++)
    if (!f->known[f->inc[k]]) u = f->inc[k];
  const reloc_edge *e = &f->edges[u];
  if (vertex(f, e->from) == vertex(f, e->to)) return LP_OK; /* a self-loop: not from here */
  uint64_t in, out;
  sums(f, v, &in, &out);
  bool into = vertex(f, e->to) == v;
  uint64_t have = into ? in : out, need = into ? out : in;
  int64_t derived = (int64_t)(need - have); /* the sums wrap where a side entry's count is negative */
  char buf[32];
  if (derived < 0 && f->exact)
    return lp_fail("flow: negative count derived at %s (edge from 0x%" PRIx64 ")",
                   where(f, v, buf, sizeof buf), e->branch);
  f->count[u] = derived < 0 ? 0 : (uint64_t)derived;
  f->known[u] = true;
  f->unknown[vertex(f, e->from)]--;
  f->unknown[vertex(f, e->to)]--;
  *solved = u;
  return LP_OK;
}

static lp_status solve(flow *f) {
  size_t nv = f->nblocks + 1;
  size_t *work = malloc(2 * (f->nedges + nv) * sizeof *work), nwork = 0;
  if (!work) return lp_fail("out of memory");
  for (size_t v = 0; v < nv; v++) work[nwork++] = v;
  while (nwork) {
    size_t v = work[--nwork], u;
    if (solve_at(f, v, &u) != LP_OK) {
      free(work);
      return LP_ERR;
    }
    if (u == SIZE_MAX) continue;
    work[nwork++] = vertex(f, f->edges[u].from); /* its ends may now have one unknown left */
    work[nwork++] = vertex(f, f->edges[u].to);
  }
  free(work);
  char buf[32];
  for (size_t v = 0; f->exact && v < nv; v++) {
    if (f->unknown[v]) return lp_fail("flow: cannot solve the edges of %s", where(f, v, buf, sizeof buf));
    uint64_t in, out;
    sums(f, v, &in, &out);
    if (in != out)
      return lp_fail("flow: counts not conserved at %s (in %" PRIu64 ", out %" PRIu64 ")",
                     where(f, v, buf, sizeof buf), in, out);
  }
  return LP_OK;
}

bool reloc_flow_leaks(const reloc_edge *edges, size_t nedges, uint32_t block, bool ends_in_call) {
  if (!ends_in_call) return false;
  for (size_t e = 0; e < nedges; e++)
    if (edges[e].from == block && edges[e].kind == RELOC_EDGE_FALL) return true;
  return false;
}

static lp_status flow_solve(const reloc_edge *edges, size_t nedges, size_t nblocks, uint64_t entry_count,
                            const bool *leaky, const uint64_t *entered, uint64_t *edge_counts,
                            uint64_t *block_counts, bool exact) {
  size_t nv = nblocks + 1, nleaks = 0;
  for (size_t b = 0; leaky && b < nblocks; b++) nleaks += leaky[b];
  size_t n = nedges + nleaks; /* the real edges, then the leaks */
  reloc_edge *all = malloc((n + 1) * sizeof *all);
  uint64_t *count = calloc(n + 1, sizeof *count);
  uint64_t side_entries = 0;
  for (size_t b = 0; entered && b < nblocks; b++) side_entries += entered[b];
  flow f = {all, n, nblocks, entry_count, entered, side_entries, exact, count, calloc(n + 1, sizeof(bool)),
            calloc(nv + 1, sizeof(size_t)), malloc((2 * n + 1) * sizeof(size_t)),
            calloc(nv, sizeof(size_t))};
  size_t *fill = calloc(nv, sizeof *fill);
  lp_status st = LP_ERR;
  if (!all || !count || !f.known || !f.first || !f.inc || !f.unknown || !fill) {
    lp_fail("out of memory");
    goto out;
  }
  for (size_t e = 0; e < nedges; e++) {
    all[e] = edges[e];
    count[e] = edge_counts[e];
  }
  for (size_t b = 0, k = nedges; leaky && b < nblocks; b++)
    if (leaky[b]) all[k++] = (reloc_edge){(uint32_t)b, RELOC_EXIT, RELOC_EDGE_ESCAPE, false, 0, 0};
  for (size_t e = 0; e < n; e++) { /* incidence lists, counting sort by vertex */
    if (all[e].from >= nblocks || (all[e].to >= nblocks && all[e].to != RELOC_EXIT)) {
      lp_fail("flow: edge %zu names a block out of range", e);
      goto out;
    }
    f.first[vertex(&f, all[e].from) + 1]++;
    if (vertex(&f, all[e].to) != vertex(&f, all[e].from)) f.first[vertex(&f, all[e].to) + 1]++;
  }
  for (size_t v = 0; v < nv; v++) f.first[v + 1] += f.first[v];
  for (size_t e = 0; e < n; e++) {
    size_t a = vertex(&f, all[e].from), b = vertex(&f, all[e].to);
    f.known[e] = all[e].counted;
    f.inc[f.first[a] + fill[a]++] = e;
    if (b != a) f.inc[f.first[b] + fill[b]++] = e;
    if (!f.known[e]) {
      f.unknown[a]++;
      if (b != a) f.unknown[b]++;
    }
  }
  if (solve(&f) != LP_OK) goto out;
  for (size_t e = 0; e < nedges; e++) edge_counts[e] = count[e];
  for (size_t b = 0; b < nblocks; b++) block_counts[b] = (b == 0 ? entry_count : 0) + (entered ? entered[b] : 0);
  for (size_t e = 0; e < nedges; e++)
    if (edges[e].to != RELOC_EXIT) block_counts[edges[e].to] += edge_counts[e];
  st = LP_OK;
out:
  free(fill);
  free(all);
  free(count);
  free(f.known);
  free(f.first);
  free(f.inc);
  free(f.unknown);
  return st;
}

lp_status reloc_flow_solve(const reloc_edge *edges, size_t nedges, size_t nblocks, uint64_t entry_count,
                           const bool *leaky, const uint64_t *entered, uint64_t *edge_counts,
                           uint64_t *block_counts) {
  return flow_solve(edges, nedges, nblocks, entry_count, leaky, entered, edge_counts, block_counts, true);
}

lp_status reloc_flow_estimate(const reloc_edge *edges, size_t nedges, size_t nblocks, uint64_t entry_count,
                              const bool *leaky, const uint64_t *entered, uint64_t *edge_counts,
                              uint64_t *block_counts) {
  return flow_solve(edges, nedges, nblocks, entry_count, leaky, entered, edge_counts, block_counts, false);
}
