/* doorbell.h — the event loop's sleep, and how a stub's first hit wakes it.
 *
 * A function not run yet may begin with a jmp to a stub in the arena
 * (core/stubs.c) instead of an int3.  The stub marks the function requested in
 * the counters file, adds one to its process's bell (a word of the same file)
 * and futex-wakes it, then waits on the function's word until the tracer has
 * relocated it: no ptrace stop, no signal.  The tracer sleeps in one
 * futex_waitv on every watched bell and on a word of its own that its SIGCHLD
 * handler moves (a traced task stopped or ended): whichever moves first wakes
 * it.  A word read before looking for stops and given as the value the sleep
 * expects closes the window between looking and sleeping: a SIGCHLD in it
 * makes the sleep return at once. */
#ifndef CORE_DOORBELL_H
#define CORE_DOORBELL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CORE_DOORBELL_MAX_BELLS 127 /* futex_waitv takes 128 words, the SIGCHLD word one */

/* Does the kernel have futex_waitv (Linux 5.16)?  Without it first hits trap. */
bool core_doorbell_available(void);

/* Installs the SIGCHLD handler (SA_RESTART: no other system call sees EINTR
 * from it), and puts the previous action back. */
void core_doorbell_arm(void);
void core_doorbell_disarm(void);

/* The SIGCHLD word now: read it before looking for stops. */
uint32_t core_doorbell_chld(void);

/* Moves that word, as a SIGCHLD does (async-signal-safe): a handler that
 * sets a flag the loop looks at before sleeping calls it, so that a signal
 * just before the sleep still ends it. */
void core_doorbell_poke(void);

/* Sleeps until the SIGCHLD word is no longer CHLD, one of the N BELLS (at
 * most CORE_DOORBELL_MAX_BELLS) no longer holds its SEEN value, or a signal without SA_RESTART comes (the
 * timer's).  Without futex_waitv (N must be 0) it waits on the SIGCHLD word
 * alone. */
void core_doorbell_sleep(uint32_t chld, const volatile uint32_t *const *bells, const uint32_t *seen, size_t n);

#endif
