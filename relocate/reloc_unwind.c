/* reloc_unwind.c — the .eh_frame fragment of a copy (reloc_unwind.h).
 *
 * The original CFA program (the CIE's initial instructions, then the FDE's)
 * is interpreted into rows: from each location on, the CFA rule, every
 * register's rule and the GNU args size.  The copy's program is written
 * again from those rows along the origin map, as differences from the row
 * before (advance, then the CFA, the registers that changed, the args size),
 * a register back at its initial rule by DW_CFA_restore; inside a probe's
 * save a CFA computed from rsp gets the bytes rsp is lower there
 * (reloc_origin.sp_below; a CFA by expression is left as it is).  The CIE keeps the
 * original factors and initial instructions (copied as they are), with code
 * alignment 1 for the new advances.  The LSDA is reloc_lsda.c's.  The same
 * rows answer two questions about the original: does its frame start as a
 * call leaves it (reloc_cfi_starts_called), and is it gone at an address
 * (reloc_cfi_returns_from: an indirect jmp there is a tail call). */
#include <inttypes.h>
#include <string.h>

#include "reloc_dwarf.h"

/* {=== rows: the interpreted CFA program ===*/

#define NREGS 33 /* x86-64 DWARF numbers: 0-15 general, 16 return address, 17-32 xmm */
#define MAX_REMEMBERED 16
#define DWARF_RSP 7

enum { RULE_NONE, RULE_UNDEFINED, RULE_SAME, RULE_OFFSET, RULE_VAL_OFFSET, RULE_REGISTER,
       RULE_EXPR, RULE_VAL_EXPR };

/* 16 bytes: a row holds one per register, and rows are copied often.  No
 * padding (ZERO stands in it): two rows' registers with the same bytes have
 * the same rules, a memcmp tells (put_program). */
typedef struct rule {
  const uint8_t *expr;    /* EXPR, VAL_EXPR: the block (points into the program) */
  int32_t n;              /* OFFSET, VAL_OFFSET: bytes from the CFA; REGISTER: the register */
  uint16_t len;           /* of expr */
  uint8_t kind;
  uint8_t zero;
} rule;

/* A rule, or *TOO_BIG when N or LEN does not fit its field. */
static rule make_rule(uint8_t kind, int64_t n, const uint8_t *expr, uint64_t len, bool *too_big) {
  if (n != (int32_t)n || len > UINT16_MAX) *too_big = true;
  return (rule){expr, (int32_t)n, (uint16_t)len, kind, 0};
}

typedef struct frame_state {
  bool cfa_expr;          /* CFA by expression (cfa.expr), else register + offset */
  uint64_t cfa_reg;
  int64_t cfa_off;
  rule cfa;               /* cfa.expr/len when cfa_expr */
  rule regs[NREGS];
  uint64_t args_size;
} frame_state;

typedef struct row {
  uint64_t loc;           /* run-time address from which state holds */
  frame_state state;
} row;

typedef struct interp {
  const reloc_cfi *cfi;
  bool first_row_only;    /* stop once the first row is known (its location passed) */
  frame_state init;       /* after the CIE's initial instructions */
  row *rows;
  size_t nrows, cap;
} interp;

static bool same_rule(const rule *a, const rule *b) {
  if (a->kind != b->kind) return false;
  if (a->kind == RULE_EXPR || a->kind == RULE_VAL_EXPR)
    return a->len == b->len && !memcmp(a->expr, b->expr, a->len);
  return a->n == b->n;
}

static bool same_cfa(const frame_state *a, const frame_state *b) {
  if (a->cfa_expr != b->cfa_expr) return false;
  if (a->cfa_expr) return same_rule(&a->cfa, &b->cfa);
  return a->cfa_reg == b->cfa_reg && a->cfa_off == b->cfa_off;
}

static lp_status push_row(interp *in, uint64_t loc, const frame_state *s) {
  if (in->nrows && in->rows[in->nrows - 1].loc == loc) { /* an advance by 0 */
    in->rows[in->nrows - 1].state = *s;
    return LP_OK;
  }
  if (in->nrows == in->cap) {
    size_t cap = in->cap ? 2 * in->cap : 16;
    row *grown = realloc(in->rows, cap * sizeof *grown);
    if (!grown) return lp_fail("out of memory");
    in->rows = grown;
    in->cap = cap;
  }
  in->rows[in->nrows++] = (row){loc, *s};
  return LP_OK;
}

/* Runs PROGRAM on S from LOC; rows are recorded only when IN is given (the
 * FDE), the CIE's initial instructions may not advance. */
static lp_status run_program(interp *in, const uint8_t *program, size_t size, frame_state *s,
                             bool fde) {
  const reloc_cfi *cfi = in->cfi;
  dw_cursor c = {program, program + size, 0, false};
  frame_state remembered[MAX_REMEMBERED];
  size_t nremembered = 0;
  bool too_big = false;
  uint64_t loc = cfi->pc_begin;
  while (c.p < c.end && !c.bad) {
    uint8_t op = (uint8_t)dw_read_le(&c, 1);
    uint64_t reg = op & 0x3f, delta = 0;
    bool advance = false;
    switch (op & 0xc0) {
    case 0x40: delta = op & 0x3f; advance = true; break; /* DW_CFA_advance_loc */
    case 0x80: op = 0x05; break;                          /* DW_CFA_offset, as offset_extended */
    case 0xc0: op = 0x06; break;                          /* DW_CFA_restore, as restore_extended */
    default:
      switch (op) {
      case 0x02: delta = dw_read_le(&c, 1); advance = true; break; /* advance_loc1 */
      case 0x03: delta = dw_read_le(&c, 2); advance = true; break; /* advance_loc2 */
      case 0x04: delta = dw_read_le(&c, 4); advance = true; break; /* advance_loc4 */
      case 0x05: case 0x06: case 0x07: case 0x08: case 0x09: case 0x10: case 0x11: case 0x14:
      case 0x15: case 0x16: case 0x2f:
        reg = dw_read_uleb(&c); /* the operations naming a register first */
        break;
      default: break;
      }
    }
    if (advance) {
      if (!fde) return lp_fail("CIE initial instructions advance the location");
      LP_CHECK(push_row(in, loc, s));
      if (in->first_row_only && delta) return LP_OK;
      loc += delta * cfi->code_align;
      continue;
    }
    bool names_reg = op == 0x05 || op == 0x06 || op == 0x07 || op == 0x08 || op == 0x09 ||
                     op == 0x10 || op == 0x11 || op == 0x14 || op == 0x15 || op == 0x16 || op == 0x2f;
    if (names_reg && reg >= NREGS) return lp_fail("CFA operation 0x%02x names register %" PRIu64, op, reg);
    rule *r = names_reg ? &s->regs[reg] : NULL;
    switch (op) {
    case 0x00: break; /* DW_CFA_nop */
    case 0x05: *r = make_rule(RULE_OFFSET, (int64_t)dw_read_uleb(&c) * cfi->data_align, NULL, 0, &too_big); break;
    case 0x06: *r = in->init.regs[reg]; break;
    case 0x07: *r = make_rule(RULE_UNDEFINED, 0, NULL, 0, &too_big); break;
    case 0x08: *r = make_rule(RULE_SAME, 0, NULL, 0, &too_big); break;
    case 0x09: *r = make_rule(RULE_REGISTER, (int64_t)dw_read_uleb(&c), NULL, 0, &too_big); break;
    case 0x0a: /* DW_CFA_remember_state */
      if (nremembered == MAX_REMEMBERED) return lp_fail("CFA remember_state nested too deep");
      remembered[nremembered++] = *s;
      break;
    case 0x0b: { /* DW_CFA_restore_state: the CFA and registers, not the args size (as libgcc) */
      if (!nremembered) return lp_fail("CFA restore_state without remember_state");
      uint64_t args = s->args_size;
      *s = remembered[--nremembered];
      s->args_size = args;
      break;
    }
    case 0x0c: /* DW_CFA_def_cfa */
      s->cfa_expr = false;
      s->cfa_reg = dw_read_uleb(&c);
      s->cfa_off = (int64_t)dw_read_uleb(&c);
      break;
    case 0x0d: s->cfa_expr = false, s->cfa_reg = dw_read_uleb(&c); break; /* def_cfa_register */
    case 0x0e: s->cfa_expr = false, s->cfa_off = (int64_t)dw_read_uleb(&c); break; /* def_cfa_offset */
    case 0x0f: case 0x10: case 0x16: { /* def_cfa_expression, expression, val_expression */
      uint64_t len = dw_read_uleb(&c);
      if (c.bad || len > (uint64_t)(c.end - c.p)) return lp_fail("CFA expression runs past its program");
      rule e = make_rule(op == 0x16 ? RULE_VAL_EXPR : RULE_EXPR, 0, c.p, len, &too_big);
      c.p += len;
      if (op == 0x0f) s->cfa_expr = true, s->cfa = e;
      else *r = e;
      break;
    }
    case 0x11: *r = make_rule(RULE_OFFSET, dw_read_sleb(&c) * cfi->data_align, NULL, 0, &too_big); break;
    case 0x12: /* DW_CFA_def_cfa_sf */
      s->cfa_expr = false;
      s->cfa_reg = dw_read_uleb(&c);
      s->cfa_off = dw_read_sleb(&c) * cfi->data_align;
      break;
    case 0x13: s->cfa_expr = false, s->cfa_off = dw_read_sleb(&c) * cfi->data_align; break;
    case 0x14:
      *r = make_rule(RULE_VAL_OFFSET, (int64_t)dw_read_uleb(&c) * cfi->data_align, NULL, 0, &too_big);
      break;
    case 0x15: *r = make_rule(RULE_VAL_OFFSET, dw_read_sleb(&c) * cfi->data_align, NULL, 0, &too_big); break;
    case 0x2e: s->args_size = dw_read_uleb(&c); break; /* DW_CFA_GNU_args_size */
    case 0x2f:
      *r = make_rule(RULE_OFFSET, -(int64_t)dw_read_uleb(&c) * cfi->data_align, NULL, 0, &too_big);
      break;
    default: return lp_fail("CFA operation 0x%02x not handled", op);
    }
  }
  if (c.bad) return lp_fail("CFA program truncated");
  if (too_big) return lp_fail("CFA offset or expression too large");
  return fde ? push_row(in, loc, s) : LP_OK;
}

/* The index of the row holding at ADDR (the last whose loc <= ADDR; the first
 * before it).  HINT, the answer for the previous address, is tried first:
 * the copy's instructions come mostly in address order. */
static size_t row_at(const interp *in, uint64_t addr, size_t hint) {
  if (hint < in->nrows && in->rows[hint].loc <= addr && (hint + 1 == in->nrows || in->rows[hint + 1].loc > addr))
    return hint;
  size_t lo = 0, hi = in->nrows;
  while (lo + 1 < hi) {
    size_t mid = (lo + hi) / 2;
    if (in->rows[mid].loc <= addr) lo = mid;
    else hi = mid;
  }
  return lo;
}

/* }=== */

/* {=== writing the copy's program ===*/

static void put_advance(dw_buf *o, uint64_t delta) {
  if (delta == 0) return;
  if (delta < 0x40) dw_u8(o, (uint8_t)(0x40 | delta));
  else if (delta <= 0xff) dw_u8(o, 0x02), dw_le(o, delta, 1);
  else if (delta <= 0xffff) dw_u8(o, 0x03), dw_le(o, delta, 2);
  else dw_u8(o, 0x04), dw_le(o, delta, 4);
}

static lp_status put_cfa(dw_buf *o, const frame_state *from, const frame_state *to, int64_t data_align) {
  if (same_cfa(from, to)) return LP_OK;
  if (to->cfa_expr) {
    dw_u8(o, 0x0f), dw_uleb(o, to->cfa.len), dw_put(o, to->cfa.expr, to->cfa.len);
  } else if (to->cfa_off < 0) {
    if (to->cfa_off % data_align) return lp_fail("CFA offset %" PRId64 " not expressible", to->cfa_off);
    dw_u8(o, 0x12), dw_uleb(o, to->cfa_reg), dw_sleb(o, to->cfa_off / data_align);
  } else if (from->cfa_expr || (from->cfa_reg != to->cfa_reg && from->cfa_off != to->cfa_off)) {
    dw_u8(o, 0x0c), dw_uleb(o, to->cfa_reg), dw_uleb(o, (uint64_t)to->cfa_off);
  } else if (from->cfa_reg != to->cfa_reg) {
    dw_u8(o, 0x0d), dw_uleb(o, to->cfa_reg);
  } else {
    dw_u8(o, 0x0e), dw_uleb(o, (uint64_t)to->cfa_off);
  }
  return LP_OK;
}

static lp_status put_rule(dw_buf *o, uint64_t reg, const rule *r, const rule *init, int64_t data_align) {
  if (same_rule(r, init)) {
    if (reg < 0x40) dw_u8(o, (uint8_t)(0xc0 | reg));
    else dw_u8(o, 0x06), dw_uleb(o, reg);
    return LP_OK;
  }
  if ((r->kind == RULE_OFFSET || r->kind == RULE_VAL_OFFSET) && r->n % data_align)
    return lp_fail("offset %" PRId32 " of register %" PRIu64 " not expressible", r->n, reg);
  int64_t factored = r->kind == RULE_OFFSET || r->kind == RULE_VAL_OFFSET ? r->n / data_align : 0;
  switch (r->kind) {
  case RULE_UNDEFINED: dw_u8(o, 0x07), dw_uleb(o, reg); break;
  case RULE_SAME: dw_u8(o, 0x08), dw_uleb(o, reg); break;
  case RULE_OFFSET:
    if (reg < 0x40 && factored >= 0) dw_u8(o, (uint8_t)(0x80 | reg)), dw_uleb(o, (uint64_t)factored);
    else dw_u8(o, 0x11), dw_uleb(o, reg), dw_sleb(o, factored);
    break;
  case RULE_VAL_OFFSET: dw_u8(o, 0x15), dw_uleb(o, reg), dw_sleb(o, factored); break;
  case RULE_REGISTER: dw_u8(o, 0x09), dw_uleb(o, reg), dw_uleb(o, (uint64_t)r->n); break;
  case RULE_EXPR: case RULE_VAL_EXPR:
    dw_u8(o, r->kind == RULE_EXPR ? 0x10 : 0x16), dw_uleb(o, reg), dw_uleb(o, r->len);
    dw_put(o, r->expr, r->len);
    break;
  default: return lp_fail("register %" PRIu64 " loses its rule: not expressible", reg);
  }
  return LP_OK;
}

/* The copy's FDE program: the rows along the origin map. */
static lp_status put_program(dw_buf *o, const interp *in, const reloc_origin *origins, size_t norigins) {
  frame_state cur = in->init;
  uint64_t at = 0; /* offset the program has reached */
  uint64_t lo = in->cfi->pc_begin, hi = lo + in->cfi->pc_range;
  const frame_state *last = NULL; /* the row cur was last compared with, and its sp_below */
  uint32_t last_below = 0;
  size_t hint = 0;
  for (size_t k = 0; k < norigins; k++) {
    uint64_t orig = origins[k].orig;
    if (orig == RELOC_ORIGIN_DATA || orig < lo || orig > hi) continue; /* keeps the state before */
    hint = row_at(in, orig, hint);
    const frame_state *s = &in->rows[hint].state;
    if (s == last && origins[k].sp_below == last_below) continue; /* the same state again */
    last = s;
    last_below = origins[k].sp_below;
    frame_state below;
    if (origins[k].sp_below && !s->cfa_expr && s->cfa_reg == DWARF_RSP) { /* inside a probe's save */
      below = *s;
      below.cfa_off += origins[k].sp_below;
      s = &below;
    }
    uint64_t differ = 0; /* the registers whose rules differ, by bit (most changes are the CFA's) */
    if (memcmp(cur.regs, s->regs, sizeof cur.regs))
      for (size_t r = 0; r < NREGS; r++) differ |= (uint64_t)!same_rule(&cur.regs[r], &s->regs[r]) << r;
    if (!differ && s->args_size == cur.args_size && same_cfa(&cur, s)) continue;
    put_advance(o, origins[k].offset - at);
    at = origins[k].offset;
    LP_CHECK(put_cfa(o, &cur, s, in->cfi->data_align));
    for (size_t r = 0; r < NREGS; r++)
      if (differ >> r & 1) LP_CHECK(put_rule(o, r, &s->regs[r], &in->init.regs[r], in->cfi->data_align));
    if (s->args_size != cur.args_size) dw_u8(o, 0x2e), dw_uleb(o, s->args_size);
    cur = *s;
  }
  return LP_OK;
}

/* }=== */

/* Pads entry [start, o->n) with DW_CFA_nop to a multiple of 8 bytes and fills
 * in its 4-byte length. */
static void close_entry(dw_buf *o, size_t start) {
  while ((o->n - start) % 8) dw_u8(o, 0x00);
  if (o->failed) return;
  uint64_t length = o->n - start - 4;
  for (unsigned i = 0; i < 4; i++) o->b[start + i] = (uint8_t)(length >> (8 * i));
}

/* Runs the CIE's and the FDE's programs into IN (rows, init). */
static lp_status interpret(interp *in) {
  const reloc_cfi *cfi = in->cfi;
  if (cfi->code_align == 0 || cfi->data_align == 0) return lp_fail("CIE with a zero alignment factor");
  frame_state init = {0};
  LP_CHECK(run_program(in, cfi->cie_program, cfi->cie_program_size, &init, false));
  in->init = init;
  return run_program(in, cfi->fde_program, cfi->fde_program_size, &init, true);
}

bool reloc_cfi_starts_called(const reloc_cfi *cfi) {
  interp in = {.cfi = cfi, .first_row_only = true}; /* every function's, when its stubs are written */
  bool called = true; /* what cannot be read proves nothing */
  if (interpret(&in) == LP_OK && in.nrows) {
    const frame_state *s = &in.rows[0].state;
    if (!s->cfa_expr) called = s->cfa_reg == DWARF_RSP && s->cfa_off == 8;
    for (uint64_t r = 0; r < NREGS && called; r++)
      if (r != cfi->ra_reg && (s->regs[r].kind == RULE_OFFSET || s->regs[r].kind == RULE_VAL_OFFSET ||
                               s->regs[r].kind == RULE_REGISTER || s->regs[r].kind == RULE_EXPR))
        called = false;
  }
  free(in.rows);
  return called;
}

bool reloc_cfi_returns_from(const reloc_cfi *cfi, uint64_t addr) {
  interp in = {.cfi = cfi};
  bool gone = false; /* what cannot be read proves nothing */
  if (interpret(&in) == LP_OK) {
    const frame_state *s = NULL;
    for (size_t k = 0; k < in.nrows && in.rows[k].loc <= addr; k++) s = &in.rows[k].state;
    gone = s && !s->cfa_expr && s->cfa_reg == DWARF_RSP && s->cfa_off == 8;
  }
  free(in.rows);
  return gone;
}

/* The fragment for a copy at DEST of COPY_SIZE bytes with the origin map
 * ORIGINS; PLAN translates the LSDA (NULL: CFI has none). */
static lp_status build(const reloc_plan *plan, const reloc_origin *origins, size_t norigins, size_t copy_size,
                       const reloc_cfi *cfi, uint64_t dest, reloc_unwind *out) {
  *out = (reloc_unwind){0};
  interp in = {.cfi = cfi};
  dw_buf eh = {0}, lsda = {0};
  lp_status st = interpret(&in);
  if (st == LP_OK && cfi->lsda)
    st = reloc_lsda_translate(plan, cfi, dest, &lsda, &out->landing_pads_in_original);
  if (st != LP_OK) goto fail;

  bool personality = cfi->personality_enc != PE_OMIT;

  /* the CIE */
  dw_le(&eh, 0, 4);                   /* length, filled by close_entry */
  dw_le(&eh, 0, 4);                   /* CIE id */
  dw_u8(&eh, 1);                      /* version */
  dw_put(&eh, "z", 1);
  if (personality) dw_put(&eh, "P", 1);
  if (cfi->lsda) dw_put(&eh, "L", 1);
  dw_put(&eh, "R", 1);
  if (cfi->signal_frame) dw_put(&eh, "S", 1);
  dw_u8(&eh, 0);
  dw_uleb(&eh, 1);                    /* code alignment: advances in bytes */
  dw_sleb(&eh, cfi->data_align);      /* kept: the initial instructions are copied */
  if (cfi->ra_reg > 0xff) {
    st = lp_fail("return address register %" PRIu64 " does not fit a version 1 CIE", cfi->ra_reg);
    goto fail;
  }
  dw_u8(&eh, (uint8_t)cfi->ra_reg);
  dw_uleb(&eh, (personality ? 9 : 0) + (cfi->lsda ? 1 : 0) + 1);
  if (personality) {
    dw_u8(&eh, (uint8_t)((cfi->personality_enc & PE_INDIRECT) | PE_ABSPTR));
    dw_le(&eh, cfi->personality, 8);
  }
  if (cfi->lsda) dw_u8(&eh, PE_ABSPTR);
  dw_u8(&eh, PE_ABSPTR);              /* 'R': pc_begin and pc_range as 8-byte values */
  dw_put(&eh, cfi->cie_program, cfi->cie_program_size);
  close_entry(&eh, 0);

  /* the FDE */
  size_t fde = eh.n;
  dw_le(&eh, 0, 4);                   /* length */
  dw_le(&eh, fde + 4, 4);             /* CIE pointer: back from this field to the CIE */
  dw_le(&eh, dest, 8);
  dw_le(&eh, copy_size, 8);
  dw_uleb(&eh, cfi->lsda ? 8 : 0);
  out->lsda_field = eh.n;
  if (cfi->lsda) dw_le(&eh, 0, 8);    /* reloc_unwind_place_lsda */
  st = put_program(&eh, &in, origins, norigins);
  if (st != LP_OK) goto fail;
  close_entry(&eh, fde);
  dw_le(&eh, 0, 4);                   /* the terminator */
  if (eh.failed || lsda.failed) {
    st = lp_fail("out of memory");
    goto fail;
  }
  free(in.rows);
  out->eh = eh.b;
  out->eh_size = eh.n;
  out->lsda = lsda.b;
  out->lsda_size = lsda.n;
  return LP_OK;
fail:
  free(in.rows);
  free(eh.b);
  free(lsda.b);
  *out = (reloc_unwind){0};
  return lp_context("unwind information for the copy of 0x%" PRIx64, cfi->pc_begin);
}

void reloc_unwind_place_lsda(reloc_unwind *u, uint64_t lsda_addr) {
  if (!u->lsda) return;
  for (unsigned i = 0; i < 8; i++) u->eh[u->lsda_field + i] = (uint8_t)(lsda_addr >> (8 * i));
}

lp_status reloc_unwind_build(const reloc_plan *plan, const reloc_cfi *cfi, uint64_t dest, reloc_unwind *out) {
  size_t norigins;
  const reloc_origin *origins = reloc_origins(plan, &norigins);
  return build(plan, origins, norigins, reloc_copy_size(plan), cfi, dest, out);
}

lp_status reloc_unwind_build_later(const reloc_origin *origins, size_t norigins, size_t copy_size,
                                   const reloc_cfi *cfi, uint64_t dest, reloc_unwind *out) {
  if (cfi->lsda) {
    *out = (reloc_unwind){0};
    return lp_fail("an LSDA is translated with the plan");
  }
  return build(NULL, origins, norigins, copy_size, cfi, dest, out);
}

void reloc_unwind_free(reloc_unwind *u) {
  free(u->eh);
  free(u->lsda);
  *u = (reloc_unwind){0};
}
