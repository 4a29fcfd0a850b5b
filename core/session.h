/* session.h — one run of a program under lazyprobe: launch, the lazy break
 * manager (a break at every function entry, the function relocated on its
 * first hit and its entry patched), the processes and threads it spawns, and
 * the end.  The counters live in a shared counters file (shm/counters.h). */
#ifndef CORE_SESSION_H
#define CORE_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "counters.h"
#include "lp_status.h"

typedef struct core_session_options {
  const char *program;     /* resolved path */
  char *const *argv;
  int outdir_fd;           /* where the counters file goes */
  const char *outdir;      /* its name, for messages and for the target's open() */
  bool atomic;             /* lock-prefixed counters */
  uint32_t probes;         /* enum shm_probe bits: what the copies count */
  unsigned tick_ms;        /* call tick() about this often while the program runs; 0: never */
  void (*tick)(void *ctx);
  void *tick_ctx;
} core_session_options;

typedef struct core_session_stats {
  uint64_t startup_us;     /* launch to the first instruction of the program, breaks written */
  uint64_t functions;      /* discovered in the main executable */
  uint64_t instrumented;   /* relocated or trapped */
  uint64_t eager;          /* of those, instrumented as callees of a first hit, before running */
  uint64_t native;         /* left uninstrumented */
  uint64_t trapped_calls;  /* calls counted by a break */
  uint64_t instrument_ns;  /* handling first hits: trap to resume */
  uint64_t cover_removed;  /* cover probes replaced by NOPs once their block ran */
} core_session_stats;

typedef struct core_session core_session;

/* Validates and launches the program, writes the counters file and all entry
 * breaks.  On failure nothing is left running. */
lp_status core_session_start(const core_session_options *opt, core_session **out);

/* Runs the program to its end.  *wait_status is the main process's wait status. */
lp_status core_session_run(core_session *s, int *wait_status);

/* Forwards SIG to the main process (for lazyprobe's own SIGTERM/SIGHUP). */
void core_session_forward_signal(core_session *s, int sig);

const shm_counters *core_session_counters(const core_session *s);
const char *core_session_counters_path(const core_session *s);
const core_session_stats *core_session_get_stats(const core_session *s);

void core_session_free(core_session *s);

#endif
