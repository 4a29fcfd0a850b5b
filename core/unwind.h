/* unwind.h — registering the copies' unwind information in a target.
 *
 * A per-process registry of the fragments (relocate/reloc_unwind.h) of the
 * copies made since the last flush.  A flush writes them into read-write
 * memory of the target as .eh_frame chunks (CIE + FDE pairs, one zero
 * terminator), each with a zeroed `struct object` in front, followed by
 * their LSDAs, and calls libgcc's __register_frame_info(chunk, object) for
 * each chunk in a stopped thread (core_remote_call); a chunk's copies span
 * no object registered before (unwind.c says why).  From then on
 * throw/catch, backtrace()
 * and every other user of _Unwind_Find_FDE in the target find the copies.
 * The caller picks the moment: libgcc takes its object mutex there, so the
 * thread must hold no unwinder lock and no other stopped thread may (at the
 * entry of _Unwind_Find_FDE, before the lock, is such a moment). */
#ifndef CORE_UNWIND_H
#define CORE_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lp_status.h"
#include "reloc_unwind.h"
#include "target.h"

/* Room for libgcc's struct object (6 pointers in GCC 12's unwind-dw2-fde.h,
 * 7 with DWARF2_OBJECT_END_PTR_EXTENSION), kept generous for later
 * versions; it must stay allocated as long as the registration. */
#define CORE_UNWIND_OBJECT_ROOM 128

typedef struct core_unwind core_unwind;

lp_status core_unwind_new(core_unwind **out);
void core_unwind_free(core_unwind *u);

/* The registry of a fork child (CHILD, not run yet) of FROM's process: its
 * parent's copies that are not registered yet are its own to register, and
 * so are those of the objects registered after the fork (their struct
 * object is still zero in the child's memory, or not even mapped there: the
 * fork came while the tracer had not seen it yet), or of every object when
 * ALL_AGAIN (the unwinder's lock was held at the fork: its lists may miss
 * one).  Each such object is registered again as it was, on its own. */
lp_status core_unwind_fork(const core_unwind *from, const core_target *child, bool all_again, core_unwind **out);

/* Queues the fragment of the copy at COPY (its bytes are copied), placed in
 * REGION (its arena's base: one region's copies come at increasing
 * addresses, and only copies of one region may share an object). */
lp_status core_unwind_add(core_unwind *u, uint64_t copy, uint64_t region, const reloc_unwind *fragment);

/* Fragments queued since the last flush. */
size_t core_unwind_pending(const core_unwind *u);

/* Bytes of target memory the next flush writes (0 when nothing is pending). */
size_t core_unwind_flush_size(const core_unwind *u);

/* Writes the pending fragments at DATA (DATA_ROOM bytes of read-write memory
 * of the target, 16-byte aligned, never reused: libgcc keeps pointers into
 * it) and calls REGISTER_FN (the target's __register_frame_info) for each
 * chunk in thread TID with SCRATCH for the return break (core_remote_call,
 * with HOOKS).  *USED gets the bytes libgcc now holds (0 when no call
 * succeeded); nothing is written when DATA_ROOM is too small.  The fragments
 * are forgotten when their chunk's call succeeded; those added during the
 * calls (first hits they served) stay pending. */
lp_status core_unwind_flush(core_unwind *u, const core_target *t, pid_t tid, uint64_t scratch,
                            uint64_t register_fn, uint64_t data, size_t data_room, size_t *used,
                            int *deferred, const core_remote_hooks *hooks);

#endif
