/* unwind.c — the registry of copies' unwind information and its flush into
 * the target (unwind.h).
 *
 * Layout of one flush at DATA:
 *   [struct object: CORE_UNWIND_OBJECT_ROOM zero bytes]
 *   [CIE FDE][CIE FDE]...[4-byte zero]      the .eh_frame chunk registered
 *   [LSDA][LSDA]...                          each 8-byte aligned
 * Each fragment's CIE and FDE stay together (the FDE's CIE pointer is
 * relative) and its own terminator is dropped; every other pointer in them
 * is absolute, the FDE's LSDA pointer set here to where its LSDA goes. */
#include "unwind.h"

#include <stdlib.h>
#include <string.h>

typedef struct pending {
  uint64_t copy;
  reloc_unwind fragment; /* owned copies of the bytes */
} pending;

struct core_unwind {
  pending *v;
  size_t n, cap;
};

lp_status core_unwind_new(core_unwind **out) {
  *out = calloc(1, sizeof **out);
  return *out ? LP_OK : lp_fail("out of memory");
}

/* Forgets the first N pending fragments (those added since stay pending). */
static void forget(core_unwind *u, size_t n) {
  for (size_t k = 0; k < n; k++) reloc_unwind_free(&u->v[k].fragment);
  memmove(u->v, u->v + n, (u->n - n) * sizeof *u->v);
  u->n -= n;
}

void core_unwind_free(core_unwind *u) {
  if (!u) return;
  forget(u, u->n);
  free(u->v);
  free(u);
}

static void *dup_bytes(const void *b, size_t n) {
  void *d = malloc(n ? n : 1);
  if (d && n) memcpy(d, b, n);
  return d;
}

lp_status core_unwind_add(core_unwind *u, uint64_t copy, const reloc_unwind *fragment) {
  if (fragment->eh_size < 4) return lp_fail("empty unwind fragment for the copy at 0x%llx", (unsigned long long)copy);
  if (u->n == u->cap) {
    size_t cap = u->cap ? 2 * u->cap : 32;
    pending *grown = realloc(u->v, cap * sizeof *grown);
    if (!grown) return lp_fail("out of memory");
    u->v = grown;
    u->cap = cap;
  }
  pending *p = &u->v[u->n];
  p->copy = copy;
  p->fragment = *fragment;
  p->fragment.eh = dup_bytes(fragment->eh, fragment->eh_size);
  p->fragment.lsda = fragment->lsda ? dup_bytes(fragment->lsda, fragment->lsda_size) : NULL;
  if (!p->fragment.eh || (fragment->lsda && !p->fragment.lsda)) {
    reloc_unwind_free(&p->fragment);
    return lp_fail("out of memory");
  }
  u->n++;
  return LP_OK;
}

lp_status core_unwind_clone(const core_unwind *from, core_unwind **out) {
  LP_CHECK(core_unwind_new(out));
  for (size_t k = 0; k < from->n; k++) {
    if (core_unwind_add(*out, from->v[k].copy, &from->v[k].fragment) != LP_OK) {
      core_unwind_free(*out);
      *out = NULL;
      return LP_ERR;
    }
  }
  return LP_OK;
}

size_t core_unwind_pending(const core_unwind *u) { return u->n; }

static size_t align8(size_t n) { return (n + 7) & ~(size_t)7; }

/* Offsets in the flush: the chunk's end (with its terminator) and each LSDA. */
static size_t chunk_end(const core_unwind *u) {
  size_t at = CORE_UNWIND_OBJECT_ROOM;
  for (size_t k = 0; k < u->n; k++) at += u->v[k].fragment.eh_size - 4; /* without its terminator */
  return at + 4;
}

size_t core_unwind_flush_size(const core_unwind *u) {
  if (!u->n) return 0;
  size_t at = align8(chunk_end(u));
  for (size_t k = 0; k < u->n; k++)
    if (u->v[k].fragment.lsda) at = align8(at + u->v[k].fragment.lsda_size);
  return at;
}

lp_status core_unwind_flush(core_unwind *u, const core_target *t, pid_t tid, uint64_t scratch,
                            uint64_t register_fn, uint64_t data, size_t data_room, size_t *used,
                            int *deferred, const core_remote_hooks *hooks) {
  *used = 0;
  size_t size = core_unwind_flush_size(u);
  if (!size) return LP_OK;
  if (size > data_room)
    return lp_fail("unwind information needs %zu bytes, %zu are left for it", size, data_room);
  uint8_t *image = calloc(1, size);
  if (!image) return lp_fail("out of memory");
  size_t eh = CORE_UNWIND_OBJECT_ROOM, lsda = align8(chunk_end(u));
  for (size_t k = 0; k < u->n; k++) {
    reloc_unwind *f = &u->v[k].fragment;
    if (f->lsda) {
      reloc_unwind_place_lsda(f, data + lsda);
      memcpy(image + lsda, f->lsda, f->lsda_size);
      lsda = align8(lsda + f->lsda_size);
    }
    memcpy(image + eh, f->eh, f->eh_size - 4);
    eh += f->eh_size - 4;
  } /* the terminator and the object stay zero */
  lp_status st = core_mem_write(t, data, image, size);
  free(image);
  LP_CHECK(st);
  uint64_t args[6] = {data + CORE_UNWIND_OBJECT_ROOM, data, 0, 0, 0, 0}, ret;
  size_t n = u->n; /* first hits served during the call add more, for the next flush */
  if (core_remote_call(t, tid, scratch, register_fn, args, &ret, deferred, hooks) != LP_OK)
    return lp_context("registering unwind information for %zu copies", n);
  *used = size;
  forget(u, n);
  return LP_OK;
}
