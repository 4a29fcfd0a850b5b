/* reloc_function.c — the whole-function relocator behind reloc.h.
 *
 * Owns the function-level work and the public entry points: recursive
 * decoding from the entry and from its side entries (the landing pads of its
 * LSDA that lie in it, and where its other part jumps back: worklist; a call
 * ends its path where its callee never returns, reloc_probes.callee, asked
 * once per call) and jump-table resolution (the matcher walks back through a branch where it
 * is the only way in; a table whose base register is set away from its
 * dispatch, the computed gotos of interpreters, is found in the whole
 * function or on every way into the dispatch, followed back through copies
 * of registers and spills to stack slots; every such match is checked
 * again once all is decoded, and a table that no longer holds is left
 * unresolved, decoding started again; one bounded only by its index's width
 * must be read-only, an absolute one nothing bounds is read to its end and
 * refused, decoding started again, when what it reads decodes as no code;
 * a table of offsets only its byte index bounds keeps all 256 entries, its
 * cases decoded last and in order up to the first that is no code of the
 * function (cut there and then when its straight line does not decode,
 * else decoding started again without that one and those after it) or the
 * next table the function reads; one nothing bounds is read and decoded so
 * too, and guarded in the copy, each dispatch with a guard of its own;
 * under arcs each dispatch of a table gets a copy of its own where its
 * load can read it by a displacement, other shared tables are left
 * unresolved), then the
 * passes of the other files in order (reloc_internal.h): blocks and edges,
 * flags liveness, probe placement, and the measure pass of the layout (all
 * rel32: which rel8 reach, a bound on the size); emit runs the layout again
 * for a destination with those short, recording where everything went.
 * Instruction encodings are left to arch/x86_64 (x64_decode, x64_relocator,
 * x64_writer, x64_jumptable). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "reloc_internal.h"
#include "reloc_unwind.h"
#include "x64_relocator.h"

/* {=== decoding ===*/

#define MAX_UNSHARED 8
#define MAX_GUESSED 4 /* guessed tables taken in one decoding, at most */
#define MAX_DEFS 1024 /* writes of registers and slots followed back from one table's read */
#define MAX_OPEN 256  /* open and guarded tables in one function, at most (rustup's main closure: 89) */
#define MAX_CUT_ATTEMPTS 8 /* decodings started again to cut open tables; then none is decoded */
#define PLAUSIBLE (1ull << 30) /* an open table's entry decodes as no code that reaches farther */

/* How far an open table's entries were decoded before one did not decode:
 * kept across the attempts of one plan. */
typedef struct open_cut {
  uint64_t table;
  size_t limit; /* entries from here on are not decoded */
} open_cut;

/* A register, or a stack slot (what holds a table's address: holds_table). */
typedef struct cell {
  int reg;      /* or 0: */
  int64_t slot; /* [rsp+slot] */
} cell;

typedef enum def_kind { DEF_OTHER, DEF_LEA, DEF_COPY } def_kind;

/* An instruction that writes a cell, met first on a way back from a table's
 * read: a lea of a table, a copy (`mov R, R2`, a reload `mov R, [rsp+d]`, a
 * spill `mov [rsp+d], R`), or another write. */
typedef struct def {
  size_t insn;     /* index */
  cell wrote;
  def_kind kind;
  uint64_t table;  /* DEF_LEA: the table it names */
  cell from;       /* DEF_COPY: the cell it copies, read where it is */
  size_t first, n; /* DEF_COPY: the defs its ways back meet, builder.reach[first .. first+n) */
  bool walked;     /* those are known */
  bool good;       /* it holds a table's address (assumed of a copy until shown otherwise) */
} def;

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
  bool frameless_tail;      /* no call frame information, and an indirect jmp that reads no
                               table: a tail call if no instruction decoded moves rsp (but
                               a ret) */
  const uint64_t *unshared; /* tables left unresolved: arcs met a second dispatch through them,
                               their base register does not hold them where a dispatch reads
                               it (unsettled_table), or guessed ones whose entries did not
                               decode */
  size_t nunshared;
  uint64_t shared;          /* such a table met now: decoding starts again without it */
  uint64_t guessed[MAX_GUESSED]; /* the guessed tables taken (x64_table_match.guessed) */
  size_t nguessed;
  const uint64_t *sides;    /* where the function is entered besides its entry */
  size_t nsides;
  struct way *ways;         /* the jumps into the function (ways_into) */
  size_t nways, capways;
  uint32_t *way_head, *way_tail; /* per byte of the function: its ways' list, NO_WAY: none */
  size_t ways_n;            /* the instructions whose direct branches are listed */
  bool ways_relist;         /* a table cut, or a dispatch that met another: listed again */
  bool ways_failed;         /* out of memory */
  unsigned ways_back;       /* tables that added ways into decoded code, so far (table_met) */
  bool branched;            /* prev_way went back through a branch (in the match being made) */
  size_t *recheck;          /* dispatches so matched: matched again once all is decoded */
  size_t nrecheck, caprecheck;
  struct {                  /* base_of's last answer, good while no instruction is added */
    int reg;
    size_t n;
    bool ok;
    uint64_t table, ref;
  } base;
  struct def *defs;         /* holds_table's, good while the ways back are (table_met) */
  size_t ndefs, capdefs, defs_n;
  unsigned defs_back;       /* ways_back when they were made */
  size_t *reach;            /* the defs each def's ways back meet (def.first, .n) */
  size_t nreach, capreach;
  struct {                  /* frame_fixed's, likewise */
    size_t n;
    bool fixed;
    uint64_t from;
  } frame;
  struct {                  /* the open tables met (x64_table_match.open) */
    size_t t;               /* in p->tables */
    size_t next, limit;     /* entries below NEXT were decoded; from LIMIT on, none are */
  } open[MAX_OPEN];
  size_t nopen;
  long walking;             /* open[walking]'s entry next-1 is being decoded, -1: none */
  open_cut *cuts;           /* the earlier attempts' cuts, NCUTS of them */
  size_t ncuts;
  bool cut;                 /* an entry of open[walking] did not decode: start again, cut there */
  bool open_off;            /* no open table's entries are decoded: they all leave the copy */
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

bool reloc_inside(const reloc_plan *p, uint64_t a) { return a >= p->lo && a < p->hi; }
static bool inside(const reloc_plan *p, uint64_t a) { return reloc_inside(p, a); }

long reloc_insn_at(const reloc_plan *p, uint64_t orig) {
  if (!inside(p, orig)) return -1;
  int32_t s = p->at[orig - p->lo];
  return s > 0 ? (long)(s - 1) : -1;
}

bool reloc_falls_through(const reloc_insn *in) {
  switch (in->x.flow) {
  case X64_FLOW_NEXT:
  case X64_FLOW_JCC:
  case X64_FLOW_JCC_SHORT:
  case X64_FLOW_CALL:
  case X64_FLOW_CALL_INDIRECT: return true;
  default: return false;
  }
}

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

static const x64_insn *prev_insn(void *ctx, const x64_insn *cur);

/* Is NR the number of a system call that forks (its child returns from it
 * too)? */
static bool forks(int64_t nr) {
  return nr == SYS_clone || nr == SYS_fork || nr == SYS_vfork || nr == SYS_clone3;
}

/* Marks the direct call at instruction I (index) by what its callee is
 * (reloc_probes.callee, asked once per call): returning twice, or never
 * (noreturn and exits).  Where the first argument decides, the straight line
 * before the call must set edi to a constant: error(status, ...) never
 * returns when it is not 0 (gcc calls it as noreturn then, and puts no code
 * after it); syscall(nr, ...) returns twice when nr forks. */
static void mark_callee(reloc_plan *p, size_t i) {
  reloc_insn *ri = &p->insns[i];
  reloc_callee kind = p->probes.callee ? p->probes.callee(p->probes.ctx, ri->x.target) : RELOC_CALLEE_RETURNS;
  int64_t arg = 0;
  bool arg_known = (kind == RELOC_CALLEE_EXITS_ON_STATUS || kind == RELOC_CALLEE_SYSCALL) &&
                   x64_first_arg_constant(&ri->x, prev_insn, p, &arg);
  ri->twice = kind == RELOC_CALLEE_RETURNS_TWICE || (kind == RELOC_CALLEE_SYSCALL && arg_known && forks(arg));
  ri->noreturn = ri->exits = kind == RELOC_CALLEE_NEVER_RETURNS ||
                             (kind == RELOC_CALLEE_EXITS_ON_STATUS && arg_known && arg != 0);
}

/* Could IN be code of the module, decoded from an open table's entry that
 * may lie past the table's end?  Its branch or call stays in the module's
 * image, its RIP-relative operand within PLAUSIBLE of it (the copy could not
 * reach farther). */
static bool plausible(const builder *b, const x64_insn *in) {
  const reloc_function_desc *fn = b->fn;
  bool direct = in->flow == X64_FLOW_JMP || in->flow == X64_FLOW_JCC || in->flow == X64_FLOW_JCC_SHORT ||
                in->flow == X64_FLOW_CALL;
  if (direct && (in->target < fn->code_base || in->target - fn->code_base >= fn->code_size)) return false;
  if (in->rip_relative && (in->rip_target + PLAUSIBLE < fn->code_base ||
                           in->rip_target > fn->code_base + fn->code_size + PLAUSIBLE))
    return false;
  return in->flow != X64_FLOW_UNSUPPORTED;
}

/* Follows one path from A until it ends or meets decoded code. */
static lp_status walk(builder *b, uint64_t a) {
  reloc_plan *p = b->p;
  x64_insn x;
  bool have_x = false; /* x is the instruction at a, decoded after a call */
  while (inside(p, a)) {
    int32_t s = p->at[a - p->lo];
    if (s > 0) return LP_OK;
    if (s < 0)
      return lp_fail("overlapping instructions at 0x%" PRIx64 " and 0x%" PRIx64, a,
                     p->insns[-s - 1].x.addr);
    if (!grow((void **)&p->insns, &b->cap, p->n + 1, sizeof *p->insns))
      return lp_fail("out of memory");
    reloc_insn *ri = &p->insns[p->n]; /* decoded in place, not copied in from a local */
    int r = DECODED;
    if (have_x) ri->x = x;
    else r = decode_at(b, a, &ri->x);
    have_x = false;
    if (r == UNDECODABLE) return lp_fail("undecodable instruction at 0x%" PRIx64, a);
    if (r == OVERLAP) return lp_fail("overlapping instructions at 0x%" PRIx64, a);
    ri->noreturn = ri->exits = ri->twice = ri->leader = ri->entered = ri->gprs_known = false;
    ri->table_ref = ri->table_jmp = ri->table_load = -1;
    ri->block = 0;
    size_t i = p->n++;
    mark(p, &ri->x, i);
    const x64_insn *in = &ri->x;
    uint64_t next = a + in->len;
    if (b->walking >= 0 && !plausible(b, in))
      return lp_fail("an open table's entry decodes as no code at 0x%" PRIx64, a);
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
    if (in->flow == X64_FLOW_CALL) mark_callee(p, i);
    if (p->insns[i].exits) return LP_OK; /* the path ends */
    if (in->flow == X64_FLOW_CALL || in->flow == X64_FLOW_CALL_INDIRECT) {
      /* a call whose return address is not code was noreturn: the path ends */
      if (!inside(p, next) || p->at[next - p->lo] < 0) {
        p->insns[i].noreturn = true;
        return LP_OK;
      }
      if (p->at[next - p->lo] == 0) {
        if (decode_at(b, next, &x) != DECODED) {
          p->insns[i].noreturn = true;
          return LP_OK;
        }
        have_x = true;
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
  reloc_plan *p = ctx;
  for (unsigned len = 1; len <= 15 && cur->addr - len >= p->lo && cur->addr - len < cur->addr;
       len++) {
    int32_t s = p->at[cur->addr - len - p->lo];
    if (s == 0) return NULL;
    if (s < 0) continue;
    x64_insn *in = &p->insns[s - 1].x;
    if (in->len != len || !x64_decode_operands(in)) return NULL;
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

/* Are [addr, addr + size) bytes the program cannot change? */
static bool read_only(const reloc_function_desc *fn, uint64_t addr, uint64_t size) {
  for (size_t k = 0; k < fn->nreadonly; k++) {
    uint64_t lo = fn->readonly[k][0] + fn->bias, hi = fn->readonly[k][1] + fn->bias;
    if (addr >= lo && addr <= hi && size <= hi - addr) return true;
  }
  return false;
}

/* Reads a matched table; false when it is not readable.  Entries may leave
 * the function (gcc sends a switch's cold cases to FUNC.cold): the copy's
 * table keeps those targets.  A table that only its index's width bounds
 * (m->implicit) may be shorter than that: it ends before the first entry
 * that does not land in the module's code (Lua's 83 opcodes under a mask of
 * 128), and it must be read-only, or the entries read now may not be those
 * the program jumps through.  An open table (x64_table_match.open) keeps all
 * its entries: those past the read-only bytes, or that are no code, send to
 * the first entry's target (no index reaches them).  A guarded one ends
 * before the first entry that is not read-only or no code: the copy's guard
 * sends the indexes from there on to the original. */
static bool read_table(const builder *b, x64_table_match *m, uint64_t *targets) {
  size_t esize = m->kind == X64_TABLE_REL32 ? 4 : 8;
  for (size_t k = 0; k < m->nentries; k++) {
    uint64_t e, at = m->table + k * esize;
    if (m->open && k > 0 && !read_only(b->fn, at, esize)) { /* past the table's end, where no index */
      targets[k] = targets[0];                              /* reaches: the rest of the segment */
      continue;
    }
    if (m->guarded && !read_only(b->fn, at, esize)) { /* the copy's guard sends the rest home */
      m->nentries = k;
      break;
    }
    if (!read_le(b->fn, at, esize, &e)) return false;
    targets[k] = m->kind == X64_TABLE_REL32 ? m->table + (uint64_t)(int64_t)(int32_t)e : e + b->fn->bias;
    bool code = targets[k] >= b->fn->code_base && targets[k] - b->fn->code_base < b->fn->code_size;
    if (m->open) { /* all kept: past the table's end, no index reaches; an entry that is no code
                      would not fit the copy's table, it sends to the first entry's target */
      if (!code && k == 0) return false;
      if (!code) targets[k] = targets[0];
      continue;
    }
    if (m->implicit && !code) {
      m->nentries = k;
      break;
    }
  }
  return m->nentries > 0 && (!m->implicit || read_only(b->fn, m->table, (m->open ? 1 : m->nentries) * esize));
}

/* Does the function end straight after instruction I (index), whatever I
 * wrote: only fall-through instructions up to a ret or a jmp out of it (an
 * epilogue's `pop r14; ...; ret`)? */
static bool leaves_after(const reloc_plan *p, size_t i) {
  for (int steps = 0; steps < 16; steps++) {
    const x64_insn *in = &p->insns[i].x;
    if (in->flow == X64_FLOW_RET) return true;
    if (in->flow == X64_FLOW_JMP) return !inside(p, in->target);
    if (in->flow != X64_FLOW_NEXT || in->addr + in->len >= p->hi) return false;
    int32_t s = p->at[in->addr + in->len - p->lo];
    if (s <= 0) return false;
    i = (size_t)s - 1;
  }
  return false;
}

/* {=== a table base spilled to the stack ===
 *
 * gcc keeps a table's address in a stack slot where registers run short
 * (CPython's eval loop in a PIC libpython: `lea T(%rip), %rbx; mov %rbx,
 * 0x10(%rsp); mov %rbx, %rdi` once, `mov 0x10(%rsp), %rdi` before most of
 * its ~180 dispatches; its regex engine spills its base register around
 * calls, into three slots, and reloads it).  holds_table follows the value
 * a dispatch reads back through copies, reloads and spills to the leas it
 * comes from.  A slot is [rsp+d] past the prologue, where rsp keeps one
 * value (frame_fixed: [rsp+d] names one slot wherever it is read or
 * written); a store through another register is taken not to reach it
 * (spill slots are the compiler's own, whose address the program never
 * takes), and gcc reuses a slot for other values between: what counts is
 * what reaches each reload. */

/* A call leaves the caller-saved registers clobbered, or as they were where
 * the callee keeps them (gcc's -fipa-ra): the caller's code reads none of
 * them after the call unless it did not change them, so a call is no write
 * of a table base. */
static bool is_call(const x64_insn *in) { return in->flow == X64_FLOW_CALL || in->flow == X64_FLOW_CALL_INDIRECT; }

/* The general-purpose registers RI may write (x64_insn_gprs_written), asked
 * once per instruction: the checks below ask of every decoded instruction
 * each time decoding has added some (an interpreter's dispatches, one after
 * another), and for one the decoding table left to Zydis each answer decodes
 * the bytes in full. */
static uint16_t gprs_written(reloc_insn *ri) {
  if (!ri->gprs_known) {
    ri->gprs_written = x64_insn_gprs_written(&ri->x);
    ri->gprs_known = true;
  }
  return ri->gprs_written;
}

/* x64_insn_may_write(&RI->x, REG) and x64_insn_may_move_stack, so. */
static bool writes_reg(reloc_insn *ri, int reg) {
  uint16_t bit = x64_gpr_bit(reg);
  return bit ? (gprs_written(ri) & bit) != 0 : x64_insn_may_write(&ri->x, reg);
}

static bool moves_stack(reloc_insn *ri) { return (gprs_written(ri) & X64_GPR_RSP) != 0; }

/* Does rsp keep one value past the prologue: every decoded instruction that
 * moves it, but calls and rets, lies on the straight line from the entry
 * (the prologue's pushes and sub) or is followed by the function's end (the
 * epilogue's add and pops)?  *FROM: where the prologue's last such
 * instruction ends; [entry, *FROM) holds the ones before the frame is set. */
static bool frame_fixed(builder *b, uint64_t *from) {
  reloc_plan *p = b->p;
  if (b->frame.n == p->n) {
    *from = b->frame.from;
    return b->frame.fixed;
  }
  b->frame.n = p->n;
  b->frame.fixed = true;
  b->frame.from = p->entry;
  for (uint64_t a = p->entry; inside(p, a) && p->at[a - p->lo] > 0;) {
    reloc_insn *ri = &p->insns[p->at[a - p->lo] - 1];
    if (ri->x.flow != X64_FLOW_NEXT) break;
    a += ri->x.len;
    if (moves_stack(ri)) b->frame.from = a;
  }
  for (size_t i = 0; i < p->n && b->frame.fixed; i++) {
    const x64_insn *in = &p->insns[i].x;
    bool prologue = in->addr >= p->entry && in->addr < b->frame.from;
    bool moves = !is_call(in) && in->flow != X64_FLOW_RET && !prologue && moves_stack(&p->insns[i]);
    b->frame.fixed = !moves || leaves_after(p, i);
  }
  *from = b->frame.from;
  return b->frame.fixed;
}

/* Is instruction IN (operands decoded) a reload of REG from a slot, [rsp+d]
 * past the prologue (*D)? */
static bool reloads(builder *b, x64_insn *in, int reg, int64_t *d) {
  uint64_t from;
  return x64_decode_operands(in) && x64_insn_reload(in, reg, d) && frame_fixed(b, &from) &&
         !(in->addr >= b->p->entry && in->addr < from);
}

/* }=== */

/* {=== a table base that only the ways into one dispatch must keep ===
 *
 * base_of asks every write of the register in the whole function to be the
 * lea (or a reload of it); gcc also hoists the lea of a switch's table out
 * of a loop, and uses the register for other values elsewhere. So, when
 * base_of says no, the ways back from the dispatch are walked (holds_table):
 * every one must meet `lea REG, [rip+T]` (one T), or a copy of what holds T,
 * before any other write of REG, and none may reach the entry or a side
 * entry (REG comes from outside there).  The ways back are the fall-through
 * predecessor, the direct branches and the rewritten tables' dispatches that
 * jump there; a table resolved later adds ways (its cases going back into
 * the loop), which is why the dispatch is checked again once all is
 * decoded. */

#define NO_WAY UINT32_MAX

typedef struct way {
  uint32_t from;  /* index of the branch or dispatch */
  uint32_t entry; /* its table's entry (0: a direct branch) */
  uint32_t next;  /* the next way into the same byte, NO_WAY: none */
} way;

/* Lists the way from FROM (ENTRY of its table) into TO, in the order of
 * (FROM, ENTRY) among those into TO: ways are added as the decoding grows
 * and tables are met, not made again each time (CPython's eval loop: ~60 000
 * ways, most of them its tables' entries, asked for again after each of
 * ~580 changes: sorting them each time, qsort was 7.2 G of Debian's
 * python3's 11.1 G tracer instructions under -c arcs). */
static bool way_before(const way *w, size_t from, size_t entry) {
  return w->from < from || (w->from == from && w->entry < entry);
}

static void way_add(builder *b, uint64_t to, size_t from, size_t entry) {
  reloc_plan *p = b->p;
  if (!inside(p, to) || b->ways_failed) return;
  if (!grow((void **)&b->ways, &b->capways, b->nways + 1, sizeof *b->ways)) {
    b->ways_failed = true;
    return;
  }
  size_t o = (size_t)(to - p->lo);
  uint32_t w = (uint32_t)b->nways++, *at = &b->way_head[o];
  b->ways[w] = (way){(uint32_t)from, (uint32_t)entry, NO_WAY};
  uint32_t last = b->way_tail[o];
  if (last != NO_WAY && way_before(&b->ways[last], from, entry)) at = &b->ways[last].next; /* most come in order */
  while (*at != NO_WAY && way_before(&b->ways[*at], from, entry)) at = &b->ways[*at].next;
  b->ways[w].next = *at;
  *at = w;
  if (b->ways[w].next == NO_WAY) b->way_tail[o] = w;
}

/* Dispatch I's ways through table T from its entry FROM on. */
static void table_ways(builder *b, size_t i, size_t t, size_t from) {
  const reloc_table *tb = &b->p->tables[t];
  for (size_t k = from; k < tb->nentries; k++) way_add(b, tb->targets[k], i, k);
}

/* The first of the jumps into A (b->ways[w].next the next), in the order of
 * their branches: direct branches, and the entries of the tables the
 * dispatches read; NO_WAY when none, or out of memory (b->ways_failed).
 * Listed as they come: the direct branches of the instructions decoded
 * since the last question, a table's entries when a dispatch meets it
 * (table_met); all again after a table was cut. */
static uint32_t ways_into(builder *b, uint64_t a) {
  reloc_plan *p = b->p;
  size_t span = (size_t)(p->hi - p->lo);
  if (!b->way_head) {
    b->way_head = malloc(span * sizeof *b->way_head);
    b->way_tail = malloc(span * sizeof *b->way_tail);
    if (!b->way_head || !b->way_tail) b->ways_failed = true;
    b->ways_relist = true;
  }
  if (b->ways_relist && !b->ways_failed) {
    memset(b->way_head, 0xff, span * sizeof *b->way_head); /* NO_WAY */
    memset(b->way_tail, 0xff, span * sizeof *b->way_tail);
    b->nways = b->ways_n = 0;
    for (size_t i = 0; i < p->n; i++)
      if (p->insns[i].table_jmp >= 0) table_ways(b, i, (size_t)p->insns[i].table_jmp, 0);
    b->ways_relist = false;
  }
  for (; b->ways_n < p->n; b->ways_n++) {
    const x64_insn *in = &p->insns[b->ways_n].x;
    if (in->flow == X64_FLOW_JMP || in->flow == X64_FLOW_JCC || in->flow == X64_FLOW_JCC_SHORT)
      way_add(b, in->target, b->ways_n, 0);
  }
  return b->ways_failed || !inside(p, a) ? NO_WAY : b->way_head[a - p->lo];
}

/* The instruction that falls through to ADDR (index), or -1. */
static long falls_into(const reloc_plan *p, uint64_t addr) {
  if (addr <= p->lo || addr > p->hi) return -1;
  int32_t s = p->at[addr - 1 - p->lo];
  long i = s > 0 ? s - 1 : s < 0 ? -s - 1 : -1;
  if (i < 0 || p->insns[i].x.addr + p->insns[i].x.len != addr) return -1;
  return reloc_falls_through(&p->insns[i]) && !p->insns[i].noreturn ? i : -1;
}

/* Does instruction RI write cell C (a call writes no register: is_call)? */
static bool writes_cell(reloc_insn *ri, cell c) {
  if (c.reg) return !is_call(&ri->x) && writes_reg(ri, c.reg);
  return x64_decode_operands(&ri->x) && x64_insn_may_store_to_slot(&ri->x, c.slot);
}

/* The def for instruction I writing cell C: found, or added and classified
 * (its ways back not walked yet); -1 when out of memory. */
static long def_of(builder *b, size_t i, cell c) {
  for (size_t k = 0; k < b->ndefs; k++)
    if (b->defs[k].insn == i && b->defs[k].wrote.reg == c.reg && (c.reg || b->defs[k].wrote.slot == c.slot))
      return (long)k;
  if (!grow((void **)&b->defs, &b->capdefs, b->ndefs + 1, sizeof *b->defs)) return -1;
  def *d = &b->defs[b->ndefs];
  *d = (def){.insn = i, .wrote = c, .kind = DEF_OTHER, .good = true};
  x64_insn *in = &b->p->insns[i].x;
  uint64_t from;
  int r;
  int64_t at;
  if (c.reg && x64_decode_operands(in)) {
    if (x64_insn_lea_rip(in, c.reg, &d->table)) d->kind = DEF_LEA;
    else if (x64_insn_copy(in, c.reg, &r)) d->kind = DEF_COPY, d->from = (cell){r, 0};
    else if (reloads(b, in, c.reg, &at)) d->kind = DEF_COPY, d->from = (cell){0, at};
  } else if (!c.reg && x64_insn_spill(in, &r, &at) && at == c.slot && frame_fixed(b, &from) &&
             !(in->addr >= b->p->entry && in->addr < from)) {
    d->kind = DEF_COPY, d->from = (cell){r, 0};
  }
  d->good = d->kind != DEF_OTHER;
  d->walked = d->kind != DEF_COPY;
  return (long)b->ndefs++;
}

/* A way back from instruction FROM (index), C wanted after it: FROM stacked
 * (SEEN, STACK, *TOP) when it does not write C, its def met (appended to
 * builder.reach) when it does; false when out of memory. */
static bool way_from(builder *b, cell c, size_t from, bool *seen, size_t *stack, size_t *top) {
  if (seen[from]) return true;
  seen[from] = true;
  if (!writes_cell(&b->p->insns[from], c)) {
    stack[(*top)++] = from;
    return true;
  }
  long d = def_of(b, from, c);
  if (d < 0 || !grow((void **)&b->reach, &b->capreach, b->nreach + 1, sizeof *b->reach)) return false;
  b->reach[b->nreach++] = (size_t)d;
  return true;
}

/* Walks back from instruction START (index), C wanted on entering it: the
 * defs every way meets first, appended to builder.reach (from *FIRST on);
 * false when a way reaches the entry or a side entry (C comes from outside
 * there), or out of memory.  The ways back are the fall-through predecessor,
 * the direct branches and the rewritten tables' dispatches that jump there. */
static bool reach(builder *b, size_t start, cell c, size_t *first) {
  reloc_plan *p = b->p;
  ways_into(b, p->entry); /* listed now: out of memory is known before the walk */
  bool *seen = calloc(p->n, sizeof *seen);
  size_t *stack = malloc(p->n * sizeof *stack), top = 0;
  bool ok = !b->ways_failed && seen && stack;
  *first = b->nreach;
  if (ok) seen[start] = true, stack[top++] = start;
  while (ok && top) {
    uint64_t a = p->insns[stack[--top]].x.addr;
    ok = a != p->entry;
    for (size_t k = 0; ok && k < b->nsides; k++) ok = b->sides[k] != a;
    long fall = falls_into(p, a);
    if (ok && fall >= 0) ok = way_from(b, c, (size_t)fall, seen, stack, &top);
    for (uint32_t w = ok ? ways_into(b, a) : NO_WAY; ok && w != NO_WAY; w = b->ways[w].next)
      ok = way_from(b, c, b->ways[w].from, seen, stack, &top);
  }
  free(seen);
  free(stack);
  return ok;
}

/* Does C hold one table wherever instruction START (index) is entered: *TABLE,
 * and *REF a lea of it?  The defs the ways back meet are followed through
 * copies (a register's, a slot's spill and reload) to the leas, MAX_DEFS at
 * most; each copy holds the table unless one def it is reached by does not
 * (a greatest fixed point: a spill and a reload in a loop pass the value
 * round, and only a lea can bring one in), and every lea met must name one
 * table.  The defs are kept while the ways back stay the same (table_met:
 * CPython's eval loop asks for ~180 dispatches). */
static bool holds_table(builder *b, size_t start, cell c, uint64_t *table, uint64_t *ref) {
  if (b->defs_n != b->p->n || b->defs_back != b->ways_back)
    b->ndefs = b->nreach = 0, b->defs_n = b->p->n, b->defs_back = b->ways_back;
  size_t first, ndefs0 = b->ndefs, nreach0 = b->nreach;
  bool ok = reach(b, start, c, &first);
  size_t last = b->nreach;
  for (size_t k = ndefs0; ok && k < b->ndefs; k++) { /* walk the new copies' ways, adding defs */
    if (b->defs[k].walked) continue;
    b->defs[k].walked = true;
    size_t f = b->nreach;
    ok = b->ndefs <= MAX_DEFS && reach(b, b->defs[k].insn, b->defs[k].from, &f);
    b->defs[k].first = f;
    b->defs[k].n = b->nreach - f;
    b->defs[k].good = ok;
  }
  for (bool changed = true; ok && changed;) { /* the new defs' greatest fixed point */
    changed = false;
    for (size_t k = ndefs0; k < b->ndefs; k++) {
      def *d = &b->defs[k];
      for (size_t r = d->first; d->kind == DEF_COPY && d->good && r < d->first + d->n; r++)
        if (!b->defs[b->reach[r]].good) d->good = false, changed = true;
    }
  }
  /* the leas the good copies lead to from START */
  size_t *stack = malloc((b->ndefs + 1) * sizeof *stack), top = 0;
  bool *seen = calloc(b->ndefs + 1, sizeof *seen);
  ok = ok && stack && seen;
  *table = 0;
  for (size_t r = first; ok && r < last; r++)
    if (!seen[b->reach[r]]) seen[b->reach[r]] = true, stack[top++] = b->reach[r];
  while (ok && top) {
    const def *d = &b->defs[stack[--top]];
    ok = d->good && (d->kind != DEF_LEA || !*table || d->table == *table);
    if (ok && d->kind == DEF_LEA) *table = d->table, *ref = b->p->insns[d->insn].x.addr;
    for (size_t r = d->first; ok && d->kind == DEF_COPY && r < d->first + d->n; r++)
      if (!seen[b->reach[r]]) seen[b->reach[r]] = true, stack[top++] = b->reach[r];
  }
  free(stack);
  free(seen);
  if (!ok) /* the defs added stay unfinished: gone, for the next question to add again */
    b->ndefs = ndefs0, b->nreach = nreach0;
  return ok && *table;
}

/* Where the dispatch JMP (index) reads its table through REG: the load of
 * `mov rJ, [REG+rX*8]` before its `jmp rJ`, after which REG may be written
 * (CPython's eval loop: `mov (%rbx,%rdx,8),%rdx; mov %r13,%rbx; jmp
 * *%rdx`); JMP itself otherwise (a relative table's base is read by the add
 * right before the jmp too). */
static size_t table_read_at(reloc_plan *p, size_t jmp, int reg) {
  x64_insn *in = &p->insns[jmp].x;
  int jreg = in->op[0].type == X64_OP_REG ? in->op[0].reg : 0;
  const x64_insn *j = jreg ? prev_insn(p, in) : NULL;
  for (int steps = 0; j && steps < 32 && !x64_insn_may_write(j, jreg); steps++) j = prev_insn(p, j);
  long load = j && x64_insn_loads_entry(j, jreg, reg) ? reloc_insn_at(p, j->addr) : -1;
  return load >= 0 ? (size_t)load : jmp;
}

/* Does REG hold one table T wherever the dispatch JMP (index) reads it? */
static bool base_reaches(builder *b, size_t jmp, int reg, uint64_t *table, uint64_t *ref) {
  return holds_table(b, table_read_at(b->p, jmp, reg), (cell){reg, 0}, table, ref);
}

/* }=== */

/* The table a register holds wherever a dispatch can read it: every decoded
 * instruction that may write REG (but calls) is `lea REG, [rip+T]` with one
 * T, a reload of REG from a slot that holds T, or is followed by the
 * function's end (the epilogue restoring it); *ref is one of the leas.
 * False when there is no such lea or another write. */
static bool base_of(builder *b, int reg, uint64_t *table, uint64_t *ref) {
  reloc_plan *p = b->p;
  *table = 0;
  for (size_t i = 0; i < p->n; i++) {
    x64_insn *in = &p->insns[i].x;
    if (is_call(in) || !writes_reg(&p->insns[i], reg)) continue;
    uint64_t t, r = in->addr;
    int64_t d;
    if (x64_insn_lea_rip(in, reg, &t) || (reloads(b, in, reg, &d) && holds_table(b, i, (cell){0, d}, &t, &r))) {
      if (*table && t != *table) return false;
      *table = t;
      *ref = r;
    } else if (!leaves_after(p, i)) {
      return false;
    }
  }
  return *table != 0;
}

/* base_of, once per register while the decoded instructions stay the same
 * (every dispatch of an interpreter asks for the same register: one walk of
 * the function each would be quadratic). */
static bool base_of_cached(builder *b, int reg, uint64_t *table, uint64_t *ref) {
  if (b->base.reg != reg || b->base.n != b->p->n) {
    b->base.reg = reg;
    b->base.n = b->p->n;
    b->base.ok = base_of(b, reg, &b->base.table, &b->base.ref);
  }
  *table = b->base.table;
  *ref = b->base.ref;
  return b->base.ok;
}

/* {=== the way back to a bound check ===
 *
 * gcc may split a switch in two (the cases below a byte and those above it,
 * jsoncpp's Reader::readToken): the second's bound check then jumps to its
 * dispatch (`cmp $0x22, %al; jbe L` ... `L: lea; movzbl %al, %eax; ...;
 * jmp *%rax`) or its index was zero-extended before a branch into it.  The
 * matcher walks back through such a branch when it is the only way in: no
 * instruction falls through there, no table entry and no other branch goes
 * there, and it is neither the entry nor a side entry.  Decoding may add ways
 * in later: every dispatch is matched again once all is decoded
 * (unsettled_table). */

static const x64_insn *prev_way(void *ctx, const x64_insn *cur) {
  builder *b = ctx;
  reloc_plan *p = b->p;
  const x64_insn *in = prev_insn(p, cur);
  if (in || falls_into(p, cur->addr) >= 0 || cur->addr == p->entry) return in;
  for (size_t k = 0; k < b->nsides; k++)
    if (b->sides[k] == cur->addr) return NULL;
  uint32_t w = ways_into(b, cur->addr);
  if (w == NO_WAY || b->ways[w].next != NO_WAY) return NULL; /* one way in, or none to follow */
  reloc_insn *br = &p->insns[b->ways[w].from];
  if (br->table_jmp >= 0 || !x64_decode_operands(&br->x)) return NULL;
  b->branched = true;
  return &br->x;
}

/* Does instruction FROM reach TO by falling through, a few instructions on? */
static bool falls_from(const reloc_plan *p, size_t from, size_t to) {
  const x64_insn *in = &p->insns[to].x;
  for (int steps = 0; in && steps < 32; steps++) {
    if (in == &p->insns[from].x) return true;
    in = prev_insn((void *)p, in);
  }
  return false;
}

static bool tail_call(const builder *b, const x64_insn *jmp, bool *reads);

/* Does REG hold table TB wherever the dispatch I (index) reads it, once all
 * is decoded?  Across the whole function (base_of), or on every way into the
 * dispatch (base_reaches): then every other indirect jmp must be resolved
 * too (ALL_RESOLVED; but tail calls: rustup's drop_in_place ends in `jmp
 * *free@GOT`, its toml_parser on_scalar in a jump through a vtable once its
 * frame is gone), as one left to read the register would dispatch
 * through the copy's table, into the copy, by arcs no stub of its own
 * counts. */
static bool base_settled(builder *b, const reloc_table *tb, int reg, size_t i, bool all_resolved) {
  uint64_t table, ref;
  if (base_of_cached(b, reg, &table, &ref) && table == tb->table) return true;
  return all_resolved && base_reaches(b, i, reg, &table, &ref) && table == tb->table;
}

/* Once all is decoded, a table whose rewriting no longer holds, or 0: a
 * dispatch matched through a branch (prev_way) that now matches otherwise
 * (another way in was decoded since), or whose lea, met through the branch
 * (not on the straight line before the dispatch), is no nearer it than a
 * hoisted base (a table named by the load itself, non-PIE, has none); or a
 * base register that no
 * longer holds its table where a dispatch reads it (the cases decoded
 * through the table go back into it, or write the register). */
static uint64_t unsettled_table(builder *b) {
  reloc_plan *p = b->p;
  bool all_resolved = true, reads;
  for (size_t i = 0; i < p->n && all_resolved; i++)
    all_resolved = p->insns[i].x.flow != X64_FLOW_JMP_INDIRECT || p->insns[i].table_jmp >= 0 ||
                   tail_call(b, &p->insns[i].x, &reads);
  for (size_t k = 0; k < b->nrecheck; k++) {
    size_t i = b->recheck[k];
    const reloc_table *tb = &p->tables[p->insns[i].table_jmp];
    x64_table_match m = {0};
    if (!x64_match_jump_table(&p->insns[i].x, prev_way, b, &m) || m.kind != tb->kind ||
        (!m.implicit && m.nentries > tb->nentries) || (!m.base_reg && m.table != tb->table))
      return tb->table; /* with a base register now, base_settled says whether it holds tb */
    long lea = m.base_reg ? -1 : reloc_insn_at(p, m.ref); /* or the load that names the table itself */
    size_t at = m.via ? (size_t)reloc_insn_at(p, m.via) : i; /* where the base was read last */
    uint64_t t;
    int reg = m.base_reg ? m.base_reg
              : lea >= 0 && x64_insn_lea_rip(&p->insns[lea].x, p->insns[lea].x.op[0].reg, &t) &&
                        !falls_from(p, (size_t)lea, at)
                  ? p->insns[lea].x.op[0].reg
                  : 0;
    if (reg && !base_settled(b, tb, reg, at, all_resolved)) return tb->table;
  }
  for (size_t i = 0; i < p->n; i++) {
    int t = p->insns[i].table_jmp;
    if (t < 0 || !p->tables[t].base_reg) continue;
    x64_table_match m = {0}; /* each dispatch's own base register (CPython's eval loop: rdi, rbx) */
    int reg = x64_match_jump_table(&p->insns[i].x, prev_way, b, &m) && m.base_reg ? m.base_reg : p->tables[t].base_reg;
    if (!base_settled(b, &p->tables[t], reg, i, all_resolved)) return p->tables[t].table;
  }
  return 0;
}

/* }=== */

/* Does IN name table TB: a RIP-relative reference to it (the lea of a base),
 * or, for an absolute table, a disp32 without base (non-PIE)? */
static bool names_table(x64_insn *in, const reloc_table *tb) {
  if (in->disp_size != 32) return false;
  if (in->rip_relative) return in->rip_target == tb->table;
  if (tb->kind == X64_TABLE_REL32 || !x64_decode_operands(in)) return false;
  for (unsigned k = 0; k < in->nops; k++) {
    const x64_operand *o = &in->op[k];
    if (o->type == X64_OP_MEM && o->base == 0 && (uint64_t)o->disp == tb->table) return true;
  }
  return false;
}

/* Every instruction that names a rewritten table names the copy's table:
 * gcc may load a table's address in several places (a base held in a
 * caller-saved register is reloaded after each call), and a path through a
 * load left alone would dispatch through the original table into the
 * original body, uncounted. */
static void name_copies_of_tables(reloc_plan *p) {
  for (size_t i = 0; p->ntables && i < p->n; i++) {
    if (p->insns[i].x.disp_size != 32) continue; /* names none (most instructions) */
    for (size_t t = 0; p->insns[i].table_ref < 0 && t < p->ntables; t++)
      if (names_table(&p->insns[i].x, &p->tables[t])) p->insns[i].table_ref = (int32_t)t;
  }
}

/* Is TABLE (0: not known) one of pointers to functions: its first entry in
 * the file the entry of a function outside this one (probes.is_entry), where
 * a switch's or a computed goto's are labels inside it?  (The table may be
 * writable, perl's PL_check, or read-only, where gcc put one it saw nobody
 * write.) */
static bool of_functions(const builder *b, uint64_t table) {
  uint64_t e;
  if (!table || !read_le(b->fn, table, 8, &e) || !e) return false;
  e += b->fn->bias;
  return !inside(b->p, e) && b->p->probes.is_entry && b->p->probes.is_entry(b->p->probes.ctx, e);
}

/* Is JMP, through no table found, a tail call?  `jmp [rip+x]` (the GOT, a
 * pointer), or, with call frame information, a jump once the frame is gone
 * through no table (*READS) or one of pointers to functions (perl's
 * PL_check). */
static bool tail_call(const builder *b, const x64_insn *jmp, bool *reads) {
  uint64_t table;
  *reads = x64_jump_reads_table(jmp, prev_insn, b->p, &table);
  return (jmp->rip_relative && jmp->op[0].type == X64_OP_MEM && jmp->op[0].index == 0) ||
         (b->fn->cfi && (!*reads || of_functions(b, table)) && reloc_cfi_returns_from(b->fn->cfi, jmp->addr));
}

/* {=== open and guarded tables (x64_table_match.open, .guarded) ===
 * A table of offsets that only its byte index bounds keeps all 256 entries,
 * each sending where the original's sends, so that no index leaves the copy's
 * table whatever gcc laid out.  Its entries are decoded last, one at a time
 * in order, once everything else is: the first that does not decode as code
 * of the function (an instruction overlapping one decoded, or one no compiler
 * emits there: plausible) is taken as past the table's end, and the entries
 * from it on are left to the original (they are never jumped through; a
 * real case cut so would run in the original, not counted, with no note):
 * at once when its straight line is what does not decode (nothing of it was
 * decoded), else decoding starts again without them.  After
 * MAX_CUT_ATTEMPTS none is decoded, and the plan says it leaves to the
 * original.  No entry is read past the next table the function reads (a
 * later table's offsets, read from this one's base, may land in the middle
 * of its cases and be decoded first).  An indirect jmp not understood met on
 * the way leaves the copy as elsewhere.  A guarded table (x64_table_match.
 * guarded: nothing bounds its index at all) is decoded the same way, and the
 * cut ends it: the copy's table holds the entries before it, and the guard
 * sends the indexes from there on to the original load (reloc_layout.c). */

static void open_table(builder *b, size_t t) {
  for (size_t o = 0; o < b->nopen; o++)
    if (b->open[o].t == t) return;
  if (b->nopen == MAX_OPEN) { /* its entries stay the original's: the copy is left there */
    b->leaves_to_original = true;
    return;
  }
  size_t limit = b->p->tables[t].nentries;
  for (size_t k = 0; k < b->ncuts; k++)
    if (b->cuts[k].table == b->p->tables[t].table) limit = b->cuts[k].limit;
  b->open[b->nopen].t = t;
  b->open[b->nopen].next = 0;
  b->open[b->nopen++].limit = limit;
}

/* Entries of TABLE from LIMIT on are not decoded, in the attempts to come. */
static void remember_cut(builder *b, uint64_t table, size_t limit) {
  size_t k = 0;
  while (k < b->ncuts && b->cuts[k].table != table) k++;
  if (k == b->ncuts && k < MAX_OPEN) b->ncuts++;
  if (k < b->ncuts) b->cuts[k] = (open_cut){table, limit};
}

/* Would walk() follow the straight line from A, an open table's entry, with
 * no failure?  It fails at once where the line overlaps what is decoded, does
 * not decode or is not plausible; a call, or a jump, or meeting decoded code
 * ends the line well (what follows is the walk's to find). */
static bool line_decodes(builder *b, uint64_t a) {
  reloc_plan *p = b->p;
  while (inside(p, a)) {
    int32_t s = p->at[a - p->lo];
    if (s != 0) return s > 0;
    x64_insn x;
    if (decode_at(b, a, &x) != DECODED || !plausible(b, &x)) return false;
    if (x.flow != X64_FLOW_NEXT && x.flow != X64_FLOW_JCC && x.flow != X64_FLOW_JCC_SHORT)
      return x.flow != X64_FLOW_CALL || !inside(p, x.target) || x.target == p->entry;
    a += x.len;
  }
  return true;
}

/* Cuts the table of open[O] before its entry NEXT - 1, whose straight line
 * does not decode, in this attempt (nothing of it was decoded: no need to
 * start again), with the other copies of that table: a guarded one's guard
 * keeps the entries before it.  False when none would be left. */
static bool cut_before_line(builder *b, size_t o) {
  size_t limit = b->open[o].next - 1;
  uint64_t table = b->p->tables[b->open[o].t].table;
  if (limit == 0) return false;
  for (size_t k = 0; k < b->nopen; k++) {
    reloc_table *tb = &b->p->tables[b->open[k].t];
    if (tb->table != table) continue;
    if (b->open[k].limit > limit) b->open[k].limit = limit;
    if (tb->guard && tb->nentries > limit) tb->nentries = limit, b->ways_relist = true;
  }
  remember_cut(b, table, limit);
  return true;
}

/* An open or guarded table ends where the next table the function
 * dispatches through begins: compilers lay a function's tables out one
 * after the other (Debian's fdfind: a table of nine entries by a byte index,
 * then a second one, whose offsets read from the first's base land in the
 * middle of the second's cases). */
static void end_at_next_table(builder *b, size_t o) {
  reloc_table *tb = &b->p->tables[b->open[o].t];
  uint64_t next = UINT64_MAX;
  for (size_t u = 0; u < b->p->ntables; u++)
    if (b->p->tables[u].table > tb->table && b->p->tables[u].table < next) next = b->p->tables[u].table;
  size_t room = next == UINT64_MAX ? SIZE_MAX : (next - tb->table) / (tb->kind == X64_TABLE_REL32 ? 4 : 8);
  if (room == 0 || room >= b->open[o].limit) return;
  b->open[o].limit = room;
  if (tb->guard && tb->nentries > room) tb->nentries = room, b->ways_relist = true;
}

/* Queues the next entry of an open table to decode (*MORE), if any is left. */
static lp_status next_open_entry(builder *b, bool *more) {
  *more = false;
  b->walking = -1;
  if (b->open_off) {
    b->leaves_to_original |= b->nopen > 0;
    return LP_OK;
  }
  for (size_t o = 0; o < b->nopen; o++) {
    const reloc_table *tb = &b->p->tables[b->open[o].t];
    end_at_next_table(b, o);
    while (b->open[o].next < b->open[o].limit) {
      uint64_t target = tb->targets[b->open[o].next++];
      if (!inside(b->p, target) || (!line_decodes(b, target) && cut_before_line(b, o))) continue;
      b->walking = (long)o;
      *more = true;
      return push_work(b, target);
    }
  }
  return LP_OK;
}

/* The entry of open[walking] being decoded did not decode: the next attempt
 * stops before it. */
static void cut_open_table(builder *b) {
  remember_cut(b, b->p->tables[b->open[b->walking].t].table, b->open[b->walking].next - 1);
  b->cut = true;
}

/* }=== */

/* A dispatch whose table, read into TARGETS, is not rewritten: the copy
 * leaves for the original there. */
static void leave_unresolved(builder *b, uint64_t *targets) {
  free(targets);
  b->leaves_to_original = true;
}

/* Dispatch I reads table T, whose entries below KNOWN were there before
 * (widened: every dispatch that reads it gets the others): their ways are
 * listed, and the walks back made so far are stale if one of them lands in
 * code already decoded (a case going back into a loop). */
static void table_met(builder *b, size_t i, size_t t, size_t known) {
  reloc_plan *p = b->p;
  const reloc_table *tb = &p->tables[t];
  int32_t before = p->insns[i].table_jmp;
  if (before >= 0 && before != (int32_t)t) b->ways_relist = true; /* it read another: listed again */
  if (b->way_head && !b->ways_relist) {
    for (size_t j = 0; j < p->n && known > 0 && known < tb->nentries; j++) /* widened; a new one has no other */
      if (j != i && p->insns[j].table_jmp == (int32_t)t) table_ways(b, j, t, known);
    table_ways(b, i, t, before == (int32_t)t ? known : 0);
  }
  for (size_t k = before == (int32_t)t ? known : 0; k < tb->nentries; k++)
    if (inside(p, tb->targets[k]) && p->at[tb->targets[k] - p->lo] > 0) {
      b->ways_back++;
      break;
    }
}

/* Resolves the indirect jmps not yet examined; new tables add work. */
static lp_status resolve_tables(builder *b, bool *more) {
  reloc_plan *p = b->p;
  *more = false;
  for (; b->examined < b->nindirect; b->examined++) {
    size_t i = b->indirect[b->examined];
    const x64_insn *jmp = &p->insns[i].x;
    x64_table_match m = {0};
    b->branched = false;
    bool matched = x64_match_jump_table(jmp, prev_way, b, &m) &&
                   (!m.base_reg || m.table || base_of_cached(b, m.base_reg, &m.table, &m.ref) ||
                    base_reaches(b, i, m.base_reg, &m.table, &m.ref));
    for (size_t k = 0; matched && k < b->nunshared; k++) matched = m.table != b->unshared[k];
    if (!matched) {
      /* a tail call is no way back in; without call frame information, nor is
       * a jump in a function that never moves rsp (the C runtime's
       * deregister_tm_clones: `jmp *%rax` to _ITM_deregisterTMCloneTable) */
      bool reads, tail = tail_call(b, jmp, &reads);
      if (!tail && !b->fn->cfi && !reads) b->frameless_tail = true; /* once all is decoded */
      else if (!tail) b->leaves_to_original = true;
      continue;
    }
    uint64_t *targets = malloc(m.nentries * sizeof *targets);
    if (!targets) return lp_fail("out of memory");
    size_t g = 0; /* m's place among the guessed tables (one per table, dispatches through it apart) */
    while (m.guessed && g < b->nguessed && b->guessed[g] != m.table) g++;
    if (!read_table(b, &m, targets) || (m.guessed && g == MAX_GUESSED)) {
      leave_unresolved(b, targets);
      continue;
    }
    if (m.guessed && g == b->nguessed) b->guessed[b->nguessed++] = m.table;
    size_t t = 0, known = 0; /* the entries of table t whose ways in were there before */
    while (t < p->ntables && !(p->tables[t].table == m.table && p->tables[t].kind == m.kind)) t++;
    if (m.guarded) /* the entries an earlier attempt decoded, up to the first that was no code */
      for (size_t k = 0; k < b->ncuts; k++)
        if (b->cuts[k].table == m.table && b->cuts[k].limit < m.nentries) m.nentries = b->cuts[k].limit;
    if (m.guarded && m.nentries == 0) {
      leave_unresolved(b, targets);
      continue;
    }
    const reloc_insn *ref = m.ref ? &p->insns[p->at[m.ref - p->lo] - 1] : NULL;
    reloc_insn *ld = m.load && m.ref != m.load ? &p->insns[p->at[m.load - p->lo] - 1] : NULL;
    bool own_copy = false; /* a second dispatch through one table: under arcs, or guarded */
    if (ld && ld->table_load >= 0) {
      /* a load another dispatch reads too (one target kept in a slot and jumped
       * through twice): one table for both, whose entries cannot lead to the
       * stubs of either under arcs, nor a guard escape to both */
      if (p->probes.arcs || m.guarded) {
        leave_unresolved(b, targets);
        continue;
      }
      t = (size_t)ld->table_load;
    } else if (t < p->ntables && m.guarded && ref && ref->table_ref < 0) {
      t = p->ntables; /* one escape per guard: a copy of its own, named by its own lea */
    } else if (t < p->ntables && (p->probes.arcs || m.guarded)) {
      /* The stubs that count one dispatch's arcs need table entries of their
       * own, which the other dispatches read too, and a guard its own escape:
       * each dispatch gets a copy of the table, named by its own load (by a
       * displacement from the copy a base register holds, whether its lea is
       * on the way back or not: the copy its lea names; a copy of offsets
       * holds them from there too, where the add after the load counts them
       * from: the two dispatches of a Rust `Once` on one table).  Else
       * decoding starts again without the table (a guarded one leaves the
       * copy). */
      const x64_insn *load = m.load ? &p->insns[p->at[m.load - p->lo] - 1].x : NULL;
      own_copy = load && (m.ref != m.load ? x64_can_displace_table_load(load) : m.kind == X64_TABLE_ABS64);
      if (!own_copy && m.guarded) {
        leave_unresolved(b, targets);
        continue;
      }
      if (!own_copy) {
        free(targets);
        if (b->nunshared == MAX_UNSHARED) return lp_fail("too many jump tables shared by dispatches");
        b->shared = m.table;
        *more = false;
        return LP_OK;
      }
      if (ref && ref->table_ref >= 0) t = (size_t)ref->table_ref; /* the copy the base register holds */
    }
    if (t == p->ntables || own_copy) {
      reloc_table *nt = realloc(p->tables, (p->ntables + 1) * sizeof *nt);
      if (!nt) {
        free(targets);
        return lp_fail("out of memory");
      }
      p->tables = nt;
      p->tables[p->ntables] = (reloc_table){m.kind, m.table, m.nentries, targets, -1, m.base_reg,
                                            own_copy ? (int32_t)t : -1, m.guarded ? m.load : 0,
                                            m.guarded ? m.ref : 0, m.guard_reg, m.guard_unit};
      t = p->ntables++;
    } else if (m.nentries > p->tables[t].nentries) { /* same table, wider bound */
      known = p->tables[t].nentries;
      free(p->tables[t].targets);
      p->tables[t].targets = targets;
      p->tables[t].nentries = m.nentries;
    } else {
      known = p->tables[t].nentries;
      free(targets);
    }
    if (own_copy && !ld) { /* the jmp reads the entry: it names its copy */
      p->insns[p->at[m.load - p->lo] - 1].table_ref = (int32_t)t;
    } else if (!own_copy) {
      p->insns[p->at[m.ref - p->lo] - 1].table_ref = (int32_t)t; /* m.ref(2) were decoded */
      if (m.ref2) p->insns[p->at[m.ref2 - p->lo] - 1].table_ref = (int32_t)t;
    }
    if (ld) ld->table_load = (int32_t)t; /* its copy (the base register's lea keeps the first), or
                                            the table, which the layout reads as it is */
    table_met(b, i, t, known);
    p->insns[i].table_jmp = (int32_t)t;
    if (b->branched) {
      if (!grow((void **)&b->recheck, &b->caprecheck, b->nrecheck + 1, sizeof *b->recheck))
        return lp_fail("out of memory");
      b->recheck[b->nrecheck++] = i;
    }
    if (m.open || m.guarded) {
      open_table(b, t);
      continue;
    }
    for (size_t k = 0; k < p->tables[t].nentries; k++)
      if (inside(p, p->tables[t].targets[k])) LP_CHECK(push_work(b, p->tables[t].targets[k]));
    *more = true;
  }
  return LP_OK;
}

/* }=== */


/* Puts the instructions in address order and renumbers the byte map: the map
 * already holds that order (one pass over it, no comparisons; a qsort of the
 * instructions was a tenth of planning).  In place, following the
 * permutation's cycles, and the array shrunk to fit: sqlite3VdbeExec's
 * instructions take 2.5 MB, and a sorted copy beside them was the tracer's
 * peak of memory (pages first touched are costly, docs/PERFORMANCE.md). */
static lp_status sort_insns(reloc_plan *p) {
  uint32_t *to = malloc((p->n ? p->n : 1) * sizeof *to); /* to[i]: where insns[i] goes */
  if (!to) return lp_fail("out of memory");
  uint32_t k = 0;
  for (uint64_t a = p->lo; a < p->hi; a++) {
    int32_t *s = &p->at[a - p->lo];
    if (*s > 0) {
      to[*s - 1] = k;
      *s = (int32_t)++k;
    } else if (*s < 0) {
      *s = -(int32_t)k; /* a byte inside the instruction just numbered */
    }
  }
  for (uint32_t i = 0; i < k; i++)
    while (to[i] != i) { /* insns[i] to its place; what was there comes to i */
      uint32_t j = to[i];
      reloc_insn t = p->insns[j];
      p->insns[j] = p->insns[i];
      p->insns[i] = t;
      to[i] = to[j];
      to[j] = j;
    }
  free(to);
  reloc_insn *fit = realloc(p->insns, (p->n ? p->n : 1) * sizeof *fit);
  if (fit) p->insns = fit;
  return LP_OK;
}

static void fill_info(const reloc_plan *p, bool leaves, reloc_info *info) {
  memset(info, 0, sizeof *info);
  info->copy_size = p->copy_size;
  info->ninstructions = p->n;
  info->nblocks = p->nblocks;
  info->nedges = p->nedges;
  info->ncounted = p->ncounted;
  info->ncalls = p->ncalls;
  info->ncounters = p->ncounters;
  info->block_slot = p->block_slot;
  info->edge_slot = p->edge_slot;
  info->call_slot = p->call_slot;
  info->side_slot = p->side_slot;
  info->nsaved = p->nsaved;
  for (size_t b = 0; p->probes.blocks == RELOC_BLOCKS_COVER && b < p->nblocks; b++)
    info->ncover_probes += p->blocks[b].cover == RELOC_COVER_PROBE;
  info->njump_tables = p->ntables;
  info->leaves_to_original = leaves;
  info->min_inner_target = UINT64_MAX;
  for (size_t e = 0; e < p->nedges; e++) { /* every branch or table target inside */
    const reloc_edge *ed = &p->edges[e];
    if (ed->kind == RELOC_EDGE_TAKEN || ed->kind == RELOC_EDGE_JUMP || ed->kind == RELOC_EDGE_TABLE)
      if (ed->target > p->entry && ed->target - p->entry < info->min_inner_target)
        info->min_inner_target = ed->target - p->entry;
  }
  size_t bytes = 0;
  for (size_t i = p->entry_index; i < p->n && bytes < 5; i++) {
    if (p->insns[i].x.addr != p->entry + bytes) break;
    bytes += p->insns[i].x.len;
  }
  info->entry_insn_bytes = bytes;
}

/* The measure pass: P laid out without a buffer, every label branch rel32,
 * which tells those a rel8 reaches (p->shorts), nsaved, and a size that the
 * copy never exceeds: with branches shorter every address comes earlier or
 * stays, and an aligned block's padding never ends later.  The pass with
 * those short is the emission (reloc_emit). */
static lp_status measure(reloc_plan *p) {
  x64_writer w;
  free(p->shorts);
  p->shorts = NULL;
  LP_CHECK(x64_writer_init(&w, NULL, 0, reloc_layout_labels(p)));
  lp_status st = reloc_layout(p, &w, NULL, NULL, 0, NULL, NULL, &p->nsaved, NULL);
  p->copy_size = w.offset;
  if (st == LP_OK) st = x64_writer_relax(&w, &p->shorts);
  x64_writer_clear(&w);
  return st;
}

lp_status reloc_plan_function(const reloc_function_desc *fn, const reloc_probes *probes,
                              reloc_plan **out, reloc_info *info) {
  *out = NULL;
  if (fn->lo >= fn->hi || fn->entry < fn->lo || fn->entry >= fn->hi)
    return lp_fail("entry 0x%" PRIx64 " outside [0x%" PRIx64 ", 0x%" PRIx64 ")", fn->entry,
                   fn->lo, fn->hi);
  if (fn->entry < fn->code_base || fn->entry - fn->code_base >= fn->code_size)
    return lp_fail("no code bytes at entry 0x%" PRIx64, fn->entry);

  /* the landing pads in the function and the points its other part jumps
   * back to are decoded too, so that a catch and what follows it run in the
   * copy (under arcs each gets a counter: the entries from outside) */
  uint64_t *sides = NULL;
  size_t nsides = 0;
  if (fn->cfi && reloc_lsda_pads(fn->cfi, fn->lo, fn->hi, &sides, &nsides) != LP_OK)
    nsides = 0; /* the copy's LSDA says why, at emission */
  if (fn->nentered) {
    uint64_t *all = realloc(sides, (nsides + fn->nentered) * sizeof *all);
    if (!all) {
      free(sides);
      return lp_fail("out of memory");
    }
    sides = all;
    for (size_t k = 0; k < fn->nentered; k++)
      if (fn->entered[k] > fn->entry && fn->entered[k] < fn->hi) sides[nsides++] = fn->entered[k];
  }

  /* decoding, again without the tables arcs cannot count through */
  uint64_t unshared[MAX_UNSHARED];
  size_t nunshared = 0;
  open_cut cuts[MAX_OPEN];
  size_t ncuts = 0, attempts = 0;
  bool open_off = false;
  reloc_plan *p;
  builder b;
  lp_status st;
  do {
    st = LP_ERR;
    if (!(p = calloc(1, sizeof *p))) {
      free(sides);
      return lp_fail("out of memory");
    }
    p->entry = fn->entry;
    p->lo = fn->lo;
    p->hi = fn->hi;
    if (probes) p->probes = *probes;
    if (p->probes.covered && p->probes.ncovered) { /* the layout reads it at emission too: the plan's own */
      if ((p->covered = malloc(p->probes.ncovered))) memcpy(p->covered, p->probes.covered, p->probes.ncovered);
      p->probes.covered = p->covered;
    }
    p->at = calloc((size_t)(fn->hi - fn->lo), sizeof *p->at);
    uint64_t code_end = fn->code_base + fn->code_size;
    b = (builder){.p = p, .fn = fn, .unshared = unshared, .nunshared = nunshared, .sides = sides, .nsides = nsides,
                  .walking = -1, .cuts = cuts, .ncuts = ncuts, .open_off = open_off};
    b.dhi = code_end < fn->hi ? code_end : fn->hi;
    if (!p->at || (p->probes.covered && !p->covered)) {
      lp_fail("out of memory");
      goto out;
    }
    /* room for an instruction every 4 bytes at first: growing an array of
     * reloc_insn (176 bytes each) from 16 copied it ~twice over */
    if (!grow((void **)&p->insns, &b.cap, (size_t)(fn->hi - fn->lo) / 4 + 16, sizeof *p->insns)) {
      lp_fail("out of memory");
      goto out;
    }
    if (push_work(&b, fn->entry) != LP_OK) goto out;
    for (size_t k = 0; k < nsides; k++)
      if (push_work(&b, sides[k]) != LP_OK) goto out;
    bool more = true;
    while (more) {
      if (drain(&b) != LP_OK) {
        if (b.walking >= 0) { /* an open table's entry past its end */
          cut_open_table(&b);
          break;
        }
        /* a guessed table read past its end: entries that are no code */
        if (!b.nguessed || nunshared + b.nguessed > MAX_UNSHARED) goto out;
        for (size_t k = 0; k + 1 < b.nguessed; k++) unshared[nunshared++] = b.guessed[k];
        b.shared = b.guessed[b.nguessed - 1];
        break;
      }
      if (resolve_tables(&b, &more) != LP_OK) goto out;
      if (!more && !b.cut && !b.shared && next_open_entry(&b, &more) != LP_OK) goto out;
    }
    ncuts = b.ncuts;
    if (b.cut) {
      open_off = ++attempts == MAX_CUT_ATTEMPTS;
    } else if (!b.shared && (b.shared = unsettled_table(&b)) && nunshared == MAX_UNSHARED) {
      lp_fail("the register holding the jump table at 0x%" PRIx64 " is written in a case", b.shared);
      goto out;
    }
    if (b.shared) unshared[nunshared++] = b.shared;
    if (b.shared || b.cut) { /* decoding starts again */
      free(b.work);
      free(b.indirect);
      free(b.ways);
      free(b.way_head);
      free(b.way_tail);
      free(b.recheck);
      free(b.defs);
      free(b.reach);
      reloc_plan_free(p);
    }
  } while (b.shared || b.cut);
  for (size_t i = 0; b.frameless_tail && !b.leaves_to_original && i < p->n; i++) /* a ret ends its path */
    b.leaves_to_original = p->insns[i].x.flow != X64_FLOW_RET && moves_stack(&p->insns[i]);
  name_copies_of_tables(p);
  if (sort_insns(p) != LP_OK) goto out;
  p->entry_index = (size_t)p->at[fn->entry - p->lo] - 1;
  for (size_t k = 0; k < nsides; k++) {
    long i = reloc_insn_at(p, sides[k]);
    if (i >= 0) p->insns[i].entered = true;
  }

  /* layout order: the entry and what follows it, then what lies below it */
  p->order = malloc(p->n * sizeof *p->order);
  p->copy_off = malloc(p->n * sizeof *p->copy_off);
  if (!p->order || !p->copy_off) {
    lp_fail("out of memory");
    goto out;
  }
  for (size_t k = 0; k < p->n; k++) p->order[k] = (p->entry_index + k) % p->n;

  if (reloc_build_cfg(p) != LP_OK) goto out;
  if (!(p->side_off = malloc((p->nblocks ? p->nblocks : 1) * sizeof *p->side_off))) {
    lp_fail("out of memory");
    goto out;
  }
  for (size_t b = 0; b < p->nblocks; b++) p->side_off[b] = -1; /* until emitted */
  reloc_flags_liveness(p);
  if (p->probes.blocks == RELOC_BLOCKS_COVER &&
      !(p->cover_off = malloc((p->nblocks ? p->nblocks : 1) * sizeof *p->cover_off))) {
    lp_fail("out of memory");
    goto out;
  }
  for (size_t b = 0; p->cover_off && b < p->nblocks; b++) p->cover_off[b] = -1; /* until emitted */
  reloc_dom dom = {0}; /* for the arcs' estimate and the cover probes */
  if ((p->probes.arcs || p->probes.blocks == RELOC_BLOCKS_COVER) && reloc_dom_build(p, &dom) != LP_OK) goto out;
  bool placed = reloc_place_probes(p, &dom) == LP_OK && reloc_place_cover(p, &dom) == LP_OK;
  reloc_dom_free(&dom);
  p->probes.edge_counts = NULL; /* the caller's: read by the tree alone */
  p->probes.nedge_counts = 0;
  if (!placed || measure(p) != LP_OK) goto out;
  st = LP_OK;
  fill_info(p, b.leaves_to_original, info);
  *out = p;
out:
  free(sides);
  free(b.work);
  free(b.indirect);
  free(b.ways);
  free(b.way_head);
  free(b.way_tail);
  free(b.recheck);
  free(b.defs);
  free(b.reach);
  if (st != LP_OK) reloc_plan_free(p);
  return st;
}

lp_status reloc_emit(reloc_plan *plan, uint64_t dest, uint8_t *out, uint64_t counters, reloc_redirect redirect,
                     void *ctx) {
  bool again = true;
  lp_status st = LP_OK;
  while (st == LP_OK && again) { /* again while a rel8 no longer reaches (padding grew) */
    x64_writer w;
    LP_CHECK(x64_writer_init(&w, out, dest, reloc_layout_labels(plan)));
    w.shorts = plan->shorts;
    st = reloc_layout(plan, &w, plan->copy_off, plan->cover_off, counters, redirect, ctx, NULL, plan);
    again = x64_writer_unrelax(&w, plan->shorts); /* then the flush may have failed on that rel8 */
    if (again) st = LP_OK;
    if (st == LP_OK && !again && w.offset > plan->copy_size)
      st = lp_fail("copy of 0x%" PRIx64 " longer than measured (%zu, %zu)", plan->entry, w.offset,
                   plan->copy_size);
    if (st == LP_OK && !again) plan->copy_size = w.offset;
    x64_writer_clear(&w);
  }
  if (st != LP_OK) return lp_context("relocating 0x%" PRIx64 " to 0x%" PRIx64, plan->entry, dest);
  return LP_OK;
}

const reloc_block *reloc_blocks(const reloc_plan *plan) { return plan->blocks; }
const reloc_edge *reloc_edges(const reloc_plan *plan) { return plan->edges; }
const reloc_call *reloc_calls(const reloc_plan *plan) { return plan->calls; }

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

lp_status reloc_plan_cover_again(reloc_plan *p, const uint8_t *covered, size_t n, reloc_info *info) {
  uint8_t *own = realloc(p->covered, n ? n : 1);
  if (!own) return lp_fail("out of memory");
  memcpy(own, covered, n);
  p->covered = own;
  p->probes.covered = own;
  p->probes.ncovered = n;
  p->norigins = 0; /* the origin map is recorded again */
  LP_CHECK(measure(p));
  info->copy_size = p->copy_size;
  info->nsaved = p->nsaved;
  return LP_OK;
}

bool reloc_probe_covered(const reloc_plan *p, size_t block) {
  return p->probes.covered && block < p->probes.ncovered && p->probes.covered[block];
}

int64_t reloc_cover_probe_offset(const reloc_plan *plan, size_t block) {
  return plan->cover_off && block < plan->nblocks ? plan->cover_off[block] : -1;
}

int64_t reloc_entry_probe_offset(const reloc_plan *plan) {
  if (!plan->probes.entry || !plan->probes.entry_cover || reloc_probe_covered(plan, 0)) return -1;
  return 0; /* L_TOP: block 0 is laid out first */
}

const reloc_origin *reloc_origins(const reloc_plan *plan, size_t *n) {
  *n = plan->norigins;
  return plan->origins;
}

size_t reloc_copy_size(const reloc_plan *plan) { return plan->copy_size; }

int64_t reloc_copy_offset(const reloc_plan *plan, uint64_t orig) {
  long i = reloc_insn_at(plan, orig);
  return i < 0 ? -1 : plan->copy_off[i];
}

/* CODE's bytes read one instruction after another over [at, to), up to the
 * first that does not decode (linear_next); FROM..TO clamped to the bytes. */
typedef struct linear {
  const reloc_function_desc *code;
  uint64_t at, to;
} linear;

static linear linear_from(const reloc_function_desc *code, uint64_t from, uint64_t to) {
  uint64_t end = code->code_base + code->code_size;
  if (from < code->code_base || to > end) to = from < code->code_base ? from : end;
  return (linear){code, from, to};
}

static bool linear_next(linear *l, x64_insn *in) {
  if (l->at >= l->to || !x64_decode(l->code->code + (l->at - l->code->code_base), l->to - l->at, l->at, in))
    return false;
  l->at += in->len;
  return true;
}

size_t reloc_jumps_into(const reloc_function_desc *code, uint64_t from, uint64_t to, uint64_t lo, uint64_t hi,
                        uint64_t *out, size_t max) {
  size_t n = 0;
  x64_insn in;
  for (linear l = linear_from(code, from, to); linear_next(&l, &in);) {
    bool direct = in.flow == X64_FLOW_JMP || in.flow == X64_FLOW_JCC || in.flow == X64_FLOW_JCC_SHORT;
    if (!direct || in.target < lo || in.target >= hi) continue;
    bool seen = false;
    for (size_t k = 0; k < n && k < max && !seen; k++) seen = out[k] == in.target;
    if (seen) continue;
    if (n < max) out[n] = in.target;
    n++;
  }
  return n;
}

size_t reloc_conditional_branches(const reloc_function_desc *code, uint64_t from, uint64_t to, uint64_t *out,
                                  size_t max) {
  size_t n = 0, len;
  x64_flow flow;
  for (linear l = linear_from(code, from, to);
       l.at < l.to && x64_decode_flow(code->code + (l.at - code->code_base), l.to - l.at, &len, &flow); l.at += len) {
    if (flow != X64_FLOW_JCC && flow != X64_FLOW_JCC_SHORT) continue;
    if (n < max) out[n] = l.at;
    n++;
  }
  return n;
}

bool reloc_starts_insns(const reloc_function_desc *code, uint64_t from, uint64_t to, const uint64_t *at, size_t n) {
  if (from < code->code_base || to > code->code_base + code->code_size) return false;
  size_t k = 0;
  x64_insn in;
  linear l = linear_from(code, from, to);
  while (linear_next(&l, &in)) {
    while (k < n && at[k] == in.addr) k++;               /* starts this one */
    if (k < n && at[k] < in.addr + in.len) return false; /* inside it, or before FROM */
  }
  return l.at == to && k == n;
}

int64_t reloc_side_entry_offset(const reloc_plan *plan, uint64_t orig) {
  long i = reloc_insn_at(plan, orig);
  if (i < 0 || !plan->insns[i].entered || !plan->side_off) return -1;
  return plan->side_off[plan->insns[i].block];
}

int64_t reloc_resume_offset(const reloc_plan *plan, uint64_t orig, bool after_call) {
  if (!after_call) return reloc_copy_offset(plan, orig);
  for (uint64_t len = 1; len <= 15 && orig - len >= plan->lo; len++) {
    long i = reloc_insn_at(plan, orig - len);
    if (i < 0) continue;
    const x64_insn *call = &plan->insns[i].x;
    if (call->len != len || (call->flow != X64_FLOW_CALL && call->flow != X64_FLOW_CALL_INDIRECT)) return -1;
    /* the call's copy ends where the next range of the origin map starts */
    for (size_t k = 0; k + 1 < plan->norigins; k++)
      if (plan->origins[k].offset <= (size_t)plan->copy_off[i] && (size_t)plan->copy_off[i] < plan->origins[k + 1].offset)
        return plan->origins[k + 1].orig == orig ? (int64_t)plan->origins[k + 1].offset : -1;
    return -1;
  }
  return -1;
}

void reloc_plan_rebase(reloc_plan *p, int64_t delta) {
  uint64_t d = (uint64_t)delta;
  if (!d) return;
  p->entry += d, p->lo += d, p->hi += d;
  for (size_t i = 0; i < p->n; i++) {
    x64_insn *x = &p->insns[i].x;
    x->addr += d;
    if (x->target) x->target += d; /* a relative immediate's (direct branches) */
    if (x->rip_relative) x->rip_target += d;
  }
  for (size_t t = 0; t < p->ntables; t++) {
    p->tables[t].table += d;
    for (size_t k = 0; k < p->tables[t].nentries; k++) p->tables[t].targets[k] += d;
    if (p->tables[t].guard) p->tables[t].guard += d, p->tables[t].guard_ref += d;
  }
  for (size_t b = 0; b < p->nblocks; b++) p->blocks[b].addr += d;
  for (size_t e = 0; e < p->nedges; e++) {
    p->edges[e].branch += d;
    if (p->edges[e].target) p->edges[e].target += d;
  }
  for (size_t c = 0; c < p->ncalls; c++) {
    p->calls[c].site += d;
    if (p->calls[c].target) p->calls[c].target += d;
  }
}

void reloc_plan_free(reloc_plan *plan) {
  if (!plan) return;
  for (size_t t = 0; t < plan->ntables; t++) free(plan->tables[t].targets);
  free(plan->tables);
  free(plan->insns);
  free(plan->at);
  free(plan->order);
  free(plan->copy_off);
  free(plan->cover_off);
  free(plan->side_off);
  free(plan->blocks);
  free(plan->bdata);
  free(plan->edges);
  free(plan->edata);
  free(plan->calls);
  free(plan->origins);
  free(plan->covered);
  free(plan->shorts);
  free(plan);
}
