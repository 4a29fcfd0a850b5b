/* lp_lua.h — the embedded Lua 5.4 state in which collectors run, and the
 * binding they use (documented in docs/COLLECTORS.md).
 *
 * A collector is a Lua file that returns a table { name=, outputs=, report=
 * function(run) }.  Built-in collectors are found by name in the collectors
 * directory; anything with a '/' or ending in .lua is a path. */
#ifndef LP_LUA_H
#define LP_LUA_H

#include <stdbool.h>
#include <stddef.h>

#include "counters.h"
#include "lp_status.h"

typedef struct lp_lua lp_lua;

typedef struct lp_lua_options {
  const char *outdir;  /* where collectors write their files */
  int outdir_fd;
  bool live;           /* report lines go to stderr with the "lazyprobe: " prefix
                          (during `run`), else to stdout */
} lp_lua_options;

/* The directory of the built-in collectors. */
const char *lp_lua_collectors_dir(void);

lp_status lp_lua_new(const lp_lua_options *opt, lp_lua **out);
void lp_lua_free(lp_lua *L);

/* Loads each collector of the comma list SPEC; a collector that fails to load
 * is reported (file:line) and skipped, the others still load.  Fails only when
 * none could be loaded. */
lp_status lp_lua_load(lp_lua *L, const char *spec);

/* The union of the probes the loaded collectors ask for (enum shm_probe bits;
 * the entry probe is always on; BLOCKS_LINES when every collector that asks
 * for blocks asks for them only where line info is).  Fails on a probes table it does not
 * understand, naming the collector and the field. */
lp_status lp_lua_probes(lp_lua *L, uint32_t *probes);

/* Runs every loaded collector's report over the counters files; a Lua error in
 * one is reported and the others still run.  *failures counts them. */
lp_status lp_lua_report(lp_lua *L, const shm_counters *files, size_t nfiles, int *failures);

/* The shortest `interval` (seconds) of the collectors that have a
 * sample(run) function, in milliseconds; 0 when none has. */
unsigned lp_lua_interval(lp_lua *L);

/* Calls every collector's sample(run) on the live counters. */
void lp_lua_sample(lp_lua *L, const shm_counters *files, size_t nfiles);

/* Prints the built-in collectors with their outputs. */
lp_status lp_lua_list(lp_lua *L);

#endif
