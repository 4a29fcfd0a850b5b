/* lp_columns.c — lazyprobe.graph_columns(f): a function's blocks, edges and
 * call sites as columns, one array per field, instead of a table per element.
 *
 * As tables, f.blocks, f.edges and f.calls cost one table per element: ~80 k
 * for sqlite, which was most of an arcs report's time.  While the function's
 * graph is still only in C (lp_graph_pending: no collector has read or set
 * it), each column is made from lp_graph.c's arrays when it is first read;
 * otherwise all are made from f's tables at once, so that what a collector
 * changed there is what it reads.  A field
 * that is nil in the tables (an unknown count, a call without a callee) is
 * false in its column, so that every column of a list has the list's length. */
#include "lp_columns.h"

#include <lauxlib.h>
#include <string.h>

#include "lp_graph.h"

enum { MAX_FIELDS = 8 };

static const char *block_fields[] = {"address", "size", "instructions", "count", "side_entries", "escapes", NULL};
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

/* {=== from the graph in C, a column when first read ===
 *
 * A list's table holds no column at first; its metatable's __index makes the
 * one read from lp_graph.c's arrays and keeps it there.  A report reads few of
 * the fields (fdata.lua: a block's address, not its size, instructions, count
 * or side entries), and making the others was a third of the time it spent
 * on columns.  The graph was untouched when graph_columns was called, and C's
 * arrays never change: a column made later holds what it would have held
 * then. */

enum { BLOCKS, EDGES, CALLS };
static const char **list_fields[] = {block_fields, edge_fields, call_fields};

/* Pushes column K of list LIST of function GF of G. */
static void push_graph_column(lua_State *L, const lp_graph *g, const lp_graph_fn *gf, int list, int k) {
  if (list == BLOCKS) {
    lua_createtable(L, (int)gf->nblocks, 0);
    for (uint32_t b = 0; b < gf->nblocks; b++) {
      const lp_graph_block *gb = &g->blocks[gf->first_block + b];
      lua_Integer i = b + 1;
      switch (k) {
      case 0: put_int(L, -2, 0, i, (lua_Integer)gb->addr); break;
      case 1: put_int(L, -2, 0, i, gb->size); break;
      case 2: put_int(L, -2, 0, i, gb->ninsns); break;
      case 3: put_known(L, -2, 0, i, gf->block_counts, (lua_Integer)gb->count); break;
      case 4: put_known(L, -2, 0, i, gb->side, (lua_Integer)gb->side_entries); break;
      default: {
        uint64_t escapes = 0;
        bool known = lp_graph_escapes(g, gf, b, &escapes);
        put_known(L, -2, 0, i, known, (lua_Integer)escapes);
        break;
      }
      }
    }
  } else if (list == EDGES) {
    lua_createtable(L, (int)gf->nedges, 0);
    for (uint32_t e = 0; e < gf->nedges; e++) {
      const lp_graph_edge *ge = &g->edges[gf->first_edge + e];
      lua_Integer i = e + 1;
      switch (k) {
      case 0: put_int(L, -2, 0, i, ge->from + 1); break;
      case 1: put_int(L, -2, 0, i, ge->to == LP_GRAPH_NONE ? 0 : (lua_Integer)ge->to + 1); break;
      case 2:
        lua_pushstring(L, lp_graph_edge_kind(ge->kind)); /* short strings: interned, not made again */
        lua_rawseti(L, -2, i);
        break;
      case 3: put_int(L, -2, 0, i, (lua_Integer)ge->branch); break;
      case 4: put_int(L, -2, 0, i, (lua_Integer)ge->target); break;
      case 5: put_known(L, -2, 0, i, gf->edge_counts, (lua_Integer)ge->count); break;
      default: put_known(L, -2, 0, i, ge->measured_known, (lua_Integer)ge->measured); break;
      }
    }
  } else {
    lua_createtable(L, (int)gf->ncalls, 0);
    for (uint32_t c = 0; c < gf->ncalls; c++) {
      const lp_graph_call *gc = &g->calls[gf->first_call + c];
      lua_Integer i = c + 1;
      switch (k) {
      case 0: put_int(L, -2, 0, i, (lua_Integer)gc->site); break;
      case 1: put_int(L, -2, 0, i, (lua_Integer)gc->target); break;
      case 2:
        if (gc->callee != LP_GRAPH_NONE) lua_pushstring(L, g->strings + gc->callee);
        else lua_pushnil(L);
        put(L, -2, 0, i);
        break;
      default: put_int(L, -2, 0, i, (lua_Integer)gc->count); break;
      }
    }
  }
}

/* __index(list, key) of a list from the graph in C; upvalues: the graphs'
 * userdata (kept alive so), the function's index in it, the list. */
static int l_graph_column(lua_State *L) {
  lp_graph *g = lua_touserdata(L, lua_upvalueindex(1));
  lua_Integer id = lua_tointeger(L, lua_upvalueindex(2));
  int list = (int)lua_tointeger(L, lua_upvalueindex(3));
  if (lua_type(L, 2) != LUA_TSTRING) return 0;
  const char *key = lua_tostring(L, 2);
  for (int k = 0; list_fields[list][k]; k++)
    if (!strcmp(key, list_fields[list][k])) {
      push_graph_column(L, g, lp_graph_fn_at(L, g, (uint32_t)id), list, k);
      lua_pushvalue(L, 2);
      lua_pushvalue(L, -2);
      lua_rawset(L, 1);
      return 1;
    }
  return 0;
}

/* The iterator of l_graph_columns_pairs: lua_next over the list's own fields. */
static int next_column(lua_State *L) {
  lua_settop(L, 2);
  if (lua_next(L, 1)) return 2;
  lua_pushnil(L);
  return 1;
}

/* __pairs(list) of a list from the graph in C (the same upvalues): every
 * column made, then its fields as they are. */
static int l_graph_columns_pairs(lua_State *L) {
  int list = (int)lua_tointeger(L, lua_upvalueindex(3));
  for (int k = 0; list_fields[list][k]; k++) {
    lua_getfield(L, 1, list_fields[list][k]); /* __index makes the column and keeps it */
    lua_pop(L, 1);
  }
  lua_pushcfunction(L, next_column);
  lua_pushvalue(L, 1);
  lua_pushnil(L);
  return 3;
}

/* Sets field NAME of the table at OUT to an empty list whose columns are
 * made when read (or all, by pairs), from function ID of the graphs'
 * userdata at GRAPHS. */
static void lazy_list(lua_State *L, int out, const char *name, int graphs, lua_Integer id, int list) {
  lua_createtable(L, 0, 8);
  lua_createtable(L, 0, 2);
  for (int m = 0; m < 2; m++) {
    lua_pushvalue(L, graphs);
    lua_pushinteger(L, id);
    lua_pushinteger(L, list);
    lua_pushcclosure(L, m ? l_graph_columns_pairs : l_graph_column, 3);
    lua_setfield(L, -2, m ? "__pairs" : "__index");
  }
  lua_setmetatable(L, -2);
  lua_setfield(L, out, name);
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
  int out = lua_gettop(L), graphs = 0;
  static const char *names[] = {"blocks", "edges", "calls"};
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
      from_list(L, out, names[l], list_fields[l]);
      continue;
    }
    lua_pop(L, 1);
    if (!gf || (l == CALLS && !gf->calls)) continue; /* no such list */
    if (!graphs) { /* the graphs' userdata, which lp_graph_pending found */
      lua_getmetatable(L, 1);
      lua_getfield(L, -1, "__graphs");
      lua_replace(L, -2);
      graphs = lua_gettop(L);
    }
    lazy_list(L, out, names[l], graphs, gf - g->fns, l);
  }
  lua_settop(L, out);
  return 1;
}

const luaL_Reg lp_columns_library[] = {{"graph_columns", l_graph_columns}, {NULL, NULL}};
