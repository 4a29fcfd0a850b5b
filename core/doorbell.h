/* doorbell.h — first hits that do not stop the program: the tracer's side.
 *
 * A function not run yet may begin with a jmp to a stub in the arena
 * (core/stubs.c) instead of an int3.  The stub marks the function requested in
 * the counters file, adds one to its process's bell (a word of the same file)
 * and wakes whoever waits on it, then waits on the function's word until the
 * tracer has relocated it: no ptrace stop, no signal.  The tracer's main
 * thread sleeps in poll(); a waiter thread sleeps on every watched bell at
 * once (futex_waitv) and, when one rings, makes fd() readable.  Nothing else
 * runs on that thread: the requests are served by the main thread. */
#ifndef CORE_DOORBELL_H
#define CORE_DOORBELL_H

#include <stdbool.h>
#include <stdint.h>

#include "lp_status.h"

typedef struct core_doorbell core_doorbell;

/* Starts the waiter thread (all signals blocked on it); fails where the
 * kernel has no futex_waitv (before Linux 5.16): then first hits trap. */
lp_status core_doorbell_start(core_doorbell **out);

/* Readable after a watched bell rang, until core_doorbell_rang says so. */
int core_doorbell_fd(const core_doorbell *d);
bool core_doorbell_rang(core_doorbell *d);

/* Watches BELL (a word of a mapping of the tracer's shared with the target)
 * from now on; fails when 127 are watched already. */
lp_status core_doorbell_watch(core_doorbell *d, const volatile uint32_t *bell);

/* Stops watching BELL; returns once the waiter thread no longer reads it, so
 * that its mapping may go. */
void core_doorbell_forget(core_doorbell *d, const volatile uint32_t *bell);

void core_doorbell_stop(core_doorbell *d);

#endif
