/* reloc_dwarf.h — private to reloc_unwind.c and reloc_lsda.c: a growable
 * byte buffer with the DWARF writers (LEB128, little-endian), the DW_EH_PE
 * encodings they share, read through core/dwarf_read.h's bounded reader. */
#ifndef RELOC_DWARF_H
#define RELOC_DWARF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dwarf_read.h"
#include "reloc_unwind.h"

/* {=== DW_EH_PE pointer encodings (LSB Core, "DWARF Extensions") ===*/
#define PE_ABSPTR 0x00
#define PE_ULEB128 0x01
#define PE_UDATA2 0x02
#define PE_UDATA4 0x03
#define PE_UDATA8 0x04
#define PE_SLEB128 0x09
#define PE_SDATA2 0x0a
#define PE_SDATA4 0x0b
#define PE_SDATA8 0x0c
#define PE_FORMAT_MASK 0x0f
#define PE_PCREL 0x10
#define PE_APPL_MASK 0x70
#define PE_INDIRECT 0x80
#define PE_OMIT 0xff
/* }=== */

typedef struct dw_buf {
  uint8_t *b;
  size_t n, cap;
  bool failed; /* out of memory */
} dw_buf;

static inline void dw_put(dw_buf *o, const void *bytes, size_t n) {
  if (o->failed) return;
  if (o->n + n > o->cap) {
    size_t cap = o->cap ? o->cap : 64;
    while (cap < o->n + n) cap *= 2;
    uint8_t *grown = realloc(o->b, cap);
    if (!grown) {
      o->failed = true;
      return;
    }
    o->b = grown;
    o->cap = cap;
  }
  memcpy(o->b + o->n, bytes, n);
  o->n += n;
}

static inline void dw_u8(dw_buf *o, uint8_t v) { dw_put(o, &v, 1); }

static inline void dw_le(dw_buf *o, uint64_t v, unsigned size) {
  for (unsigned i = 0; i < size; i++) dw_u8(o, (uint8_t)(v >> (8 * i)));
}

static inline void dw_uleb(dw_buf *o, uint64_t v) {
  do {
    uint8_t b = v & 0x7f;
    v >>= 7;
    dw_u8(o, (uint8_t)(b | (v ? 0x80 : 0)));
  } while (v);
}

static inline void dw_sleb(dw_buf *o, int64_t v) {
  for (;;) {
    uint8_t b = v & 0x7f;
    v = v < 0 ? ~(~v >> 7) : v >> 7; /* arithmetic shift, spelt out */
    bool done = (v == 0 && !(b & 0x40)) || (v == -1 && (b & 0x40));
    dw_u8(o, (uint8_t)(b | (done ? 0 : 0x80)));
    if (done) return;
  }
}

/* Bytes of a fixed-size encoding, 0 for LEB128 and unknown forms. */
static inline unsigned dw_pe_size(uint8_t enc) {
  switch (enc & PE_FORMAT_MASK) {
  case PE_ABSPTR: case PE_UDATA8: case PE_SDATA8: return 8;
  case PE_UDATA4: case PE_SDATA4: return 4;
  case PE_UDATA2: case PE_SDATA2: return 2;
  default: return 0;
  }
}

/* Reads a DW_EH_PE value: absolute or pc-relative (to its own field); zero
 * stays zero as in libgcc (a null pointer is never relocated); the indirect
 * bit is not followed.  Other applications set c->bad. */
static inline uint64_t dw_read_pe(dw_cursor *c, uint8_t enc) {
  uint64_t field = c->addr, v;
  switch (enc & PE_FORMAT_MASK) {
  case PE_ULEB128: v = dw_read_uleb(c); break;
  case PE_SLEB128: v = (uint64_t)dw_read_sleb(c); break;
  case PE_SDATA2: v = (uint64_t)(int64_t)(int16_t)dw_read_le(c, 2); break;
  case PE_SDATA4: v = (uint64_t)(int64_t)(int32_t)dw_read_le(c, 4); break;
  default:
    if (!dw_pe_size(enc)) {
      c->bad = true;
      return 0;
    }
    v = dw_read_le(c, dw_pe_size(enc));
  }
  if ((enc & PE_APPL_MASK) == PE_PCREL) {
    if (v != 0) v += field;
  } else if ((enc & PE_APPL_MASK) != 0) {
    c->bad = true;
  }
  return v;
}

/* reloc_lsda.c: the copy's LSDA from the original's (see reloc_unwind.h). */
lp_status reloc_lsda_translate(const reloc_plan *plan, const reloc_cfi *cfi, uint64_t dest,
                               dw_buf *out, size_t *in_original);

#endif
