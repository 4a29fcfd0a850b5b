/* target.h — one traced process seen from outside: its memory, its threads'
 * registers, its address space map and system calls run inside it.
 *
 * Memory goes through /proc/PID/mem, which also writes read-only and
 * executable pages (the kernel breaks copy-on-write for us). */
#ifndef CORE_TARGET_H
#define CORE_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/user.h>

#include "arena.h"
#include "lp_status.h"

typedef struct core_target {
  pid_t pid;
  int mem_fd;
} core_target;

lp_status core_target_open(pid_t pid, core_target *t);
void core_target_close(core_target *t);

lp_status core_mem_read(const core_target *t, uint64_t addr, void *buf, size_t n);
lp_status core_mem_write(const core_target *t, uint64_t addr, const void *buf, size_t n);
/* Writes the N buffers of IOV one after another from ADDR: one system call. */
lp_status core_mem_writev(const core_target *t, uint64_t addr, const struct iovec *iov, int n);

lp_status core_regs_get(pid_t tid, struct user_regs_struct *regs);
lp_status core_regs_set(pid_t tid, const struct user_regs_struct *regs);

/* The value of auxiliary vector entry TYPE (e.g. AT_ENTRY). */
lp_status core_auxv_get(pid_t pid, unsigned long type, uint64_t *value);

/* The mapped ranges of PID, sorted; the heap is widened by HEAP_ROOM bytes so
 * that nothing is placed where brk() will want to grow. Free with free(). */
lp_status core_maps_read(pid_t pid, uint64_t heap_room, shm_range **out, size_t *n);

/* waitpid(TID) for the next stop or end of one thread, through EINTR (the
 * session's timer interrupts waits). */
pid_t core_wait_thread(pid_t tid, int *status);

/* Runs system call NR with ARGS in thread TID, which must be in a ptrace stop,
 * using 3 bytes of executable memory at SCRATCH; registers and memory are
 * restored afterwards.  A signal that arrives meanwhile is kept in *deferred
 * (0 if none) for the caller to deliver on the next resume. */
lp_status core_remote_syscall(const core_target *t, pid_t tid, uint64_t scratch, long nr,
                              const uint64_t args[6], int64_t *ret, int *deferred);

/* What a remote call's thread may meet that its caller serves: while the
 * thread runs, IDLE is called every so often (a first hit asked for through
 * a stub waits for it); at a trap other than the call's return, TRAP says
 * whether it was the caller's break (*handled: the thread's registers are
 * set to go on). */
typedef struct core_remote_hooks {
  lp_status (*idle)(void *ctx);
  lp_status (*trap)(void *ctx, pid_t tid, bool *handled);
  void *ctx;
} core_remote_hooks;

/* Calls the function at FN with up to six integer ARGS (rdi, rsi, rdx, rcx,
 * r8, r9; rax = 0 for varargs) in thread TID, which must be in a ptrace
 * stop, and returns its rax in *RET.  The call runs on TID's stack below the
 * red zone, 16-byte aligned at the call, and returns to an int3 written for
 * the time of the call at SCRATCH (1 byte of executable memory); registers
 * and that byte are restored afterwards.  A signal that arrives meanwhile is
 * kept in *deferred (0 if none).  Without HOOKS the function must not reach
 * a break or a stub (another trap fails the call: registers are restored,
 * what the function did so far stays); it must not wait for a lock that
 * another stopped thread holds. */
lp_status core_remote_call(const core_target *t, pid_t tid, uint64_t scratch, uint64_t fn,
                           const uint64_t args[6], uint64_t *ret, int *deferred, const core_remote_hooks *hooks);

/* Writes LEN bytes of DATA below the red zone of TID's stack and returns the
 * address (for passing strings to remote system calls). */
lp_status core_push_bytes(const core_target *t, pid_t tid, const void *data, size_t len,
                          uint64_t *addr);

#endif
