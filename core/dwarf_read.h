/* dwarf_read.h — a bounded little-endian reader with DWARF's LEB128: what
 * every reader of DWARF bytes here shares (the line program, .eh_frame, a
 * copy's unwind information and LSDA). */
#ifndef CORE_DWARF_READ_H
#define CORE_DWARF_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A bounded reader over [p, end); addr is the run-time address of p. */
typedef struct dw_cursor {
  const uint8_t *p, *end;
  uint64_t addr;
  bool bad; /* a read ran past end or met an unsupported form */
} dw_cursor;

static inline uint64_t dw_read_le(dw_cursor *c, unsigned size) {
  if (c->bad || (size_t)(c->end - c->p) < size) {
    c->bad = true;
    return 0;
  }
  uint64_t v = 0;
  for (unsigned i = 0; i < size; i++) v |= (uint64_t)c->p[i] << (8 * i);
  c->p += size;
  c->addr += size;
  return v;
}

static inline uint64_t dw_read_uleb(dw_cursor *c) {
  uint64_t v = 0;
  for (unsigned shift = 0;; shift += 7) {
    uint8_t b = (uint8_t)dw_read_le(c, 1);
    if (c->bad) return 0;
    if (shift < 64) v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
}

static inline int64_t dw_read_sleb(dw_cursor *c) {
  uint64_t v = 0;
  unsigned shift = 0;
  uint8_t b;
  do {
    b = (uint8_t)dw_read_le(c, 1);
    if (c->bad) return 0;
    if (shift < 64) v |= (uint64_t)(b & 0x7f) << shift;
    shift += 7;
  } while (b & 0x80);
  if (shift < 64 && (b & 0x40)) v |= ~(uint64_t)0 << shift; /* sign-extend */
  return (int64_t)v;
}

#endif
