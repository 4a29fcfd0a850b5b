/* unit.h — helpers shared by the unit tests: formatting, running a shell
 * command, the CHECK macro, and the spanning-tree identity that the relocator's counted edges
 * must satisfy (an oracle computed from the graph alone). */
#ifndef LP_TESTS_UNIT_H
#define LP_TESTS_UNIT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "reloc.h"
#include "reloc_flow.h"

/* Counts a check and prints a failure with the test's `name` (a variable in
 * scope wherever CHECK is used). */
static int failures, checks;

#define CHECK(cond, ...)                                    \
  do {                                                      \
    checks++;                                               \
    if (!(cond)) {                                          \
      failures++;                                           \
      printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, name); \
      printf(__VA_ARGS__);                                  \
      printf("\n");                                         \
    }                                                       \
  } while (0)

static inline char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static inline char *fmt(const char *f, ...) {
  va_list ap;
  va_start(ap, f);
  char *s = NULL;
  if (vasprintf(&s, f, ap) < 0) abort();
  va_end(ap);
  return s;
}

static inline int sh(const char *cmd) {
  int rc = system(cmd);
  if (rc != 0) printf("note: command failed (%d): %s\n", rc, cmd);
  return rc;
}

/* The edges off a spanning tree of the blocks and EXIT, the leak edges (of
 * calls that may not return, of guarded dispatches) on it: E + leaks - blocks when the entry counter measures the virtual edge
 * EXIT->entry (ENTRY_COUNTED), one more when nothing reaches EXIT (two
 * trees).  Otherwise the virtual edge is on the tree: one more, unless the
 * entry block leaks (its leak closes a cycle with it). */
static inline size_t tree_counted(const reloc_plan *p, const reloc_info *info, bool entry_counted) {
  const reloc_block *blocks = reloc_blocks(p);
  const reloc_edge *edges = reloc_edges(p);
  const reloc_call *calls = reloc_calls(p);
  size_t leaks = 0;
  bool exits = false, entry_leaks = false;
  for (size_t b = 0; b < info->nblocks; b++) {
    bool call = false;
    for (size_t k = 0; k < info->ncalls; k++)
      call |= calls[k].site >= blocks[b].addr && calls[k].site < blocks[b].addr + blocks[b].size;
    bool table = false; /* a dispatch: it leaks when its table is guarded (the plan says) */
    for (size_t e = 0; e < info->nedges; e++) table |= edges[e].from == b && edges[e].kind == RELOC_EDGE_TABLE;
    bool leak = reloc_flow_leaks(edges, info->nedges, (uint32_t)b, call) || (table && blocks[b].leaks);
    leaks += leak;
    entry_leaks |= leak && b == 0;
  }
  for (size_t e = 0; e < info->nedges; e++) exits |= edges[e].to == RELOC_EXIT;
  if (!entry_counted) return info->nedges + leaks - info->nblocks + (entry_leaks ? 0 : 1);
  return info->nedges + leaks - info->nblocks + (exits || leaks ? 0 : 1);
}

#endif
