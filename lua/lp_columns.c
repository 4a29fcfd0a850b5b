/* lp_columns.c — lazyprobe.graph_columns(f): a function's blocks, edges and
 * call sites as columns, one array per field, instead of a table per element.
 *
 * As tables, f.blocks, f.edges and f.calls cost one table per element: ~80 k
 * for sqlite, which was most of an arcs report's time.  While the function's
 * graph is still only in C (lp_graph_pending: no collector has read or set
 * it), the columns are filled from lp_graph.c's arrays; otherwise from f's
 * tables, so that what a collector changed there is what it reads.  A field
 * that is nil in the tables (an unknown count, a call without a callee) is
 * false in its column, so that every column of a list has the list's length. */
#include "lp_columns.h"

#include <lauxlib.h>

#include "lp_graph.h"
#include "reloc.h"

enum { MAX_FIELDS = 8 };

static const char *block_fields[] = {"address", "size", "instructions", "count", "side_entries", NULL};
static const char *edge_fields[] = {"from", "to", "kind", "branch", "target", "count", "measured", NULL};
static const char *call_fields[] = {"site", "target", "callee", "count", NULL};

/* Pushes one empty column of N elements per name of FIELDS; returns the stack
 * index of the first. */
static int push_columns(lua_State *L, const char **fields, lua_Integer n) {
  int first = lua_gettop(L) + 1;
  luaL_checkstack(L, MAX_FIELDS + LUA_MINSTACK, "graph_columns");
  for (const char **f = fields; *f; f++) lua_createtable(L, (int)n, 0);
  return first;
}

/* Pops the columns from FIRST up into a new table, by the names of FIELDS,
 * and sets it as field NAME of the table at index OUT. */
static void set_columns(lua_State *L, int out, const char *name, const char **fields, int first) {
  int n = 0;
  while (fields[n]) n++;
  lua_createtable(L, 0, n);
  for (int k = 0; k < n; k++) {
    lua_pushvalue(L, first + k);
    lua_setfield(L, -2, fields[k]);
  }
  lua_setfield(L, out, name);
  lua_settop(L, first - 1);
}

/* Column k, element i = the value on top (nil becomes false). */
static void put(lua_State *L, int first, int k, lua_Integer i) {
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    lua_pushboolean(L, 0);
  }
  lua_rawseti(L, first + k, i);
}

static void put_int(lua_State *L, int first, int k, lua_Integer i, lua_Integer v) {
  lua_pushinteger(L, v);
  lua_rawseti(L, first + k, i);
}

static void put_known(lua_State *L, int first, int k, lua_Integer i, bool known, lua_Integer v) {
  if (known) lua_pushinteger(L, v);
  else lua_pushboolean(L, 0);
  lua_rawseti(L, first + k, i);
}

/* {=== from the graph in C ===*/

static void blocks_from_graph(lua_State *L, int out, const lp_graph *g, const lp_graph_fn *gf) {
  int c = push_columns(L, block_fields, gf->nblocks);
  for (uint32_t b = 0; b < gf->nblocks; b++) {
    const lp_graph_block *gb = &g->blocks[gf->first_block + b];
    lua_Integer i = b + 1;
    put_int(L, c, 0, i, (lua_Integer)gb->addr);
    put_int(L, c, 1, i, gb->size);
    put_int(L, c, 2, i, gb->ninsns);
    put_known(L, c, 3, i, gf->block_counts, (lua_Integer)gb->count);
    put_known(L, c, 4, i, gb->side, (lua_Integer)gb->side_entries);
  }
  set_columns(L, out, "blocks", block_fields, c);
}

static void edges_from_graph(lua_State *L, int out, const lp_graph *g, const lp_graph_fn *gf) {
  int kinds = lua_gettop(L) + 1; /* each kind's string made once, not once per edge */
  luaL_checkstack(L, RELOC_EDGE_ESCAPE + 2, "graph_columns");
  for (int k = 0; k <= RELOC_EDGE_ESCAPE + 1; k++) lua_pushstring(L, lp_graph_edge_kind((uint8_t)k));
  int c = push_columns(L, edge_fields, gf->nedges);
  for (uint32_t e = 0; e < gf->nedges; e++) {
    const lp_graph_edge *ge = &g->edges[gf->first_edge + e];
    lua_Integer i = e + 1;
    put_int(L, c, 0, i, ge->from + 1);
    put_int(L, c, 1, i, ge->to == LP_GRAPH_NONE ? 0 : (lua_Integer)ge->to + 1);
    lua_pushvalue(L, kinds + (ge->kind <= RELOC_EDGE_ESCAPE ? ge->kind : RELOC_EDGE_ESCAPE + 1));
    lua_rawseti(L, c + 2, i);
    put_int(L, c, 3, i, (lua_Integer)ge->branch);
    put_int(L, c, 4, i, (lua_Integer)ge->target);
    put_known(L, c, 5, i, gf->edge_counts, (lua_Integer)ge->count);
    put_known(L, c, 6, i, ge->measured_known, (lua_Integer)ge->measured);
  }
  set_columns(L, out, "edges", edge_fields, c);
  lua_settop(L, kinds - 1);
}

static void calls_from_graph(lua_State *L, int out, const lp_graph *g, const lp_graph_fn *gf) {
  int c = push_columns(L, call_fields, gf->ncalls);
  for (uint32_t k = 0; k < gf->ncalls; k++) {
    const lp_graph_call *gc = &g->calls[gf->first_call + k];
    lua_Integer i = k + 1;
    put_int(L, c, 0, i, (lua_Integer)gc->site);
    put_int(L, c, 1, i, (lua_Integer)gc->target);
    if (gc->callee != LP_GRAPH_NONE) lua_pushstring(L, g->strings + gc->callee);
    else lua_pushnil(L);
    put(L, c, 2, i);
    put_int(L, c, 3, i, (lua_Integer)gc->count);
  }
  set_columns(L, out, "calls", call_fields, c);
}

/* }=== */

/* The list on top (f.blocks, f.edges or f.calls: an array of tables),
 * popped, as columns named FIELDS in field NAME of the table at OUT. */
static void from_list(lua_State *L, int out, const char *name, const char **fields) {
  int list = lua_gettop(L);
  lua_Integer n = (lua_Integer)lua_rawlen(L, list);
  int c = push_columns(L, fields, n);
  for (lua_Integer i = 1; i <= n; i++) {
    if (lua_rawgeti(L, list, i) != LUA_TTABLE)
      luaL_error(L, "graph_columns: f.%s[%d] is %s, not a table", name, (int)i, luaL_typename(L, -1));
    for (int k = 0; fields[k]; k++) {
      lua_getfield(L, -1, fields[k]);
      put(L, c, k, i);
    }
    lua_pop(L, 1);
  }
  set_columns(L, out, name, fields, c);
  lua_pop(L, 1); /* the list */
}

/* lazyprobe.graph_columns(f) -> { blocks =, edges =, calls = } or nil when f
 * has no graph (no f.blocks); calls only when f.calls exists. */
static int l_graph_columns(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 1);
  const lp_graph *g;
  const lp_graph_fn *gf = lp_graph_pending(L, 1, &g);
  if (gf && !gf->graph) {
    lua_pushnil(L);
    return 1;
  }
  if (!gf) { /* made tables already (or set by the collector): from them */
    lua_getfield(L, 1, "blocks");
    bool graph = lua_istable(L, -1);
    lua_pop(L, 1);
    if (!graph) {
      lua_pushnil(L);
      return 1;
    }
  }
  lua_createtable(L, 0, 3);
  int out = lua_gettop(L);
  static const char *names[] = {"blocks", "edges", "calls"};
  static const char **fields[] = {block_fields, edge_fields, call_fields};
  for (int l = 0; l < 3; l++) {
    lua_pushstring(L, names[l]);
    bool set = lua_rawget(L, 1) != LUA_TNIL; /* a collector's own list wins */
    if (!set && !gf) {
      lua_pop(L, 1);
      lua_getfield(L, 1, names[l]);
      set = !lua_isnil(L, -1);
    }
    if (set && !lua_istable(L, -1)) luaL_error(L, "graph_columns: f.%s is not a table", names[l]);
    if (set) {
      from_list(L, out, names[l], fields[l]);
      continue;
    }
    lua_pop(L, 1);
    if (!gf) continue; /* no such list */
    if (l == 0) blocks_from_graph(L, out, g, gf);
    else if (l == 1) edges_from_graph(L, out, g, gf);
    else if (gf->calls) calls_from_graph(L, out, g, gf);
  }
  return 1;
}

const luaL_Reg lp_columns_library[] = {{"graph_columns", l_graph_columns}, {NULL, NULL}};
