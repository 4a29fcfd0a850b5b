/* rdebug.h — the dynamic loader's list of loaded modules, read from a traced
 * process: r_debug (found through the main program's DT_DEBUG) and its
 * link_map chain.  The loader calls r_debug.r_brk (_dl_debug_state) before
 * and after every change to the list, so a break there sees each dlopen and
 * dlclose. */
#ifndef CORE_RDEBUG_H
#define CORE_RDEBUG_H

#include <stddef.h>
#include <stdint.h>

#include "lp_status.h"
#include "target.h"

enum { CORE_RT_CONSISTENT = 0, CORE_RT_ADD = 1, CORE_RT_DELETE = 2 };

typedef struct core_rdebug {
  uint64_t map;   /* first link_map */
  uint64_t brk;   /* _dl_debug_state */
  int state;      /* CORE_RT_* */
} core_rdebug;

typedef struct core_loaded {
  uint64_t link_map; /* its entry: identifies one load of a module */
  uint64_t bias;     /* l_addr */
  char *path;        /* l_name */
} core_loaded;

/* The address of r_debug, from the DT_DEBUG entry of the dynamic section at
 * run-time address DYNAMIC; 0 while the loader has not filled it in. */
lp_status core_rdebug_find(const core_target *t, uint64_t dynamic, uint64_t *r_debug);

lp_status core_rdebug_read(const core_target *t, uint64_t r_debug, core_rdebug *out);

/* The loaded modules with a file (not the main program, whose name is empty,
 * nor the vDSO), in list order.  Free with core_loaded_free. */
lp_status core_link_map_read(const core_target *t, uint64_t first, core_loaded **out, size_t *n);
void core_loaded_free(core_loaded *list, size_t n);

#endif
