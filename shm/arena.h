/* arena.h — where the code arena and the target's view of the counters go,
 * and how space in the arena is handed out.
 *
 * Relocated code reaches the module's data and its counters with 32-bit
 * displacements, so the arena must lie within +-2 GiB of the whole module.
 * Pure functions over a list of mapped ranges: the caller reads the ranges
 * from the process. */
#ifndef SHM_ARENA_H
#define SHM_ARENA_H

#include <stddef.h>
#include <stdint.h>

#include "lp_status.h"

typedef struct shm_range {
  uint64_t lo, hi; /* [lo, hi) */
} shm_range;

/* Finds SIZE free bytes (page-aligned) that do not touch MAPPED (sorted by lo)
 * within a guard gap, below LIMIT, and whose every byte is within 2 GiB of every
 * byte of [LO, HI); the nearest such place to the module wins. */
lp_status shm_place_near(const shm_range *mapped, size_t nmapped, uint64_t lo, uint64_t hi,
                         uint64_t size, uint64_t limit, uint64_t *out);

/* A bump allocator over one run-time range of the target. */
typedef struct shm_arena {
  uint64_t base, size, used;
} shm_arena;

lp_status shm_arena_alloc(shm_arena *arena, uint64_t n, uint64_t align, uint64_t *addr);

/* The last allocation, at ADDR, turned out to need only N bytes: the rest is
 * handed out again. */
void shm_arena_shrink(shm_arena *arena, uint64_t addr, uint64_t n);

#endif
