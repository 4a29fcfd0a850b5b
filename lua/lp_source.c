/* lp_source.c — one function's counts at the level of its source lines, and
 * the whole run's gathered by source file, for line-oriented report writers
 * (collectors/lib/lcov.lua):
 *
 *   lazyprobe.line_counts(f)    how often each of its source lines ran
 *   lazyprobe.branch_counts(f)  its conditional branch points, with how often
 *                               each way out was taken (for one that never
 *                               ran, its conditional jumps read from its code,
 *                               graph or not: the same whichever were copied)
 *   lazyprobe.conditional_branches(f)  those jumps' addresses
 *   lazyprobe.source_files()    a table the two are added to function by
 *                               function, read back file by file (as
 *                               columns, or written in a format)
 *
 * Both read the function table of the run (f.module, f.address, f.size,
 * f.count, f.blocks, f.edges: counts merged over processes, or set by the
 * collector itself) and the module's DWARF line table (lp_lua_module_lines).
 * The rules are in docs/COLLECTORS.md; tests/collectors/source_ref.lua states
 * them again in plain Lua and is the oracle these are checked against.  In C
 * because a coverage report of sqlite maps ~30 k blocks onto ~100 k line
 * rows and ~20 k branch points: in Lua that was most of the report's time
 * (and gathering them by file in Lua tables half of what was left). */
#include "lp_source.h"

#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#include "lines.h"
#include "lp_format.h"
#include "lp_graph.h"
#include "lp_sort.h"
#include "reloc.h"

typedef struct src_block {
  uint64_t addr, size;
  lua_Integer count;
  bool counted; /* count is known */
} src_block;

typedef struct src_edge {
  lua_Integer from, to, count; /* from/to 1-based blocks, to 0: out of the function */
  uint64_t branch;
  bool counted;
  bool way; /* kind taken, table or fall: a way out of a branch point */
  bool fall;
} src_edge;

typedef struct src_fn {
  uint64_t addr, end, size;
  lua_Integer count;
  bool never_ran; /* its count 0 and none of its blocks ran */
  const core_image *image; /* its module's code, for one that never ran (branch_counts) */
  src_block *blocks; /* NULL: no blocks field */
  size_t nblocks;
  src_edge *edges; /* NULL: no edges field */
  size_t nedges;
  const core_lines *lines; /* the module's */
  const core_line *rows;  /* those in [addr, end) */
  size_t nrows;
} src_fn;

/* t[k] when an integer (t at index T: a table, else nothing is read). */
static lua_Integer int_field(lua_State *L, int t, const char *k, bool *present) {
  if (lua_type(L, t) != LUA_TTABLE) { /* a malformed graph: read as empty, never raise */
    if (present) *present = false;
    return 0;
  }
  lua_getfield(L, t, k);
  int is = 0;
  lua_Integer v = lua_tointegerx(L, -1, &is);
  lua_pop(L, 1);
  if (present) *present = is;
  return is ? v : 0;
}

static void free_fn(src_fn *f) {
  free(f->blocks);
  free(f->edges);
}

/* Copies f's blocks (when WITH_EDGES, its edges too) from its graph in C. */
static bool copy_graph(const lp_graph *g, const lp_graph_fn *gf, src_fn *f, bool with_edges) {
  if (!gf->graph) return true;
  f->nblocks = gf->nblocks;
  f->blocks = malloc((f->nblocks ? f->nblocks : 1) * sizeof *f->blocks);
  if (!f->blocks) return false;
  for (size_t b = 0; b < f->nblocks; b++) {
    const lp_graph_block *gb = &g->blocks[gf->first_block + b];
    f->blocks[b] = (src_block){gb->addr, gb->size, (lua_Integer)gb->count, gf->block_counts};
  }
  if (!with_edges) return true;
  f->nedges = gf->nedges;
  f->edges = malloc((f->nedges ? f->nedges : 1) * sizeof *f->edges);
  if (!f->edges) return false;
  for (size_t e = 0; e < f->nedges; e++) {
    const lp_graph_edge *ge = &g->edges[gf->first_edge + e];
    bool fall = ge->kind == RELOC_EDGE_FALL;
    f->edges[e] = (src_edge){ge->from + 1,
                             ge->to == LP_GRAPH_NONE ? 0 : (lua_Integer)ge->to + 1,
                             (lua_Integer)ge->count,
                             ge->branch,
                             gf->edge_counts,
                             fall || ge->kind == RELOC_EDGE_TAKEN || ge->kind == RELOC_EDGE_TABLE,
                             fall};
  }
  return true;
}

/* Reads f's blocks (when WITH_EDGES, its edges too) from the table at index
 * T, or from its graph in C while the collector has not read it; false when
 * out of memory. */
static bool read_graph(lua_State *L, int t, src_fn *f, bool with_edges) {
  const lp_graph *g;
  const lp_graph_fn *gf = lp_graph_pending(L, t, &g);
  if (gf) return copy_graph(g, gf, f, with_edges);
  if (lua_getfield(L, t, "blocks") == LUA_TTABLE) {
    f->nblocks = (size_t)luaL_len(L, -1);
    f->blocks = malloc((f->nblocks ? f->nblocks : 1) * sizeof *f->blocks);
    if (!f->blocks) return false;
    for (size_t b = 0; b < f->nblocks; b++) {
      src_block *sb = &f->blocks[b];
      lua_rawgeti(L, -1, (lua_Integer)b + 1);
      int bt = lua_gettop(L);
      sb->addr = (uint64_t)int_field(L, bt, "address", NULL);
      sb->size = (uint64_t)int_field(L, bt, "size", NULL);
      sb->count = int_field(L, bt, "count", &sb->counted);
      lua_pop(L, 1);
    }
  }
  lua_pop(L, 1);
  if (!with_edges) return true;
  if (lua_getfield(L, t, "edges") == LUA_TTABLE) {
    f->nedges = (size_t)luaL_len(L, -1);
    f->edges = malloc((f->nedges ? f->nedges : 1) * sizeof *f->edges);
    if (!f->edges) return false;
    for (size_t e = 0; e < f->nedges; e++) {
      src_edge *se = &f->edges[e];
      lua_rawgeti(L, -1, (lua_Integer)e + 1);
      int et = lua_gettop(L);
      se->from = int_field(L, et, "from", NULL);
      se->to = int_field(L, et, "to", NULL);
      se->branch = (uint64_t)int_field(L, et, "branch", NULL);
      se->count = int_field(L, et, "count", &se->counted);
      if (lua_type(L, et) == LUA_TTABLE) lua_getfield(L, et, "kind");
      else lua_pushnil(L);
      const char *kind = lua_tostring(L, -1);
      kind = kind ? kind : "";
      se->fall = !strcmp(kind, "fall");
      se->way = se->fall || !strcmp(kind, "taken") || !strcmp(kind, "table");
      lua_pop(L, 2);
    }
  }
  lua_pop(L, 1);
  return true;
}

/* Reads the function at index ARG and its line rows; pushes the module's file
 * paths table.  Returns 0 when it did, else the number of values pushed for
 * the caller to return (nil, message). */
static int read_fn(lua_State *L, int arg, src_fn *f, bool with_edges) {
  luaL_checktype(L, arg, LUA_TTABLE);
  memset(f, 0, sizeof *f);
  lua_getfield(L, arg, "module");
  const char *module = lua_tostring(L, -1);
  if (!module) return luaL_argerror(L, arg, "a function of the run: no module");
  f->addr = (uint64_t)int_field(L, arg, "address", NULL);
  f->count = int_field(L, arg, "count", NULL);
  const core_lines *lines = lp_lua_module_lines(L, module); /* first: without, no graph is read */
  if (lines && !read_graph(L, arg, f, with_edges)) {
    free_fn(f);
    return luaL_error(L, "out of memory");
  }
  f->size = (uint64_t)int_field(L, arg, "size", NULL);
  f->end = f->addr + f->size; /* graph.function_end */
  f->never_ran = f->count == 0;
  for (size_t b = 0; b < f->nblocks; b++) {
    if (f->blocks[b].addr + f->blocks[b].size > f->end) f->end = f->blocks[b].addr + f->blocks[b].size;
    if (f->blocks[b].counted && f->blocks[b].count > 0) f->never_ran = false;
  }
  if (lines && with_edges && f->never_ran) f->image = lp_lua_module_image(L, module);
  if (f->end == f->addr) f->end = f->addr + 1;
  f->lines = lines;
  if (lines) {
    f->nrows = core_lines_range(lines, f->addr, f->end, &f->rows);
    if (f->nrows == 0) {
      lua_pop(L, 1);
      lua_pushfstring(L, "no line rows in 0x%I-0x%I", (lua_Integer)f->addr, (lua_Integer)f->end);
    }
  }
  lua_remove(L, -2); /* the module name */
  if (!lines || f->nrows == 0) {
    free_fn(f);
    lua_pushnil(L);
    lua_insert(L, -2);
    return 2;
  }
  return 0;
}

/* The row at or below ADDR among f's rows, or -1. */
static long row_at(const src_fn *f, uint64_t addr) {
  if (f->nrows == 0 || f->rows[0].addr > addr) return -1;
  size_t lo = 0, hi = f->nrows - 1;
  while (lo < hi) {
    size_t mid = (lo + hi + 1) / 2;
    if (f->rows[mid].addr <= addr) lo = mid;
    else hi = mid - 1;
  }
  return (long)lo;
}

/* The row a function's entry belongs to: the one covering the entry when it
 * has a line, else the first with a line; -1 when no row has one. */
static long entry_row(const src_fn *f) {
  long i = row_at(f, f->addr);
  if (i >= 0 && f->rows[i].line > 0) return i;
  for (size_t k = 0; k < f->nrows; k++)
    if (f->rows[k].line > 0) return (long)k;
  return -1;
}

typedef struct line_count {
  uint64_t key; /* the file's rank by path, then the line (low 32 bits): the columns' order */
  uint32_t file;
  lua_Integer count;
} line_count;

/* Where a function's line counts go (collect_lines): PUT a row's count, the
 * largest of one line's kept; HAS: a row's line was put. */
typedef struct line_sink {
  void (*put)(struct line_sink *s, const core_line *row, lua_Integer count);
  bool (*has)(struct line_sink *s, const core_line *row);
  bool failed;
} line_sink;

typedef struct line_set {
  line_sink sink; /* first: the set is its sink */
  line_count *v;
  size_t n, cap;
  const uint32_t *ranks; /* the module's file ranks by path */
} line_set;

static uint64_t line_key(const line_set *s, const core_line *row) {
  return (uint64_t)s->ranks[row->file] << 32 | row->line;
}

/* Room for NEED elements in *V (*CAP of them now); false when out of memory. */
static bool grow(line_count **v, size_t *cap, size_t need) {
  if (need <= *cap) return true;
  size_t c = *cap ? *cap : 64;
  while (c < need) c *= 2;
  line_count *grown = realloc(*v, c * sizeof *grown);
  if (!grown) return false;
  *v = grown;
  *cap = c;
  return true;
}

static void put(line_sink *sink, const core_line *row, lua_Integer count) {
  line_set *s = (line_set *)sink;
  if (row->line == 0) return;
  if (!grow(&s->v, &s->cap, s->n + 1)) {
    s->sink.failed = true;
    return;
  }
  s->v[s->n++] = (line_count){line_key(s, row), row->file, count};
}

/* A function's rows come nearly in line order (a qsort with a comparator
 * was a tenth of a coverage report). */
static bool key_before(const line_count *a, const line_count *b) { return a->key < b->key; }
LP_MERGE_SORT(sort_by_key, line_count, key_before)

/* Sorts by file path and line and keeps the largest count of each. */
static void keep_max(line_set *s) {
  if (s->n == 0) return;
  line_count *tmp = malloc(s->n * sizeof *tmp);
  if (!tmp) {
    s->sink.failed = true;
    return;
  }
  sort_by_key(s->v, tmp, s->n);
  free(tmp);
  size_t out = 0;
  for (size_t k = 1; k < s->n; k++) {
    if (s->v[k].key == s->v[out].key) {
      if (s->v[k].count > s->v[out].count) s->v[out].count = s->v[k].count;
    } else {
      s->v[++out] = s->v[k];
    }
  }
  s->n = out + 1;
}

/* Was ROW's line put in S? */
static bool has(line_sink *sink, const core_line *row) {
  line_set *s = (line_set *)sink;
  keep_max(s);
  uint64_t key = line_key(s, row);
  size_t lo = 0, hi = s->n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (s->v[mid].key < key) lo = mid + 1;
    else hi = mid;
  }
  return lo < s->n && s->v[lo].key == key;
}

static const src_block *sort_blocks; /* the sort's comparison has no context argument */

static bool addr_before(const size_t *a, const size_t *b) { return sort_blocks[*a].addr < sort_blocks[*b].addr; }
LP_MERGE_SORT(sort_by_addr, size_t, addr_before)

/* Each row inside a block of f, with that block's count. */
static void put_blocks(line_sink *s, const src_fn *f) {
  size_t *order = malloc((f->nblocks ? 2 * f->nblocks : 1) * sizeof *order); /* and the sort's room */
  if (!order) {
    s->failed = true;
    return;
  }
  for (size_t b = 0; b < f->nblocks; b++) order[b] = b;
  sort_blocks = f->blocks;
  sort_by_addr(order, order + f->nblocks, f->nblocks);
  size_t i = 0, n = f->nrows;
  for (size_t k = 0; k < f->nblocks; k++) {
    const src_block *b = &f->blocks[order[k]];
    if (!b->counted) continue;
    uint64_t lo = b->addr, hi = b->addr + b->size;
    while (i + 1 < n && f->rows[i + 1].addr <= lo) i++;
    for (size_t j = i; j < n && f->rows[j].addr < hi; j++) /* rows that start in it or cover its start */
      if (f->rows[j].addr >= lo || j == n - 1 || f->rows[j + 1].addr > lo) s->put(s, &f->rows[j], b->count);
  }
  free(order);
}

/* F's lines into S: each row's count, the largest of a line's kept; *ENTRY
 * the entry's row.  NULL, else why there is no answer (nothing put). */
static const char *collect_lines(const src_fn *f, line_sink *s, long *entry) {
  *entry = entry_row(f);
  if (*entry < 0) return "no line row with a line number";
  if (f->blocks) put_blocks(s, f);
  else if (f->count == 0)
    for (size_t j = 0; j < f->nrows; j++) s->put(s, &f->rows[j], 0);
  /* the entry line: its block's count, else the function's (it ran without blocks) */
  const core_line *er = &f->rows[*entry];
  if (!s->has(s, er)) s->put(s, er, f->count > 0 ? f->count : 0);
  return NULL;
}

/* lazyprobe.line_counts(f) -> { file = {...}, line = {...}, count = {...},
 * entry_file =, entry_line = }, or nil, message. */
static int l_line_counts(lua_State *L) {
  src_fn f;
  int pushed = read_fn(L, 1, &f, false);
  if (pushed) return pushed;
  int files = lua_gettop(L);
  line_set s = {.sink = {put, has, false}, .ranks = f.lines->file_rank};
  long entry;
  const char *why = collect_lines(&f, &s.sink, &entry);
  if (!why) keep_max(&s); /* sorted by file and line, the largest count of each */
  const core_line *er = why ? NULL : &f.rows[entry];
  uint32_t entry_file = er ? er->file : 0, entry_line = er ? er->line : 0;
  free_fn(&f);
  if (why) {
    lua_pushnil(L);
    lua_pushstring(L, why);
    return 2;
  }
  if (s.sink.failed) {
    free(s.v);
    return luaL_error(L, "out of memory");
  }
  lua_createtable(L, 0, 5);
  lua_createtable(L, (int)s.n, 0);
  for (size_t k = 0; k < s.n; k++) {
    lua_rawgeti(L, files, (lua_Integer)s.v[k].file + 1);
    lua_rawseti(L, -2, (lua_Integer)k + 1);
  }
  lua_setfield(L, -2, "file");
  lua_createtable(L, (int)s.n, 0);
  for (size_t k = 0; k < s.n; k++) {
    lua_pushinteger(L, (uint32_t)s.v[k].key);
    lua_rawseti(L, -2, (lua_Integer)k + 1);
  }
  lua_setfield(L, -2, "line");
  lua_createtable(L, (int)s.n, 0);
  for (size_t k = 0; k < s.n; k++) {
    lua_pushinteger(L, s.v[k].count);
    lua_rawseti(L, -2, (lua_Integer)k + 1);
  }
  lua_setfield(L, -2, "count");
  lua_rawgeti(L, files, (lua_Integer)entry_file + 1);
  lua_setfield(L, -2, "entry_file");
  lua_pushinteger(L, entry_line);
  lua_setfield(L, -2, "entry_line");
  free(s.v);
  return 1;
}

/* How often edge E was taken: *DASH when its block never ran, else its own
 * count, else its target's count when it is the target's only way in (block 1
 * never: the entry comes in too).  False when that is not known. */
static bool taken(const src_fn *f, const src_edge *e, const uint32_t *preds, lua_Integer *n, bool *dash) {
  const src_block *from = e->from >= 1 && (size_t)e->from <= f->nblocks ? &f->blocks[e->from - 1] : NULL;
  *dash = false;
  if (from && from->counted && from->count == 0) {
    *dash = true;
    return true;
  }
  if (e->counted) {
    *n = e->count;
    return true;
  }
  if (e->to > 1 && (size_t)e->to <= f->nblocks && preds[e->to - 1] == 1 && f->blocks[e->to - 1].counted) {
    *n = f->blocks[e->to - 1].count;
    return true;
  }
  return false;
}

typedef struct branch_way {
  uint32_t file, line, point;
  lua_Integer count;
  bool dash;
} branch_way;

/* Appends the ways out of the branch point of one block, whose edges are
 * E[0..N) (edge indices in edge order), when it has two or more and all are
 * known: its taken and table edges in edge order, then its fall-throughs. */
static bool add_point(const src_fn *f, const size_t *e, size_t n, const uint32_t *preds, branch_way **v,
                      size_t *nv, size_t *cap, uint32_t *points) {
  size_t ways = 0;
  uint64_t at = 0;
  bool have_at = false, have_taken = false;
  for (size_t k = 0; k < n; k++) {
    const src_edge *se = &f->edges[e[k]];
    if (!se->way) continue;
    ways++;
    if (!se->fall && !have_taken) { /* the branch of the first taken edge, else of the first fall */
      at = se->branch;
      have_taken = have_at = true;
    } else if (!have_at) {
      at = se->branch;
      have_at = true;
    }
  }
  if (ways < 2) return true;
  long r = row_at(f, at);
  if (r < 0 || f->rows[r].line == 0) return true;
  if (*nv + ways > *cap) {
    size_t c = (*nv + ways) * 2;
    branch_way *grown = realloc(*v, c * sizeof *grown);
    if (!grown) return false;
    *v = grown;
    *cap = c;
  }
  size_t first = *nv;
  uint32_t point = *points + 1;
  for (int pass = 0; pass < 2; pass++) /* taken and table edges first, falls last */
    for (size_t k = 0; k < n; k++) {
      const src_edge *se = &f->edges[e[k]];
      if (!se->way || se->fall != (pass == 1)) continue;
      branch_way *w = &(*v)[(*nv)++];
      *w = (branch_way){f->rows[r].file, f->rows[r].line, point, 0, false};
      if (!taken(f, se, preds, &w->count, &w->dash)) {
        *nv = first; /* a way not known: the point is left out whole */
        return true;
      }
    }
  *points = point;
  return true;
}

static const src_edge *sort_edges; /* the sort's comparison has no context argument */

static bool from_before(const size_t *a, const size_t *b) { return sort_edges[*a].from < sort_edges[*b].from; }
LP_MERGE_SORT(sort_by_from, size_t, from_before) /* stable: edge order within a block */

/* The addresses of the conditional jumps of the SIZE bytes at ADDR in IMG:
 * how many, in *AT, which is NEAR (256 of them) when they fit, else
 * allocated (NULL when that failed).  One reading of the bytes for most. */
static size_t conditional_branches(const core_image *img, uint64_t addr, uint64_t size, uint64_t near[256],
                                   uint64_t **at) {
  reloc_function_desc code = {.code = img->bytes, .code_base = img->base, .code_size = img->size};
  size_t n = reloc_conditional_branches(&code, addr, addr + size, near, 256);
  *at = near;
  if (n > 256 && (*at = malloc(n * sizeof **at))) reloc_conditional_branches(&code, addr, addr + size, *at, n);
  return n;
}

/* The branch points of F, which never ran: its conditional branches in
 * address order, read from its module's code one instruction after another
 * (the same whether or not it has a graph: a callee relocated ahead of its
 * first call has one), each with two ways, "-". */
static bool never_run_branches(const src_fn *f, branch_way **v, size_t *n) {
  if (!f->image) return true;
  uint64_t near[256], *at;
  size_t count = conditional_branches(f->image, f->addr, f->size, near, &at);
  *v = malloc((count ? 2 * count : 1) * sizeof **v);
  if (!at || !*v) {
    if (at != near) free(at);
    return false;
  }
  uint32_t points = 0;
  for (size_t k = 0; k < count; k++) {
    long r = row_at(f, at[k]);
    if (r < 0 || f->rows[r].line == 0) continue;
    points++;
    for (int way = 0; way < 2; way++) (*v)[(*n)++] = (branch_way){f->rows[r].file, f->rows[r].line, points, 0, true};
  }
  if (at != near) free(at);
  return true;
}

/* lazyprobe.conditional_branches(f) -> the addresses of f's conditional
 * branches read from its module's code one instruction after another over
 * [f.address, f.address + f.size), or nil, message. */
static int l_conditional_branches(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_getfield(L, 1, "module");
  const char *module = lua_tostring(L, -1);
  if (!module) return luaL_argerror(L, 1, "a function of the run: no module");
  uint64_t addr = (uint64_t)int_field(L, 1, "address", NULL), size = (uint64_t)int_field(L, 1, "size", NULL);
  const core_image *img = lp_lua_module_image(L, module);
  if (!img) {
    lua_pushnil(L);
    lua_pushfstring(L, "%s: its code cannot be read", module);
    return 2;
  }
  uint64_t near[256], *at;
  size_t n = conditional_branches(img, addr, size, near, &at);
  if (!at) return luaL_error(L, "out of memory");
  lua_createtable(L, (int)n, 0);
  for (size_t k = 0; k < n; k++) {
    lua_pushinteger(L, (lua_Integer)at[k]);
    lua_rawseti(L, -2, (lua_Integer)k + 1);
  }
  if (at != near) free(at);
  return 1;
}

/* F's branch points, their ways out in *V[0..*N); false when out of memory. */
static bool collect_branches(const src_fn *f, branch_way **v, size_t *n) {
  *v = NULL;
  *n = 0;
  if (f->never_ran) return never_run_branches(f, v, n);
  if (!f->blocks || !f->edges) return true;
  size_t cap = 0;
  uint32_t points = 0;
  uint32_t *preds = calloc(f->nblocks ? f->nblocks : 1, sizeof *preds);
  size_t *order = malloc((f->nedges ? 2 * f->nedges : 1) * sizeof *order); /* and the sort's room */
  bool ok = preds && order;
  if (ok) {
    for (size_t e = 0; e < f->nedges; e++) {
      order[e] = e;
      if (f->edges[e].to >= 1 && (size_t)f->edges[e].to <= f->nblocks) preds[f->edges[e].to - 1]++;
    }
    sort_edges = f->edges;
    sort_by_from(order, order + f->nedges, f->nedges); /* a point per block, in block order */
    for (size_t k = 0, next; ok && k < f->nedges; k = next) {
      for (next = k + 1; next < f->nedges && f->edges[order[next]].from == f->edges[order[k]].from; next++) {}
      ok = add_point(f, order + k, next - k, preds, v, n, &cap, &points);
    }
  }
  free(order);
  free(preds);
  return ok;
}

/* lazyprobe.branch_counts(f) -> { file = {...}, line = {...}, point = {...},
 * taken = {...} }, one element per way out of a branch point, or nil,
 * message. */
static int l_branch_counts(lua_State *L) {
  src_fn f;
  int pushed = read_fn(L, 1, &f, true);
  if (pushed) return pushed;
  int files = lua_gettop(L);
  branch_way *v;
  size_t n;
  bool ok = collect_branches(&f, &v, &n);
  free_fn(&f);
  if (!ok) {
    free(v);
    return luaL_error(L, "out of memory");
  }
  lua_createtable(L, 0, 4);
  lua_createtable(L, (int)n, 0);
  for (size_t k = 0; k < n; k++) {
    lua_rawgeti(L, files, (lua_Integer)v[k].file + 1);
    lua_rawseti(L, -2, (lua_Integer)k + 1);
  }
  lua_setfield(L, -2, "file");
  lua_createtable(L, (int)n, 0);
  for (size_t k = 0; k < n; k++) {
    lua_pushinteger(L, v[k].line);
    lua_rawseti(L, -2, (lua_Integer)k + 1);
  }
  lua_setfield(L, -2, "line");
  lua_createtable(L, (int)n, 0);
  for (size_t k = 0; k < n; k++) {
    lua_pushinteger(L, v[k].point);
    lua_rawseti(L, -2, (lua_Integer)k + 1);
  }
  lua_setfield(L, -2, "point");
  lua_createtable(L, (int)n, 0);
  for (size_t k = 0; k < n; k++) {
    if (v[k].dash) lua_pushliteral(L, "-");
    else lua_pushinteger(L, v[k].count);
    lua_rawseti(L, -2, (lua_Integer)k + 1);
  }
  lua_setfield(L, -2, "taken");
  free(v);
  return 1;
}

/* {=== lazyprobe.source_files(): the run's counts gathered per source file ===*/

#define SOURCE_FILES "lazyprobe.source_files"

/* One source file's counts.  TOTAL, by line number (CAP of them): the counts
 * added over the functions that have the line, NO_LINE where none has it
 * (one array of 8 bytes a line: sqlite3.c has 240 k lines, 34 k with code,
 * and on this project's machines a page first touched costs 1-15 us).
 * ways: key line << 32 | the order they came in, file the branch point
 * (numbered over the run), count the times taken or -1 for "-" (line_count
 * elements, so that sort_by_key sorts them). */
#define NO_LINE LUA_MININTEGER /* no sum of counts is: a collector may set any count */

typedef struct src_file {
  lua_Integer *total;
  uint32_t cap, nlines;
  line_count *ways;
  size_t nways, capways;
} src_file;

/* A line of the function being added, each once, with its largest count. */
typedef struct file_line {
  uint32_t file, line;
  lua_Integer max;
} file_line;

/* A slot of the hash of touched lines: in use when its GEN is the table's. */
typedef struct find_slot {
  uint32_t gen, index;
} find_slot;

/* The userdata; its user value maps each path to its index + 1 and back.
 * TOUCHED lists the lines of the function being added, FIND (a hash of
 * file and line, FINDCAP slots, a power of two) gives their index; a new
 * function empties it by moving to the next GEN. */
typedef struct src_files {
  src_file *v;
  size_t n, cap;
  uint32_t points, ways; /* branch points and ways added so far */
  file_line *touched;
  size_t ntouched, captouched;
  find_slot *find;
  size_t findcap;
  uint32_t gen;
} src_files;


/* The index of the file whose path is at index P, added if new; PATHS is the
 * index of the user value table.  -1 when out of memory. */
static long file_index(lua_State *L, src_files *t, int paths, int p) {
  lua_pushvalue(L, p);
  if (lua_rawget(L, paths) == LUA_TNUMBER) {
    long i = (long)lua_tointeger(L, -1) - 1;
    lua_pop(L, 1);
    return i;
  }
  lua_pop(L, 1);
  if (t->n == t->cap) {
    size_t c = t->cap ? 2 * t->cap : 16;
    src_file *grown = realloc(t->v, c * sizeof *grown);
    if (!grown) return -1;
    t->v = grown;
    t->cap = c;
  }
  t->v[t->n] = (src_file){0};
  lua_pushvalue(L, p);
  lua_pushinteger(L, (lua_Integer)t->n + 1);
  lua_rawset(L, paths);
  lua_pushvalue(L, p);
  lua_rawseti(L, paths, (lua_Integer)t->n + 1);
  return (long)t->n++;
}

/* The run-wide index of module file ID (its path at FILES[ID + 1]); *LAST_ID
 * and *LAST keep the previous answer: a function's rows come file by file. */
static long module_file(lua_State *L, src_files *t, int paths, int files, uint32_t id, int64_t *last_id,
                        long *last) {
  if ((int64_t)id == *last_id) return *last;
  lua_rawgeti(L, files, (lua_Integer)id + 1);
  long i = file_index(L, t, paths, lua_gettop(L));
  lua_pop(L, 1);
  *last_id = id;
  *last = i;
  return i;
}

/* Room in SF for line LINE; false when out of memory. */
static bool line_room(src_file *sf, uint32_t line) {
  if (line < sf->cap) return true;
  uint32_t cap = sf->cap ? sf->cap : 256;
  while (cap <= line) cap *= 2;
  lua_Integer *total = realloc(sf->total, cap * sizeof *total);
  if (!total) return false;
  for (uint32_t l = sf->cap; l < cap; l++) total[l] = NO_LINE;
  sf->total = total;
  sf->cap = cap;
  return true;
}

static bool has_line(const src_file *sf, uint32_t line) { return line < sf->cap && sf->total[line] != NO_LINE; }

/* The slot of FIND where FILE's LINE is, or the empty one where it goes. */
static find_slot *find_line(const src_files *t, uint32_t file, uint32_t line) {
  size_t mask = t->findcap - 1;
  for (size_t h = ((uint64_t)file << 32 | line) * 0x9e3779b97f4a7c15u >> 40 & mask;; h = (h + 1) & mask) {
    find_slot *slot = &t->find[h];
    if (slot->gen != t->gen) return slot;
    const file_line *fl = &t->touched[slot->index];
    if (fl->file == file && fl->line == line) return slot;
  }
}

static bool in_use(const src_files *t, const find_slot *slot) { return slot->gen == t->gen; }

/* Empties TOUCHED and FIND for the next function. */
static void touched_clear(src_files *t) {
  t->ntouched = 0;
  if (++t->gen == 0) { /* a slot of generation 0 may be stale: all of them empty */
    if (t->find) memset(t->find, 0, t->findcap * sizeof *t->find);
    t->gen = 1;
  }
}

/* Room in TOUCHED and FIND for one more line (FIND at most half full). */
static bool touched_room(src_files *t) {
  if (t->ntouched == t->captouched) {
    size_t cap = t->captouched ? 2 * t->captouched : 256;
    file_line *grown = realloc(t->touched, cap * sizeof *grown);
    if (!grown) return false;
    t->touched = grown;
    t->captouched = cap;
  }
  if (2 * (t->ntouched + 1) <= t->findcap) return true;
  size_t cap = t->findcap ? 2 * t->findcap : 1024;
  find_slot *find = calloc(cap, sizeof *find); /* generation 0: empty (t->gen is never 0) */
  if (!find) return false;
  free(t->find);
  t->find = find;
  t->findcap = cap;
  for (size_t k = 0; k < t->ntouched; k++)
    *find_line(t, t->touched[k].file, t->touched[k].line) = (find_slot){t->gen, (uint32_t)k};
  return true;
}

/* The line sink of files:add: a function's lines, each once with its
 * largest count, listed in touched to be added up. */
typedef struct file_sink {
  line_sink sink; /* first: the file sink is its sink */
  lua_State *L;
  src_files *t;
  int paths, files; /* stack indices: the user value, the module's paths */
  int64_t last_id;  /* module_file's cache */
  long last;
} file_sink;

static src_file *sink_file(file_sink *fs, const core_line *row) {
  long i = module_file(fs->L, fs->t, fs->paths, fs->files, row->file, &fs->last_id, &fs->last);
  return i < 0 ? NULL : &fs->t->v[i];
}

static void put_file(line_sink *sink, const core_line *row, lua_Integer count) {
  file_sink *fs = (file_sink *)sink;
  src_files *t = fs->t;
  if (row->line == 0) return;
  src_file *sf = sink_file(fs, row);
  if (!sf || !touched_room(t)) {
    sink->failed = true;
    return;
  }
  uint32_t file = (uint32_t)(sf - t->v);
  find_slot *slot = find_line(t, file, row->line);
  if (in_use(t, slot)) {
    file_line *fl = &t->touched[slot->index];
    if (count > fl->max) fl->max = count;
    return;
  }
  *slot = (find_slot){t->gen, (uint32_t)t->ntouched};
  t->touched[t->ntouched++] = (file_line){file, row->line, count};
}

static bool has_file(line_sink *sink, const core_line *row) {
  file_sink *fs = (file_sink *)sink;
  src_file *sf = row->line && fs->t->findcap ? sink_file(fs, row) : NULL;
  return sf && in_use(fs->t, find_line(fs->t, (uint32_t)(sf - fs->t->v), row->line));
}

/* The files FIRST .. t->n - 1, new in this files:add, put in the order of
 * their paths, as line_counts(f) lists them (docs/COLLECTORS.md: paths() in
 * the order they came): they were added as f's rows met them.  Nothing of
 * theirs is in T yet but the indices the function's lines in TOUCHED hold
 * (FIND, keyed by them, is not read again before touched_clear). */
static void sort_new_files(lua_State *L, src_files *t, int paths, size_t first) {
  size_t n = t->n - first;
  if (n < 2) return;
  luaL_checkstack(L, (int)n, "too many source files");
  int base = lua_gettop(L);
  uint32_t *order = malloc(n * sizeof *order), *rank = malloc(n * sizeof *rank);
  if (!order || !rank) {
    free(order);
    free(rank);
    luaL_error(L, "out of memory");
    return;
  }
  for (size_t k = 0; k < n; k++) { /* path k at base + 1 + k; order by insertion: a function names few */
    lua_rawgeti(L, paths, (lua_Integer)(first + k) + 1);
    const char *path = lua_tostring(L, -1);
    size_t j = k;
    for (; j > 0 && strcmp(lua_tostring(L, base + 1 + (int)order[j - 1]), path) > 0; j--) order[j] = order[j - 1];
    order[j] = (uint32_t)k;
  }
  for (size_t r = 0; r < n; r++) {
    size_t k = order[r];
    rank[k] = (uint32_t)r;
    lua_pushvalue(L, base + 1 + (int)k);
    lua_pushinteger(L, (lua_Integer)(first + r) + 1);
    lua_rawset(L, paths);
    lua_pushvalue(L, base + 1 + (int)k);
    lua_rawseti(L, paths, (lua_Integer)(first + r) + 1);
  }
  for (size_t k = 0; k < t->ntouched; k++)
    if (t->touched[k].file >= first) t->touched[k].file = (uint32_t)first + rank[t->touched[k].file - first];
  free(order);
  free(rank);
  lua_settop(L, base);
}

/* files:add(f) -> entry_file, entry_line, or nil, message: f's line counts
 * (lazyprobe.line_counts) and branch points (lazyprobe.branch_counts) added
 * to the files they belong to. */
static int l_files_add(lua_State *L) {
  src_files *t = luaL_checkudata(L, 1, SOURCE_FILES);
  src_fn f;
  int pushed = read_fn(L, 2, &f, true);
  if (pushed) return pushed;
  int files = lua_gettop(L);
  lua_getiuservalue(L, 1, 1);
  int paths = lua_gettop(L);
  file_sink s = {{put_file, has_file, false}, L, t, paths, files, -1, 0};
  touched_clear(t);
  size_t known = t->n;
  long entry;
  const char *why = collect_lines(&f, &s.sink, &entry);
  if (!why && !s.sink.failed) sort_new_files(L, t, paths, known);
  branch_way *w = NULL;
  size_t nw = 0;
  bool ok = !why && !s.sink.failed && collect_branches(&f, &w, &nw);
  const core_line *er = why ? NULL : &f.rows[entry];
  uint32_t entry_file = er ? er->file : 0, entry_line = er ? er->line : 0;
  free_fn(&f);
  for (size_t k = 0; ok && k < t->ntouched; k++) { /* the function's largest counts added */
    const file_line *fl = &t->touched[k];
    src_file *sf = &t->v[fl->file];
    if (!(ok = line_room(sf, fl->line))) break;
    if (sf->total[fl->line] == NO_LINE) {
      sf->total[fl->line] = 0;
      sf->nlines++;
    }
    sf->total[fl->line] += fl->max;
  }
  int64_t last_id = -1;
  long last = 0;
  uint32_t points = 0;
  for (size_t k = 0; ok && k < nw; k++) {
    long i = module_file(L, t, paths, files, w[k].file, &last_id, &last);
    src_file *sf = i < 0 ? NULL : &t->v[i];
    ok = sf && grow(&sf->ways, &sf->capways, sf->nways + 1);
    if (ok)
      sf->ways[sf->nways++] = (line_count){(uint64_t)w[k].line << 32 | t->ways++, t->points + w[k].point,
                                           w[k].dash ? -1 : w[k].count};
    if (w[k].point > points) points = w[k].point;
  }
  t->points += points;
  free(w);
  if (why) {
    lua_pushnil(L);
    lua_pushstring(L, why);
    return 2;
  }
  if (!ok) return luaL_error(L, "out of memory");
  lua_rawgeti(L, files, (lua_Integer)entry_file + 1);
  lua_pushinteger(L, entry_line);
  return 2;
}

/* files:paths() -> the paths of the files, in the order they came. */
static int l_files_paths(lua_State *L) {
  src_files *t = luaL_checkudata(L, 1, SOURCE_FILES);
  lua_getiuservalue(L, 1, 1);
  lua_createtable(L, (int)t->n, 0);
  for (size_t i = 0; i < t->n; i++) {
    lua_rawgeti(L, -2, (lua_Integer)i + 1);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

/* The file whose path is at index 2, or NULL. */
static src_file *file_at(lua_State *L, src_files *t) {
  luaL_checkstring(L, 2);
  lua_getiuservalue(L, 1, 1);
  lua_pushvalue(L, 2);
  src_file *sf = lua_rawget(L, -2) == LUA_TNUMBER ? &t->v[lua_tointeger(L, -1) - 1] : NULL;
  lua_pop(L, 2);
  return sf;
}

/* The format at index ARG, when there is one, for NCOLS columns (F). */
static bool row_format(lua_State *L, int arg, const char *who, int ncols, lp_format *f) {
  if (lua_isnoneornil(L, arg)) return false;
  size_t len;
  const char *fmt = luaL_checklstring(L, arg, &len);
  lp_format_parse(L, who, fmt, len, f);
  if (f->ncols != ncols) luaL_error(L, "%s: %d directives for %d columns", who, f->ncols, ncols);
  return true;
}

/* files:lines(path[, format]) -> line, count: columns, lines in increasing
 * order, a line's counts in several functions (inlined code) added up; with
 * FORMAT (lazyprobe.format_rows' directives, one per column), those rows
 * formatted, how many there are and how many have a count > 0. */
static int l_files_lines(lua_State *L) {
  src_file *sf = file_at(L, luaL_checkudata(L, 1, SOURCE_FILES));
  size_t n = sf ? sf->nlines : 0;
  uint32_t cap = sf ? sf->cap : 0;
  lp_format f;
  if (row_format(L, 3, "files:lines", 2, &f)) {
    luaL_Buffer b;
    lp_format_value v[2];
    lua_Integer hit = 0;
    luaL_buffinit(L, &b);
    for (uint32_t line = 0; line < cap; line++) {
      if (sf->total[line] == NO_LINE) continue;
      lp_format_int(&v[0], f.pieces[0].directive, line);
      lp_format_int(&v[1], f.pieces[1].directive, sf->total[line]);
      lp_format_row(&b, &f, v);
      hit += sf->total[line] > 0;
    }
    luaL_pushresult(&b);
    lua_pushinteger(L, (lua_Integer)n);
    lua_pushinteger(L, hit);
    return 3;
  }
  lua_createtable(L, (int)n, 0);
  lua_createtable(L, (int)n, 0);
  for (uint32_t line = 0, k = 0; line < cap; line++) {
    if (sf->total[line] == NO_LINE) continue;
    k++;
    lua_pushinteger(L, line);
    lua_rawseti(L, -3, k);
    lua_pushinteger(L, sf->total[line]);
    lua_rawseti(L, -2, k);
  }
  return 2;
}

typedef struct branch_row {
  lua_Integer line, block, way, taken; /* taken < 0: "-" */
} branch_row;

/* The rows of files:branches of SF into *ROWS (malloc'd; NULL when none):
 * returns how many. */
static size_t branch_rows(lua_State *L, src_file *sf, branch_row **rows) {
  size_t n = sf ? sf->nways : 0, out = 0;
  *rows = NULL;
  if (!n) return 0;
  line_count *tmp = malloc(n * sizeof *tmp);
  branch_row *v = malloc(n * sizeof *v);
  if (!tmp || !v) {
    free(tmp);
    free(v);
    luaL_error(L, "out of memory");
    return 0;
  }
  sort_by_key(sf->ways, tmp, n);
  free(tmp);
  *rows = v;
  lua_Integer block = 0, way = 0;
  for (size_t k = 0; k < n; k++) {
    const line_count *w = &sf->ways[k];
    uint32_t line = (uint32_t)(w->key >> 32);
    if (!has_line(sf, line)) continue; /* not a line of the record */
    if (k == 0 || (uint32_t)(sf->ways[k - 1].key >> 32) != line) block = 0, way = 0;
    else if (sf->ways[k - 1].file != w->file) block++, way = 0;
    (*rows)[out++] = (branch_row){line, block, way++, w->count};
  }
  return out;
}

/* files:branches(path[, format]) -> line, block, way, taken: columns, one
 * element per way out of a branch point on a line that files:lines(path)
 * has, by line, then in the order they came; block numbers the points of
 * one line from 0, way the ways of one point from 0; taken is a count or
 * "-".  With FORMAT, as files:lines: the rows formatted, how many there are
 * and how many were taken (a count > 0). */
static int l_files_branches(lua_State *L) {
  src_file *sf = file_at(L, luaL_checkudata(L, 1, SOURCE_FILES));
  lp_format f;
  bool text = row_format(L, 3, "files:branches", 4, &f);
  branch_row *r;
  size_t n = branch_rows(L, sf, &r);
  if (text) {
    luaL_Buffer b;
    lp_format_value v[4];
    lua_Integer hit = 0;
    luaL_buffinit(L, &b);
    for (size_t k = 0; k < n; k++) {
      lp_format_int(&v[0], f.pieces[0].directive, r[k].line);
      lp_format_int(&v[1], f.pieces[1].directive, r[k].block);
      lp_format_int(&v[2], f.pieces[2].directive, r[k].way);
      if (r[k].taken >= 0) lp_format_int(&v[3], f.pieces[3].directive, r[k].taken);
      else if (f.pieces[3].directive == 's') lp_format_string(&v[3], "-", 1);
      else {
        free(r);
        return luaL_error(L, "files:branches: \"-\" where %%%c wants an integer", f.pieces[3].directive);
      }
      lp_format_row(&b, &f, v);
      hit += r[k].taken > 0;
    }
    free(r);
    luaL_pushresult(&b);
    lua_pushinteger(L, (lua_Integer)n);
    lua_pushinteger(L, hit);
    return 3;
  }
  for (int c = 0; c < 4; c++) lua_createtable(L, (int)n, 0);
  int cols = lua_gettop(L) - 3;
  for (size_t k = 0; k < n; k++) {
    lua_pushinteger(L, r[k].line);
    lua_rawseti(L, cols, (lua_Integer)k + 1);
    lua_pushinteger(L, r[k].block);
    lua_rawseti(L, cols + 1, (lua_Integer)k + 1);
    lua_pushinteger(L, r[k].way);
    lua_rawseti(L, cols + 2, (lua_Integer)k + 1);
    if (r[k].taken < 0) lua_pushliteral(L, "-");
    else lua_pushinteger(L, r[k].taken);
    lua_rawseti(L, cols + 3, (lua_Integer)k + 1);
  }
  free(r);
  return 4;
}

static int l_files_gc(lua_State *L) {
  src_files *t = luaL_checkudata(L, 1, SOURCE_FILES);
  for (size_t i = 0; i < t->n; i++) {
    free(t->v[i].total);
    free(t->v[i].ways);
  }
  free(t->v);
  free(t->touched);
  free(t->find);
  *t = (src_files){0};
  return 0;
}

/* lazyprobe.source_files() -> an empty table of counts by source file. */
static int l_source_files(lua_State *L) {
  src_files *t = lua_newuserdatauv(L, sizeof *t, 1);
  *t = (src_files){0};
  lua_newtable(L);
  lua_setiuservalue(L, -2, 1);
  if (luaL_newmetatable(L, SOURCE_FILES)) {
    static const luaL_Reg methods[] = {{"add", l_files_add},     {"paths", l_files_paths},
                                       {"lines", l_files_lines}, {"branches", l_files_branches},
                                       {NULL, NULL}};
    luaL_newlib(L, methods);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, l_files_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  return 1;
}

/* }=== */

const luaL_Reg lp_source_library[] = {
    {"line_counts", l_line_counts},   {"branch_counts", l_branch_counts},
    {"source_files", l_source_files}, {"conditional_branches", l_conditional_branches},
    {NULL, NULL}};
