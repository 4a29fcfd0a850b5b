/* session.h — one run of lazyprobe over a tree of processes: launch or
 * attach, the lazy break manager (a break at every function entry of every
 * selected module, the function relocated on its first hit and its entry
 * patched), the threads and child processes the program creates, the modules
 * it loads and unloads, and the end (or detach).  Each process image has its
 * own counters file (shm/counters.h) in the output directory. */
#ifndef CORE_SESSION_H
#define CORE_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "counters.h"
#include "lp_status.h"
#include "select.h"

typedef struct core_session_options {
  const char *program;     /* run: resolved path */
  char *const *argv;
  pid_t attach;            /* attach to this running process instead (program unused) */
  int outdir_fd;           /* where the counters files go */
  const char *outdir;      /* its name, for messages and for the target's open() */
  bool atomic;             /* lock-prefixed counters */
  bool no_stubs;           /* first hits trap (a ptrace stop), none asked for through stubs */
  uint32_t probes;         /* enum shm_probe bits: what the copies count */
  core_selection select;   /* which modules and functions */
  unsigned duration_ms;    /* attach: detach after this long; 0: at the end or on request */
  unsigned tick_ms;        /* call tick() about this often while the program runs; 0: never */
  void (*tick)(void *ctx);
  void *tick_ctx;
} core_session_options;

typedef struct core_session_stats {
  uint64_t startup_us;     /* launch (or attach) to the first instruction run, breaks written */
  uint64_t functions;      /* discovered in the selected modules of the first process */
  uint64_t instrumented;   /* relocated or trapped, over all processes */
  uint64_t eager;          /* of those, instrumented as callees of a first hit, before running */
  uint64_t native;         /* left uninstrumented */
  uint64_t trapped_calls;  /* calls counted by a break */
  uint64_t trap_hits;      /* first hits that came as a trap (a ptrace stop) */
  uint64_t stub_hits;      /* first hits asked for through a stub, without a stop */
  uint64_t instrument_ns;  /* handling first hits: trap to resume */
  uint64_t cover_removed;  /* cover probes replaced by NOPs once their block ran */
  uint64_t sweep_ns;       /* sweeps: looking for cover probes that ran, removing them */
  uint64_t processes;      /* process images instrumented */
  uint64_t modules;        /* modules instrumented, over all processes */
  uint64_t adopted;        /* frames moved into copies at attach (core/adopt.c) */
  uint64_t plt_redirected; /* PLT slots pointed straight at copies */
  uint64_t retreed;        /* second copies with their arcs placed on the first's counts */
  uint64_t stripped;       /* second copies without the cover probes that ran in the first */
  uint64_t second_ns;      /* considering and making second copies */
  uint64_t plans_reused;   /* relocations planned for an earlier process image of the same file */
  uint64_t homed;          /* functions sent back to their original code, int3s on blocks not covered */
  uint64_t home_hits;      /* those int3s met */
  uint64_t marked;         /* first calls that only marked their function run (no copy made) */
  uint64_t went_on;        /* of those, the ones that went on through a copy of the first
                              instructions without waiting for the tracer (stubs.c) */
  uint64_t parts_linked;   /* unnamed parts of functions linked to them (stripped modules; once per file) */
  uint64_t threaded;       /* process images that ran more than one thread (whose counters, unless
                              atomic, two threads may update at once and lose an increment) */
} core_session_stats;

typedef struct core_session core_session;

/* Validates and launches the program (or attaches to opt->attach), writes its
 * counters file and all entry breaks.  On failure a launched program is
 * killed and an attached one let go unchanged. */
lp_status core_session_start(const core_session_options *opt, core_session **out);

/* Runs until every traced process has ended, the first one's wait status in
 * *wait_status, or, after core_session_detach, until every process still
 * traced is let go (*wait_status: the first one's if it had ended, else 0). */
lp_status core_session_run(core_session *s, int *wait_status);

/* Asks core_session_run to restore every entry and let the processes go on
 * untraced (async-signal-safe). */
void core_session_detach(core_session *s);

/* Forwards SIG to the first process (for lazyprobe's own SIGTERM/SIGHUP). */
void core_session_forward_signal(core_session *s, int sig);

/* Has the first process ended (the session still following its children)?
 * A signal then detaches them instead (async-signal-safe). */
bool core_session_main_ended(const core_session *s);

/* The counters files of the processes alive now, in *files (malloc'd). */
size_t core_session_live_files(const core_session *s, shm_counters **files);

const core_session_stats *core_session_get_stats(const core_session *s);

void core_session_free(core_session *s);

#endif
