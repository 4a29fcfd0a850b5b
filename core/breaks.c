/* breaks.c — the lazy break manager of one process: an int3 at the entry of
 * every selected function (or a jmp to its stub, stubs.c: the first call then
 * asks for the copy without a stop); a hit relocates the whole function with
 * its probes (and its direct callees of at most EAGER_MAX_SIZE bytes, theirs,
 * ... EAGER_DEPTH calls deep, so that they never trap; calls from a copy go
 * straight to the callee's copy when there is one), writes the copy to the
 * module's arena, patches the entry with a jmp to it (an int3 in byte 0 first
 * where a jmp was, bytes 1..4, byte 0 last, so no thread ever runs a
 * half-written instruction) and resumes the thread in the copy (or lets the
 * stub's waiters go).  Entries too small for a jmp,
 * parts of another function's frame (gcc's FUNC.cold, seen in their FDE) and
 * entries that some copy branches into past their first byte keep their
 * break: every call traps and is sent to the copy ("trapped").  A
 * function that cannot be relocated gets its original byte back and runs
 * natively ("native"); so does, marked run, one of which the collectors ask
 * nothing but that it ran ("marked", marks_alone).  Each copy is named in the
 * perf map and given unwind information made from the original's, at once
 * for a function with an LSDA, else when first needed (describe_copy).
 *
 * Coverage probes (a block's, and the entry's mark when no collector wants
 * entry counts) are needed only until they first run: every SWEEP_MS (up
 * to SWEEP_MAX_MS after sweeps that found none) the covered ones are
 * replaced by NOPs of the same size, an int3 in their first byte while the
 * rest is written (a thread that meets it is sent past the probe, whose slot
 * is already set).
 *
 * Every SECOND_MS, a copy whose counters say it runs often may be replaced by
 * a second one made with what they tell (see "second copies" below): arcs
 * re-placed on their own counts, cover probes that ran left out; under
 * coverage alone, a hot function whose coverage stopped growing goes back to
 * its original code, with one-shot int3s on the blocks not run yet ("going
 * home" below).  Plans outlive their process image: the next image of the
 * same module file rebases them ("plans kept" below).  gcc's two parts of a
 * function jump into each other's copies ("a function's other part"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/user.h>

#include "eh_frame.h"
#include "lines.h"
#include "reloc.h"
#include "reloc_unwind.h"
#include "session_internal.h"
#include "x64_displace.h"

#define JMP_REL32 0xe9
#define JMP_REL32_SIZE 5
#define MAX_EAGER 64  /* callees of one function instrumented along with it */
#define EAGER_DEPTH 4 /* calls deep from a first hit (docs/PERFORMANCE.md, session 12) */
/* Larger callees wait for their own first hit: relocating one costs in
 * proportion to its size, a first hit through a stub about 36 us, and in a
 * large program half the callees relocated ahead never ran (gcc's cc1:
 * 16 886 relocated, 7 149 ran; docs/PERFORMANCE.md, session 26). */
#define EAGER_MAX_SIZE 256

static uint8_t original_byte(const pmodule *m, uint64_t link_addr) {
  return m->file->image.bytes[link_addr - m->file->image.base];
}

/* Writes an int3, or the jmp to its stub (or, with RESTORE, the original
 * bytes: one, or the five under a jmp) at the entry of every function of M
 * whose state is in MASK: one read and one write for each run of pages that
 * follow one another, up to SPAN bytes (cc1: 45 000 entries on ~6 000 pages;
 * a page at a time was 12 000 system calls, ~26 ms). */
#define SPAN (16 * PAGE)

/* The target's bytes of the run of writes at hand (breaks_write,
 * remove_probes, put_homes), and the few past its end that an entry's jmp or
 * a probe takes.  One at a time: the tracer is one thread. */
static uint8_t span[SPAN + 8];
_Static_assert(JMP_REL32_SIZE <= 8 && RELOC_COVER_PROBE_SIZE <= 8, "span's room past SPAN");

static bool writes_at(const pmodule *m, unsigned mask, size_t i) { return mask & (1u << m->fns[i].state); }

lp_status breaks_write(process *p, pmodule *m, unsigned mask, bool restore) {
  const core_module *mod = m->file->module;
  for (size_t i = 0; i < mod->nfunctions;) {
    if (!writes_at(m, mask, i)) {
      i++;
      continue;
    }
    uint64_t base = (mod->functions[i].addr + m->bias) & ~(PAGE - 1), end = base;
    size_t j = i; /* the entries to write in [base, end): I .. J */
    for (; j < mod->nfunctions; j++) {
      if (!writes_at(m, mask, j)) continue;
      uint64_t page = (mod->functions[j].addr + m->bias) & ~(PAGE - 1);
      if (page > end || page + PAGE - base > SPAN) break; /* a page with none between, or too far */
      end = page + PAGE;
    }
    size_t len = end - base, written = len;
    LP_CHECK(core_mem_read(&p->target, base, span, len));
    for (size_t k = i; k < j; k++) {
      if (!writes_at(m, mask, k)) continue;
      uint64_t link = mod->functions[k].addr, at = link + m->bias;
      bool stub = m->fns[k].stub && m->fns[k].state == SHM_NOT_RUN;
      size_t n = stub || (restore && m->fns[k].state == SHM_RELOCATED) ? JMP_REL32_SIZE : 1;
      if (at - base + n > written) { /* a jmp that crosses the span's last page */
        LP_CHECK(core_mem_read(&p->target, end, span + len, JMP_REL32_SIZE));
        written = len + JMP_REL32_SIZE;
      }
      uint8_t jmp[JMP_REL32_SIZE] = {INT3};
      if (stub && !restore) stubs_entry(m, (long)k, jmp);
      for (size_t b = 0; b < n; b++) span[at - base + b] = restore ? original_byte(m, link + b) : jmp[b];
    }
    LP_CHECK(core_mem_write(&p->target, base, span, written));
    i = j;
  }
  return LP_OK;
}

static void jmp_bytes(uint8_t out[JMP_REL32_SIZE], uint64_t at, uint64_t to);
static lp_status write_under_int3(process *p, uint64_t at, const uint8_t *want, size_t n, bool brk_there);

lp_status breaks_restore_all(process *p) {
  lp_status st = LP_OK;
  for (size_t k = 0; k < p->nside_jumps; k++) { /* an int3 waiting for its part's first run: the original */
    side_jump *sj = &p->side_jumps[k];
    if (!sj->waits || p->mods[sj->module].unloaded) continue;
    uint8_t jmp[JMP_REL32_SIZE];
    jmp_bytes(jmp, sj->at, sj->target);
    lp_status one = write_under_int3(p, sj->at, jmp, sizeof jmp, true);
    if (st == LP_OK) st = one;
    sj->waits = false;
  }
  for (size_t k = 0; k < p->nredirects; k++) {
    const plt_redirect *r = &p->redirects[k];
    if (p->mods[r->module].unloaded) continue;
    lp_status one = core_mem_write(&p->target, r->slot, &r->entry, sizeof r->entry);
    if (st == LP_OK) st = one;
  }
  p->nredirects = 0;
  for (size_t k = 0; k < p->nhomes; k++) {
    home_probe *h = &p->homes[k];
    if (h->met || p->mods[h->module].unloaded) continue;
    lp_status one = core_mem_write(&p->target, h->addr, &h->byte, 1);
    if (st == LP_OK) st = one;
    h->met = true;
  }
  for (size_t k = 0; k < p->nmods; k++) {
    if (p->mods[k].unloaded) continue;
    lp_status one = breaks_write(p, &p->mods[k], 1u << SHM_NOT_RUN | 1u << SHM_TRAPPED | 1u << SHM_RELOCATED,
                                 true);
    if (st == LP_OK) st = one;
  }
  if (st == LP_OK) stubs_release_all(p);
  return st;
}

/* The 5 bytes of a `jmp rel32` at AT to TO, into OUT. */
static void jmp_bytes(uint8_t out[JMP_REL32_SIZE], uint64_t at, uint64_t to) {
  int32_t rel = (int32_t)(to - (at + JMP_REL32_SIZE));
  out[0] = JMP_REL32;
  memcpy(out + 1, &rel, sizeof rel);
}

/* Makes the N > 1 bytes at AT hold WANT while threads run there: an int3
 * first (unless BRK_THERE: one is), then bytes 1..N-1, then byte 0, so that
 * no thread runs a half-written instruction (one that meets the int3 is sent
 * on by breaks_on_trap). */
static lp_status write_under_int3(process *p, uint64_t at, const uint8_t *want, size_t n, bool brk_there) {
  uint8_t brk = INT3;
  if (!brk_there) LP_CHECK(core_mem_write(&p->target, at, &brk, 1));
  LP_CHECK(core_mem_write(&p->target, at + 1, want + 1, n - 1));
  return core_mem_write(&p->target, at, want, 1);
}

/* Makes the entry at AT hold the N bytes WANT at a first hit: written at
 * once when one byte, or when the only thread is stopped or in the stub;
 * else under an int3 (write_under_int3). */
static lp_status write_entry(process *p, uint64_t at, const uint8_t *want, size_t n, bool brk_there) {
  if (n == 1 || p->refs == 1) return core_mem_write(&p->target, at, want, n);
  return write_under_int3(p, at, want, n, brk_there);
}

lp_status breaks_put_break(process *p, pmodule *m, long i) {
  uint64_t link = m->file->module->functions[i].addr;
  uint8_t brk[JMP_REL32_SIZE] = {INT3};
  size_t n = m->fns[i].stub || m->fns[i].state == SHM_RELOCATED ? JMP_REL32_SIZE : 1;
  for (size_t k = 1; k < n; k++) brk[k] = original_byte(m, link + k);
  LP_CHECK(write_entry(p, link + m->bias, brk, n, false));
  stubs_release(p, m, i);
  return LP_OK;
}

/* Gives the entry of function I of M, at its first hit, its original bytes
 * back (one under an int3, five under the jmp to its stub) and lets the
 * stub's waiters go: it runs natively from now on. */
static lp_status restore_entry(process *p, pmodule *m, long i) {
  const core_function *fn = &m->file->module->functions[i];
  uint8_t orig[JMP_REL32_SIZE];
  size_t n = m->fns[i].stub ? JMP_REL32_SIZE : 1;
  for (size_t k = 0; k < n; k++) orig[k] = original_byte(m, fn->addr + k);
  LP_CHECK(write_entry(p, fn->addr + m->bias, orig, n, !m->fns[i].stub));
  stubs_release(p, m, i);
  return LP_OK;
}

static lp_status leave_native(core_session *s, process *p, pmodule *m, long i, const char *why) {
  m->fns[i].state = SHM_NATIVE;
  shm_set_state(&p->counters, m->first + (uint32_t)i, SHM_NATIVE, why);
  s->stats.native++;
  fprintf(stderr, "lazyprobe: not instrumented: %s: %s\n", m->file->module->functions[i].name, why);
  return restore_entry(p, m, i);
}

/* {=== functions whose first call is all that is asked of them ===
 *
 * When no collector counts entries, arcs or calls, and block probes are
 * asked for nowhere, or only where line info is (coverage.lua: a report
 * gives a function without line info as a whole, ran or not) and the module
 * has none, a function's first call tells all: it ran.  It is marked so (its
 * count 1, on a slot of its own) and its entry gets its original bytes back:
 * no copy is made and it runs natively from then on ("marked").  Its other
 * part, if it has one (gcc's NAME.cold, entered by its jumps, anywhere), gets
 * a one-shot int3 where it jumps into that part (a home probe naming the
 * part, watch_part): the first a thread meets marks the part run as its
 * first call would have (mark_ran: the others go).  Where the part has no
 * stub of its own (a cold part), those int3s are put when the stubs are
 * written (breaks_watch_parts), so that the function's first call need not
 * wait for them.  Under attach a thread may already be in a part: parts are
 * relocated there. */

static lp_status watch_part(process *p, pmodule *m, long i);
static lp_status unwatch_part(process *p, pmodule *m, long j);
static bool part_watchable(const pmodule *m, long j);

static bool module_has_lines(module_file *f) {
  if (f->lines < 0) f->lines = core_lines_maybe(f->path);
  return f->lines;
}

/* Do the collectors ask nothing of M's functions but whether they ran? */
static bool first_call_tells_all(core_session *s, pmodule *m) {
  uint32_t pr = s->opt.probes;
  if (!(pr & SHM_PROBE_ENTRY_COVER) || pr & (SHM_PROBE_ARCS | SHM_PROBE_CALLS)) return false;
  return !(pr & (SHM_PROBE_BLOCKS_COVER | SHM_PROBE_BLOCKS_COUNT)) ||
         (pr & SHM_PROBE_BLOCKS_LINES && !module_has_lines(m->file));
}

static bool marks_alone(core_session *s, pmodule *m, long i) {
  if (!first_call_tells_all(s, m)) return false;
  uint32_t part = m->file->module->functions[i].part; /* last: it decodes the part, once */
  return part == CORE_NO_PART || (!s->opt.attach && part_watchable(m, part));
}

bool breaks_marks_at_once(core_session *s, pmodule *m, long i) {
  return !s->opt.attach && (m->file->module->functions[i].part == CORE_NO_PART || m->fns[i].part_watched) &&
         first_call_tells_all(s, m);
}

/* The slot that marks function I of M run, reserved now (at 0) if it has none. */
static lp_status mark_slot(process *p, pmodule *m, long i, uint32_t *slot) {
  shm_function *sf = &shm_functions(&p->counters)[m->first + i];
  if (sf->slot == SHM_NONE) {
    shm_reservation r;
    LP_CHECK(shm_reserve(&p->counters, 1, 0, 0, 0, &r));
    sf->slot = r.slot;
  }
  *slot = sf->slot;
  return LP_OK;
}

#define WENT_ON "its first call went on without waiting" /* its note: through a copy of its first instructions */

/* Function I of M ran: marked so in the counters file. */
static lp_status mark_in_file(core_session *s, process *p, pmodule *m, long i) {
  uint32_t slot;
  LP_CHECK(mark_slot(p, m, i, &slot));
  shm_slots(&p->counters)[slot] = 1;
  bool went_on = m->fns[i].go_on && m->fns[i].stub; /* not a trap's, once stubs_disable made it one */
  m->fns[i].state = SHM_MARKED;
  shm_set_state(&p->counters, m->first + (uint32_t)i, SHM_MARKED, went_on ? WENT_ON : NULL);
  s->stats.marked++;
  s->stats.went_on += went_on;
  return LP_OK;
}

void breaks_mark_in_file(core_session *s, process *p, pmodule *m, long i) {
  if (mark_in_file(s, p, m, i) != LP_OK)
    fprintf(stderr, "lazyprobe: process %d: %s not marked run: %s\n", (int)p->pid,
            m->file->module->functions[i].name, lp_error());
}

/* Function I of M ran: marked so, its other part watched, its entry's
 * original bytes back. */
static lp_status mark_ran(core_session *s, process *p, pmodule *m, long i) {
  bool went_on = m->fns[i].go_on && m->fns[i].stub;
  LP_CHECK(mark_in_file(s, p, m, i));
  if (m->file->module->functions[i].part != CORE_NO_PART) { /* before the stub's waiters go on */
    LP_CHECK(unwatch_part(p, m, i)); /* a part entered at its start first */
    LP_CHECK(watch_part(p, m, i));
  }
  lp_status st = restore_entry(p, m, i);
  if (st == LP_OK || !went_on) return st;
  /* A call that went on does not wait for its entry: its process may have
   * ended since (the write fails), and if not, its calls go on through the
   * copy of its window as they did. */
  stubs_release(p, m, i);
  return LP_OK;
}

/* }=== */

typedef struct link_ctx {
  process *p;
} link_ctx;

/* {=== a function's other part ===
 *
 * gcc moves the unlikely code of a function into a part of its own,
 * NAME.cold (core_function.part; in a stripped module both parts are fn_ADDR
 * and are linked by their jumps, breaks_link_unnamed_parts): the hot part jumps
 * into it, anywhere, and it jumps back into the hot part, anywhere (after a
 * catch, say).  Each part's copy is planned with the places the other jumps
 * to as side entries (decoded, entered by no edge of its graph, as landing
 * pads are: reloc_function_desc.entered), and a copy's jump to one of them
 * goes to that place in the other part's first copy.  When the other part
 * has no copy yet (the cold part is copied first, as a callee of the hot
 * one), the jump goes through a 5-byte jmp of its own in the arena (a
 * side_jump), which goes to the original code until that part's first copy
 * is made, then to the place in it (an int3 first, unless nothing runs
 * meanwhile: a thread that meets it goes on there, breaks_on_trap); when
 * that part has not run (a part entered only past its start is no callee of
 * anything), an int3 whose first hit relocates it (on_side_jump). */

#define MAX_SIDE_ENTRIES 4096
#define SIDE_JUMP_ROOM 8 /* a side_jump's bytes in the arena: its jmp, then int3s */

static int by_link(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static reloc_function_desc function_desc(const pmodule *m, const core_function *fn, reloc_cfi *cfi);

/* Function I's side_entries in FILE (allocated for all on first use); NULL
 * without memory. */
static side_entries *side_slot(module_file *file, long i) {
  if (!file->sides && !(file->sides = calloc(file->module->nfunctions, sizeof *file->sides))) return NULL;
  return &file->sides[i];
}

/* Makes SE hold the N run-time places AT (M's bias off), sorted. */
static void set_sides(side_entries *se, const pmodule *m, const uint64_t *at, size_t n) {
  se->scanned = true;
  if (!n || !(se->at = malloc(n * sizeof *se->at)) || !(se->off = malloc(n * sizeof *se->off))) {
    free(se->at);
    se->at = NULL;
    return;
  }
  for (size_t k = 0; k < n; k++) {
    se->at[k] = at[k] - m->bias;
    se->off[k] = -1;
  }
  qsort(se->at, n, sizeof *se->at, by_link);
  se->n = (uint32_t)n;
}

/* The side entries of function I of M (where its other part jumps into it),
 * found once per module file (sides_from_plan, else a linear decode of the
 * other part); NULL without memory. */
static const side_entries *sides_of(const pmodule *m, long i) {
  const core_module *mod = m->file->module;
  side_entries *se = side_slot(m->file, i);
  if (!se || se->scanned) return se;
  const core_function *fn = &mod->functions[i];
  if (fn->part == CORE_NO_PART) {
    se->scanned = true;
    return se;
  }
  reloc_cfi cfi;
  reloc_function_desc code = function_desc(m, &mod->functions[fn->part], &cfi);
  uint64_t at[MAX_SIDE_ENTRIES];
  size_t n = reloc_jumps_into(&code, code.lo, code.hi, fn->addr + m->bias + 1, fn->addr + m->bias + fn->size, at,
                              MAX_SIDE_ENTRIES);
  set_sides(se, m, at, n < MAX_SIDE_ENTRIES ? n : MAX_SIDE_ENTRIES);
  return se;
}

/* Once function I of M is planned (PLAN, NEDGES edges), where it jumps into
 * its other part, when not known yet: its jumps out of its graph there
 * (the part is usually planned next, as its callee; a linear decode of a
 * hot part costs more than its plan's edges). */
static void sides_from_plan(const pmodule *m, long i, const reloc_plan *plan, size_t nedges) {
  const core_function *fn = &m->file->module->functions[i];
  side_entries *se = fn->part != CORE_NO_PART ? side_slot(m->file, fn->part) : NULL;
  if (!se || se->scanned) return;
  const core_function *other = &m->file->module->functions[fn->part];
  uint64_t lo = other->addr + m->bias + 1, hi = other->addr + m->bias + other->size;
  const reloc_edge *edges = reloc_edges(plan);
  uint64_t at[MAX_SIDE_ENTRIES];
  size_t n = 0;
  for (size_t e = 0; e < nedges && n < MAX_SIDE_ENTRIES; e++) {
    uint64_t t = edges[e].target;
    bool seen = edges[e].to != RELOC_EXIT || t < lo || t >= hi;
    for (size_t k = 0; k < n && !seen; k++) seen = at[k] == t;
    if (!seen) at[n++] = t;
  }
  set_sides(se, m, at, n);
}

/* The side entry of SE at link-time address LINK, or -1. */
static long side_index(const side_entries *se, uint64_t link) {
  size_t lo = 0, hi = se ? se->n : 0;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (se->at[mid] < link) lo = mid + 1;
    else hi = mid;
  }
  return se && lo < se->n && se->at[lo] == link ? (long)lo : -1;
}

/* The side entry at run-time TARGET of a function of M: its index in *SE,
 * the side entries of function *G; -1 when TARGET is none. */
static long side_at(const pmodule *m, uint64_t target, const side_entries **se, long *g) {
  const core_module *mod = m->file->module;
  const core_function *fn = core_module_function_at(mod, target - m->bias);
  if (!fn || fn->part == CORE_NO_PART) return -1;
  *g = (long)(fn - mod->functions);
  *se = sides_of(m, *g);
  return side_index(*se, target - m->bias);
}

/* Where a jump to side entry K of SE (function G of M, at run-time TARGET)
 * goes: the place in G's first copy, or the side_jump waiting for it; 0
 * when nothing is ready (the original). */
static uint64_t side_goes(const process *p, const pmodule *m, const side_entries *se, long g, long k,
                          uint64_t target) {
  const fn_state *f = &m->fns[g];
  uint64_t first = f->first_copy ? f->first_copy : f->copy;
  if (first && se->off[k] >= 0) return first + (uint64_t)se->off[k];
  for (uint32_t j = f->side_jumps; j; j = p->side_jumps[j - 1].before) {
    const side_jump *sj = &p->side_jumps[j - 1];
    if (sj->target == target && !sj->to) return sj->at;
  }
  return 0;
}

/* Where a copy's jump to TARGET goes when it is a side entry of a function
 * of M (side_goes); 0 when it is none. */
static uint64_t side_entry(const process *p, const pmodule *m, uint64_t target) {
  const side_entries *se;
  long g, k = side_at(m, target, &se, &g);
  return k < 0 ? 0 : side_goes(p, m, se, g, k, target);
}

/* Side entries of M's other functions that PLAN's copy jumps to and that
 * have no copy yet: a side_jump for each (to the original until then), all
 * in one piece of the arena, written at once (8 bytes each: the jmp, int3s). */
static lp_status prepare_side_jumps(process *p, pmodule *m, const reloc_plan *plan, size_t nedges) {
  const reloc_edge *edges = reloc_edges(plan);
  uint64_t *wanted = NULL; /* target, function: pairs */
  size_t n = 0, cap = 0;
  lp_status st = LP_OK;
  for (size_t e = 0; e < nedges && st == LP_OK; e++) {
    uint64_t t = edges[e].target;
    long j, g, k;
    const side_entries *se;
    if (edges[e].to != RELOC_EXIT || !t || process_module_at(p, t, &j) != m || j >= 0 ||
        (k = side_at(m, t, &se, &g)) < 0 || side_goes(p, m, se, g, k, t))
      continue;
    bool seen = false;
    for (size_t q = 0; q < n && !seen; q++) seen = wanted[2 * q] == t;
    if (seen) continue;
    if (n == cap) {
      cap = cap ? 2 * cap : 8;
      uint64_t *grown = realloc(wanted, 2 * cap * sizeof *grown);
      if (!grown) st = lp_fail("out of memory");
      else wanted = grown;
    }
    if (st == LP_OK) wanted[2 * n] = t, wanted[2 * n + 1] = (uint64_t)g, n++;
  }
  if (st == LP_OK && p->nside_jumps + n > p->capside_jumps) {
    size_t want = p->capside_jumps ? 2 * p->capside_jumps : 16;
    while (want < p->nside_jumps + n) want *= 2;
    side_jump *grown = realloc(p->side_jumps, want * sizeof *grown);
    if (!grown) st = lp_fail("out of memory");
    else p->side_jumps = grown, p->capside_jumps = want;
  }
  uint8_t *bytes = st == LP_OK && n ? malloc(n * SIDE_JUMP_ROOM) : NULL;
  uint64_t at = 0;
  if (n && st == LP_OK && !bytes) st = lp_fail("out of memory");
  if (n && st == LP_OK) st = shm_arena_alloc(&m->arena, n * SIDE_JUMP_ROOM, SIDE_JUMP_ROOM, &at);
  if (n && st == LP_OK) { /* int3s where the function has not run: its first use relocates it */
    memset(bytes, INT3, n * SIDE_JUMP_ROOM);
    for (size_t q = 0; q < n; q++)
      if (m->fns[wanted[2 * q + 1]].state != SHM_NOT_RUN)
        jmp_bytes(bytes + q * SIDE_JUMP_ROOM, at + q * SIDE_JUMP_ROOM, wanted[2 * q]);
    st = core_mem_write(&p->target, at, bytes, n * SIDE_JUMP_ROOM);
  }
  for (size_t q = 0; q < n && st == LP_OK; q++) {
    uint32_t g = (uint32_t)wanted[2 * q + 1];
    p->side_jumps[p->nside_jumps++] = (side_jump){(uint32_t)(m - p->mods), g, wanted[2 * q], at + q * SIDE_JUMP_ROOM,
                                                  0, m->fns[g].side_jumps, m->fns[g].state == SHM_NOT_RUN};
    m->fns[g].side_jumps = (uint32_t)p->nside_jumps;
  }
  free(bytes);
  free(wanted);
  return st;
}

/* }=== */

/* TARGET, where a new copy branches, is no entry of M.  If it lies in the
 * first bytes of one (gcc's hot part jumping into its FUNC.cold part past
 * the part's start), that entry must never hold a jmp: one already patched,
 * or leading to its stub, gets its break back, the int3 first, then its
 * original bytes 1..4 (the copy branching there is not running yet). */
static void keep_entry_break(process *p, pmodule *m, uint64_t target) {
  const core_module *mod = m->file->module;
  const core_function *fn = core_module_function_at(mod, target - m->bias);
  if (!fn || target - m->bias - fn->addr >= JMP_REL32_SIZE) return;
  size_t e = (size_t)(fn - mod->functions);
  fn_state *f = &m->fns[e];
  f->entered_inside = true;
  bool patched = f->state == SHM_RELOCATED;
  if (!(patched || f->stub) || breaks_put_break(p, m, (long)e) != LP_OK || !patched) return;
  f->state = SHM_TRAPPED;
  shm_set_state(&p->counters, m->first + (uint32_t)e, SHM_TRAPPED,
                "another function jumps into its first bytes; every call traps");
}

/* Calls and jumps from a new copy go straight to the callee's copy if it has one. */
static uint64_t copy_of(void *ctx, uint64_t target) {
  const link_ctx *l = ctx;
  long j;
  pmodule *m = process_module_at(l->p, target, &j);
  if (m && j < 0) {
    keep_entry_break(l->p, m, target);
    uint64_t side = side_entry(l->p, m, target); /* into the function's other part */
    if (side) return side;
  }
  return m && j >= 0 && m->fns[j].copy && !m->fns[j].home ? m->fns[j].copy : target;
}

/* Is ADDR the entry of a function whose name says it is one?  A jump there is
 * a tail call, with flags dead (ABI).  FUNC.cold fragments and stripped
 * functions (fn_<hex>, which may be fragments) are not trusted. */
static bool is_entry(void *ctx, uint64_t addr) {
  const link_ctx *l = ctx;
  long j;
  pmodule *m = process_module_at(l->p, addr, &j);
  if (!m || j < 0) return false;
  const core_function *f = &m->file->module->functions[j];
  return (f->sources & (CORE_FROM_SYMTAB | CORE_FROM_DYNSYM)) && !strstr(f->name, ".cold");
}

/* How a call to ADDR returns (core_module_callee).  Asked of every direct
 * call planned. */
static reloc_callee callee(void *ctx, uint64_t addr) {
  static const reloc_callee as[] = {[CORE_CALLEE_RETURNS] = RELOC_CALLEE_RETURNS,
                                    [CORE_CALLEE_RETURNS_TWICE] = RELOC_CALLEE_RETURNS_TWICE,
                                    [CORE_CALLEE_NEVER_RETURNS] = RELOC_CALLEE_NEVER_RETURNS,
                                    [CORE_CALLEE_EXITS_ON_STATUS] = RELOC_CALLEE_EXITS_ON_STATUS,
                                    [CORE_CALLEE_SYSCALL] = RELOC_CALLEE_SYSCALL,
                                    [CORE_CALLEE_FORKS] = RELOC_CALLEE_RETURNS_TWICE};
  const process *p = ((const link_ctx *)ctx)->p;
  for (size_t k = 0; k < p->nmods; k++) {
    const pmodule *m = &p->mods[k];
    if (!m->unloaded && addr >= m->lo && addr < m->hi)
      return as[core_module_callee(m->file->module, addr - m->bias)];
  }
  return RELOC_CALLEE_RETURNS;
}

static reloc_probes probes_for(const core_session *s, link_ctx *links) {
  uint32_t bits = s->opt.probes;
  return (reloc_probes){
      .entry = true,
      .entry_cover = bits & SHM_PROBE_ENTRY_COVER,
      .blocks = bits & SHM_PROBE_BLOCKS_COUNT   ? RELOC_BLOCKS_COUNT
                : bits & SHM_PROBE_BLOCKS_COVER ? RELOC_BLOCKS_COVER
                                                : RELOC_BLOCKS_NONE,
      .arcs = bits & SHM_PROBE_ARCS,
      .calls = bits & SHM_PROBE_CALLS,
      .atomic = s->opt.atomic,
      .is_entry = is_entry,
      .callee = callee,
      .ctx = links,
  };
}

/* Cover probes are swept, and hot copies get a second one without those that
 * ran (breaks_second_pass): blocks "cover" alone, no counts of blocks or arcs. */
static bool stripping(const core_session *s) {
  uint32_t bits = s->opt.probes;
  return (bits & SHM_PROBE_BLOCKS_COVER) && !(bits & (SHM_PROBE_BLOCKS_COUNT | SHM_PROBE_ARCS));
}

/* The slot of block B of a copy (BLOCKS, INFO) whose slots start at BASE:
 * its probe's, the entry's, or SHM_NONE (no block probes, or dominated). */
static uint32_t block_slot(const core_session *s, const reloc_block *blocks, size_t b, uint32_t base,
                           const reloc_info *info) {
  if (blocks[b].cover == RELOC_COVER_ENTRY) return base;
  if (blocks[b].cover == RELOC_COVER_DOMINATED) return SHM_NONE;
  bool block_slots = s->opt.probes & (SHM_PROBE_BLOCKS_COUNT | SHM_PROBE_BLOCKS_COVER);
  return block_slots ? base + (uint32_t)(info->block_slot + b) : SHM_NONE;
}

/* One buffer holds a copy's blocks, then its edges, then its call sites, on
 * their way into the counters file. */
typedef union table_entry {
  shm_block block;
  shm_edge edge;
  shm_call call;
} table_entry;

/* Reserves the function's slots and writes its graph into the counters file,
 * once per file (a fork child's file starts as a copy of its parent's).  The
 * slot layout is reloc.h's: entry, blocks, counted edges, calls. */
static lp_status publish_graph(core_session *s, process *p, pmodule *m, long i, const reloc_plan *plan,
                               const reloc_info *info) {
  shm_counters *c = &p->counters;
  shm_function *sf = &shm_functions(c)[m->first + i];
  if (sf->slot != SHM_NONE) return LP_OK;
  shm_reservation r;
  bool calls_slot = stripping(s) && (s->opt.probes & SHM_PROBE_ENTRY_COVER); /* one more, last */
  LP_CHECK(shm_reserve(c, (uint32_t)info->ncounters + calls_slot, (uint32_t)info->nblocks, (uint32_t)info->nedges,
                       (uint32_t)info->ncalls, &r));
  if (calls_slot) m->fns[i].calls_slot = r.slot + (uint32_t)info->ncounters;
  bool call_slots = s->opt.probes & SHM_PROBE_CALLS;
  uint64_t bias = m->bias;
  size_t most = info->nblocks > info->nedges ? info->nblocks : info->nedges;
  if (info->ncalls > most) most = info->ncalls;
  void *table = malloc((most ? most : 1) * sizeof(table_entry));
  if (!table) return lp_fail("out of memory");
  const reloc_block *blocks = reloc_blocks(plan);
  shm_block *sb = table;
  uint32_t sides = 0; /* under arcs, the side entries' counters, in block order */
  for (size_t b = 0; b < info->nblocks; b++) {
    uint32_t slot = block_slot(s, blocks, b, r.slot, info);
    bool counted_side = blocks[b].entered && (s->opt.probes & SHM_PROBE_ARCS);
    sb[b] = (shm_block){blocks[b].addr - bias,
                        blocks[b].size,
                        blocks[b].ninsns,
                        slot,
                        (blocks[b].leaks ? SHM_BLOCK_LEAKS : 0) |
                            (blocks[b].cover == RELOC_COVER_DOMINATED ? SHM_BLOCK_DOMINATED : 0) |
                            (blocks[b].entered ? SHM_BLOCK_ENTERED : 0) |
                            (blocks[b].escapes ? SHM_BLOCK_ESCAPES : 0),
                        blocks[b].idom,
                        counted_side ? r.slot + (uint32_t)info->side_slot + sides++ : SHM_NONE};
  }
  lp_status st = shm_put_blocks(c, r.first_block, sb, info->nblocks);
  const reloc_edge *edges = reloc_edges(plan);
  shm_edge *se = table;
  uint32_t counted = 0;
  for (size_t e = 0; e < info->nedges; e++)
    se[e] = (shm_edge){edges[e].branch - bias, edges[e].target ? edges[e].target - bias : 0,
                       edges[e].from, edges[e].to == RELOC_EXIT ? SHM_NONE : edges[e].to,
                       edges[e].counted ? r.slot + (uint32_t)info->edge_slot + counted++ : SHM_NONE,
                       edges[e].kind, {0}};
  if (st == LP_OK) st = shm_put_edges(c, r.first_edge, se, info->nedges);
  const reloc_call *calls = reloc_calls(plan);
  shm_call *sc = table;
  for (size_t k = 0; k < info->ncalls; k++)
    sc[k] = (shm_call){calls[k].site - bias, calls[k].target ? calls[k].target - bias : 0,
                       call_slots ? r.slot + (uint32_t)(info->call_slot + k) : SHM_NONE, 0};
  if (st == LP_OK) st = shm_put_calls(c, r.first_call, sc, info->ncalls);
  free(table);
  LP_CHECK(st);
  sf->first_block = r.first_block;
  sf->nblocks = (uint32_t)info->nblocks;
  sf->first_edge = r.first_edge;
  sf->nedges = (uint32_t)info->nedges;
  sf->first_call = r.first_call;
  sf->ncalls = (uint32_t)info->ncalls;
  sf->slot = r.slot; /* last: the graph is complete before anything points at it */
  return LP_OK;
}

/* {=== removing cover probes ===*/

bool breaks_sweeping(const core_session *s) {
  return ((s->opt.probes & SHM_PROBE_BLOCKS_COVER) && !(s->opt.probes & SHM_PROBE_BLOCKS_COUNT)) ||
         (s->opt.probes & SHM_PROBE_ENTRY_COVER);
}

static lp_status remember(process *p, uint64_t addr, uint32_t slot, uint64_t then_count) {
  if (p->npending == p->cappending) {
    size_t cap = p->cappending ? 2 * p->cappending : 256;
    cover_probe *grown = realloc(p->pending, cap * sizeof *grown);
    if (grown) p->pending = grown;
    uint32_t *slots = grown ? realloc(p->pending_slots, cap * sizeof *slots) : NULL;
    if (!slots) return lp_fail("out of memory");
    p->pending_slots = slots;
    p->cappending = cap;
  }
  p->pending_slots[p->npending] = slot;
  p->pending[p->npending++] = (cover_probe){addr, then_count};
  return LP_OK;
}

/* Keeps the cover probes of a new copy of function I of M at DEST (its
 * entry's, its blocks') for removal; with COUNT_CALLS, the entry's mark
 * becomes a count of its calls when the function has a slot for them (its
 * first copy, while stripping: a count on every call of a function called
 * from several threads at once would cost more than the NOP). */
static lp_status remember_cover_probes(core_session *s, process *p, const pmodule *m, long i,
                                       const reloc_plan *plan, const reloc_info *info, uint64_t dest,
                                       bool count_calls) {
  if (!breaks_sweeping(s)) return LP_OK;
  const shm_function *sf = &shm_functions(&p->counters)[m->first + i];
  uint32_t calls = count_calls ? m->fns[i].calls_slot : 0;
  int64_t off = reloc_entry_probe_offset(plan);
  if (off >= 0) LP_CHECK(remember(p, dest + (uint64_t)off, sf->slot, calls ? m->slots + 8 * (uint64_t)calls : 0));
  const reloc_block *blocks = reloc_blocks(plan); /* not the file's: its pages were never read */
  for (size_t b = 0; b < info->nblocks; b++) {
    off = reloc_cover_probe_offset(plan, b);
    uint32_t slot = block_slot(s, blocks, b, sf->slot, info);
    if (off >= 0 && slot != SHM_NONE) LP_CHECK(remember(p, dest + (uint64_t)off, slot, 0));
  }
  return LP_OK;
}

static int by_address(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static int by_probe_address(const void *a, const void *b) {
  uint64_t x = ((const cover_probe *)a)->addr, y = ((const cover_probe *)b)->addr;
  return x < y ? -1 : x > y;
}

/* What replaces cover probe C: a NOP of its size, or the count of its
 * function's calls (`inc qword [rip+d]`, as long: flags are dead at an entry). */
static void replacement(const cover_probe *c, uint8_t out[RELOC_COVER_PROBE_SIZE]) {
  static const uint8_t nop7[RELOC_COVER_PROBE_SIZE] = {0x0f, 0x1f, 0x80, 0, 0, 0, 0}; /* nopl 0(%rax) */
  memcpy(out, nop7, sizeof nop7);
  if (!c->then_count) return;
  int32_t d = (int32_t)(c->then_count - (c->addr + RELOC_COVER_PROBE_SIZE));
  out[0] = 0x48, out[1] = 0xff, out[2] = 0x05;
  memcpy(out + 3, &d, sizeof d);
}

/* A run of probes removed together: no gap between two of them wider than
 * PROBE_GAP, none of them farther than SPAN from the first.  Each run costs
 * four system calls (~2 us each here) whatever its bytes, and each byte it
 * copies four times ~1 ns: a gap of a page costs about what a run does. */
#define PROBE_GAP PAGE

/* Replaces each probe of PROBES (sorted by address) by its replacement, a run
 * of them at a time: one read, then three writes: an int3 over each first
 * byte, then the rest of each, then its first byte. */
static lp_status remove_probes(process *p, const cover_probe *probes, size_t n) {
  uint8_t with[RELOC_COVER_PROBE_SIZE];
  for (size_t k = 0; k < n;) {
    size_t j = k + 1;
    while (j < n && probes[j].addr - probes[j - 1].addr <= PROBE_GAP &&
           probes[j].addr - probes[k].addr <= SPAN)
      j++;
    uint64_t lo = probes[k].addr, hi = probes[j - 1].addr + RELOC_COVER_PROBE_SIZE;
    LP_CHECK(core_mem_read(&p->target, lo, span, hi - lo));
    for (size_t q = k; q < j; q++) span[probes[q].addr - lo] = INT3;
    LP_CHECK(core_mem_write(&p->target, lo, span, hi - lo));
    for (size_t q = k; q < j; q++) {
      replacement(&probes[q], with);
      memcpy(span + (probes[q].addr - lo) + 1, with + 1, sizeof with - 1);
    }
    LP_CHECK(core_mem_write(&p->target, lo, span, hi - lo));
    for (size_t q = k; q < j; q++) {
      replacement(&probes[q], with);
      span[probes[q].addr - lo] = with[0];
    }
    LP_CHECK(core_mem_write(&p->target, lo, span, hi - lo));
    k = j;
  }
  return LP_OK;
}

/* Replaces the probes of P whose blocks have run by NOPs (or counts of
 * calls): an int3 in their first byte, then the rest, then the first byte, so
 * that no thread ever runs a half-written instruction. */
lp_status breaks_sweep(core_session *s, process *p) {
  uint64_t now = core_now_ns();
  if (now < p->sweep_next_ns) return LP_OK;
  size_t n = 0, kept = 0;
  while (kept < p->npending && !shm_slot_value(&p->counters, p->pending_slots[kept])) kept++;
  cover_probe *done = kept < p->npending ? malloc((p->npending - kept) * sizeof *done) : NULL;
  if (kept < p->npending && !done) return lp_fail("out of memory");
  for (size_t k = kept; k < p->npending; k++) {
    if (shm_slot_value(&p->counters, p->pending_slots[k])) {
      done[n++] = p->pending[k];
    } else {
      p->pending_slots[kept] = p->pending_slots[k];
      p->pending[kept++] = p->pending[k];
    }
  }
  p->npending = kept;
  lp_status st = LP_OK;
  if (n) {
    qsort(done, n, sizeof *done, by_probe_address);
    uint64_t *grown = realloc(p->removed, (p->nremoved + n) * sizeof *grown);
    if (!grown) st = lp_fail("out of memory");
    if (st == LP_OK) { /* merged in, from the top, before the int3s can trap */
      p->removed = grown;
      size_t i = p->nremoved, j = n, k = p->nremoved + n;
      while (j > 0)
        p->removed[--k] = i > 0 && p->removed[i - 1] > done[j - 1].addr ? p->removed[--i] : done[--j].addr;
      p->nremoved += n;
      st = remove_probes(p, done, n);
    }
    s->stats.cover_removed += n;
  }
  free(done);
  /* A sweep that found nothing waits twice as long for the next, up to
   * SWEEP_MAX_MS: in a long run most probes left are in code that never
   * runs, and each sweep reads them all.  Half a tick early, as ticks drift. */
  uint32_t wait = n || !p->sweep_ms ? SWEEP_MS : 2 * p->sweep_ms;
  p->sweep_ms = wait < SWEEP_MAX_MS ? wait : SWEEP_MAX_MS;
  p->sweep_next_ns = now + (uint64_t)p->sweep_ms * 1000000 - SWEEP_MS / 2 * 1000000ull;
  s->stats.sweep_ns += core_now_ns() - now;
  return st;
}

/* Is ADDR a removed probe (whose int3 a thread may have met)? */
static bool removed_probe(const process *p, uint64_t addr) {
  return p->nremoved && bsearch(&addr, p->removed, p->nremoved, sizeof addr, by_address);
}

/* }=== */

/* The original call frame information of FN, at run-time addresses; false
 * when the module has none for it. */
static bool find_cfi(const pmodule *m, const core_function *fn, reloc_cfi *out) {
  core_cfi cc;
  if (core_module_cfi(m->file->module, fn->addr, &cc) != LP_OK) return false;
  const core_image *im = &m->file->image;
  bool lsda = cc.lsda && cc.lsda >= im->base && cc.lsda < im->base + im->size;
  *out = (reloc_cfi){.pc_begin = cc.pc_begin + m->bias,
                     .pc_range = cc.pc_range,
                     .code_align = cc.code_align,
                     .data_align = cc.data_align,
                     .ra_reg = cc.ra_reg,
                     .signal_frame = cc.signal_frame,
                     .cie_program = cc.cie_program,
                     .cie_program_size = cc.cie_program_size,
                     .fde_program = cc.fde_program,
                     .fde_program_size = cc.fde_program_size,
                     .personality_enc = cc.personality_enc,
                     .personality = cc.personality_enc != 0xff ? cc.personality + m->bias : 0,
                     .lsda = lsda ? cc.lsda + m->bias : 0,
                     .lsda_bytes = lsda ? im->bytes + (cc.lsda - im->base) : NULL,
                     .lsda_size = lsda ? im->base + im->size - cc.lsda : 0};
  return true;
}

/* Names the copy of FN at DEST for perf and gives it unwind information made
 * from CFI, the original's (NULL: none), registered before the next unwind.
 * A function without exception tables gets it and its GDB object only when
 * the program unwinds, dumps core or is left (process_describe_later: ~6 % of
 * the tracer's instructions on programs that never need them).  Fails only
 * when the function has exception tables that its copy cannot have: it must
 * not run then, or a throw through it would end the program. */
static lp_status describe_copy(process *p, const pmodule *m, const core_function *fn, const reloc_cfi *cfi,
                               const reloc_plan *plan, uint64_t dest, uint64_t size) {
  core_perfmap_add(&p->perfmap, dest, size, fn->name);
  if (!cfi || !cfi->lsda) {
    size_t norigins;
    const reloc_origin *origins = reloc_origins(plan, &norigins);
    LP_CHECK(process_describe_later(p, fn->name, dest, size, m->arena.base, cfi, origins, norigins));
    return process_arm_unwinder(p);
  }
  reloc_unwind u;
  LP_CHECK(reloc_unwind_build(plan, cfi, dest, &u));
  lp_status st = process_describe(p, fn->name, dest, size, m->arena.base, &u);
  reloc_unwind_free(&u);
  if (st == LP_OK) st = process_arm_unwinder(p);
  return st;
}

/* Writes the copy of function I of M planned in PLAN (CFI: the original's
 * call frame information, if any) into the module's arena, its probes on the
 * slots from SLOT on, and names it: its address in *DEST, its SIZE bytes in
 * *COPY (the caller frees, also on failure), to be written into the target.
 * The arena gives the size measured before emission, then takes back what
 * the copy's short branches left over. */
static lp_status emit_copy(process *p, pmodule *m, long i, reloc_plan *plan, const reloc_cfi *cfi, uint32_t slot,
                           uint64_t *dest, uint8_t **copy, size_t *size) {
  size_t most = reloc_copy_size(plan);
  link_ctx links = {p};
  *copy = NULL;
  LP_CHECK(shm_arena_alloc(&m->arena, most, 16, dest));
  if (!(*copy = malloc(most ? most : 1))) return lp_fail("out of memory");
  LP_CHECK(reloc_emit(plan, *dest, *copy, m->slots + 8 * (uint64_t)slot, copy_of, &links));
  *size = reloc_copy_size(plan);
  shm_arena_shrink(&m->arena, *dest, *size);
  return describe_copy(p, m, &m->file->module->functions[i], cfi, plan, *dest, *size);
}

/* Calls through the PLT go straight to the copy of FN (ENTRY at run time,
 * now at COPY): every PLT slot of a module bound to FN's name that holds
 * ENTRY gets COPY.  Only PLT stubs read those slots, so no function
 * pointer the program can see changes; a slot bound later (lazy binding)
 * gets ENTRY and goes through the entry's jmp as before. */
static void redirect_plt(core_session *s, process *p, const core_function *fn, uint64_t entry, uint64_t copy) {
  if (fn->binding != CORE_BIND_GLOBAL && fn->binding != CORE_BIND_WEAK) return;
  for (size_t k = 0; k < p->nmods; k++) {
    const pmodule *m = &p->mods[k];
    const core_module *mod = m->file->module;
    if (m->unloaded || !mod->nplt_slots) continue;
    size_t lo = 0, hi = mod->nplt_slots;
    while (lo < hi) { /* the first slot named fn->name */
      size_t mid = (lo + hi) / 2;
      if (strcmp(mod->plt_slots[mid].name, fn->name) < 0) lo = mid + 1;
      else hi = mid;
    }
    for (; lo < mod->nplt_slots && !strcmp(mod->plt_slots[lo].name, fn->name); lo++) {
      uint64_t slot = mod->plt_slots[lo].got + m->bias, held;
      if (core_mem_read(&p->target, slot, &held, sizeof held) != LP_OK || held != entry) continue;
      if (p->nredirects == p->capredirects) {
        size_t cap = p->capredirects ? 2 * p->capredirects : 16;
        plt_redirect *grown = realloc(p->redirects, cap * sizeof *grown);
        if (!grown) return;
        p->redirects = grown;
        p->capredirects = cap;
      }
      if (core_mem_write(&p->target, slot, &copy, sizeof copy) != LP_OK) continue;
      p->redirects[p->nredirects++] = (plt_redirect){slot, entry, k};
      s->stats.plt_redirected++;
    }
  }
}

/* What the relocator needs to know of function FN of M; CFI receives its call
 * frame information when it has some (desc.cfi points at it). */
static reloc_function_desc function_desc(const pmodule *m, const core_function *fn, reloc_cfi *cfi) {
  const core_image *image = &m->file->image;
  uint64_t entry = fn->addr + m->bias;
  bool has_cfi = find_cfi(m, fn, cfi);
  return (reloc_function_desc){
      .entry = entry,
      .lo = entry,
      .hi = entry + fn->size,
      .code = image->bytes,
      .code_base = image->base + m->bias,
      .code_size = image->size,
      .bias = m->bias,
      .readonly = (const uint64_t(*)[2])m->file->module->readonly,
      .nreadonly = m->file->module->nreadonly,
      .cfi = has_cfi ? cfi : NULL,
  };
}

/* FN's description (function_desc) with its side entries (sides_of), into
 * *ENTERED (run-time; the caller frees it). */
static reloc_function_desc desc_with_sides(const pmodule *m, const core_function *fn, reloc_cfi *cfi,
                                           uint64_t **entered) {
  reloc_function_desc desc = function_desc(m, fn, cfi);
  const side_entries *se = sides_of(m, (long)(fn - m->file->module->functions));
  *entered = se && se->n ? malloc(se->n * sizeof **entered) : NULL;
  if (*entered) {
    for (uint32_t k = 0; k < se->n; k++) (*entered)[k] = se->at[k] + m->bias;
    desc.entered = *entered;
    desc.nentered = se->n;
  }
  return desc;
}

/* In a stripped module gcc's parts have no names to be linked by (both are
 * fn_ADDR, from their FDEs).  A function with no symbol whose frame does not
 * start as a call leaves it (a part of another function's frame), and whose
 * jumps out of itself land inside one other function and only there (past
 * its first byte: not a tail call), is that function's other part, and is
 * named NAME.cold after it when it has a symbol's NAME.  All of a module
 * file's are linked when its first process image lists it (a part's link
 * must be known when either part is planned: the hot part is planned first,
 * its cold part then relocated as its callee; and the names go into the
 * counters file). */

static bool unnamed_frame_part(const pmodule *m, long j) {
  const core_function *fn = &m->file->module->functions[j];
  if (fn->part != CORE_NO_PART || fn->sources & (CORE_FROM_SYMTAB | CORE_FROM_DYNSYM)) return false;
  reloc_cfi cfi;
  return find_cfi(m, fn, &cfi) && !reloc_cfi_starts_called(&cfi);
}

/* The function that function J of M (unnamed_frame_part) jumps into, or -1. */
static long hot_part_of(const pmodule *m, long j) {
  const core_module *mod = m->file->module;
  reloc_cfi cfi;
  reloc_function_desc code = function_desc(m, &mod->functions[j], &cfi);
  uint64_t at[MAX_SIDE_ENTRIES];
  size_t n = reloc_jumps_into(&code, code.lo, code.hi, m->lo, m->hi, at, MAX_SIDE_ENTRIES);
  long hot = -1;
  for (size_t k = 0; k < n && k < MAX_SIDE_ENTRIES; k++) {
    const core_function *g = core_module_function_at(mod, at[k] - m->bias);
    if (!g || g == &mod->functions[j] || g->addr == at[k] - m->bias) continue; /* its own, or a tail call */
    if (hot >= 0 && g != &mod->functions[hot]) return -1;
    hot = (long)(g - mod->functions);
  }
  return hot;
}

lp_status breaks_link_unnamed_parts(core_session *s, module_file *file, uint64_t bias) {
  if (file->unnamed_parts_linked) return LP_OK;
  file->unnamed_parts_linked = true;
  core_module *mod = file->module;
  const pmodule m = {.file = file, .bias = bias, .lo = mod->min_vaddr + bias, .hi = mod->max_vaddr + bias};
  for (size_t j = 0; j < mod->nfunctions; j++) {
    if (!unnamed_frame_part(&m, (long)j)) continue;
    long hot = hot_part_of(&m, (long)j);
    if (hot < 0 || mod->functions[hot].part != CORE_NO_PART) continue;
    mod->functions[j].part = (uint32_t)hot;
    mod->functions[hot].part = (uint32_t)j;
    s->stats.parts_linked++;
    const core_function *h = &mod->functions[hot];
    if (!(h->sources & (CORE_FROM_SYMTAB | CORE_FROM_DYNSYM))) continue;
    char **grown = realloc(file->names, (file->nnames + 1) * sizeof *grown);
    char *name = malloc(strlen(h->name) + sizeof ".cold");
    if (!grown || !name) {
      free(name);
      if (grown) file->names = grown;
      return lp_fail("out of memory");
    }
    file->names = grown;
    strcpy(name, h->name);
    strcat(name, ".cold");
    file->names[file->nnames++] = name;
    mod->functions[j].name = name;
  }
  return LP_OK;
}

/* Plans DESC, with its side entries, else without them: they come from a
 * linear decode of the other part, which data there could have misled (a
 * side entry inside an instruction would make the plan fail). */
static lp_status plan_with_sides(reloc_function_desc *desc, const reloc_probes *probes, reloc_plan **plan,
                                 reloc_info *info) {
  lp_status st = reloc_plan_function(desc, probes, plan, info);
  if (st == LP_OK || !desc->nentered) return st;
  desc->nentered = 0;
  return reloc_plan_function(desc, probes, plan, info);
}

/* Where the side entries of function I of M landed in its first copy, made
 * from PLAN (the same in every process image: planned alike). */
static void side_offsets(pmodule *m, long i, const reloc_plan *plan) {
  side_entries *se = m->file->sides ? &m->file->sides[i] : NULL;
  for (uint32_t k = 0; se && k < se->n; k++)
    if (se->off[k] < 0) se->off[k] = reloc_side_entry_offset(plan, se->at[k] + m->bias);
}

static int by_at(const void *a, const void *b) {
  const side_jump *x = *(side_jump *const *)a, *y = *(side_jump *const *)b;
  return x->at < y->at ? -1 : x->at > y->at;
}

/* Points the N side_jumps RUN[0..N) (one after another in the arena) at
 * their TOs: one write when nothing runs meanwhile (write_entry), else the
 * int3s first, then the rel32s, then the jmps (write_under_int3, all at once). */
static lp_status point_run(process *p, side_jump *const *run, size_t n) {
  uint8_t bytes[64 * SIDE_JUMP_ROOM];
  memset(bytes, INT3, n * SIDE_JUMP_ROOM);
  for (size_t k = 0; k < n; k++) jmp_bytes(bytes + k * SIDE_JUMP_ROOM, run[k]->at, run[k]->target);
  uint64_t at = run[0]->at;
  size_t size = (n - 1) * SIDE_JUMP_ROOM + JMP_REL32_SIZE;
  bool one = p->refs == 1;
  if (!one) {
    for (size_t k = 0; k < n; k++) bytes[k * SIDE_JUMP_ROOM] = INT3;
    LP_CHECK(core_mem_write(&p->target, at, bytes, size));
  }
  for (size_t k = 0; k < n; k++) jmp_bytes(bytes + k * SIDE_JUMP_ROOM, run[k]->at, run[k]->to);
  if (!one) {
    for (size_t k = 0; k < n; k++) bytes[k * SIDE_JUMP_ROOM] = INT3;
    LP_CHECK(core_mem_write(&p->target, at, bytes, size));
    for (size_t k = 0; k < n; k++) bytes[k * SIDE_JUMP_ROOM] = JMP_REL32;
  }
  return core_mem_write(&p->target, at, bytes, size);
}

/* Points the N side_jumps of SJ, in runs of neighbours (point_run). */
static lp_status point_runs(process *p, side_jump **sj, size_t n) {
  qsort(sj, n, sizeof *sj, by_at);
  for (size_t k = 0, start = 0; k < n; k++)
    if (k + 1 == n || sj[k + 1]->at != sj[k]->at + SIDE_JUMP_ROOM) {
      LP_CHECK(point_run(p, sj + start, k + 1 - start));
      start = k + 1;
    }
  return LP_OK;
}

/* The side_jumps waiting for function I of M pointed into its first copy,
 * written at COPY. */
static lp_status point_side_jumps(process *p, pmodule *m, long i, uint64_t copy) {
  const side_entries *se = m->file->sides ? &m->file->sides[i] : NULL;
  side_jump *sj[64];
  size_t n = 0;
  for (uint32_t j = se ? m->fns[i].side_jumps : 0; j; j = p->side_jumps[j - 1].before) {
    side_jump *s = &p->side_jumps[j - 1];
    long k = !s->to ? side_index(se, s->target - m->bias) : -1;
    if (k < 0 || se->off[k] < 0) continue;
    s->to = copy + (uint64_t)se->off[k]; /* also where a thread that meets its int3 goes */
    s->waits = false;
    sj[n++] = s;
    if (n == 64) {
      LP_CHECK(point_runs(p, sj, n));
      n = 0;
    }
  }
  return point_runs(p, sj, n);
}

/* The side_jump at AT (index + 1), 0: none. */
static size_t side_jump_at(const process *p, uint64_t at) {
  for (size_t j = 0; j < p->nside_jumps; j++)
    if (p->side_jumps[j].at == at) return j + 1;
  return 0;
}

static lp_status first_hit(core_session *s, process *p, pmodule *m, long i, int depth, breaks_resume *resume,
                           size_t nresume);

/* Where a thread that met the int3 of side_jump J goes: into its function's
 * copy (being pointed there, or made now: the side jump waited for its
 * function's first run), or to its target (the function left native). */
static lp_status on_side_jump(core_session *s, process *p, size_t j, pid_t tid, struct user_regs_struct *regs) {
  side_jump sj = p->side_jumps[j]; /* the array may grow while relocating */
  if (sj.waits) {
    pmodule *m = &p->mods[sj.module];
    if (m->fns[sj.function].state == SHM_NOT_RUN) {
      s->stats.trap_hits++;
      LP_CHECK(first_hit(s, p, m, sj.function, EAGER_DEPTH, NULL, 0));
    }
    sj = p->side_jumps[j];
    if (sj.waits) { /* no copy took it in: the original, from now on */
      uint8_t jmp[JMP_REL32_SIZE];
      jmp_bytes(jmp, sj.at, sj.target);
      LP_CHECK(write_under_int3(p, sj.at, jmp, sizeof jmp, true));
      p->side_jumps[j].waits = false;
    }
  }
  regs->rip = sj.to ? sj.to : sj.target;
  return core_regs_set(tid, regs);
}

/* Why the entry of function I of M (CFI: its call frame information, if
 * any) may not become a jmp: its bytes 1..4 are not its own or something may
 * branch into them (a part of another function's frame is entered by jumps,
 * anywhere in it; the unwinder enters a landing pad); NULL when it may. */
static const char *jump_refused(const pmodule *m, long i, const reloc_cfi *cfi) {
  const core_function *fn = &m->file->module->functions[i];
  if (fn->room < JMP_REL32_SIZE) return "entry too small for a jmp";
  if (m->fns[i].entered_inside) return "another function jumps into its first bytes";
  if (cfi && !reloc_cfi_starts_called(cfi)) return "a part of another function's frame";
  uint64_t entry = fn->addr + m->bias;
  if (cfi && reloc_cfi_pad_in(cfi, entry + 1, entry + JMP_REL32_SIZE)) return "a landing pad in its first bytes";
  return NULL;
}

bool breaks_may_jump(const pmodule *m, long i) {
  if (jump_refused(m, i, NULL)) return false;
  reloc_cfi cfi;
  return !find_cfi(m, &m->file->module->functions[i], &cfi) || !jump_refused(m, i, &cfi);
}

/* {=== plans kept for the next process image ===
 *
 * A test suite runs the same programs hundreds of times (xz's `make check`:
 * 1131 process images): from a module file's second image on, the plans of its
 * functions are kept in its module_file and the next image rebases them
 * (reloc_plan_rebase) instead of decoding and planning again.  Only first
 * copies' plans (the probes every copy of the session asks for); one in use
 * is out of the cache, so that a recursion back into it plans its own. */

/* The kept plan of function I of M, rebased for M (false: none). */
static bool take_plan(core_session *s, pmodule *m, long i, reloc_plan **plan, reloc_info *info) {
  cached_plan *c = m->file->plans ? &m->file->plans[i] : NULL;
  if (!c || !c->plan) return false;
  reloc_plan_rebase(c->plan, (int64_t)(m->bias - c->bias));
  *plan = c->plan;
  *info = c->info;
  c->plan = NULL;
  s->stats.plans_reused++;
  return true;
}

/* Keeps PLAN of function I of M, emitted for M, when M's file is in its
 * second process image or later; frees it otherwise. */
static void keep_plan(pmodule *m, long i, reloc_plan *plan, const reloc_info *info) {
  module_file *f = m->file;
  if (f->images >= 2 && !f->plans) f->plans = calloc(f->module->nfunctions, sizeof *f->plans);
  if (!plan || f->images < 2 || !f->plans || f->plans[i].plan) {
    reloc_plan_free(plan);
    return;
  }
  f->plans[i] = (cached_plan){plan, *info, m->bias};
}

/* }=== */

/* Relocates function I of module M.  With DEPTH > 0 (a first hit), its
 * direct callees of at most EAGER_MAX_SIZE bytes are relocated too, in the
 * same stop, with DEPTH - 1, so that they never trap: a first hit costs the
 * tracer and the program more than relocating a small function that may
 * never run (docs/PERFORMANCE.md).
 * Callees first: the copy then calls theirs directly.  Each of the NRESUME
 * requests gets the address in the copy where a thread of the original goes
 * on (0: nowhere, it stays in the original). */
static lp_status instrument(core_session *s, process *p, pmodule *m, long i, int depth, breaks_resume *resume,
                            size_t nresume) {
  const core_function *fn = &m->file->module->functions[i];
  uint64_t entry = fn->addr + m->bias;
  reloc_cfi cfi;
  uint64_t *entered;
  reloc_function_desc desc = desc_with_sides(m, fn, &cfi, &entered);
  bool has_cfi = desc.cfi != NULL;
  link_ctx links = {p};
  reloc_probes probes = probes_for(s, &links);
  reloc_plan *plan;
  reloc_info info;
  bool planned = take_plan(s, m, i, &plan, &info) || plan_with_sides(&desc, &probes, &plan, &info) == LP_OK;
  free(entered);
  if (!planned) return leave_native(s, p, m, i, lp_error());
  sides_from_plan(m, i, plan, info.nedges);

  if (depth > 0) {
    uint64_t callees[MAX_EAGER];
    size_t n = reloc_callees(plan, callees, MAX_EAGER);
    for (size_t k = 0; k < n && k < MAX_EAGER; k++) {
      long j;
      pmodule *cm = process_module_at(p, callees[k], &j);
      if (!cm || j < 0 || cm->fns[j].state != SHM_NOT_RUN) continue;
      if (cm->file->module->functions[j].size > EAGER_MAX_SIZE || marks_alone(s, cm, j)) continue;
      lp_status st = instrument(s, p, cm, j, depth - 1, NULL, 0);
      if (st != LP_OK) {
        keep_plan(m, i, plan, &info);
        return st;
      }
      s->stats.eager++;
    }
  }

  uint64_t dest;
  uint8_t *copy = NULL;
  if (publish_graph(s, p, m, i, plan, &info) != LP_OK) {
    reloc_plan_free(plan);
    return leave_native(s, p, m, i, lp_error());
  }
  size_t size;
  const shm_function *sf = &shm_functions(&p->counters)[m->first + i];
  if (prepare_side_jumps(p, m, plan, info.nedges) != LP_OK ||
      emit_copy(p, m, i, plan, has_cfi ? &cfi : NULL, sf->slot, &dest, &copy, &size) != LP_OK) {
    free(copy);
    reloc_plan_free(plan);
    return leave_native(s, p, m, i, lp_error());
  }
  side_offsets(m, i, plan);
  lp_status st = remember_cover_probes(s, p, m, i, plan, &info, dest, true);
  for (size_t k = 0; k < nresume; k++) {
    int64_t off = reloc_resume_offset(plan, resume[k].orig, resume[k].after_call);
    resume[k].copy = off >= 0 ? dest + (uint64_t)off : 0;
  }
  keep_plan(m, i, plan, &info);
  if (st == LP_OK) st = core_mem_write(&p->target, dest, copy, size);
  free(copy);
  LP_CHECK(st);
  LP_CHECK(point_side_jumps(p, m, i, dest));

  const char *keep_break = jump_refused(m, i, has_cfi ? &cfi : NULL);
  if (!keep_break && info.leaves_to_original && info.min_inner_target < JMP_REL32_SIZE)
    keep_break = "body re-entered from outside the copy";
  bool patch = !keep_break;
  if (patch) { /* the only thread is stopped or in the stub, or others may run */
    uint8_t jmp[JMP_REL32_SIZE];
    jmp_bytes(jmp, entry, dest);
    LP_CHECK(write_entry(p, entry, jmp, sizeof jmp, !m->fns[i].stub));
    stubs_release(p, m, i);
  } else if (m->fns[i].stub) {
    LP_CHECK(breaks_put_break(p, m, i));
  }
  m->fns[i].copy = dest;
  m->fns[i].state = patch ? SHM_RELOCATED : SHM_TRAPPED;
  redirect_plt(s, p, fn, entry, dest);
  char note[96] = "";
  if (!patch) snprintf(note, sizeof note, "%s; every call traps", keep_break);
  else if (info.leaves_to_original)
    snprintf(note, sizeof note, "an indirect jump leaves the copy");
  shm_set_state(&p->counters, m->first + (uint32_t)i, m->fns[i].state, note);
  s->stats.instrumented++;
  return LP_OK;
}

/* Writes the perf map lines and the GDB objects of the copies made in this
 * stop, before the target runs them. */
static void describe_stop(process *p) {
  if (core_gdbjit_flush(&p->gdbjit, &p->target) != LP_OK) p->gdbjit.descriptor = 0;
  if (core_perfmap_flush(&p->perfmap) != LP_OK)
    fprintf(stderr, "lazyprobe: process %d: %s\n", (int)p->pid, lp_error());
}

/* A first hit of function I of M, DEPTH calls deep (instrument): its copies
 * described, the time counted. */
static lp_status first_hit(core_session *s, process *p, pmodule *m, long i, int depth, breaks_resume *resume,
                           size_t nresume) {
  uint64_t t0 = core_now_ns();
  if (marks_alone(s, m, i)) {
    s->stats.instrument_ns += core_now_ns() - t0;
    return mark_ran(s, p, m, i);
  }
  LP_CHECK(instrument(s, p, m, i, depth, resume, nresume));
  describe_stop(p);
  s->stats.instrument_ns += core_now_ns() - t0;
  return LP_OK;
}

/* {=== second copies ===
 *
 * A copy is made before anything is known of how it runs.  Every SECOND_MS,
 * a copy that has run a while may be replaced by a second one made with what
 * its counters say:
 *
 * - re-placing arcs: a copy counts the edges off a spanning tree chosen on a
 *   static estimate of how often each edge runs (relocate/reloc_probes.c).
 *   When its counted edges ran RETREE_MIN times or more, it is planned again
 *   with the edges' counts so far (the flow estimated from the live counters)
 *   as the tree's weights; if the new tree's counted edges would have run at
 *   most RETREE_GAIN of what the first's did, the second copy counts those,
 *   on slots of its own (shm_function.retree_slot, mirroring the first's):
 *   each copy's counts are a flow of their own, which reports add up.  Once
 *   per function.
 * - stripping covered probes: a cover probe that ran is a NOP after the
 *   sweep, which still costs a slot in the processor's front end each time it
 *   runs.  When a function was called STRIP_MIN times (its entry count, or,
 *   under entry cover, the count its first copy's entry mark became when it
 *   was removed: `inc` of a slot of its own), a new copy leaves out the
 *   cover probes whose slots are set (reloc_probes.covered) and writes the
 *   others to the same slots: reports see nothing new.  Again whenever more
 *   of its probes ran since (an eighth more, at least one), at most
 *   MAX_STRIPS times; the plan of the first is kept and measured again for
 *   the next.
 *
 * The second copy goes in as an entry is patched: its bytes, then the
 * entry's jmp and the first copy's top (its entry probe, which only calls
 * run) pointed at it, each an int3 first, then the jmp's bytes 1..4, then its
 * opcode (a thread that meets the int3 goes on in the second copy).  Frames
 * already in the first copy finish there.  Calls bound to the first copy (its
 * callers' copies, PLT slots) go through its top's jmp. */

#define RETREE_MIN 65536 /* increments of a copy's counted edges before it is looked at */
#define RETREE_GAIN 0.75 /* at most this share of the first tree's counted increments */
#define STRIP_MIN 262144 /* calls of a function before its covered probes are left out */
#define MAX_STRIPS 4      /* copies a function is stripped into, at most */

static bool retreeing(const core_session *s) {
  uint32_t bits = s->opt.probes;
  return (bits & SHM_PROBE_ARCS) && !(bits & (SHM_PROBE_BLOCKS_COVER | SHM_PROBE_ENTRY_COVER));
}

bool breaks_second_copies(const core_session *s) { return retreeing(s) || stripping(s); }

/* Makes the jmp at AT (or the 5 bytes there) go to TO while threads may be
 * running: an int3 first, then bytes 1..4, then the opcode. */
static lp_status repoint_jmp(process *p, uint64_t at, uint64_t to) {
  uint8_t jmp[JMP_REL32_SIZE];
  jmp_bytes(jmp, at, to);
  return write_under_int3(p, at, jmp, sizeof jmp, false);
}

/* Does the copy at AT start with its entry probe, which only calls run (a
 * jump to block 0 lands after it): `(lock) inc qword [rip+d]`, the entry's
 * mark `mov byte [rip+d], 1`, or what the sweep made of that mark (a 7-byte
 * NOP, an `inc`)? */
static bool starts_with_entry_probe(process *p, uint64_t at) {
  uint8_t b[4];
  if (core_mem_read(&p->target, at, b, sizeof b) != LP_OK) return false;
  static const uint8_t inc[3] = {0x48, 0xff, 0x05}, mark[2] = {0xc6, 0x05}, nop[3] = {0x0f, 0x1f, 0x80};
  return !memcmp(b, inc, sizeof inc) || (b[0] == 0xf0 && !memcmp(b + 1, inc, sizeof inc)) ||
         !memcmp(b, mark, sizeof mark) || !memcmp(b, nop, sizeof nop);
}

/* The plan's graph is the one published for the first copy (SF's). */
static bool same_graph(const reloc_plan *plan, const reloc_info *info, const shm_counters *c,
                       const shm_function *sf, uint64_t bias) {
  if (info->nblocks != sf->nblocks || info->nedges != sf->nedges || info->ncalls != sf->ncalls) return false;
  const reloc_edge *re = reloc_edges(plan);
  const shm_edge *se = shm_edges(c) + sf->first_edge;
  for (size_t e = 0; e < info->nedges; e++)
    if (re[e].branch - bias != se[e].branch || (re[e].target ? re[e].target - bias : 0) != se[e].target ||
        re[e].from != se[e].from || (re[e].to == RELOC_EXIT ? SHM_NONE : re[e].to) != se[e].to ||
        re[e].kind != se[e].kind)
      return false;
  return true;
}

/* Plans function I of M again with PROBES (*PLAN: the caller frees); false
 * when that fails or its graph is not the one published for the first copy. */
static bool plan_second(process *p, pmodule *m, long i, const reloc_probes *probes, reloc_plan **plan,
                        reloc_info *info) {
  const core_function *fn = &m->file->module->functions[i];
  const shm_function *sf = &shm_functions(&p->counters)[m->first + i];
  reloc_cfi cfi;
  uint64_t *entered;
  reloc_function_desc desc = desc_with_sides(m, fn, &cfi, &entered);
  *plan = NULL;
  bool same = reloc_plan_function(&desc, probes, plan, info) == LP_OK &&
              same_graph(*plan, info, &p->counters, sf, m->bias);
  if (!same && desc.nentered) { /* the first was planned without them (plan_with_sides) */
    reloc_plan_free(*plan);
    *plan = NULL;
    desc.nentered = 0;
    same = reloc_plan_function(&desc, probes, plan, info) == LP_OK &&
           same_graph(*plan, info, &p->counters, sf, m->bias);
  }
  free(entered);
  return same;
}

/* Emits PLAN of function I of M as a second copy (emit_copy), its slots from
 * SLOT on. */
static lp_status emit_second(process *p, pmodule *m, long i, reloc_plan *plan, uint32_t slot, uint64_t *dest,
                             uint8_t **copy, size_t *size) {
  reloc_cfi cfi;
  bool has_cfi = find_cfi(m, &m->file->module->functions[i], &cfi);
  return emit_copy(p, m, i, plan, has_cfi ? &cfi : NULL, slot, dest, copy, size);
}

/* The second copy of function I of M, at DEST (written, its slots published),
 * takes the first's place: the entry's jmp and the first copy's top. */
static lp_status install_second(process *p, pmodule *m, long i, uint64_t dest) {
  const core_function *fn = &m->file->module->functions[i];
  fn_state *f = &m->fns[i];
  uint64_t first = f->copy;
  f->copy = dest; /* where a thread that meets one of the int3s below goes */
  f->first_copy = first;
  p->nsecond++;
  if (f->state == SHM_RELOCATED) LP_CHECK(repoint_jmp(p, fn->addr + m->bias, dest));
  return starts_with_entry_probe(p, first) ? repoint_jmp(p, first, dest) : LP_OK;
}

/* What the counted edges of SF's first copy ran so far. */
static uint64_t counted_so_far(const shm_counters *c, const shm_function *sf) {
  const shm_edge *edges = shm_edges(c) + sf->first_edge;
  uint64_t n = 0;
  for (uint32_t e = 0; sf->first_edge != SHM_NONE && e < sf->nedges; e++) n += shm_slot_value(c, edges[e].slot);
  return n;
}

/* EC[e]: how often each edge of SF's first copy ran so far, estimated from
 * its live counters; false without memory. */
static bool ran_so_far(const shm_counters *c, const shm_function *sf, uint64_t *ec) {
  uint64_t *bc = calloc(sf->nblocks + 1, sizeof *bc);
  bool ok = bc && shm_flow(c, sf, shm_edges(c) + sf->first_edge, sf->slot, true, ec, bc) == LP_OK;
  free(bc);
  return ok;
}

/* Re-places the arcs of function I of M when its counts so far say a tree on
 * them would count much less.  Fails only when the target's memory cannot be
 * written (it is ending). */
static lp_status retree(core_session *s, process *p, pmodule *m, long i) {
  shm_counters *c = &p->counters;
  shm_function *sf = &shm_functions(c)[m->first + i];
  uint64_t *ec = calloc(sf->nedges + 1, sizeof *ec);
  if (!ec || !ran_so_far(c, sf, ec)) {
    free(ec);
    return LP_OK;
  }
  link_ctx links = {p};
  reloc_probes probes = probes_for(s, &links);
  probes.edge_counts = ec;
  probes.nedge_counts = sf->nedges;
  reloc_plan *plan;
  reloc_info info;
  uint8_t *copy = NULL;
  lp_status st = LP_OK;
  if (!plan_second(p, m, i, &probes, &plan, &info)) goto out;
  const reloc_edge *re = reloc_edges(plan);
  const shm_edge *first = shm_edges(c) + sf->first_edge;
  uint64_t before = 0, after = 0;
  for (size_t e = 0; e < info.nedges; e++) {
    before += first[e].slot != SHM_NONE ? ec[e] : 0;
    after += re[e].counted ? ec[e] : 0;
  }
  shm_reservation r;
  uint64_t dest;
  size_t size;
  if ((double)after > RETREE_GAIN * (double)before ||
      shm_reserve(c, (uint32_t)info.ncounters, 0, (uint32_t)info.nedges, 0, &r) != LP_OK ||
      emit_second(p, m, i, plan, r.slot, &dest, &copy, &size) != LP_OK)
    goto out;
  shm_edge *second = malloc((info.nedges ? info.nedges : 1) * sizeof *second);
  if (!second) goto out;
  uint32_t counted = 0;
  for (size_t e = 0; e < info.nedges; e++) {
    second[e] = first[e];
    second[e].slot = re[e].counted ? r.slot + (uint32_t)info.edge_slot + counted++ : SHM_NONE;
  }
  st = shm_put_edges(c, r.first_edge, second, info.nedges);
  free(second);
  if (st != LP_OK || (st = core_mem_write(&p->target, dest, copy, size)) != LP_OK) goto out;
  sf->retree_edge = r.first_edge;
  __atomic_store_n(&sf->retree_slot, r.slot, __ATOMIC_RELEASE); /* last: its graph is complete */
  st = install_second(p, m, i, dest);
  s->stats.retreed++;
out:
  free(copy);
  free(ec);
  reloc_plan_free(plan);
  return st;
}

/* How often function I of M (its first copy) was called, as far as its
 * counters tell: its entry count, or its calls once its mark was removed. */
static uint64_t calls_so_far(const process *p, const pmodule *m, long i, const shm_function *sf) {
  if (!(p->counters.header->probes & SHM_PROBE_ENTRY_COVER)) return shm_slot_value(&p->counters, sf->slot);
  return m->fns[i].calls_slot ? shm_slot_value(&p->counters, m->fns[i].calls_slot) : 0;
}

/* Blocks of SF with a cover probe of their own whose slot is set (COVERED[b],
 * when given); returns how many. */
static uint32_t covered_probes(const shm_counters *c, const shm_function *sf, uint8_t *covered) {
  const shm_block *blocks = shm_blocks(c) + sf->first_block;
  uint32_t n = 0;
  for (uint32_t b = 0; b < sf->nblocks; b++) {
    bool set = blocks[b].slot != SHM_NONE && shm_slot_value(c, blocks[b].slot) != 0;
    if (covered) covered[b] = set;
    n += set;
  }
  return n;
}

/* Leaves out of a second copy of function I of M the cover probes whose
 * slots are set.  Fails only when the target's memory cannot be written. */
static lp_status strip(core_session *s, process *p, pmodule *m, long i) {
  const shm_counters *c = &p->counters;
  const shm_function *sf = &shm_functions(c)[m->first + i];
  uint8_t *covered = calloc(sf->nblocks + 1, 1);
  if (!covered) return LP_OK;
  uint32_t ncovered = covered_probes(c, sf, covered), left_out = ncovered;
  if (c->header->probes & SHM_PROBE_ENTRY_COVER) { /* the entry's mark stays: it counts calls once removed */
    left_out -= covered[0];
    covered[0] = 0;
  }
  kept_plan *k = m->fns[i].kept; /* the plan of its last strip: measured again, not planned again */
  uint8_t *copy = NULL;
  uint64_t dest;
  size_t size;
  lp_status st = LP_OK;
  if (left_out == 0) goto out;
  if (k) {
    if (reloc_plan_cover_again(k->plan, covered, sf->nblocks, &k->info) != LP_OK) goto out;
  } else {
    link_ctx links = {p};
    reloc_probes probes = probes_for(s, &links);
    probes.covered = covered;
    probes.ncovered = sf->nblocks;
    reloc_plan *plan;
    reloc_info info;
    if (!plan_second(p, m, i, &probes, &plan, &info) || !(k = malloc(sizeof *k))) {
      reloc_plan_free(plan);
      goto out;
    }
    *k = (kept_plan){plan, info};
    m->fns[i].kept = k;
  }
  if (emit_second(p, m, i, k->plan, sf->slot, &dest, &copy, &size) != LP_OK) goto out;
  if ((st = core_mem_write(&p->target, dest, copy, size)) != LP_OK ||
      (st = remember_cover_probes(s, p, m, i, k->plan, &k->info, dest, false)) != LP_OK)
    goto out;
  st = install_second(p, m, i, dest);
  s->stats.stripped++;
  m->fns[i].nstrips++;
  m->fns[i].strip_covered = ncovered;
out:
  free(copy);
  free(covered);
  return st;
}

/* {=== going home ===
 *
 * Under cover probes alone (homing), a hot function whose coverage stopped
 * growing goes home: it runs its original code again, at native speed, with
 * an int3 on the first byte of every block whose probe has not run (Tikir and
 * Hollingsworth's one-shot breakpoints, for the blocks left).  A thread that
 * meets one sets the block's slot, gets the byte back and goes on there
 * (breaks_on_trap): a stop for each block first run after, which is why only
 * a function called HOME_MIN times whose covered probes did not change over
 * one pass goes.  Its entry gets its original bytes back (an int3 first); the
 * top of its copy, where calls bound to the copy go, jumps to the entry;
 * frames already in the copy finish there.  Only a function whose blocks
 * with a probe all lie in its own bytes (core_function.room), so that no two
 * functions' int3s meet.  The int3s not met go at detach; a fork child's
 * memory has them too, and so has its list.  The cover probes left in its
 * copies are no longer swept (forget_pending). */

#define HOME_MIN 32768 /* calls of a function before it may go home */

/* Nothing but coverage: no entry or call counts that the original code
 * would miss. */
static bool homing(const core_session *s) {
  uint32_t bits = s->opt.probes;
  return stripping(s) && (bits & SHM_PROBE_ENTRY_COVER) && !(bits & SHM_PROBE_CALLS);
}

static int by_home_address(const void *a, const void *b) {
  uint64_t x = ((const home_probe *)a)->addr, y = ((const home_probe *)b)->addr;
  return x < y ? -1 : x > y;
}

/* The int3 of a block of a function gone home at AT, if any. */
static home_probe *home_at(const process *p, uint64_t at) {
  home_probe key = {.addr = at};
  home_probe *h = p->nhomes ? bsearch(&key, p->homes, p->nhomes, sizeof key, by_home_address) : NULL;
  return h && !p->mods[h->module].unloaded ? h : NULL;
}

/* Function I of M (SF) runs from a jmp at its entry, and every block with a
 * cover probe lies in its own bytes. */
static bool may_go_home(const process *p, const pmodule *m, long i, const shm_function *sf) {
  const core_function *fn = &m->file->module->functions[i];
  const shm_block *blocks = shm_blocks(&p->counters) + sf->first_block;
  if (m->fns[i].state != SHM_RELOCATED || m->fns[i].home) return false;
  for (uint32_t b = 0; b < sf->nblocks; b++)
    if (blocks[b].slot != SHM_NONE && (blocks[b].addr < fn->addr || blocks[b].addr >= fn->addr + fn->room))
      return false;
  return true;
}

/* Merges the N int3s of H into P's homes, sorted, from the top. */
static lp_status keep_home_probes(process *p, home_probe *h, size_t n) {
  if (p->nhomes + n > p->caphomes) {
    size_t cap = 2 * (p->nhomes + n);
    home_probe *grown = realloc(p->homes, cap * sizeof *grown);
    if (!grown) return lp_fail("out of memory");
    p->homes = grown;
    p->caphomes = cap;
  }
  qsort(h, n, sizeof *h, by_home_address);
  size_t i = p->nhomes, j = n, k = p->nhomes + n;
  while (j > 0) p->homes[--k] = i > 0 && p->homes[i - 1].addr > h[j - 1].addr ? p->homes[--i] : h[--j];
  p->nhomes += n;
  return LP_OK;
}

/* Keeps the N home probes H in P's homes (sorting H) and writes their
 * int3s: one read and one write of /proc/PID/mem for each run of them
 * within SPAN bytes (python3's 2 948 watched parts, one write each, cost
 * ~30 ms). */
static lp_status put_homes(process *p, home_probe *h, size_t n) {
  if (!n) return LP_OK;
  LP_CHECK(keep_home_probes(p, h, n));
  for (size_t i = 0, j; i < n; i = j) {
    for (j = i + 1; j < n && h[j].addr - h[i].addr < SPAN; j++) continue;
    size_t len = (size_t)(h[j - 1].addr - h[i].addr) + 1;
    LP_CHECK(core_mem_read(&p->target, h[i].addr, span, len));
    for (size_t k = i; k < j; k++) span[h[k].addr - h[i].addr] = INT3;
    LP_CHECK(core_mem_write(&p->target, h[i].addr, span, len));
  }
  return LP_OK;
}

/* Writes an int3 on the first byte of each block of SF (function I of M)
 * whose probe has not run, and keeps them in P's homes. */
static lp_status put_home_probes(process *p, pmodule *m, const shm_function *sf) {
  const shm_counters *c = &p->counters;
  const shm_block *blocks = shm_blocks(c) + sf->first_block;
  size_t n = 0;
  for (uint32_t b = 0; b < sf->nblocks; b++) n += blocks[b].slot != SHM_NONE && !shm_slot_value(c, blocks[b].slot);
  if (!n) return LP_OK;
  home_probe *h = malloc(n * sizeof *h);
  if (!h) return lp_fail("out of memory");
  for (uint32_t b = 0, k = 0; b < sf->nblocks; b++)
    if (blocks[b].slot != SHM_NONE && !shm_slot_value(c, blocks[b].slot))
      h[k++] = (home_probe){blocks[b].addr + m->bias, blocks[b].slot, (uint32_t)(m - p->mods),
                            original_byte(m, blocks[b].addr), false, 0};
  lp_status st = put_homes(p, h, n);
  free(h);
  return st;
}

/* Does each of the N run-time addresses AT (sorted) start an instruction of
 * a linear decode of function J of M, so that an int3 may go there? */
static bool starts_insns_of(const pmodule *m, long j, const uint64_t *at, size_t n) {
  reloc_cfi cfi;
  reloc_function_desc code = function_desc(m, &m->file->module->functions[j], &cfi);
  return !n || reloc_starts_insns(&code, code.lo, code.hi, at, n);
}

/* Whether part J of M may be watched: each place its other part jumps into
 * it starts an instruction of a linear decode of it (a bogus target, from
 * data decoded as code, would put an int3 inside an instruction); else both
 * are relocated, as planning drops such side entries. */
static bool part_watchable(const pmodule *m, long j) {
  if (!sides_of(m, j)) return false;
  side_entries *se = side_slot(m->file, j); /* the one sides_of filled */
  if (!se->watchable) {
    uint64_t *at = se->n ? malloc(se->n * sizeof *at) : NULL;
    for (uint32_t k = 0; at && k < se->n; k++) at[k] = se->at[k] + m->bias;
    se->watchable = (!se->n || at) && starts_insns_of(m, j, at, se->n) ? 1 : 2;
    free(at);
  }
  return se->watchable == 1;
}

/* A home probe of P at link-time LINK in part J of M: no slot of its own,
 * the part is marked run when a thread meets it (on_home_probe, mark_ran). */
static home_probe part_probe(const process *p, const pmodule *m, uint64_t link, long j) {
  return (home_probe){link + m->bias, SHM_NONE, (uint32_t)(m - p->mods), original_byte(m, link), false,
                      (uint32_t)j + 1};
}

/* Function I of M was marked run: where it jumps into its other part, not
 * run yet (sides_of), a home probe that marks that part run when met. */
static lp_status watch_part(process *p, pmodule *m, long i) {
  long j = m->file->module->functions[i].part;
  const side_entries *se = sides_of(m, j);
  if (m->fns[j].state != SHM_NOT_RUN || !se || !se->n) return LP_OK;
  home_probe *h = malloc(se->n * sizeof *h);
  if (!h) return lp_fail("out of memory");
  size_t n = 0;
  for (uint32_t k = 0; k < se->n; k++) {
    uint64_t at = se->at[k] + m->bias;
    if ((k && se->at[k] == se->at[k - 1]) || home_at(p, at)) continue;
    h[n++] = part_probe(p, m, se->at[k], j);
  }
  lp_status st = put_homes(p, h, n);
  free(h);
  return st;
}

/* Where function I of M may jump into its other part J: every byte of I
 * read as a direct jmp or jcc landing past J's start (x64_branches_into: the
 * real jumps and perhaps bytes of other instructions), kept as J's side
 * entries when each starts an instruction of J's linear decode (an int3 may
 * go there; one that no jump reaches is met only by J's own run, which marks
 * J as a jump would).  False when they do not (J's side entries are then
 * found as before, by sides_of, when asked), or without memory. */
static bool scan_part(const pmodule *m, long i, long j) {
  side_entries *se = side_slot(m->file, j);
  if (!se) return false;
  if (se->scanned) return part_watchable(m, j);
  const core_function *fn = &m->file->module->functions[i], *part = &m->file->module->functions[j];
  size_t avail;
  const uint8_t *code = core_module_code(m->file->module, fn->addr, &avail);
  if (!code || fn->size > avail) return false;
  int64_t off[MAX_SIDE_ENTRIES];
  size_t n = x64_branches_into(code, fn->size, (int64_t)(part->addr + 1 - fn->addr),
                               (int64_t)(part->addr + part->size - fn->addr), off, MAX_SIDE_ENTRIES);
  if (n >= MAX_SIDE_ENTRIES) return false;
  uint64_t at[MAX_SIDE_ENTRIES];
  for (size_t k = 0; k < n; k++) at[k] = fn->addr + (uint64_t)off[k] + m->bias;
  if (!starts_insns_of(m, j, at, n)) return false;
  set_sides(se, m, at, n);
  se->watchable = 1;
  return true;
}

lp_status breaks_watch_parts(core_session *s, process *p, pmodule *m) {
  const core_module *mod = m->file->module;
  if (s->opt.attach || !first_call_tells_all(s, m)) return LP_OK;
  home_probe *h = NULL;
  size_t n = 0, cap = 0;
  lp_status st = LP_OK;
  for (size_t i = 0; st == LP_OK && i < mod->nfunctions; i++) {
    uint32_t j = mod->functions[i].part;
    if (j == CORE_NO_PART || !m->fns[i].stub || m->fns[j].stub || m->fns[j].state != SHM_NOT_RUN ||
        !scan_part(m, (long)i, j))
      continue;
    const side_entries *se = side_slot(m->file, j);
    if (n + se->n > cap) {
      cap = 2 * (n + se->n);
      home_probe *more = realloc(h, cap * sizeof *h);
      if (!more) {
        st = lp_fail("out of memory");
        break;
      }
      h = more;
    }
    for (uint32_t k = 0; k < se->n; k++)
      if (!k || se->at[k] != se->at[k - 1]) h[n++] = part_probe(p, m, se->at[k], j);
    m->fns[i].part_watched = true;
  }
  if (st == LP_OK) st = put_homes(p, h, n);
  free(h);
  if (st != LP_OK)
    for (size_t i = 0; i < mod->nfunctions; i++) m->fns[i].part_watched = false;
  return st;
}

/* Part J of M ran: the home probes watching it go (each would stop a
 * thread for nothing). */
static lp_status unwatch_part(process *p, pmodule *m, long j) {
  uint32_t module = (uint32_t)(m - p->mods);
  for (size_t k = 0; k < p->nhomes; k++) {
    home_probe *o = &p->homes[k];
    if (o->met || o->module != module || o->part != (uint32_t)j + 1) continue;
    LP_CHECK(core_mem_write(&p->target, o->addr, &o->byte, 1));
    o->met = true;
  }
  return LP_OK;
}

/* The slots of the cover probes of a function gone home: one range. */
typedef struct slot_span {
  uint32_t lo, hi;
} slot_span;

static slot_span slots_of(const process *p, const shm_function *sf) {
  const shm_block *blocks = shm_blocks(&p->counters) + sf->first_block;
  slot_span r = {sf->slot, sf->slot};
  for (uint32_t b = 0; b < sf->nblocks; b++) {
    if (blocks[b].slot == SHM_NONE) continue;
    r.lo = blocks[b].slot < r.lo ? blocks[b].slot : r.lo;
    r.hi = blocks[b].slot > r.hi ? blocks[b].slot : r.hi;
  }
  return r;
}

static int by_span_start(const void *a, const void *b) {
  uint32_t x = ((const slot_span *)a)->lo, y = ((const slot_span *)b)->lo;
  return x < y ? -1 : x > y;
}

/* Stops sweeping the cover probes left in the copies of the N functions gone
 * home whose slots GONE holds (sorted here): no call runs them any more
 * (frames already there finish, setting slots), and a sweep would write a NOP
 * over the jmp now at a copy's top (a second copy's entry mark may not have
 * been swept yet).  One pass over the pending probes for all of a pass's
 * homes: one per home was 8 % of the tracer's instructions on sqlite. */
static void forget_pending(process *p, slot_span *gone, size_t n) {
  if (!n) return;
  qsort(gone, n, sizeof *gone, by_span_start);
  size_t kept = 0;
  for (size_t k = 0; k < p->npending; k++) {
    uint32_t slot = p->pending_slots[k];
    size_t lo = 0, hi = n; /* the last span starting at or below slot */
    while (lo < hi) {
      size_t mid = (lo + hi) / 2;
      if (gone[mid].lo <= slot) lo = mid + 1;
      else hi = mid;
    }
    if (!lo || slot > gone[lo - 1].hi) {
      p->pending_slots[kept] = slot;
      p->pending[kept++] = p->pending[k];
    }
  }
  p->npending = kept;
}

/* Sends function I of M home (above); GONE receives its slots, whose
 * pending probes the caller forgets before the next sweep. */
static lp_status go_home(core_session *s, process *p, pmodule *m, long i, slot_span *gone) {
  const core_function *fn = &m->file->module->functions[i];
  const shm_function *sf = &shm_functions(&p->counters)[m->first + i];
  fn_state *f = &m->fns[i];
  uint64_t entry = fn->addr + m->bias;
  *gone = slots_of(p, sf);
  LP_CHECK(put_home_probes(p, m, sf));
  uint8_t orig[JMP_REL32_SIZE];
  for (size_t k = 0; k < sizeof orig; k++) orig[k] = original_byte(m, fn->addr + k);
  LP_CHECK(write_under_int3(p, entry, orig, sizeof orig, false)); /* a thread at the int3 goes to the copy */
  f->home = true;
  p->nhome++;
  s->stats.homed++;
  return starts_with_entry_probe(p, f->copy) ? repoint_jmp(p, f->copy, entry) : LP_OK;
}

/* A thread met the int3 of block H of a function gone home, in TID stopped
 * just past it: the block ran. */
static lp_status on_home_probe(core_session *s, process *p, home_probe *h, pid_t tid,
                               struct user_regs_struct *regs) {
  uint64_t at = h->addr; /* mark_ran may grow the homes */
  if (!h->met) {
    if (!h->part) shm_slots(&p->counters)[h->slot] = 1; /* a block's; a part is marked below */
    LP_CHECK(core_mem_write(&p->target, h->addr, &h->byte, 1));
    h->met = true;
    s->stats.home_hits++;
    pmodule *m = &p->mods[h->module];
    long part = (long)h->part - 1; /* a watched part: marked as at a first call, its other probes gone */
    if (part >= 0 && m->fns[part].state == SHM_NOT_RUN) LP_CHECK(mark_ran(s, p, m, part));
  }
  regs->rip = at;
  return core_regs_set(tid, regs);
}

/* Should function I of M (SF), hot, go home now: had its covered probes
 * not changed since the last pass found it hot? */
static bool home_now(const process *p, pmodule *m, long i, const shm_function *sf) {
  fn_state *f = &m->fns[i];
  if (calls_so_far(p, m, i, sf) < HOME_MIN || !may_go_home(p, m, i, sf)) return false;
  uint32_t covered = covered_probes(&p->counters, sf, NULL);
  bool still = f->home_looked && covered == f->home_covered;
  f->home_looked = true;
  f->home_covered = covered;
  return still;
}

/* }=== */

lp_status breaks_second_pass(core_session *s, process *p) {
  uint64_t now = core_now_ns();
  if (now - p->second_ns < SECOND_MS * 500000ull) return LP_OK; /* one pass a period, threads or not */
  p->second_ns = now;
  const shm_counters *c = &p->counters;
  size_t before = s->stats.retreed + s->stats.stripped;
  bool arcs = retreeing(s);
  slot_span *gone = NULL; /* of the functions gone home in this pass */
  size_t ngone = 0, capgone = 0;
  lp_status st = LP_OK;
  for (size_t k = 0; st == LP_OK && k < p->nmods; k++) {
    pmodule *m = &p->mods[k];
    size_t n = m->file->module->nfunctions;
    for (size_t i = 0; st == LP_OK && !m->unloaded && i < n; i++) {
      fn_state *f = &m->fns[i];
      if (f->state != SHM_RELOCATED || f->second_looked || f->home) continue;
      const shm_function *sf = &shm_functions(c)[m->first + i];
      if (sf->slot == SHM_NONE || sf->first_block == SHM_NONE) continue;
      if (homing(s) && home_now(p, m, (long)i, sf)) {
        if (ngone == capgone) {
          capgone = capgone ? 2 * capgone : 64;
          slot_span *grown = realloc(gone, capgone * sizeof *grown);
          if (!grown) {
            st = lp_fail("out of memory");
            break;
          }
          gone = grown;
        }
        uint64_t t0 = core_now_ns();
        st = go_home(s, p, m, (long)i, &gone[ngone++]);
        s->stats.second_ns += core_now_ns() - t0;
        continue;
      }
      if (arcs) {
        if (counted_so_far(c, sf) < RETREE_MIN) continue;
        f->second_looked = true; /* arcs are re-placed once */
      } else { /* once called often; again when more of its probes ran since */
        if (f->nstrips == MAX_STRIPS || (!f->nstrips && calls_so_far(p, m, (long)i, sf) < STRIP_MIN)) continue;
        uint32_t covered = covered_probes(c, sf, NULL);
        if (covered < f->strip_covered + 1 + f->strip_covered / 8) continue;
      }
      uint64_t t0 = core_now_ns();
      st = arcs ? retree(s, p, m, (long)i) : strip(s, p, m, (long)i);
      s->stats.second_ns += core_now_ns() - t0;
    }
  }
  forget_pending(p, gone, ngone);
  free(gone);
  if (s->stats.retreed + s->stats.stripped != before) describe_stop(p);
  return st;
}

/* Where a thread that met the int3 at AT goes when AT is the top of a copy
 * being pointed elsewhere: a first copy's at its second, a copy's at its
 * function's entry (gone home); 0: AT is none. */
static uint64_t repointed_top(const process *p, uint64_t at) {
  for (size_t k = 0; (p->nsecond || p->nhome) && k < p->nmods; k++)
    for (size_t i = 0; i < p->mods[k].file->module->nfunctions; i++) {
      const fn_state *f = &p->mods[k].fns[i];
      if (f->first_copy == at) return f->copy;
      if (f->home && f->copy == at) return p->mods[k].file->module->functions[i].addr + p->mods[k].bias;
    }
  return 0;
}

/* }=== */

lp_status breaks_on_request(core_session *s, process *p, pmodule *m, long i) {
  if (m->fns[i].state == SHM_NOT_RUN && m->fns[i].stub) {
    s->stats.stub_hits++;
    LP_CHECK(first_hit(s, p, m, i, EAGER_DEPTH, NULL, 0));
  }
  if (m->fns[i].stub) /* a fork child's entry its parent moved on before the fork event came */
    return breaks_put_break(p, m, i);
  stubs_release(p, m, i);
  return LP_OK;
}

lp_status breaks_instrument_running(core_session *s, process *p, pmodule *m, long i, breaks_resume *resume,
                                    size_t nresume) {
  for (size_t k = 0; k < nresume; k++) resume[k].copy = 0;
  if (m->fns[i].state != SHM_NOT_RUN) return LP_OK;
  return first_hit(s, p, m, i, 0, resume, nresume);
}

/* A SIGTRAP in thread TID of P, REGS its registers at the stop (changed
 * here where it goes on elsewhere): ours if it stopped just past the int3 we
 * keep at a function entry (an instruction pointer in the middle of the
 * entry's first instruction cannot come from anything else) or at a probe
 * being removed. */
lp_status breaks_on_trap(core_session *s, process *p, pid_t tid, struct user_regs_struct *regs, bool *ours) {
  *ours = false;
  uint64_t at = regs->rip - 1;
  if (removed_probe(p, at)) { /* met the int3 of a probe being removed: its slot is set */
    *ours = true;
    regs->rip = at + RELOC_COVER_PROBE_SIZE;
    return core_regs_set(tid, regs);
  }
  home_probe *h = home_at(p, at);
  if (h) {
    *ours = true;
    return on_home_probe(s, p, h, tid, regs);
  }
  long i;
  pmodule *m = process_module_at(p, at, &i);
  uint64_t top = !m || i < 0 ? repointed_top(p, at) : 0;
  size_t sj = !top && !m ? side_jump_at(p, at) : 0;
  if (sj) {
    *ours = true;
    return on_side_jump(s, p, sj - 1, tid, regs);
  }
  if (top) { /* met the int3 at the top of a copy being pointed elsewhere */
    *ours = true;
    regs->rip = top;
    return core_regs_set(tid, regs);
  }
  if (!m || i < 0 || m->fns[i].state == SHM_EXCLUDED) return LP_OK;
  *ours = true;

  if (m->fns[i].state == SHM_NOT_RUN) {
    s->stats.trap_hits++;
    LP_CHECK(first_hit(s, p, m, i, EAGER_DEPTH, NULL, 0));
  } else if (m->fns[i].state == SHM_TRAPPED) {
    s->stats.trapped_calls++;
  }
  regs->rip = m->fns[i].state == SHM_NATIVE || m->fns[i].state == SHM_MARKED ? at : m->fns[i].copy;
  return core_regs_set(tid, regs);
}
