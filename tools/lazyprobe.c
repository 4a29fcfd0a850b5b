/* lazyprobe.c — the command line: parses options and calls the library.
 *
 *   lazyprobe run [-c COLLECTORS] [-o DIR] [--atomic] [--stats] -- PROGRAM ARGS...
 *   lazyprobe report [-c COLLECTORS] DIR|FILE
 *   lazyprobe collectors
 *
 * Exit status of `run` is the program's (128+N if signal N killed it); when
 * lazyprobe itself cannot do its job: 127 program not found, 126 not
 * executable, 125 anything else, 2 bad usage. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
#define EXIT_NOT_EXECUTABLE 126
#define EXIT_NOT_FOUND 127

static const char usage[] =
    "usage: lazyprobe run [-c COLLECTORS] [-o DIR] [--atomic] [--stats] -- PROGRAM ARGS...\n"
    "       lazyprobe report [-c COLLECTORS] DIR|FILE\n"
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

/* {=== run ===*/

static core_session *running;
static lp_lua *sampling;

static void sample_live(void *ctx) {
  (void)ctx;
  if (running && sampling) lp_lua_sample(sampling, core_session_counters(running), 1);
}

static void forward(int sig, siginfo_t *si, void *ctx) {
  (void)ctx;
  /* the terminal already sent it to the whole foreground group */
  if (running && si->si_code != SI_KERNEL) core_session_forward_signal(running, sig);
}

static void forward_signals(void) {
  struct sigaction sa = {0};
  sa.sa_sigaction = forward;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) sigaction(sigs[i], &sa, NULL);
}

static int cmd_run(int argc, char **argv) {
  const char *collectors = "calls", *outdir = "lazyprobe-out";
  bool atomic = false, stats = false;
  static const struct option longopts[] = {{"atomic", no_argument, 0, 'A'},
                                           {"stats", no_argument, 0, 'S'},
                                           {0, 0, 0, 0}};
  int c;
  optind = 1;
  while ((c = getopt_long(argc, argv, "+c:o:", longopts, NULL)) != -1) {
    switch (c) {
    case 'c': collectors = optarg; break;
    case 'o': outdir = optarg; break;
    case 'A': atomic = true; break;
    case 'S': stats = true; break;
    default: return usage_error("bad option for run");
    }
  }
  if (optind >= argc) return usage_error("run needs a program");

  char *program;
  if (core_resolve_program(argv[optind], &program) != LP_OK)
    return fail(access(argv[optind], F_OK) == 0 || strchr(argv[optind], '/') == NULL ? EXIT_NOT_EXECUTABLE
                                                                                     : EXIT_NOT_FOUND);
  lp_lua *lua;
  int dirfd = -1;
  lp_lua_options lo = {outdir, -1, true};
  if (prepare_outdir(outdir, &dirfd) != LP_OK) return fail(EXIT_FAILED);
  lo.outdir_fd = dirfd;
  if (lp_lua_new(&lo, &lua) != LP_OK || lp_lua_load(lua, collectors) != LP_OK) return fail(EXIT_FAILED);

  uint32_t probes;
  if (lp_lua_probes(lua, &probes) != LP_OK) return fail(EXIT_FAILED);
  core_session_options so = {program, argv + optind, dirfd, outdir, atomic, probes,
                             lp_lua_interval(lua), sample_live, NULL};
  sampling = lua;
  core_session *s;
  if (core_session_start(&so, &s) != LP_OK) return fail(EXIT_FAILED);
  running = s;
  forward_signals();
  int status = 0;
  lp_status st = core_session_run(s, &status);
  running = NULL;
  if (st != LP_OK) fprintf(stderr, "lazyprobe: %s\n", lp_error());

  int failures;
  lp_lua_report(lua, core_session_counters(s), 1, &failures);
  if (stats) {
    const core_session_stats *k = core_session_get_stats(s);
    fprintf(stderr,
            "lazyprobe: stats: startup_us=%llu functions=%llu instrumented=%llu eager=%llu native=%llu "
            "trapped_calls=%llu instrument_us=%llu cover_removed=%llu\n",
            (unsigned long long)k->startup_us, (unsigned long long)k->functions,
            (unsigned long long)k->instrumented, (unsigned long long)k->eager, (unsigned long long)k->native,
            (unsigned long long)k->trapped_calls, (unsigned long long)(k->instrument_ns / 1000),
            (unsigned long long)k->cover_removed);
  }
  core_session_free(s);
  lp_lua_free(lua);
  free(program);
  if (st != LP_OK) return EXIT_FAILED;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* }=== */

/* {=== report ===*/

static int cmd_report(int argc, char **argv) {
  const char *collectors = "calls";
  int c;
  optind = 1;
  while ((c = getopt(argc, argv, "+c:")) != -1) {
    if (c == 'c') collectors = optarg;
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
  char *paths[256];
  size_t n = 0;
  if (S_ISDIR(st.st_mode)) {
    dir = strdup(target);
    DIR *d = opendir(target);
    for (struct dirent *e; d && (e = readdir(d)) && n < 256;)
      if (is_counters_name(e->d_name) && asprintf(&paths[n], "%s/%s", target, e->d_name) >= 0) n++;
    if (d) closedir(d);
    if (n == 0) {
      lp_fail("%s: no counters files (lazyprobe.*.counters) in it", target);
      free(dir);
      return fail(EXIT_FAILED);
    }
  } else {
    const char *slash = strrchr(target, '/');
    dir = slash ? strndup(target, (size_t)(slash - target) + (slash == target)) : strdup(".");
    paths[n++] = strdup(target);
  }

  shm_counters files[256];
  int code = 0;
  for (size_t i = 0; i < n && !code; i++)
    if (shm_counters_open(paths[i], &files[i]) != LP_OK) {
      code = fail(EXIT_FAILED);
      n = i;
    }
  int dirfd = code ? -1 : open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  lp_lua *lua = NULL;
  lp_lua_options lo = {dir, dirfd, false};
  if (!code && dirfd < 0) code = (lp_fail("%s: %s", dir, strerror(errno)), fail(EXIT_FAILED));
  if (!code && (lp_lua_new(&lo, &lua) != LP_OK || lp_lua_load(lua, collectors) != LP_OK))
    code = fail(EXIT_FAILED);
  int failures = 0;
  if (!code) lp_lua_report(lua, files, n, &failures);
  if (!code && failures) code = EXIT_FAILED;
  lp_lua_free(lua);
  for (size_t i = 0; i < n; i++) shm_counters_close(&files[i]);
  for (size_t i = 0; i < n; i++) free(paths[i]);
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

int main(int argc, char **argv) {
  if (argc < 2) {
    fputs(usage, stderr);
    return EXIT_USAGE;
  }
  const char *cmd = argv[1];
  if (!strcmp(cmd, "run")) return cmd_run(argc - 1, argv + 1);
  if (!strcmp(cmd, "report")) return cmd_report(argc - 1, argv + 1);
  if (!strcmp(cmd, "collectors")) return cmd_collectors();
  if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
    fputs(usage, stdout);
    return 0;
  }
  return usage_error("unknown command");
}
