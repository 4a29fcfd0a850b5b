/* lazyprobe.c — the command line: parses options and calls the library; puts
 * lazyprobe's own heap on transparent huge pages first (heap_on_huge_pages);
 * ends after the reports without closing their Lua state (report), saying
 * when counts were taken without --atomic in a process that ran several
 * threads (warn_threads).
 *
 *   lazyprobe run [-c COLLECTORS] [-o DIR] [OPTIONS] -- PROGRAM ARGS...
 *   lazyprobe attach [-c COLLECTORS] [-o DIR] [OPTIONS] [--duration SECONDS] PID
 *   lazyprobe report [-c COLLECTORS] [--pid PID,...] DIR|FILE
 * OPTIONS: --atomic, --stats, --no-stubs, --include GLOB, --exclude GLOB (core/select.h)
 *   lazyprobe collectors
 *
 * Exit status of `run` is the program's (128+N if signal N killed it), of
 * `attach` 0 once detached or the process ended; when
 * lazyprobe itself cannot do its job: 127 program not found, 126 not
 * executable, 125 anything else, 2 bad usage. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "counters.h"
#include "launch.h"
#include "lp_lua.h"
#include "lp_status.h"
#include "session.h"

#define EXIT_USAGE 2
#define EXIT_FAILED 125
#define EXIT_COLLECTOR_FAILED (-1) /* report(): a collector failed, what it read was fine */
#define EXIT_NOT_EXECUTABLE 126
#define EXIT_NOT_FOUND 127

static const char usage[] =
    "usage: lazyprobe run [-c COLLECTORS] [-o DIR] [OPTIONS] -- PROGRAM ARGS...\n"
    "       lazyprobe attach [-c COLLECTORS] [-o DIR] [OPTIONS] [--duration SECONDS] PID\n"
    "       lazyprobe report [-c COLLECTORS] [--pid PID,...] DIR|FILE\n"
    "       OPTIONS: --atomic --stats --no-stubs --include MODULE[:FUNCTION] --exclude MODULE[:FUNCTION]\n"
    "       lazyprobe collectors\n";

static int fail(int code) {
  fprintf(stderr, "lazyprobe: %s\n", lp_error());
  return code;
}

static int usage_error(const char *what) {
  fprintf(stderr, "lazyprobe: %s\n%s", what, usage);
  return EXIT_USAGE;
}

/* {=== output directory ===*/

static bool is_counters_name(const char *name) {
  size_t n = strlen(name);
  return strncmp(name, "lazyprobe.", 10) == 0 && n > 19 && strcmp(name + n - 9, ".counters") == 0;
}

/* Creates DIR if needed, checks that files can be made in it, and removes the
 * counters files of an earlier run so that DIR describes this run only. */
static lp_status prepare_outdir(const char *dir, int *fd_out) {
  if (mkdir(dir, 0755) != 0 && errno != EEXIST) return lp_fail("cannot create %s: %s", dir, strerror(errno));
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return lp_fail("cannot open %s: %s", dir, strerror(errno));
  int probe = openat(fd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
  if (probe < 0 && errno != EOPNOTSUPP && errno != EISDIR) {
    int e = errno;
    close(fd);
    return lp_fail("cannot write to %s: %s", dir, strerror(e));
  }
  if (probe >= 0) close(probe);
  DIR *d = fdopendir(dup(fd));
  for (struct dirent *e; d && (e = readdir(d));)
    if (is_counters_name(e->d_name)) unlinkat(fd, e->d_name, 0);
  if (d) closedir(d);
  *fd_out = fd;
  return LP_OK;
}

/* }=== */

/* {=== reports ===*/

/* Is NAME (lazyprobe.PID[.IMAGE].counters) in the PIDS list (NULL: all)? */
static bool wanted(const char *name, const char *pids) {
  if (!pids) return true;
  long pid = strtol(name + 10, NULL, 10);
  for (const char *p = pids; *p;) {
    char *end;
    long one = strtol(p, &end, 10);
    if (end == p) break;
    if (one == pid) return true;
    p = *end == ',' ? end + 1 : end;
  }
  return false;
}

/* Runs the collectors' reports over the counters files of DIR (those of the
 * processes in PIDS, or all), or over the single file TARGET.  The process
 * ends after it without closing the Lua state, as Lua's os.exit does without
 * its close argument: lua_close freed the run table one object at a time
 * (25 M instructions after gcc -c's report, its 47 724 functions), memory
 * the process's end gives back at once.  A collector's __gc metamethods do
 * not run at the end; the C library flushes the files io.open opened. */
static int report(lp_lua *lua, const char *target, const char *pids) {
  struct stat st;
  if (stat(target, &st) != 0) {
    lp_fail("%s: %s", target, strerror(errno));
    return fail(EXIT_FAILED);
  }
  char **paths = NULL;
  size_t n = 0, cap = 0;
  if (S_ISDIR(st.st_mode)) {
    DIR *d = opendir(target);
    for (struct dirent *e; d && (e = readdir(d));) {
      if (!is_counters_name(e->d_name) || !wanted(e->d_name, pids)) continue;
      if (n == cap) {
        cap = cap ? 2 * cap : 64;
        char **grown = realloc(paths, cap * sizeof *paths);
        if (!grown) break;
        paths = grown;
      }
      if (asprintf(&paths[n], "%s/%s", target, e->d_name) >= 0) n++;
    }
    if (d) closedir(d);
    if (n == 0) {
      lp_fail("%s: no counters files (lazyprobe.*.counters)%s in it", target, pids ? " of those processes" : "");
      free(paths);
      return fail(EXIT_FAILED);
    }
  } else {
    paths = malloc(sizeof *paths);
    if (paths && (paths[0] = strdup(target))) n = 1;
  }
  shm_counters *files = calloc(n + 1, sizeof *files);
  int code = files ? 0 : (lp_fail("out of memory"), fail(EXIT_FAILED));
  size_t opened = 0;
  for (; !code && opened < n; opened++)
    if (shm_counters_open(paths[opened], &files[opened]) != LP_OK) code = fail(EXIT_FAILED);
  int failures = 0;
  if (!code) lp_lua_report(lua, files, n, &failures);
  if (!code && failures) code = EXIT_COLLECTOR_FAILED;
  for (size_t i = 0; i < opened; i++) shm_counters_close(&files[i]);
  for (size_t i = 0; i < n; i++) free(paths[i]);
  free(paths);
  free(files);
  return code;
}

/* }=== */

/* {=== run and attach ===*/

static core_session *volatile running; /* volatile: set before the early signal is looked at, as written */
static lp_lua *sampling;
static bool attached;
static volatile sig_atomic_t early; /* a signal while the session started: acted on once it runs */

static void sample_live(void *ctx) {
  (void)ctx;
  if (!running || !sampling) return;
  shm_counters *files;
  size_t n = core_session_live_files(running, &files);
  lp_lua_sample(sampling, files, n);
  free(files);
}

static void on_signal(int sig, siginfo_t *si, void *ctx) {
  (void)ctx;
  bool from_terminal = si->si_code == SI_KERNEL; /* which the program got too */
  if (!running) {
    if (attached || !from_terminal) early = sig;
    return;
  }
  /* Ctrl-C or --duration, or a signal once the program has ended, whose
   * children outlive it: let them go on */
  if (attached || core_session_main_ended(running)) core_session_detach(running);
  else if (!from_terminal) core_session_forward_signal(running, sig);
}

/* What a signal that came while S was starting asks (on_signal). */
static void act_on_early_signal(core_session *s) {
  if (!early) return;
  if (attached) core_session_detach(s);
  else core_session_forward_signal(s, early);
}

/* A signal ignored when lazyprobe started stays ignored, in lazyprobe and in
 * the program it launches (which inherits it across exec, as natively):
 * `nohup lazyprobe run ...`, a shell's background job (SIGINT, SIGQUIT). */
static void handle_signals(void) {
  struct sigaction sa = {0};
  sa.sa_sigaction = on_signal;
  sa.sa_flags = SA_SIGINFO; /* no SA_RESTART: the session's wait sees EINTR */
  sigemptyset(&sa.sa_mask);
  int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
    struct sigaction old;
    if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    sigaction(sigs[i], &sa, NULL);
  }
}

typedef struct run_args {
  const char *collectors, *outdir;
  bool atomic, stats, no_stubs;
  unsigned duration;
  core_rule *rules;
  size_t nrules;
} run_args;

/* Parses the options run and attach share; returns optind or -1. */
static int parse_run_args(int argc, char **argv, bool attach, run_args *a) {
  static const struct option longopts[] = {{"atomic", no_argument, 0, 'A'},   {"stats", no_argument, 0, 'S'},
                                           {"include", required_argument, 0, 'I'},
                                           {"exclude", required_argument, 0, 'X'},
                                           {"duration", required_argument, 0, 'D'},
                                           {"no-stubs", no_argument, 0, 'N'},       {0, 0, 0, 0}};
  *a = (run_args){"calls", "lazyprobe-out", false, false, false, 0, NULL, 0};
  int c;
  optind = 1;
  while ((c = getopt_long(argc, argv, "+c:o:", longopts, NULL)) != -1) {
    switch (c) {
    case 'c': a->collectors = optarg; break;
    case 'o': a->outdir = optarg; break;
    case 'A': a->atomic = true; break;
    case 'S': a->stats = true; break;
    case 'N': a->no_stubs = true; break;
    case 'D': {
      char *end;
      long v = strtol(optarg, &end, 10);
      if (!attach || *end || v <= 0) return -1;
      a->duration = (unsigned)v;
      break;
    }
    case 'I':
    case 'X': {
      core_rule *grown = realloc(a->rules, (a->nrules + 1) * sizeof *grown);
      if (!grown) return -1;
      a->rules = grown;
      if (!core_rule_parse(optarg, c == 'I', &a->rules[a->nrules])) return -1;
      a->nrules++;
      break;
    }
    default: return -1;
    }
  }
  return optind;
}

static void free_rules(run_args *a) {
  for (size_t i = 0; i < a->nrules; i++) core_rule_free(&a->rules[i]);
  free(a->rules);
}

/* The system part of WHO's CPU time (RUSAGE_SELF or RUSAGE_CHILDREN) in *SYS,
 * both parts returned, in µs. */
static unsigned long long cpu_us(int who, unsigned long long *sys) {
  struct rusage ru;
  *sys = 0;
  if (getrusage(who, &ru) != 0) return 0;
  *sys = (unsigned long long)ru.ru_stime.tv_sec * 1000000u + (unsigned long long)ru.ru_stime.tv_usec;
  return (unsigned long long)ru.ru_utime.tv_sec * 1000000u + (unsigned long long)ru.ru_utime.tv_usec + *sys;
}

/* Where the CPU time went: lazyprobe while the program ran, the program (and
 * the children it waited for: RUSAGE_CHILDREN, so 0 under attach), the report;
 * of lazyprobe's, the part spent in the kernel (system calls into the target,
 * ptrace stops, page faults), which a virtual machine's host can make dear. */
typedef struct cpu_split {
  unsigned long long tracer_us, program_us, report_us;
  unsigned long long tracer_sys_us, report_sys_us;
} cpu_split;

static void print_stats(const core_session_stats *k, const cpu_split *cpu) {
  fprintf(stderr,
          "lazyprobe: stats: startup_us=%llu functions=%llu instrumented=%llu eager=%llu native=%llu "
          "trapped_calls=%llu trap_hits=%llu stub_hits=%llu instrument_us=%llu cover_removed=%llu sweep_us=%llu processes=%llu modules=%llu adopted=%llu "
          "plt_redirected=%llu retreed=%llu stripped=%llu second_us=%llu plans_reused=%llu homed=%llu home_hits=%llu marked=%llu went_on=%llu parts_linked=%llu tracer_cpu_us=%llu program_cpu_us=%llu "
          "report_cpu_us=%llu tracer_sys_us=%llu report_sys_us=%llu threaded=%llu\n",
          (unsigned long long)k->startup_us, (unsigned long long)k->functions, (unsigned long long)k->instrumented,
          (unsigned long long)k->eager, (unsigned long long)k->native, (unsigned long long)k->trapped_calls,
          (unsigned long long)k->trap_hits, (unsigned long long)k->stub_hits,
          (unsigned long long)(k->instrument_ns / 1000), (unsigned long long)k->cover_removed,
          (unsigned long long)(k->sweep_ns / 1000),
          (unsigned long long)k->processes, (unsigned long long)k->modules, (unsigned long long)k->adopted,
          (unsigned long long)k->plt_redirected, (unsigned long long)k->retreed, (unsigned long long)k->stripped,
          (unsigned long long)(k->second_ns / 1000), (unsigned long long)k->plans_reused, (unsigned long long)k->homed,
          (unsigned long long)k->home_hits, (unsigned long long)k->marked, (unsigned long long)k->went_on,
          (unsigned long long)k->parts_linked, cpu->tracer_us, cpu->program_us, cpu->report_us,
          cpu->tracer_sys_us, cpu->report_sys_us, (unsigned long long)k->threaded);
}

/* Counts, not marks, without --atomic in a process that ran several threads:
 * two threads that update one counter at once can lose an increment (4
 * threads calling one function 100 000 times each counted 257 407 calls,
 * docs/COMPAT.md), and arcs may then not conserve flow.  Said once. */
static void warn_threads(const core_session_stats *k, uint32_t probes, bool atomic) {
  bool counts = ((probes & SHM_PROBE_ENTRY) && !(probes & SHM_PROBE_ENTRY_COVER)) ||
                (probes & (SHM_PROBE_BLOCKS_COUNT | SHM_PROBE_ARCS | SHM_PROBE_CALLS));
  if (!k->threaded || !counts || atomic) return;
  fprintf(stderr,
          "lazyprobe: without --atomic, counts taken at once by several threads may lose increments: "
          "%llu process%s ran several threads\n",
          (unsigned long long)k->threaded, k->threaded == 1 ? "" : "es");
}

/* Runs PROGRAM (argv[0] of PROG_ARGV) or attaches to PID, then reports. */
static int instrument(run_args *a, char *program, char *const *prog_argv, pid_t pid) {
  lp_lua *lua;
  int dirfd = -1;
  lp_lua_options lo = {a->outdir, -1, true};
  if (prepare_outdir(a->outdir, &dirfd) != LP_OK) return fail(EXIT_FAILED);
  lo.outdir_fd = dirfd;
  if (lp_lua_new(&lo, &lua) != LP_OK || lp_lua_load(lua, a->collectors) != LP_OK) return fail(EXIT_FAILED);

  uint32_t probes;
  if (lp_lua_probes(lua, &probes) != LP_OK) return fail(EXIT_FAILED);
  core_session_options so = {.program = program,
                             .argv = prog_argv,
                             .attach = pid,
                             .outdir_fd = dirfd,
                             .outdir = a->outdir,
                             .atomic = a->atomic,
                             .no_stubs = a->no_stubs,
                             .probes = probes,
                             .select = {a->rules, a->nrules},
                             .duration_ms = a->duration * 1000,
                             .tick_ms = lp_lua_interval(lua),
                             .tick = sample_live};
  sampling = lua;
  attached = pid != 0;
  handle_signals();
  core_session *s;
  if (core_session_start(&so, &s) != LP_OK) return fail(EXIT_FAILED);
  running = s;
  act_on_early_signal(s);
  int status = 0;
  lp_status st = core_session_run(s, &status);
  running = NULL;
  if (st != LP_OK) fprintf(stderr, "lazyprobe: %s\n", lp_error());
  core_session_stats stats = *core_session_get_stats(s);
  core_session_free(s);
  cpu_split cpu;
  unsigned long long unused, sys_after;
  cpu.tracer_us = cpu_us(RUSAGE_SELF, &cpu.tracer_sys_us);
  cpu.program_us = cpu_us(RUSAGE_CHILDREN, &unused);

  int code = report(lua, a->outdir, NULL); /* a collector's error was said; the status stays the program's */
  /* LUA is not freed: the process ends now (report) */
  cpu.report_us = cpu_us(RUSAGE_SELF, &sys_after) - cpu.tracer_us;
  cpu.report_sys_us = sys_after - cpu.tracer_sys_us;
  warn_threads(&stats, probes, a->atomic);
  if (a->stats) print_stats(&stats, &cpu);
  if (st != LP_OK || code == EXIT_FAILED) return EXIT_FAILED;
  if (pid) return 0;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int cmd_run(int argc, char **argv) {
  run_args a;
  int first = parse_run_args(argc, argv, false, &a);
  if (first < 0) return usage_error("bad option for run");
  if (first >= argc) return usage_error("run needs a program");
  char *program;
  if (core_resolve_program(argv[first], &program) != LP_OK) /* as a shell: a command not in PATH is not found */
    return fail(strchr(argv[first], '/') && access(argv[first], F_OK) == 0 ? EXIT_NOT_EXECUTABLE : EXIT_NOT_FOUND);
  int code = instrument(&a, program, argv + first, 0);
  free(program);
  free_rules(&a);
  return code;
}

static int cmd_attach(int argc, char **argv) {
  run_args a;
  int first = parse_run_args(argc, argv, true, &a);
  if (first < 0) return usage_error("bad option for attach");
  if (first != argc - 1) return usage_error("attach needs one PID");
  char *end;
  long pid = strtol(argv[first], &end, 10);
  if (*end || pid <= 0) return usage_error("attach needs a process id");
  if (kill((pid_t)pid, 0) != 0 && errno == ESRCH) {
    lp_fail("no process %ld", pid);
    return fail(EXIT_FAILED);
  }
  int code = instrument(&a, NULL, NULL, (pid_t)pid);
  free_rules(&a);
  return code;
}

/* }=== */

/* {=== report ===*/

static int cmd_report(int argc, char **argv) {
  const char *collectors = "calls", *pids = NULL;
  static const struct option longopts[] = {{"pid", required_argument, 0, 'P'}, {0, 0, 0, 0}};
  int c;
  optind = 1;
  while ((c = getopt_long(argc, argv, "+c:", longopts, NULL)) != -1) {
    if (c == 'c') collectors = optarg;
    else if (c == 'P') pids = optarg;
    else return usage_error("bad option for report");
  }
  if (optind != argc - 1) return usage_error("report needs one DIR or FILE");
  const char *target = argv[optind];
  struct stat st;
  if (stat(target, &st) != 0) {
    lp_fail("%s: %s", target, strerror(errno));
    return fail(EXIT_FAILED);
  }
  char *dir;
  if (S_ISDIR(st.st_mode)) {
    dir = strdup(target);
  } else {
    const char *slash = strrchr(target, '/');
    dir = slash ? strndup(target, (size_t)(slash - target) + (slash == target)) : strdup(".");
  }
  int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  lp_lua *lua = NULL;
  lp_lua_options lo = {dir, dirfd, false};
  int code = 0;
  if (dirfd < 0) code = (lp_fail("%s: %s", dir, strerror(errno)), fail(EXIT_FAILED));
  if (!code && (lp_lua_new(&lo, &lua) != LP_OK || lp_lua_load(lua, collectors) != LP_OK))
    code = fail(EXIT_FAILED);
  if (!code) code = report(lua, target, pids);
  if (code == EXIT_COLLECTOR_FAILED) code = EXIT_FAILED;
  /* LUA is not freed: the process ends now (report) */
  if (dirfd >= 0) close(dirfd);
  free(dir);
  return code;
}

/* }=== */

static int cmd_collectors(void) {
  lp_lua *lua;
  lp_lua_options lo = {NULL, -1, false};
  if (lp_lua_new(&lo, &lua) != LP_OK || lp_lua_list(lua) != LP_OK) return fail(EXIT_FAILED);
  lp_lua_free(lua);
  return 0;
}

/* lazyprobe's heap on transparent huge pages.  Its memory is a few tens of
 * MB of plans, tables and the reports' arrays, touched once or twice each, and
 * every 4 KB page touched first costs a page fault: 10-15 us each on this
 * project's virtual machines (docs/PERFORMANCE.md, session 19), a third of
 * sqlite's report and a fifth of its tracer.  The heap is grown by HEAP_PAD at
 * once (glibc's top pad), then advised as huge pages: one fault per 2 MB.
 * Below the heap's first 2 MB boundary no huge page fits (the heap starts
 * anywhere): one block that nothing touches takes that part, so that what is
 * used lies above it.  Blocks up to 64 MB come from the heap too, and freed
 * memory is kept for the next function's plan rather than given back and
 * faulted in again.  Growth beyond the pad is on small pages.  Under a data
 * or address space limit short of LIMITED_BELOW (ulimit -d, -v), or when
 * the pad cannot be had, the heap grows as glibc grows it: a pad it cannot
 * have would fail every malloc. */
#define HEAP_PAD (128 << 20)
#define HUGE_PAGE (2 << 20)
#define LIMITED_BELOW (8 * (rlim_t)HEAP_PAD)
#define DEFAULT_TOP_PAD (128 << 10) /* glibc's */

static void *volatile below_huge_pages; /* the block under the first 2 MB boundary, never used
                                         (volatile: gcc removes a malloc whose result is never read) */

static bool limited(int resource) {
  struct rlimit r;
  return getrlimit(resource, &r) == 0 && r.rlim_cur != RLIM_INFINITY && r.rlim_cur < LIMITED_BELOW;
}

static void heap_on_huge_pages(void) {
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, INT_MAX);
  if (limited(RLIMIT_DATA) || limited(RLIMIT_AS)) return;
  mallopt(M_TOP_PAD, HEAP_PAD);
  void *first = malloc(1); /* grows the heap by the pad */
  if (!first) { /* no room for the pad (strict overcommit, say): glibc's own */
    mallopt(M_TOP_PAD, DEFAULT_TOP_PAD);
    return;
  }
  uintptr_t at = (uintptr_t)first, end = (uintptr_t)sbrk(0);
  uintptr_t from = (at + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
  if (end > from && madvise((void *)from, end - from, MADV_HUGEPAGE) == 0 && from - at > 64)
    below_huge_pages = malloc(from - at - 64); /* its end lands just below FROM */
  free(first);
}

int main(int argc, char **argv) {
  heap_on_huge_pages();
  if (argc < 2) {
    fputs(usage, stderr);
    return EXIT_USAGE;
  }
  const char *cmd = argv[1];
  if (!strcmp(cmd, "run")) return cmd_run(argc - 1, argv + 1);
  if (!strcmp(cmd, "attach")) return cmd_attach(argc - 1, argv + 1);
  if (!strcmp(cmd, "report")) return cmd_report(argc - 1, argv + 1);
  if (!strcmp(cmd, "collectors")) return cmd_collectors();
  if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
    fputs(usage, stdout);
    return 0;
  }
  return usage_error("unknown command");
}
