/* reloc_lsda.c — the copy's LSDA: gcc's C++ exception table
 * (.gcc_except_table, read by libstdc++'s __gxx_personality_v0) with its
 * call sites moved to the copy.
 *
 * The format (libstdc++ eh_personality.cc, parse_lsda_header): LPStart
 * encoding and value (omitted: the region start); TType encoding and, when
 * present, the uleb128 distance to the type table's base; the call-site
 * encoding and table length; records (start, length, landing pad, action),
 * start relative to the region start, the landing pad to LPStart (0: none);
 * then the action table (sleb128 filter, sleb128 self-relative next), the
 * type table growing down from its base (filter N is the N-th entry below
 * it) and, from the base up, the exception specifications (uleb128 type
 * indices ending at 0, found at base - filter - 1 for a negative filter).
 *
 * The copy's table: LPStart 0 (absptr), so that every landing pad is an
 * absolute address (the copy's, or the original's when not copied); call
 * sites as uleb128 offsets from the copy's start, one record per run of the
 * copy whose origins (reloc_origins) fall in the same original record, in
 * copy order; the action table and exception specifications copied as they
 * are (their offsets are relative to themselves or to the tables); type
 * entries re-encoded absptr, indirect kept.  A byte of the original outside
 * every record stays outside (the personality calls terminate there).
 *
 * The landing pads (reloc_lsda_pads) are decode roots of the function they
 * lie in (reloc_function.c): entered only by the unwinder, no branch reaches
 * them; one in a function's first 5 bytes (reloc_cfi_pad_in) keeps a jmp off
 * its entry (core/breaks.c). */
#include <inttypes.h>

#include "reloc_dwarf.h"

typedef struct call_site {
  uint64_t start, len, lp, action;
} call_site;

#define MAX_ACTION_CHAIN 4096

typedef struct lsda {
  uint64_t lpstart;
  uint8_t ttype_enc;
  const uint8_t *ttype;      /* the type table's base, NULL without */
  uint64_t ttype_addr;
  const uint8_t *actions;    /* the action table */
  const uint8_t *actions_end;/* past the last action record used */
  const uint8_t *specs_end;  /* past the last exception specification used (>= ttype) */
  uint64_t ntypes;           /* highest type index used */
  call_site *sites;
  size_t nsites;
} lsda;

static lp_status parse_header(const reloc_cfi *cfi, dw_cursor *c, lsda *l) {
  uint8_t lpstart_enc = (uint8_t)dw_read_le(c, 1);
  l->lpstart = cfi->pc_begin;
  if (lpstart_enc != PE_OMIT) {
    if (lpstart_enc & PE_INDIRECT) c->bad = true;
    l->lpstart = dw_read_pe(c, lpstart_enc);
  }
  l->ttype_enc = (uint8_t)dw_read_le(c, 1);
  if (l->ttype_enc != PE_OMIT) {
    uint64_t off = dw_read_uleb(c);
    if (c->bad || off > (uint64_t)(c->end - c->p)) return lp_fail("LSDA type table out of bounds");
    l->ttype = c->p + off;
    l->ttype_addr = c->addr + off;
    l->specs_end = l->ttype;
    if (!dw_pe_size(l->ttype_enc)) return lp_fail("LSDA type encoding 0x%x not handled", l->ttype_enc);
  }
  uint8_t cs_enc = (uint8_t)dw_read_le(c, 1);
  uint64_t cs_len = dw_read_uleb(c);
  if (c->bad || cs_len > (uint64_t)(c->end - c->p)) return lp_fail("LSDA call-site table out of bounds");
  if (cs_enc & (PE_APPL_MASK | PE_INDIRECT)) return lp_fail("LSDA call-site encoding 0x%x not handled", cs_enc);
  dw_cursor cs = {c->p, c->p + cs_len, c->addr, false};
  l->actions = l->actions_end = c->p + cs_len;
  size_t cap = 0;
  while (cs.p < cs.end && !cs.bad) {
    call_site s;
    s.start = dw_read_pe(&cs, cs_enc);
    s.len = dw_read_pe(&cs, cs_enc);
    s.lp = dw_read_pe(&cs, cs_enc);
    s.action = dw_read_uleb(&cs);
    if (l->nsites == cap) {
      cap = cap ? 2 * cap : 16;
      call_site *grown = realloc(l->sites, cap * sizeof *grown);
      if (!grown) return lp_fail("out of memory");
      l->sites = grown;
    }
    l->sites[l->nsites++] = s;
  }
  if (cs.bad) return lp_fail("LSDA call-site table truncated");
  return LP_OK;
}

/* Follows the action chain starting at ACTION (1-based) to find how far the
 * action table, the type table and the exception specifications reach. */
static lp_status measure_actions(lsda *l, const dw_cursor *whole, uint64_t action) {
  if (!action) return LP_OK;
  if (action - 1 > (uint64_t)(whole->end - l->actions)) return lp_fail("LSDA action out of bounds");
  dw_cursor c = {l->actions + action - 1, whole->end, 0, false};
  for (int n = 0; n < MAX_ACTION_CHAIN; n++) {
    int64_t filter = dw_read_sleb(&c);
    const uint8_t *next_field = c.p;
    int64_t next = dw_read_sleb(&c);
    if (c.bad) return lp_fail("LSDA action record truncated");
    if (c.p > l->actions_end) l->actions_end = c.p;
    if (filter > 0 && (uint64_t)filter > l->ntypes) l->ntypes = (uint64_t)filter;
    if (filter < 0) { /* an exception specification: type indices from base - filter - 1 */
      if (!l->ttype || (uint64_t)(-(filter + 1)) > (uint64_t)(whole->end - l->ttype))
        return lp_fail("LSDA exception specification out of bounds");
      dw_cursor s = {l->ttype - filter - 1, whole->end, 0, false};
      for (uint64_t t; (t = dw_read_uleb(&s)) != 0 && !s.bad;)
        if (t > l->ntypes) l->ntypes = t;
      if (s.bad) return lp_fail("LSDA exception specification truncated");
      if (s.p > l->specs_end) l->specs_end = s.p;
    }
    if (next == 0) return LP_OK;
    if (next < l->actions - next_field || next > whole->end - next_field)
      return lp_fail("LSDA action chain out of bounds");
    c.p = next_field + next;
  }
  return lp_fail("LSDA action chain does not end");
}

/* The record holding OFF (from the region start), or NULL. */
static const call_site *site_at(const lsda *l, uint64_t off) {
  for (size_t k = 0; k < l->nsites; k++)
    if (off >= l->sites[k].start && off - l->sites[k].start < l->sites[k].len) return &l->sites[k];
  return NULL;
}

/* The copy's call-site records along the origin map, into CS. */
static void put_call_sites(const reloc_plan *plan, const reloc_cfi *cfi, const lsda *l, uint64_t dest,
                           dw_buf *cs, size_t *in_original) {
  size_t n;
  const reloc_origin *o = reloc_origins(plan, &n);
  size_t copy_size = reloc_copy_size(plan);
  call_site run = {0, 0, 0, 0};
  bool open = false;
  for (size_t k = 0; k <= n; k++) {
    const call_site *s = NULL;
    call_site next = {0, 0, 0, 0};
    if (k < n && o[k].orig != RELOC_ORIGIN_DATA && o[k].orig >= cfi->pc_begin)
      s = site_at(l, o[k].orig - cfi->pc_begin);
    if (s) {
      size_t end = k + 1 < n ? o[k + 1].offset : copy_size;
      next = (call_site){o[k].offset, end - o[k].offset, 0, s->action};
      if (s->lp) {
        int64_t off = reloc_side_entry_offset(plan, l->lpstart + s->lp);
        next.lp = off >= 0 ? dest + (uint64_t)off : l->lpstart + s->lp;
      }
      if (open && run.start + run.len == next.start && run.lp == next.lp && run.action == next.action) {
        run.len += next.len;
        continue;
      }
    }
    if (open) {
      dw_uleb(cs, run.start), dw_uleb(cs, run.len), dw_uleb(cs, run.lp), dw_uleb(cs, run.action);
      if (run.lp && (run.lp < dest || run.lp >= dest + copy_size)) (*in_original)++;
    }
    open = s != NULL;
    run = next;
  }
}

static size_t uleb_size(uint64_t v) {
  size_t n = 1;
  while (v >>= 7) n++;
  return n;
}

lp_status reloc_lsda_translate(const reloc_plan *plan, const reloc_cfi *cfi, uint64_t dest,
                               dw_buf *out, size_t *in_original) {
  dw_cursor c = {cfi->lsda_bytes, cfi->lsda_bytes + cfi->lsda_size, cfi->lsda, false};
  lsda l = {0};
  dw_buf cs = {0};
  lp_status st = parse_header(cfi, &c, &l);
  if (st == LP_OK && c.bad) st = lp_fail("LSDA header truncated or with an unhandled encoding");
  for (size_t k = 0; st == LP_OK && k < l.nsites; k++) st = measure_actions(&l, &c, l.sites[k].action);
  unsigned tsize = l.ttype ? dw_pe_size(l.ttype_enc) : 0;
  if (st == LP_OK && l.ntypes && (!l.ttype || l.ntypes * tsize > (uint64_t)(l.ttype - l.actions_end)))
    st = lp_fail("LSDA type table out of bounds");
  if (st != LP_OK) goto out;

  *in_original = 0;
  put_call_sites(plan, cfi, &l, dest, &cs, in_original);
  size_t actions = (size_t)(l.actions_end - l.actions);
  dw_u8(out, PE_ABSPTR); /* LPStart: 0, landing pads absolute */
  dw_le(out, 0, 8);
  if (l.ttype) {
    dw_u8(out, (uint8_t)((l.ttype_enc & PE_INDIRECT) | PE_ABSPTR));
    dw_uleb(out, 1 + uleb_size(cs.n) + cs.n + actions + l.ntypes * 8);
  } else {
    dw_u8(out, PE_OMIT);
  }
  dw_u8(out, PE_ULEB128);
  dw_uleb(out, cs.n);
  if (!cs.failed) dw_put(out, cs.b, cs.n);
  dw_put(out, l.actions, actions);
  for (uint64_t i = l.ntypes; i >= 1; i--) { /* entry i lies i entries below the base */
    dw_cursor e = {l.ttype - i * tsize, l.ttype - (i - 1) * tsize, l.ttype_addr - i * tsize, false};
    uint64_t v = dw_read_pe(&e, (uint8_t)(l.ttype_enc & ~PE_INDIRECT));
    if (e.bad) {
      st = lp_fail("LSDA type entry %" PRIu64 " with encoding 0x%x not handled", i, l.ttype_enc);
      goto out;
    }
    dw_le(out, v, 8);
  }
  if (l.ttype) dw_put(out, l.ttype, (size_t)(l.specs_end - l.ttype));
  if (cs.failed || out->failed) st = lp_fail("out of memory");
out:
  free(l.sites);
  free(cs.b);
  return st;
}

lp_status reloc_lsda_pads(const reloc_cfi *cfi, uint64_t lo, uint64_t hi, uint64_t **pads, size_t *n) {
  *pads = NULL;
  *n = 0;
  if (!cfi->lsda) return LP_OK;
  dw_cursor c = {cfi->lsda_bytes, cfi->lsda_bytes + cfi->lsda_size, cfi->lsda, false};
  lsda l = {0};
  lp_status st = parse_header(cfi, &c, &l);
  if (st == LP_OK && c.bad) st = lp_fail("LSDA header truncated or with an unhandled encoding");
  if (st == LP_OK && l.nsites && !(*pads = malloc(l.nsites * sizeof **pads))) st = lp_fail("out of memory");
  for (size_t k = 0; st == LP_OK && k < l.nsites; k++) {
    uint64_t pad = l.lpstart + l.sites[k].lp, seen = 0;
    for (size_t j = 0; j < *n; j++) seen |= (*pads)[j] == pad;
    if (l.sites[k].lp && pad >= lo && pad < hi && !seen) (*pads)[(*n)++] = pad;
  }
  free(l.sites);
  if (st != LP_OK) {
    free(*pads);
    *pads = NULL;
    *n = 0;
  }
  return st;
}

bool reloc_cfi_pad_in(const reloc_cfi *cfi, uint64_t from, uint64_t to) {
  uint64_t *pads;
  size_t n;
  if (reloc_lsda_pads(cfi, from, to, &pads, &n) != LP_OK) return false;
  free(pads);
  return n > 0;
}
