/* doorbell.c — the waiter thread of first hits served without a stop (see
 * doorbell.h).
 *
 * The waiter sleeps in futex_waitv on the control word and on every watched
 * bell, each with the value it read last.  A bell that moved makes the
 * eventfd readable, after the new values are read for the next wait: a ring
 * after that read wakes the wait at once, one before it was there when the
 * main thread, woken by the eventfd, looked at the requests.  The main thread
 * changes the list under a spin lock and moves the control word; it returns
 * once the waiter has taken the new list in (acked), so no bell is read after
 * its mapping goes.
 *
 * The waiter is started with clone(), not pthread_create: glibc then still
 * sees one thread, and malloc keeps its lock-free single-thread path (with a
 * pthread, the tracer spent ~15 ms of sqlite's run locking malloc's arena,
 * docs/PERFORMANCE.md).  So the waiter calls nothing of libc that could touch
 * its state or the main thread's (errno, locks): system calls are made
 * directly (raw_syscall), waits are futexes. */
#include "doorbell.h"

#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_BELLS (FUTEX_WAITV_MAX - 1) /* the control word takes one */
#define STACK_SIZE (64 * 1024)

struct core_doorbell {
  int efd;
  void *stack;
  uint32_t lock;    /* held while the list is changed or read */
  uint32_t control; /* moved by the main thread after each change of the list */
  uint32_t acked;   /* the control value of the list the waiter waits on */
  uint32_t quit;
  uint32_t alive;   /* cleared by the kernel when the waiter exits (CLONE_CHILD_CLEARTID) */
  const volatile uint32_t *bells[MAX_BELLS];
  size_t nbells;
};

static long raw_syscall(long nr, long a, long b, long c, long d, long e) {
  register long r10 __asm__("r10") = d;
  register long r8 __asm__("r8") = e;
  long ret;
  __asm__ volatile("syscall"
                   : "=a"(ret)
                   : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8)
                   : "rcx", "r11", "memory");
  return ret;
}

static void futex_wait(uint32_t *word, uint32_t value, bool private) {
  raw_syscall(SYS_futex, (long)word, private ? FUTEX_WAIT_PRIVATE : FUTEX_WAIT, value, 0, 0);
}

static void futex_wake(uint32_t *word) { raw_syscall(SYS_futex, (long)word, FUTEX_WAKE_PRIVATE, INT32_MAX, 0, 0); }

static void lock(core_doorbell *d) {
  while (__atomic_exchange_n(&d->lock, 1, __ATOMIC_ACQUIRE)) raw_syscall(SYS_sched_yield, 0, 0, 0, 0, 0);
}

static void unlock(core_doorbell *d) { __atomic_store_n(&d->lock, 0, __ATOMIC_RELEASE); }

static int wait_bells(void *arg) {
  core_doorbell *d = arg;
  struct futex_waitv w[FUTEX_WAITV_MAX];
  bool rang = false;
  for (;;) {
    lock(d);
    uint32_t control = __atomic_load_n(&d->control, __ATOMIC_ACQUIRE);
    bool quit = d->quit;
    w[0] = (struct futex_waitv){control, (uintptr_t)&d->control, FUTEX_32 | FUTEX_PRIVATE_FLAG, 0};
    size_t n = 1;
    for (size_t k = 0; k < d->nbells; k++, n++)
      w[n] = (struct futex_waitv){*d->bells[k], (uintptr_t)d->bells[k], FUTEX_32, 0};
    unlock(d);
    __atomic_store_n(&d->acked, control, __ATOMIC_RELEASE);
    futex_wake(&d->acked);
    if (quit) return 0;
    if (rang) {
      uint64_t one = 1;
      raw_syscall(SYS_write, d->efd, (long)&one, sizeof one, 0, 0);
      rang = false;
    }
    raw_syscall(SYS_futex_waitv, (long)w, (long)n, 0, 0, CLOCK_MONOTONIC);
    /* every bell of w is still mapped: forgetting one waits for the next ack */
    for (size_t k = 1; k < n; k++) rang |= *(const volatile uint32_t *)(uintptr_t)w[k].uaddr != w[k].val;
  }
}

lp_status core_doorbell_start(core_doorbell **out) {
  uint32_t word = 0;
  struct futex_waitv probe = {1, (uintptr_t)&word, FUTEX_32 | FUTEX_PRIVATE_FLAG, 0};
  long r = raw_syscall(SYS_futex_waitv, (long)&probe, 1, 0, 0, CLOCK_MONOTONIC);
  if (r != -EAGAIN) /* the word is not 1: EAGAIN where futex_waitv exists */
    return lp_fail("futex_waitv unavailable: %s", strerror((int)-r));
  core_doorbell *d = calloc(1, sizeof *d);
  if (!d) return lp_fail("out of memory");
  d->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  d->stack = mmap(NULL, STACK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (d->efd < 0 || d->stack == MAP_FAILED) {
    if (d->efd >= 0) close(d->efd);
    free(d);
    return lp_fail("cannot start the doorbell: %s", strerror(errno));
  }
  d->acked = UINT32_MAX; /* not the control word's: nothing taken in yet */
  d->alive = 1;
  sigset_t all, old;
  sigfillset(&all);
  sigprocmask(SIG_SETMASK, &all, &old); /* inherited: signals stay the main thread's */
  int tid = clone(wait_bells, (char *)d->stack + STACK_SIZE,
                  CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM |
                      CLONE_CHILD_CLEARTID,
                  d, NULL, NULL, &d->alive);
  int err = errno;
  sigprocmask(SIG_SETMASK, &old, NULL);
  if (tid < 0) {
    close(d->efd);
    munmap(d->stack, STACK_SIZE);
    free(d);
    return lp_fail("cannot start the doorbell: %s", strerror(err));
  }
  *out = d;
  return LP_OK;
}

int core_doorbell_fd(const core_doorbell *d) { return d->efd; }

bool core_doorbell_rang(core_doorbell *d) {
  uint64_t n;
  return read(d->efd, &n, sizeof n) == sizeof n;
}

/* After a change of the list (under the lock): moves the control word and
 * waits until the waiter has taken the new list in. */
static void changed(core_doorbell *d) {
  uint32_t control = __atomic_add_fetch(&d->control, 1, __ATOMIC_RELEASE);
  unlock(d);
  futex_wake(&d->control);
  for (uint32_t a; (a = __atomic_load_n(&d->acked, __ATOMIC_ACQUIRE)) != control;) futex_wait(&d->acked, a, true);
}

lp_status core_doorbell_watch(core_doorbell *d, const volatile uint32_t *bell) {
  lock(d);
  if (d->nbells == MAX_BELLS) {
    unlock(d);
    return lp_fail("more than %d processes wait on first hits", MAX_BELLS);
  }
  d->bells[d->nbells++] = bell;
  changed(d);
  return LP_OK;
}

void core_doorbell_forget(core_doorbell *d, const volatile uint32_t *bell) {
  lock(d);
  for (size_t k = 0; k < d->nbells; k++)
    if (d->bells[k] == bell) {
      d->bells[k] = d->bells[--d->nbells];
      changed(d);
      return;
    }
  unlock(d);
}

void core_doorbell_stop(core_doorbell *d) {
  if (!d) return;
  lock(d);
  d->quit = 1;
  changed(d);
  for (uint32_t a; (a = __atomic_load_n(&d->alive, __ATOMIC_ACQUIRE)) != 0;) futex_wait(&d->alive, a, false);
  close(d->efd);
  munmap(d->stack, STACK_SIZE);
  free(d);
}
