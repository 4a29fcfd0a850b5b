/* Child processes, one mode per run (argv[1]); argv[2] is a file where each
 * process image appends "ROLE PID" (pids are not printed: stdout must equal
 * the native run's).  Counts by construction, per process image:
 *   fork   parent: main 1, before 5, p_work 11, both 2   child: c_work 7, both 3
 *   vfork  parent: main 1, before 5, p_work 4            child execs "leaf"
 *   clone  parent: main 1, before 5, p_work 6, both 1    child: c_work 9, both 4
 *          (raw syscall(SYS_clone, SIGCHLD): a fork that glibc does not see)
 *   wrapped  parent: main 1, before 5, fork_child 1, p_work 5, both 2
 *          child: c_work 8, both 1 (fork called by fork_child, which returns
 *          into main in both)
 *   deep   parent: main 1, before 5, fork_deep 1, fork_child 1, p_work 4, both 3
 *          child: c_work 6, both 2 (fork two calls deep: fork_deep calls
 *          fork_child, and both return twice)
 *   jumped parent: main 1, before 5, run_jumped 2, fork_or_jump 2, fork_child 1,
 *          p_work 2, both 1   child: c_work 5, both 2 (fork three calls deep,
 *          and the same chain left once by a longjmp from fork_or_jump: its
 *          caller's call returns twice in one call and never in the other,
 *          as bash's calls of make_child and jump_to_top_level do)
 *   forkpty  parent: main 1, before 5, p_work 7, both 2   child: c_work 4, both 5
 *          (forkpty returns twice like fork; the parent reads what the child
 *          printed on the terminal)
 *   daemon parent: main 1, before 5                     child: c_work 3, both 6
 *          (daemon returns in the child alone: the parent exits inside it)
 *   outlive  parent: main 1, before 5, p_work 1          child: c_work 2
 *          (the child, its output on /dev/null, tells the parent it has
 *          worked, then waits for a signal: it outlives its parent)
 *   spawn  parent: main 1, before 5, p_work 3            child: posix_spawn of "leaf"
 *   exec   one pid, two images: main 1, before 5, then execv of "leaf"
 *   leaf   main 1, leaf_work 13
 * A child's counts are its own: what the parent did before the fork is the
 * parent's only. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pty.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;
static const char *pidfile;
volatile long acc;

__attribute__((noipa)) void before(int i) { acc += i; }
__attribute__((noipa)) void p_work(int i) { acc += 2 * i; }
__attribute__((noipa)) void c_work(int i) { acc += 3 * i; }
__attribute__((noipa)) void both(int i) { acc ^= i; }
__attribute__((noipa)) void leaf_work(int i) { acc += i * i; }
__attribute__((noipa)) void never(void) { acc = -1; }
__attribute__((noipa)) pid_t fork_child(void) {
  acc++;
  pid_t pid = fork();
  acc--;
  return pid;
}

__attribute__((noipa)) pid_t fork_deep(void) {
  acc += 2;
  pid_t pid = fork_child();
  acc -= 2;
  return pid;
}

static jmp_buf jumped_top;

__attribute__((noipa)) pid_t fork_or_jump(int jump) {
  if (jump) longjmp(jumped_top, 1);
  return fork_child();
}

__attribute__((noipa)) pid_t run_jumped(int jump) {
  acc += 5;
  pid_t pid = fork_or_jump(jump);
  acc -= 5;
  return pid;
}

static void note(const char *role) {
  FILE *f = fopen(pidfile, "a");
  if (!f) exit(99);
  fprintf(f, "%s %d\n", role, (int)getpid());
  fclose(f);
}

static void calls(void (*fn)(int), int n) {
  for (int i = 0; i < n; i++) fn(i);
}

/* A child's part: its role noted, c_work C times, both B times. */
static void child_works(int c, int b) {
  note("child");
  calls(c_work, c);
  calls(both, b);
}

static int wait_ok(pid_t pid);

/* What a fork-like MODE does once its fork returned PID: the child works
 * (child_works C, CB), says so and exits; the parent waits for it, then
 * calls p_work P times and both PB times.  Whether all went well. */
__attribute__((noipa)) static int after_fork(const char *mode, pid_t pid, int c, int cb, int p, int pb) {
  if (pid == 0) {
    child_works(c, cb);
    printf("%s: child done\n", mode);
    exit(0);
  }
  int ok = pid > 0 && wait_ok(pid);
  calls(p_work, p);
  calls(both, pb);
  return ok;
}

static int wait_ok(pid_t pid) {
  int st;
  if (waitpid(pid, &st, 0) != pid) return 0;
  return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/* What the terminal of MASTER said until the other side closed, with its
 * carriage returns left out, into BUF (SIZE bytes); its length. */
static size_t read_terminal(int master, char *buf, size_t size) {
  size_t n = 0;
  for (;;) {
    char c;
    ssize_t got = read(master, &c, 1);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break; /* EIO: the child's side closed */
    if (c != '\r' && n + 1 < size) buf[n++] = c;
  }
  buf[n] = '\0';
  return n;
}

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  const char *mode = argv[1];
  pidfile = argv[2];
  char *leaf_argv[] = {argv[0], "leaf", argv[2], NULL};
  if (!strcmp(mode, "leaf")) {
    note("leaf");
    calls(leaf_work, 13);
    printf("leaf done\n");
    return 0;
  }
  note(!strcmp(mode, "exec") ? "exec" : "parent");
  calls(before, 5);
  printf("%s: parent starts\n", mode);
  fflush(stdout);
  int ok = 1;
  if (!strcmp(mode, "fork")) {
    ok = after_fork(mode, fork(), 7, 3, 11, 2);
  } else if (!strcmp(mode, "wrapped")) {
    ok = after_fork(mode, fork_child(), 8, 1, 5, 2);
  } else if (!strcmp(mode, "deep")) {
    ok = after_fork(mode, fork_deep(), 6, 2, 4, 3);
  } else if (!strcmp(mode, "jumped")) {
    if (!setjmp(jumped_top)) run_jumped(1);
    ok = after_fork(mode, run_jumped(0), 5, 2, 2, 1);
  } else if (!strcmp(mode, "forkpty")) {
    int master;
    pid_t pid = forkpty(&master, NULL, NULL, NULL);
    if (pid == 0) {
      child_works(4, 5);
      printf("child done\n");
      fflush(stdout);
      _exit(0);
    }
    char said[64] = "";
    if (pid > 0) read_terminal(master, said, sizeof said);
    ok = pid > 0 && wait_ok(pid) && !strcmp(said, "child done\n");
    printf("forkpty: the child's terminal said: %s", said);
    calls(p_work, 7);
    calls(both, 2);
  } else if (!strcmp(mode, "daemon")) {
    if (daemon(1, 1) != 0) return 1; /* the parent exits inside, status 0 */
    child_works(3, 6);
    printf("daemon: child done\n");
    return 0;
  } else if (!strcmp(mode, "outlive")) {
    int worked[2];
    if (pipe(worked) != 0) return 1;
    pid_t pid = fork();
    if (pid == 0) {
      int null = open("/dev/null", O_WRONLY);
      if (null < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0) _exit(1);
      close(worked[0]);
      child_works(2, 0);
      if (write(worked[1], "w", 1) != 1) _exit(1);
      for (;;) pause();
    }
    close(worked[1]);
    char c;
    ok = pid > 0 && read(worked[0], &c, 1) == 1;
    calls(p_work, 1);
  } else if (!strcmp(mode, "vfork")) {
    pid_t pid = vfork();
    if (pid == 0) {
      execv(argv[0], leaf_argv);
      _exit(127);
    }
    ok = pid > 0 && wait_ok(pid);
    calls(p_work, 4);
  } else if (!strcmp(mode, "clone")) {
    long pid = syscall(SYS_clone, (long)SIGCHLD, 0L, 0L, 0L, 0L);
    if (pid == 0) {
      child_works(9, 4);
      printf("clone: child done\n");
      fflush(stdout);
      _exit(0);
    }
    ok = pid > 0 && wait_ok((pid_t)pid);
    calls(p_work, 6);
    calls(both, 1);
  } else if (!strcmp(mode, "spawn")) {
    pid_t pid;
    ok = posix_spawn(&pid, argv[0], NULL, NULL, leaf_argv, environ) == 0 && wait_ok(pid);
    calls(p_work, 3);
  } else if (!strcmp(mode, "exec")) {
    execv(argv[0], leaf_argv);
    return 127;
  } else {
    return 2;
  }
  printf("%s: parent done ok=%d\n", mode, ok);
  return ok ? 0 : 1;
}
