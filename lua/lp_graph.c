/* lp_graph.c — the graphs of a run table's functions: blocks, edges and call
 * sites with their counts, computed in C when first asked for (edge and
 * block counts solved from the arcs by flow conservation, the flows of a
 * function's two copies added when its arcs were re-placed, calls counted by
 * their probes or by the blocks they end) and kept in one userdata per run.
 *
 * A report of a large program (gcc's cc1: 16 886 functions relocated, 1.6 M
 * blocks) whose collectors read few graphs (no line info, function counts
 * alone) computes only those: the run table records where each function's
 * counts are (its sources: one per process that has it), and a graph is
 * computed from them the first time lp_graph_fn_at is asked for it, while
 * the counters files are mapped (a report's, for the whole report), when
 * their counts no longer change.  Else (a sample's run table, a report of a
 * detached or running process) they are all computed at once: the counts of
 * the moment the run table was made (docs/COLLECTORS.md).
 *
 * A function table gets its blocks, edges, calls and flow_error as Lua tables
 * only when a collector first reads one of them, or iterates the function
 * with pairs (its metatable's __index and __pairs).  A report of sqlite has
 * ~80 k blocks, edges and calls: as tables they were a fifth of the coverage
 * report's time, and lazyprobe.line_counts, branch_counts and graph_columns,
 * which read the graphs here directly (lp_graph_pending), never need them.  The userdata
 * holds copies, not pointers into the counters files, so a collector may
 * keep a run table after the call that received it.  The same metatable
 * gives address_hex, and note where it is "", when read: a function table
 * then has eight fields at most, a hash part of eight nodes (gcc's report,
 * 47 724 functions: 152 -> 129 ms). */
#include "lp_graph.h"

#include <lauxlib.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "lp_format.h"
#include "lp_sort.h"
#include "reloc.h"

#define GRAPHS_NAME "lazyprobe.graphs"

static const char *edge_kinds[] = {"fall", "taken", "jump", "table", "return", "escape"};

const char *lp_graph_edge_kind(uint8_t kind) {
  return kind < sizeof edge_kinds / sizeof *edge_kinds ? edge_kinds[kind] : "?";
}

/* Makes room for NEED more elements of SIZE bytes in *V (holding N of CAP):
 * twice CAP, or N + NEED exactly when that is more (the first reservation,
 * lp_graph_reserve's, is exact: a doubled array is pages touched for nothing). */
static bool reserve(void **v, uint32_t n, uint32_t *cap, uint64_t need, size_t size) {
  if ((uint64_t)n + need <= *cap) return true;
  uint64_t c = 2 * (uint64_t)*cap;
  if (c < (uint64_t)n + need) c = (uint64_t)n + need;
  if (c > UINT32_MAX) return false;
  void *grown = realloc(*v, (size_t)c * size);
  if (!grown) return false;
  *v = grown;
  *cap = (uint32_t)c;
  return true;
}

static uint32_t add_string(lp_graph *g, const char *s) {
  uint32_t len = (uint32_t)strlen(s) + 1;
  if (!reserve((void **)&g->strings, g->nstrings, &g->strings_cap, len, 1)) return LP_GRAPH_NONE;
  uint32_t at = g->nstrings;
  memcpy(g->strings + at, s, len);
  g->nstrings += len;
  return at;
}

static int graphs_gc(lua_State *L) {
  lp_graph *g = luaL_checkudata(L, 1, GRAPHS_NAME);
  free(g->fns);
  free(g->blocks);
  free(g->edges);
  free(g->calls);
  free(g->strings);
  free(g->sources);
  memset(g, 0, sizeof *g);
  return 0;
}

/* {=== computing ===*/

/* The function of the same module whose entry is ADDR, or NULL. */
static const char *callee_name(const shm_counters *c, const shm_module *m, uint64_t addr) {
  const shm_function *fns = shm_functions(c) + m->first_function;
  size_t lo = 0, hi = m->nfunctions;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (fns[mid].addr < addr) lo = mid + 1;
    else hi = mid;
  }
  return lo < m->nfunctions && fns[lo].addr == addr ? shm_string(c, fns[lo].name) : NULL;
}

static const lp_graph_block *sort_blocks; /* the sort's comparison has no context argument */

static bool addr_before(const uint32_t *a, const uint32_t *b) { return sort_blocks[*a].addr < sort_blocks[*b].addr; }
LP_MERGE_SORT(sort_by_addr, uint32_t, addr_before)

/* The count of the block holding link-time address AT (0 when none does),
 * BY_ADDR the indices of the NB BLOCKS in address order. */
static uint64_t block_count_at(const lp_graph_block *blocks, const uint32_t *by_addr, uint32_t nb, uint64_t at) {
  uint32_t lo = 0, hi = nb;
  while (lo < hi) { /* the first block starting above AT */
    uint32_t mid = (lo + hi) / 2;
    if (blocks[by_addr[mid]].addr <= at) lo = mid + 1;
    else hi = mid;
  }
  if (lo == 0) return 0;
  const lp_graph_block *b = &blocks[by_addr[lo - 1]];
  return at - b->addr < b->size ? b->count : 0;
}

/* BC[b]: 1 when block b ran, else 0, under block probes "cover": from its
 * probe, the entry's for block 0 (a count when a collector wants entry
 * counts), or, for the blocks without a probe, from the blocks they dominate
 * (relocate/reloc_cover.c). */
static bool cover(const shm_block *blocks, uint32_t nb, const shm_counters *c, uint64_t *bc) {
  uint32_t *idom = malloc((nb ? nb : 1) * sizeof *idom);
  if (!idom) return false;
  for (uint32_t b = 0; b < nb; b++) {
    bc[b] = !(blocks[b].flags & SHM_BLOCK_DOMINATED) && shm_slot_value(c, blocks[b].slot) > 0;
    idom[b] = blocks[b].idom;
  }
  bool ok = reloc_cover_solve(idom, nb, bc);
  free(idom);
  return ok;
}

/* Counts of the edges (EC) and blocks (BC) of one copy of F solved from its
 * arcs: EDGES its edge records (their slots: its counted edges), COPY_SLOT
 * its entry counter; false (with the message in the function's flow_error)
 * when they are not consistent. */
static bool solve_copy(lp_graph *g, lp_graph_fn *out, const shm_counters *c, const shm_function *f,
                       const shm_edge *edges, uint32_t copy_slot, uint64_t *ec, uint64_t *bc, bool *failed) {
  if (shm_flow(c, f, edges, copy_slot, false, ec, bc) == LP_OK) return true;
  out->flow_error = add_string(g, lp_error());
  if (out->flow_error == LP_GRAPH_NONE) *failed = true;
  return false;
}

/* Counts of the edges (EC) and blocks (BC) solved from the arcs: those of
 * F's first copy, plus those of its second when its arcs were re-placed
 * (each copy's counted edges and entry count make a flow of their own). */
static bool solve(lp_graph *g, lp_graph_fn *out, const shm_counters *c, const shm_function *f, uint64_t *ec,
                  uint64_t *bc, bool *failed) {
  const shm_edge *edges = shm_edges(c) + f->first_edge;
  if (!solve_copy(g, out, c, f, edges, f->slot, ec, bc, failed)) return false;
  uint32_t r = shm_retree_slot(c, f);
  if (r == SHM_NONE) return true;
  uint32_t nb = f->nblocks, ne = f->nedges;
  uint64_t *ec2 = calloc(ne + 1, sizeof *ec2), *bc2 = calloc(nb + 1, sizeof *bc2);
  bool solved = false;
  if (!ec2 || !bc2) *failed = true;
  else solved = solve_copy(g, out, c, f, shm_edges(c) + f->retree_edge, r, ec2, bc2, failed);
  for (uint32_t e = 0; solved && e < ne; e++) ec[e] += ec2[e];
  for (uint32_t b = 0; solved && b < nb; b++) bc[b] += bc2[b];
  free(ec2);
  free(bc2);
  return solved;
}

/* What the counters of edge FIRST (a first copy's) and SECOND (the same edge
 * of the second copy, or NULL) say: the sum over the copies that count it
 * (*COUNTED: some does). */
static uint64_t measured(const shm_counters *c, const shm_edge *first, const shm_edge *second, bool *counted) {
  *counted = first->slot != SHM_NONE || (second && second->slot != SHM_NONE);
  return shm_slot_value(c, first->slot) + (second ? shm_slot_value(c, second->slot) : 0);
}

/* The graph of F into OUT, its elements appended to G's arrays. */
static bool compute(lp_graph *g, const shm_counters *c, const shm_function *f, lp_graph_fn *out) {
  *out = (lp_graph_fn){.first_block = g->nblocks,
                       .first_edge = g->nedges,
                       .first_call = g->ncalls,
                       .flow_error = LP_GRAPH_NONE,
                       .source = LP_GRAPH_NONE,
                       .last_source = LP_GRAPH_NONE};
  uint32_t probes = c->header->probes, nb = f->nblocks, ne = f->nedges;
  if (f->slot == SHM_NONE || f->first_block == SHM_NONE || nb == 0) return true;
  if (!reserve((void **)&g->blocks, g->nblocks, &g->blocks_cap, nb, sizeof *g->blocks) ||
      !reserve((void **)&g->edges, g->nedges, &g->edges_cap, ne, sizeof *g->edges))
    return false;
  const shm_block *blocks = shm_blocks(c) + f->first_block;
  const shm_edge *edges = shm_edges(c) + f->first_edge;
  lp_graph_block *gb = g->blocks + g->nblocks;
  lp_graph_edge *ge = g->edges + g->nedges;
  uint64_t *bc = calloc(nb, sizeof *bc), *ec = calloc(ne + 1, sizeof *ec);
  bool failed = !bc || !ec;
  bool have_blocks = false, have_edges = false;
  if (!failed && probes & SHM_PROBE_ARCS) have_edges = have_blocks = solve(g, out, c, f, ec, bc, &failed);
  if (!failed && probes & SHM_PROBE_BLOCKS_COUNT) {
    for (uint32_t b = 0; b < nb; b++) bc[b] = shm_fn_slot_value(c, f, blocks[b].slot);
    have_blocks = true;
  } else if (!failed && !have_blocks && probes & SHM_PROBE_BLOCKS_COVER) {
    failed = !cover(blocks, nb, c, bc);
    have_blocks = true;
  }
  for (uint32_t b = 0; !failed && b < nb; b++) {
    bool side = (blocks[b].flags & SHM_BLOCK_ENTERED) && blocks[b].side_slot != SHM_NONE;
    gb[b] = (lp_graph_block){blocks[b].addr, blocks[b].size, blocks[b].ninsns, have_blocks ? bc[b] : 0,
                             side ? shm_fn_slot_value(c, f, blocks[b].side_slot) : 0, side,
                             (blocks[b].flags & SHM_BLOCK_ESCAPES) != 0};
  }
  const shm_edge *second = shm_retree_slot(c, f) != SHM_NONE ? shm_edges(c) + f->retree_edge : NULL;
  for (uint32_t e = 0; !failed && e < ne; e++) {
    bool counted; /* what its own counters say, solved or not */
    uint64_t own = measured(c, &edges[e], second ? &second[e] : NULL, &counted);
    ge[e] = (lp_graph_edge){edges[e].branch,
                            edges[e].target,
                            have_edges ? ec[e] : 0,
                            own,
                            edges[e].from,
                            edges[e].to == SHM_NONE ? LP_GRAPH_NONE : edges[e].to,
                            edges[e].kind,
                            counted};
  }
  free(bc);
  free(ec);
  if (failed) return false;
  out->nblocks = nb;
  out->nedges = ne;
  out->graph = true;
  out->block_counts = have_blocks;
  out->edge_counts = have_edges;
  g->nblocks += nb;
  g->nedges += ne;

  /* A call ends its block: without call probes, block counts (from block
   * probes or solved from the arcs) are the calls' counts. */
  bool by_blocks = !(probes & SHM_PROBE_CALLS) && have_blocks && (have_edges || probes & SHM_PROBE_BLOCKS_COUNT);
  if (f->first_call == SHM_NONE || !(probes & SHM_PROBE_CALLS || by_blocks)) return true;
  if (!reserve((void **)&g->calls, g->ncalls, &g->calls_cap, f->ncalls, sizeof *g->calls)) return false;
  uint32_t *by_addr = NULL;
  if (by_blocks) {
    if (!(by_addr = malloc(2 * nb * sizeof *by_addr))) return false; /* and the sort's room */
    for (uint32_t b = 0; b < nb; b++) by_addr[b] = b;
    sort_blocks = gb;
    sort_by_addr(by_addr, by_addr + nb, nb);
  }
  const shm_call *calls = shm_calls(c) + f->first_call;
  const shm_module *m = &shm_modules(c)[f->module];
  for (uint32_t k = 0; k < f->ncalls; k++) {
    const char *callee = calls[k].target ? callee_name(c, m, calls[k].target) : NULL;
    uint32_t name = callee ? add_string(g, callee) : LP_GRAPH_NONE;
    if (callee && name == LP_GRAPH_NONE) {
      free(by_addr);
      return false;
    }
    uint64_t n = by_addr ? block_count_at(gb, by_addr, nb, calls[k].site) : shm_fn_slot_value(c, f, calls[k].slot);
    g->calls[g->ncalls + k] = (lp_graph_call){calls[k].site, calls[k].target, n, name};
  }
  free(by_addr);
  out->ncalls = f->ncalls;
  out->calls = true;
  g->ncalls += f->ncalls;
  return true;
}

bool lp_graph_escapes(const lp_graph *g, const lp_graph_fn *gf, uint32_t b, uint64_t *n) {
  const lp_graph_block *gb = &g->blocks[gf->first_block + b];
  if (!gb->escapes || !gf->block_counts || !gf->edge_counts) return false;
  uint64_t out = 0;
  for (uint32_t e = 0; e < gf->nedges; e++)
    if (g->edges[gf->first_edge + e].from == b) out += g->edges[gf->first_edge + e].count;
  *n = gb->count > out ? gb->count - out : 0;
  return true;
}

lp_graph *lp_graph_push(lua_State *L, const shm_counters *files) {
  lp_graph *g = lua_newuserdatauv(L, sizeof *g, 2); /* user values: the functions' metatable, ids */
  memset(g, 0, sizeof *g);
  g->files = files;
  if (luaL_newmetatable(L, GRAPHS_NAME)) {
    lua_pushcfunction(L, graphs_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  return g;
}

bool lp_graph_reserve(lp_graph *g, const shm_counters *c) {
  const shm_function *fns = shm_functions(c);
  uint64_t nfns = 0, nblocks = 0, nedges = 0, ncalls = 0;
  for (uint32_t i = 0; i < c->header->nfunctions; i++) {
    const shm_function *f = &fns[i];
    if (f->state == SHM_EXCLUDED) continue;
    nfns++;
    if (f->slot == SHM_NONE || f->first_block == SHM_NONE) continue;
    nblocks += f->nblocks;
    nedges += f->nedges;
    if (f->first_call != SHM_NONE) ncalls += f->ncalls;
  }
  return reserve((void **)&g->fns, g->nfns, &g->fns_cap, nfns, sizeof *g->fns) &&
         reserve((void **)&g->blocks, g->nblocks, &g->blocks_cap, nblocks, sizeof *g->blocks) &&
         reserve((void **)&g->edges, g->nedges, &g->edges_cap, nedges, sizeof *g->edges) &&
         reserve((void **)&g->calls, g->ncalls, &g->calls_cap, ncalls, sizeof *g->calls);
}

/* Appends the source FN of FILE; its index in *AT. */
static bool add_source(lp_graph *g, uint32_t file, uint32_t fn, uint32_t *at) {
  if (!reserve((void **)&g->sources, g->nsources, &g->sources_cap, 1, sizeof *g->sources)) return false;
  g->sources[g->nsources] = (lp_graph_source){file, fn, LP_GRAPH_NONE};
  *at = g->nsources++;
  return true;
}

bool lp_graph_add(lp_graph *g, uint32_t file, uint32_t fn, uint32_t *id) {
  uint32_t s;
  if (!reserve((void **)&g->fns, g->nfns, &g->fns_cap, 1, sizeof *g->fns) || !add_source(g, file, fn, &s))
    return false;
  g->fns[g->nfns] = (lp_graph_fn){.flow_error = LP_GRAPH_NONE, .source = s, .last_source = s};
  *id = g->nfns++;
  return true;
}

/* Adds the counts of FROM's graph to INTO's (the same function in another
 * process). */
static void add_up(lp_graph *g, lp_graph_fn *into, const lp_graph_fn *from) {
  if (into->block_counts && from->block_counts && into->nblocks == from->nblocks)
    for (uint32_t b = 0; b < into->nblocks; b++)
      g->blocks[into->first_block + b].count += g->blocks[from->first_block + b].count;
  if (into->nblocks == from->nblocks)
    for (uint32_t b = 0; b < into->nblocks; b++) {
      lp_graph_block *a = &g->blocks[into->first_block + b];
      const lp_graph_block *o = &g->blocks[from->first_block + b];
      a->side_entries += o->side_entries;
      a->side |= o->side;
      a->escapes |= o->escapes;
    }
  if (into->edge_counts && from->edge_counts && into->nedges == from->nedges)
    for (uint32_t e = 0; e < into->nedges; e++)
      g->edges[into->first_edge + e].count += g->edges[from->first_edge + e].count;
  if (into->nedges == from->nedges)
    for (uint32_t e = 0; e < into->nedges; e++) { /* what the counters of every process said */
      lp_graph_edge *a = &g->edges[into->first_edge + e];
      const lp_graph_edge *b = &g->edges[from->first_edge + e];
      a->measured += b->measured;
      a->measured_known |= b->measured_known;
    }
  if (into->calls && from->calls && into->ncalls == from->ncalls)
    for (uint32_t k = 0; k < into->ncalls; k++)
      g->calls[into->first_call + k].count += g->calls[from->first_call + k].count;
}

bool lp_graph_merge(lp_graph *g, uint32_t id, uint32_t file, uint32_t fn) {
  uint32_t s;
  if (!add_source(g, file, fn, &s)) return false;
  lp_graph_fn *into = &g->fns[id];
  g->sources[into->last_source].next = s;
  into->last_source = s;
  return true;
}

/* Computes graph GF from its sources: the first's, then each other's
 * counts added up. */
static bool compute_sources(lp_graph *g, lp_graph_fn *gf) {
  uint32_t s = gf->source;
  const lp_graph_source *src = &g->sources[s];
  const shm_counters *c = &g->files[src->file];
  if (!compute(g, c, shm_functions(c) + src->fn, gf)) return false;
  for (s = src->next; s != LP_GRAPH_NONE; s = g->sources[s].next) {
    src = &g->sources[s];
    c = &g->files[src->file];
    uint32_t nblocks = g->nblocks, nedges = g->nedges, ncalls = g->ncalls, nstrings = g->nstrings;
    lp_graph_fn from;
    if (!compute(g, c, shm_functions(c) + src->fn, &from)) return false;
    if (!from.graph) continue;
    if (!gf->graph) {
      *gf = from;
      continue;
    }
    add_up(g, gf, &from);
    /* its elements were appended last: added up, they go (a report over a
     * thousand processes of the same program would keep them all) */
    g->nblocks = nblocks, g->nedges = nedges, g->ncalls = ncalls, g->nstrings = nstrings;
  }
  gf->source = gf->last_source = LP_GRAPH_NONE;
  return true;
}

const lp_graph_fn *lp_graph_fn_at(lua_State *L, lp_graph *g, uint32_t id) {
  lp_graph_fn *gf = &g->fns[id];
  if (gf->source == LP_GRAPH_NONE) return gf;
  if (!g->files) luaL_error(L, "a function's graph read after its counters files were closed");
  if (!compute_sources(g, gf)) {
    *gf = (lp_graph_fn){.flow_error = LP_GRAPH_NONE, .source = LP_GRAPH_NONE, .last_source = LP_GRAPH_NONE};
    luaL_error(L, "out of memory");
  }
  return gf;
}

void lp_graph_compute_all(lua_State *L, lp_graph *g) {
  for (uint32_t id = 0; id < g->nfns; id++) lp_graph_fn_at(L, g, id);
}

void lp_graph_forget_files(lp_graph *g) {
  g->files = NULL;
}

/* }=== */

/* {=== Lua tables ===*/

/* The field names of blocks, edges and calls, and the edge kinds, pushed once
 * per function made tables, set with lua_rawset: lua_setfield hashes and
 * compares its key string every time. */
enum graph_key { K_ADDRESS, K_SIZE, K_INSTRUCTIONS, K_COUNT, K_FROM, K_TO, K_KIND, K_BRANCH, K_TARGET,
                 K_MEASURED, K_SITE, K_CALLEE, K_SIDE_ENTRIES, K_ESCAPES,
                 K_KINDS /* then the edge kinds, then "?" */ };
#define NKINDS (sizeof edge_kinds / sizeof *edge_kinds)

static void push_keys(lua_State *L) {
  luaL_checkstack(L, K_KINDS + (int)NKINDS + 1 + LUA_MINSTACK, "run table");
  static const char *names[K_KINDS] = {"address", "size",   "instructions", "count",    "from",  "to",
                                       "kind",    "branch", "target",       "measured", "site", "callee",
                                       "side_entries", "escapes"};
  for (int k = 0; k < K_KINDS; k++) lua_pushstring(L, names[k]);
  for (size_t k = 0; k < NKINDS; k++) lua_pushstring(L, edge_kinds[k]);
  lua_pushliteral(L, "?");
}

/* t[KEY] = V on the table on top, KEYS the stack index of the first key. */
static void set_int(lua_State *L, int keys, enum graph_key key, lua_Integer v) {
  lua_pushvalue(L, keys + key);
  lua_pushinteger(L, v);
  lua_rawset(L, -3);
}

/* f[NAME] = the value on top, unless the collector set f[NAME] already. */
static void set_unless_present(lua_State *L, int fn, const char *name) {
  lua_pushstring(L, name);
  if (lua_rawget(L, fn) == LUA_TNIL) {
    lua_pop(L, 1);
    lua_setfield(L, fn, name);
  } else {
    lua_pop(L, 2);
  }
}

static void push_blocks(lua_State *L, int keys, const lp_graph *g, const lp_graph_fn *gf) {
  lua_createtable(L, (int)gf->nblocks, 0);
  for (uint32_t b = 0; b < gf->nblocks; b++) {
    const lp_graph_block *gb = &g->blocks[gf->first_block + b];
    lua_createtable(L, 0, 4);
    set_int(L, keys, K_ADDRESS, (lua_Integer)gb->addr);
    set_int(L, keys, K_SIZE, gb->size);
    set_int(L, keys, K_INSTRUCTIONS, gb->ninsns);
    if (gf->block_counts) set_int(L, keys, K_COUNT, (lua_Integer)gb->count);
    if (gb->side) set_int(L, keys, K_SIDE_ENTRIES, (lua_Integer)gb->side_entries);
    uint64_t escapes;
    if (lp_graph_escapes(g, gf, b, &escapes)) set_int(L, keys, K_ESCAPES, (lua_Integer)escapes);
    lua_rawseti(L, -2, b + 1);
  }
}

static void push_edges(lua_State *L, int keys, const lp_graph *g, const lp_graph_fn *gf) {
  lua_createtable(L, (int)gf->nedges, 0);
  for (uint32_t e = 0; e < gf->nedges; e++) {
    const lp_graph_edge *ge = &g->edges[gf->first_edge + e];
    lua_createtable(L, 0, 6);
    set_int(L, keys, K_FROM, ge->from + 1);
    set_int(L, keys, K_TO, ge->to == LP_GRAPH_NONE ? 0 : (lua_Integer)ge->to + 1);
    lua_pushvalue(L, keys + K_KIND);
    lua_pushvalue(L, keys + K_KINDS + (int)(ge->kind < NKINDS ? ge->kind : NKINDS));
    lua_rawset(L, -3);
    set_int(L, keys, K_BRANCH, (lua_Integer)ge->branch);
    set_int(L, keys, K_TARGET, (lua_Integer)ge->target);
    if (gf->edge_counts) set_int(L, keys, K_COUNT, (lua_Integer)ge->count);
    if (ge->measured_known) set_int(L, keys, K_MEASURED, (lua_Integer)ge->measured);
    lua_rawseti(L, -2, e + 1);
  }
}

static void push_calls(lua_State *L, int keys, const lp_graph *g, const lp_graph_fn *gf) {
  lua_createtable(L, (int)gf->ncalls, 0);
  for (uint32_t k = 0; k < gf->ncalls; k++) {
    const lp_graph_call *gc = &g->calls[gf->first_call + k];
    lua_createtable(L, 0, 4);
    set_int(L, keys, K_SITE, (lua_Integer)gc->site);
    set_int(L, keys, K_TARGET, (lua_Integer)gc->target);
    if (gc->callee != LP_GRAPH_NONE) {
      lua_pushvalue(L, keys + K_CALLEE);
      lua_pushstring(L, g->strings + gc->callee);
      lua_rawset(L, -3);
    }
    set_int(L, keys, K_COUNT, (lua_Integer)gc->count);
    lua_rawseti(L, -2, k + 1);
  }
}

/* Makes the graph of the function table at index FN Lua tables, when it is
 * still pending: its id in the graphs' ids table goes. */
static void materialize(lua_State *L, int fn, int graphs) {
  fn = lua_absindex(L, fn);
  graphs = lua_absindex(L, graphs);
  lp_graph *g = lua_touserdata(L, graphs);
  lua_getiuservalue(L, graphs, 2); /* ids */
  lua_pushvalue(L, fn);
  int is = 0;
  lua_Integer id = lua_rawget(L, -2) == LUA_TNUMBER ? lua_tointegerx(L, -1, &is) : 0;
  lua_pop(L, 1);
  if (!is || id < 0 || (uint64_t)id >= g->nfns) {
    lua_pop(L, 1);
    return;
  }
  lua_pushvalue(L, fn);
  lua_pushnil(L);
  lua_rawset(L, -3); /* no longer pending */
  lua_pop(L, 1);
  const lp_graph_fn *gf = lp_graph_fn_at(L, g, (uint32_t)id);
  if (gf->flow_error != LP_GRAPH_NONE) {
    lua_pushstring(L, g->strings + gf->flow_error);
    set_unless_present(L, fn, "flow_error");
  }
  if (!gf->graph) return;
  int keys = lua_gettop(L) + 1;
  push_keys(L);
  push_blocks(L, keys, g, gf);
  set_unless_present(L, fn, "blocks");
  push_edges(L, keys, g, gf);
  set_unless_present(L, fn, "edges");
  if (gf->calls) {
    push_calls(L, keys, g, gf);
    set_unless_present(L, fn, "calls");
  }
  lua_settop(L, keys - 1);
}

/* Pushes f.address_hex for the function table at index FN: "0x" and its
 * address in hex, lower case. */
static void push_address_hex(lua_State *L, int fn) {
  lua_getfield(L, fn, "address");
  lp_format_value hex;
  lp_format_int(&hex, 'x', lua_tointeger(L, -1));
  lua_pop(L, 1);
  lua_pushliteral(L, "0x");
  lua_pushlstring(L, hex.s, hex.len);
  lua_concat(L, 2);
}

/* __index(f, key) for f's fields made when read: its graph's (the graphs
 * are upvalue 1), address_hex, and note when it is "". */
static int fn_index(lua_State *L) {
  const char *key = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : "";
  if (!strcmp(key, "address_hex")) {
    push_address_hex(L, 1);
    return 1;
  }
  if (!strcmp(key, "note")) {
    lua_pushliteral(L, "");
    return 1;
  }
  if (strcmp(key, "blocks") && strcmp(key, "edges") && strcmp(key, "calls") && strcmp(key, "flow_error")) return 0;
  materialize(L, 1, lua_upvalueindex(1));
  lua_pushvalue(L, 2);
  lua_rawget(L, 1);
  return 1;
}

static int fn_next(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 2);
  if (lua_next(L, 1)) return 2;
  lua_pushnil(L);
  return 1;
}

/* __pairs(f): the fields made when read made first, then a raw next. */
static int fn_pairs(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  materialize(L, 1, lua_upvalueindex(1));
  push_address_hex(L, 1);
  set_unless_present(L, 1, "address_hex");
  lua_pushliteral(L, "");
  set_unless_present(L, 1, "note");
  lua_pushcfunction(L, fn_next);
  lua_pushvalue(L, 1);
  lua_pushnil(L);
  return 3;
}

void lp_graph_attach(lua_State *L, int fn, int graphs, uint32_t id) {
  fn = lua_absindex(L, fn);
  graphs = lua_absindex(L, graphs);
  if (lua_getiuservalue(L, graphs, 1) != LUA_TTABLE) { /* the functions' metatable, made once */
    lua_pop(L, 1);
    lua_createtable(L, 0, 3);
    lua_pushvalue(L, graphs);
    lua_pushcclosure(L, fn_index, 1);
    lua_setfield(L, -2, "__index");
    lua_pushvalue(L, graphs);
    lua_pushcclosure(L, fn_pairs, 1);
    lua_setfield(L, -2, "__pairs");
    lua_pushvalue(L, graphs);
    lua_setfield(L, -2, "__graphs"); /* for lp_graph_pending */
    lua_pushvalue(L, -1);
    lua_setiuservalue(L, graphs, 1);
    lp_graph *g = lua_touserdata(L, graphs);
    lua_createtable(L, 0, g->fns_cap < INT_MAX ? (int)g->fns_cap : 0); /* ids: every function, pending */
    lua_setiuservalue(L, graphs, 2);
  }
  lua_setmetatable(L, fn);
  lua_getiuservalue(L, graphs, 2);
  lua_pushvalue(L, fn);
  lua_pushinteger(L, id);
  lua_rawset(L, -3);
  lua_pop(L, 1);
}

const lp_graph_fn *lp_graph_pending(lua_State *L, int fn, const lp_graph **out) {
  fn = lua_absindex(L, fn);
  const lp_graph_fn *gf = NULL;
  int top = lua_gettop(L);
  if (lua_getmetatable(L, fn) && lua_getfield(L, -1, "__graphs") == LUA_TUSERDATA) {
    lp_graph *g = luaL_testudata(L, -1, GRAPHS_NAME);
    lua_getiuservalue(L, -1, 2); /* ids */
    lua_pushvalue(L, fn);
    int is = 0;
    lua_Integer id = lua_rawget(L, -2) == LUA_TNUMBER ? lua_tointegerx(L, -1, &is) : 0;
    lua_pushliteral(L, "blocks");
    bool untouched = lua_rawget(L, fn) == LUA_TNIL;
    lua_pushliteral(L, "edges");
    untouched &= lua_rawget(L, fn) == LUA_TNIL;
    if (g && is && untouched && id >= 0 && (uint64_t)id < g->nfns) {
      gf = lp_graph_fn_at(L, g, (uint32_t)id);
      *out = g;
    }
  }
  lua_settop(L, top);
  return gf;
}

/* }=== */
