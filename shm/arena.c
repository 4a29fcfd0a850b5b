/* arena.c — placing arenas near a module, and bump allocation in them. */
#include "arena.h"

#define PAGE 4096ull
#define GUARD (64ull * 1024)
#define REACH (1ull << 31)
#define LOWEST (1ull << 20) /* stay clear of mmap_min_addr and null-page tricks */

static uint64_t page_down(uint64_t v) { return v & ~(PAGE - 1); }
static uint64_t page_up(uint64_t v) { return (v + PAGE - 1) & ~(PAGE - 1); }

lp_status shm_place_near(const shm_range *mapped, size_t nmapped, uint64_t lo, uint64_t hi,
                         uint64_t size, uint64_t limit, uint64_t *out) {
  size = page_up(size);
  /* every byte of [at, at+size) within REACH of every byte of [lo, hi) */
  uint64_t win_lo = hi > REACH - GUARD ? hi - (REACH - GUARD) : 0;
  uint64_t win_hi = lo + (REACH - GUARD); /* end of the arena, exclusive */
  if (win_lo < LOWEST) win_lo = LOWEST;
  if (win_hi > limit) win_hi = limit;
  uint64_t best = 0, best_dist = UINT64_MAX;

  for (size_t i = 0; i <= nmapped; i++) {
    uint64_t gap_lo = i == 0 ? 0 : mapped[i - 1].hi + GUARD;
    uint64_t gap_hi = i == nmapped ? UINT64_MAX : (mapped[i].lo > GUARD ? mapped[i].lo - GUARD : 0);
    if (gap_lo < win_lo) gap_lo = win_lo;
    if (gap_hi > win_hi) gap_hi = win_hi;
    gap_lo = page_up(gap_lo);
    gap_hi = page_down(gap_hi);
    if (gap_hi <= gap_lo || gap_hi - gap_lo < size) continue;
    /* the end of the gap nearest the module */
    uint64_t at = gap_hi <= lo ? gap_hi - size : gap_lo;
    uint64_t dist = at + size <= lo ? lo - at : (at >= hi ? at - hi : 0);
    if (dist < best_dist) {
      best = at;
      best_dist = dist;
    }
  }
  if (best_dist == UINT64_MAX)
    return lp_fail("no room for %llu bytes within 2 GiB of 0x%llx-0x%llx",
                   (unsigned long long)size, (unsigned long long)lo, (unsigned long long)hi);
  *out = best;
  return LP_OK;
}

void shm_arena_shrink(shm_arena *arena, uint64_t addr, uint64_t n) {
  if (addr >= arena->base && addr + n <= arena->base + arena->used) arena->used = addr + n - arena->base;
}

lp_status shm_arena_alloc(shm_arena *arena, uint64_t n, uint64_t align, uint64_t *addr) {
  uint64_t at = (arena->base + arena->used + align - 1) / align * align;
  if (at + n > arena->base + arena->size)
    return lp_fail("code arena full (%llu bytes)", (unsigned long long)arena->size);
  arena->used = at + n - arena->base;
  *addr = at;
  return LP_OK;
}
