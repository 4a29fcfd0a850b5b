/* reloc_function.c — the whole-function relocator behind reloc.h.
 *
 * Owns the function-level work: recursive decoding from the entry (worklist),
 * jump-table resolution, basic blocks, layout (entry first, entry counter on
 * top, jmp where a fall-through is broken, new tables after the code) and the
 * measure/emit passes.  Instruction encodings are left to arch/x86_64
 * (x64_decode, x64_relocator, x64_writer, x64_jumptable). */
#include "reloc.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "x64_decode.h"
#include "x64_jumptable.h"
#include "x64_relocator.h"
#include "x64_writer.h"

typedef struct reloc_table {
  x64_table_kind kind;
  uint64_t table;    /* original address */
  size_t nentries;
  uint64_t *targets; /* original targets; those outside the function stay as they are */
} reloc_table;

typedef struct reloc_insn {
  x64_insn x;
  bool noreturn;     /* a call whose fall-through is not code: ud2 after it */
  int32_t table_ref; /* the table whose address this insn's disp32 carries, or -1 */
} reloc_insn;

struct reloc_plan {
  uint64_t entry, lo, hi;
  reloc_probes probes;
  reloc_insn *insns; /* in address order once planned */
  size_t n, entry_index;
  int32_t *at;       /* per byte of [lo,hi): index+1 of the insn starting there,
                        -(index+1) inside one, 0 not decoded */
  size_t *order;    /* layout order */
  int64_t *copy_off;
  reloc_table *tables;
  size_t ntables;
  size_t copy_size;
};

/* {=== decoding ===*/

typedef struct builder {
  reloc_plan *p;
  const reloc_function_desc *fn;
  uint64_t dhi;           /* decoding stops here: min(hi, end of code) */
  size_t cap;
  uint64_t *work;         /* addresses still to walk */
  size_t nwork, capwork;
  size_t *indirect;       /* indices of indirect jmps */
  size_t nindirect, capindirect, examined;
  bool leaves_to_original;
} builder;

static bool grow(void **v, size_t *cap, size_t need, size_t size) {
  if (need <= *cap) return true;
  size_t c = *cap ? *cap : 16;
  while (c < need) c *= 2;
  void *n = realloc(*v, c * size);
  if (!n) return false;
  *v = n;
  *cap = c;
  return true;
}

static lp_status push_work(builder *b, uint64_t a) {
  if (!grow((void **)&b->work, &b->capwork, b->nwork + 1, sizeof *b->work))
    return lp_fail("out of memory");
  b->work[b->nwork++] = a;
  return LP_OK;
}

static bool inside(const reloc_plan *p, uint64_t a) { return a >= p->lo && a < p->hi; }

enum { DECODED, UNDECODABLE, OVERLAP };

/* Decodes the instruction at A (not yet recorded) and checks it overlaps nothing. */
static int decode_at(const builder *b, uint64_t a, x64_insn *in) {
  const reloc_plan *p = b->p;
  if (a >= b->dhi || a < b->fn->code_base ||
      !x64_decode(b->fn->code + (a - b->fn->code_base), b->dhi - a, a, in))
    return UNDECODABLE;
  for (size_t k = 0; k < in->len; k++)
    if (p->at[a - p->lo + k] != 0) return OVERLAP;
  return DECODED;
}

static void mark(reloc_plan *p, const x64_insn *in, size_t idx) {
  for (size_t k = 0; k < in->len; k++) p->at[in->addr - p->lo + k] = -(int32_t)(idx + 1);
  p->at[in->addr - p->lo] = (int32_t)(idx + 1);
}

/* Follows one path from A until it ends or meets decoded code. */
static lp_status walk(builder *b, uint64_t a) {
  reloc_plan *p = b->p;
  while (inside(p, a)) {
    int32_t s = p->at[a - p->lo];
    if (s > 0) return LP_OK;
    if (s < 0)
      return lp_fail("overlapping instructions at 0x%" PRIx64 " and 0x%" PRIx64, a,
                     p->insns[-s - 1].x.addr);
    x64_insn x;
    int r = decode_at(b, a, &x);
    if (r == UNDECODABLE) return lp_fail("undecodable instruction at 0x%" PRIx64, a);
    if (r == OVERLAP) return lp_fail("overlapping instructions at 0x%" PRIx64, a);
    if (!grow((void **)&p->insns, &b->cap, p->n + 1, sizeof *p->insns))
      return lp_fail("out of memory");
    size_t i = p->n++;
    p->insns[i] = (reloc_insn){x, false, -1};
    mark(p, &x, i);
    const x64_insn *in = &p->insns[i].x;
    uint64_t next = a + in->len;
    switch (in->flow) {
    case X64_FLOW_NEXT:
    case X64_FLOW_CALL_INDIRECT: break;
    case X64_FLOW_JCC:
    case X64_FLOW_JCC_SHORT:
      if (inside(p, in->target)) LP_CHECK(push_work(b, in->target));
      break;
    case X64_FLOW_JMP:
      if (inside(p, in->target)) LP_CHECK(push_work(b, in->target));
      return LP_OK;
    case X64_FLOW_CALL: /* recursion (a call to the entry) is an ordinary call */
      if (inside(p, in->target) && in->target != p->entry)
        return lp_fail("call into own body at 0x%" PRIx64 " (to 0x%" PRIx64 ")", a, in->target);
      break;
    case X64_FLOW_JMP_INDIRECT:
      if (!grow((void **)&b->indirect, &b->capindirect, b->nindirect + 1, sizeof *b->indirect))
        return lp_fail("out of memory");
      b->indirect[b->nindirect++] = i;
      return LP_OK;
    case X64_FLOW_RET:
    case X64_FLOW_STOP: return LP_OK;
    case X64_FLOW_UNSUPPORTED:
      return lp_fail("unsupported relative instruction at 0x%" PRIx64, a);
    }
    if (in->flow == X64_FLOW_CALL || in->flow == X64_FLOW_CALL_INDIRECT) {
      /* a call whose return address is not code was noreturn: the path ends */
      x64_insn after;
      if (!inside(p, next) || p->at[next - p->lo] < 0 ||
          (p->at[next - p->lo] == 0 && decode_at(b, next, &after) != DECODED)) {
        p->insns[i].noreturn = true;
        return LP_OK;
      }
    }
    a = next;
  }
  return LP_OK;
}

static lp_status drain(builder *b) {
  while (b->nwork) LP_CHECK(walk(b, b->work[--b->nwork]));
  return LP_OK;
}

static const x64_insn *prev_insn(void *ctx, const x64_insn *cur) {
  const reloc_plan *p = ctx;
  for (unsigned len = 1; len <= 15 && cur->addr - len >= p->lo && cur->addr - len < cur->addr;
       len++) {
    int32_t s = p->at[cur->addr - len - p->lo];
    if (s == 0) return NULL;
    if (s < 0) continue;
    const x64_insn *in = &p->insns[s - 1].x;
    if (in->len != len) return NULL;
    switch (in->flow) {
    case X64_FLOW_JMP:
    case X64_FLOW_JMP_INDIRECT:
    case X64_FLOW_RET:
    case X64_FLOW_STOP: return NULL;
    default: return p->insns[s - 1].noreturn ? NULL : in;
    }
  }
  return NULL;
}

static bool read_le(const reloc_function_desc *fn, uint64_t addr, size_t size, uint64_t *v) {
  if (addr < fn->code_base || addr - fn->code_base > fn->code_size ||
      fn->code_size - (addr - fn->code_base) < size)
    return false;
  *v = 0;
  for (size_t k = 0; k < size; k++) *v |= (uint64_t)fn->code[addr - fn->code_base + k] << (8 * k);
  return true;
}

/* Reads a matched table; false when it is not readable.  Entries may leave
 * the function (gcc sends a switch's cold cases to FUNC.cold): the copy's
 * table keeps those targets. */
static bool read_table(const builder *b, const x64_table_match *m, uint64_t *targets) {
  size_t esize = m->kind == X64_TABLE_REL32 ? 4 : 8;
  for (size_t k = 0; k < m->nentries; k++) {
    uint64_t e;
    if (!read_le(b->fn, m->table + k * esize, esize, &e)) return false;
    targets[k] = m->kind == X64_TABLE_REL32 ? m->table + (uint64_t)(int64_t)(int32_t)e : e;
  }
  return true;
}

/* Resolves the indirect jmps not yet examined; new tables add work. */
static lp_status resolve_tables(builder *b, bool *more) {
  reloc_plan *p = b->p;
  *more = false;
  for (; b->examined < b->nindirect; b->examined++) {
    size_t i = b->indirect[b->examined];
    const x64_insn *jmp = &p->insns[i].x;
    x64_table_match m;
    if (!x64_match_jump_table(jmp, prev_insn, p, &m)) {
      /* jmp [rip+x]: a tail call through the GOT or a pointer, not a way back in */
      bool tail = jmp->rip_relative && jmp->op[0].type == X64_OP_MEM && jmp->op[0].index == 0;
      if (!tail) b->leaves_to_original = true;
      continue;
    }
    uint64_t *targets = malloc(m.nentries * sizeof *targets);
    if (!targets) return lp_fail("out of memory");
    if (!read_table(b, &m, targets)) {
      free(targets);
      b->leaves_to_original = true;
      continue;
    }
    size_t t = 0;
    while (t < p->ntables && !(p->tables[t].table == m.table && p->tables[t].kind == m.kind)) t++;
    if (t == p->ntables) {
      reloc_table *nt = realloc(p->tables, (p->ntables + 1) * sizeof *nt);
      if (!nt) {
        free(targets);
        return lp_fail("out of memory");
      }
      p->tables = nt;
      p->tables[p->ntables++] = (reloc_table){m.kind, m.table, m.nentries, targets};
    } else if (m.nentries > p->tables[t].nentries) { /* same table, wider bound */
      free(p->tables[t].targets);
      p->tables[t].targets = targets;
      p->tables[t].nentries = m.nentries;
    } else {
      free(targets);
    }
    p->insns[p->at[m.ref - p->lo] - 1].table_ref = (int32_t)t; /* m.ref was decoded */
    for (size_t k = 0; k < p->tables[t].nentries; k++)
      if (inside(p, p->tables[t].targets[k])) LP_CHECK(push_work(b, p->tables[t].targets[k]));
    *more = true;
  }
  return LP_OK;
}

/* }=== */

/* {=== layout ===*/

static long label_of(void *ctx, uint64_t orig) {
  const reloc_plan *p = ctx;
  if (!inside(p, orig)) return -1;
  int32_t s = p->at[orig - p->lo];
  return s > 0 ? (long)(s - 1) : -1;
}

static bool falls_through(const x64_insn *in) {
  switch (in->flow) {
  case X64_FLOW_NEXT:
  case X64_FLOW_JCC:
  case X64_FLOW_JCC_SHORT:
  case X64_FLOW_CALL:
  case X64_FLOW_CALL_INDIRECT: return true;
  default: return false;
  }
}

typedef struct emit_ctx {
  const reloc_plan *p;
  reloc_redirect redirect;
  void *redirect_ctx;
} emit_ctx;

static long emit_label_of(void *ctx, uint64_t orig) { return label_of((void *)((emit_ctx *)ctx)->p, orig); }

static uint64_t emit_redirect(void *ctx, uint64_t orig) {
  const emit_ctx *e = ctx;
  return e->redirect ? e->redirect(e->redirect_ctx, orig) : orig;
}

/* Writes the copy; one code path for measuring (no buffer) and emitting. */
static lp_status layout(const reloc_plan *p, x64_writer *w, int64_t *copy_off, uint64_t counters,
                        reloc_redirect redirect, void *redirect_ctx) {
  void *ctx = (void *)p;
  emit_ctx e = {p, redirect, redirect_ctx};
  const x64_targets targets = {emit_label_of, emit_redirect, &e};
  for (size_t k = 0; k < p->n; k++) {
    size_t i = p->order[k];
    const x64_insn *in = &p->insns[i].x;
    x64_put_label(w, i);
    if (i == p->entry_index && p->probes.entry) /* slot 0; flags are dead at an ABI entry */
      x64_put_inc_rip_counter(w, counters, p->probes.atomic);
    if (copy_off) copy_off[i] = (int64_t)w->offset;
    if (p->insns[i].table_ref >= 0)
      x64_relocate_table_ref(w, in, p->n + (size_t)p->insns[i].table_ref);
    else
      x64_relocate_insn(w, in, &targets);
    if (!falls_through(in)) continue;
    if (p->insns[i].noreturn) {
      x64_put_ud2(w);
      continue;
    }
    uint64_t next = in->addr + in->len;
    long l = label_of(ctx, next);
    if (l < 0)
      x64_put_jmp_rel32_address(w, next); /* fell off the known body */
    else if (k + 1 == p->n || p->order[k + 1] != (size_t)l)
      x64_put_jmp_rel32_label(w, (size_t)l);
  }
  for (size_t t = 0; t < p->ntables; t++) {
    const reloc_table *tb = &p->tables[t];
    x64_put_align(w, tb->kind == X64_TABLE_REL32 ? 4 : 8, /*int3=*/0xcc);
    x64_put_label(w, p->n + t);
    for (size_t e = 0; e < tb->nentries; e++) {
      long l = label_of(ctx, tb->targets[e]);
      if (tb->kind == X64_TABLE_REL32 && l >= 0)
        x64_put_label_diff32(w, (size_t)l, p->n + t);
      else if (tb->kind == X64_TABLE_REL32)
        x64_put_address_diff32(w, tb->targets[e], p->n + t);
      else if (l >= 0)
        x64_put_label_abs64(w, (size_t)l);
      else
        x64_put_u64(w, tb->targets[e]);
    }
  }
  return x64_writer_flush(w);
}

/* }=== */

static int by_addr(const void *a, const void *b) {
  uint64_t x = ((const reloc_insn *)a)->x.addr, y = ((const reloc_insn *)b)->x.addr;
  return x < y ? -1 : x > y;
}

/* Puts the instructions in address order and renumbers the byte map. */
static void sort_insns(reloc_plan *p) {
  qsort(p->insns, p->n, sizeof *p->insns, by_addr);
  for (size_t i = 0; i < p->n; i++) mark(p, &p->insns[i].x, i);
}

static void fill_info(const reloc_plan *p, bool leaves, reloc_info *info) {
  memset(info, 0, sizeof *info);
  info->copy_size = p->copy_size;
  info->ninstructions = p->n;
  info->njump_tables = p->ntables;
  info->leaves_to_original = leaves;
  info->min_inner_target = UINT64_MAX;

  size_t span = (size_t)(p->hi - p->lo);
  bool *target = calloc(span ? span : 1, 1);
  for (size_t i = 0; i < p->n; i++) {
    const x64_insn *in = &p->insns[i].x;
    if ((in->flow == X64_FLOW_JMP || in->flow == X64_FLOW_JCC || in->flow == X64_FLOW_JCC_SHORT) &&
        inside(p, in->target)) {
      if (target) target[in->target - p->lo] = true;
      if (in->target > p->entry && in->target - p->entry < info->min_inner_target)
        info->min_inner_target = in->target - p->entry;
    }
  }
  for (size_t t = 0; t < p->ntables; t++)
    for (size_t e = 0; e < p->tables[t].nentries; e++) {
      uint64_t a = p->tables[t].targets[e];
      if (!inside(p, a)) continue;
      if (target) target[a - p->lo] = true;
      if (a > p->entry && a - p->entry < info->min_inner_target)
        info->min_inner_target = a - p->entry;
    }
  for (size_t i = 0; i < p->n; i++) { /* block leaders */
    const x64_insn *in = &p->insns[i].x, *pv = i ? &p->insns[i - 1].x : NULL;
    bool leader = i == p->entry_index || !pv || (target && target[in->addr - p->lo]) ||
                  pv->addr + pv->len != in->addr || !falls_through(pv) || p->insns[i - 1].noreturn ||
                  pv->flow == X64_FLOW_JCC || pv->flow == X64_FLOW_JCC_SHORT;
    info->nblocks += leader;
  }
  free(target);

  size_t bytes = 0;
  for (size_t i = p->entry_index; i < p->n && bytes < 5; i++) {
    if (p->insns[i].x.addr != p->entry + bytes) break;
    bytes += p->insns[i].x.len;
  }
  info->entry_insn_bytes = bytes;
  info->ncounters = p->probes.entry ? 1 : 0;
}

lp_status reloc_plan_function(const reloc_function_desc *fn, const reloc_probes *probes,
                              reloc_plan **out, reloc_info *info) {
  *out = NULL;
  if (fn->lo >= fn->hi || fn->entry < fn->lo || fn->entry >= fn->hi)
    return lp_fail("entry 0x%" PRIx64 " outside [0x%" PRIx64 ", 0x%" PRIx64 ")", fn->entry,
                   fn->lo, fn->hi);
  if (fn->entry < fn->code_base || fn->entry - fn->code_base >= fn->code_size)
    return lp_fail("no code bytes at entry 0x%" PRIx64, fn->entry);

  reloc_plan *p = calloc(1, sizeof *p);
  if (!p) return lp_fail("out of memory");
  p->entry = fn->entry;
  p->lo = fn->lo;
  p->hi = fn->hi;
  if (probes) p->probes = *probes;
  size_t span = (size_t)(fn->hi - fn->lo);
  p->at = calloc(span, sizeof *p->at);
  builder b = {.p = p, .fn = fn};
  uint64_t code_end = fn->code_base + fn->code_size;
  b.dhi = code_end < fn->hi ? code_end : fn->hi;

  lp_status st = LP_ERR;
  if (!p->at) {
    lp_fail("out of memory");
    goto out;
  }
  if (push_work(&b, fn->entry) != LP_OK) goto out;
  bool more = true;
  while (more) {
    if (drain(&b) != LP_OK) goto out;
    if (resolve_tables(&b, &more) != LP_OK) goto out;
  }
  sort_insns(p);
  p->entry_index = (size_t)p->at[fn->entry - p->lo] - 1;

  /* layout order: the entry and what follows it, then what lies below it */
  p->order = malloc(p->n * sizeof *p->order);
  p->copy_off = malloc(p->n * sizeof *p->copy_off);
  if (!p->order || !p->copy_off) {
    lp_fail("out of memory");
    goto out;
  }
  for (size_t k = 0; k < p->n; k++) p->order[k] = (p->entry_index + k) % p->n;

  x64_writer w;
  if (x64_writer_init(&w, NULL, 0, p->n + p->ntables) != LP_OK) goto out;
  st = layout(p, &w, p->copy_off, 0, NULL, NULL);
  p->copy_size = w.offset;
  x64_writer_clear(&w);
  if (st != LP_OK) goto out;

  fill_info(p, b.leaves_to_original, info);
  *out = p;
out:
  free(b.work);
  free(b.indirect);
  if (st != LP_OK) reloc_plan_free(p);
  return st;
}

lp_status reloc_emit(const reloc_plan *plan, uint64_t dest, uint8_t *out, uint64_t counters,
                     reloc_redirect redirect, void *ctx) {
  x64_writer w;
  LP_CHECK(x64_writer_init(&w, out, dest, plan->n + plan->ntables));
  lp_status st = layout(plan, &w, NULL, counters, redirect, ctx);
  size_t size = w.offset;
  x64_writer_clear(&w);
  if (st != LP_OK)
    return lp_context("relocating 0x%" PRIx64 " to 0x%" PRIx64, plan->entry, dest);
  if (size != plan->copy_size)
    return lp_fail("copy of 0x%" PRIx64 " changed size (%zu, planned %zu)", plan->entry, size,
                   plan->copy_size);
  return LP_OK;
}

size_t reloc_callees(const reloc_plan *plan, uint64_t *out, size_t max) {
  size_t n = 0;
  for (size_t i = 0; i < plan->n; i++) {
    const x64_insn *in = &plan->insns[i].x;
    bool direct = in->flow == X64_FLOW_CALL || in->flow == X64_FLOW_JMP || in->flow == X64_FLOW_JCC ||
                  in->flow == X64_FLOW_JCC_SHORT;
    if (!direct || inside(plan, in->target)) continue;
    bool seen = false;
    for (size_t k = 0; k < n && k < max; k++) seen |= out[k] == in->target;
    if (seen) continue;
    if (n < max) out[n] = in->target;
    n++;
  }
  return n;
}

int64_t reloc_copy_offset(const reloc_plan *plan, uint64_t orig) {
  long l = label_of((void *)plan, orig);
  return l < 0 ? -1 : plan->copy_off[l];
}

void reloc_plan_free(reloc_plan *plan) {
  if (!plan) return;
  for (size_t t = 0; t < plan->ntables; t++) free(plan->tables[t].targets);
  free(plan->tables);
  free(plan->insns);
  free(plan->at);
  free(plan->order);
  free(plan->copy_off);
  free(plan);
}
