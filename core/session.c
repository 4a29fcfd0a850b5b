/* session.c — the lazy break manager and the event loop of one run.
 *
 * Start-up: launch to AT_ENTRY, create the counters file, map it and a code
 * arena into the target near the module (remote system calls), then write an
 * int3 at every discovered function entry in one batch.  A hit relocates the
 * whole function with an inlined entry counter (and its direct callees too, so
 * that they never trap; calls from a copy go straight to the callee's copy when
 * there is one), writes the copy to the arena,
 * patches the entry with a jmp to it (bytes 1..4 first, the int3 in byte 0
 * replaced last, so no thread ever runs a half-written instruction) and resumes
 * the thread in the copy.  Entries too small for a jmp keep their break: every
 * call traps and is sent to the copy (state "trapped").  A function that cannot
 * be relocated gets its original byte back and runs natively ("native").
 *
 * Coverage probes are needed only until their block first runs: every
 * SWEEP_MS the covered ones are replaced by NOPs of the same size, an int3 in
 * their first byte while the rest is written (a thread that meets it is sent
 * past the probe, whose slot is already set).
 *
 * Processes: threads and vfork children share their parent's memory and so its
 * state; fork children get a copy of it (their counters still land in the same
 * file); a process that calls exec is let go. */
#include "session.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "arena.h"
#include "image.h"
#include "launch.h"
#include "module.h"
#include "reloc.h"
#include "target.h"

#define JMP_REL32 0xe9
#define JMP_REL32_SIZE 5
#define INT3 0xcc
#define PAGE 4096ull
#define HEAP_ROOM (1ull << 30) /* leave brk() this much room to grow */
#define NON_PIE_LIMIT (1ull << 31) /* absolute jump tables need sign-extended disp32 */
/* After resuming a thread from one of our traps, poll for the next stop this
 * long before sleeping: first hits come in bursts, and a sleeping tracer costs
 * a cross-CPU wake-up per trap (~50 us round trip here against ~16 us polled,
 * see docs/PERFORMANCE.md). */
#define SPIN_NS 50000ull
#define SWEEP_MS 50 /* how often covered probes are removed */

typedef struct fn_state {
  uint8_t state;  /* enum shm_state */
  uint64_t copy;  /* run-time address of the instrumented copy */
} fn_state;

typedef struct cover_probe {
  uint64_t addr;        /* run-time address of the probe in a copy */
  uint32_t slot;        /* the slot it sets */
} cover_probe;

typedef struct process {
  core_target target;
  int refs;             /* threads and vfork children using this memory */
  uint64_t bias;
  uint64_t counters_addr; /* run-time address of counters[0] */
  shm_arena arena;
  fn_state *fns;        /* one per module function */
  cover_probe *pending; /* cover probes still in place */
  size_t npending, cappending;
  uint64_t *removed;    /* addresses of removed probes, sorted (their int3 may
                           still be reported by a thread that met it) */
  size_t nremoved;
} process;

typedef struct thread {
  pid_t tid;
  process *proc;
  bool started;         /* its first stop was seen */
} thread;

struct core_session {
  core_session_options opt;
  core_module *module;
  core_image image;
  shm_counters counters;
  char *counters_path;
  pid_t main_pid;
  int deferred_sig;     /* signal that arrived during start-up */
  thread *threads;
  size_t nthreads, cap;
  pid_t early[64];      /* tids whose first stop came before their parent's event */
  size_t nearly;
  core_session_stats stats;
};

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* {=== threads ===*/

static thread *find_thread(core_session *s, pid_t tid) {
  for (size_t i = 0; i < s->nthreads; i++)
    if (s->threads[i].tid == tid) return &s->threads[i];
  return NULL;
}

static lp_status add_thread(core_session *s, pid_t tid, process *p, bool started) {
  if (s->nthreads == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 16;
    thread *t = realloc(s->threads, cap * sizeof *t);
    if (!t) return lp_fail("out of memory");
    s->threads = t;
    s->cap = cap;
  }
  s->threads[s->nthreads++] = (thread){tid, p, started};
  p->refs++;
  return LP_OK;
}

static void release_process(process *p) {
  if (--p->refs > 0) return;
  core_target_close(&p->target);
  free(p->fns);
  free(p->pending);
  free(p->removed);
  free(p);
}

static void remove_thread(core_session *s, thread *th) {
  process *p = th->proc;
  *th = s->threads[--s->nthreads];
  release_process(p);
}

/* }=== */

/* {=== breaks ===*/

static long find_function(const core_module *m, uint64_t addr) {
  size_t lo = 0, hi = m->nfunctions;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (m->functions[mid].addr < addr) lo = mid + 1;
    else hi = mid;
  }
  return lo < m->nfunctions && m->functions[lo].addr == addr ? (long)lo : -1;
}

static uint8_t original_byte(const core_session *s, uint64_t link_addr) {
  return s->image.bytes[link_addr - s->image.base];
}

/* Writes an int3 (or, with RESTORE, the original byte) at the entry of every
 * function whose state is in MASK, one read and one write per page. */
static lp_status write_entries(core_session *s, process *p, unsigned mask, bool restore) {
  const core_module *m = s->module;
  uint8_t page[PAGE];
  for (size_t i = 0; i < m->nfunctions;) {
    if (!(mask & (1u << p->fns[i].state))) {
      i++;
      continue;
    }
    uint64_t base = (m->functions[i].addr + p->bias) & ~(PAGE - 1);
    LP_CHECK(core_mem_read(&p->target, base, page, sizeof page));
    for (; i < m->nfunctions && ((m->functions[i].addr + p->bias) & ~(PAGE - 1)) == base; i++) {
      if (!(mask & (1u << p->fns[i].state))) continue;
      uint64_t at = m->functions[i].addr + p->bias;
      page[at - base] = restore ? original_byte(s, m->functions[i].addr) : INT3;
    }
    LP_CHECK(core_mem_write(&p->target, base, page, sizeof page));
  }
  return LP_OK;
}

static lp_status leave_native(core_session *s, process *p, long i, const char *why) {
  const core_function *fn = &s->module->functions[i];
  uint8_t orig = original_byte(s, fn->addr);
  p->fns[i].state = SHM_NATIVE;
  shm_set_state(&s->counters, (uint32_t)i, SHM_NATIVE, why);
  s->stats.native++;
  fprintf(stderr, "lazyprobe: not instrumented: %s: %s\n", fn->name, why);
  return core_mem_write(&p->target, fn->addr + p->bias, &orig, 1);
}

typedef struct link_ctx {
  core_session *s;
  process *p;
} link_ctx;

/* Calls and jumps from a new copy go straight to the callee's copy if it has one. */
static uint64_t copy_of(void *ctx, uint64_t target) {
  const link_ctx *l = ctx;
  long j = find_function(l->s->module, target - l->p->bias);
  return j >= 0 && l->p->fns[j].copy ? l->p->fns[j].copy : target;
}

/* Is ADDR the entry of a function whose name says it is one?  A jump there is
 * a tail call, with flags dead (ABI).  FUNC.cold fragments and stripped
 * functions (fn_<hex>, which may be fragments) are not trusted. */
static bool is_entry(void *ctx, uint64_t addr) {
  const link_ctx *l = ctx;
  long j = find_function(l->s->module, addr - l->p->bias);
  if (j < 0) return false;
  const core_function *f = &l->s->module->functions[j];
  return (f->sources & (CORE_FROM_SYMTAB | CORE_FROM_DYNSYM)) && !strstr(f->name, ".cold");
}

static reloc_probes probes_for(const core_session *s, link_ctx *links) {
  uint32_t bits = s->opt.probes;
  return (reloc_probes){
      .entry = true,
      .blocks = bits & SHM_PROBE_BLOCKS_COUNT   ? RELOC_BLOCKS_COUNT
                : bits & SHM_PROBE_BLOCKS_COVER ? RELOC_BLOCKS_COVER
                                                : RELOC_BLOCKS_NONE,
      .arcs = bits & SHM_PROBE_ARCS,
      .calls = bits & SHM_PROBE_CALLS,
      .atomic = s->opt.atomic,
      .is_entry = is_entry,
      .ctx = links,
  };
}

/* Reserves the function's slots and writes its graph into the counters file,
 * once per file (fork children share it and relocate the same way).  The slot
 * layout is reloc.h's: entry, blocks, counted edges, calls. */
static lp_status publish_graph(core_session *s, process *p, long i, const reloc_plan *plan,
                               const reloc_info *info) {
  shm_function *sf = &shm_functions(&s->counters)[i];
  if (sf->slot != SHM_NONE) return LP_OK;
  shm_reservation r;
  LP_CHECK(shm_reserve(&s->counters, (uint32_t)info->ncounters, (uint32_t)info->nblocks,
                       (uint32_t)info->nedges, (uint32_t)info->ncalls, &r));
  bool block_slots = s->opt.probes & (SHM_PROBE_BLOCKS_COUNT | SHM_PROBE_BLOCKS_COVER);
  bool call_slots = s->opt.probes & SHM_PROBE_CALLS;
  const reloc_block *blocks = reloc_blocks(plan);
  shm_block *sb = shm_blocks(&s->counters) + r.first_block;
  for (size_t b = 0; b < info->nblocks; b++)
    sb[b] = (shm_block){blocks[b].addr - p->bias, blocks[b].size, blocks[b].ninsns,
                        block_slots ? r.slot + (uint32_t)(info->block_slot + b) : SHM_NONE,
                        blocks[b].leaks ? SHM_BLOCK_LEAKS : 0};
  const reloc_edge *edges = reloc_edges(plan);
  shm_edge *se = shm_edges(&s->counters) + r.first_edge;
  uint32_t counted = 0;
  for (size_t e = 0; e < info->nedges; e++)
    se[e] = (shm_edge){edges[e].branch - p->bias, edges[e].target ? edges[e].target - p->bias : 0,
                       edges[e].from, edges[e].to == RELOC_EXIT ? SHM_NONE : edges[e].to,
                       edges[e].counted ? r.slot + (uint32_t)info->edge_slot + counted++ : SHM_NONE,
                       edges[e].kind, {0}};
  const reloc_call *calls = reloc_calls(plan);
  shm_call *sc = shm_calls(&s->counters) + r.first_call;
  for (size_t k = 0; k < info->ncalls; k++)
    sc[k] = (shm_call){calls[k].site - p->bias, calls[k].target ? calls[k].target - p->bias : 0,
                       call_slots ? r.slot + (uint32_t)(info->call_slot + k) : SHM_NONE, 0};
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

static bool sweeping(const core_session *s) {
  return (s->opt.probes & SHM_PROBE_BLOCKS_COVER) && !(s->opt.probes & SHM_PROBE_BLOCKS_COUNT);
}

/* Keeps the cover probes of function I's new copy at DEST for removal. */
static lp_status remember_cover_probes(core_session *s, process *p, long i, const reloc_plan *plan,
                                       size_t nblocks, uint64_t dest) {
  if (!sweeping(s)) return LP_OK;
  const shm_function *sf = &shm_functions(&s->counters)[i];
  const shm_block *blocks = shm_blocks(&s->counters) + sf->first_block;
  for (size_t b = 0; b < nblocks; b++) {
    int64_t off = reloc_cover_probe_offset(plan, b);
    if (off < 0 || blocks[b].slot == SHM_NONE) continue;
    if (p->npending == p->cappending) {
      size_t cap = p->cappending ? 2 * p->cappending : 256;
      cover_probe *grown = realloc(p->pending, cap * sizeof *grown);
      if (!grown) return lp_fail("out of memory");
      p->pending = grown;
      p->cappending = cap;
    }
    p->pending[p->npending++] = (cover_probe){dest + (uint64_t)off, blocks[b].slot};
  }
  return LP_OK;
}

static int by_address(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Writes BYTES[FROM, TO) of a RELOC_COVER_PROBE_SIZE-byte NOP over each probe
 * at ADDRS (sorted), one read and one write per run of probes within a page. */
static lp_status write_probes(process *p, const uint64_t *addrs, size_t n, const uint8_t *bytes,
                              size_t from, size_t to) {
  uint8_t window[PAGE + RELOC_COVER_PROBE_SIZE];
  for (size_t k = 0; k < n;) {
    size_t j = k;
    while (j < n && addrs[j] + RELOC_COVER_PROBE_SIZE - addrs[k] <= sizeof window) j++;
    uint64_t lo = addrs[k], hi = addrs[j - 1] + RELOC_COVER_PROBE_SIZE;
    LP_CHECK(core_mem_read(&p->target, lo, window, hi - lo));
    for (size_t q = k; q < j; q++) memcpy(window + (addrs[q] - lo) + from, bytes + from, to - from);
    LP_CHECK(core_mem_write(&p->target, lo, window, hi - lo));
    k = j;
  }
  return LP_OK;
}

/* Replaces the probes of P whose blocks have run by NOPs: an int3 in their
 * first byte, then the rest, then the first byte, so that no thread ever runs
 * a half-written instruction. */
static lp_status sweep_covered(core_session *s, process *p) {
  static const uint8_t nop7[RELOC_COVER_PROBE_SIZE] = {0x0f, 0x1f, 0x80, 0, 0, 0, 0}; /* nopl 0(%rax) */
  static const uint8_t int3[RELOC_COVER_PROBE_SIZE] = {INT3};
  size_t n = 0, kept = 0;
  uint64_t *done = malloc((p->npending + 1) * sizeof *done);
  if (!done) return lp_fail("out of memory");
  for (size_t k = 0; k < p->npending; k++) {
    if (shm_slot_value(&s->counters, p->pending[k].slot)) done[n++] = p->pending[k].addr;
    else p->pending[kept++] = p->pending[k];
  }
  p->npending = kept;
  lp_status st = LP_OK;
  if (n) {
    qsort(done, n, sizeof *done, by_address);
    uint64_t *grown = realloc(p->removed, (p->nremoved + n) * sizeof *grown);
    if (!grown) st = lp_fail("out of memory");
    if (st == LP_OK) {
      p->removed = grown;
      memcpy(p->removed + p->nremoved, done, n * sizeof *done); /* before the int3s can trap */
      p->nremoved += n;
      qsort(p->removed, p->nremoved, sizeof *p->removed, by_address);
      st = write_probes(p, done, n, int3, 0, 1);
    }
    if (st == LP_OK) st = write_probes(p, done, n, nop7, 1, RELOC_COVER_PROBE_SIZE);
    if (st == LP_OK) st = write_probes(p, done, n, nop7, 0, 1);
    s->stats.cover_removed += n;
  }
  free(done);
  return st;
}

/* Is ADDR a removed probe (whose int3 a thread may have met)? */
static bool removed_probe(const process *p, uint64_t addr) {
  return p->nremoved && bsearch(&addr, p->removed, p->nremoved, sizeof addr, by_address);
}

/* }=== */

#define MAX_EAGER 64 /* callees instrumented along with one first hit */

/* Relocates function I of process P.  With EAGER (a first hit), its direct
 * callees are relocated too, in the same stop, so that they never trap: one
 * trap round trip costs several times a relocation (docs/PERFORMANCE.md). */
static lp_status instrument(core_session *s, process *p, long i, bool eager) {
  const core_function *fn = &s->module->functions[i];
  uint64_t entry = fn->addr + p->bias;
  reloc_function_desc desc = {
      .entry = entry,
      .lo = entry,
      .hi = entry + fn->size,
      .code = s->image.bytes,
      .code_base = s->image.base + p->bias,
      .code_size = s->image.size,
  };
  link_ctx links = {s, p};
  reloc_probes probes = probes_for(s, &links);
  reloc_plan *plan;
  reloc_info info;
  if (reloc_plan_function(&desc, &probes, &plan, &info) != LP_OK)
    return leave_native(s, p, i, lp_error());

  if (eager) {
    uint64_t callees[MAX_EAGER];
    size_t n = reloc_callees(plan, callees, MAX_EAGER);
    for (size_t k = 0; k < n && k < MAX_EAGER; k++) {
      long j = callees[k] >= p->bias ? find_function(s->module, callees[k] - p->bias) : -1;
      if (j < 0 || p->fns[j].state != SHM_NOT_RUN) continue;
      lp_status st = instrument(s, p, j, false);
      if (st != LP_OK) {
        reloc_plan_free(plan);
        return st;
      }
      s->stats.eager++;
    }
  }

  uint64_t dest;
  uint8_t *copy = NULL;
  if (publish_graph(s, p, i, plan, &info) != LP_OK) {
    reloc_plan_free(plan);
    return leave_native(s, p, i, lp_error());
  }
  uint64_t counters = p->counters_addr + 8 * (uint64_t)shm_functions(&s->counters)[i].slot;
  if (shm_arena_alloc(&p->arena, info.copy_size, 16, &dest) != LP_OK ||
      !(copy = malloc(info.copy_size ? info.copy_size : 1)) ||
      reloc_emit(plan, dest, copy, counters, copy_of, &links) != LP_OK) {
    free(copy);
    reloc_plan_free(plan);
    return leave_native(s, p, i, copy ? lp_error() : "out of memory");
  }
  lp_status st = remember_cover_probes(s, p, i, plan, info.nblocks, dest);
  reloc_plan_free(plan);
  if (st == LP_OK) st = core_mem_write(&p->target, dest, copy, info.copy_size);
  free(copy);
  LP_CHECK(st);

  /* A jmp may overwrite bytes 1..4 only if they belong to this function and no
   * path that leaves the copy can come back to them in the original body. */
  bool patch = fn->room >= JMP_REL32_SIZE &&
               !(info.leaves_to_original && info.min_inner_target < JMP_REL32_SIZE);
  if (patch) {
    int32_t rel = (int32_t)(dest - (entry + JMP_REL32_SIZE));
    uint8_t jmp[JMP_REL32_SIZE] = {JMP_REL32};
    memcpy(jmp + 1, &rel, sizeof rel);
    if (p->refs == 1) { /* its only thread is stopped: one write */
      LP_CHECK(core_mem_write(&p->target, entry, jmp, sizeof jmp));
    } else {
      LP_CHECK(core_mem_write(&p->target, entry + 1, jmp + 1, sizeof rel));
      LP_CHECK(core_mem_write(&p->target, entry, jmp, 1)); /* the int3 goes last */
    }
  }
  p->fns[i].copy = dest;
  p->fns[i].state = patch ? SHM_RELOCATED : SHM_TRAPPED;
  char note[96] = "";
  if (!patch)
    snprintf(note, sizeof note, "%s; every call traps",
             fn->room < JMP_REL32_SIZE ? "entry too small for a jmp" : "body re-entered from outside the copy");
  else if (info.leaves_to_original)
    snprintf(note, sizeof note, "an indirect jump leaves the copy");
  shm_set_state(&s->counters, (uint32_t)i, p->fns[i].state, note);
  s->stats.instrumented++;
  return LP_OK;
}

/* A SIGTRAP in TH: ours if it stopped just past the int3 we keep at a
 * function entry (an instruction pointer in the middle of the entry's first
 * instruction cannot come from anything else). */
static lp_status on_trap(core_session *s, thread *th, bool *ours) {
  struct user_regs_struct regs;
  *ours = false;
  LP_CHECK(core_regs_get(th->tid, &regs));
  process *p = th->proc;
  uint64_t at = regs.rip - 1;
  if (removed_probe(p, at)) { /* met the int3 of a probe being removed: its slot is set */
    *ours = true;
    regs.rip = at + RELOC_COVER_PROBE_SIZE;
    return core_regs_set(th->tid, &regs);
  }
  long i = find_function(s->module, at - p->bias);
  if (i < 0) return LP_OK;
  *ours = true;

  uint64_t t0 = now_ns();
  if (p->fns[i].state == SHM_NOT_RUN) {
    LP_CHECK(instrument(s, p, i, true));
    s->stats.instrument_ns += now_ns() - t0;
  } else if (p->fns[i].state == SHM_TRAPPED) {
    s->stats.trapped_calls++;
  }
  regs.rip = p->fns[i].state == SHM_NATIVE ? at : p->fns[i].copy;
  return core_regs_set(th->tid, &regs);
}

/* }=== */

/* {=== start-up ===*/

static lp_status remote(core_session *s, process *p, uint64_t scratch, long nr, uint64_t a0, uint64_t a1,
                        uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5, int64_t *ret) {
  const uint64_t args[6] = {a0, a1, a2, a3, a4, a5};
  LP_CHECK(core_remote_syscall(&p->target, s->main_pid, scratch, nr, args, ret, &s->deferred_sig));
  if (*ret < 0 && *ret > -4096) return lp_fail("system call %ld in the program: %s", nr, strerror((int)-*ret));
  return LP_OK;
}

/* Maps the counters (read-write, shared) and the code arena (read-execute,
 * private, anonymous: nobody but lazyprobe, through ptrace, can write it)
 * into the target, within reach of the module. */
static lp_status map_into_target(core_session *s, process *p, uint64_t scratch) {
  const core_module *m = s->module;
  uint64_t exec_size = 0;
  for (size_t i = 0; i < m->nexec; i++) exec_size += m->exec[i].size;
  uint64_t counters_size = shm_target_size(&s->counters);
  uint64_t arena_size = ((exec_size * 3 + (1u << 20)) + PAGE - 1) & ~(PAGE - 1);
  uint64_t gap = 16 * PAGE;

  shm_range *mapped;
  size_t nmapped;
  uint64_t at;
  LP_CHECK(core_maps_read(p->target.pid, HEAP_ROOM, &mapped, &nmapped));
  lp_status st = shm_place_near(mapped, nmapped, m->min_vaddr + p->bias, m->max_vaddr + p->bias,
                                counters_size + gap + arena_size, m->is_pie ? UINT64_MAX : NON_PIE_LIMIT, &at);
  free(mapped);
  LP_CHECK(st);

  char path[PATH_MAX];
  char *dir = realpath(s->opt.outdir, NULL);
  if (!dir) return lp_fail("%s: %s", s->opt.outdir, strerror(errno));
  snprintf(path, sizeof path, "%s/lazyprobe.%d.counters", dir, (int)s->main_pid);
  free(dir);
  uint64_t path_addr;
  int64_t fd, ret;
  LP_CHECK(core_push_bytes(&p->target, s->main_pid, path, strlen(path) + 1, &path_addr));
  LP_CHECK(remote(s, p, scratch, SYS_open, path_addr, O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0, 0, 0, 0, &fd));

  /* The target must have opened the very file we created, not one swapped in. */
  char link[64];
  struct stat mine, theirs;
  snprintf(link, sizeof link, "/proc/%d/fd/%d", (int)s->main_pid, (int)fd);
  if (fstat(s->counters.fd, &mine) != 0 || stat(link, &theirs) != 0 || mine.st_dev != theirs.st_dev ||
      mine.st_ino != theirs.st_ino)
    return lp_fail("%s was replaced while the program opened it", path);

  st = remote(s, p, scratch, SYS_mmap, at, counters_size, PROT_READ | PROT_WRITE,
              MAP_SHARED | MAP_FIXED_NOREPLACE, (uint64_t)fd, shm_target_offset(&s->counters), &ret);
  if (st == LP_OK && (uint64_t)ret != at) st = lp_fail("counters mapped at 0x%" PRIx64 ", not 0x%" PRIx64, ret, at);
  int64_t ignored;
  lp_status closed = remote(s, p, scratch, SYS_close, (uint64_t)fd, 0, 0, 0, 0, 0, &ignored);
  LP_CHECK(st);
  LP_CHECK(closed);
  p->counters_addr = at;

  uint64_t arena_at = at + counters_size + gap;
  LP_CHECK(remote(s, p, scratch, SYS_mmap, arena_at, arena_size, PROT_READ | PROT_EXEC,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, (uint64_t)-1, 0, &ret));
  if ((uint64_t)ret != arena_at) return lp_fail("code arena mapped at 0x%" PRIx64 ", not 0x%" PRIx64, ret, arena_at);
  p->arena = (shm_arena){arena_at, arena_size, 0};
  return LP_OK;
}

static lp_status create_counters(core_session *s, pid_t pid, uint64_t bias) {
  const core_module *m = s->module;
  size_t n = m->nfunctions;
  uint64_t *addr = calloc(n + 1, sizeof *addr), *size = calloc(n + 1, sizeof *size);
  const char **name = calloc(n + 1, sizeof *name);
  uint32_t *binding = calloc(n + 1, sizeof *binding);
  lp_status st = LP_OK;
  if (!addr || !size || !name || !binding) st = lp_fail("out of memory");
  for (size_t i = 0; st == LP_OK && i < n; i++) {
    addr[i] = m->functions[i].addr;
    size[i] = m->functions[i].size;
    name[i] = m->functions[i].name;
    binding[i] = m->functions[i].binding;
  }
  char *abs = realpath(s->opt.program, NULL);
  uint64_t code_size = 0;
  for (size_t i = 0; i < m->nexec; i++) code_size += m->exec[i].size;
  shm_layout_module lm = {abs ? abs : s->opt.program, bias, n, addr, size, name, binding, code_size};
  if (st == LP_OK)
    st = shm_counters_create(s->opt.outdir_fd, s->opt.outdir, pid, lm.path, &lm, 1, s->opt.probes,
                             &s->counters);
  if (st == LP_OK && asprintf(&s->counters_path, "%s/lazyprobe.%d.counters", s->opt.outdir, (int)pid) < 0)
    st = lp_fail("out of memory");
  free(abs);
  free(addr);
  free(size);
  free(name);
  free(binding);
  return st;
}

lp_status core_session_start(const core_session_options *opt, core_session **out) {
  uint64_t t0 = now_ns();
  core_session *s = calloc(1, sizeof *s);
  if (!s) return lp_fail("out of memory");
  s->opt = *opt;
  s->counters.fd = -1;
  lp_status st = core_module_open(opt->program, &s->module);
  if (st == LP_OK && s->module->nfunctions == 0) st = lp_fail("%s: no functions found", opt->program);
  if (st == LP_OK) st = core_image_load(opt->program, &s->image);
  uint64_t entry;
  if (st == LP_OK) st = core_launch(opt->program, opt->argv, &s->main_pid, &entry);
  if (st != LP_OK) {
    core_session_free(s);
    return LP_ERR;
  }

  process *p = calloc(1, sizeof *p);
  if (p) p->target.mem_fd = -1;
  if (!p || !(p->fns = calloc(s->module->nfunctions, sizeof *p->fns))) st = lp_fail("out of memory");
  if (st == LP_OK) {
    p->bias = entry - s->module->entry;
    st = core_target_open(s->main_pid, &p->target);
  }
  if (st == LP_OK) st = add_thread(s, s->main_pid, p, true);
  if (st == LP_OK) st = create_counters(s, s->main_pid, p->bias);
  if (st == LP_OK) st = map_into_target(s, p, entry);
  if (st == LP_OK) st = write_entries(s, p, 1u << SHM_NOT_RUN, false);
  if (st != LP_OK) {
    kill(s->main_pid, SIGKILL);
    waitpid(s->main_pid, NULL, __WALL);
    if (p && p->refs == 0) {
      free(p->fns);
      core_target_close(&p->target);
      free(p);
    }
    core_session_free(s);
    return LP_ERR;
  }
  s->stats.functions = s->module->nfunctions;
  s->stats.startup_us = (now_ns() - t0) / 1000;
  *out = s;
  return LP_OK;
}

/* }=== */

/* {=== event loop ===*/

static void resume(pid_t tid, int sig) { ptrace(PTRACE_CONT, tid, 0, sig); }

/* A new task reported by its parent's fork/vfork/clone event. */
static lp_status on_new_task(core_session *s, thread *parent, int event) {
  unsigned long msg;
  if (ptrace(PTRACE_GETEVENTMSG, parent->tid, 0, &msg) != 0) return LP_OK;
  pid_t tid = (pid_t)msg;
  process *p = parent->proc;
  if (event == PTRACE_EVENT_FORK) { /* its own memory: a copy of the parent's state */
    process *child = calloc(1, sizeof *child);
    if (!child) return lp_fail("out of memory");
    *child = *p;
    child->refs = 0;
    child->fns = malloc(s->module->nfunctions * sizeof *child->fns);
    child->pending = malloc((p->npending + 1) * sizeof *child->pending);
    child->removed = malloc((p->nremoved + 1) * sizeof *child->removed);
    if (!child->fns || !child->pending || !child->removed) {
      free(child->fns);
      free(child->pending);
      free(child->removed);
      free(child);
      return lp_fail("out of memory");
    }
    memcpy(child->fns, p->fns, s->module->nfunctions * sizeof *child->fns);
    memcpy(child->pending, p->pending, p->npending * sizeof *child->pending);
    memcpy(child->removed, p->removed, p->nremoved * sizeof *child->removed);
    child->cappending = p->npending + 1;
    LP_CHECK(core_target_open(tid, &child->target));
    p = child;
  }
  bool started = false;
  for (size_t i = 0; i < s->nearly; i++)
    if (s->early[i] == tid) { /* its first stop came first: let it go now */
      s->early[i] = s->early[--s->nearly];
      started = true;
      resume(tid, 0);
    }
  return add_thread(s, tid, p, started);
}

/* Lets the process of TH go on untraced (after exec its image is new). */
static void let_go(core_session *s, thread *th) {
  ptrace(PTRACE_DETACH, th->tid, 0, 0);
  remove_thread(s, th);
}

/* Stops, restores and detaches every thread still traced (the main process ended). */
static void detach_all(core_session *s) {
  while (s->nthreads) {
    thread *th = &s->threads[0];
    int status = 0, sig = 0;
    if (ptrace(PTRACE_INTERRUPT, th->tid, 0, 0) == 0 && waitpid(th->tid, &status, __WALL) == th->tid &&
        WIFSTOPPED(status)) {
      if ((status >> 16) == 0 && WSTOPSIG(status) != SIGTRAP) sig = WSTOPSIG(status);
      if (th->proc->refs == 1)
        write_entries(s, th->proc, 1u << SHM_NOT_RUN | 1u << SHM_TRAPPED, true);
      ptrace(PTRACE_DETACH, th->tid, 0, sig);
    }
    remove_thread(s, th);
  }
}

/* The next stop or end of any traced task, polled for a while if SPIN. */
static pid_t wait_any(int *status, bool spin) {
  if (spin) {
    uint64_t deadline = now_ns() + SPIN_NS;
    do {
      pid_t tid = waitpid(-1, status, __WALL | WNOHANG);
      if (tid != 0) return tid;
    } while (now_ns() < deadline);
  }
  return waitpid(-1, status, __WALL);
}

static volatile sig_atomic_t ticked;

static void on_alarm(int sig) {
  (void)sig;
  ticked = 1;
}

/* The timer's period: sweeps of covered probes and the collectors' tick. */
static unsigned timer_ms(const core_session *s) {
  unsigned ms = s->opt.tick && s->opt.tick_ms ? s->opt.tick_ms : 0;
  if (sweeping(s) && (!ms || ms > SWEEP_MS)) ms = SWEEP_MS;
  return ms;
}

/* SIGALRM every timer_ms interrupts the wait so that sweeps and tick() run
 * between stops. */
static void start_ticks(const core_session *s) {
  unsigned ms = timer_ms(s);
  if (!ms) return;
  struct sigaction sa = {0};
  sa.sa_handler = on_alarm; /* no SA_RESTART: waitpid returns EINTR */
  sigemptyset(&sa.sa_mask);
  sigaction(SIGALRM, &sa, NULL);
  struct itimerval it = {{ms / 1000, (ms % 1000) * 1000}, {ms / 1000, (ms % 1000) * 1000}};
  setitimer(ITIMER_REAL, &it, NULL);
}

static void stop_ticks(const core_session *s) {
  if (!timer_ms(s)) return;
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
}

lp_status core_session_run(core_session *s, int *wait_status) {
  resume(s->main_pid, s->deferred_sig);
  start_ticks(s);
  bool spin = true;
  uint64_t next_tick = now_ns() + (uint64_t)s->opt.tick_ms * 1000000;
  for (;;) {
    int status;
    if (ticked) {
      ticked = 0;
      /* A process whose memory cannot be read or written any more is ending:
       * its probes stay, which costs nothing but time.  (A process's later
       * threads find nothing left to sweep.) */
      for (size_t t = 0; sweeping(s) && t < s->nthreads; t++)
        if (s->threads[t].proc->npending && sweep_covered(s, s->threads[t].proc) != LP_OK)
          s->threads[t].proc->npending = 0;
      if (s->opt.tick && s->opt.tick_ms && now_ns() >= next_tick) {
        next_tick = now_ns() + (uint64_t)s->opt.tick_ms * 1000000;
        s->opt.tick(s->opt.tick_ctx);
      }
    }
    pid_t tid = wait_any(&status, spin);
    spin = false;
    if (tid < 0) {
      if (errno == EINTR) continue;
      stop_ticks(s);
      return lp_fail("lost the program: %s", strerror(errno));
    }
    thread *th = find_thread(s, tid);
    if (WIFEXITED(status) || WIFSIGNALED(status)) {
      if (th) remove_thread(s, th);
      if (tid != s->main_pid) continue;
      stop_ticks(s);
      *wait_status = status;
      s->counters.header->end = WIFEXITED(status) ? SHM_EXITED : SHM_KILLED;
      s->counters.header->end_value = WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status);
      detach_all(s);
      return LP_OK;
    }
    if (!th) { /* a new task stopped before its parent's event arrived */
      if (s->nearly < sizeof s->early / sizeof s->early[0]) s->early[s->nearly++] = tid;
      else resume(tid, 0);
      continue;
    }
    int sig = WSTOPSIG(status), event = status >> 16;
    switch (event) {
    case 0:
      if (sig == SIGTRAP) {
        bool ours;
        LP_CHECK(on_trap(s, th, &ours));
        if (ours) sig = 0;
        spin = ours;
      }
      resume(tid, sig);
      break;
    case PTRACE_EVENT_STOP:
      if (th->started && (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU))
        ptrace(PTRACE_LISTEN, tid, 0, 0); /* a group stop: stay stopped, as without us */
      else
        resume(tid, 0);
      th->started = true;
      break;
    case PTRACE_EVENT_FORK:
    case PTRACE_EVENT_VFORK:
    case PTRACE_EVENT_CLONE:
      LP_CHECK(on_new_task(s, th, event));
      resume(tid, 0);
      break;
    case PTRACE_EVENT_EXEC:
      let_go(s, th);
      break;
    default:
      resume(tid, 0);
    }
  }
}

void core_session_forward_signal(core_session *s, int sig) { kill(s->main_pid, sig); }

/* }=== */

const shm_counters *core_session_counters(const core_session *s) { return &s->counters; }
const char *core_session_counters_path(const core_session *s) { return s->counters_path; }
const core_session_stats *core_session_get_stats(const core_session *s) { return &s->stats; }

void core_session_free(core_session *s) {
  if (!s) return;
  while (s->nthreads) remove_thread(s, &s->threads[0]);
  free(s->threads);
  shm_counters_close(&s->counters);
  core_image_free(&s->image);
  if (s->module) core_module_close(s->module);
  free(s->counters_path);
  free(s);
}
