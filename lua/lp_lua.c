/* lp_lua.c — Lua state, collector loading and the `lazyprobe` library table.
 *
 * The library (see docs/COLLECTORS.md):
 *   lazyprobe.print(line)        one report line (stderr with prefix while live)
 *   lazyprobe.write(name, text)  write a file in the output directory (TEXT a
 *                                string or an array of them, 64 to a writev)
 *   lazyprobe.basename(path)
 *   lazyprobe.lines(module, lo, hi)  DWARF line-table rows, as columns (core/lines.c)
 *   lazyprobe.line_counts(f), lazyprobe.branch_counts(f),
 *   lazyprobe.conditional_branches(f), lazyprobe.source_files()  (lp_source.c;
 *     each module's line table and code image loaded here once)
 *   lazyprobe.format_rows(format, column, ...)  (lp_format.c)
 *   lazyprobe.graph_columns(f)  f's blocks, edges and calls as columns (lp_columns.c)
 * report(run), and sample(run) every `interval` while the program runs,
 * receive run.functions (merged over all counters files by module and address,
 * each with its graph, lp_graph.c: blocks, edges solved by flow conservation,
 * call sites counted by their probes or, without them, by the blocks they
 * end; in a report of processes that ended, computed only once asked for;
 * Lua tables only once read),
 * run.processes, run.probes and run.outdir.  The probes of all loaded
 * collectors are united here (lp_lua_probes). */
#include "lp_lua.h"

#include "image.h"
#include "lines.h"
#include "lp_columns.h"
#include "lp_format.h"
#include "lp_graph.h"
#include "lp_source.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <lauxlib.h>
#include <limits.h>
#include <lua.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef LP_COLLECTORS_DIR
#define LP_COLLECTORS_DIR "collectors"
#endif

typedef struct module_lines {
  char *path;
  core_lines lines;
  int files_ref;      /* registry: a Lua table of its file paths, made once */
  int why_ref;        /* registry: the message of a module without a line table, made once */
  core_image image;   /* its code, mapped when first asked for (lp_lua_module_image) */
  int image_state;    /* 0 not asked for yet, 1 mapped, -1 could not be */
  bool loaded; /* false: loading failed, message in error */
  char error[256];
} module_lines;

struct lp_lua {
  lua_State *L;
  module_lines *lines; /* loaded on first use, per module */
  size_t nlines;
  lp_lua_options opt;
  int ncollectors; /* their tables are in the registry list at collectors_ref */
  int collectors_ref;
};

static const char *state_names[] = {"not run", "relocated", "trapped", "native", "excluded", "marked"};
#define NSTATES (sizeof state_names / sizeof *state_names)

const char *lp_lua_collectors_dir(void) {
  const char *env = getenv("LAZYPROBE_COLLECTORS");
  return env && *env ? env : LP_COLLECTORS_DIR;
}

static lp_lua *self(lua_State *L) {
  return *(lp_lua **)lua_getextraspace(L);
}

/* {=== library ===*/

static int l_print(lua_State *L) {
  const char *line = luaL_checkstring(L, 1);
  if (self(L)->opt.live) fprintf(stderr, "lazyprobe: %s\n", line);
  else printf("%s\n", line);
  return 0;
}

enum { IOV_BATCH = 64 };

/* Writes IOV[0..N) to FD whole, however many writev calls it takes. */
static bool writev_all(int fd, struct iovec *iov, int n) {
  while (n > 0) {
    ssize_t w = writev(fd, iov, n);
    if (w <= 0) return false;
    for (; n > 0 && (size_t)w >= iov->iov_len; iov++, n--) w -= (ssize_t)iov->iov_len;
    if (n > 0) iov->iov_base = (char *)iov->iov_base + w, iov->iov_len -= (size_t)w;
  }
  return true;
}

/* Writes the strings T[1..N] (T the stack index of the array) to FD,
 * IOV_BATCH of them a system call: a write each was ~250 calls for Lua's
 * coverage.info, a fifth of its report.  The table keeps the strings, and
 * so their bytes, where they are. */
static bool write_pieces(lua_State *L, int fd, int t, lua_Integer n) {
  struct iovec iov[IOV_BATCH];
  int k = 0;
  for (lua_Integer i = 1; i <= n; i++) {
    size_t len;
    lua_rawgeti(L, t, i);
    const char *text = lua_tolstring(L, -1, &len);
    lua_pop(L, 1);
    if (len) iov[k++] = (struct iovec){(void *)text, len};
    if (k == IOV_BATCH || (i == n && k)) {
      if (!writev_all(fd, iov, k)) return false;
      k = 0;
    }
  }
  return true;
}

/* lazyprobe.write(name, text): TEXT a string, or an array of strings written
 * one after the other (a large report made of pieces is never joined into
 * one string: on sqlite the join and its buffer were 2 MB of the report's
 * memory). */
static int l_write(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  bool pieces = lua_type(L, 2) == LUA_TTABLE;
  lua_Integer n = pieces ? luaL_len(L, 2) : 1;
  if (!pieces) luaL_checkstring(L, 2);
  for (lua_Integer i = 1; pieces && i <= n; i++, lua_pop(L, 1))
    if (lua_rawgeti(L, 2, i) != LUA_TSTRING) return luaL_argerror(L, 2, "an array of strings");
  lp_lua *lp = self(L);
  if (strchr(name, '/')) return luaL_argerror(L, 1, "a file name, not a path");
  int fd = openat(lp->opt.outdir_fd, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) {
    lua_pushnil(L);
    lua_pushfstring(L, "%s/%s: %s", lp->opt.outdir, name, strerror(errno));
    return 2;
  }
  bool written;
  if (pieces) {
    written = write_pieces(L, fd, 2, n);
  } else {
    size_t len;
    const char *text = lua_tolstring(L, 2, &len);
    struct iovec one = {(void *)text, len};
    written = len == 0 || writev_all(fd, &one, 1);
  }
  close(fd);
  if (!written) {
    lua_pushnil(L);
    lua_pushfstring(L, "%s/%s: short write", lp->opt.outdir, name);
    return 2;
  }
  lua_pushfstring(L, "%s/%s", lp->opt.outdir, name);
  return 1;
}

static int l_basename(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  const char *slash = strrchr(path, '/');
  lua_pushstring(L, slash ? slash + 1 : path);
  return 1;
}

static module_lines *lines_of(lp_lua *lp, const char *path) {
  for (size_t i = 0; i < lp->nlines; i++)
    if (!strcmp(lp->lines[i].path, path)) return &lp->lines[i];
  module_lines *grown = realloc(lp->lines, (lp->nlines + 1) * sizeof *grown);
  if (!grown) return NULL;
  lp->lines = grown;
  module_lines *m = &lp->lines[lp->nlines++];
  memset(m, 0, sizeof *m);
  m->files_ref = m->why_ref = LUA_NOREF;
  m->path = strdup(path);
  m->loaded = core_lines_load(path, &m->lines) == LP_OK;
  if (!m->loaded) snprintf(m->error, sizeof m->error, "%s", lp_error());
  return m;
}

const core_lines *lp_lua_module_lines(lua_State *L, const char *path) {
  module_lines *m = lines_of(self(L), path);
  if (!m) {
    lua_pushliteral(L, "out of memory");
    return NULL;
  }
  if (!m->loaded || !m->lines.present) { /* asked once per function: gcc's cc1 has 45 000 */
    if (m->why_ref == LUA_NOREF) {
      if (m->loaded) lua_pushfstring(L, "%s has no line table", path);
      else lua_pushstring(L, m->error);
      m->why_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, m->why_ref);
    return NULL;
  }
  if (m->files_ref == LUA_NOREF) { /* each path becomes a Lua string once, not once a row */
    lua_createtable(L, (int)m->lines.nfiles, 0);
    for (size_t f = 0; f < m->lines.nfiles; f++) {
      lua_pushstring(L, m->lines.files[f]);
      lua_rawseti(L, -2, (lua_Integer)f + 1);
    }
    m->files_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  }
  lua_rawgeti(L, LUA_REGISTRYINDEX, m->files_ref);
  return &m->lines;
}

const core_image *lp_lua_module_image(lua_State *L, const char *path) {
  module_lines *m = lines_of(self(L), path);
  if (!m) return NULL;
  if (m->image_state == 0) m->image_state = core_image_load(path, &m->image) == LP_OK ? 1 : -1;
  return m->image_state == 1 ? &m->image : NULL;
}

/* lazyprobe.lines(module, lo, hi): the line-table rows in [lo, hi) as three
 * parallel arrays { address = {...}, file = {...}, line = {...} } (columns, not
 * a table per row: a report reads ~100 k rows), or nil, message. */
static int l_lines(lua_State *L) {
  const char *module = luaL_checkstring(L, 1);
  lua_Integer lo = luaL_checkinteger(L, 2), hi = luaL_checkinteger(L, 3);
  const core_lines *lines = lp_lua_module_lines(L, module);
  if (!lines) {
    lua_pushnil(L);
    lua_insert(L, -2);
    return 2;
  }
  int files = lua_gettop(L);
  const core_line *first;
  size_t n = core_lines_range(lines, (uint64_t)lo, (uint64_t)hi, &first);
  lua_createtable(L, 0, 3);
  lua_createtable(L, (int)n, 0);
  for (size_t i = 0; i < n; i++) {
    lua_pushinteger(L, (lua_Integer)first[i].addr);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  lua_setfield(L, -2, "address");
  lua_createtable(L, (int)n, 0);
  for (size_t i = 0; i < n; i++) {
    lua_rawgeti(L, files, (lua_Integer)first[i].file + 1);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  lua_setfield(L, -2, "file");
  lua_createtable(L, (int)n, 0);
  for (size_t i = 0; i < n; i++) {
    lua_pushinteger(L, first[i].line);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  lua_setfield(L, -2, "line");
  lua_remove(L, files);
  return 1;
}

static const luaL_Reg library[] = {{"print", l_print},       {"write", l_write},
                                   {"basename", l_basename}, {"lines", l_lines},
                                   {NULL, NULL}};

/* }=== */

lp_status lp_lua_new(const lp_lua_options *opt, lp_lua **out) {
  lp_lua *lp = calloc(1, sizeof *lp);
  if (!lp || !(lp->L = luaL_newstate())) {
    free(lp);
    return lp_fail("cannot create the Lua state");
  }
  lp->opt = *opt;
  *(lp_lua **)lua_getextraspace(lp->L) = lp;
  luaL_openlibs(lp->L);
  luaL_newlib(lp->L, library);
  luaL_setfuncs(lp->L, lp_source_library, 0);
  luaL_setfuncs(lp->L, lp_format_library, 0);
  luaL_setfuncs(lp->L, lp_columns_library, 0);
  lua_pushstring(lp->L, opt->outdir ? opt->outdir : "");
  lua_setfield(lp->L, -2, "outdir");
  lua_setglobal(lp->L, "lazyprobe");

  /* require() finds the collectors' shared modules in collectors/lib */
  lua_getglobal(lp->L, "package");
  lua_pushfstring(lp->L, "%s/lib/?.lua", lp_lua_collectors_dir());
  lua_setfield(lp->L, -2, "path");
  lua_pop(lp->L, 1);

  lua_newtable(lp->L);
  lp->collectors_ref = luaL_ref(lp->L, LUA_REGISTRYINDEX);
  *out = lp;
  return LP_OK;
}

void lp_lua_free(lp_lua *lp) {
  if (!lp) return;
  for (size_t i = 0; i < lp->nlines; i++) {
    core_lines_free(&lp->lines[i].lines);
    if (lp->lines[i].image_state == 1) core_image_free(&lp->lines[i].image);
    free(lp->lines[i].path);
  }
  free(lp->lines);
  lua_close(lp->L);
  free(lp);
}

static int traceback(lua_State *L) {
  luaL_traceback(L, L, lua_tostring(L, 1), 1);
  return 1;
}

/* Runs the function on top of the stack with NARGS arguments below it,
 * leaving NRES results; on error prints it once. */
static bool call(lp_lua *lp, int nargs, int nres, const char *what) {
  lua_State *L = lp->L;
  int base = lua_gettop(L) - nargs;
  lua_pushcfunction(L, traceback);
  lua_insert(L, base);
  int rc = lua_pcall(L, nargs, nres, base);
  lua_remove(L, base);
  if (rc == LUA_OK) return true;
  fprintf(stderr, "lazyprobe: collector %s: %s\n", what, lua_tostring(L, -1));
  lua_pop(L, 1);
  return false;
}

static bool is_path(const char *name) {
  size_t n = strlen(name);
  return strchr(name, '/') || (n > 4 && strcmp(name + n - 4, ".lua") == 0);
}

/* Loads one collector and leaves its table on the stack. */
static bool load_one(lp_lua *lp, const char *name) {
  lua_State *L = lp->L;
  char path[4096];
  if (is_path(name)) snprintf(path, sizeof path, "%s", name);
  else snprintf(path, sizeof path, "%s/%s.lua", lp_lua_collectors_dir(), name);
  if (!is_path(name) && access(path, R_OK) != 0) {
    fprintf(stderr, "lazyprobe: no collector named '%s' (see `lazyprobe collectors`)\n", name);
    return false;
  }
  if (luaL_loadfile(L, path) != LUA_OK) {
    fprintf(stderr, "lazyprobe: collector %s: %s\n", name, lua_tostring(L, -1));
    lua_pop(L, 1);
    return false;
  }
  if (!call(lp, 0, 1, name)) return false;
  if (!lua_istable(L, -1)) {
    fprintf(stderr, "lazyprobe: collector %s: %s must return a table\n", name, path);
    lua_pop(L, 1);
    return false;
  }
  if (lua_getfield(L, -1, "name") != LUA_TSTRING) {
    lua_pop(L, 1);
    lua_pushstring(L, name);
    lua_setfield(L, -2, "name");
  } else {
    lua_pop(L, 1);
  }
  return true;
}

lp_status lp_lua_load(lp_lua *lp, const char *spec) {
  lua_State *L = lp->L;
  char *copy = strdup(spec), *save = NULL;
  if (!copy) return lp_fail("out of memory");
  int asked = 0;
  lua_rawgeti(L, LUA_REGISTRYINDEX, lp->collectors_ref);
  for (char *name = strtok_r(copy, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
    asked++;
    if (load_one(lp, name)) lua_rawseti(L, -2, ++lp->ncollectors);
  }
  lua_pop(L, 1);
  free(copy);
  if (asked == 0) return lp_fail("no collector given");
  if (lp->ncollectors == 0) return lp_fail("no collector could be loaded");
  return LP_OK;
}

/* Reads the probes table of the collector on top of the stack into *BITS;
 * *COUNTS is set when it wants entry counts (entry = true, or not said). */
static lp_status read_probes(lua_State *L, const char *name, uint32_t *bits, bool *counts,
                             bool *blocks_everywhere) {
  *counts = true;
  *blocks_everywhere = false;
  bool blocks = false, lines_only = false;
  if (lua_getfield(L, -1, "probes") == LUA_TNIL) {
    lua_pop(L, 1);
    return LP_OK;
  }
  lp_status st = LP_OK;
  if (!lua_istable(L, -1)) st = lp_fail("collector %s: probes must be a table", name);
  for (lua_pushnil(L); st == LP_OK && lua_next(L, -2); lua_pop(L, 1)) {
    const char *key = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : "?";
    if (!strcmp(key, "entry")) { /* the entry slot is always there: counted or marked */
      bool cover = lua_type(L, -1) == LUA_TSTRING && !strcmp(lua_tostring(L, -1), "cover");
      if (!cover && !lua_isboolean(L, -1))
        st = lp_fail("collector %s: probes.entry must be true, false or \"cover\"", name);
      *counts = !cover && lua_toboolean(L, -1);
    } else if (!strcmp(key, "arcs") || !strcmp(key, "calls")) {
      if (!lua_isboolean(L, -1)) st = lp_fail("collector %s: probes.%s must be true or false", name, key);
      else if (lua_toboolean(L, -1))
        *bits |= !strcmp(key, "arcs") ? SHM_PROBE_ARCS : SHM_PROBE_CALLS;
    } else if (!strcmp(key, "blocks")) {
      const char *v = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
      if (!strcmp(v, "cover")) *bits |= SHM_PROBE_BLOCKS_COVER;
      else if (!strcmp(v, "count")) *bits |= SHM_PROBE_BLOCKS_COUNT;
      else st = lp_fail("collector %s: probes.blocks must be \"cover\" or \"count\"", name);
      blocks = true;
    } else if (!strcmp(key, "lines_only")) {
      if (!lua_isboolean(L, -1)) st = lp_fail("collector %s: probes.lines_only must be true or false", name);
      lines_only = lua_toboolean(L, -1);
    } else {
      st = lp_fail("collector %s: unknown probe '%s' (entry, blocks, lines_only, arcs, calls)", name, key);
    }
  }
  if (st != LP_OK) lua_pop(L, 1); /* the key of the failed iteration */
  lua_pop(L, 1);
  *blocks_everywhere = blocks && !lines_only;
  return st;
}

lp_status lp_lua_probes(lp_lua *lp, uint32_t *probes) {
  lua_State *L = lp->L;
  uint32_t bits = SHM_PROBE_ENTRY;
  bool counts = false; /* some collector wants entry counts */
  bool everywhere = false; /* some collector wants blocks in modules without line info too */
  lua_rawgeti(L, LUA_REGISTRYINDEX, lp->collectors_ref);
  lp_status st = LP_OK;
  for (int i = 1; st == LP_OK && i <= lp->ncollectors; i++) {
    lua_rawgeti(L, -1, i);
    lua_getfield(L, -1, "name");
    char name[128];
    snprintf(name, sizeof name, "%s", lua_tostring(L, -1));
    lua_pop(L, 1);
    bool wants, blocks_everywhere;
    st = read_probes(L, name, &bits, &wants, &blocks_everywhere);
    counts |= wants;
    everywhere |= blocks_everywhere;
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  if (bits & SHM_PROBE_BLOCKS_COUNT) bits &= ~(uint32_t)SHM_PROBE_BLOCKS_COVER; /* counts cover */
  if (!counts && !(bits & SHM_PROBE_ARCS)) /* the flow of the arcs starts from the entry count */
    bits |= SHM_PROBE_ENTRY_COVER;
  if (bits & (SHM_PROBE_BLOCKS_COVER | SHM_PROBE_BLOCKS_COUNT) && !everywhere) bits |= SHM_PROBE_BLOCKS_LINES;
  *probes = bits;
  return st;
}

/* The files a run table is made from (l_push_run's light userdata). */
typedef struct run_files {
  lp_lua *lp;
  const shm_counters *files;
  size_t nfiles;
  bool lazy; /* a report: graphs computed when read, if the files no longer change */
} run_files;

/* Whether no process of FILES can change its counts any more (it exited,
 * was killed or exec'd; a detached or running one goes on counting). */
static bool all_ended(const shm_counters *files, size_t nfiles) {
  for (size_t f = 0; f < nfiles; f++) {
    uint32_t end = files[f].header->end;
    if (end != SHM_EXITED && end != SHM_KILLED && end != SHM_EXECED) return false;
  }
  return true;
}

/* The registry's key of the table whose (weak) keys are the graphs of the
 * run tables made for the report: their files are closed after it. */
static const char report_graphs = 0;

/* Adds process K's copy of the function already in the run at INDEX N (the
 * functions list at index FNS): counts add up, the state of a process where
 * it ran says more than one where it did not. */
static void add_seen(lua_State *L, lp_graph *g, int fns, lua_Integer n, uint32_t file, const shm_counters *c,
                     const shm_function *f) {
  uint32_t state = f->state < NSTATES ? f->state : 0;
  lua_rawgeti(L, fns, n);
  lua_getfield(L, -1, "count");
  lua_Integer before = lua_tointeger(L, -1);
  lua_pop(L, 1);
  lua_pushinteger(L, before + (lua_Integer)shm_fn_slot_value(c, f, f->slot));
  lua_setfield(L, -2, "count");
  lua_getfield(L, -1, "state");
  bool ran_here = state != SHM_NOT_RUN && !strcmp(lua_tostring(L, -1), state_names[SHM_NOT_RUN]);
  lua_pop(L, 1);
  if (ran_here) {
    lua_pushstring(L, state_names[state]);
    lua_setfield(L, -2, "state");
    lua_pushstring(L, shm_note(c, f));
    lua_setfield(L, -2, "note");
  }
  lua_pop(L, 1);
  if (!lp_graph_merge(g, (uint32_t)n - 1, file, (uint32_t)(f - shm_functions(c)))) luaL_error(L, "out of memory");
}

/* The keys of a function table and the strings its state and binding
 * take, pushed once by l_push_run (lua_setfield and lua_pushstring find
 * each string again in Lua's table of strings: gcc's report sets six to
 * eight fields on each of 47 724 tables). */
enum fn_key { F_NAME, F_MODULE, F_ADDRESS, F_SIZE, F_COUNT, F_STATE, F_NOTE, F_BINDING, F_STATES };
#define F_BINDINGS (F_STATES + (int)NSTATES)
#define F_NKEYS (F_BINDINGS + 3)

static void push_fn_keys(lua_State *L) {
  static const char *names[F_STATES] = {"name", "module", "address", "size", "count", "state", "note", "binding"};
  static const char *bindings[3] = {"global", "weak", "local"};
  luaL_checkstack(L, F_NKEYS + LUA_MINSTACK, "run table");
  for (int k = 0; k < F_STATES; k++) lua_pushstring(L, names[k]);
  for (size_t k = 0; k < NSTATES; k++) lua_pushstring(L, state_names[k]);
  for (int k = 0; k < 3; k++) lua_pushstring(L, bindings[k]);
}

/* t[KEYS[KEY]] = the value on top, T the table under it. */
static void set_key(lua_State *L, int keys, int key) {
  lua_pushvalue(L, keys + key);
  lua_insert(L, -2);
  lua_rawset(L, -3);
}

/* Pushes the table of a function seen first in C; its module's path is at
 * index MODULE, push_fn_keys' strings from index KEYS.  Eight fields at
 * most, so that its hash part has eight nodes, not sixteen (gcc's report:
 * 47 724 functions): address_hex, and note when it is "", come from its
 * metatable (lp_graph_attach). */
static void push_function(lua_State *L, const shm_counters *c, const shm_function *f, int module, int keys) {
  uint32_t state = f->state < NSTATES ? f->state : 0;
  const char *note = shm_note(c, f);
  lua_createtable(L, 0, 8);
  lua_pushstring(L, shm_string(c, f->name));
  set_key(L, keys, F_NAME);
  lua_pushvalue(L, module);
  set_key(L, keys, F_MODULE);
  lua_pushinteger(L, (lua_Integer)f->addr);
  set_key(L, keys, F_ADDRESS);
  lua_pushinteger(L, (lua_Integer)f->size);
  set_key(L, keys, F_SIZE);
  lua_pushinteger(L, (lua_Integer)shm_fn_slot_value(c, f, f->slot));
  set_key(L, keys, F_COUNT);
  lua_pushvalue(L, keys + F_STATES + (int)state);
  set_key(L, keys, F_STATE);
  if (*note) {
    lua_pushstring(L, note);
    set_key(L, keys, F_NOTE);
  }
  if (f->binding >= 1 && f->binding <= 3) {
    lua_pushvalue(L, keys + F_BINDINGS + (int)f->binding - 1);
    set_key(L, keys, F_BINDING);
  }
}

/* Pushes the run table (l_push_run(files)): functions merged by module path
 * and address, each with its graph in C until read (lp_graph.c). */
static int l_push_run(lua_State *L) {
  const run_files *rf = lua_touserdata(L, 1);
  const shm_counters *files = rf->files;
  size_t nfiles = rf->nfiles;
  lp_graph *g = lp_graph_push(L, files);
  int graphs = lua_gettop(L);
  bool lazy = rf->lazy && all_ended(files, nfiles); /* else the counts of the moment, all at once */
  if (lazy) {
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, &report_graphs) != LUA_TTABLE) {
      lua_pop(L, 1);
      lua_newtable(L);
      lua_createtable(L, 0, 1);
      lua_pushliteral(L, "k");
      lua_setfield(L, -2, "__mode");
      lua_setmetatable(L, -2);
      lua_pushvalue(L, -1);
      lua_rawsetp(L, LUA_REGISTRYINDEX, &report_graphs);
    }
    lua_pushvalue(L, graphs);
    lua_pushboolean(L, 1);
    lua_rawset(L, -3);
    lua_pop(L, 1);
  }
  lua_newtable(L); /* run */
  lua_pushstring(L, rf->lp->opt.outdir ? rf->lp->opt.outdir : "");
  lua_setfield(L, -2, "outdir");

  lua_newtable(L); /* processes */
  for (size_t f = 0; f < nfiles; f++) {
    const shm_header *h = files[f].header;
    lua_newtable(L);
    lua_pushinteger(L, h->pid);
    lua_setfield(L, -2, "pid");
    lua_pushinteger(L, h->ppid);
    lua_setfield(L, -2, "ppid");
    lua_pushinteger(L, h->image);
    lua_setfield(L, -2, "image");
    lua_pushstring(L, shm_string(&files[f], h->program));
    lua_setfield(L, -2, "program");
    if (h->end == SHM_EXITED) lua_pushfstring(L, "exit %d", (int)h->end_value);
    else if (h->end == SHM_KILLED) lua_pushfstring(L, "signal %d", (int)h->end_value);
    else if (h->end == SHM_EXECED) lua_pushstring(L, "exec");
    else if (h->end == SHM_DETACHED) lua_pushstring(L, "detached");
    else lua_pushstring(L, "running");
    lua_setfield(L, -2, "end");
    lua_rawseti(L, -2, (lua_Integer)f + 1);
  }
  lua_setfield(L, -2, "processes");

  uint32_t probes = 0; /* what ran, over all the files */
  bool entry_cover = nfiles > 0; /* only where every file marks entries alone */
  for (size_t f = 0; f < nfiles; f++) {
    probes |= files[f].header->probes;
    entry_cover &= (files[f].header->probes & SHM_PROBE_ENTRY_COVER) != 0;
  }
  lua_createtable(L, 0, 4);
  if (entry_cover) lua_pushliteral(L, "cover");
  else lua_pushboolean(L, probes & SHM_PROBE_ENTRY);
  lua_setfield(L, -2, "entry");
  if (probes & (SHM_PROBE_BLOCKS_COUNT | SHM_PROBE_BLOCKS_COVER)) {
    lua_pushstring(L, probes & SHM_PROBE_BLOCKS_COUNT ? "count" : "cover");
    lua_setfield(L, -2, "blocks");
  }
  lua_pushboolean(L, probes & SHM_PROBE_ARCS);
  lua_setfield(L, -2, "arcs");
  lua_pushboolean(L, probes & SHM_PROBE_CALLS);
  lua_setfield(L, -2, "calls");
  lua_setfield(L, -2, "probes");

  size_t most = 0; /* functions, before merging: the list's size, at most */
  for (size_t f = 0; f < nfiles; f++) most += files[f].header->nfunctions;
  lua_createtable(L, most < INT_MAX ? (int)most : 0, 0); /* functions */
  int fns_list = lua_gettop(L);
  lua_newtable(L); /* index: module path -> { address -> position in functions } */
  int index = lua_gettop(L);
  lua_pushnil(L); /* the path of the module of the function at hand */
  lua_pushnil(L); /* and its addresses in the index */
  int module = index + 1, by_address = index + 2, keys = index + 3;
  push_fn_keys(L);
  lua_Integer n = 0;
  for (size_t k = 0; k < nfiles; k++) {
    const shm_counters *c = &files[k];
    const shm_function *fns = shm_functions(c);
    const shm_module *mods = shm_modules(c);
    if (!lp_graph_reserve(g, c)) return luaL_error(L, "out of memory");
    uint32_t module_id = UINT32_MAX; /* module and by_address are this file's module MODULE_ID's */
    for (uint32_t i = 0; i < c->header->nfunctions; i++) {
      if (fns[i].state == SHM_EXCLUDED) continue; /* not selected: in no report */
      if (fns[i].module != module_id) {
        module_id = fns[i].module;
        lua_pushstring(L, shm_string(c, mods[module_id].path));
        lua_pushvalue(L, -1);
        lua_replace(L, module);
        if (lua_rawget(L, index) == LUA_TNIL) {
          lua_pop(L, 1);
          lua_createtable(L, 0, (int)mods[module_id].nfunctions);
          lua_pushvalue(L, module);
          lua_pushvalue(L, -2);
          lua_rawset(L, index);
        }
        lua_replace(L, by_address);
      }
      lua_Integer address = (lua_Integer)fns[i].addr;
      if (lua_rawgeti(L, by_address, address) == LUA_TNUMBER) { /* seen in another process: add up */
        add_seen(L, g, fns_list, lua_tointeger(L, -1), (uint32_t)k, c, &fns[i]);
        lua_pop(L, 1);
        continue;
      }
      lua_pop(L, 1);
      lua_pushinteger(L, ++n);
      lua_rawseti(L, by_address, address);
      uint32_t id;
      if (!lp_graph_add(g, (uint32_t)k, i, &id)) return luaL_error(L, "out of memory");
      push_function(L, c, &fns[i], module, keys);
      lp_graph_attach(L, -1, graphs, id); /* id == n - 1 */
      lua_rawseti(L, fns_list, n);
    }
  }
  lua_settop(L, index - 1); /* the index and what it kept at hand */
  lua_setfield(L, -2, "functions");
  if (!lazy) lp_graph_compute_all(L, g);
  return 1;
}

/* Pushes the run table, or prints why it could not be made. */
static bool push_run(lp_lua *lp, const shm_counters *files, size_t nfiles, bool lazy, const char *what) {
  run_files rf = {lp, files, nfiles, lazy};
  lua_pushcfunction(lp->L, l_push_run);
  lua_pushlightuserdata(lp->L, &rf);
  /* all it makes is the run table, alive to the end: the collector's steps
   * meanwhile only walked it (gcc -c's report: 19 M instructions); a
   * collector that stopped the collector itself finds it stopped after */
  bool collecting = lua_gc(lp->L, LUA_GCISRUNNING);
  lua_gc(lp->L, LUA_GCSTOP);
  bool ok = call(lp, 1, 1, what);
  if (collecting) lua_gc(lp->L, LUA_GCRESTART);
  return ok;
}

/* Calls FIELD(run) of every collector that has it; returns the failures. */
static int call_each(lp_lua *lp, const char *field, const shm_counters *files, size_t nfiles) {
  lua_State *L = lp->L;
  int failures = 0;
  lua_rawgeti(L, LUA_REGISTRYINDEX, lp->collectors_ref);
  for (int i = 1; i <= lp->ncollectors; i++) {
    lua_rawgeti(L, -1, i);
    lua_getfield(L, -1, "name");
    char name[128];
    snprintf(name, sizeof name, "%s", lua_tostring(L, -1));
    lua_pop(L, 1);
    if (lua_getfield(L, -1, field) != LUA_TFUNCTION) {
      lua_pop(L, 2);
      continue;
    }
    if (!push_run(lp, files, nfiles, !strcmp(field, "report"), name) || !call(lp, 1, 0, name)) failures++;
    lua_pop(L, 1); /* collector */
  }
  lua_pop(L, 1);
  return failures;
}

lp_status lp_lua_report(lp_lua *lp, const shm_counters *files, size_t nfiles, int *failures) {
  *failures = call_each(lp, "report", files, nfiles);
  lua_State *L = lp->L;
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, &report_graphs) == LUA_TTABLE)
    for (lua_pushnil(L); lua_next(L, -2); lua_pop(L, 1)) lp_graph_forget_files(lua_touserdata(L, -2));
  lua_pop(L, 1);
  lua_pushnil(L);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &report_graphs);
  return LP_OK;
}

void lp_lua_sample(lp_lua *lp, const shm_counters *files, size_t nfiles) {
  call_each(lp, "sample", files, nfiles);
}

unsigned lp_lua_interval(lp_lua *lp) {
  lua_State *L = lp->L;
  unsigned best = 0;
  lua_rawgeti(L, LUA_REGISTRYINDEX, lp->collectors_ref);
  for (int i = 1; i <= lp->ncollectors; i++) {
    lua_rawgeti(L, -1, i);
    bool samples = lua_getfield(L, -1, "sample") == LUA_TFUNCTION;
    lua_pop(L, 1);
    lua_getfield(L, -1, "interval");
    double seconds = lua_isnumber(L, -1) ? lua_tonumber(L, -1) : 1.0;
    lua_pop(L, 2);
    unsigned ms = seconds < 0.01 ? 10 : (unsigned)(seconds * 1000);
    if (samples && (!best || ms < best)) best = ms;
  }
  lua_pop(L, 1);
  return best;
}

lp_status lp_lua_list(lp_lua *lp) {
  const char *dir = lp_lua_collectors_dir();
  DIR *d = opendir(dir);
  if (!d) return lp_fail("%s: %s", dir, strerror(errno));
  struct dirent *e;
  char *names[64];
  int n = 0;
  while ((e = readdir(d)) && n < 64) {
    size_t len = strlen(e->d_name);
    if (len > 4 && strcmp(e->d_name + len - 4, ".lua") == 0) names[n++] = strndup(e->d_name, len - 4);
  }
  closedir(d);
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++)
      if (strcmp(names[j], names[i]) < 0) {
        char *t = names[i];
        names[i] = names[j];
        names[j] = t;
      }
  for (int i = 0; i < n; i++) {
    if (load_one(lp, names[i])) {
      lua_getfield(lp->L, -1, "outputs");
      printf("%-12s %s\n", names[i], lua_isstring(lp->L, -1) ? lua_tostring(lp->L, -1) : "");
      lua_pop(lp->L, 2);
    }
    free(names[i]);
  }
  return LP_OK;
}
