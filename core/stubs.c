/* stubs.c — first hits asked for through stubs, without a ptrace stop.
 *
 * A trap round trip costs the tracer 80-300 us of CPU on a VM and leaves the
 * program's processor idle (docs/PERFORMANCE.md).  So in a launched process
 * the entry of a function not run yet is, where a jmp may go (breaks_may_jump),
 * a jmp to its stub in the module's arena (arch/x86_64/x64_stub.h) rather
 * than an int3.  The stub sets the function's word in the counters file from
 * 0 to REQUESTED, sets the bit of its group of 64 in the module's summary,
 * rings the process's bell and waits on the word; the tracer, asleep on
 * every bell (doorbell.h), wakes, finds the words set in the groups the
 * summary names (stubs_serve; not every word of every module at each ring:
 * gcc's cc1 has 40 000) and relocates those functions as a trap would have
 * (breaks_on_request).  Once an entry no longer leads to its stub (a
 * jmp to the copy, an int3, the original bytes), its word becomes SERVED and
 * its waiters are woken: they return to the entry.  The words and the bell
 * live in slots of the counters file that no function's graph names, so
 * reports never see them; a fork child's file starts with them zero, which
 * is right for its entries. */
#include <limits.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "session_internal.h"
#include "x64_stub.h"

static volatile uint32_t *stub_words(const process *p, const pmodule *m) {
  return (volatile uint32_t *)(shm_slots(&p->counters) + m->state_slot);
}

const volatile uint32_t *stubs_bell(const process *p) {
  return (const volatile uint32_t *)(shm_slots(&p->counters) + p->bell_slot);
}

lp_status stubs_arm(process *p, pmodule *m) {
  if (!p->stubs) return LP_OK;
  const core_module *mod = m->file->module;
  size_t n = mod->nfunctions;
  shm_reservation r;
  if (p->bell_slot == SHM_NONE) {
    LP_CHECK(shm_reserve(&p->counters, 1, 0, 0, 0, &r));
    p->bell_slot = r.slot;
  }
  LP_CHECK(shm_reserve(&p->counters, (uint32_t)((n + 1) / 2), 0, 0, 0, &r));
  shm_reservation summary;
  LP_CHECK(shm_reserve(&p->counters, (uint32_t)x64_stubs_summary_words(n), 0, 0, 0, &summary));
  size_t size = x64_stubs_size(n);
  uint64_t at;
  if (!size || shm_arena_alloc(&m->arena, size, 16, &at) != LP_OK) return lp_fail("no room for stubs");
  uint64_t *entries = malloc(n * sizeof *entries);
  uint8_t *code = malloc(size);
  lp_status st = entries && code ? LP_OK : lp_fail("out of memory");
  for (size_t i = 0; st == LP_OK && i < n; i++) entries[i] = mod->functions[i].addr + m->bias;
  if (st == LP_OK)
    st = x64_stubs_write(code, at, n, entries, m->slots + 8 * (uint64_t)r.slot,
                         m->slots + 8 * (uint64_t)summary.slot, m->slots + 8 * (uint64_t)p->bell_slot);
  if (st == LP_OK) st = core_mem_write(&p->target, at, code, size);
  free(entries);
  free(code);
  LP_CHECK(st);
  m->stubs = at;
  m->state_slot = r.slot;
  m->summary_slot = summary.slot;
  char name[64]; /* a thread waiting for its first hit is seen in them by perf */
  const char *base = strrchr(m->file->path, '/');
  snprintf(name, sizeof name, "[lazyprobe first-hit stubs] %s", base ? base + 1 : m->file->path);
  core_perfmap_add(&p->perfmap, at, size, name);
  for (size_t i = 0; i < n; i++) m->fns[i].stub = m->fns[i].state == SHM_NOT_RUN && breaks_may_jump(m, (long)i);
  return LP_OK;
}

void stubs_entry(const pmodule *m, long i, uint8_t jmp[5]) {
  uint64_t entry = m->file->module->functions[i].addr + m->bias;
  int32_t rel = (int32_t)(m->stubs + (uint64_t)i * X64_STUB_SIZE - (entry + 5));
  jmp[0] = 0xe9;
  memcpy(jmp + 1, &rel, sizeof rel);
}

static void serve(volatile uint32_t *word) {
  if (__atomic_exchange_n(word, X64_STUB_SERVED, __ATOMIC_SEQ_CST) == X64_STUB_REQUESTED)
    syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

void stubs_release(process *p, pmodule *m, long i) {
  m->fns[i].stub = false;
  if (m->stubs) serve(&stub_words(p, m)[i]);
}

void stubs_release_all(process *p) {
  for (size_t k = 0; k < p->nmods; k++) {
    pmodule *m = &p->mods[k];
    for (size_t i = 0; m->stubs && i < m->file->module->nfunctions; i++) stubs_release(p, m, (long)i);
  }
}

lp_status stubs_disable(process *p) {
  for (size_t k = 0; k < p->nmods; k++) {
    pmodule *m = &p->mods[k];
    const core_module *mod = m->file->module;
    for (size_t i = 0; !m->unloaded && i < mod->nfunctions; i++)
      if (m->fns[i].stub) LP_CHECK(breaks_put_break(p, m, (long)i));
  }
  p->stubs = false;
  return LP_OK;
}

/* Serves the words of P asked for: in each module, those of the groups of
 * 64 whose summary bit is set, the bits taken first (a stub sets its word,
 * then its bit, then rings: a bit set after it was taken rings again). */
lp_status stubs_serve(core_session *s, process *p) {
  for (size_t k = 0; p->stubs && k < p->nmods; k++) {
    pmodule *m = &p->mods[k];
    if (m->unloaded || !m->stubs) continue;
    volatile uint32_t *words = stub_words(p, m);
    volatile uint64_t *summary = shm_slots(&p->counters) + m->summary_slot;
    size_t n = m->file->module->nfunctions;
    for (size_t w = 0; w < x64_stubs_summary_words(n); w++) {
      if (!summary[w]) continue;
      for (uint64_t bits = __atomic_exchange_n(&summary[w], 0, __ATOMIC_SEQ_CST); bits; bits &= bits - 1) {
        size_t lo = (w * 64 + (size_t)__builtin_ctzll(bits)) * 64, hi = lo + 64 < n ? lo + 64 : n;
        for (size_t i = lo; i < hi; i++)
          if (words[i] == X64_STUB_REQUESTED) LP_CHECK(breaks_on_request(s, p, m, (long)i));
      }
    }
  }
  return LP_OK;
}
