/* unwind.c — the registry of copies' unwind information and its flush into
 * the target (unwind.h).
 *
 * Layout of one flush at DATA, one object per group (below):
 *   [struct object: CORE_UNWIND_OBJECT_ROOM zero bytes]
 *   [CIE FDE][CIE FDE]...[4-byte zero]      the group's .eh_frame chunk
 *   ... the next group's, each 16-byte aligned ...
 *   [LSDA][LSDA]...                          each 8-byte aligned
 * Each fragment's CIE and FDE stay together (the FDE's CIE pointer is
 * relative) and its own terminator is dropped; every other pointer in them
 * is absolute, the FDE's LSDA pointer set here to where its LSDA goes.
 *
 * Groups: libgcc keeps its registered objects by their lowest address and,
 * for a pc, searches only the object with the greatest lowest address at or
 * below it (gcc 13's interval tree assumes the same): two objects whose
 * spans interleave hide each other's copies.  Copies of one module's arena
 * are placed at increasing addresses, but a flush holds copies of several
 * arenas: its fragments, by address, are cut where the arena changes (and
 * wherever an object registered before lies between two of them), so that
 * no object spans the room where later copies go (a C++ program with
 * libstdc++ instrumented too lost __cxa_throw's copy at its second throw:
 * the first object held copies of the program and of libstdc++, the second
 * too, and spanned the first's).
 *
 * What each object registered is kept: a fork child may lack an object (the
 * parent registered it after the fork, before the tracer saw the fork) or
 * may have lost one (a thread of the parent was moving it between libgcc's
 * lists under its lock): such objects are registered again in the child,
 * each as it was (core_unwind_fork). */
#include "unwind.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lp_sort.h"

typedef struct pending {
  uint64_t copy, region;
  reloc_unwind fragment; /* owned copies of the bytes */
} pending;

/* An object registered: where libgcc's struct object is, where its first
 * copy is, and its fragments, kept for a fork child that lacks it (forked
 * before the registration) or may have lost it (forked while another
 * thread held the unwinder's lock, moving objects between its lists). */
typedef struct registered {
  uint64_t at, start;
  pending *fragments;
  size_t n;
} registered;

struct core_unwind {
  pending *v;
  size_t n, cap;
  registered *objects; /* by start; no two interleave (one registered again in a fork
                          child repeats its span exactly) */
  size_t nobjects, capobjects;
};

lp_status core_unwind_new(core_unwind **out) {
  *out = calloc(1, sizeof **out);
  return *out ? LP_OK : lp_fail("out of memory");
}

static void free_fragments(pending *v, size_t n) {
  for (size_t k = 0; k < n; k++) reloc_unwind_free(&v[k].fragment);
  free(v);
}

void core_unwind_free(core_unwind *u) {
  if (!u) return;
  free_fragments(u->v, u->n);
  for (size_t k = 0; k < u->nobjects; k++) free_fragments(u->objects[k].fragments, u->objects[k].n);
  free(u->objects);
  free(u);
}

static void *dup_bytes(const void *b, size_t n) {
  void *d = malloc(n ? n : 1);
  if (d && n) memcpy(d, b, n);
  return d;
}

/* TO becomes a copy of FROM, bytes and all; false when out of memory. */
static bool copy_fragment(const reloc_unwind *from, reloc_unwind *to) {
  *to = *from;
  to->eh = dup_bytes(from->eh, from->eh_size);
  to->lsda = from->lsda ? dup_bytes(from->lsda, from->lsda_size) : NULL;
  if (to->eh && (!from->lsda || to->lsda)) return true;
  reloc_unwind_free(to);
  return false;
}

lp_status core_unwind_add(core_unwind *u, uint64_t copy, uint64_t region, const reloc_unwind *fragment) {
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
  p->region = region;
  if (!copy_fragment(fragment, &p->fragment)) return lp_fail("out of memory");
  u->n++;
  return LP_OK;
}

/* A copy of the N fragments at V (their bytes too); NULL when out of memory. */
static pending *dup_fragments(const pending *v, size_t n) {
  pending *d = calloc(n ? n : 1, sizeof *d);
  for (size_t k = 0; d && k < n; k++) {
    d[k] = v[k];
    if (!copy_fragment(&v[k].fragment, &d[k].fragment)) {
      free_fragments(d, k);
      return NULL;
    }
  }
  return d;
}

lp_status core_unwind_fork(const core_unwind *from, const core_target *child, bool all_again, core_unwind **out) {
  LP_CHECK(core_unwind_new(out));
  core_unwind *u = *out;
  if (from->nobjects && !(u->objects = calloc(from->nobjects, sizeof *u->objects))) goto fail;
  u->capobjects = from->nobjects;
  for (size_t k = 0; k < from->nobjects; k++) {
    const registered *o = &from->objects[k];
    uint64_t pc_begin = 0; /* libgcc's first field: set by the registration, zero before */
    if (core_mem_read(child, o->at, &pc_begin, sizeof pc_begin) != LP_OK) pc_begin = 0; /* mapped since */
    if (pc_begin && !all_again) {
      registered *mine = &u->objects[u->nobjects];
      *mine = (registered){o->at, o->start, dup_fragments(o->fragments, o->n), o->n};
      if (!mine->fragments) goto fail;
      u->nobjects++;
      continue;
    }
    for (size_t j = 0; j < o->n; j++) /* registered again as it was: its own region, the same span */
      if (core_unwind_add(u, o->fragments[j].copy, o->at, &o->fragments[j].fragment) != LP_OK) goto fail;
  }
  for (size_t k = 0; k < from->n; k++)
    if (core_unwind_add(u, from->v[k].copy, from->v[k].region, &from->v[k].fragment) != LP_OK) goto fail;
  return LP_OK;
fail:
  core_unwind_free(u);
  *out = NULL;
  return lp_fail("the unwind information of a fork child: out of memory");
}

size_t core_unwind_pending(const core_unwind *u) { return u->n; }

static size_t align8(size_t n) { return (n + 7) & ~(size_t)7; }
static size_t align16(size_t n) { return (n + 15) & ~(size_t)15; }

typedef struct by_copy {
  uint64_t copy;
  size_t index; /* in v */
} by_copy;

#define COPY_BEFORE(a, b) ((a)->copy < (b)->copy)
LP_MERGE_SORT(sort_by_copy, by_copy, COPY_BEFORE)

/* Whether an object registered before starts in (LO, HI). */
static bool object_between(const core_unwind *u, uint64_t lo, uint64_t hi) {
  size_t a = 0, b = u->nobjects; /* the first object starting above LO */
  while (a < b) {
    size_t m = a + (b - a) / 2;
    if (u->objects[m].start <= lo) a = m + 1;
    else b = m;
  }
  return a < u->nobjects && u->objects[a].start < hi;
}

/* The pending fragments by address, with *FIRST_OF_GROUP telling where each
 * group starts (see the top comment); NULL when out of memory. */
static by_copy *plan_groups(const core_unwind *u, bool **first_of_group) {
  by_copy *order = malloc(2 * u->n * sizeof *order);
  *first_of_group = malloc(u->n);
  if (!order || !*first_of_group) {
    free(order);
    free(*first_of_group);
    return NULL;
  }
  for (size_t k = 0; k < u->n; k++) order[k] = (by_copy){u->v[k].copy, k};
  sort_by_copy(order, order + u->n, u->n);
  for (size_t k = 0; k < u->n; k++)
    (*first_of_group)[k] = k == 0 || u->v[order[k].index].region != u->v[order[k - 1].index].region ||
                           object_between(u, order[k - 1].copy, order[k].copy);
  return order;
}

/* The flush's size, and in *LSDA_AT where its LSDAs start. */
static size_t layout_size(const core_unwind *u, const by_copy *order, const bool *first_of_group,
                          size_t *lsda_at) {
  size_t at = 0;
  for (size_t k = 0; k < u->n; k++) {
    if (first_of_group[k]) at = align16(at) + CORE_UNWIND_OBJECT_ROOM;
    at += u->v[order[k].index].fragment.eh_size - 4; /* without its terminator */
    if (k + 1 == u->n || first_of_group[k + 1]) at += 4;
  }
  *lsda_at = at = align8(at);
  for (size_t k = 0; k < u->n; k++)
    if (u->v[k].fragment.lsda) at = align8(at + u->v[k].fragment.lsda_size);
  return at;
}

size_t core_unwind_flush_size(const core_unwind *u) {
  if (!u->n) return 0;
  bool *first_of_group;
  by_copy *order = plan_groups(u, &first_of_group);
  if (!order) return SIZE_MAX; /* no room will do: the flush says why */
  size_t lsda_at, size = layout_size(u, order, first_of_group, &lsda_at);
  free(order);
  free(first_of_group);
  return size;
}

/* Notes the object at AT registered with the fragments ORDER[0..N) of U's
 * pending ones (moved into it: forget_done leaves them). */
static lp_status add_object(core_unwind *u, uint64_t at, const by_copy *order, size_t n) {
  if (u->nobjects == u->capobjects) {
    size_t cap = u->capobjects ? 2 * u->capobjects : 16;
    registered *grown = realloc(u->objects, cap * sizeof *grown);
    if (!grown) return lp_fail("out of memory");
    u->objects = grown;
    u->capobjects = cap;
  }
  pending *fragments = malloc(n * sizeof *fragments);
  if (!fragments) return lp_fail("out of memory");
  for (size_t k = 0; k < n; k++) fragments[k] = u->v[order[k].index];
  size_t i = u->nobjects;
  while (i > 0 && u->objects[i - 1].start > order[0].copy) i--;
  memmove(u->objects + i + 1, u->objects + i, (u->nobjects - i) * sizeof *u->objects);
  u->objects[i] = (registered){at, order[0].copy, fragments, n};
  u->nobjects++;
  return LP_OK;
}

/* Drops the first N pending fragments that are DONE (their objects hold
 * them now; those added since stay pending). */
static void forget_done(core_unwind *u, size_t n, const bool *done) {
  size_t kept = 0;
  for (size_t k = 0; k < u->n; k++)
    if (!(k < n && done[k])) u->v[kept++] = u->v[k];
  u->n = kept;
}

lp_status core_unwind_flush(core_unwind *u, const core_target *t, pid_t tid, uint64_t scratch,
                            uint64_t register_fn, uint64_t data, size_t data_room, size_t *used,
                            int *deferred, const core_remote_hooks *hooks) {
  *used = 0;
  if (!u->n) return LP_OK;
  bool *first_of_group;
  by_copy *order = plan_groups(u, &first_of_group);
  if (!order) return lp_fail("out of memory");
  size_t lsda, size = layout_size(u, order, first_of_group, &lsda);
  uint8_t *image = size <= data_room ? calloc(1, size) : NULL;
  bool *done = image ? calloc(u->n, sizeof *done) : NULL;
  size_t *group_at = image ? malloc(u->n * sizeof *group_at) : NULL; /* each group's object */
  if (!done || !group_at) {
    free(order);
    free(first_of_group);
    free(image);
    free(done);
    free(group_at);
    if (size > data_room) return lp_fail("unwind information needs %zu bytes, %zu are left for it", size, data_room);
    return lp_fail("out of memory");
  }
  for (size_t k = 0; k < u->n; k++) {
    reloc_unwind *f = &u->v[k].fragment;
    if (!f->lsda) continue;
    reloc_unwind_place_lsda(f, data + lsda); /* in the FDE: before it is copied */
    memcpy(image + lsda, f->lsda, f->lsda_size);
    lsda = align8(lsda + f->lsda_size);
  }
  size_t eh = 0, ngroups = 0;
  for (size_t k = 0; k < u->n; k++) {
    reloc_unwind *f = &u->v[order[k].index].fragment;
    if (first_of_group[k]) {
      eh = align16(eh);
      group_at[ngroups++] = eh;
      eh += CORE_UNWIND_OBJECT_ROOM;
    }
    memcpy(image + eh, f->eh, f->eh_size - 4);
    eh += f->eh_size - 4;
    if (k + 1 == u->n || first_of_group[k + 1]) eh += 4; /* the terminator and the object stay zero */
  }
  lp_status st = core_mem_write(t, data, image, size);
  free(image);
  size_t n = u->n; /* first hits served during the calls add more, for the next flush */
  for (size_t g = 0, k = 0; st == LP_OK && g < ngroups; g++) {
    size_t end = k + 1;
    while (end < n && !first_of_group[end]) end++;
    uint64_t object = data + group_at[g], args[6] = {object + CORE_UNWIND_OBJECT_ROOM, object, 0, 0, 0, 0}, ret;
    if (core_remote_call(t, tid, scratch, register_fn, args, &ret, deferred, hooks) != LP_OK) {
      st = lp_context("registering unwind information for %zu copies", end - k);
      break;
    }
    *used = size; /* libgcc holds on to it from here */
    st = add_object(u, object, order + k, end - k);
    for (size_t j = k; st == LP_OK && j < end; j++) done[order[j].index] = true;
    k = end;
  }
  forget_done(u, n, done);
  free(order);
  free(first_of_group);
  free(done);
  free(group_at);
  return st;
}
