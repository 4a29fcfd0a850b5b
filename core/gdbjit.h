/* gdbjit.h — GDB's JIT interface for the copies: one small in-memory ELF
 * object per copy (a NOBITS .text at the copy's address, its .eh_frame
 * fragment, one function symbol), linked into the target's
 * __jit_debug_descriptor list (core/gdbjit_lib.c, loaded into the target).
 * GDB reads that list when it opens a core or attaches, and then names the
 * copies and unwinds through them with `bt`.  Everything is written with
 * ptrace; the objects live in one read-write region of the target,
 * reserved at set-up (untouched pages cost nothing).  The copies made in one
 * stop are staged and written, and linked in, at once (core_gdbjit_flush),
 * before the target runs again. */
#ifndef CORE_GDBJIT_H
#define CORE_GDBJIT_H

#include <stddef.h>
#include <stdint.h>

#include "lp_status.h"
#include "target.h"

/* The library's file name, next to the lazyprobe executable's build. */
const char *core_gdbjit_library(void);

typedef struct core_gdbjit {
  uint64_t descriptor;  /* run-time address of __jit_debug_descriptor; 0: off */
  uint64_t base, size;  /* the region the objects go in */
  uint64_t used;        /* bytes written */
  uint64_t first;       /* the list's first entry (the newest) in the target, 0 when empty */
  uint8_t *staged;      /* objects and entries to go at base + used (malloc'd) */
  size_t nstaged, capstaged;
  size_t oldest, newest; /* offsets in staged of the first and last entry staged (nstaged: none) */
  uint8_t first_entry[32]; /* the bytes of the entry at first, as the target has them */
} core_gdbjit;

/* One copy as GDB is to see it. */
typedef struct core_gdbjit_copy {
  const char *name;
  uint64_t code, code_size; /* the copy */
  const uint8_t *eh;        /* its CIE + FDE + zero terminator (absolute pointers), or NULL */
  size_t eh_size;
} core_gdbjit_copy;

/* The ELF object of C as it will be placed at run-time address AT (its
 * .eh_frame section's address depends on it): malloc'd into *OUT. */
lp_status core_gdbjit_image(const core_gdbjit_copy *c, uint64_t at, uint8_t **out, size_t *size);

/* Stages C's object and its list entry for G's region.  Fails when the region
 * is full (G stays as it was). */
lp_status core_gdbjit_add(core_gdbjit *g, const core_gdbjit_copy *c);

/* Writes what is staged into the target and links it in, newest first: one
 * write for the old first entry (its back link set) and the objects after it,
 * one for the descriptor, which is written last (a core dumped before it
 * shows the list as it was). */
lp_status core_gdbjit_flush(core_gdbjit *g, const core_target *t);

void core_gdbjit_free(core_gdbjit *g);

#endif
