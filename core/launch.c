/* launch.c — program lookup (a script: its #! interpreter), a child made by
 * vfork from a helper thread, PTRACE_SEIZE, exec, and a temporary break at
 * AT_ENTRY. */
#include "launch.h"

#include <elf.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "target.h"

static lp_status check_executable(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0) return lp_fail("%s: %s", path, strerror(errno));
  if (!S_ISREG(st.st_mode)) return lp_fail("%s: not a regular file", path);
  if (access(path, X_OK) != 0) return lp_fail("%s: not executable: %s", path, strerror(errno));
  return LP_OK;
}

lp_status core_resolve_program(const char *name, char **path) {
  if (!*name) return lp_fail("empty program name");
  if (strchr(name, '/')) {
    LP_CHECK(check_executable(name));
    *path = strdup(name);
    return *path ? LP_OK : lp_fail("out of memory");
  }
  const char *dirs = getenv("PATH");
  if (!dirs) dirs = "/usr/local/bin:/usr/bin:/bin";
  for (const char *p = dirs;;) {
    const char *end = strchr(p, ':');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    char *candidate;
    if (asprintf(&candidate, "%.*s/%s", (int)len, len ? p : ".", name) < 0)
      return lp_fail("out of memory");
    if (access(candidate, X_OK) == 0) {
      struct stat st;
      if (stat(candidate, &st) == 0 && S_ISREG(st.st_mode)) {
        *path = candidate;
        return LP_OK;
      }
    }
    free(candidate);
    if (!end) break;
    p = end + 1;
  }
  return lp_fail("%s: command not found", name);
}

/* Waits for the next stop or end of PID; fails if it ended. */
static lp_status wait_stop(pid_t pid, int *status) {
  for (;;) {
    if (waitpid(pid, status, __WALL) == pid) break;
    if (errno != EINTR) return lp_fail("waitpid %d: %s", (int)pid, strerror(errno));
  }
  if (WIFEXITED(*status))
    return lp_fail("program exited with status %d before it started", WEXITSTATUS(*status));
  if (WIFSIGNALED(*status))
    return lp_fail("program was killed by signal %d before it started", WTERMSIG(*status));
  return LP_OK;
}

lp_status core_program_image(const char *path, char *image, size_t size) {
  if (strlen(path) >= size) return lp_fail("%s: path too long", path);
  strcpy(image, path);
  for (int level = 0; level < 5; level++) {
    char line[256];
    int fd = open(image, O_RDONLY | O_CLOEXEC);
    if (fd < 0 && level == 0) return lp_fail("%s: %s", image, strerror(errno));
    if (fd < 0) return lp_fail("%s: its interpreter: %s: %s", path, image, strerror(errno));
    ssize_t n = read(fd, line, sizeof line - 1);
    close(fd);
    if (n < 2 || line[0] != '#' || line[1] != '!') return LP_OK; /* not a script: the file itself */
    if (level == 4) return lp_fail("%s: scripts nested too deep", path);
    line[n] = '\0';
    char *start = line + 2 + strspn(line + 2, " \t");
    size_t len = strcspn(start, " \t\n");
    if (!len) return lp_fail("%s: a \"#!\" line without an interpreter", image);
    if (len >= size) return lp_fail("%s: interpreter path too long", image);
    memmove(image, start, len);
    image[len] = '\0';
  }
  return LP_OK;
}

/* What the child of core_launch is given.  Until its exec it shares
 * lazyprobe's memory and the stack of the thread that made it (vfork). */
typedef struct child_args {
  const char *path;
  char *const *argv;
  int go;        /* the go pipe's read end: a byte once the child is seized */
  int err;       /* the error pipe's write end: the child's pid (or -errno: no
                    child), then errno should its exec fail */
  int go_write, err_read; /* the other ends, which the child closes: should
                             lazyprobe end before the byte, its read ends */
  sigset_t mask; /* the signal mask to exec with */
} child_args;

/* The child: says its pid, waits until it is seized, then execs; only system
 * calls (its signals are blocked until the exec: no handler runs on memory it
 * shares). */
static _Noreturn void run_child(const child_args *a) {
  pid_t self = getpid();
  char c;
  close(a->go_write);
  close(a->err_read);
  if (write(a->err, &self, sizeof self) != (ssize_t)sizeof self) _exit(127);
  while (read(a->go, &c, 1) < 0 && errno == EINTR) continue;
  sigprocmask(SIG_SETMASK, &a->mask, NULL);
  execv(a->path, a->argv);
  int e = errno;
  if (write(a->err, &e, sizeof e) < 0) _exit(127);
  _exit(127);
}

/* A helper thread makes the child with vfork, which suspends only that
 * thread until the child's exec while lazyprobe's main thread seizes it.  A
 * fork would copy lazyprobe's page tables and leave every page it wrote
 * read-only until its next write faults: ~2 ms a run on virtual machines
 * whose page tables the host shadows (docs/PERFORMANCE.md, session 29).
 * (Under valgrind, vfork is a fork.) */
static void *spawner(void *arg) {
  const child_args *a = arg;
  pid_t pid = vfork();
  if (pid == 0) run_child(a);
  if (pid < 0) {
    int no = -errno;
    if (write(a->err, &no, sizeof no) < 0) return NULL;
  }
  return NULL;
}

/* Starts the helper thread (all signals blocked: the child inherits that);
 * *CHILD gets the child's pid.  Fails when there is no child. */
static lp_status start_child(child_args *a, int err_read, pthread_t *helper, pid_t *child) {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &a->mask);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 64 * 1024);
  int e = pthread_create(helper, &attr, spawner, a);
  pthread_attr_destroy(&attr);
  pthread_sigmask(SIG_SETMASK, &a->mask, NULL);
  if (e) return lp_fail("cannot start a thread: %s", strerror(e));
  int said = 0;
  ssize_t n;
  while ((n = read(err_read, &said, sizeof said)) < 0 && errno == EINTR) continue;
  if (n != (ssize_t)sizeof said || said <= 0) {
    pthread_join(*helper, NULL);
    return lp_fail("vfork: %s", n == (ssize_t)sizeof said ? strerror(-said) : "no child");
  }
  *child = said;
  return LP_OK;
}

lp_status core_launch(const char *path, char *const argv[], pid_t *pid_out, uint64_t *entry_out) {
  int go[2], err[2];
  if (pipe2(go, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0)
    return lp_fail("pipe: %s", strerror(errno));
  child_args a = {.path = path, .argv = argv, .go = go[0], .err = err[1], .go_write = go[1], .err_read = err[0]};
  pthread_t helper;
  pid_t pid = 0;
  if (start_child(&a, err[0], &helper, &pid) != LP_OK) {
    close(go[0]), close(go[1]), close(err[0]), close(err[1]);
    return LP_ERR;
  }
  close(go[0]);
  close(err[1]);
  lp_status st = LP_OK;
  if (ptrace(PTRACE_SEIZE, pid, 0, CORE_PTRACE_OPTIONS) != 0)
    st = lp_fail("cannot trace process %d: %s", (int)pid, strerror(errno));
  if (write(go[1], "g", 1) != 1 && st == LP_OK) st = lp_fail("cannot start the program");
  close(go[1]);
  if (st != LP_OK) {
    kill(pid, SIGKILL);
    waitpid(pid, NULL, __WALL);
    pthread_join(helper, NULL);
    close(err[0]);
    return st;
  }

  int status, e = 0;
  st = wait_stop(pid, &status);
  pthread_join(helper, NULL); /* the child has exec'd or ended: vfork has returned */
  if (st != LP_OK) {
    if (read(err[0], &e, sizeof e) == sizeof e) st = lp_fail("cannot run %s: %s", path, strerror(e));
    close(err[0]);
    return st;
  }
  close(err[0]);
  if ((status >> 8) != (SIGTRAP | (PTRACE_EVENT_EXEC << 8))) {
    kill(pid, SIGKILL);
    waitpid(pid, NULL, __WALL);
    return lp_fail("unexpected stop 0x%x before exec", status);
  }

  /* Run the dynamic loader up to the program's entry with a temporary break. */
  core_target t;
  uint64_t entry;
  uint8_t orig, brk = 0xcc;
  struct user_regs_struct regs;
  if ((st = core_auxv_get(pid, AT_ENTRY, &entry)) != LP_OK || (st = core_target_open(pid, &t)) != LP_OK)
    goto fail;
  if ((st = core_mem_read(&t, entry, &orig, 1)) == LP_OK) st = core_mem_write(&t, entry, &brk, 1);
  int sig = 0;
  while (st == LP_OK) {
    if (ptrace(PTRACE_CONT, pid, 0, sig) != 0) {
      st = lp_fail("ptrace continue: %s", strerror(errno));
      break;
    }
    if ((st = wait_stop(pid, &status)) != LP_OK) break;
    sig = (status >> 16) ? 0 : WSTOPSIG(status);
    if (sig != SIGTRAP) continue; /* the loader's own signals pass through */
    if ((st = core_regs_get(pid, &regs)) != LP_OK) break;
    if (regs.rip != entry + 1) continue;
    regs.rip = entry;
    if ((st = core_mem_write(&t, entry, &orig, 1)) == LP_OK) st = core_regs_set(pid, &regs);
    break;
  }
  core_target_close(&t);
  if (st == LP_OK) {
    *pid_out = pid;
    *entry_out = entry;
    return LP_OK;
  }
fail:
  kill(pid, SIGKILL);
  waitpid(pid, NULL, __WALL);
  return st;
}
