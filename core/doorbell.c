/* doorbell.c — the event loop's sleep: futex_waitv on the SIGCHLD word and
 * the bells (see doorbell.h).
 *
 * One thread does it all: a waiter thread passing the rings on through an
 * eventfd cost two wakeups per first hit, and glibc's malloc its locks (with a
 * second thread it locks its arena on every call: ~15 ms of the tracer's CPU
 * on sqlite, docs/PERFORMANCE.md). */
#include "doorbell.h"

#include <errno.h>
#include <linux/futex.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile uint32_t chld_word;
static struct sigaction previous;

void core_doorbell_poke(void) { __atomic_add_fetch(&chld_word, 1, __ATOMIC_SEQ_CST); }

static void on_chld(int sig) {
  (void)sig;
  core_doorbell_poke();
}

static long futex_waitv(struct futex_waitv *w, size_t n) {
  return syscall(SYS_futex_waitv, w, n, 0, NULL, CLOCK_MONOTONIC);
}

bool core_doorbell_available(void) {
  uint32_t word = 0;
  struct futex_waitv probe = {1, (uintptr_t)&word, FUTEX_32 | FUTEX_PRIVATE_FLAG, 0};
  int saved = errno;
  bool ok = futex_waitv(&probe, 1) < 0 && errno == EAGAIN; /* the word is not 1 */
  errno = saved;
  return ok;
}

void core_doorbell_arm(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_chld;
  sa.sa_flags = SA_RESTART; /* the sleep still returns: a restarted wait finds the word moved */
  sigemptyset(&sa.sa_mask);
  sigaction(SIGCHLD, &sa, &previous);
}

void core_doorbell_disarm(void) { sigaction(SIGCHLD, &previous, NULL); }

uint32_t core_doorbell_chld(void) { return __atomic_load_n(&chld_word, __ATOMIC_SEQ_CST); }

void core_doorbell_sleep(uint32_t chld, const volatile uint32_t *const *bells, const uint32_t *seen, size_t n) {
  if (!n) {
    syscall(SYS_futex, &chld_word, FUTEX_WAIT_PRIVATE, chld, NULL, NULL, 0);
    return;
  }
  struct futex_waitv w[CORE_DOORBELL_MAX_BELLS + 1];
  w[0] = (struct futex_waitv){chld, (uintptr_t)&chld_word, FUTEX_32 | FUTEX_PRIVATE_FLAG, 0};
  for (size_t k = 0; k < n; k++) /* shared: the target's stubs wake them */
    w[k + 1] = (struct futex_waitv){seen[k], (uintptr_t)bells[k], FUTEX_32, 0};
  futex_waitv(w, n + 1);
}
