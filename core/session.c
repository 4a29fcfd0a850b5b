/* session.c — the event loop of one run over a tree of processes.
 *
 * Start-up: launch to AT_ENTRY (or attach to every thread of a running
 * process and stop them), then set the process up (process.c) and let it run.
 * The loop sleeps in one futex_waitv (doorbell.h) on a word its SIGCHLD
 * handler moves (a traced task stopped or ended) and on every process's bell
 * (a stub asks for a first hit, served by stubs.c without stopping anything).
 * Every stop comes here: our breaks go to the break manager (breaks.c) or to
 * the loader's hook (modules loaded or unloaded), new tasks are added, and:
 *
 * - threads, and vfork children until they exec, share their parent's
 *   memory and so its state (kcmp tells whether a new task shares memory);
 *   a process image that runs a second thread is counted (stats.threaded:
 *   counters updated at once without --atomic may lose increments);
 * - a fork child gets a copy of the state and, at its first stop, a counters
 *   file of its own mapped over its parent's;
 * - exec gives the process a new image: a temporary break at its entry, where
 *   it is set up afresh once the loader has run (a 32-bit image is let go,
 *   with a line saying so).
 *
 * The end: when every traced process has ended (the first one's status is
 * the run's: its children may outlive it, a daemon's always do, and a line
 * says how many do when it ends), or on
 * core_session_detach (attach's Ctrl-C or --duration; a signal to lazyprobe
 * once the first process has ended), every process still traced is stopped, its
 * entries and hooks restored (copies stay mapped for the frames still in
 * them) and let go. */
#include "session.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <linux/kcmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "launch.h"
#include "session_internal.h"

#define DURATION_CHECK_MS 100 /* how often the end of an attach --duration is looked for */
#define PROLOGUE_BYTES 5    /* what a later entry patch overwrites */
#define MAX_STEPS 16        /* single steps to get a thread out of a prologue at attach */

uint64_t core_now_ns(void) {
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

/* Drops a reference to P; the last one frees it, first marking run the
 * functions whose first call went on unserved (stubs_settle) and sealing the
 * counters file of a process that has ended (no mapping of it is left
 * anywhere). */
static void release_process(core_session *s, process *p) {
  if (--p->refs > 0) return;
  stubs_settle(s, p);
  for (size_t k = 0; p->watched && k < s->nwatched; k++)
    if (s->watched[k] == p) s->watched[k] = s->watched[--s->nwatched];
  const shm_header *h = p->counters.header;
  if (h && (h->end == SHM_EXITED || h->end == SHM_KILLED || h->end == SHM_EXECED)) {
    if (shm_counters_seal(&p->counters, s->opt.outdir_fd, s->opt.outdir) != LP_OK)
      fprintf(stderr, "lazyprobe: process %d: counters file left at full size: %s\n", (int)p->pid, lp_error());
  }
  process_free(p);
}

static void remove_thread(core_session *s, thread *th) {
  process *p = th->proc;
  *th = s->threads[--s->nthreads];
  release_process(s, p);
}

static void resume(core_session *s, pid_t tid, int sig) {
  if (s->deferred_sig && s->deferred_tid == tid) {
    if (!sig) sig = s->deferred_sig;
    s->deferred_sig = 0;
  }
  ptrace(PTRACE_CONT, tid, 0, sig);
}

/* }=== */

/* {=== our breaks ===*/

/* P's first hits come through its stubs from now on: its bell is watched,
 * or its stubs become int3s.  Nothing to watch before a selected module
 * gave it a bell (stubs_arm; a library loaded later may). */
static void watch_bell(core_session *s, process *p) {
  if (!p->stubs || p->watched || p->bell_slot == SHM_NONE) return;
  if (s->nwatched < CORE_DOORBELL_MAX_BELLS) {
    p->watched = true;
    p->bell_seen = *stubs_bell(p);
    s->watched[s->nwatched++] = p;
  } else if (stubs_disable(p) != LP_OK) {
    fprintf(stderr, "lazyprobe: process %d: %s\n", (int)p->pid, lp_error());
  }
}

/* Serves the first hits asked for through the stubs of every process whose
 * bell moved: the bell read first, then the words (a stub sets its word,
 * then rings). */
static void serve_stubs(core_session *s) {
  for (size_t k = 0; k < s->nwatched; k++) {
    process *p = s->watched[k];
    uint32_t bell = __atomic_load_n(stubs_bell(p), __ATOMIC_SEQ_CST);
    if (bell == p->bell_seen || !p->ready) continue;
    p->bell_seen = bell;
    if (stubs_serve(s, p) != LP_OK) fprintf(stderr, "lazyprobe: process %d: %s\n", (int)p->pid, lp_error());
  }
}

/* Sleeps until a task stops or ends (the SIGCHLD word moves from CHLD), a
 * bell rings, or a signal comes (the timer's). */
static void sleep_until_event(const core_session *s, uint32_t chld) {
  const volatile uint32_t *bells[CORE_DOORBELL_MAX_BELLS];
  uint32_t seen[CORE_DOORBELL_MAX_BELLS];
  for (size_t k = 0; k < s->nwatched; k++) {
    bells[k] = stubs_bell(s->watched[k]);
    seen[k] = s->watched[k]->bell_seen;
  }
  core_doorbell_sleep(chld, bells, seen, s->nwatched);
}

/* A new process image stopped at its entry: set it up.  One that cannot be
 * instrumented runs on untraced. */
static lp_status on_entry(core_session *s, thread *th, struct user_regs_struct *regs) {
  process *p = th->proc;
  LP_CHECK(core_mem_write(&p->target, p->entry, &p->entry_byte, 1));
  regs->rip = p->entry;
  LP_CHECK(core_regs_set(th->tid, regs));
  if (process_setup(s, p, th->tid, p->entry) != LP_OK) {
    fprintf(stderr, "lazyprobe: process %d not instrumented: %s\n", (int)p->pid, lp_error());
    breaks_restore_all(p);
    return LP_ERR;
  }
  p->ready = true;
  watch_bell(s, p);
  return LP_OK;
}

/* The loader's hook (a bare return): back to the caller, then look at the
 * module list. */
static lp_status on_loader_hook(core_session *s, thread *th, struct user_regs_struct *regs) {
  process *p = th->proc;
  uint64_t ret;
  LP_CHECK(core_mem_read(&p->target, regs->rsp, &ret, sizeof ret));
  regs->rip = ret;
  regs->rsp += 8;
  LP_CHECK(core_regs_set(th->tid, regs));
  lp_status st = process_sync_modules(s, p, th->tid);
  if (st != LP_OK) fprintf(stderr, "lazyprobe: process %d: %s\n", (int)p->pid, lp_error());
  watch_bell(s, p);
  return LP_OK;
}

/* A SIGTRAP in TH: *ours when one of our breaks caused it.  *let_go when the
 * process could not be set up and is to run untraced. */
static lp_status on_trap(core_session *s, thread *th, bool *ours, bool *let_go) {
  process *p = th->proc;
  struct user_regs_struct regs;
  *ours = *let_go = false;
  LP_CHECK(core_regs_get(th->tid, &regs));
  uint64_t at = regs.rip - 1;
  if (!p->ready) {
    if (at != p->entry) return LP_OK;
    *ours = true;
    *let_go = on_entry(s, th, &regs) != LP_OK;
    return LP_OK;
  }
  if (p->r_brk && at == p->r_brk) {
    *ours = true;
    return on_loader_hook(s, th, &regs);
  }
  if (p->find_fde && at == p->find_fde) { /* an unwind begins: register the copies first */
    *ours = true; /* disarmed already: a thread that met the break while another registered */
    regs.rip = at;
    LP_CHECK(core_regs_set(th->tid, &regs));
    if (p->find_fde_armed && process_register_unwind(s, p, th->tid) != LP_OK)
      fprintf(stderr, "lazyprobe: process %d: unwind information not registered: %s\n", (int)p->pid, lp_error());
    return LP_OK;
  }
  return breaks_on_trap(s, p, th->tid, &regs, ours);
}

/* }=== */

/* {=== start-up ===*/

/* Fails for a process whose program is not 64-bit (a 32-bit one exec'd
 * inside the run: its auxv would not even read). */
static lp_status is_64bit(pid_t pid) {
  char path[64], exe[512];
  snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
  ssize_t n = readlink(path, exe, sizeof exe - 1);
  exe[n > 0 ? n : 0] = 0;
  unsigned char id[EI_NIDENT];
  FILE *f = fopen(path, "rbe");
  bool read = f && fread(id, sizeof id, 1, f) == 1;
  if (f) fclose(f);
  if (read && !memcmp(id, ELFMAG, SELFMAG) && id[EI_CLASS] == ELFCLASS32)
    return lp_fail("%s is a 32-bit program: lazyprobe instruments x86-64 programs only", n > 0 ? exe : path);
  return LP_OK;
}

static lp_status new_process(pid_t pid, pid_t ppid, uint32_t image, process **out) {
  process *p = calloc(1, sizeof *p);
  if (!p) return lp_fail("out of memory");
  p->pid = pid;
  p->ppid = ppid;
  p->image = image;
  p->counters.fd = -1;
  p->target.mem_fd = -1;
  p->perfmap.fd = -1;
  lp_status st = is_64bit(pid);
  if (st == LP_OK) st = core_target_open(pid, &p->target);
  if (st == LP_OK) st = core_auxv_get(pid, AT_ENTRY, &p->entry);
  if (st != LP_OK) {
    process_free(p);
    return LP_ERR;
  }
  *out = p;
  return LP_OK;
}

static lp_status start_launched(core_session *s) {
  uint64_t entry;
  LP_CHECK(core_launch(s->opt.program, s->opt.argv, &s->main_pid, &entry));
  process *p;
  lp_status st = new_process(s->main_pid, 0, 1, &p);
  if (st == LP_OK && (st = add_thread(s, s->main_pid, p, true)) != LP_OK) process_free(p);
  if (st == LP_OK) st = process_setup(s, p, s->main_pid, entry);
  if (st == LP_OK) {
    p->ready = true;
    watch_bell(s, p);
  }
  if (st != LP_OK) {
    kill(s->main_pid, SIGKILL);
    waitpid(s->main_pid, NULL, __WALL);
  }
  return st;
}

/* Stops TID (seized) and waits for its stop; a signal it reported instead is
 * kept for its next resume. */
static lp_status interrupt_and_wait(core_session *s, pid_t tid) {
  if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) != 0) return lp_fail("cannot stop thread %d: %s", (int)tid, strerror(errno));
  int status;
  for (;;) {
    if (core_wait_thread(tid, &status) != tid) return lp_fail("thread %d: %s", (int)tid, strerror(errno));
    if (!WIFSTOPPED(status)) return lp_fail("thread %d ended while lazyprobe attached", (int)tid);
    if ((status >> 16) == PTRACE_EVENT_STOP) return LP_OK;
    if ((status >> 16) == 0 && !s->deferred_sig) { /* a signal on its way: deliver it later */
      s->deferred_sig = WSTOPSIG(status);
      s->deferred_tid = tid;
      return LP_OK;
    }
    ptrace(PTRACE_CONT, tid, 0, (status >> 16) == 0 ? WSTOPSIG(status) : 0);
    ptrace(PTRACE_INTERRUPT, tid, 0, 0);
  }
}

/* Single-steps every thread whose instruction pointer lies inside the first
 * bytes of a function entry, which a later patch would overwrite under it. */
static lp_status leave_prologues(core_session *s, process *p) {
  for (size_t t = 0; t < s->nthreads; t++) {
    if (s->threads[t].proc != p) continue;
    pid_t tid = s->threads[t].tid;
    for (int step = 0; step < MAX_STEPS; step++) {
      struct user_regs_struct regs;
      LP_CHECK(core_regs_get(tid, &regs));
      bool inside = false;
      for (uint64_t back = 1; back < PROLOGUE_BYTES && !inside; back++) {
        long i;
        pmodule *m = process_module_at(p, regs.rip - back, &i);
        inside = m && i >= 0;
      }
      if (!inside) break;
      int status;
      if (ptrace(PTRACE_SINGLESTEP, tid, 0, 0) != 0 || core_wait_thread(tid, &status) != tid || !WIFSTOPPED(status))
        return lp_fail("cannot step thread %d out of a function entry", (int)tid);
    }
  }
  return LP_OK;
}

/* P has run a second thread. */
static void count_threaded(core_session *s, process *p) {
  if (p->threaded) return;
  p->threaded = true;
  s->stats.threaded++;
}

static lp_status start_attached(core_session *s) {
  pid_t pid = s->opt.attach;
  char dir[64];
  snprintf(dir, sizeof dir, "/proc/%d/task", (int)pid);
  s->main_pid = pid;
  /* Seize threads until a pass finds no new one (threads may be starting). */
  for (bool found = true; found;) {
    found = false;
    DIR *d = opendir(dir);
    if (!d) return lp_fail("process %d: %s", (int)pid, strerror(errno));
    for (struct dirent *e; (e = readdir(d));) {
      pid_t tid = (pid_t)atoi(e->d_name);
      if (tid <= 0 || find_thread(s, tid)) continue;
      if (ptrace(PTRACE_SEIZE, tid, 0, CORE_ATTACH_OPTIONS) != 0) {
        int err = errno;
        closedir(d);
        return lp_fail("cannot attach to process %d: %s", (int)pid, strerror(err));
      }
      lp_status st = interrupt_and_wait(s, tid);
      process *p = s->nthreads ? s->threads[0].proc : NULL;
      if (st == LP_OK && !p && (st = new_process(pid, 0, 1, &p)) != LP_OK) p = NULL;
      if (st == LP_OK) st = add_thread(s, tid, p, true);
      if (st != LP_OK) {
        closedir(d);
        if (p && !p->refs) process_free(p);
        return st;
      }
      found = true;
    }
    closedir(d);
  }
  if (!s->nthreads) return lp_fail("process %d has no threads", (int)pid);
  thread *leader = find_thread(s, pid);
  if (!leader) return lp_fail("process %d: its main thread has ended", (int)pid);
  process *p = leader->proc;
  if (s->nthreads > 1) count_threaded(s, p);
  p->ready = true; /* its entry never runs again: no temporary break there */
  LP_CHECK(process_setup(s, p, pid, p->entry));
  LP_CHECK(leave_prologues(s, p));
  if (adopt_activations(s, p) != LP_OK) /* they go on in the original: counted from their next call */
    fprintf(stderr, "lazyprobe: process %d: running functions not moved into copies: %s\n", (int)pid, lp_error());
  return LP_OK;
}

static void let_go_all(core_session *s);

lp_status core_session_start(const core_session_options *opt, core_session **out) {
  uint64_t t0 = core_now_ns();
  core_session *s = calloc(1, sizeof *s);
  if (!s) return lp_fail("out of memory");
  s->opt = *opt;
  lp_status st;
  s->stubs = !opt->attach && !opt->no_stubs && core_doorbell_available(); /* else first hits trap */
  if (opt->attach) {
    st = start_attached(s);
    if (st != LP_OK) let_go_all(s);
  } else {
    module_file *f; /* a clear error before anything runs; kept for the set-up */
    char image[PATH_MAX]; /* a script runs its interpreter: that is the image instrumented */
    st = core_program_image(opt->program, image, sizeof image);
    if (st == LP_OK && (st = module_file_open(s, image, &f)) != LP_OK && strcmp(image, opt->program))
      lp_context("%s: its interpreter", opt->program);
    if (st == LP_OK && f->module->nfunctions == 0) st = lp_fail("%s: no functions found", image);
    const char *base = strrchr(image, '/');
    base = base ? base + 1 : image;
    if (st == LP_OK && opt->argv[0] && opt->argv[1] && (!strncmp(base, "ld-linux", 8) || !strncmp(base, "ld.so", 5)))
      fprintf(stderr, "lazyprobe: %s is the dynamic loader: what it loads is not instrumented (run the program "
                      "itself)\n", image);
    if (st == LP_OK) st = start_launched(s);
  }
  if (st != LP_OK) {
    core_session_free(s);
    return LP_ERR;
  }
  const process *p = s->threads[0].proc;
  for (size_t k = 0; k < p->nmods; k++) s->stats.functions += p->mods[k].file->module->nfunctions;
  s->stats.startup_us = (core_now_ns() - t0) / 1000;
  *out = s;
  return LP_OK;
}

/* }=== */

/* {=== processes ===*/

/* Do tasks A and B share their memory? */
static bool same_memory(pid_t a, pid_t b, int event) {
  long r = syscall(SYS_kcmp, a, b, KCMP_VM, 0, 0);
  if (r >= 0) return r == 0;
  return event != PTRACE_EVENT_FORK;
}

static lp_status first_stop(core_session *s, thread *th) {
  th->started = true;
  process *p = th->proc;
  if (!p->remap) return LP_OK;
  lp_status st = process_remap(s, p, th->tid);
  if (st != LP_OK) {
    fprintf(stderr, "lazyprobe: process %d counts into its parent's file: %s\n", (int)th->tid, lp_error());
    if (p->stubs && stubs_disable(p) != LP_OK) /* they would ring its parent's bell */
      fprintf(stderr, "lazyprobe: process %d: %s\n", (int)p->pid, lp_error());
  }
  watch_bell(s, p);
  return LP_OK;
}

/* A new task reported by its parent's fork/vfork/clone event. */
static lp_status on_new_task(core_session *s, thread *parent, int event) {
  unsigned long msg;
  if (ptrace(PTRACE_GETEVENTMSG, parent->tid, 0, &msg) != 0) return LP_OK;
  pid_t tid = (pid_t)msg;
  process *p = parent->proc;
  if (!same_memory(parent->tid, tid, event)) LP_CHECK(process_fork(s, p, tid, &p));
  else if (event == PTRACE_EVENT_CLONE) count_threaded(s, p); /* vfork children borrow memory, not run with it */
  bool stopped = false;
  for (size_t i = 0; i < s->nearly; i++)
    if (s->early[i] == tid) { /* its first stop came before this event */
      s->early[i] = s->early[--s->nearly];
      stopped = true;
    }
  if (!stopped) { /* its first stop follows at once: take it here */
    int status;
    if (core_wait_thread(tid, &status) != tid) return lp_fail("new task %d: %s", (int)tid, strerror(errno));
    if (!WIFSTOPPED(status)) {
      if (p != parent->proc) process_free(p);
      return LP_OK;
    }
  }
  LP_CHECK(add_thread(s, tid, p, false));
  LP_CHECK(first_stop(s, find_thread(s, tid)));
  resume(s, tid, 0);
  return LP_OK;
}

/* TH called exec: its process has a new image, set up at its entry. */
static lp_status on_exec(core_session *s, thread *th) {
  process *old = th->proc;
  pid_t pid = th->tid;
  bool own = old->pid == pid; /* not a vfork child borrowing its parent's memory */
  if (own) {
    old->counters.header->end = SHM_EXECED;
    for (size_t t = s->nthreads; t-- > 0;) /* its other threads are gone */
      if (s->threads[t].proc == old && s->threads[t].tid != pid) remove_thread(s, &s->threads[t]);
    th = find_thread(s, pid);
  }
  process *p;
  LP_CHECK(new_process(pid, own ? old->ppid : old->pid, own ? old->image + 1 : 1, &p));
  th->proc = p;
  p->refs = 1;
  release_process(s, old);
  uint8_t brk = INT3;
  LP_CHECK(core_mem_read(&p->target, p->entry, &p->entry_byte, 1));
  return core_mem_write(&p->target, p->entry, &brk, 1);
}

/* Records how the process of TH ended, if TH is its main thread. */
static void record_end(thread *th, int status) {
  process *p = th->proc;
  if (th->tid != p->pid || !p->counters.header) return;
  p->counters.header->end = WIFEXITED(status) ? SHM_EXITED : SHM_KILLED;
  p->counters.header->end_value = WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status);
}

/* Lets TH go untraced. */
static void let_go(core_session *s, thread *th) {
  ptrace(PTRACE_DETACH, th->tid, 0, 0);
  remove_thread(s, th);
}

/* Whether TID, stopped, has a SIGTRAP queued: it met an int3 just as it
 * was interrupted, and the interrupt's stop comes first. */
static bool trap_queued(pid_t tid) {
  siginfo_t queued[16];
  struct __ptrace_peeksiginfo_args from = {.off = 0, .flags = 0, .nr = 16};
  long n = ptrace(PTRACE_PEEKSIGINFO, tid, &from, queued);
  for (long k = 0; k < n; k++)
    if (queued[k].si_signo == SIGTRAP) return true;
  return false;
}

/* Stops every thread of P, sends those stopped at our breaks where they
 * belong (and those whose trap at one was still queued behind the stop: it
 * would reach the program once detached), restores P's entries and hooks
 * and lets the threads go. */
static void detach_process(core_session *s, process *p) {
  int *sigs = calloc(s->nthreads + 1, sizeof *sigs);
  size_t quiet = SIZE_MAX; /* a thread stopped with no signal to give back */
  for (size_t t = 0; t < s->nthreads; t++) {
    thread *th = &s->threads[t];
    if (th->proc != p) continue;
    int status;
    if (ptrace(PTRACE_INTERRUPT, th->tid, 0, 0) != 0 || core_wait_thread(th->tid, &status) != th->tid ||
        !WIFSTOPPED(status))
      continue;
    if ((status >> 16) == PTRACE_EVENT_STOP && trap_queued(th->tid) &&
        (ptrace(PTRACE_CONT, th->tid, 0, 0) != 0 || core_wait_thread(th->tid, &status) != th->tid ||
         !WIFSTOPPED(status)))
      continue;
    if ((status >> 16) == PTRACE_EVENT_STOP && quiet == SIZE_MAX) quiet = t;
    if ((status >> 16) == 0 && WSTOPSIG(status) == SIGTRAP) {
      bool ours, let_go_now;
      if (on_trap(s, th, &ours, &let_go_now) == LP_OK && !ours && sigs) sigs[t] = SIGTRAP;
    } else if ((status >> 16) == 0 && sigs) {
      sigs[t] = WSTOPSIG(status);
    }
  }
  if (p->ready) {
    if (quiet != SIZE_MAX) {
      pid_t tid = s->threads[quiet].tid;
      process_register_at_detach(s, p, tid);
      if (s->deferred_sig && s->deferred_tid == tid && sigs) { /* came during the registration */
        sigs[quiet] = s->deferred_sig;
        s->deferred_sig = 0;
      }
    }
    breaks_restore_all(p);
  }
  if (p->r_brk) core_mem_write(&p->target, p->r_brk, &p->r_brk_byte, 1);
  if (p->find_fde_armed) core_mem_write(&p->target, p->find_fde, &p->find_fde_byte, 1);
  if (!p->ready) core_mem_write(&p->target, p->entry, &p->entry_byte, 1);
  if (p->counters.header && p->counters.header->end == SHM_RUNNING) p->counters.header->end = SHM_DETACHED;
  for (size_t t = s->nthreads; t-- > 0;) {
    thread *th = &s->threads[t];
    if (th->proc != p) continue;
    ptrace(PTRACE_DETACH, th->tid, 0, sigs ? sigs[t] : 0);
    remove_thread(s, th);
  }
  free(sigs);
}

static void let_go_all(core_session *s) {
  while (s->nthreads) detach_process(s, s->threads[0].proc);
}

/* }=== */

/* {=== event loop ===*/

static volatile sig_atomic_t ticked;

static void on_alarm(int sig) {
  (void)sig;
  ticked = 1;
  core_doorbell_poke(); /* come just before the sleep, it still ends it */
}

/* The timer's period: sweeps of covered probes and the collectors' tick. */
static unsigned timer_ms(const core_session *s) {
  unsigned ms = s->opt.tick && s->opt.tick_ms ? s->opt.tick_ms : 0;
  if (breaks_sweeping(s) && (!ms || ms > SWEEP_MS)) ms = SWEEP_MS;
  if (breaks_second_copies(s) && (!ms || ms > SECOND_MS)) ms = SECOND_MS;
  if (s->opt.duration_ms && (!ms || ms > DURATION_CHECK_MS)) ms = DURATION_CHECK_MS;
  return ms;
}

/* SIGALRM every timer_ms interrupts the wait so that sweeps and tick() run
 * between stops. */
static void start_ticks(const core_session *s) {
  unsigned ms = timer_ms(s);
  if (!ms) return;
  struct sigaction sa = {0};
  sa.sa_handler = on_alarm; /* no SA_RESTART: the sleep returns EINTR */
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

static void on_tick(core_session *s, uint64_t *next_tick, uint64_t deadline) {
  if (deadline && core_now_ns() >= deadline) s->detaching = 1;
  /* A process whose memory cannot be read or written any more is ending: its
   * probes stay, which costs nothing but time. */
  for (size_t t = 0; breaks_sweeping(s) && t < s->nthreads; t++) {
    process *p = s->threads[t].proc;
    if (p->ready && p->npending && breaks_sweep(s, p) != LP_OK) p->npending = 0;
  }
  for (size_t t = 0; breaks_second_copies(s) && t < s->nthreads; t++) {
    process *p = s->threads[t].proc;
    if (p->ready && !p->remap && !p->second_ended && breaks_second_pass(s, p) != LP_OK) p->second_ended = true;
  }
  if (s->opt.tick && s->opt.tick_ms && core_now_ns() >= *next_tick) {
    *next_tick = core_now_ns() + (uint64_t)s->opt.tick_ms * 1000000;
    s->opt.tick(s->opt.tick_ctx);
  }
}

/* Does SIG's default action dump core (signal(7))? */
static bool dumps_core(int sig) {
  switch (sig) {
  case SIGQUIT: case SIGILL: case SIGTRAP: case SIGABRT: case SIGBUS: case SIGFPE:
  case SIGSEGV: case SIGSYS: case SIGXCPU: case SIGXFSZ: return true;
  default: return false;
  }
}

/* One stop of a traced thread. */
static lp_status on_stop(core_session *s, thread *th, int status) {
  pid_t tid = th->tid;
  int sig = WSTOPSIG(status), event = status >> 16;
  switch (event) {
  case 0:
    if (sig == SIGTRAP) {
      bool ours, let_go_now;
      LP_CHECK(on_trap(s, th, &ours, &let_go_now));
      if (let_go_now) {
        let_go(s, th);
        return LP_OK;
      }
      if (ours) sig = 0;
      else if (process_keep_sigtrap_action(s, th->proc, tid) != LP_OK)
        fprintf(stderr, "lazyprobe: process %d: SIGTRAP action not checked: %s\n", (int)th->proc->pid, lp_error());
    } else if ((sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL) &&
               stubs_fault_home(s, th->proc, tid) != LP_OK) {
      fprintf(stderr, "lazyprobe: process %d: a fault not moved home: %s\n", (int)th->proc->pid, lp_error());
    }
    if (sig && dumps_core(sig)) process_describe_copies(th->proc); /* gdb reads a core's copies from its memory */
    resume(s, tid, sig);
    break;
  case PTRACE_EVENT_STOP:
    if (th->started && (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU)) {
      ptrace(PTRACE_LISTEN, tid, 0, 0); /* a group stop: stay stopped, as without us */
      break;
    }
    if (!th->started) LP_CHECK(first_stop(s, th));
    resume(s, tid, 0);
    break;
  case PTRACE_EVENT_FORK:
  case PTRACE_EVENT_VFORK:
  case PTRACE_EVENT_CLONE:
    LP_CHECK(on_new_task(s, th, event));
    resume(s, tid, 0);
    break;
  case PTRACE_EVENT_EXEC:
    if (on_exec(s, th) != LP_OK) {
      fprintf(stderr, "lazyprobe: process %d not followed after exec: %s\n", (int)tid, lp_error());
      th = find_thread(s, tid);
      if (th) let_go(s, th);
      return LP_OK;
    }
    resume(s, tid, 0);
    break;
  default:
    resume(s, tid, 0);
  }
  return LP_OK;
}

/* Says, when the first process has just ended, how many processes outlive
 * it (and are followed: the run seems to hang until they end). */
static void say_outliving(const core_session *s) {
  size_t n = 0;
  for (size_t t = 0; t < s->nthreads; t++) {
    bool counted = false;
    for (size_t u = 0; u < t && !counted; u++) counted = s->threads[u].proc == s->threads[t].proc;
    n += !counted;
  }
  if (n)
    fprintf(stderr, "lazyprobe: the program ended; %zu process%s it started still run%s, followed to %s end "
                    "(a signal to lazyprobe lets %s go)\n",
            n, n == 1 ? "" : "es", n == 1 ? "s" : "", n == 1 ? "its" : "their", n == 1 ? "it" : "them");
}

static lp_status run_loop(core_session *s, int *wait_status) {
  for (size_t t = 0; t < s->nthreads; t++) resume(s, s->threads[t].tid, 0);
  start_ticks(s);
  uint64_t next_tick = core_now_ns() + (uint64_t)s->opt.tick_ms * 1000000;
  uint64_t deadline = s->opt.duration_ms ? core_now_ns() + (uint64_t)s->opt.duration_ms * 1000000 : 0;
  *wait_status = 0;
  for (;;) {
    int status;
    /* before looking at anything: a stop, a tick or a detach after it moves
     * it (read after the detach's flag, a detach in between slept through) */
    uint32_t chld = core_doorbell_chld();
    if (s->detaching) {
      stop_ticks(s);
      let_go_all(s);
      return LP_OK;
    }
    if (ticked) {
      ticked = 0;
      on_tick(s, &next_tick, deadline);
    }
    if (s->nwatched) serve_stubs(s);
    /* the next stop or end of any task; sleeping: polling for the next first
     * hit (it often comes 20-50 us after the last) cost more CPU time than it
     * saved (docs/PERFORMANCE.md, session 12) */
    pid_t tid = waitpid(-1, &status, __WALL | WNOHANG);
    if (tid == 0) {
      sleep_until_event(s, chld);
      continue;
    }
    if (tid < 0) {
      if (errno == EINTR) continue;
      stop_ticks(s);
      return lp_fail("lost the program: %s", strerror(errno));
    }
    thread *th = find_thread(s, tid);
    if (WIFEXITED(status) || WIFSIGNALED(status)) {
      if (th) {
        record_end(th, status);
        remove_thread(s, th);
      }
      if (tid == s->main_pid) {
        *wait_status = status;
        s->main_ended = 1;
        say_outliving(s);
      }
      if (!s->main_ended || s->nthreads) continue; /* its children that outlive it are followed to their end */
      stop_ticks(s);
      return LP_OK;
    }
    if (!th) { /* a new task stopped before its parent's event arrived */
      if (s->nearly < sizeof s->early / sizeof s->early[0]) s->early[s->nearly++] = tid;
      else resume(s, tid, 0);
      continue;
    }
    LP_CHECK(on_stop(s, th, status));
  }
}

/* While the loop runs, a SIGCHLD handler moves the word the loop sleeps on
 * with the bells (doorbell.h). */
lp_status core_session_run(core_session *s, int *wait_status) {
  core_doorbell_arm();
  lp_status st = run_loop(s, wait_status);
  core_doorbell_disarm();
  return st;
}

void core_session_detach(core_session *s) {
  s->detaching = 1;
  core_doorbell_poke();
}

void core_session_forward_signal(core_session *s, int sig) { kill(s->main_pid, sig); }

bool core_session_main_ended(const core_session *s) { return s->main_ended; }

/* }=== */

size_t core_session_live_files(const core_session *s, shm_counters **files) {
  size_t n = 0;
  *files = malloc((s->nthreads + 1) * sizeof **files);
  if (!*files) return 0;
  for (size_t t = 0; t < s->nthreads; t++) {
    const process *p = s->threads[t].proc;
    bool seen = !p->counters.header;
    for (size_t k = 0; k < n && !seen; k++) seen = (*files)[k].header == p->counters.header;
    if (!seen) (*files)[n++] = p->counters;
  }
  return n;
}

const core_session_stats *core_session_get_stats(const core_session *s) { return &s->stats; }

void core_session_free(core_session *s) {
  if (!s) return;
  while (s->nthreads) remove_thread(s, &s->threads[0]);
  free(s->threads);
  while (s->files) {
    module_file *f = s->files;
    s->files = f->next;
    for (size_t i = 0; f->plans && i < f->module->nfunctions; i++) reloc_plan_free(f->plans[i].plan);
    free(f->plans);
    for (size_t i = 0; f->sides && i < f->module->nfunctions; i++) {
      free(f->sides[i].at);
      free(f->sides[i].off);
    }
    free(f->sides);
    for (size_t i = 0; i < f->nnames; i++) free(f->names[i]);
    free(f->names);
    core_image_free(&f->image);
    core_module_close(f->module);
    free(f->path);
    free(f);
  }
  free(s);
}
