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
 * its waiters are woken: they return to the entry.
 *
 * A function whose first call is all that is asked of it (marked run, its
 * entry given back: breaks_marks_at_once) need not wait at all where its
 * first instructions may run elsewhere (arch/x86_64/x64_displace.h): they are
 * copied next to the stubs, and its stub, once it has rung, returns to that
 * copy, which jumps on to the rest of the function.  The tracer marks it when
 * it comes to the ring; the program has gone on meanwhile, so a process that
 * ends first has its went-on functions marked in its file then
 * (stubs_settle), and a thread that faults in a copy is moved to the same
 * instruction at home before the signal is delivered (stubs_fault_home: the
 * copies may load through any register).  Writing the copies reads every
 * function's bytes once per process image (cc1's 45 000: ~30 ms,
 * docs/PERFORMANCE.md).
 *
 * The words and the bell live in slots of the counters file that no
 * function's graph names, so reports never see them; a fork child's file
 * starts with them zero, which is right for its entries. */
#include <limits.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "session_internal.h"
#include "x64_displace.h"
#include "x64_stub.h"

static volatile uint32_t *stub_words(const process *p, const pmodule *m) {
  return (volatile uint32_t *)(shm_slots(&p->counters) + m->state_slot);
}

const volatile uint32_t *stubs_bell(const process *p) {
  return (const volatile uint32_t *)(shm_slots(&p->counters) + p->bell_slot);
}

/* Function I of M: the length of its window (x64_displace.h) when its first
 * call may go on without waiting, else 0; its instructions in IN (*NIN). */
static size_t window_of(core_session *s, pmodule *m, long i, x64_insn in[X64_DISPLACE_MAX], size_t *nin) {
  const core_function *fn = &m->file->module->functions[i];
  const core_image *img = &m->file->image;
  if (!breaks_marks_at_once(s, m, i) || fn->addr < img->base || fn->addr - img->base + fn->size > img->size) return 0;
  return x64_displace_window(img->bytes + (fn->addr - img->base), fn->size, fn->addr + m->bias, in, nin);
}

/* Writes the copies of the windows of M's functions whose first call goes
 * on without waiting into its arena, their addresses into GO_ON (0 for the
 * others). */
static lp_status write_windows(core_session *s, process *p, pmodule *m, uint64_t *go_on) {
  size_t n = m->file->module->nfunctions, most = 0;
  for (size_t i = 0; i < n; i++) most += m->fns[i].stub && breaks_marks_at_once(s, m, (long)i);
  uint64_t at;
  if (!most || shm_arena_alloc(&m->arena, most * X64_DISPLACED_MAX_SIZE, 16, &at) != LP_OK)
    return LP_OK; /* every first call waits */
  uint8_t *code = malloc(most * X64_DISPLACED_MAX_SIZE);
  if (!code) return lp_fail("out of memory");
  x64_writer w;
  lp_status st = x64_writer_init(&w, code, at, 0);
  for (size_t i = 0; st == LP_OK && i < n; i++) {
    x64_insn in[X64_DISPLACE_MAX];
    size_t nin, len = m->fns[i].stub ? window_of(s, m, (long)i, in, &nin) : 0;
    if (!len) continue;
    go_on[i] = at + w.offset;
    x64_put_displaced(&w, in, nin, m->file->module->functions[i].addr + m->bias + len);
    m->fns[i].go_on = true;
  }
  if (st == LP_OK) st = x64_writer_flush(&w);
  size_t size = w.offset;
  x64_writer_clear(&w);
  shm_arena_shrink(&m->arena, at, size);
  m->windows = at;
  m->windows_end = at + size;
  if (st == LP_OK && size) st = core_mem_write(&p->target, at, code, size);
  free(code);
  if (st == LP_OK && size) core_perfmap_add(&p->perfmap, at, size, "[lazyprobe first instructions]");
  return st;
}

/* The stubs of M, for the functions marked stub. */
static lp_status write_stubs(core_session *s, process *p, pmodule *m) {
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
  uint64_t *entries = malloc(n * sizeof *entries), *go_on = calloc(n, sizeof *go_on);
  uint8_t *code = malloc(size);
  lp_status st = entries && go_on && code ? LP_OK : lp_fail("out of memory");
  for (size_t i = 0; st == LP_OK && i < n; i++) entries[i] = mod->functions[i].addr + m->bias;
  if (st == LP_OK) st = write_windows(s, p, m, go_on);
  if (st == LP_OK)
    st = x64_stubs_write(code, at, n, entries, go_on, m->slots + 8 * (uint64_t)r.slot,
                         m->slots + 8 * (uint64_t)summary.slot, m->slots + 8 * (uint64_t)p->bell_slot);
  if (st == LP_OK) st = core_mem_write(&p->target, at, code, size);
  free(entries);
  free(go_on);
  free(code);
  LP_CHECK(st);
  m->stubs = at;
  m->state_slot = r.slot;
  m->summary_slot = summary.slot;
  char name[64]; /* a thread waiting for its first hit is seen in them by perf */
  const char *base = strrchr(m->file->path, '/');
  snprintf(name, sizeof name, "[lazyprobe first-hit stubs] %s", base ? base + 1 : m->file->path);
  core_perfmap_add(&p->perfmap, at, size, name);
  return LP_OK;
}

lp_status stubs_arm(core_session *s, process *p, pmodule *m) {
  if (!p->stubs) return LP_OK;
  size_t n = m->file->module->nfunctions;
  for (size_t i = 0; i < n; i++) m->fns[i].stub = m->fns[i].state == SHM_NOT_RUN && breaks_may_jump(m, (long)i);
  if (breaks_watch_parts(s, p, m) != LP_OK) /* their first calls wait */
    fprintf(stderr, "lazyprobe: %s: parts not watched: %s\n", m->file->path, lp_error());
  if (write_stubs(s, p, m) == LP_OK) return LP_OK;
  for (size_t i = 0; i < n; i++) m->fns[i].stub = m->fns[i].go_on = false;
  return LP_ERR;
}

void stubs_entry(const pmodule *m, long i, uint8_t jmp[5]) {
  uint64_t entry = m->file->module->functions[i].addr + m->bias;
  int32_t rel = (int32_t)(m->stubs + (uint64_t)i * X64_STUB_SIZE - (entry + 5));
  jmp[0] = 0xe9;
  memcpy(jmp + 1, &rel, sizeof rel);
}

/* Marks WORD served, and wakes its waiters if it was asked for (none wait
 * where the first call goes on: WAITERS false). */
static void serve(volatile uint32_t *word, bool waiters) {
  if (__atomic_exchange_n(word, X64_STUB_SERVED, __ATOMIC_SEQ_CST) == X64_STUB_REQUESTED && waiters)
    syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

void stubs_release(process *p, pmodule *m, long i) {
  m->fns[i].stub = false;
  if (m->stubs) serve(&stub_words(p, m)[i], !m->fns[i].go_on);
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

void stubs_settle(core_session *s, process *p) {
  for (size_t k = 0; p->stubs && p->counters.base && k < p->nmods; k++) {
    pmodule *m = &p->mods[k];
    if (!m->stubs) continue;
    volatile uint32_t *words = stub_words(p, m);
    for (size_t i = 0; i < m->file->module->nfunctions; i++)
      if (m->fns[i].go_on && m->fns[i].state == SHM_NOT_RUN && words[i] != 0) breaks_mark_in_file(s, p, m, (long)i);
  }
}

/* Where the copy at AT of function I's window (M) has the instruction at
 * RIP, that instruction's address at home; 0 when RIP is not one of them.
 * *SIZE: the copy's bytes (as write_windows wrote it). */
static uint64_t home_of(core_session *s, pmodule *m, long i, uint64_t at, uint64_t rip, size_t *size) {
  x64_insn in[X64_DISPLACE_MAX];
  size_t nin, offsets[X64_DISPLACE_MAX];
  size_t len = window_of(s, m, i, in, &nin);
  *size = len ? x64_displaced_layout(in, nin, offsets) : 0;
  for (size_t k = 0; k < nin && len; k++)
    if (at + offsets[k] == rip) return in[k].addr;
  return 0;
}

lp_status stubs_fault_home(core_session *s, process *p, pid_t tid) {
  bool windows = false; /* else no registers are read: a program may take many faults */
  for (size_t k = 0; k < p->nmods && !windows; k++) windows = p->mods[k].windows_end > p->mods[k].windows;
  if (!windows) return LP_OK;
  struct user_regs_struct regs;
  LP_CHECK(core_regs_get(tid, &regs));
  for (size_t k = 0; k < p->nmods; k++) {
    pmodule *m = &p->mods[k];
    if (m->unloaded || regs.rip < m->windows || regs.rip >= m->windows_end) continue;
    uint64_t at = m->windows; /* a fault is rare: the copies are laid out again to find it */
    for (size_t i = 0; i < m->file->module->nfunctions && at <= regs.rip; i++) {
      if (!m->fns[i].go_on) continue;
      size_t size;
      uint64_t home = home_of(s, m, (long)i, at, regs.rip, &size);
      if (home) {
        if (m->fns[i].state == SHM_NOT_RUN && m->fns[i].stub) LP_CHECK(breaks_on_request(s, p, m, (long)i));
        regs.rip = home;
        return core_regs_set(tid, &regs);
      }
      at += size;
    }
  }
  return LP_OK;
}
