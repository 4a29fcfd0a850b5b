/* eh_frame.c — a small .eh_frame reader: walks CIEs and FDEs (32- and 64-bit
 * lengths, "z" augmentations, the DW_EH_PE pointer encodings) and returns the
 * [pc_begin, pc_begin + pc_range) and offset of every FDE (discovery), or one
 * FDE's call frame information as its CIE and FDE state it (core_eh_frame_cfi
 * at a known offset, core_eh_frame_find by address: the factors, the two CFA
 * programs, personality and LSDA pointers).  Call frame
 * instructions are not interpreted here. */
#include "eh_frame.h"

#include "dwarf_read.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* {=== DW_EH_PE pointer encodings (LSB Core, "DWARF Extensions") ===*/
#define PE_OMIT 0xff
#define PE_FORMAT_MASK 0x0f
#define PE_ABSPTR 0x00
#define PE_ULEB128 0x01
#define PE_UDATA2 0x02
#define PE_UDATA4 0x03
#define PE_UDATA8 0x04
#define PE_SLEB128 0x09
#define PE_SDATA2 0x0a
#define PE_SDATA4 0x0b
#define PE_SDATA8 0x0c
#define PE_APPL_MASK 0x70
#define PE_PCREL 0x10
#define PE_TEXTREL 0x20
#define PE_DATAREL 0x30
#define PE_FUNCREL 0x40
#define PE_ALIGNED 0x50
#define PE_INDIRECT 0x80
/* }=== */

/* A bounded little-endian reader over [pos, end) of the section. */
typedef struct cursor {
  const core_eh_frame *frame;
  size_t pos, end;
  int bad; /* set once a read ran past end or met an unsupported form */
} cursor;

/* The bytes through dwarf_read.h's reader, over the rest of C's range. */
static dw_cursor view(const cursor *c) {
  return (dw_cursor){c->frame->data + c->pos, c->frame->data + c->end, 0, c->bad != 0};
}

static void advance_to(cursor *c, const dw_cursor *d) {
  c->pos = (size_t)(d->p - c->frame->data);
  c->bad = d->bad;
}

static uint64_t read_le(cursor *c, unsigned n) {
  dw_cursor d = view(c);
  uint64_t v = dw_read_le(&d, n);
  advance_to(c, &d);
  return v;
}

static uint64_t read_uleb(cursor *c) {
  dw_cursor d = view(c);
  uint64_t v = dw_read_uleb(&d);
  advance_to(c, &d);
  return v;
}

static int64_t read_sleb(cursor *c) {
  dw_cursor d = view(c);
  int64_t v = dw_read_sleb(&d);
  advance_to(c, &d);
  return v;
}

/* Reads one pointer in encoding ENC; APPLY = 0 reads the bare value (pc_range). */
static uint64_t read_encoded(cursor *c, uint8_t enc, int apply) {
  uint64_t field = c->frame->addr + c->pos; /* link-time address of the field */
  if (apply && (enc & PE_APPL_MASK) == PE_ALIGNED) {
    size_t misalign = (size_t)(field % 8);
    if (misalign) read_le(c, (unsigned)(8 - misalign));
    field = c->frame->addr + c->pos;
  }
  uint64_t v;
  switch (enc & PE_FORMAT_MASK) {
  case PE_ABSPTR: v = read_le(c, 8); break; /* pointer size of x86-64 */
  case PE_ULEB128: v = read_uleb(c); break;
  case PE_UDATA2: v = read_le(c, 2); break;
  case PE_UDATA4: v = read_le(c, 4); break;
  case PE_UDATA8: v = read_le(c, 8); break;
  case PE_SLEB128: v = (uint64_t)read_sleb(c); break;
  case PE_SDATA2: v = (uint64_t)(int64_t)(int16_t)read_le(c, 2); break;
  case PE_SDATA4: v = (uint64_t)(int64_t)(int32_t)read_le(c, 4); break;
  case PE_SDATA8: v = read_le(c, 8); break;
  default: c->bad = 1; return 0;
  }
  if (!apply) return v;
  switch (enc & PE_APPL_MASK) {
  case 0: break;
  case PE_ALIGNED: break;
  case PE_PCREL: v += field; break;
  case PE_DATAREL:
    if (!c->frame->data_base) c->bad = 1;
    v += c->frame->data_base;
    break;
  case PE_TEXTREL:
    if (!c->frame->text_base) c->bad = 1;
    v += c->frame->text_base;
    break;
  default: c->bad = 1; break; /* funcrel makes no sense for pc_begin */
  }
  if (enc & PE_INDIRECT) c->bad = 1; /* would need the loaded image */
  return v;
}

/* What an FDE needs from its CIE. */
typedef struct cie_info {
  uint8_t fde_enc;  /* 'R' encoding, absptr by default */
  int has_aug_data; /* 'z': FDEs carry an augmentation length */
  int unknown_aug;  /* an augmentation we skipped (its meaning unknown) */
  int bad_personality; /* a personality pointer we cannot resolve */
  uint8_t lsda_enc; /* 'L' encoding, PE_OMIT without */
  uint8_t personality_enc;
  uint64_t personality;
  int signal_frame;
  uint64_t code_align, ra_reg;
  int64_t data_align;
  size_t program, program_end; /* the initial instructions: [program, program_end) */
} cie_info;

/* Opens the CIE or FDE whose length field is at OFF: C then covers its body
 * (C->end is its end) past the CIE id or CIE pointer, which *ID holds, read
 * at *ID_POS.  Returns NULL, or what is wrong: "" for the zero terminator. */
static const char *open_entry(const core_eh_frame *frame, size_t off, cursor *c, uint64_t *id, size_t *id_pos) {
  *c = (cursor){frame, off, frame->size, 0};
  uint64_t length = read_le(c, 4);
  unsigned id_size = 4;
  if (c->bad) return "truncated length";
  if (length == 0) return "";
  if (length == 0xffffffffu) {
    length = read_le(c, 8);
    id_size = 8;
    if (c->bad) return "truncated 64-bit length";
  }
  if (length > c->end - c->pos) return "entry runs past the section end";
  c->end = c->pos + (size_t)length;
  *id_pos = c->pos;
  *id = read_le(c, id_size);
  return c->bad ? "truncated CIE pointer" : NULL;
}

/* Parses the CIE whose length field is at OFF. Returns 0 on success. */
static int parse_cie(const core_eh_frame *frame, size_t off, cie_info *info) {
  cursor c;
  uint64_t id;
  size_t id_pos;
  if (open_entry(frame, off, &c, &id, &id_pos) || id != 0) return -1; /* CIE_id is 0 in .eh_frame */
  uint8_t version = (uint8_t)read_le(&c, 1);
  if (c.bad || (version != 1 && version != 3 && version != 4)) return -1;
  const char *aug = (const char *)frame->data + c.pos;
  size_t aug_len = strnlen(aug, c.end - c.pos);
  if (aug_len == c.end - c.pos) return -1;
  c.pos += aug_len + 1;
  if (strstr(aug, "eh")) read_le(&c, 8); /* old GNU "eh" data: one pointer */
  if (version == 4) read_le(&c, 2);      /* address_size, segment_selector_size */
  *info = (cie_info){.fde_enc = PE_ABSPTR, .lsda_enc = PE_OMIT, .personality_enc = PE_OMIT};
  info->code_align = read_uleb(&c);
  info->data_align = read_sleb(&c);
  if (version == 1)
    info->ra_reg = read_le(&c, 1); /* return address register */
  else
    info->ra_reg = read_uleb(&c);
  info->has_aug_data = aug[0] == 'z';
  info->program_end = c.end;
  if (c.bad) return -1;
  if (!info->has_aug_data) {
    info->program = c.pos;
    return aug_len == 0 || strcmp(aug, "eh") == 0 ? 0 : -1;
  }
  uint64_t aug_data_len = read_uleb(&c);
  if (c.bad || aug_data_len > c.end - c.pos) return -1;
  info->program = c.pos + (size_t)aug_data_len;
  c.end = c.pos + (size_t)aug_data_len; /* 'z' bounds whatever follows */
  for (const char *a = aug + 1; *a; a++) {
    switch (*a) {
    case 'R': info->fde_enc = (uint8_t)read_le(&c, 1); break;
    case 'L': info->lsda_enc = (uint8_t)read_le(&c, 1); break; /* the pointer is in each FDE */
    case 'P': {
      uint8_t penc = (uint8_t)read_le(&c, 1);
      info->personality_enc = penc;
      if (penc == PE_OMIT) break;
      if ((penc & PE_APPL_MASK) == PE_ALIGNED) { /* a pointer-aligned absptr */
        uint64_t field = frame->addr + c.pos;
        if (field % 8) read_le(&c, (unsigned)(8 - field % 8));
        info->personality = read_le(&c, 8);
      } else {
        /* resolved apart, so that discovery never fails on it: the address
         * of the routine, or of the slot holding it when PE_INDIRECT */
        cursor value = c;
        info->personality = read_encoded(&value, (uint8_t)(penc & ~PE_INDIRECT), 1);
        info->bad_personality = value.bad;
        read_encoded(&c, (uint8_t)(penc & ~PE_INDIRECT), 0);
      }
      break;
    }
    case 'S': info->signal_frame = 1; break;
    case 'B': case 'G': break; /* AArch64 flags: no data */
    default: info->unknown_aug = 1; return 0; /* the z length lets FDEs skip the rest */
    }
    if (c.bad) return -1; /* augmentation data shorter than it says */
  }
  return 0;
}

lp_status core_eh_frame_fdes(const core_eh_frame *frame, core_fde **out, size_t *count) {
  size_t n = 0, cap = 0;
  core_fde *fdes = NULL;
  size_t off = 0;
  const char *problem = NULL;
  /* One-entry cache: FDEs of one object usually share one CIE. */
  size_t cached_cie = (size_t)-1;
  cie_info cie = {0};

  while (off < frame->size) {
    cursor c;
    uint64_t id;
    size_t id_pos;
    if ((problem = open_entry(frame, off, &c, &id, &id_pos))) {
      if (!*problem) problem = NULL; /* the zero terminator */
      break;
    }
    size_t next = c.end;
    if (id != 0) { /* an FDE: id is the distance back to its CIE */
      if (id > id_pos) { problem = "CIE pointer out of the section"; break; }
      size_t cie_off = id_pos - (size_t)id;
      if (cie_off != cached_cie) {
        if (parse_cie(frame, cie_off, &cie) != 0) { problem = "bad CIE"; break; }
        cached_cie = cie_off;
      }
      uint64_t begin = read_encoded(&c, cie.fde_enc, 1);
      uint64_t range = read_encoded(&c, cie.fde_enc, 0);
      /* An encoding we cannot resolve only loses this FDE. */
      if (!c.bad && range != 0) {
        if (n == cap) {
          size_t ncap = cap ? 2 * cap : 256;
          core_fde *grown = realloc(fdes, ncap * sizeof *grown);
          if (!grown) { problem = "out of memory"; break; }
          fdes = grown;
          cap = ncap;
        }
        fdes[n].pc_begin = begin;
        fdes[n].pc_range = range;
        fdes[n].offset = off;
        n++;
      }
    }
    off = next;
  }
  *out = fdes;
  *count = n;
  if (problem) return lp_fail(".eh_frame at offset 0x%zx: %s", off, problem);
  return LP_OK;
}

/* {=== one FDE's call frame information ===*/

/* Fills OUT from the FDE whose length field is at OFF (its CIE at CIE_OFF). */
static lp_status read_cfi(const core_eh_frame *frame, size_t off, size_t body, size_t next,
                          size_t cie_off, core_cfi *out) {
  cie_info cie;
  if (parse_cie(frame, cie_off, &cie) != 0) return lp_fail(".eh_frame: bad CIE at offset 0x%zx", cie_off);
  if (cie.unknown_aug) return lp_fail(".eh_frame: CIE at offset 0x%zx has an unknown augmentation", cie_off);
  if (cie.bad_personality)
    return lp_fail(".eh_frame: CIE at offset 0x%zx: personality encoding 0x%x not resolved", cie_off,
                   cie.personality_enc);
  cursor c = {frame, body, next, 0};
  *out = (core_cfi){.fde_offset = off, .code_align = cie.code_align, .data_align = cie.data_align,
                    .ra_reg = cie.ra_reg, .signal_frame = cie.signal_frame != 0,
                    .personality_enc = cie.personality_enc, .personality = cie.personality,
                    .lsda_enc = cie.lsda_enc};
  out->pc_begin = read_encoded(&c, cie.fde_enc, 1);
  out->pc_range = read_encoded(&c, cie.fde_enc, 0);
  size_t program = c.pos;
  if (cie.has_aug_data) {
    uint64_t len = read_uleb(&c);
    if (c.bad || len > c.end - c.pos) return lp_fail(".eh_frame: bad FDE at offset 0x%zx", off);
    program = c.pos + (size_t)len;
    if (cie.lsda_enc != PE_OMIT && len > 0) {
      cursor l = {frame, c.pos, program, 0};
      out->lsda = read_encoded(&l, (uint8_t)(cie.lsda_enc & ~PE_INDIRECT), 1);
      if (l.bad || (cie.lsda_enc & PE_INDIRECT))
        return lp_fail(".eh_frame: FDE at offset 0x%zx: LSDA encoding 0x%x not resolved", off, cie.lsda_enc);
    }
  }
  if (c.bad) return lp_fail(".eh_frame: bad FDE at offset 0x%zx", off);
  out->cie_program = frame->data + cie.program;
  out->cie_program_size = cie.program_end - cie.program;
  out->fde_program = frame->data + program;
  out->fde_program_size = next - program;
  return LP_OK;
}

lp_status core_eh_frame_cfi(const core_eh_frame *frame, size_t offset, core_cfi *out) {
  cursor c;
  uint64_t id;
  size_t id_pos;
  if (open_entry(frame, offset, &c, &id, &id_pos) || id == 0 || id > id_pos)
    return lp_fail(".eh_frame: no FDE at offset 0x%zx", offset);
  return read_cfi(frame, offset, c.pos, c.end, id_pos - (size_t)id, out);
}

lp_status core_eh_frame_find(const core_eh_frame *frame, uint64_t pc, core_cfi *out) {
  core_fde *fdes;
  size_t n;
  (void)core_eh_frame_fdes(frame, &fdes, &n); /* the FDEs before any damage */
  size_t k = 0;
  while (k < n && !(pc >= fdes[k].pc_begin && pc - fdes[k].pc_begin < fdes[k].pc_range)) k++;
  size_t offset = k < n ? fdes[k].offset : 0;
  free(fdes);
  if (k == n) return lp_fail("no FDE covers 0x%" PRIx64, pc);
  return core_eh_frame_cfi(frame, offset, out);
}

/* }=== */

lp_status core_eh_frame_hdr_target(const uint8_t *hdr, size_t size, uint64_t addr,
                                   uint64_t *eh_frame_addr) {
  core_eh_frame frame = {hdr, size, addr, addr, 0}; /* datarel base: the header itself */
  cursor c = {&frame, 0, size, 0};
  uint8_t version = (uint8_t)read_le(&c, 1);
  uint8_t enc = (uint8_t)read_le(&c, 1);
  read_le(&c, 2); /* fde_count_enc, table_enc */
  if (c.bad || version != 1 || enc == PE_OMIT) return lp_fail(".eh_frame_hdr: unsupported header");
  uint64_t v = read_encoded(&c, enc, 1);
  if (c.bad) return lp_fail(".eh_frame_hdr: unsupported eh_frame_ptr encoding 0x%x", enc);
  *eh_frame_addr = v;
  return LP_OK;
}
