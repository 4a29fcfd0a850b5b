/* target.c — memory, registers, maps, remote system calls and function calls of a traced process. */
#include "target.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

lp_status core_target_open(pid_t pid, core_target *t) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
  t->pid = pid;
  t->mem_fd = open(path, O_RDWR | O_CLOEXEC);
  if (t->mem_fd < 0) return lp_fail("cannot open %s: %s", path, strerror(errno));
  return LP_OK;
}

void core_target_close(core_target *t) {
  if (t->mem_fd >= 0) close(t->mem_fd);
  t->mem_fd = -1;
}

lp_status core_mem_read(const core_target *t, uint64_t addr, void *buf, size_t n) {
  ssize_t got = pread(t->mem_fd, buf, n, (off_t)addr);
  if (got != (ssize_t)n)
    return lp_fail("cannot read %zu bytes at 0x%" PRIx64 " in process %d: %s", n, addr,
                   (int)t->pid, got < 0 ? strerror(errno) : "short read");
  return LP_OK;
}

lp_status core_mem_writev(const core_target *t, uint64_t addr, const struct iovec *iov, int n) {
  size_t want = 0;
  for (int k = 0; k < n; k++) want += iov[k].iov_len;
  ssize_t put = pwritev(t->mem_fd, iov, n, (off_t)addr);
  if (put != (ssize_t)want)
    return lp_fail("cannot write %zu bytes at 0x%" PRIx64 " in process %d: %s", want, addr, (int)t->pid,
                   put < 0 ? strerror(errno) : "short write");
  return LP_OK;
}

lp_status core_mem_write(const core_target *t, uint64_t addr, const void *buf, size_t n) {
  struct iovec one = {(void *)buf, n};
  return core_mem_writev(t, addr, &one, 1);
}

lp_status core_regs_get(pid_t tid, struct user_regs_struct *regs) {
  if (ptrace(PTRACE_GETREGS, tid, 0, regs) != 0)
    return lp_fail("cannot read registers of thread %d: %s", (int)tid, strerror(errno));
  return LP_OK;
}

lp_status core_regs_set(pid_t tid, const struct user_regs_struct *regs) {
  if (ptrace(PTRACE_SETREGS, tid, 0, regs) != 0)
    return lp_fail("cannot write registers of thread %d: %s", (int)tid, strerror(errno));
  return LP_OK;
}

lp_status core_auxv_get(pid_t pid, unsigned long type, uint64_t *value) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/auxv", (int)pid);
  FILE *f = fopen(path, "rbe");
  if (!f) return lp_fail("cannot open %s: %s", path, strerror(errno));
  Elf64_auxv_t a;
  while (fread(&a, sizeof a, 1, f) == 1 && a.a_type != AT_NULL) {
    if (a.a_type == type) {
      *value = a.a_un.a_val;
      fclose(f);
      return LP_OK;
    }
  }
  fclose(f);
  return lp_fail("%s has no entry %lu", path, type);
}

lp_status core_maps_read(pid_t pid, uint64_t heap_room, shm_range **out, size_t *n) {
  char path[64], line[512];
  snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
  FILE *f = fopen(path, "re");
  if (!f) return lp_fail("cannot open %s: %s", path, strerror(errno));
  size_t cap = 64, count = 0;
  shm_range *r = malloc(cap * sizeof *r);
  while (r && fgets(line, sizeof line, f)) {
    unsigned long long lo, hi;
    if (sscanf(line, "%llx-%llx", &lo, &hi) != 2) continue;
    if (strstr(line, "[heap]")) hi += heap_room;
    if (count == cap) {
      shm_range *bigger = realloc(r, (cap *= 2) * sizeof *r);
      if (!bigger) {
        free(r);
        r = NULL;
        break;
      }
      r = bigger;
    }
    r[count++] = (shm_range){lo, hi};
  }
  fclose(f);
  if (!r) return lp_fail("out of memory reading %s", path);
  *out = r; /* the kernel lists mappings in address order */
  *n = count;
  return LP_OK;
}

pid_t core_wait_thread(pid_t tid, int *status) {
  pid_t got;
  while ((got = waitpid(tid, status, __WALL)) < 0 && errno == EINTR) continue;
  return got;
}

/* Waits for TID's next stop, calling HOOKS->idle while it runs (20 us naps,
 * then 1 ms ones). */
static pid_t wait_serving(pid_t tid, int *status, const core_remote_hooks *hooks) {
  if (!hooks) return core_wait_thread(tid, status);
  for (unsigned naps = 0;; naps++) {
    pid_t got = waitpid(tid, status, __WALL | WNOHANG);
    if (got != 0 && !(got < 0 && errno == EINTR)) return got;
    if (hooks->idle(hooks->ctx) != LP_OK) return -1;
    struct timespec nap = {0, naps < 100 ? 20000 : 1000000};
    nanosleep(&nap, NULL);
  }
}

/* Runs TID from REGS until it traps at STOP_AT (then *out has its registers);
 * other signals are kept in *deferred, group stops and events passed over,
 * first hits served by HOOKS if any. */
static lp_status run_until(pid_t tid, const struct user_regs_struct *regs, uint64_t stop_at,
                           struct user_regs_struct *out, int *deferred, const char *what,
                           const core_remote_hooks *hooks) {
  LP_CHECK(core_regs_set(tid, regs));
  for (;;) {
    int status;
    if (ptrace(PTRACE_CONT, tid, 0, 0) != 0 || wait_serving(tid, &status, hooks) != tid)
      return lp_fail("%s in thread %d: %s", what, (int)tid, strerror(errno));
    if (WIFEXITED(status) || WIFSIGNALED(status))
      return lp_fail("process %d ended during a %s", (int)tid, what);
    if (WSTOPSIG(status) == SIGTRAP && (status >> 16) == 0) {
      LP_CHECK(core_regs_get(tid, out));
      if (out->rip == stop_at) return LP_OK;
      bool handled = false;
      if (hooks) LP_CHECK(hooks->trap(hooks->ctx, tid, &handled));
      if (handled) continue; /* a first hit at a break: on to the copy */
      return lp_fail("unexpected trap at 0x%llx during a %s", (unsigned long long)out->rip, what);
    }
    if ((status >> 16) == 0 && deferred && !*deferred) *deferred = WSTOPSIG(status);
    /* a group stop or event: just go on */
  }
}

lp_status core_remote_syscall(const core_target *t, pid_t tid, uint64_t scratch, long nr,
                              const uint64_t args[6], int64_t *ret, int *deferred) {
  static const uint8_t stub[3] = {/*syscall=*/0x0f, 0x05, /*int3=*/0xcc};
  struct user_regs_struct saved, regs;
  uint8_t orig[sizeof stub];
  LP_CHECK(core_regs_get(tid, &saved));
  LP_CHECK(core_mem_read(t, scratch, orig, sizeof orig));
  LP_CHECK(core_mem_write(t, scratch, stub, sizeof stub));

  regs = saved;
  regs.rip = scratch;
  regs.rax = (uint64_t)nr;
  regs.orig_rax = (uint64_t)-1; /* not inside a system call: no restart games */
  regs.rdi = args[0];
  regs.rsi = args[1];
  regs.rdx = args[2];
  regs.r10 = args[3];
  regs.r8 = args[4];
  regs.r9 = args[5];
  char what[48];
  snprintf(what, sizeof what, "remote system call %ld", nr);
  lp_status st = run_until(tid, &regs, scratch + sizeof stub, &regs, deferred, what, NULL);
  if (st == LP_OK) *ret = (int64_t)regs.rax;
  lp_status restore = core_mem_write(t, scratch, orig, sizeof orig);
  if (restore == LP_OK) restore = core_regs_set(tid, &saved);
  return st != LP_OK ? st : restore;
}

lp_status core_remote_call(const core_target *t, pid_t tid, uint64_t scratch, uint64_t fn,
                           const uint64_t args[6], uint64_t *ret, int *deferred, const core_remote_hooks *hooks) {
  static const uint8_t int3 = 0xcc;
  struct user_regs_struct saved, regs;
  uint8_t orig;
  LP_CHECK(core_regs_get(tid, &saved));
  LP_CHECK(core_mem_read(t, scratch, &orig, 1));
  LP_CHECK(core_mem_write(t, scratch, &int3, 1));

  regs = saved;
  uint64_t sp = ((saved.rsp - 128) & ~(uint64_t)15) - 8; /* below the red zone; +8 aligned at entry */
  lp_status st = core_mem_write(t, sp, &scratch, sizeof scratch); /* the return address */
  regs.rsp = sp;
  regs.rip = fn;
  regs.rax = 0;
  regs.orig_rax = (uint64_t)-1; /* not inside a system call: no restart games */
  regs.rdi = args[0];
  regs.rsi = args[1];
  regs.rdx = args[2];
  regs.rcx = args[3];
  regs.r8 = args[4];
  regs.r9 = args[5];
  if (st == LP_OK) st = run_until(tid, &regs, scratch + 1, &regs, deferred, "remote call", hooks);
  if (st == LP_OK) *ret = regs.rax;
  lp_status restore = core_mem_write(t, scratch, &orig, 1);
  if (restore == LP_OK) restore = core_regs_set(tid, &saved);
  return st != LP_OK ? st : restore;
}

lp_status core_push_bytes(const core_target *t, pid_t tid, const void *data, size_t len,
                          uint64_t *addr) {
  struct user_regs_struct regs;
  LP_CHECK(core_regs_get(tid, &regs));
  uint64_t at = (regs.rsp - 128 - len - 4096) & ~(uint64_t)15; /* below the red zone */
  LP_CHECK(core_mem_write(t, at, data, len));
  *addr = at;
  return LP_OK;
}
