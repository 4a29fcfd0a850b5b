/* counters.h — the per-process counters file: self-describing, mapped by both
 * lazyprobe and the target, readable alone after a crash of either side.
 *
 * Layout (all little-endian, offsets from the start of the file):
 *   shm_header                      at 0
 *   shm_module[modules_cap]         at modules_off, nmodules in use   } modules are
 *   shm_function[functions_cap]     at functions_off, nfunctions in use } appended as
 *   strings (NUL-terminated)        at strings_off, strings_size bytes,  } the program
 *                                   strings_used in use; offset 0 is ""  } loads them
 *   notes area (appended strings)   at notes_off, notes_size bytes, notes_used in use
 *   shm_block[blocks_cap]           at blocks_off, nblocks in use    } filled as functions
 *   shm_edge[edges_cap]             at edges_off, nedges in use      } are relocated: the
 *   shm_call[calls_cap]             at calls_off, ncalls in use      } graph of each copy
 *   uint64_t slots[slots_cap]       at slots_off (page-aligned), nslots in use: the
 *                                   only part the target maps, read-write, never
 *                                   executable; each probe updates one slot
 * The tables are sized generously and the file is sparse: untouched pages cost
 * nothing; lazyprobe writes their entries with pwrite (shm_put_blocks...);
 * when its process ends, shm_counters_seal cuts them to what is used.
 * Everything a slot means is written before the copy that updates it can
 * run, so the file is complete at every moment. */
#ifndef SHM_COUNTERS_H
#define SHM_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lp_status.h"

#define SHM_MAGIC "LZPROBE\x01"
#define SHM_VERSION 7u
#define SHM_NONE UINT32_MAX /* no slot, no table entry */

enum shm_end { SHM_RUNNING = 0, SHM_EXITED = 1, SHM_KILLED = 2, SHM_EXECED = 3, SHM_DETACHED = 4 };

enum shm_state {
  SHM_NOT_RUN = 0,   /* never entered */
  SHM_RELOCATED = 1, /* runs in an instrumented copy */
  SHM_TRAPPED = 2,   /* counted by a break at every call (entry too small to patch) */
  SHM_NATIVE = 3,    /* left uninstrumented; note says why */
  SHM_EXCLUDED = 4,  /* not selected (--include/--exclude): not part of any report */
  SHM_MARKED = 5,    /* its first call marked it run (its slot 1), then its original code ran:
                        nothing more was asked of it (core/breaks.c, marks_alone) */
};

/* Which probes the copies carry (shm_header.probes). */
enum shm_probe {
  SHM_PROBE_ENTRY = 1u << 0,
  SHM_PROBE_BLOCKS_COVER = 1u << 1, /* a block's slot is 0 or 1 */
  SHM_PROBE_BLOCKS_COUNT = 1u << 2,
  SHM_PROBE_ARCS = 1u << 3,         /* edges off a spanning tree have slots */
  SHM_PROBE_CALLS = 1u << 4,
  SHM_PROBE_ENTRY_COVER = 1u << 5,  /* with ENTRY: a function's entry slot is 0 or 1 (counted
                                       by the tracer for trapped functions) */
  SHM_PROBE_BLOCKS_LINES = 1u << 6, /* with BLOCKS_*: asked for only in modules with line info */
};

typedef struct shm_header {
  char magic[8];
  uint32_t version;
  uint32_t header_size;
  uint64_t file_size;
  int64_t pid;
  int64_t ppid;       /* the traced parent process, 0 for the first one */
  uint32_t image;     /* 1 for the first program a process runs, +1 at each exec */
  int32_t end;        /* enum shm_end */
  int32_t end_value;  /* exit status or signal number */
  uint32_t nmodules, modules_cap;
  uint32_t nfunctions, functions_cap;
  uint64_t modules_off, functions_off;
  uint64_t strings_off, strings_size, strings_used;
  uint64_t notes_off, notes_size, notes_used;
  uint64_t blocks_off, blocks_cap, nblocks;
  uint64_t edges_off, edges_cap, nedges;
  uint64_t calls_off, calls_cap, ncalls;
  uint64_t slots_off, slots_cap, nslots;
  uint32_t program;   /* string: the program's path */
  uint32_t probes;    /* enum shm_probe bits */
} shm_header;

enum shm_module_flag {
  SHM_MODULE_UNLOADED = 1u << 0, /* dlclose'd: its code is gone, its counts stay */
};

typedef struct shm_module {
  uint32_t path;      /* string */
  uint32_t first_function, nfunctions;
  uint32_t flags;     /* enum shm_module_flag */
  uint64_t bias;      /* run-time address = link-time address + bias */
} shm_module;

typedef struct shm_function {
  uint64_t addr;      /* link-time */
  uint64_t size;
  uint32_t name;      /* string */
  uint32_t module;
  uint32_t state;     /* enum shm_state */
  uint32_t slot;      /* its entry counter; its probes' slots follow; SHM_NONE before it runs */
  uint64_t note;      /* offset of a note string from notes_off, or UINT64_MAX */
  uint32_t first_block, nblocks; /* its graph, once relocated (block 0 holds the entry) */
  uint32_t first_edge, nedges;
  uint32_t first_call, ncalls;
  uint32_t binding;   /* enum core_binding of its symbol (0: none) */
  /* A second copy whose arcs were placed on the first's counts (core/breaks.c,
   * "re-placing arcs"), SHM_NONE until there is one: its slots mirror the
   * first copy's, retree_slot - slot higher (its entry counter at
   * retree_slot; blocks and call sites as the first's), and its edges are
   * the nedges at retree_edge: the same edges in the same order, with slots
   * of their own where it counts them.  retree_slot is written last. */
  uint32_t retree_slot;
  uint32_t retree_edge;
  uint32_t reserved;
} shm_function;

enum shm_block_flag {
  SHM_BLOCK_LEAKS = 1u << 0,     /* ends in a call that may not return, or escapes: its
                                    virtual edge to EXIT is on the spanning tree
                                    (reloc_block.leaks) */
  SHM_BLOCK_DOMINATED = 1u << 1, /* block probes "cover" and no probe of its own: it ran
                                    when a block it dominates ran (relocate/reloc_cover.c) */
  SHM_BLOCK_ENTERED = 1u << 2,   /* a side entry, entered by no edge: a landing pad (the
                                    unwinder), or where the function's other part jumps back */
  SHM_BLOCK_ESCAPES = 1u << 3,   /* ends in a guarded table's dispatch: its runs beyond its
                                    out-edges' went to the original (reloc_block.escapes) */
};

typedef struct shm_block {
  uint64_t addr;      /* link-time address of its first instruction */
  uint32_t size, ninsns;
  uint32_t slot;      /* SHM_NONE without block probes and when SHM_BLOCK_DOMINATED;
                         under "cover", block 0's is the entry's (a count or a mark) */
  uint32_t flags;     /* enum shm_block_flag */
  uint32_t idom;      /* under "cover": its immediate dominator (its own index for
                         block 0 and the blocks the entry does not reach) */
  uint32_t side_slot; /* SHM_BLOCK_ENTERED under arcs: the count of its entries from outside
                         (a virtual edge EXIT->block in the flow); else SHM_NONE */
} shm_block;

typedef struct shm_edge {
  uint64_t branch;    /* link-time address of the transferring instruction */
  uint64_t target;    /* link-time target, 0 for ret and escapes */
  uint32_t from, to;  /* block indices within the function; to = SHM_NONE: leaves it */
  uint32_t slot;      /* SHM_NONE: on the spanning tree (derived) or no arcs */
  uint8_t kind;       /* reloc_edge_kind */
  uint8_t reserved[3];
} shm_edge;

typedef struct shm_call {
  uint64_t site;      /* link-time address of the call instruction */
  uint64_t target;    /* link-time address of a direct callee, 0 when indirect */
  uint32_t slot;
  uint32_t reserved;
} shm_call;

/* A counters file as one mapping. */
typedef struct shm_counters {
  int fd;
  uint8_t *base;
  size_t size;
  shm_header *header;
  uint64_t last_note; /* where shm_set_state wrote its last note (UINT64_MAX: none): the same
                         note for thousands of functions ("its first call went on without
                         waiting") is written once */
} shm_counters;

/* A module to list in a file: its functions, all in state SHM_NOT_RUN or,
 * where EXCLUDED says so, SHM_EXCLUDED. */
typedef struct shm_layout_module {
  const char *path;
  uint64_t bias;
  size_t nfunctions;
  const uint64_t *addr, *size; /* per function */
  const char *const *name;
  const uint32_t *binding;     /* per function, enum core_binding */
  const uint8_t *excluded;     /* per function, nonzero: not selected; NULL: none */
} shm_layout_module;

/* Who a new file is for. */
typedef struct shm_identity {
  long pid, ppid;
  uint32_t image;              /* see shm_header.image */
  const char *program;
} shm_identity;

/* The file's name for process PID running its IMAGE-th program:
 * lazyprobe.PID.counters, then lazyprobe.PID.IMAGE.counters after exec. */
void shm_counters_name(long pid, uint32_t image, char *buf, size_t size);

/* Creates DIR/<shm_counters_name> with owner-only permissions, never
 * following or replacing an existing entry, and maps it.  CODE_SIZE (bytes of
 * code the file may describe) sizes the graph tables; modules are added with
 * shm_add_module. */
lp_status shm_counters_create(int dirfd, const char *dirname, const shm_identity *who, uint64_t code_size,
                              uint32_t probes, shm_counters *out);

/* Appends a module and its functions; *first is the index of its first
 * function.  Fails when the file is full. */
lp_status shm_add_module(shm_counters *c, const shm_layout_module *m, uint32_t *first);

/* Creates the file of a forked child: everything FROM describes, with every
 * slot zero (the child's copies update the same slots in its own file). */
lp_status shm_counters_fork(const shm_counters *from, int dirfd, const char *dirname, long pid,
                            shm_counters *out);

/* Once nobody maps C any more (its process ended): replaces its file by one
 * whose tables hold just the entries in use, so that the file is small, not
 * merely sparse (copying it elsewhere costs what it holds).  The new file
 * takes the old one's name atomically; C keeps the old mapping. */
lp_status shm_counters_seal(const shm_counters *c, int dirfd, const char *dirname);

/* Maps an existing counters file read-only and checks it. */
lp_status shm_counters_open(const char *path, shm_counters *out);

void shm_counters_close(shm_counters *c);

static inline shm_module *shm_modules(const shm_counters *c) {
  return (shm_module *)(c->base + c->header->modules_off);
}
static inline shm_function *shm_functions(const shm_counters *c) {
  return (shm_function *)(c->base + c->header->functions_off);
}
static inline volatile uint64_t *shm_slots(const shm_counters *c) {
  return (volatile uint64_t *)(c->base + c->header->slots_off);
}
static inline shm_block *shm_blocks(const shm_counters *c) {
  return (shm_block *)(c->base + c->header->blocks_off);
}
static inline shm_edge *shm_edges(const shm_counters *c) {
  return (shm_edge *)(c->base + c->header->edges_off);
}
static inline shm_call *shm_calls(const shm_counters *c) {
  return (shm_call *)(c->base + c->header->calls_off);
}
static inline const char *shm_string(const shm_counters *c, uint32_t off) {
  return (const char *)c->base + c->header->strings_off + off;
}
/* The value of SLOT (0 for SHM_NONE or out of range). */
static inline uint64_t shm_slot_value(const shm_counters *c, uint32_t slot) {
  return slot < c->header->nslots ? shm_slots(c)[slot] : 0;
}
const char *shm_note(const shm_counters *c, const shm_function *f);

/* F's second copy's slot base (shm_function.retree_slot), or SHM_NONE when it
 * has none or its edges lie outside the file. */
static inline uint32_t shm_retree_slot(const shm_counters *c, const shm_function *f) {
  uint32_t r = __atomic_load_n(&f->retree_slot, __ATOMIC_ACQUIRE);
  if (r == SHM_NONE || f->retree_edge == SHM_NONE || (uint64_t)f->retree_edge + f->nedges > c->header->nedges ||
      f->slot == SHM_NONE || r < f->slot)
    return SHM_NONE;
  return r;
}

/* What both copies of F counted in SLOT (one of the first copy's) and in its
 * twin in the second copy, if any. */
static inline uint64_t shm_fn_slot_value(const shm_counters *c, const shm_function *f, uint32_t slot) {
  uint64_t v = shm_slot_value(c, slot);
  uint32_t r = shm_retree_slot(c, f);
  if (slot != SHM_NONE && r != SHM_NONE) v += shm_slot_value(c, slot - f->slot + r);
  return v;
}

/* Edge (EC, F's nedges) and block (BC, its nblocks) counts of one copy of F
 * from EDGES (the first copy's edge records, or the second's: their slots
 * are its counted edges) and COPY_SLOT, its entry counter (F's slot, or its
 * retree_slot: its side entries' counters lie as far from F's), by flow
 * conservation (relocate/reloc_flow.h): exact, failing when the counts are
 * not consistent, or with ESTIMATE from counters that move. */
lp_status shm_flow(const shm_counters *c, const shm_function *f, const shm_edge *edges, uint32_t copy_slot,
                   bool estimate, uint64_t *ec, uint64_t *bc);

/* Reserves N slots and the table entries for a function's graph; fails when
 * the file is full.  The caller fills the entries, then calls
 * shm_publish_function. */
typedef struct shm_reservation {
  uint32_t slot, first_block, first_edge, first_call;
} shm_reservation;
lp_status shm_reserve(shm_counters *c, uint32_t nslots, uint32_t nblocks, uint32_t nedges,
                      uint32_t ncalls, shm_reservation *out);

/* Writes N table entries at index FIRST of the blocks, edges or calls table
 * (reserved by shm_reserve) with pwrite: a store through the mapping faulted
 * in each new page of the tables, 10-15 us a page on this project's virtual
 * machines (docs/PERFORMANCE.md, session 19); the mapping reads what was
 * written. */
lp_status shm_put_blocks(shm_counters *c, uint32_t first, const shm_block *blocks, size_t n);
lp_status shm_put_edges(shm_counters *c, uint32_t first, const shm_edge *edges, size_t n);
lp_status shm_put_calls(shm_counters *c, uint32_t first, const shm_call *calls, size_t n);

/* Records why a function is in its state (appended to the notes area). */
void shm_set_state(shm_counters *c, uint32_t function, enum shm_state state, const char *note);

/* Byte range the target maps: [slots_off, file_size). */
static inline uint64_t shm_target_offset(const shm_counters *c) { return c->header->slots_off; }
static inline uint64_t shm_target_size(const shm_counters *c) {
  return c->header->file_size - c->header->slots_off;
}

#endif
