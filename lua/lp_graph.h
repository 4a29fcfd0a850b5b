/* lp_graph.h — the graphs of a run table's functions (blocks, edges and call
 * sites with their counts), computed in C when first asked for and made Lua
 * tables only when a collector first reads them (lp_graph.c). */
#ifndef LP_GRAPH_H
#define LP_GRAPH_H

#include <lua.h>
#include <stdbool.h>
#include <stdint.h>

#include "counters.h"

#define LP_GRAPH_NONE UINT32_MAX

typedef struct lp_graph_block {
  uint64_t addr;      /* link-time */
  uint32_t size, ninsns;
  uint64_t count;     /* when the function's block_counts */
  uint64_t side_entries; /* when SIDE: how often it was entered from outside (part of count) */
  bool side;             /* a side entry whose entries were counted (arcs) */
  bool escapes;          /* SHM_BLOCK_ESCAPES: how often, its count less its out-edges' */
} lp_graph_block;

typedef struct lp_graph_edge {
  uint64_t branch, target;
  uint64_t count;     /* when the function's edge_counts */
  uint64_t measured;  /* its own counter's value, when measured */
  uint32_t from, to;  /* 0-based blocks; to LP_GRAPH_NONE: out of the function */
  uint8_t kind;       /* reloc_edge_kind */
  bool measured_known;
} lp_graph_edge;

typedef struct lp_graph_call {
  uint64_t site, target, count;
  uint32_t callee;    /* offset of its name in the graph's strings, or LP_GRAPH_NONE */
} lp_graph_call;

/* One function's graph: ranges of the arrays of its lp_graph. */
typedef struct lp_graph_fn {
  uint32_t first_block, nblocks;
  uint32_t first_edge, nedges;
  uint32_t first_call, ncalls;
  uint32_t flow_error;  /* offset of the message in the strings, or LP_GRAPH_NONE */
  bool graph;           /* relocated with a graph: blocks and edges exist */
  bool block_counts, edge_counts;
  bool calls;           /* the call sites have counts: the list exists */
  uint32_t source, last_source; /* where its counts are, until computed: a list of the
                                   lp_graph's sources; source LP_GRAPH_NONE once computed */
} lp_graph_fn;

/* A function's record in one counters file: FN of file FILE of the graphs'
 * files; NEXT, the same function's in a later file, or LP_GRAPH_NONE. */
typedef struct lp_graph_source {
  uint32_t file, fn, next;
} lp_graph_source;

typedef struct lp_graph {
  lp_graph_fn *fns;
  lp_graph_block *blocks;
  lp_graph_edge *edges;
  lp_graph_call *calls;
  char *strings;
  lp_graph_source *sources;
  uint32_t nfns, nblocks, nedges, ncalls, nstrings, nsources;
  uint32_t fns_cap, blocks_cap, edges_cap, calls_cap, strings_cap, sources_cap;
  const shm_counters *files; /* the sources' files while they are mapped; NULL after */
} lp_graph;

/* The name of an edge kind (reloc_edge_kind) in the run table: "fall",
 * "taken", "jump", "table", "return", "escape"; "?" for another value. */
const char *lp_graph_edge_kind(uint8_t kind);

/* Whether block B (0-based) of GF escapes with counts known: then *N, how
 * often its dispatch ran in the original (its count less its out-edges'). */
bool lp_graph_escapes(const lp_graph *g, const lp_graph_fn *gf, uint32_t b, uint64_t *n);

/* Pushes a new, empty set of graphs of the functions of FILES: a userdata
 * that frees its arrays when collected.  A function's graph is computed when
 * it is first asked for (lp_graph_fn_at): a report of a large program whose
 * collectors read few graphs (no line info, function counts alone) does not
 * compute the others; FILES must stay mapped until lp_graph_forget_files. */
lp_graph *lp_graph_push(lua_State *L, const shm_counters *files);

/* Makes room for the graphs of all the functions of counters file C at
 * once (what lp_graph_add may add of them, at most); false when out of
 * memory. */
bool lp_graph_reserve(lp_graph *g, const shm_counters *c);

/* Adds the graph of function FN of the graphs' file FILE (counts solved from
 * the arcs by flow conservation when they ran; calls counted by their probes
 * or by the blocks they end) as graph number *ID; false when out of memory. */
bool lp_graph_add(lp_graph *g, uint32_t file, uint32_t fn, uint32_t *id);

/* Adds the counts of function FN of file FILE, the function of graph ID seen
 * in another process: lists of equal length are summed element by element
 * where both have counts; a graph where ID had none is taken whole.  Only
 * while the run table is made, before any graph is computed.  False when out
 * of memory. */
bool lp_graph_merge(lp_graph *g, uint32_t id, uint32_t file, uint32_t fn);

/* Graph ID of G, computed now if it was not yet (a Lua error when out of
 * memory, or when G's files are gone). */
const lp_graph_fn *lp_graph_fn_at(lua_State *L, lp_graph *g, uint32_t id);

/* Computes every graph of G not computed yet (a sample's: its files are
 * live counters that go on changing). */
void lp_graph_compute_all(lua_State *L, lp_graph *g);

/* G's files are about to be unmapped: a graph not computed yet cannot be
 * any more (lp_graph_fn_at raises an error). */
void lp_graph_forget_files(lp_graph *g);

/* Gives the function table at index FN graph ID of the graphs at index
 * GRAPHS: f.blocks, f.edges, f.calls and f.flow_error become Lua tables when
 * first read or when f is iterated with pairs; f.address_hex, and f.note
 * where the table has none (""), are made when read too. */
void lp_graph_attach(lua_State *L, int fn, int graphs, uint32_t id);

/* The graph of the function table at index FN when it is still only in C
 * (no field of it was read or set, so the collector has not changed it),
 * computed now if it was not yet, with its lp_graph in *G; else NULL. */
const lp_graph_fn *lp_graph_pending(lua_State *L, int fn, const lp_graph **g);

#endif
