/* dwarf_line.c — one unit's line program (dwarf_line.h): the header (DWARF 5
 * §6.2.4, and DWARF 4's for versions 2 to 4), the directory and file tables,
 * then the state machine (§6.2.5) run over the opcodes, one row per copy,
 * special opcode and end_sequence. */
#include "dwarf_line.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#include "dwarf_read.h"

typedef struct header {
  int version;
  unsigned offset_size;  /* 4 (32-bit DWARF) or 8 */
  unsigned address_size; /* DWARF 5; before, DW_LNE_set_address says */
  uint8_t min_insn_length, max_ops, default_stmt, line_range, opcode_base;
  int8_t line_base;
  const uint8_t *opcode_lengths; /* of standard opcodes 1 .. opcode_base-1 */
} header;

/* {=== strings and forms ===*/

static void skip(dw_cursor *c, uint64_t n) {
  if (c->bad || (uint64_t)(c->end - c->p) < n) {
    c->bad = true;
    return;
  }
  c->p += n;
  c->addr += n;
}

/* A NUL-terminated string at the cursor. */
static const char *read_cstr(dw_cursor *c) {
  const uint8_t *nul = c->bad ? NULL : memchr(c->p, 0, (size_t)(c->end - c->p));
  if (!nul) {
    c->bad = true;
    return NULL;
  }
  const char *s = (const char *)c->p;
  skip(c, (uint64_t)(nul + 1 - c->p));
  return s;
}

/* The string at OFF of a string section, NULL when it is not one. */
static const char *section_str(const uint8_t *sec, size_t size, uint64_t off) {
  if (!sec || off >= size || !memchr(sec + off, 0, size - off)) return NULL;
  return (const char *)sec + off;
}

/* One value of a DWARF 5 directory or file entry: *STR for the string forms,
 * *NUM for the constants; other blocks and data are skipped.  False for a form
 * this reader does not know (or bytes that run out). */
static bool read_form(dw_cursor *c, const header *h, const dwarf_line_sections *s, uint64_t form,
                      const char **str, uint64_t *num) {
  *str = NULL;
  *num = 0;
  switch (form) {
  case DW_FORM_string: *str = read_cstr(c); break;
  case DW_FORM_line_strp:
  case DW_FORM_strp: {
    uint64_t off = dw_read_le(c, h->offset_size);
    *str = form == DW_FORM_line_strp ? section_str(s->line_str, s->line_str_size, off)
                                     : section_str(s->str, s->str_size, off);
    if (!*str) c->bad = true;
    break;
  }
  case DW_FORM_udata: *num = dw_read_uleb(c); break;
  case DW_FORM_data1: *num = dw_read_le(c, 1); break;
  case DW_FORM_data2: *num = dw_read_le(c, 2); break;
  case DW_FORM_data4: *num = dw_read_le(c, 4); break;
  case DW_FORM_data8: *num = dw_read_le(c, 8); break;
  case DW_FORM_data16: skip(c, 16); break;
  case DW_FORM_block: skip(c, dw_read_uleb(c)); break;
  case DW_FORM_block1: skip(c, dw_read_le(c, 1)); break;
  case DW_FORM_block2: skip(c, dw_read_le(c, 2)); break;
  case DW_FORM_block4: skip(c, dw_read_le(c, 4)); break;
  default: return false;
  }
  return !c->bad;
}

/* }=== */

/* {=== the file table ===*/

/* The tables being read: directories (pointers into the sections) and the
 * unit's files as dwarf_line.h says. */
typedef struct tables {
  const char **dirs;
  size_t ndirs, capdirs;
  dwarf_line_unit *unit;
  size_t capfiles;
  const char *comp_dir;
  int version;
} tables;

static bool add_dir(tables *t, const char *dir) {
  if (t->ndirs == t->capdirs) {
    size_t cap = t->capdirs ? 2 * t->capdirs : 16;
    const char **grown = realloc(t->dirs, cap * sizeof *grown);
    if (!grown) return false;
    t->dirs = grown;
    t->capdirs = cap;
  }
  t->dirs[t->ndirs++] = dir;
  return true;
}

static bool push_file(tables *t, char *path) {
  dwarf_line_unit *u = t->unit;
  if (!path) return false;
  if (u->nfiles == t->capfiles) {
    size_t cap = t->capfiles ? 2 * t->capfiles : 16;
    char **grown = realloc(u->files, cap * sizeof *grown);
    if (!grown) {
      free(path);
      return false;
    }
    u->files = grown;
    t->capfiles = cap;
  }
  u->files[u->nfiles++] = path;
  return true;
}

/* Adds NAME in directory DIR (an index into the directory table; before
 * DWARF 5, 0 is the comp_dir and k the k-th include directory). */
static lp_status add_file(tables *t, const char *name, uint64_t dir) {
  const char *d = NULL;
  if (t->version < 5 && dir == 0) {
    d = t->comp_dir;
  } else {
    uint64_t k = t->version < 5 ? dir - 1 : dir;
    if (k >= t->ndirs)
      return lp_fail("bad DWARF line table: directory %llu of %zu", (unsigned long long)dir, t->ndirs);
    d = t->dirs[k];
  }
  size_t nd = name[0] != '/' && d ? strlen(d) : 0, nn = strlen(name);
  char *path = malloc(nd + 1 + nn + 1);
  if (!path) return lp_fail("out of memory");
  if (nd) {
    memcpy(path, d, nd);
    path[nd++] = '/';
  }
  memcpy(path + nd, name, nn + 1);
  return push_file(t, path) ? LP_OK : lp_fail("out of memory");
}

/* DWARF 5: the entry formats, then COUNT entries of directories or files. */
static lp_status read_entries(dw_cursor *c, const header *h, const dwarf_line_sections *s, tables *t,
                              bool files) {
  uint64_t content[16], form[16];
  unsigned nformats = (unsigned)dw_read_le(c, 1);
  if (nformats > 16) return lp_fail("bad DWARF line table: %u entry formats", nformats);
  for (unsigned k = 0; k < nformats; k++) {
    content[k] = dw_read_uleb(c);
    form[k] = dw_read_uleb(c);
  }
  uint64_t count = dw_read_uleb(c);
  for (uint64_t i = 0; i < count && !c->bad; i++) {
    const char *path = NULL;
    uint64_t dir = 0;
    for (unsigned k = 0; k < nformats; k++) {
      const char *str;
      uint64_t num;
      if (!read_form(c, h, s, form[k], &str, &num)) {
        if (c->bad) break;
        return lp_fail("bad DWARF line table: form 0x%llx not known", (unsigned long long)form[k]);
      }
      if (content[k] == DW_LNCT_path) path = str;
      if (content[k] == DW_LNCT_directory_index) dir = num;
    }
    if (c->bad) break;
    if (!path) return lp_fail("bad DWARF line table: an entry without a path");
    if (files) LP_CHECK(add_file(t, path, dir));
    else if (!add_dir(t, path)) return lp_fail("out of memory");
  }
  return c->bad ? lp_fail("bad DWARF line table: header cut short") : LP_OK;
}

/* Before DWARF 5: include_directories, then file_names, each ended by an empty string. */
static lp_status read_old_tables(dw_cursor *c, tables *t) {
  for (const char *d; (d = read_cstr(c)) && *d;)
    if (!add_dir(t, d)) return lp_fail("out of memory");
  if (!push_file(t, strdup("???"))) return lp_fail("out of memory"); /* file 0, as libdw names it */
  for (const char *name; (name = read_cstr(c)) && *name;) {
    uint64_t dir = dw_read_uleb(c);
    dw_read_uleb(c); /* mtime */
    dw_read_uleb(c); /* length */
    if (!c->bad) LP_CHECK(add_file(t, name, dir));
  }
  return c->bad ? lp_fail("bad DWARF line table: header cut short") : LP_OK;
}

/* }=== */

/* {=== the header and the program ===*/

/* Reads the header at C (the unit's start) and the file tables; C is left
 * over the program: from its first opcode to the unit's end. */
static lp_status read_header(dw_cursor *c, const dwarf_line_sections *s, header *h, tables *t) {
  uint64_t length = dw_read_le(c, 4);
  h->offset_size = 4;
  if (length == 0xffffffff) {
    length = dw_read_le(c, 8);
    h->offset_size = 8;
  }
  if (c->bad || length > (uint64_t)(c->end - c->p)) return lp_fail("bad DWARF line table: unit past the section");
  c->end = c->p + length;
  h->version = (int)dw_read_le(c, 2);
  if (c->bad || h->version < 2 || h->version > 5)
    return lp_fail("bad DWARF line table: version %d", h->version);
  if (h->version >= 5) {
    h->address_size = (unsigned)dw_read_le(c, 1);
    dw_read_le(c, 1); /* segment_selector_size */
  }
  uint64_t header_length = dw_read_le(c, h->offset_size);
  if (c->bad || header_length > (uint64_t)(c->end - c->p)) return lp_fail("bad DWARF line table: header past the unit");
  const uint8_t *program = c->p + header_length;
  h->min_insn_length = (uint8_t)dw_read_le(c, 1);
  h->max_ops = h->version >= 4 ? (uint8_t)dw_read_le(c, 1) : 1;
  h->default_stmt = (uint8_t)dw_read_le(c, 1);
  h->line_base = (int8_t)dw_read_le(c, 1);
  h->line_range = (uint8_t)dw_read_le(c, 1);
  h->opcode_base = (uint8_t)dw_read_le(c, 1);
  if (c->bad || h->max_ops == 0 || h->line_range == 0 || h->opcode_base == 0)
    return lp_fail("bad DWARF line table: header fields (line_range %u, opcode_base %u, max_ops %u)",
                   h->line_range, h->opcode_base, h->max_ops);
  h->opcode_lengths = c->p;
  skip(c, h->opcode_base - 1u);
  dw_cursor tc = {c->p, program, 0, c->bad}; /* the tables end where the program begins */
  t->version = h->version;
  LP_CHECK(h->version >= 5 ? read_entries(&tc, h, s, t, false) : LP_OK);
  LP_CHECK(h->version >= 5 ? read_entries(&tc, h, s, t, true) : read_old_tables(&tc, t));
  c->p = program;
  return LP_OK;
}

typedef struct machine {
  dwarf_line_row r;
  uint64_t op_index;
  int64_t line;
} machine;

static void reset(machine *m, const header *h) {
  *m = (machine){.r = {.file = 1, .stmt = h->default_stmt != 0}, .line = 1};
}

/* Advances the address by ADV operations (VLIW: max_ops per instruction). */
static void advance(machine *m, const header *h, uint64_t adv) {
  if (h->max_ops == 1) {
    m->r.addr += h->min_insn_length * adv;
  } else {
    m->r.addr += h->min_insn_length * ((m->op_index + adv) / h->max_ops);
    m->op_index = (m->op_index + adv) % h->max_ops;
  }
}

static lp_status emit(machine *m, lp_status (*row)(void *, const dwarf_line_row *), void *ctx) {
  m->r.line = m->line > 0 && m->line <= UINT32_MAX ? (uint32_t)m->line : 0;
  return row(ctx, &m->r);
}

/* One extended opcode (after its 0): its length, sub-opcode and operands. */
static lp_status extended(dw_cursor *c, const header *h, machine *m, tables *t,
                          lp_status (*row)(void *, const dwarf_line_row *), void *ctx) {
  uint64_t len = dw_read_uleb(c);
  if (c->bad || len == 0 || len > (uint64_t)(c->end - c->p)) return lp_fail("bad DWARF line table: extended opcode cut short");
  const uint8_t *next = c->p + len;
  uint8_t sub = (uint8_t)dw_read_le(c, 1);
  switch (sub) {
  case DW_LNE_end_sequence:
    m->r.end_sequence = true;
    LP_CHECK(emit(m, row, ctx));
    reset(m, h);
    break;
  case DW_LNE_set_address:
    if (len - 1 == 0 || len - 1 > 8 || (h->address_size && len - 1 != h->address_size))
      return lp_fail("bad DWARF line table: a %llu-byte address", (unsigned long long)(len - 1));
    m->r.addr = dw_read_le(c, (unsigned)(len - 1));
    m->op_index = 0;
    break;
  case DW_LNE_define_file: { /* before DWARF 5: a file entry in the program */
    const char *name = read_cstr(c);
    uint64_t dir = dw_read_uleb(c);
    if (name && !c->bad) LP_CHECK(add_file(t, name, dir));
    break;
  }
  default: break; /* set_discriminator, vendor opcodes: nothing a row keeps */
  }
  if (c->bad) return lp_fail("bad DWARF line table: extended opcode cut short");
  c->addr += (uint64_t)(next - c->p);
  c->p = next;
  return LP_OK;
}

static lp_status run(dw_cursor *c, const header *h, tables *t,
                     lp_status (*row)(void *, const dwarf_line_row *), void *ctx) {
  machine m;
  reset(&m, h);
  const uint64_t const_add = (255u - h->opcode_base) / h->line_range;
  /* what each special opcode advances, divided out once per unit: most rows
   * come from one, and a division is ~10 times an addition's cycles */
  uint8_t special_ops[256];
  int16_t special_line[256];
  for (unsigned op = h->opcode_base; op < 256; op++) {
    special_ops[op] = (uint8_t)((op - h->opcode_base) / h->line_range);
    special_line[op] = (int16_t)(h->line_base + (int)((op - h->opcode_base) % h->line_range));
  }
  while (c->p < c->end) {
    uint8_t op = (uint8_t)dw_read_le(c, 1);
    if (op >= h->opcode_base) { /* special: advance address and line, then a row */
      advance(&m, h, special_ops[op]);
      m.line += special_line[op];
      LP_CHECK(emit(&m, row, ctx));
      continue;
    }
    switch (op) {
    case 0: LP_CHECK(extended(c, h, &m, t, row, ctx)); break;
    case DW_LNS_copy: LP_CHECK(emit(&m, row, ctx)); break;
    case DW_LNS_advance_pc: advance(&m, h, dw_read_uleb(c)); break;
    case DW_LNS_advance_line: m.line += dw_read_sleb(c); break;
    case DW_LNS_set_file: m.r.file = (uint32_t)dw_read_uleb(c); break;
    case DW_LNS_negate_stmt: m.r.stmt = !m.r.stmt; break;
    case DW_LNS_const_add_pc: advance(&m, h, const_add); break;
    case DW_LNS_fixed_advance_pc:
      m.r.addr += dw_read_le(c, 2);
      m.op_index = 0;
      break;
    default: /* set_column, set_isa and opcodes this reader does not know: skip their operands */
      for (unsigned k = 0; k < h->opcode_lengths[op - 1]; k++) dw_read_uleb(c);
      break;
    }
    if (c->bad) return lp_fail("bad DWARF line table: program cut short");
  }
  return LP_OK;
}

/* }=== */

lp_status dwarf_line_read(const dwarf_line_sections *s, uint64_t offset, const char *comp_dir,
                          dwarf_line_unit *unit, lp_status (*row)(void *ctx, const dwarf_line_row *r),
                          void *ctx) {
  memset(unit, 0, sizeof *unit);
  if (!s->line || offset >= s->line_size) return lp_fail("bad DWARF line table: no unit at 0x%llx", (unsigned long long)offset);
  dw_cursor c = {s->line + offset, s->line + s->line_size, 0, false};
  header h = {0};
  tables t = {.unit = unit, .comp_dir = comp_dir};
  lp_status st = read_header(&c, s, &h, &t);
  if (st == LP_OK) st = run(&c, &h, &t, row, ctx);
  free(t.dirs);
  return st;
}

void dwarf_line_unit_free(dwarf_line_unit *unit) {
  for (size_t i = 0; i < unit->nfiles; i++) free(unit->files[i]);
  free(unit->files);
  memset(unit, 0, sizeof *unit);
}
