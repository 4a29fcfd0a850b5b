/* adopt.c — at attach, the activations already running in selected functions
 * are moved into their copies (seed 002, "Stack function instrumentation"):
 * each thread's stack is unwound (libdwfl, from the modules' call frame
 * information, the threads being stopped by us), every function holding a
 * frame is relocated at once, a thread stopped in one resumes at its
 * instruction's copy and every return address into one is rewritten to the
 * point where the copy's call returns.  From then on the rest of those
 * activations runs in the copies: their blocks, arcs and call sites count.
 * Their entries happened before the attach and are not counted.
 *
 * Before that, GDB's JIT library (core/gdbjit.h) is loaded into the process
 * with a remote dlopen, so that these copies and all later ones are described
 * to gdb; not when a thread has a frame in the loader or in a function that
 * takes the loader's or malloc's locks (dlopen would wait for that thread,
 * which we keep stopped, for ever).
 *
 * Left in the original: a thread in a system call (the kernel may restart
 * it by moving back from the instruction pointer), frames of signal
 * handlers' interrupted code (their PC is in a signal frame, not at a return
 * address slot) and frames the unwinder cannot reach. */
#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/user.h>

#include "session_internal.h"

#define MAX_FRAMES 512
#define DWARF_RSP 7

/* One frame in a selected function: a thread's own instruction pointer
 * (slot 0) or a return address at SLOT on its stack. */
typedef struct activation {
  pid_t tid;
  uint64_t slot;
  pmodule *m;
  long function;
  breaks_resume resume;
} activation;

typedef struct walk {
  process *p;
  Dwfl *dwfl;
  pid_t tid;
  bool in_syscall;
  bool loader_busy; /* a frame in the loader or in what takes its or malloc's locks */
  unsigned depth;
  activation *v;
  size_t n, cap;
  bool failed; /* out of memory */
} walk;

static int no_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                        const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
                        char **debuginfo_file_name) {
  (void)mod, (void)userdata, (void)modname, (void)base, (void)file_name, (void)debuglink_file;
  (void)debuglink_crc, (void)debuginfo_file_name;
  return -1; /* .eh_frame is enough to unwind */
}

static const Dwfl_Callbacks callbacks = {
    .find_elf = dwfl_linux_proc_find_elf,
    .find_debuginfo = no_debuginfo,
};

static void add(walk *w, uint64_t addr, uint64_t slot) {
  long exact;
  pmodule *m = process_module_at(w->p, addr, &exact);
  if (!m) return;
  const core_function *fn = core_module_function_at(m->file->module, addr - m->bias);
  if (!fn) return;
  long i = (long)(fn - m->file->module->functions);
  if (m->fns[i].state != SHM_NOT_RUN || addr - m->bias == fn->addr) return; /* at the entry: it traps */
  if (w->n == w->cap) {
    size_t cap = w->cap ? 2 * w->cap : 32;
    activation *grown = realloc(w->v, cap * sizeof *grown);
    if (!grown) {
      w->failed = true;
      return;
    }
    w->v = grown;
    w->cap = cap;
  }
  w->v[w->n++] = (activation){w->tid, slot, m, i, {addr, slot != 0, 0}};
}

/* Functions that hold (or wait for) a lock dlopen takes: the loader's, malloc's. */
static bool takes_loader_locks(const char *module, const char *fn) {
  static const char *const prefixes[] = {"_dl_", "__dl", "dl_", "__libc_dl", "dlopen", "dlclose", "dlsym", "dlvsym",
                                         "dlmopen", "dlinfo", "dladdr", "malloc", "__libc_malloc", "calloc",
                                         "__libc_calloc", "realloc", "__libc_realloc", "free", "__libc_free",
                                         "cfree", "_int_", "tcache", "sysmalloc", "arena_", "memalign",
                                         "_mid_memalign", "posix_memalign", "aligned_alloc", "valloc", "pvalloc",
                                         "__cxa_thread_atexit", "fork", "__libc_fork", "_Fork", "__run_fork",
                                         NULL};
  const char *base = strrchr(module, '/');
  if (!strncmp(base ? base + 1 : module, "ld-linux", 8)) return true;
  for (const char *const *p = prefixes; fn && *p; p++)
    if (!strncmp(fn, *p, strlen(*p))) return true;
  return false;
}

static int on_frame(Dwfl_Frame *state, void *arg) {
  walk *w = arg;
  Dwarf_Addr pc;
  bool activation;
  if (w->depth++ >= MAX_FRAMES || !dwfl_frame_pc(state, &pc, &activation)) return DWARF_CB_ABORT;
  Dwfl_Module *mod = dwfl_addrmodule(w->dwfl, activation ? pc : pc - 1);
  const char *module = mod ? dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL) : NULL;
  if (!mod || takes_loader_locks(module ? module : "", dwfl_module_addrname(mod, activation ? pc : pc - 1)))
    w->loader_busy = true; /* code of no module counts as busy too: we cannot tell */
  if (w->depth == 1) {
    if (!w->in_syscall) add(w, pc, 0);
    return DWARF_CB_OK;
  }
  Dwarf_Word sp;
  uint64_t stored;
  if (activation || dwfl_frame_reg(state, DWARF_RSP, &sp) != 0) return DWARF_CB_OK;
  /* the caller's rsp after the return is the callee's CFA; the return address sits below it */
  if (core_mem_read(&w->p->target, sp - 8, &stored, sizeof stored) != LP_OK || stored != pc) return DWARF_CB_OK;
  add(w, pc, sp - 8);
  return DWARF_CB_OK;
}

/* The frames of P's threads that are in selected functions not yet run. */
static lp_status find_activations(core_session *s, process *p, walk *w) {
  Dwfl *dwfl = dwfl_begin(&callbacks);
  if (!dwfl) return lp_fail("libdwfl: %s", dwfl_errmsg(-1));
  if (dwfl_linux_proc_report(dwfl, p->pid) != 0 || dwfl_report_end(dwfl, NULL, NULL) != 0 ||
      dwfl_linux_proc_attach(dwfl, p->pid, true) != 0) {
    lp_status st = lp_fail("cannot unwind process %d: %s", (int)p->pid, dwfl_errmsg(-1));
    dwfl_end(dwfl);
    return st;
  }
  w->dwfl = dwfl;
  for (size_t t = 0; t < s->nthreads && !w->failed; t++) {
    if (s->threads[t].proc != p) continue;
    struct user_regs_struct regs;
    if (core_regs_get(s->threads[t].tid, &regs) != LP_OK) continue;
    w->tid = s->threads[t].tid;
    w->in_syscall = (int64_t)regs.orig_rax >= 0;
    w->depth = 0;
    dwfl_getthread_frames(dwfl, w->tid, on_frame, w); /* a stack cut short keeps what it found */
  }
  dwfl_end(dwfl);
  return w->failed ? lp_fail("out of memory") : LP_OK;
}

static int by_function(const void *a, const void *b) {
  const activation *x = a, *y = b;
  if (x->m != y->m) return x->m < y->m ? -1 : 1;
  return (x->function > y->function) - (x->function < y->function);
}

lp_status adopt_activations(core_session *s, process *p) {
  walk w = {.p = p};
  lp_status st = find_activations(s, p, &w);
  /* GDB's JIT library first, so that the copies made here are described too */
  if (st == LP_OK && w.loader_busy)
    fprintf(stderr, "lazyprobe: process %d: gdb will not see the copies: a thread is in the loader or malloc\n",
            (int)p->pid);
  else if (st == LP_OK && process_load_gdbjit_attached(s, p, p->pid) != LP_OK)
    fprintf(stderr, "lazyprobe: process %d: gdb will not see the copies: %s\n", (int)p->pid, lp_error());
  if (st == LP_OK) qsort(w.v, w.n, sizeof *w.v, by_function);
  for (size_t a = 0; st == LP_OK && a < w.n;) {
    size_t b = a;
    while (b < w.n && w.v[b].m == w.v[a].m && w.v[b].function == w.v[a].function) b++;
    breaks_resume *resume = malloc((b - a) * sizeof *resume);
    if (!resume) st = lp_fail("out of memory");
    for (size_t k = a; st == LP_OK && k < b; k++) resume[k - a] = w.v[k].resume;
    if (st == LP_OK) st = breaks_instrument_running(s, p, w.v[a].m, w.v[a].function, resume, b - a);
    for (size_t k = a; st == LP_OK && k < b; k++) w.v[k].resume.copy = resume[k - a].copy;
    free(resume);
    a = b;
  }
  for (size_t k = 0; st == LP_OK && k < w.n; k++) {
    const activation *v = &w.v[k];
    if (!v->resume.copy) continue;
    if (v->slot) {
      st = core_mem_write(&p->target, v->slot, &v->resume.copy, sizeof v->resume.copy);
    } else {
      struct user_regs_struct regs;
      st = core_regs_get(v->tid, &regs);
      regs.rip = v->resume.copy;
      if (st == LP_OK) st = core_regs_set(v->tid, &regs);
    }
    if (st == LP_OK) s->stats.adopted++;
  }
  free(w.v);
  return st;
}
