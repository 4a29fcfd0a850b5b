/* test_reloc.c — unit tests of the whole-function relocator (relocate/ over arch/x86_64).
 *
 * Byte tables in the Frida style: input bytes with their disassembly, planned
 * at SRC and emitted at SRC + 0x10000000, checked against expected bytes, and
 * by an oracle that decodes the copy and checks that every RIP-relative
 * operand and branch names the same absolute address or the copy of the same
 * target (through any probes and edge stubs on the way).  Probe shapes and
 * placements (entry, block cover/count, edges on fall, taken, table and
 * return, call sites, shared flag saves), flags liveness, the blocks and
 * edges of the CFG, the origin map and the spanning-tree property are checked here; the
 * execution oracle is in test_flow.c.  No arguments; exit status 0 when all
 * pass. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <Zydis/Zydis.h>

#include "reloc.h"
#include "reloc_flow.h"
#include "reloc_internal.h" /* reloc_dom: loops, below */
#include "unit.h"
#include "x64_decode.h"
#include "x64_writer.h"

#define SRC 0x400000ull
#define DEST (SRC + 0x10000000ull)
#define COUNTER (SRC + 0x5000ull)

typedef struct fn_case {
  const char *name;
  const uint8_t *code;
  size_t code_size; /* bytes readable (function plus any table after it) */
  size_t fn_size;   /* hi - lo */
  size_t entry;     /* offset of the entry */
  uint64_t base;    /* run-time address of code[0] (SRC when 0) */
} fn_case;

/* The read-only ranges every case is planned with (a test of tables that
 * only their index's width bounds sets them; none otherwise). */
static const uint64_t (*readonly)[2];
static size_t nreadonly;

static reloc_function_desc desc(const fn_case *c) {
  uint64_t base = c->base ? c->base : SRC;
  return (reloc_function_desc){.entry = base + c->entry, .lo = base, .hi = base + c->fn_size,
                               .code = c->code, .code_base = base, .code_size = c->code_size,
                               .readonly = readonly, .nreadonly = nreadonly};
}

/* An instruction with its operands, which the checks below read. */
static bool decode(const uint8_t *code, size_t avail, uint64_t addr, x64_insn *out) {
  return x64_decode(code, avail, addr, out) && x64_decode_operands(out);
}

static void dump(const char *what, const uint8_t *b, size_t n) {
  printf("  %s:", what);
  for (size_t i = 0; i < n; i++) printf(" %02x", b[i]);
  printf("\n");
}

/* Is OFF the offset in P's copy of an instruction of [LO, HI)? */
static bool copies_insn(const reloc_plan *p, uint64_t lo, uint64_t hi, int64_t off) {
  for (uint64_t a = lo; a < hi; a++)
    if (reloc_copy_offset(p, a) == off) return true;
  return false;
}

/* From A in the copy, steps over probe code (counter updates, saves)
 * and follows the jmps of edge stubs and broken fall-throughs (a jmp that
 * is not the copy of one of [LO, HI)): where control ends up. */
static uint64_t follow(const reloc_plan *p, uint64_t lo, uint64_t hi, const uint8_t *out, uint64_t dest,
                       size_t size, uint64_t a) {
  for (int steps = 0; steps < 16 && a >= dest && a < dest + size; steps++) {
    x64_insn i;
    if (!decode(out + (a - dest), dest + size - a, a, &i)) return a;
    bool rax = i.op[0].type == X64_OP_REG && i.op[0].reg == ZYDIS_REGISTER_RAX;
    bool probe = (i.mnemonic == ZYDIS_MNEMONIC_INC && i.rip_relative) ||
                 (i.mnemonic == ZYDIS_MNEMONIC_MOV && i.rip_relative && i.op[1].type == X64_OP_IMM) ||
                 (i.mnemonic == ZYDIS_MNEMONIC_LEA && i.op[0].reg == ZYDIS_REGISTER_RSP) ||
                 i.mnemonic == ZYDIS_MNEMONIC_PUSHFQ || i.mnemonic == ZYDIS_MNEMONIC_POPFQ ||
                 /* a counter added to through rax: push; mov rax,[c]; lea rax,[rax+1]; mov [c],rax; pop */
                 ((i.mnemonic == ZYDIS_MNEMONIC_PUSH || i.mnemonic == ZYDIS_MNEMONIC_POP) && rax) ||
                 (i.mnemonic == ZYDIS_MNEMONIC_MOV && i.rip_relative &&
                  (rax || (i.op[1].type == X64_OP_REG && i.op[1].reg == ZYDIS_REGISTER_RAX))) ||
                 (i.mnemonic == ZYDIS_MNEMONIC_LEA && rax && i.op[1].base == ZYDIS_REGISTER_RAX &&
                  i.op[1].disp == 1);
    if (i.flow == X64_FLOW_JMP && !copies_insn(p, lo, hi, (int64_t)(a - dest)))
      a = i.target; /* a stub's way on (or a broken fall-through) */
    else if (probe)
      a += i.len;
    else
      return a;
  }
  return a;
}

/* At OFF, the copy of the load O of a guarded table's entry: `cmp r, n` on
 * one register of its address (the index; -O0's index times 4), `jae` to an
 * escape that gives the other an address outside the copy (the original
 * table) and jumps to O itself, then O as is.  Returns the offset of that O
 * (-1, the check failed). */
static int64_t guarded_load(const char *name, const x64_insn *o, const uint8_t *out, uint64_t dest,
                            size_t size, int64_t off) {
  x64_insn cmp, jae, lea, jmp;
  size_t at = (size_t)off;
  bool ok = decode(out + at, size - at, dest + at, &cmp) && cmp.mnemonic == ZYDIS_MNEMONIC_CMP &&
            cmp.op[0].type == X64_OP_REG && (cmp.op[0].reg == o->op[1].index || cmp.op[0].reg == o->op[1].base) &&
            cmp.op[0].size == 64 &&
            cmp.op[1].type == X64_OP_IMM && cmp.op[1].imm > 0 &&
            decode(out + at + cmp.len, size - at - cmp.len, dest + at + cmp.len, &jae) &&
            (jae.flow == X64_FLOW_JCC || jae.flow == X64_FLOW_JCC_SHORT) && jae.cc == 0x3 &&
            jae.target >= dest && jae.target < dest + size;
  ok = ok && decode(out + (jae.target - dest), size - (jae.target - dest), jae.target, &lea) &&
       lea.mnemonic == ZYDIS_MNEMONIC_LEA && lea.rip_relative &&
       lea.op[0].reg == (cmp.op[0].reg == o->op[1].index ? o->op[1].base : o->op[1].index) &&
       (lea.rip_target < dest || lea.rip_target >= dest + size) &&
       decode(out + (jae.target - dest) + lea.len, 5, jae.target + lea.len, &jmp) &&
       jmp.flow == X64_FLOW_JMP && jmp.target == o->addr;
  CHECK(ok, "load at 0x%" PRIx64 " has no guard to the original load", o->addr);
  return ok ? off + cmp.len + jae.len : -1;
}

/* Decodes the copy at every original instruction's offset and compares. */
static void oracle(const char *name, const fn_case *c, const reloc_plan *p, const uint8_t *out,
                   uint64_t dest, size_t copy_size) {
  reloc_function_desc d = desc(c);
  for (uint64_t a = d.lo; a < d.hi; a++) {
    int64_t off = reloc_copy_offset(p, a);
    if (off < 0) continue;
    x64_insn o, n;
    if (!decode(c->code + (a - d.code_base), d.hi - a, a, &o) ||
        !decode(out + off, 15, dest + (uint64_t)off, &n)) {
      CHECK(0, "oracle cannot decode at 0x%" PRIx64, a);
      continue;
    }
    if (o.mnemonic != ZYDIS_MNEMONIC_CMP && n.mnemonic == ZYDIS_MNEMONIC_CMP && o.nops == 2 &&
        o.op[1].type == X64_OP_MEM &&
        ((off = guarded_load(name, &o, out, dest, copy_size, off)) < 0 ||
         !decode(out + off, 15, dest + (uint64_t)off, &n)))
      continue;
    uint64_t want = 0;
    if (o.flow == X64_FLOW_JMP || o.flow == X64_FLOW_JCC || o.flow == X64_FLOW_JCC_SHORT) {
      int64_t t = reloc_copy_offset(p, o.target);
      want = t >= 0 ? dest + (uint64_t)t : o.target;
    }
    uint64_t reach = follow(p, d.lo, d.hi, out, dest, copy_size, n.target);
    switch (o.flow) {
    case X64_FLOW_JMP:
    case X64_FLOW_JCC:
      CHECK(n.flow == o.flow && n.cc == o.cc && reach == want,
            "branch at 0x%" PRIx64 " goes to 0x%" PRIx64 ", want 0x%" PRIx64, a, reach, want);
      break;
    case X64_FLOW_JCC_SHORT: { /* op +2; jmp short +5; jmp rel32 */
      x64_insn j;
      size_t at = (size_t)off + n.len + 2;
      bool ok = n.mnemonic == o.mnemonic && n.target == dest + at &&
                decode(out + at, 5, dest + at, &j) && j.flow == X64_FLOW_JMP &&
                follow(p, d.lo, d.hi, out, dest, copy_size, j.target) == want;
      CHECK(ok, "short branch at 0x%" PRIx64 " not rewritten to reach 0x%" PRIx64, a, want);
      break;
    }
    case X64_FLOW_CALL: /* to the original callee; recursion to the copy's entry */
      want = o.target == d.entry ? dest : o.target;
      CHECK(n.flow == X64_FLOW_CALL && n.target == want, "call at 0x%" PRIx64 " goes to 0x%" PRIx64
            ", want 0x%" PRIx64, a, n.target, want);
      break;
    default:
      if (o.rip_relative && o.mnemonic == ZYDIS_MNEMONIC_LEA && n.rip_target != o.rip_target) {
        /* a lea naming a rewritten jump table: must name the copy's own table */
        CHECK(n.mnemonic == ZYDIS_MNEMONIC_LEA && n.rip_target >= dest + (uint64_t)off + n.len &&
                  n.rip_target < dest + copy_size,
              "lea at 0x%" PRIx64 " names 0x%" PRIx64, a, n.rip_target);
      } else if (o.rip_relative) {
        CHECK(n.rip_relative && n.rip_target == o.rip_target,
              "rip operand at 0x%" PRIx64 " names 0x%" PRIx64 ", want 0x%" PRIx64, a,
              n.rip_target, o.rip_target);
      } else if (o.disp_size == 32 && o.flow == X64_FLOW_NEXT && o.nops == 2 &&
                 o.op[1].type == X64_OP_MEM && o.op[1].base == 0 && memcmp(o.bytes, n.bytes, o.len)) {
        /* mov rJ, [rX*8+T] naming a rewritten jump table: must name the copy's own table */
        CHECK(n.len == o.len && n.op[1].type == X64_OP_MEM && (uint64_t)n.op[1].disp >= dest &&
                  (uint64_t)n.op[1].disp < dest + copy_size,
              "mov at 0x%" PRIx64 " names 0x%" PRIx64, a, (uint64_t)n.op[1].disp);
      } else if ((o.mnemonic == ZYDIS_MNEMONIC_MOV || o.mnemonic == ZYDIS_MNEMONIC_MOVSXD) && o.nops == 2 &&
                 o.op[1].type == X64_OP_MEM && o.op[1].base && o.op[1].index && o.op[1].disp == 0 &&
                 memcmp(o.bytes, n.bytes, o.len)) {
        /* mov rJ, [rB+rX*8] (movsxd rI, [rB+rX*4]) of a dispatch with a table of its
         * own: the same load with the distance to that table (checked where the
         * test makes one) */
        CHECK(n.mnemonic == o.mnemonic && n.op[0].reg == o.op[0].reg && n.op[1].base == o.op[1].base &&
                  n.op[1].index == o.op[1].index && n.op[1].scale == o.op[1].scale && n.op[1].disp != 0,
              "load at 0x%" PRIx64 " is not the same load with a displacement", a);
      } else if (o.flow == X64_FLOW_JMP_INDIRECT && o.op[0].type == X64_OP_MEM && o.op[0].base &&
                 o.op[0].index && o.op[0].disp == 0 && memcmp(o.bytes, n.bytes, o.len)) {
        /* jmp [rB+rX*8] of a dispatch with a table of its own: the same with a displacement */
        CHECK(n.flow == X64_FLOW_JMP_INDIRECT && n.op[0].base == o.op[0].base && n.op[0].index == o.op[0].index &&
                  n.op[0].scale == o.op[0].scale && n.op[0].disp != 0,
              "jmp at 0x%" PRIx64 " is not the same jmp with a displacement", a);
      } else if (o.disp_size != 32 || o.flow != X64_FLOW_JMP_INDIRECT) {
        CHECK(o.len == n.len && !memcmp(o.bytes, n.bytes, o.len),
              "instruction at 0x%" PRIx64 " not copied as is", a);
      }
    }
  }
}

/* The origin map: sorted ranges from offset 0, neighbours distinct, the
 * range holding each instruction's copy names that instruction with rsp
 * where the original has it, and every change of sp_below is explained by
 * the instruction of the copy that ends there (lea rsp,[rsp-128], push rax
 * or pushfq, pop rax or popfq, lea rsp,[rsp+128]). */
static void check_origins(const char *name, const fn_case *c, const reloc_plan *p, const uint8_t *out,
                          size_t copy_size) {
  size_t n;
  const reloc_origin *o = reloc_origins(p, &n);
  CHECK(n > 0 && o[0].offset == 0 && o[0].sp_below == 0, "origin map does not start at 0");
  for (size_t k = 1; k < n; k++) {
    CHECK(o[k - 1].offset < o[k].offset && (o[k - 1].orig != o[k].orig || o[k - 1].sp_below != o[k].sp_below) &&
              o[k].offset < copy_size,
          "origin ranges %zu, %zu out of order", k - 1, k);
    if (o[k - 1].sp_below == o[k].sp_below) continue;
    int64_t moved = (int64_t)o[k].sp_below - (int64_t)o[k - 1].sp_below;
    bool explained = false;
    for (size_t len = 1; len <= 8 && len <= o[k].offset && !explained; len++) {
      x64_insn i;
      size_t at = o[k].offset - len;
      if (!decode(out + at, len, DEST + at, &i) || i.len != len) continue;
      bool rax = i.op[0].type == X64_OP_REG && i.op[0].reg == ZYDIS_REGISTER_RAX;
      explained = ((i.mnemonic == ZYDIS_MNEMONIC_PUSHFQ || (i.mnemonic == ZYDIS_MNEMONIC_PUSH && rax)) &&
                   moved == 8) ||
                  ((i.mnemonic == ZYDIS_MNEMONIC_POPFQ || (i.mnemonic == ZYDIS_MNEMONIC_POP && rax)) &&
                   moved == -8) ||
                  (i.mnemonic == ZYDIS_MNEMONIC_LEA && i.op[0].reg == ZYDIS_REGISTER_RSP &&
                   i.op[1].type == X64_OP_MEM && i.op[1].base == ZYDIS_REGISTER_RSP && i.op[1].disp == -moved);
    }
    CHECK(explained, "rsp moves by %" PRId64 " at copy +0x%zx, no instruction there does", moved, o[k].offset);
  }
  reloc_function_desc d = desc(c);
  for (uint64_t a = d.lo; a < d.hi && n > 0; a++) {
    int64_t off = reloc_copy_offset(p, a);
    if (off < 0) continue;
    size_t k = 0;
    while (k + 1 < n && o[k + 1].offset <= (size_t)off) k++;
    CHECK(o[k].orig == a && o[k].sp_below == 0, "copy of 0x%" PRIx64 " lies in a range of 0x%" PRIx64 " (rsp -%u)", a,
          o[k].orig, o[k].sp_below);
  }
}

/* Plans C, emits at DEST; checks EXPECT (when given) and runs the oracle.
 * Returns the plan (caller frees) and the copy in *OUT. */
static reloc_plan *run(const fn_case *c, const reloc_probes *probes, uint64_t dest,
                       const uint8_t *expect, size_t expect_size, reloc_info *info,
                       uint8_t **out) {
  const char *name = c->name;
  reloc_function_desc d = desc(c);
  reloc_plan *p = NULL;
  *out = NULL;
  reloc_probes none = {0};
  if (reloc_plan_function(&d, probes ? probes : &none, &p, info) != LP_OK) {
    CHECK(0, "plan failed: %s", lp_error());
    return NULL;
  }
  /* spanning tree: the counted edges are exactly those off it (a connected
   * graph with EXIT and the virtual edge EXIT->entry) */
  const reloc_edge *edges = reloc_edges(p);
  size_t counted = 0;
  for (size_t e = 0; e < info->nedges; e++) counted += edges[e].counted;
  CHECK(info->ncounted == tree_counted(p, info, probes && probes->entry && !probes->entry_cover), "%zu off-tree of %zu edges, %zu blocks",
        info->ncounted, info->nedges, info->nblocks);
  CHECK(counted == (probes && probes->arcs ? info->ncounted : 0), "%zu edges marked counted", counted);
  for (size_t e = 1; e < info->nedges; e++)
    CHECK(edges[e - 1].from < edges[e].from ||
              (edges[e - 1].from == edges[e].from && (edges[e - 1].kind < edges[e].kind ||
               (edges[e - 1].kind == edges[e].kind && edges[e - 1].target < edges[e].target))),
          "edges %zu, %zu out of order", e - 1, e);
  *out = calloc(1, info->copy_size + 1);
  if (reloc_emit(p, dest, *out, COUNTER, NULL, NULL) != LP_OK) {
    CHECK(0, "emit failed: %s", lp_error());
    return p;
  }
  CHECK(reloc_copy_size(p) <= info->copy_size, "emitted %zu bytes, measured at most %zu", reloc_copy_size(p),
        info->copy_size);
  info->copy_size = reloc_copy_size(p); /* from here on: what was written */
  if (expect) {
    bool same = info->copy_size == expect_size && !memcmp(*out, expect, expect_size);
    CHECK(same, "copy differs (size %zu, expected %zu)", info->copy_size, expect_size);
    if (!same) {
      dump("got ", *out, info->copy_size);
      dump("want", expect, expect_size);
    }
  }
  oracle(name, c, p, *out, dest, info->copy_size);
  if (dest == DEST) check_origins(name, c, p, *out, info->copy_size);
  return p;
}

/* Emits P at DEST into a scratch buffer: the offsets in the copy are known
 * from then on. */
static bool emitted(reloc_plan *p, const reloc_info *info) {
  uint8_t *out = malloc(info->copy_size + 1);
  bool ok = out && reloc_emit(p, DEST, out, COUNTER, NULL, NULL) == LP_OK;
  free(out);
  return ok;
}

static void expect_case(const fn_case *c, const reloc_probes *probes, const uint8_t *expect,
                        size_t expect_size, reloc_info *info) {
  uint8_t *out;
  reloc_plan *p = run(c, probes, DEST, expect, expect_size, info, &out);
  reloc_plan_free(p);
  free(out);
}

static void expect_plan_failure(const fn_case *c, const char *why) {
  const char *name = c->name;
  reloc_function_desc d = desc(c);
  reloc_probes none = {0};
  reloc_plan *p = NULL;
  reloc_info info;
  lp_status st = reloc_plan_function(&d, &none, &p, &info);
  CHECK(st == LP_ERR && p == NULL, "plan did not fail");
  CHECK(strstr(lp_error(), why) != NULL, "message \"%s\" lacks \"%s\"", lp_error(), why);
  reloc_plan_free(p);
}

#define CASE(nm, bytes, fnsize, entry) \
  (fn_case) { nm, bytes, sizeof bytes, fnsize, entry, 0 }

/* {=== straight-line code and direct branches ===*/

static void test_prologue(void) {
  static const uint8_t in[] = {
      0x55,                   /* push rbp */
      0x48, 0x89, 0xe5,       /* mov rbp, rsp */
      0x48, 0x83, 0xec, 0x10, /* sub rsp, 0x10 */
      0x89, 0x7d, 0xfc,       /* mov [rbp-4], edi */
      0xc9,                   /* leave */
      0xc3,                   /* ret */
  };
  const char *name = "prologue";
  fn_case c = CASE(name, in, sizeof in, 0);
  reloc_info info;
  expect_case(&c, NULL, in, sizeof in, &info);
  CHECK(info.ninstructions == 6 && info.nblocks == 1, "%zu insns %zu blocks", info.ninstructions,
        info.nblocks);
  CHECK(info.min_inner_target == UINT64_MAX, "min_inner_target %" PRIu64, info.min_inner_target);
  CHECK(info.entry_insn_bytes == 8, "entry_insn_bytes %zu", info.entry_insn_bytes);
  CHECK(!info.leaves_to_original && info.njump_tables == 0, "tables/leaves");
}

static void test_jcc_rel8(void) {
  static const uint8_t in[] = {
      0x85, 0xff,                   /* 0: test edi, edi */
      0x74, 0x03,                   /* 2: je 7 */
      0x31, 0xc0,                   /* 4: xor eax, eax */
      0xc3,                         /* 6: ret */
      0xb8, 0x01, 0x00, 0x00, 0x00, /* 7: mov eax, 1 */
      0xc3,                         /* c: ret */
  };
  static const uint8_t want[] = {
      0x85, 0xff,                   /* 00: test edi,edi */
      0x74, 0x03,                   /* 02: je copy of 7 (rel8 reaches) */
      0x31, 0xc0,                   /* 04: xor eax,eax */
      0xc3,                         /* 06: ret */
      0xb8, 0x01, 0x00, 0x00, 0x00, /* 07: mov eax,0x1 */
      0xc3,                         /* 0c: ret */
  };
  const char *name = "jcc rel8";
  fn_case c = CASE(name, in, sizeof in, 0);
  reloc_info info;
  expect_case(&c, NULL, want, sizeof want, &info);
  CHECK(info.nblocks == 3, "%zu blocks", info.nblocks);
  CHECK(info.min_inner_target == 7, "min_inner_target %" PRIu64, info.min_inner_target);
  CHECK(info.entry_insn_bytes == 6, "entry_insn_bytes %zu", info.entry_insn_bytes);
  uint8_t *out;
  reloc_plan *p = run(&c, NULL, DEST, want, sizeof want, &info, &out);
  CHECK(p && reloc_copy_offset(p, SRC + 7) == 7 && reloc_copy_offset(p, SRC + 1) == -1 &&
            reloc_copy_offset(p, SRC + 0x100) == -1,
        "reloc_copy_offset");
  reloc_plan_free(p);
  free(out);
}

static void test_loop_back_edge(void) {
  static const uint8_t in[] = {
      0x31, 0xc0, /* 0: xor eax, eax */
      0x01, 0xf8, /* 2: add eax, edi */
      0xff, 0xcf, /* 4: dec edi */
      0x75, 0xfa, /* 6: jne 2 */
      0xc3,       /* 8: ret */
  };
  static const uint8_t want[] = {
      0x31, 0xc0, /* 00: xor eax,eax */
      0x01, 0xf8, /* 02: add eax,edi */
      0xff, 0xcf, /* 04: dec edi */
      0x75, 0xfa, /* 06: jne copy of 2 */
      0xc3,       /* 08: ret */
  };
  const char *name = "loop back-edge";
  fn_case c = CASE(name, in, sizeof in, 0);
  reloc_info info;
  expect_case(&c, NULL, want, sizeof want, &info);
  CHECK(info.nblocks == 3 && info.min_inner_target == 2, "%zu blocks, min %" PRIu64,
        info.nblocks, info.min_inner_target);
}

/* A link map with one copied callee: SRC+0x1000 lives at DEST+0x11000. */
static uint64_t copy_of_callee(void *ctx, uint64_t target) {
  (void)ctx;
  return target == SRC + 0x1000 ? DEST + 0x11000 : target;
}

static void test_call_and_tail_jmp(void) {
  static const uint8_t in[] = {
      0x48, 0x83, 0xec, 0x08,       /* 0: sub rsp, 8 */
      0xe8, 0xf7, 0x0f, 0x00, 0x00, /* 4: call SRC+0x1000 */
      0x48, 0x83, 0xc4, 0x08,       /* 9: add rsp, 8 */
      0xeb, 0x30,                   /* d: jmp SRC+0x3f (tail, rel8) */
  };
  static const uint8_t want[] = {
      0x48, 0x83, 0xec, 0x08,       /* sub rsp, 8 */
      0xe8, 0xf7, 0x0f, 0x00, 0xf0, /* call SRC+0x1000 */
      0x48, 0x83, 0xc4, 0x08,       /* add rsp, 8 */
      0xe9, 0x2d, 0x00, 0x00, 0xf0, /* jmp SRC+0x3f (rel32) */
  };
  const char *name = "call external, tail jmp";
  fn_case c = CASE(name, in, sizeof in, 0);
  reloc_info info;
  expect_case(&c, NULL, want, sizeof want, &info);
  CHECK(info.nblocks == 2 && info.min_inner_target == UINT64_MAX && !info.leaves_to_original,
        "%zu blocks", info.nblocks); /* the call ends a block */

  /* the callees are listed, and the copy can be linked to their copies */
  static const uint8_t linked[] = {
      0x48, 0x83, 0xec, 0x08,       /* sub rsp, 8 */
      0xe8, 0xf7, 0x0f, 0x01, 0x00, /* call DEST+0x11000 (the callee's copy) */
      0x48, 0x83, 0xc4, 0x08,       /* add rsp, 8 */
      0xe9, 0x2d, 0x00, 0x00, 0xf0, /* jmp SRC+0x3f (no copy: unchanged) */
  };
  name = "callees and linking";
  reloc_function_desc d = desc(&c);
  reloc_probes none = {0};
  reloc_plan *p;
  if (reloc_plan_function(&d, &none, &p, &info) != LP_OK) {
    CHECK(0, "plan failed: %s", lp_error());
    return;
  }
  uint64_t callees[4] = {0};
  size_t n = reloc_callees(p, callees, 4);
  CHECK(n == 2 && callees[0] == SRC + 0x1000 && callees[1] == SRC + 0x3f,
        "%zu callees: 0x%" PRIx64 ", 0x%" PRIx64, n, callees[0], callees[1]);
  CHECK(reloc_callees(p, callees, 1) == 2, "count past MAX");
  uint8_t out[sizeof linked + 64];
  CHECK(info.copy_size <= sizeof out && reloc_emit(p, DEST, out, COUNTER, copy_of_callee, NULL) == LP_OK &&
            reloc_copy_size(p) == sizeof linked && !memcmp(out, linked, sizeof linked),
        "linked copy differs");
  reloc_plan_free(p);
}

static void test_recursion(void) {
  static const uint8_t in[] = {
      0x85, 0xff,                   /* 0: test edi, edi */
      0x74, 0x07,                   /* 2: je b */
      0xff, 0xcf,                   /* 4: dec edi */
      0xe8, 0xf5, 0xff, 0xff, 0xff, /* 6: call 0 (itself) */
      0xc3,                         /* b: ret */
  };
  static const uint8_t want[] = {
      0x85, 0xff,                   /* 00: test edi,edi */
      0x74, 0x07,                   /* 02: je copy of b */
      0xff, 0xcf,                   /* 04: dec edi */
      0xe8, 0xf5, 0xff, 0xff, 0xff, /* 06: call the copy's entry */
      0xc3,                         /* 0b: ret */
  };
  const char *name = "recursion";
  fn_case c = CASE(name, in, sizeof in, 0);
  reloc_info info;
  expect_case(&c, NULL, want, sizeof want, &info);
}

static void test_rip_relative(void) {
  static const uint8_t in[] = {
      0x48, 0x8b, 0x05, 0xf9, 0x0f, 0x00, 0x00,       /* 00: mov rax, [rip+0xff9] */
      0x48, 0x8d, 0x0d, 0xf2, 0x0f, 0x00, 0x00,       /* 07: lea rcx, [rip+0xff2] */
      0x83, 0x3d, 0xeb, 0x0f, 0x00, 0x00, 0x05,       /* 0e: cmp dword [rip+0xfeb], 5 */
      0xf3, 0x0f, 0x10, 0x05, 0xe3, 0x0f, 0x00, 0x00, /* 15: movss xmm0, [rip+0xfe3] */
      0xc5, 0xf8, 0x28, 0x0d, 0xdc, 0x0f, 0x00, 0x00, /* 1d: vmovaps xmm1, [rip+0xfdc] */
      0xff, 0x15, 0xd5, 0x0f, 0x00, 0x00,             /* 25: call [rip+0xfd5] */
      0xff, 0x25, 0xcf, 0x0f, 0x00, 0x00,             /* 2b: jmp [rip+0xfcf] (GOT tail) */
  };
  static const uint8_t want[] = {
      0x48, 0x8b, 0x05, 0xf9, 0x0f, 0x00, 0xf0,       /* mov rax, [rip-0x0ffff007] */
      0x48, 0x8d, 0x0d, 0xf2, 0x0f, 0x00, 0xf0,       /* lea rcx, … */
      0x83, 0x3d, 0xeb, 0x0f, 0x00, 0xf0, 0x05,       /* cmp dword […], 5 */
      0xf3, 0x0f, 0x10, 0x05, 0xe3, 0x0f, 0x00, 0xf0, /* movss xmm0, […] */
      0xc5, 0xf8, 0x28, 0x0d, 0xdc, 0x0f, 0x00, 0xf0, /* vmovaps xmm1, […] */
      0xff, 0x15, 0xd5, 0x0f, 0x00, 0xf0,             /* call […] */
      0xff, 0x25, 0xcf, 0x0f, 0x00, 0xf0,             /* jmp […] */
  };
  const char *name = "rip-relative";
  fn_case c = CASE(name, in, sizeof in, 0);
  reloc_info info;
  expect_case(&c, NULL, want, sizeof want, &info);
  CHECK(info.ninstructions == 7 && !info.leaves_to_original, "%zu insns, leaves %d",
        info.ninstructions, info.leaves_to_original);
}

static void test_jrcxz(void) {
  static const uint8_t in[] = {
      0xe3, 0x03, /* 0: jrcxz 5 */
      0x31, 0xc0, /* 2: xor eax, eax */
      0xc3,       /* 4: ret */
      0xb0, 0x01, /* 5: mov al, 1 */
      0xc3,       /* 7: ret */
  };
  static const uint8_t want[] = {
      0xe3, 0x02,                   /* jrcxz +2 */
      0xeb, 0x05,                   /* jmp short +5 */
      0xe9, 0x03, 0x00, 0x00, 0x00, /* jmp copy of 5 */
      0x31, 0xc0,                   /* xor eax, eax */
      0xc3,                         /* ret */
      0xb0, 0x01,                   /* mov al, 1 */
      0xc3,                         /* ret */
  };
  const char *name = "jrcxz";
  fn_case c = CASE(name, in, sizeof in, 0);
  reloc_info info;
  expect_case(&c, NULL, want, sizeof want, &info);
}

/* }=== */

/* {=== probes and layout ===*/

static void test_entry_counter_loop_to_entry(void) {
  static const uint8_t in[] = {
      0x67, 0xe3, 0x04, /* 0: jecxz 7 */
      0xe2, 0xfb,       /* 3: loop 0 (the entry) */
      0xeb, 0xf9,       /* 5: jmp 0 (the entry) */
      0xc3,             /* 7: ret */
  };
  static const uint8_t want[] = {
      0x48, 0xff, 0x05, 0xf9, 0x4f, 0x00, 0xf0, /* 00: inc qword [rip→COUNTER] */
      0x67, 0xe3, 0x02,                         /* 07: jecxz +2 */
      0xeb, 0x05,                               /* 0a: jmp short +5 */
      0xe9, 0x0b, 0x00, 0x00, 0x00,             /* 0c: jmp copy of ret (rel32: hopped over) */
      0xe2, 0x02,                               /* 11: loop +2 */
      0xeb, 0x05,                               /* 13: jmp short +5 */
      0xe9, 0xed, 0xff, 0xff, 0xff,             /* 15: jmp 07: a jump to the entry is no call */
      0xeb, 0xeb,                               /* 1a: jmp 07: past the entry counter */
      0xc3,                                     /* 1c: ret */
  };
  const char *name = "entry counter, loops to the entry";
  fn_case c = CASE(name, in, sizeof in, 0);
  reloc_probes probes = {.entry = true, .atomic = false};
  reloc_info info;
  expect_case(&c, &probes, want, sizeof want, &info);
  CHECK(info.min_inner_target == 7, "min_inner_target %" PRIu64, info.min_inner_target);
  CHECK(info.entry_insn_bytes == 5, "entry_insn_bytes %zu", info.entry_insn_bytes);
}

static void test_entry_counter_atomic(void) {
  static const uint8_t in[] = {
      0x31, 0xc0, /* xor eax, eax */
      0xc3,       /* ret */
  };
  static const uint8_t want[] = {
      0xf0, 0x48, 0xff, 0x05, 0xf8, 0x4f, 0x00, 0xf0, /* lock inc qword [rip→COUNTER] */
      0x31, 0xc0,                                     /* xor eax, eax */
      0xc3,                                           /* ret */
  };
  const char *name = "entry counter, atomic";
  fn_case c = CASE(name, in, sizeof in, 0);
  reloc_probes probes = {.entry = true, .atomic = true};
  reloc_info info;
  expect_case(&c, &probes, want, sizeof want, &info);
  CHECK(info.entry_insn_bytes == 3, "entry_insn_bytes %zu", info.entry_insn_bytes);
}

static void test_entry_not_lowest(void) {
  static const uint8_t in[] = {
      0x31, 0xc0, /* 0: xor eax, eax    (below the entry) */
      0xff, 0xc0, /* 2: inc eax         falls into the entry */
      0x85, 0xff, /* 4: test edi, edi   <- entry */
      0x74, 0xf8, /* 6: je 0 */
      0xc3,       /* 8: ret */
  };
  static const uint8_t want[] = {
      0x85, 0xff,                   /* 00: test edi, edi */
      0x74, 0x0c,                   /* 02: je copy of 0 */
      0xc3,                         /* 04: ret */
      0xcc, 0xcc, 0xcc, 0xcc, 0xcc, /* 05: padding: 0 is 16-aligned with nothing */
      0xcc, 0xcc, 0xcc, 0xcc, 0xcc, /*     before it, so is its copy */
      0xcc,                         /* 0f */
      0x31, 0xc0,                   /* 10: xor eax, eax */
      0xff, 0xc0,                   /* 12: inc eax */
      0xeb, 0xea,                   /* 14: jmp entry (fall-through gap) */
  };
  const char *name = "entry not lowest, fall-through gap";
  fn_case c = CASE(name, in, sizeof in, 4);
  reloc_info info;
  expect_case(&c, NULL, want, sizeof want, &info);
  CHECK(info.min_inner_target == UINT64_MAX, "min_inner_target %" PRIu64, info.min_inner_target);
  CHECK(info.nblocks == 3, "%zu blocks", info.nblocks);
}

static void test_fall_off_end(void) {
  static const uint8_t in[] = {
      0x85, 0xff, /* 0: test edi, edi */
      0x75, 0x01, /* 2: jne 5 */
      0xc3,       /* 4: ret */
      0x90,       /* 5: nop   falls through to hi */
  };
  static const uint8_t want[] = {
      0x85, 0xff,                   /* 00: test edi,edi */
      0x75, 0x01,                   /* 02: jne copy of 5 */
      0xc3,                         /* 04: ret */
      0x90,                         /* 05: nop */
      0xe9, 0xfb, 0xff, 0xff, 0xef, /* 06: jmp SRC+6 (original) */
  };
  const char *name = "fall off the end";
  fn_case c = CASE(name, in, sizeof in, 0);
  reloc_info info;
  expect_case(&c, NULL, want, sizeof want, &info);
}

static void test_noreturn_call(void) {
  static const uint8_t in[] = {
      0x85, 0xff,                   /* 0: test edi, edi */
      0x74, 0x01,                   /* 2: je 5 */
      0xc3,                         /* 4: ret */
      0xe8, 0xf6, 0x0f, 0x00, 0x00, /* 5: call SRC+0x1000 (abort) */
      0xff, 0xff,                   /* a: (not code) */
  };
  static const uint8_t want[] = {
      0x85, 0xff,                   /* 00: test edi,edi */
      0x74, 0x01,                   /* 02: je copy of 5 */
      0xc3,                         /* 04: ret */
      0xe8, 0xf6, 0x0f, 0x00, 0xf0, /* 05: call SRC+0x1000 */
      0x0f, 0x0b,                   /* 0a: ud2 */
  };
  const char *name = "noreturn call";
  fn_case c = CASE(name, in, sizeof in, 0);
  reloc_info info;
  expect_case(&c, NULL, want, sizeof want, &info);
  CHECK(info.ninstructions == 4, "%zu insns", info.ninstructions);
  /* the same call as the last instruction of the function */
  fn_case c2 = {"noreturn call at hi", in, sizeof in, 10, 0, 0};
  expect_case(&c2, NULL, want, sizeof want, &info);
}

/* }=== */


/* {=== block, edge and call-site probes ===*/

/* Expected probe bytes at copy offset O updating slot K (COUNTER + 8K). */
#define LE32(v) (uint8_t)(v), (uint8_t)((v) >> 8), (uint8_t)((v) >> 16), (uint8_t)((v) >> 24)
#define SLOT_DISP(o, k, len) ((uint32_t)(COUNTER + 8 * (k) - (DEST + (o) + (len))))
#define INC(o, k) 0x48, 0xff, 0x05, LE32(SLOT_DISP(o, k, 7))               /* inc qword [rip→slot k] */
#define LOCK_INC(o, k) 0xf0, 0x48, 0xff, 0x05, LE32(SLOT_DISP(o, k, 8))    /* lock inc qword [slot k] */
#define COVER(o, k) 0xc6, 0x05, LE32(SLOT_DISP(o, k, 7)), 0x01             /* mov byte [slot k], 1 */
#define SAVE 0x48, 0x8d, 0x64, 0x24, 0x80, 0x9c                            /* lea rsp,[rsp-128]; pushfq */
#define RESTORE 0x9d, 0x48, 0x8d, 0xa4, 0x24, 0x80, 0x00, 0x00, 0x00       /* popfq; lea rsp,[rsp+128] */
#define KEEP 0x48, 0x8d, 0x64, 0x24, 0x80, 0x50                            /* lea rsp,[rsp-128]; push rax */
#define UNKEEP 0x58, 0x48, 0x8d, 0xa4, 0x24, 0x80, 0x00, 0x00, 0x00        /* pop rax; lea rsp,[rsp+128] */
/* mov rax,[slot k]; lea rax,[rax+1]; mov [slot k],rax: 18 bytes, flags untouched */
#define ADD(o, k) 0x48, 0x8b, 0x05, LE32(SLOT_DISP(o, k, 7)), 0x48, 0x8d, 0x40, 0x01, \
                  0x48, 0x89, 0x05, LE32(SLOT_DISP((o) + 11, k, 7))

static void test_writer_shapes(void) {
  const char *name = "writer probe shapes";
  uint8_t buf[128];
  x64_writer w;
  x64_writer_init(&w, buf, 0x1000, 0);
  x64_put_mov_byte_rip_one(&w, 0x2000);      /* 00: mov byte [rip+0xff9], 1 */
  x64_put_flags_save(&w);                    /* 07 */
  x64_put_inc_rip_counter(&w, 0x2008, true); /* 0d: lock inc qword [rip+0xff3] */
  x64_put_flags_restore(&w);                 /* 15 */
  x64_put_rax_save(&w);                      /* 1e */
  x64_put_add_rip_counter_rax(&w, 0x2010, 1); /* 24 */
  x64_put_rax_restore(&w);                   /* 36 */
  x64_put_dec_rip_counter(&w, 0x2018, true); /* 3f: lock dec qword [rip+0xfd1] */
  x64_put_add_rip_counter_rax(&w, 0x2020, -1); /* 47 */
  static const uint8_t want[] = {
      0xc6, 0x05, 0xf9, 0x0f, 0x00, 0x00, 0x01,       /* mov byte [0x2000], 1 */
      0x48, 0x8d, 0x64, 0x24, 0x80, 0x9c,             /* lea rsp,[rsp-128]; pushfq */
      0xf0, 0x48, 0xff, 0x05, 0xf3, 0x0f, 0x00, 0x00, /* lock inc qword [0x2008] */
      0x9d, 0x48, 0x8d, 0xa4, 0x24, 0x80, 0x00, 0x00, 0x00, /* popfq; lea rsp,[rsp+128] */
      0x48, 0x8d, 0x64, 0x24, 0x80, 0x50,             /* lea rsp,[rsp-128]; push rax */
      0x48, 0x8b, 0x05, 0xe5, 0x0f, 0x00, 0x00,       /* 24: mov rax, [0x2010] */
      0x48, 0x8d, 0x40, 0x01,                         /* 2b: lea rax, [rax+1] */
      0x48, 0x89, 0x05, 0xda, 0x0f, 0x00, 0x00,       /* 2f: mov [0x2010], rax */
      0x58, 0x48, 0x8d, 0xa4, 0x24, 0x80, 0x00, 0x00, 0x00, /* pop rax; lea rsp,[rsp+128] */
      0xf0, 0x48, 0xff, 0x0d, 0xd1, 0x0f, 0x00, 0x00, /* 3f: lock dec qword [0x2018] */
      0x48, 0x8b, 0x05, 0xd2, 0x0f, 0x00, 0x00,       /* 47: mov rax, [0x2020] */
      0x48, 0x8d, 0x40, 0xff,                         /* 4e: lea rax, [rax-1] */
      0x48, 0x89, 0x05, 0xc7, 0x0f, 0x00, 0x00,       /* 52: mov [0x2020], rax */
  };
  CHECK(x64_writer_flush(&w) == LP_OK && w.offset == sizeof want && !memcmp(buf, want, sizeof want),
        "shapes differ");
  if (memcmp(buf, want, sizeof want)) {
    dump("got ", buf, w.offset);
    dump("want", want, sizeof want);
  }
  x64_writer_clear(&w);
}

/* A loop head the compiler aligned (nops before it, at a 16-byte boundary)
 * is aligned in the copy too: the entry counter moves it, the original's
 * nops are left out and the copy's own put where the block before runs into
 * it.  The back edge reaches with rel8. */
static void test_loop_head_aligned(void) {
  static const uint8_t in[] = {
      0x31, 0xc0,                                     /* 00: xor eax, eax */
      0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00, /* 02: nop (8) */
      0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00,             /* 0a: nop (6) */
      0x01, 0xf8,                                     /* 10: add eax, edi   loop head */
      0xff, 0xcf,                                     /* 12: dec edi */
      0x75, 0xfa,                                     /* 14: jne 10 */
      0xc3,                                           /* 16: ret */
  };
  static const uint8_t want[] = {
      INC(0x00, 0),                             /* 00: entry */
      0x31, 0xc0,                               /* 07: xor eax, eax */
      0x0f, 0x1f, 0x80, 0x00, 0x00, 0x00, 0x00, /* 09: nop (7): to 16, the original's left out */
      0x01, 0xf8,                               /* 10: add eax, edi */
      0xff, 0xcf,                               /* 12: dec edi */
      0x75, 0xfa,                               /* 14: jne 10 */
      0xc3,                                     /* 16: ret */
  };
  const char *name = "loop head aligned";
  fn_case c = CASE(name, in, sizeof in, 0);
  reloc_probes probes = {.entry = true};
  reloc_info info;
  uint8_t *out;
  reloc_plan *p = run(&c, &probes, DEST, want, sizeof want, &info, &out);
  CHECK(p && reloc_copy_offset(p, SRC + 2) == -1 && reloc_copy_offset(p, SRC + 0x10) == 0x10,
        "padding nops left out of the copy");
  reloc_plan_free(p);
  free(out);
}

/* A forward jcc over 130 bytes stays rel32; one over 5 is written rel8. */
static void test_branch_out_of_rel8(void) {
  uint8_t in[2 + 2 + 6 + 130 + 1];
  size_t n = 0;
  in[n++] = 0x85, in[n++] = 0xff;                /* 00: test edi, edi */
  in[n++] = 0x74, in[n++] = 0x00;                /* 02: je 04 (fills in below) */
  in[n++] = 0x0f, in[n++] = 0x85;                /* 04: jne 8c */
  int32_t rel = 130;
  memcpy(in + n, &rel, 4), n += 4;
  for (int k = 0; k < 26; k++) {                 /* 0a: mov eax, k  (26 x 5 bytes) */
    in[n++] = 0xb8;
    memset(in + n, k, 4), n += 4;
  }
  in[n++] = 0xc3;                                /* 8c: ret */
  in[3] = 0x00;
  const char *name = "branch out of rel8 reach";
  fn_case c = {name, in, sizeof in, sizeof in, 0, 0};
  reloc_info info;
  uint8_t *out;
  reloc_plan *p = run(&c, NULL, DEST, NULL, 0, &info, &out);
  CHECK(p && out && out[2] == 0x74 && out[4] == 0x0f && out[5] == 0x85 && info.copy_size == sizeof in,
        "je %02x, jne %02x %02x, %zu bytes", out ? out[2] : 0, out ? out[4] : 0, out ? out[5] : 0, info.copy_size);
  reloc_plan_free(p);
  free(out);
}

/* Random functions: blocks of mov fillers, some aligned by nops as a
 * compiler does, ending in a jcc or jmp rel32 to a random block or falling
 * through, under entry and block counters (probes move the code around).
 * Every copy must be made (each rel8 written reaches: alignment padding may
 * grow as branches shrink, and the layout must see it) and the oracle in
 * run() must find each branch going where the original's went. */
static void test_relaxation_random(void) {
  const char *name = "relaxation, random functions";
  uint64_t seed = 0x2545f4914f6cdd1du;
#define NEXT() (seed = seed * 6364136223846793005u + 1442695040888963407u, (uint32_t)(seed >> 33))
  size_t made = 0, shortened = 0;
  for (int round = 0; round < 300; round++) {
    enum { MAXB = 24 };
    uint8_t code[4096];
    size_t start[MAXB], nb = 4 + NEXT() % (MAXB - 4), n = 0;
    size_t at_branch[MAXB];
    int kind[MAXB], target[MAXB];
    for (size_t b = 0; b < nb; b++) {
      if (b && NEXT() % 3 == 0)
        while (n % 16) code[n++] = 0x90; /* padding nops, as the compiler aligns */
      start[b] = n;
      for (uint32_t k = NEXT() % 12; k > 0; k--) {
        code[n++] = 0xb8;
        uint32_t v = NEXT();
        memcpy(code + n, &v, 4), n += 4;
      }
      kind[b] = b + 1 == nb ? 3 : (int)(NEXT() % 4); /* 0, 1: jcc; 2: jmp; 3 on the last: ret */
      target[b] = (int)(NEXT() % nb);
      at_branch[b] = n;
      if (kind[b] < 2) code[n++] = 0x0f, code[n++] = (uint8_t)(0x80 | (NEXT() % 16)), n += 4;
      else if (kind[b] == 2) code[n++] = 0xe9, n += 4;
      else code[n++] = 0xc3;
    }
    for (size_t b = 0; b < nb; b++) {
      if (kind[b] == 3) continue;
      size_t end = at_branch[b] + (kind[b] < 2 ? 6 : 5);
      int32_t rel = (int32_t)start[target[b]] - (int32_t)end;
      memcpy(code + end - 4, &rel, 4);
    }
    fn_case c = {name, code, n, n, 0, 0};
    reloc_probes probes = {.entry = true, .blocks = NEXT() % 2 ? RELOC_BLOCKS_COUNT : RELOC_BLOCKS_COVER};
    reloc_info info;
    uint8_t *out;
    size_t before = (size_t)failures;
    reloc_plan *p = run(&c, &probes, DEST, NULL, 0, &info, &out);
    if (p && out && (size_t)failures == before) made++;
    for (size_t k = 0; p && out && k + 1 < info.copy_size; k++) /* rel8 jcc or jmp somewhere */
      shortened += (out[k] & 0xf0) == 0x70 || out[k] == 0xeb;
    reloc_plan_free(p);
    free(out);
  }
#undef NEXT
  CHECK(made == 300 && shortened > 0, "%zu of 300 made", made);
}

static void test_blocks_cover(void) {
  static const uint8_t in[] = {
      0x85, 0xff,                   /* 0: test edi, edi */
      0x74, 0x03,                   /* 2: je 7 */
      0x31, 0xc0,                   /* 4: xor eax, eax */
      0xc3,                         /* 6: ret */
      0xb8, 0x01, 0x00, 0x00, 0x00, /* 7: mov eax, 1 */
      0xc3,                         /* c: ret */
  };
  static const uint8_t want[] = {
      0x85, 0xff,                         /* 00: test edi, edi (block 0: no probe, both ways */
      0x74, 0x0a,                         /* 02: je block 2     out go to blocks it dominates) */
      COVER(0x04, 1),                     /* 04: block 1 */
      0x31, 0xc0,                         /* 0b: xor eax, eax */
      0xc3,                               /* 0d: ret */
      COVER(0x0e, 2),                     /* 0e: block 2 */
      0xb8, 0x01, 0x00, 0x00, 0x00,       /* 15: mov eax, 1 */
      0xc3,                               /* 1a: ret */
  };
  const char *name = "blocks cover";
  fn_case c = CASE(name, in, sizeof in, 0);
  reloc_probes probes = {.blocks = RELOC_BLOCKS_COVER};
  reloc_info info;
  expect_case(&c, &probes, want, sizeof want, &info);
  CHECK(info.nblocks == 3 && info.ncounters == 3 && info.block_slot == 0 && info.nsaved == 0,
        "%zu blocks %zu counters %zu saved", info.nblocks, info.ncounters, info.nsaved);

  /* where each block's probe sits, for removing it once covered */
  reloc_function_desc d = desc(&c);
  reloc_plan *p;
  if (reloc_plan_function(&d, &probes, &p, &info) == LP_OK && emitted(p, &info)) {
    const int64_t want_off[3] = {-1, 0x04, 0x0e};
    const reloc_block *blocks = reloc_blocks(p);
    for (size_t b = 0; b < 3; b++) {
      CHECK(reloc_cover_probe_offset(p, b) == want_off[b], "block %zu probe at %" PRId64, b,
            reloc_cover_probe_offset(p, b));
      CHECK(blocks[b].idom == 0, "block %zu: immediate dominator %u", b, blocks[b].idom);
      CHECK(blocks[b].cover == (b ? RELOC_COVER_PROBE : RELOC_COVER_DOMINATED), "block %zu: cover kind %u", b,
            blocks[b].cover);
    }
    CHECK(reloc_cover_probe_offset(p, 3) == -1, "a block that does not exist has a probe");
    reloc_plan_free(p);
  }
  reloc_probes counting = {.blocks = RELOC_BLOCKS_COUNT};
  if (reloc_plan_function(&d, &counting, &p, &info) == LP_OK) {
    CHECK(reloc_cover_probe_offset(p, 0) == -1, "count probes are not removable");
    reloc_plan_free(p);
  }

  /* the entry marked, not counted: a cover byte on top, removable too */
  static const uint8_t want_entry[] = {
      COVER(0x00, 0),                     /* 00: entry, and so block 0 */
      0x85, 0xff,                         /* 07: test edi, edi */
      0x74, 0x0a,                         /* 09: je block 2 */
      COVER(0x0b, 2),                     /* 0b: block 1 */
      0x31, 0xc0,                         /* 12: xor eax, eax */
      0xc3,                               /* 14: ret */
      COVER(0x15, 3),                     /* 15: block 2 */
      0xb8, 0x01, 0x00, 0x00, 0x00,       /* 1c: mov eax, 1 */
      0xc3,                               /* 21: ret */
  };
  reloc_probes marked = {.entry = true, .entry_cover = true, .blocks = RELOC_BLOCKS_COVER};
  expect_case(&c, &marked, want_entry, sizeof want_entry, &info);
  if (reloc_plan_function(&d, &marked, &p, &info) == LP_OK && emitted(p, &info)) {
    CHECK(reloc_entry_probe_offset(p) == 0 && reloc_cover_probe_offset(p, 0) == -1 &&
              reloc_blocks(p)[0].cover == RELOC_COVER_ENTRY,
          "entry probe at %" PRId64 ", block 0's at %" PRId64, reloc_entry_probe_offset(p),
          reloc_cover_probe_offset(p, 0));
    reloc_plan_free(p);
  }
  reloc_probes counted = {.entry = true, .blocks = RELOC_BLOCKS_COVER};
  if (reloc_plan_function(&d, &counted, &p, &info) == LP_OK) {
    CHECK(reloc_entry_probe_offset(p) == -1, "a counted entry is not removable");
    reloc_plan_free(p);
  }

  /* a second copy after blocks 0 and 1 ran (reloc_probes.covered): their
   * probes left out, block 2's kept on its slot */
  static const uint8_t want_second[] = {
      0x85, 0xff,                         /* 00: test edi, edi */
      0x74, 0x03,                         /* 02: je block 2 */
      0x31, 0xc0,                         /* 04: xor eax, eax */
      0xc3,                               /* 06: ret */
      COVER(0x07, 3),                     /* 07: block 2 */
      0xb8, 0x01, 0x00, 0x00, 0x00,       /* 0e: mov eax, 1 */
      0xc3,                               /* 13: ret */
  };
  static const uint8_t ran[] = {1, 1, 0};
  reloc_probes second = marked;
  second.covered = ran;
  second.ncovered = 3;
  expect_case(&c, &second, want_second, sizeof want_second, &info);
  /* the same from the first plan, measured again (a copy made again from a
   * plan kept): the same bytes */
  if (reloc_plan_function(&d, &marked, &p, &info) == LP_OK) {
    uint8_t again[sizeof want_second + 64] = {0};
    CHECK(reloc_plan_cover_again(p, ran, 3, &info) == LP_OK && info.copy_size <= sizeof again &&
              reloc_emit(p, DEST, again, COUNTER, NULL, NULL) == LP_OK && reloc_copy_size(p) == sizeof want_second &&
              !memcmp(again, want_second, sizeof want_second) && reloc_entry_probe_offset(p) == -1 &&
              reloc_cover_probe_offset(p, 2) == 0x07 && reloc_cover_probe_offset(p, 1) == -1,
          "measured again: %zu bytes", info.copy_size);
    reloc_plan_free(p);
  }
}

/* A block that starts with a jcc reading the flags set in the block before
 * it: its counter leaves them alone, adding through rax saved on the stack;
 * the others (cmp/test/xor set them first, or a ret follows) are a plain inc.
 * Atomic counters (lock inc) save the flags instead. */
static void test_blocks_count_liveness(void) {
  static const uint8_t in[] = {
      0x83, 0xff, 0x05,             /* 0: cmp edi, 5 */
      0x7c, 0x05,                   /* 3: jl a */
      0x74, 0x03,                   /* 5: je a         flags live at this block's start */
      0x31, 0xc0,                   /* 7: xor eax, eax */
      0xc3,                         /* 9: ret */
      0xb8, 0x01, 0x00, 0x00, 0x00, /* a: mov eax, 1   (mov leaves flags: dead only by ret) */
      0xc3,                         /* f: ret */
  };
  static const uint8_t want[] = {
      INC(0x00, 0),                       /* 00: entry */
      INC(0x07, 1),                       /* 07: block 0: cmp sets the flags, dead */
      0x83, 0xff, 0x05,                   /* 0e: cmp edi, 5 */
      0x7c, 0x2d,                         /* 11: jl block 3 */
      KEEP,                               /* 13: block 1: je reads ZF, rax saved */
      ADD(0x19, 2),                       /* 19: its counter through rax */
      UNKEEP,                             /* 2b */
      0x74, 0x0a,                         /* 34: je block 3 */
      INC(0x36, 3),                       /* 36: block 2 */
      0x31, 0xc0,                         /* 3d: xor eax, eax */
      0xc3,                               /* 3f: ret */
      INC(0x40, 4),                       /* 40: block 3 */
      0xb8, 0x01, 0x00, 0x00, 0x00,       /* 47: mov eax, 1 */
      0xc3,                               /* 4c: ret */
  };
  const char *name = "blocks count, flags liveness";
  fn_case c = CASE(name, in, sizeof in, 0);
  reloc_probes probes = {.entry = true, .blocks = RELOC_BLOCKS_COUNT};
  reloc_info info;
  expect_case(&c, &probes, want, sizeof want, &info);
  CHECK(info.nblocks == 4 && info.ncounters == 5 && info.block_slot == 1 && info.nsaved == 1,
        "%zu blocks %zu counters %zu saved", info.nblocks, info.ncounters, info.nsaved);

  /* atomic: every counter is lock inc, the save stays */
  static const uint8_t in2[] = {
      0x39, 0xf7, /* 0: cmp edi, esi */
      0x72, 0x01, /* 2: jb 5 */
      0xc3,       /* 4: ret */
      0x19, 0xc0, /* 5: sbb eax, eax   reads CF from the cmp */
      0xc3,       /* 7: ret */
  };
  static const uint8_t want2[] = {
      LOCK_INC(0x00, 0),                  /* 00: block 0 */
      0x39, 0xf7,                         /* 08: cmp edi, esi */
      0x72, 0x09,                         /* 0a: jb block 2 */
      LOCK_INC(0x0c, 1),                  /* 0c: block 1: ret, dead */
      0xc3,                               /* 14: ret */
      SAVE,                               /* 15: block 2: sbb reads CF */
      LOCK_INC(0x1b, 2),                  /* 1b */
      RESTORE,                            /* 23 */
      0x19, 0xc0,                         /* 2c: sbb eax, eax */
      0xc3,                               /* 2e: ret */
  };
  fn_case c2 = CASE("blocks count, atomic, sbb", in2, sizeof in2, 0);
  name = c2.name;
  reloc_probes atomic = {.blocks = RELOC_BLOCKS_COUNT, .atomic = true};
  expect_case(&c2, &atomic, want2, sizeof want2, &info);
  CHECK(info.nsaved == 1, "%zu saved", info.nsaved);
}

/* Arcs: the tree takes the edges estimated hottest first.  The loop of blocks
 * 1 and 2 is estimated to run 4 times a call, mostly by its fall-through into
 * block 2, whose probe would also need the flags saved: the heaviest edge, on
 * the tree.  The back edge 2->1 then closes a cycle: counted, in a stub.  The
 * return and the entry edge come next (on the tree), and the loop's two ways
 * out to block 3 are counted: the fall 2->3 before the ret, the js 1->3 in a
 * stub.  No probe saves the flags. */
static void test_edges_fall_taken_return(void) {
  static const uint8_t in[] = {
      0x31, 0xc0, /* 0: xor eax, eax   block 0 */
      0xff, 0xcf, /* 2: dec edi        block 1 */
      0x78, 0x02, /* 4: js 8 */
      0x75, 0xfa, /* 6: jne 2          block 2: reads ZF from the dec */
      0xc3,       /* 8: ret            block 3 */
  };
  static const uint8_t want[] = {
      0x31, 0xc0,                         /* 00: xor eax, eax */
      0xff, 0xcf,                         /* 02: dec edi */
      0x78, 0x0a,                         /* 04: js stub 1->3 */
      0x75, 0x11,                         /* 06: jne stub 2->1 */
      INC(0x08, 1),                       /* 08: edge 2->3 (the fall) */
      0xc3,                               /* 0f: ret, block 3 */
      INC(0x10, 0),                       /* 10: stub of edge 1->3 (taken) */
      0xeb, 0xf6,                         /* 17: jmp block 3 */
      INC(0x19, 2),                       /* 19: stub of edge 2->1 (the back edge) */
      0xeb, 0xe0,                         /* 20: jmp block 1 */
  };
  const char *name = "edges: fall, taken, return";
  fn_case c = CASE(name, in, sizeof in, 0);
  reloc_probes probes = {.arcs = true};
  reloc_info info;
  uint8_t *out;
  reloc_plan *p = run(&c, &probes, DEST, want, sizeof want, &info, &out);
  CHECK(info.nblocks == 4 && info.nedges == 6 && info.ncounted == 3 && info.nsaved == 0,
        "%zu blocks %zu edges %zu counted %zu saved", info.nblocks, info.nedges, info.ncounted, info.nsaved);
  if (p) {
    static const struct { uint32_t from, to; uint8_t kind; bool counted; uint64_t branch, target; } e[] = {
        {0, 1, RELOC_EDGE_FALL, false, SRC + 0, SRC + 2},
        {1, 2, RELOC_EDGE_FALL, false, SRC + 4, SRC + 6},
        {1, 3, RELOC_EDGE_TAKEN, true, SRC + 4, SRC + 8},
        {2, 3, RELOC_EDGE_FALL, true, SRC + 6, SRC + 8},
        {2, 1, RELOC_EDGE_TAKEN, true, SRC + 6, SRC + 2},
        {3, RELOC_EXIT, RELOC_EDGE_RETURN, false, SRC + 8, 0},
    };
    const reloc_edge *got = reloc_edges(p);
    for (size_t k = 0; k < 6 && k < info.nedges; k++)
      CHECK(got[k].from == e[k].from && got[k].to == e[k].to && got[k].kind == e[k].kind &&
                got[k].counted == e[k].counted && got[k].branch == e[k].branch && got[k].target == e[k].target,
            "edge %zu: %u->%u kind %u counted %d branch 0x%" PRIx64 " target 0x%" PRIx64, k, got[k].from,
            got[k].to, got[k].kind, got[k].counted, got[k].branch, got[k].target);
    const reloc_block *b = reloc_blocks(p);
    CHECK(b[1].addr == SRC + 2 && b[1].size == 4 && b[1].ninsns == 2 && b[3].addr == SRC + 8, "blocks");
  }
  reloc_plan_free(p);
  free(out);
}

/* Arcs on measured counts (reloc_probes.edge_counts): the function of
 * test_edges_fall_taken_return, whose loop the estimate makes hot, with
 * counts that say every call took the js straight to the ret.  The tree then
 * holds that path (0->1, 1->3, 3->exit) and one loop edge; the two counted
 * edges never ran.  On the estimate the js is counted (in a stub). */
static void test_edges_on_counts(void) {
  static const uint8_t in[] = {
      0x31, 0xc0, /* 0: xor eax, eax   block 0 */
      0xff, 0xcf, /* 2: dec edi        block 1 */
      0x78, 0x02, /* 4: js 8 */
      0x75, 0xfa, /* 6: jne 2          block 2 */
      0xc3,       /* 8: ret            block 3 */
  };
  /* edges in plan order: 0->1, 1->2, 1->3 (js), 2->3, 2->1, 3->exit */
  static const uint64_t counts[] = {10, 0, 10, 0, 0, 10};
  const char *name = "edges: placed on measured counts";
  fn_case c = CASE(name, in, sizeof in, 0);
  reloc_function_desc d = desc(&c);
  for (int measured = 0; measured < 2; measured++) {
    reloc_probes probes = {.entry = true, .arcs = true};
    if (measured) probes.edge_counts = counts, probes.nedge_counts = 6;
    reloc_plan *p;
    reloc_info info;
    if (reloc_plan_function(&d, &probes, &p, &info) != LP_OK) {
      CHECK(0, "plan: %s", lp_error());
      continue;
    }
    const reloc_edge *e = reloc_edges(p);
    uint64_t ran = 0;
    for (size_t k = 0; k < info.nedges && k < 6; k++) ran += e[k].counted ? counts[k] : 0;
    CHECK(info.nedges == 6 && info.ncounted == 2, "%zu edges, %zu counted", info.nedges, info.ncounted);
    if (measured)
      CHECK(ran == 0 && !e[0].counted && !e[2].counted && !e[5].counted, "the counted edges ran %" PRIu64, ran);
    else
      CHECK(e[2].counted, "on the estimate, the js is on the tree");
    reloc_plan_free(p);
  }
  /* counts of another number of edges are not this plan's: the estimate */
  reloc_probes other = {.entry = true, .arcs = true, .edge_counts = counts, .nedge_counts = 5};
  reloc_plan *p;
  reloc_info info;
  if (reloc_plan_function(&d, &other, &p, &info) == LP_OK) {
    CHECK(reloc_edges(p)[2].counted, "counts of 5 edges used for 6");
    reloc_plan_free(p);
  } else {
    CHECK(0, "plan: %s", lp_error());
  }
}

/* Loops (reloc_dom.c): two nested loops, the inner one of two blocks;
 * innermost heads, the loops around each block, membership and dominators. */
static void test_loops(void) {
  static const uint8_t in[] = {
      0x31, 0xc0, /* 00: xor eax, eax  block 0 */
      0x89, 0xf9, /* 02: mov ecx, edi  block 1: the outer loop's head */
      0xff, 0xc0, /* 04: inc eax       block 2: the inner loop's head */
      0xff, 0xc9, /* 06: dec ecx */
      0x74, 0x02, /* 08: je 0c         (leaves the inner loop) */
      0xeb, 0xf8, /* 0a: jmp 04        block 3 */
      0xff, 0xcf, /* 0c: dec edi       block 4 */
      0x75, 0xf2, /* 0e: jne 02 */
      0xc3,       /* 10: ret           block 5 */
  };
  const char *name = "loops";
  fn_case c = CASE(name, in, sizeof in, 0);
  reloc_probes probes = {.arcs = true};
  reloc_info info;
  uint8_t *out;
  reloc_plan *p = run(&c, &probes, DEST, NULL, 0, &info, &out);
  reloc_dom d;
  if (p && info.nblocks == 6 && reloc_dom_build(p, &d) == LP_OK) {
    const uint32_t none = RELOC_DOM_UNDEFINED;
    const uint32_t depth[] = {0, 1, 2, 2, 1, 0}, head[] = {none, 1, 2, 2, 1, none};
    for (uint32_t b = 0; b < 6; b++) {
      uint32_t n = 0; /* the loops around b */
      for (uint32_t l = d.head[b]; l != none && n < 6; l = d.outer[l]) n++;
      CHECK(n == depth[b] && d.head[b] == head[b], "block %u: depth %u head %u", b, n, d.head[b]);
    }
    CHECK(d.outer[2] == 1 && d.outer[1] == none, "outer loops %u %u", d.outer[2], d.outer[1]);
    CHECK(reloc_dom_in_loop(&d, 3, 1) && reloc_dom_in_loop(&d, 3, 2) && !reloc_dom_in_loop(&d, 4, 2) &&
              reloc_dom_in_loop(&d, 4, 1) && !reloc_dom_in_loop(&d, 5, 1),
          "loop membership");
    CHECK(d.idom[2] == 1 && d.idom[3] == 2 && d.idom[4] == 2 && d.idom[5] == 4, "dominators %u %u %u %u",
          d.idom[2], d.idom[3], d.idom[4], d.idom[5]);
    reloc_dom_free(&d);
  } else {
    CHECK(0, "%zu blocks", p ? info.nblocks : 0);
  }
  reloc_plan_free(p);
  free(out);
}

/* Dominators with a side entry (reloc_dom.c, reloc_cover.c): the join of a
 * diamond, where another part of the function jumps back in, is dominated
 * by no block (block 0 dominates it from the entry alone), so what it tells
 * of stops at itself; it still needs no probe of its own (it dominates the
 * blocks after it, which tell of it). */
static void test_side_entry_dominators(void) {
  static const uint8_t in[] = {
      0x85, 0xff, /* 00: test edi, edi   block 0 */
      0x78, 0x06, /* 02: js 0a */
      0xff, 0xc0, /* 04: inc eax         block 1 */
      0xff, 0xc0, /* 06: inc eax */
      0xeb, 0x02, /* 08: jmp 0c */
      0xff, 0xc8, /* 0a: dec eax         block 2 */
      0x31, 0xf8, /* 0c: xor eax, edi    block 3: the join, a side entry */
      0x74, 0x01, /* 0e: je 11 */
      0x90,       /* 10: nop             block 4 */
      0xc3,       /* 11: ret             block 5 */
  };
  const char *name = "side entry dominators";
  fn_case c = CASE(name, in, sizeof in, 0);
  for (int side = 0; side < 2; side++) {
    reloc_function_desc fd = desc(&c);
    const uint64_t join = SRC + 0x0c;
    if (side) fd.entered = &join, fd.nentered = 1;
    reloc_probes probes = {.entry = true, .blocks = RELOC_BLOCKS_COVER};
    reloc_plan *p = NULL;
    reloc_info info;
    if (reloc_plan_function(&fd, &probes, &p, &info) != LP_OK || info.nblocks != 6) {
      CHECK(0, "side %d: plan: %s, %zu blocks", side, p ? "ok" : lp_error(), p ? info.nblocks : 0);
      reloc_plan_free(p);
      continue;
    }
    const reloc_block *blocks = reloc_blocks(p);
    long at[0x12];
    for (size_t k = 0; k < sizeof at / sizeof *at; k++) at[k] = -1;
    for (size_t b = 0; b < info.nblocks; b++) at[blocks[b].addr - SRC] = (long)b;
    CHECK(at[0x00] == 0 && at[0x04] >= 0 && at[0x0a] >= 0 && at[0x0c] >= 0 && at[0x10] >= 0 && at[0x11] >= 0,
          "side %d: blocks not where expected", side);
    if (at[0x04] < 0 || at[0x0a] < 0 || at[0x0c] < 0 || at[0x10] < 0) {
      reloc_plan_free(p);
      continue;
    }
    const reloc_block *b1 = &blocks[at[0x04]], *b2 = &blocks[at[0x0a]], *b3 = &blocks[at[0x0c]];
    const reloc_block *b4 = &blocks[at[0x10]];
    CHECK(b3->idom == (side ? (uint32_t)at[0x0c] : 0), "side %d: the join's idom %u", side, b3->idom);
    CHECK(b4->idom == (uint32_t)at[0x0c], "side %d: block 4's idom %u", side, b4->idom);
    /* the join tells of itself (what it dominates ran): the side entry
     * changes whom it tells of, not that it needs no probe of its own */
    CHECK(b3->cover == RELOC_COVER_DOMINATED, "side %d: the join's cover kind %u", side, b3->cover);
    CHECK(b1->cover == RELOC_COVER_PROBE && b2->cover == RELOC_COVER_PROBE, "side %d: the arms' cover kinds %u %u",
          side, b1->cover, b2->cover);
    reloc_plan_free(p);
  }
}

/* Arcs: the taken branch into block 3 is off the tree (the back edge out of
 * block 3 joined it first) and is block 3's only way in: its probe goes at
 * block 3's start, the js goes straight there, no stub. */
static void test_edges_counted_at_target(void) {
  static const uint8_t in[] = {
      0x31, 0xc0, /* 0: xor eax, eax   block 0 */
      0xff, 0xcf, /* 2: dec edi        block 1 */
      0x78, 0x03, /* 4: js 9 */
      0xff, 0xc0, /* 6: inc eax        block 2 */
      0xc3,       /* 8: ret */
      0xff, 0xc8, /* 9: dec eax        block 3: only the js comes in */
      0xeb, 0xf5, /* b: jmp 2 */
  };
  static const uint8_t want[] = {
      0x31, 0xc0,                         /* 00: xor eax, eax */
      0xff, 0xcf,                         /* 02: dec edi */
      0x78, 0x0a,                         /* 04: js block 3 */
      0xff, 0xc0,                         /* 06: inc eax */
      INC(0x08, 1),                       /* 08: edge 2->exit, before the ret */
      0xc3,                               /* 0f: ret */
      INC(0x10, 0),                       /* 10: block 3: edge 1->3 */
      0xff, 0xc8,                         /* 17: dec eax */
      0xeb, 0xe7,                         /* 19: jmp block 1 */
  };
  const char *name = "edges: counted at the target";
  fn_case c = CASE(name, in, sizeof in, 0);
  reloc_probes probes = {.arcs = true};
  reloc_info info;
  expect_case(&c, &probes, want, sizeof want, &info);
  CHECK(info.nblocks == 4 && info.ncounted == 2 && info.nsaved == 0, "%zu blocks %zu counted %zu saved",
        info.nblocks, info.ncounted, info.nsaved);
}

/* Arcs: a loop whose head reads CF that the decrement leaves alone.  The
 * self-loop is always counted (it is no tree edge), and the flags are live on
 * it: its stub counts through rax. */
static void test_edges_counted_live(void) {
  static const uint8_t in[] = {
      0x31, 0xc0,       /* 0: xor eax, eax   block 0 */
      0x83, 0xd0, 0x00, /* 2: adc eax, 0     block 1: reads CF */
      0xff, 0xcf,       /* 5: dec edi        (CF untouched) */
      0x75, 0xf9,       /* 7: jne 2 */
      0xc3,             /* 9: ret            block 2 */
  };
  static const uint8_t want[] = {
      0x31, 0xc0,                         /* 00: xor eax, eax */
      0x83, 0xd0, 0x00,                   /* 02: adc eax, 0 */
      0xff, 0xcf,                         /* 05: dec edi */
      0x75, 0x08,                         /* 07: jne stub 1->1 */
      INC(0x09, 1),                       /* 09: edge 2->exit, before the ret */
      0xc3,                               /* 10: ret */
      KEEP,                               /* 11: stub of edge 1->1, CF live: rax saved */
      ADD(0x17, 0),                       /* 17 */
      UNKEEP,                             /* 29 */
      0xeb, 0xce,                         /* 32: jmp block 1 */
  };
  const char *name = "edges: counted with the flags live";
  fn_case c = CASE(name, in, sizeof in, 0);
  reloc_probes probes = {.arcs = true};
  reloc_info info;
  expect_case(&c, &probes, want, sizeof want, &info);
  CHECK(info.nblocks == 3 && info.ncounted == 2 && info.nsaved == 1, "%zu blocks %zu counted %zu saved",
        info.nblocks, info.ncounted, info.nsaved);
}

/* A one-instruction block ending in an unresolved jmp: its block probe and
 * its escape edge's probe share one save of rax (the flags are live at an
 * escape).  No entry counter: the tree holds the virtual edge EXIT->entry,
 * so both ways out are counted. */
static void test_shared_save(void) {
  static const uint8_t in[] = {
      0x85, 0xff, /* 0: test edi, edi */
      0x74, 0x01, /* 2: je 5 */
      0xc3,       /* 4: ret */
      0xff, 0xe6, /* 5: jmp rsi */
  };
  static const uint8_t want[] = {
      INC(0x00, 0),                       /* 00: block 0 */
      0x85, 0xff,                         /* 07: test edi, edi */
      0x74, 0x0f,                         /* 09: je block 2 */
      INC(0x0b, 1),                       /* 0b: block 1 */
      INC(0x12, 3),                       /* 12: edge 1->exit (ret) */
      0xc3,                               /* 19: ret */
      KEEP,                               /* 1a: one save for both: */
      ADD(0x20, 2),                       /* 20: block 2 */
      ADD(0x32, 4),                       /* 32: edge 2->exit (escape) */
      UNKEEP,                             /* 44 */
      0xff, 0xe6,                         /* 4d: jmp rsi */
  };
  const char *name = "shared flags save";
  fn_case c = CASE(name, in, sizeof in, 0);
  reloc_probes probes = {.blocks = RELOC_BLOCKS_COUNT, .arcs = true};
  reloc_info info;
  expect_case(&c, &probes, want, sizeof want, &info);
  CHECK(info.nsaved == 2 && info.edge_slot == 3 && info.ncounters == 5, "%zu saved, edge slot %zu",
        info.nsaved, info.edge_slot);
}

/* Arcs with the entry counted (as lazyprobe always does): the counter
 * measures the virtual edge EXIT->entry, so the tree keeps every real edge of
 * a function without branches and its return is not counted again. */
static void test_edges_entry_measures(void) {
  static const uint8_t in[] = {
      0x31, 0xc0, /* 0: xor eax, eax */
      0xc3,       /* 2: ret */
  };
  static const uint8_t want[] = {
      INC(0x00, 0), /* 00: entry */
      0x31, 0xc0,   /* 07: xor eax, eax */
      0xc3,         /* 09: ret, no edge probe */
  };
  const char *name = "edges: the entry counter measures the virtual edge";
  fn_case c = CASE(name, in, sizeof in, 0);
  reloc_probes probes = {.entry = true, .arcs = true};
  reloc_info info;
  expect_case(&c, &probes, want, sizeof want, &info);
  CHECK(info.ncounted == 0 && info.ncounters == 1, "%zu counted, %zu counters", info.ncounted, info.ncounters);
}

/* Tail calls leave flags dead (is_entry), a jump to FUNC.cold keeps them live. */
static bool only_0x1000_is_entry(void *ctx, uint64_t a) { return (void)ctx, a == SRC + 0x1000; }

static void test_tail_liveness(void) {
  static const uint8_t in[] = {
      0x39, 0xf7,                         /* 0: cmp edi, esi */
      0x0f, 0x8c, 0xf8, 0x0f, 0x00, 0x00, /* 2: jl SRC+0x1000 (a function) */
      0x0f, 0x84, 0xf2, 0x1f, 0x00, 0x00, /* 8: je SRC+0x2000 (FUNC.cold) */
      0xc3,                               /* e: ret */
  };
  const char *name = "tail call and cold liveness";
  fn_case c = CASE(name, in, sizeof in, 0);
  reloc_probes probes = {.arcs = true, .is_entry = only_0x1000_is_entry};
  reloc_info info;
  uint8_t *out;
  reloc_plan *p = run(&c, &probes, DEST, NULL, 0, &info, &out);
  if (p) {
    /* edges: 0: FALL 0->1, RETURN 0->exit (0x1000); 1: FALL 1->2, RETURN 1->exit (0x2000); 2: RETURN */
    const reloc_edge *e = reloc_edges(p);
    CHECK(info.nedges == 5 && e[1].kind == RELOC_EDGE_RETURN && e[1].target == SRC + 0x1000 &&
              e[3].kind == RELOC_EDGE_RETURN && e[3].target == SRC + 0x2000,
          "edges");
    CHECK(e[1].counted && e[3].counted && e[4].counted && info.nsaved == 1,
          "counted %d %d %d, %zu saved (only the jump to the cold part)", e[1].counted, e[3].counted,
          e[4].counted, info.nsaved);
  }
  reloc_plan_free(p);
  free(out);
  probes.is_entry = NULL; /* every outside target is an entry: nothing saved */
  p = run(&c, &probes, DEST, NULL, 0, &info, &out);
  CHECK(info.nsaved == 0, "%zu saved with is_entry NULL", info.nsaved);
  reloc_plan_free(p);
  free(out);
}

static void test_call_sites(void) {
  static const uint8_t in[] = {
      0x48, 0x83, 0xec, 0x08,       /* 0: sub rsp, 8 */
      0xe8, 0xf7, 0x0f, 0x00, 0x00, /* 4: call SRC+0x1000 */
      0x48, 0x83, 0xc4, 0x08,       /* 9: add rsp, 8 */
      0xff, 0x15, 0xed, 0x0f, 0x00, 0x00, /* d: call [rip+0xfed] */
      0xeb, 0x2a,                   /* 13: jmp SRC+0x3f (tail) */
  };
  static const uint8_t want[] = {
      0x48, 0x83, 0xec, 0x08,             /* 00: sub rsp, 8 */
      INC(0x04, 0),                       /* 04: call site 0 (flags dead at a call) */
      0xe8, 0xf0, 0x0f, 0x00, 0xf0,       /* 0b: call SRC+0x1000 */
      0x48, 0x83, 0xc4, 0x08,             /* 10: add rsp, 8 */
      INC(0x14, 1),                       /* 14: call site 1 */
      0xff, 0x15, 0xdf, 0x0f, 0x00, 0xf0, /* 1b: call [rip→SRC+0x1000] */
      0xe9, 0x19, 0x00, 0x00, 0xf0,       /* 21: jmp SRC+0x3f */
  };
  const char *name = "call sites";
  fn_case c = CASE(name, in, sizeof in, 0);
  reloc_probes probes = {.calls = true};
  reloc_info info;
  uint8_t *out;
  reloc_plan *p = run(&c, &probes, DEST, want, sizeof want, &info, &out);
  CHECK(info.ncalls == 2 && info.call_slot == 0 && info.ncounters == 2 && info.nblocks == 3 && info.nsaved == 0,
        "%zu calls, %zu blocks", info.ncalls, info.nblocks);
  if (p) {
    const reloc_call *cs = reloc_calls(p);
    CHECK(cs[0].site == SRC + 4 && cs[0].target == SRC + 0x1000 && cs[1].site == SRC + 0xd && cs[1].target == 0,
          "calls 0x%" PRIx64 "->0x%" PRIx64 ", 0x%" PRIx64 "->0x%" PRIx64, cs[0].site, cs[0].target,
          cs[1].site, cs[1].target);
    const reloc_edge *e = reloc_edges(p); /* the return lands in the next block */
    CHECK(info.nedges == 3 && e[0].kind == RELOC_EDGE_FALL && e[0].branch == SRC + 4 && e[0].to == 1 &&
              e[2].kind == RELOC_EDGE_RETURN && e[2].target == SRC + 0x3f,
          "edges after calls");
  }
  reloc_plan_free(p);
  free(out);
}

/* A noreturn call and a ud2 end their blocks with an escape, no fall-through;
 * counted, their probes go before them. */
static void test_noreturn_edges(void) {
  static const uint8_t in[] = {
      0x85, 0xff,                   /* 0: test edi, edi */
      0x74, 0x05,                   /* 2: je 9 */
      0x78, 0x01,                   /* 4: js 7 */
      0xc3,                         /* 6: ret */
      0x0f, 0x0b,                   /* 7: ud2 */
      0xe8, 0xf2, 0x0f, 0x00, 0x00, /* 9: call SRC+0x1000 (abort), the last bytes */
  };
  const char *name = "noreturn and ud2 edges";
  fn_case c = {name, in, sizeof in, sizeof in, 0, 0};
  reloc_probes probes = {.arcs = true, .calls = true};
  reloc_info info;
  uint8_t *out;
  reloc_plan *p = run(&c, &probes, DEST, NULL, 0, &info, &out);
  if (p) {
    const reloc_edge *e = reloc_edges(p);
    size_t esc = 0, fall_from_call = 0;
    for (size_t k = 0; k < info.nedges; k++) {
      esc += e[k].kind == RELOC_EDGE_ESCAPE && e[k].to == RELOC_EXIT;
      fall_from_call += e[k].kind == RELOC_EDGE_FALL && e[k].branch == SRC + 9;
    }
    CHECK(info.nblocks == 5 && esc == 2 && fall_from_call == 0, "%zu blocks %zu escapes", info.nblocks, esc);
  }
  reloc_plan_free(p);
  free(out);
}

static reloc_callee is_setjmp(void *ctx, uint64_t addr) {
  return (void)ctx, addr == SRC + 0x1000 ? RELOC_CALLEE_RETURNS_TWICE : RELOC_CALLEE_RETURNS;
}

/* A call that returns twice (setjmp): the block after it is entered from
 * outside as well; under arcs its side entry counter is decremented right
 * before the call and incremented right after it, at the address every
 * return comes back to, so that it counts the returns after the first. */
static void test_returns_twice(void) {
  static const uint8_t in[] = {
      0x48, 0x83, 0xec, 0x08,       /* 00: sub rsp, 8 */
      0xe8, 0xf7, 0x0f, 0x00, 0x00, /* 04: call SRC+0x1000 (setjmp) */
      0x85, 0xc0,                   /* 09: test eax, eax     block 1: rejoined */
      0x75, 0x02,                   /* 0b: jne 0f */
      0x31, 0xc0,                   /* 0d: xor eax, eax */
      0x48, 0x83, 0xc4, 0x08,       /* 0f: add rsp, 8 */
      0xc3,                         /* 13: ret */
  };
  const char *name = "returns twice";
  fn_case c = {name, in, sizeof in, sizeof in, 0, 0};
  for (int arcs = 0; arcs <= 1; arcs++) {
    reloc_probes probes = {.entry = true, .arcs = arcs, .calls = true, .callee = is_setjmp};
    reloc_info info;
    uint8_t *out;
    reloc_plan *p = run(&c, &probes, DEST, NULL, 0, &info, &out);
    if (!p) continue;
    const reloc_block *b = reloc_blocks(p);
    CHECK(info.nblocks == 4 && !b[0].entered && b[1].entered && !b[2].entered && !b[3].entered,
          "%zu blocks; the one after the call not (only) entered from outside", info.nblocks);
    int64_t call = reloc_copy_offset(p, SRC + 4);
    uint64_t side = COUNTER + 8 * info.side_slot;
    if (arcs && call >= 7 && (size_t)call + 12 <= info.copy_size) {
      const uint8_t *dec = out + call - 7, *inc = out + call + 5;
      uint32_t dec_disp = (uint32_t)(side - (DEST + (uint64_t)call));
      uint32_t inc_disp = (uint32_t)(side - (DEST + (uint64_t)call + 12));
      CHECK(!memcmp(dec, "\x48\xff\x0d", 3) && !memcmp(dec + 3, &dec_disp, 4) && out[call] == 0xe8,
            "no dec of the side entry counter right before the call");
      CHECK(!memcmp(inc, "\x48\xff\x05", 3) && !memcmp(inc + 3, &inc_disp, 4), "no inc of it right after the call");
    } else {
      CHECK(!arcs, "the call's copy at %" PRId64 " of %zu bytes", call, info.copy_size);
    }
    reloc_plan_free(p);
    free(out);
  }
}

static reloc_callee is_syscall(void *ctx, uint64_t addr) {
  (void)ctx;
  return addr == SRC + 0x1000 ? RELOC_CALLEE_SYSCALL : RELOC_CALLEE_RETURNS;
}

/* syscall(SYS_clone, SIGCHLD, ...) forks behind glibc's back: the block after
 * the call is entered again by the child, as after fork; syscall(SYS_getpid)
 * and a number not known before the call return once. */
static void test_syscall_forks(void) {
  static const struct {
    const char *name;
    uint8_t code[17];
    bool twice;
  } v[] = {
      {"syscall(SYS_clone) returns twice", {0xbf, 56, 0, 0, 0, 0xe8, LE32(0x1000 - 0x0a), 0x85, 0xc0, 0x75, 0x02, 0x31, 0xc0, 0xc3}, true},
      {"syscall(SYS_fork) returns twice", {0xbf, 57, 0, 0, 0, 0xe8, LE32(0x1000 - 0x0a), 0x85, 0xc0, 0x75, 0x02, 0x31, 0xc0, 0xc3}, true},
      {"syscall(SYS_getpid) returns once", {0xbf, 39, 0, 0, 0, 0xe8, LE32(0x1000 - 0x0a), 0x85, 0xc0, 0x75, 0x02, 0x31, 0xc0, 0xc3}, false},
      {"syscall(unknown) returns once", {0x89, 0xf7, 0x90, 0x90, 0x90, 0xe8, LE32(0x1000 - 0x0a), 0x85, 0xc0, 0x75, 0x02, 0x31, 0xc0, 0xc3}, false},
  };
  for (size_t n = 0; n < sizeof v / sizeof v[0]; n++) {
    fn_case c = {v[n].name, v[n].code, 17, 17, 0, 0};
    const char *name = c.name;
    reloc_probes probes = {.entry = true, .arcs = true, .calls = true, .callee = is_syscall};
    reloc_info info;
    uint8_t *out;
    reloc_plan *p = run(&c, &probes, DEST, NULL, 0, &info, &out);
    if (!p) continue;
    const reloc_block *b = reloc_blocks(p);
    CHECK(info.nblocks == 4 && b[1].entered == v[n].twice, "%zu blocks; the block after the call entered: %d",
          info.nblocks, info.nblocks == 4 && b[1].entered);
    reloc_plan_free(p);
    free(out);
  }
}

static reloc_callee exits_or_errors(void *ctx, uint64_t addr) {
  (void)ctx;
  return addr == SRC + 0x1000 ? RELOC_CALLEE_EXITS_ON_STATUS
         : addr == SRC + 0x2000 ? RELOC_CALLEE_NEVER_RETURNS
                                : RELOC_CALLEE_RETURNS;
}

/* Calls known by their callee never to return (exit; error with a status
 * other than 0 in edi) end their path though code follows them (Debian's
 * uniq: `mov $1, %edi; call error@plt` followed by a block of its option
 * loop, whose dispatch's table base the fake fall-through reached with
 * another value); the copy jumps back to the original after such a call,
 * should it return after all.  error with status 0 returns. */
static void test_never_returns(void) {
  static const struct {
    const char *name;
    uint8_t code[13];
    bool returns;
  } v[] = {
      {"error(1, ...) never returns",
       {0xbf, 1, 0, 0, 0, 0xe8, LE32(0x1000 - 0x0a), 0x31, 0xc0, 0xc3}, false},
      {"error(0, ...) returns",
       {0xbf, 0, 0, 0, 0, 0xe8, LE32(0x1000 - 0x0a), 0x31, 0xc0, 0xc3}, true},
      {"exit(0) never returns",
       {0xbf, 0, 0, 0, 0, 0xe8, LE32(0x2000 - 0x0a), 0x31, 0xc0, 0xc3}, false},
  };
  for (size_t n = 0; n < sizeof v / sizeof v[0]; n++) {
    fn_case c = {v[n].name, v[n].code, sizeof v[n].code, sizeof v[n].code, 0, 0};
    const char *name = c.name;
    reloc_probes probes = {.callee = exits_or_errors};
    reloc_info info;
    uint8_t *out;
    reloc_plan *p = run(&c, &probes, DEST, NULL, 0, &info, &out);
    if (!p) continue;
    const reloc_edge *e = reloc_edges(p);
    bool fall = false;
    for (size_t k = 0; k < info.nedges; k++) fall |= e[k].kind == RELOC_EDGE_FALL && e[k].branch == SRC + 5;
    CHECK(fall == v[n].returns && info.nblocks == (v[n].returns ? 2u : 1u), "%zu blocks, fall edge %d",
          info.nblocks, fall);
    if (!v[n].returns) {
      int32_t rel = (int32_t)((SRC + 0x0a) - (DEST + 15));
      CHECK(info.copy_size == 15 && out[10] == 0xe9 && !memcmp(out + 11, &rel, 4),
            "no jmp back to the original after the call (%zu bytes)", info.copy_size);
    }
    reloc_plan_free(p);
    free(out);
  }
}

/* A jump table with arcs: of the counted table edges, the one that is its
 * target's only way in is counted at the target, the other (block 4 is also
 * reached by falling from block 3) in a stub its entry points at.  The range
 * check's ja is estimated cold (past it the switch dispatches): counted, in a
 * stub since block 5 is also reached by falling from block 4. */
static void test_edges_table(void) {
  static const uint8_t in[] = {
      0x83, 0xff, 0x02,                               /* 00: cmp edi, 2 */
      0x77, 0x13,                                     /* 03: ja 18 */
      0x89, 0xff,                                     /* 05: mov edi, edi */
      0xff, 0x24, 0xfd, 0x20, 0x00, 0x40, 0x00,       /* 07: jmp [rdi*8+0x400020] */
      0xb8, 0x01, 0x00, 0x00, 0x00,                   /* 0e: mov eax, 1   case 0 */
      0xc3,                                           /* 13: ret */
      0x31, 0xc0,                                     /* 14: xor eax, eax case 1 */
      0xff, 0xc0,                                     /* 16: inc eax      case 2 */
      0xc3,                                           /* 18: ret          default */
      0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,       /* 19: padding (hi = 19) */
      0x0e, 0x00, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, /* 20: T[0] = 0x40000e */
      0x14, 0x00, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, /* 28: T[1] = 0x400014 */
      0x16, 0x00, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, /* 30: T[2] = 0x400016 */
  };
  static const uint8_t want[] = {
      0x83, 0xff, 0x02,                               /* 00: cmp edi, 2 */
      0x77, 0x22,                                     /* 03: ja stub 0->5 (27) */
      0x89, 0xff,                                     /* 05: mov edi, edi */
      0xff, 0x24, 0xfd, 0x40, 0x00, 0x40, 0x10,       /* 07: jmp [rdi*8+DEST+0x40] */
      0xb8, 0x01, 0x00, 0x00, 0x00,                   /* 0e: mov eax, 1    block 2 */
      INC(0x13, 3),                                   /* 13: edge 2->exit, before the ret */
      0xc3,                                           /* 1a: ret */
      INC(0x1b, 1),                                   /* 1b: block 3: table edge 1->3, its only way in */
      0x31, 0xc0,                                     /* 22: xor eax, eax */
      0xff, 0xc0,                                     /* 24: inc eax       block 4 */
      0xc3,                                           /* 26: ret           block 5 */
      INC(0x27, 0),                                   /* 27: stub of edge 0->5 (the ja) */
      0xeb, 0xf6,                                     /* 2e: jmp block 5 */
      INC(0x30, 2),                                   /* 30: stub of table edge 1->4 */
      0xeb, 0xeb,                                     /* 37: jmp block 4 */
      0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,       /* 39: align 8 */
      0x0e, 0x00, 0x40, 0x10, 0x00, 0x00, 0x00, 0x00, /* 40: DEST+0x0e (edge on the tree) */
      0x1b, 0x00, 0x40, 0x10, 0x00, 0x00, 0x00, 0x00, /* 48: DEST+0x1b (block 3, probe first) */
      0x30, 0x00, 0x40, 0x10, 0x00, 0x00, 0x00, 0x00, /* 50: DEST+0x30 (stub) */
  };
  const char *name = "edges: table";
  fn_case c = CASE(name, in, 0x19, 0);
  reloc_probes probes = {.arcs = true};
  reloc_info info;
  uint8_t *out;
  reloc_plan *p = run(&c, &probes, DEST, NULL, 0, &info, &out);
  if (p && out) {
    bool same = info.copy_size == sizeof want && !memcmp(out, want, sizeof want);
    CHECK(same, "copy differs");
    if (!same) {
      dump("got ", out, info.copy_size);
      dump("want", want, sizeof want);
    }
    const reloc_edge *e = reloc_edges(p);
    size_t tables = 0;
    for (size_t k = 0; k < info.nedges; k++) tables += e[k].kind == RELOC_EDGE_TABLE;
    CHECK(tables == 3 && info.nblocks == 6, "%zu table edges, %zu blocks", tables, info.nblocks);
  }
  reloc_plan_free(p);
  free(out);
}

/* }=== */

/* {=== jump tables ===*/

static void test_table_pic(void) {
  static const uint8_t in[] = {
      0x83, 0xff, 0x03,                         /* 00: cmp edi, 3 */
      0x77, 0x1e,                               /* 03: ja 23 */
      0x48, 0x8d, 0x15, 0x1c, 0x00, 0x00, 0x00, /* 05: lea rdx, [rip+0x1c] (T = 28) */
      0x89, 0xff,                               /* 0c: mov edi, edi */
      0x48, 0x63, 0x04, 0xba,                   /* 0e: movsxd rax, dword [rdx+rdi*4] */
      0x48, 0x01, 0xd0,                         /* 12: add rax, rdx */
      0xff, 0xe0,                               /* 15: jmp rax */
      0xb8, 0x01, 0x00, 0x00, 0x00,             /* 17: mov eax, 1   case 0 */
      0xc3,                                     /* 1c: ret */
      0xb8, 0x02, 0x00, 0x00, 0x00,             /* 1d: mov eax, 2   case 1, 3 */
      0xc3,                                     /* 22: ret */
      0x31, 0xc0,                               /* 23: xor eax, eax default, case 2 */
      0xc3,                                     /* 25: ret */
      0x90, 0x90,                               /* 26: padding (hi) */
      0xef, 0xff, 0xff, 0xff,                   /* 28: T[0] = 17 - 28 */
      0xf5, 0xff, 0xff, 0xff,                   /* 2c: T[1] = 1d - 28 */
      0xfb, 0xff, 0xff, 0xff,                   /* 30: T[2] = 23 - 28 */
      0xf5, 0xff, 0xff, 0xff,                   /* 34: T[3] = 1d - 28 */
  };
  static const uint8_t want[] = {
      0x83, 0xff, 0x03,                         /* 00: cmp edi, 3 */
      0x77, 0x1e,                               /* 03: ja copy of 23 */
      0x48, 0x8d, 0x15, 0x1c, 0x00, 0x00, 0x00, /* 05: lea rdx, [rip+0x1c] (new T = 28) */
      0x89, 0xff,                               /* 0c: mov edi, edi */
      0x48, 0x63, 0x04, 0xba,                   /* 0e: movsxd rax, dword [rdx+rdi*4] */
      0x48, 0x01, 0xd0,                         /* 12: add rax, rdx */
      0xff, 0xe0,                               /* 15: jmp rax */
      0xb8, 0x01, 0x00, 0x00, 0x00,             /* 17: mov eax, 1 */
      0xc3,                                     /* 1c: ret */
      0xb8, 0x02, 0x00, 0x00, 0x00,             /* 1d: mov eax, 2 */
      0xc3,                                     /* 22: ret */
      0x31, 0xc0,                               /* 23: xor eax, eax */
      0xc3,                                     /* 25: ret */
      0xcc, 0xcc,                               /* 26: align 4 */
      0xef, 0xff, 0xff, 0xff,                   /* 28: 17 - 28 */
      0xf5, 0xff, 0xff, 0xff,                   /* 2c: 1d - 28 */
      0xfb, 0xff, 0xff, 0xff,                   /* 30: 23 - 28 */
      0xf5, 0xff, 0xff, 0xff,                   /* 34: 1d - 28 */
  };
  const char *name = "jump table, PIC";
  fn_case c = CASE(name, in, 0x26, 0);
  reloc_info info;
  expect_case(&c, NULL, want, sizeof want, &info);
  CHECK(info.njump_tables == 1 && !info.leaves_to_original, "%zu tables, leaves %d",
        info.njump_tables, info.leaves_to_original);
  CHECK(info.ninstructions == 13 && info.nblocks == 5, "%zu insns %zu blocks",
        info.ninstructions, info.nblocks);
  CHECK(info.min_inner_target == 0x17, "min_inner_target %" PRIu64, info.min_inner_target);

  /* table not readable (the caller gave only the function's bytes): unresolved */
  fn_case c2 = {"jump table, PIC, table not given", in, 0x26, 0x26, 0, 0};
  uint8_t *out;
  reloc_plan *p = run(&c2, NULL, DEST, NULL, 0, &info, &out);
  name = c2.name;
  CHECK(info.njump_tables == 0 && info.leaves_to_original && info.ninstructions == 9,
        "%zu tables, leaves %d, %zu insns", info.njump_tables, info.leaves_to_original,
        info.ninstructions);
  reloc_plan_free(p);
  free(out);
}

/* The other gcc shape: movsxd into the index register, add base, notrack jmp,
 * the lea hoisted above the bound check, a byte compare and the index
 * renamed by a movzx. */
static void test_table_pic_variant(void) {
  static const uint8_t in[] = {
      0x48, 0x8d, 0x0d, 0x21, 0x00, 0x00, 0x00, /* 00: lea rcx, [rip+0x21] (T = 28) */
      0x40, 0x80, 0xff, 0x02,                   /* 07: cmp dil, 2 */
      0x77, 0x14,                               /* 0b: ja 21 */
      0x40, 0x0f, 0xb6, 0xc7,                   /* 0d: movzx eax, dil */
      0x90,                                     /* 11: nop */
      0x48, 0x63, 0x04, 0x81,                   /* 12: movsxd rax, dword [rcx+rax*4] */
      0x48, 0x01, 0xc8,                         /* 16: add rax, rcx */
      0x3e, 0xff, 0xe0,                         /* 19: notrack jmp rax */
      0xb0, 0x01,                               /* 1c: mov al, 1    case 0 */
      0xc3,                                     /* 1e: ret */
      0xb0, 0x02,                               /* 1f: mov al, 2    case 1 */
      0x31, 0xc0,                               /* 21: xor eax, eax default, case 2 */
      0xc3,                                     /* 23: ret */
      0xcc, 0xcc, 0xcc, 0xcc,                   /* 24: padding (hi = 24) */
      0xf4, 0xff, 0xff, 0xff,                   /* 28: T[0] = 1c - 28 */
      0xf7, 0xff, 0xff, 0xff,                   /* 2c: T[1] = 1f - 28 */
      0xf9, 0xff, 0xff, 0xff,                   /* 30: T[2] = 21 - 28 */
  };
  const char *name = "jump table, PIC variant";
  fn_case c = CASE(name, in, 0x24, 0);
  reloc_info info;
  uint8_t *out;
  reloc_plan *p = run(&c, NULL, DEST, NULL, 0, &info, &out);
  CHECK(p && info.njump_tables == 1 && !info.leaves_to_original, "%zu tables, leaves %d",
        info.njump_tables, info.leaves_to_original);
  if (p && out) { /* follow the copy's own lea and table to each case */
    int64_t lea = reloc_copy_offset(p, SRC);
    x64_insn l;
    CHECK(lea == 0 && decode(out, 15, DEST, &l), "lea not first");
    uint64_t table = l.rip_target;
    static const uint64_t cases[] = {0x1c, 0x1f, 0x21};
    for (size_t k = 0; k < 3; k++) {
      const uint8_t *e = out + (table - DEST) + 4 * k;
      int32_t v = (int32_t)((uint32_t)e[0] | (uint32_t)e[1] << 8 | (uint32_t)e[2] << 16 |
                            (uint32_t)e[3] << 24);
      CHECK(table + (uint64_t)(int64_t)v == DEST + (uint64_t)reloc_copy_offset(p, SRC + cases[k]),
            "entry %zu does not reach the copy of case 0x%" PRIx64, k, cases[k]);
    }
    CHECK((table - DEST) % 4 == 0 && table - DEST + 12 == info.copy_size, "table placement");
  }
  reloc_plan_free(p);
  free(out);
}

/* Bound checks gcc makes on a byte: `cmp dil, N` with N >= 0x80 (negative as a
 * signed imm8, 0x82 bounds 131 entries) when the index is the byte
 * zero-extended, and `cmp byte [rsi+1], N` when the index is that byte loaded
 * again.  Not a bound: a byte compare of a register whose full 32 bits are the
 * index, or a memory compare with a store before the load. */
static void test_table_byte_bounds(void) {
  enum { T = 0x28, N = 131 };
  static const uint8_t head[6][0x1c] = {
      {0x48, 0x8d, 0x0d, 0x21, 0x00, 0x00, 0x00, /* 00: lea rcx, [rip+0x21] (T = 28) */
       0x40, 0x80, 0xff, 0x82,                   /* 07: cmp dil, 0x82 */
       0x77, 0x14,                               /* 0b: ja 21 */
       0x40, 0x0f, 0xb6, 0xc7,                   /* 0d: movzx eax, dil */
       0x90,                                     /* 11: nop */
       0x48, 0x63, 0x04, 0x81,                   /* 12: movsxd rax, dword [rcx+rax*4] */
       0x48, 0x01, 0xc8,                         /* 16: add rax, rcx */
       0x3e, 0xff, 0xe0},                        /* 19: notrack jmp rax */
      {0x48, 0x8d, 0x0d, 0x21, 0x00, 0x00, 0x00, 0x40, 0x80, 0xff, 0x82, 0x77, 0x14,
       0x89, 0xf8, 0x90, 0x90,                   /* 0d: mov eax, edi; nop; nop */
       0x90, 0x48, 0x63, 0x04, 0x81, 0x48, 0x01, 0xc8, 0x3e, 0xff, 0xe0},
      {0x48, 0x8d, 0x0d, 0x21, 0x00, 0x00, 0x00,
       0x80, 0x7e, 0x01, 0x02,                   /* 07: cmp byte [rsi+1], 2 */
       0x77, 0x14,                               /* 0b: ja 21 */
       0x0f, 0xb6, 0x46, 0x01,                   /* 0d: movzx eax, byte [rsi+1] */
       0x90, 0x48, 0x63, 0x04, 0x81, 0x48, 0x01, 0xc8, 0x3e, 0xff, 0xe0},
      {0x48, 0x8d, 0x0d, 0x21, 0x00, 0x00, 0x00, 0x80, 0x7e, 0x01, 0x02, 0x77, 0x14,
       0xaa,                                     /* 0d: stosb: a store */
       0x0f, 0xb6, 0x46, 0x01,                   /* 0e: movzx eax, byte [rsi+1] */
       0x48, 0x63, 0x04, 0x81, 0x48, 0x01, 0xc8, 0x3e, 0xff, 0xe0},
      {0x48, 0x8d, 0x0d, 0x21, 0x00, 0x00, 0x00, 0x80, 0x7e, 0x01, 0x02, 0x77, 0x14,
       0x0f, 0xb6, 0x46, 0x02,                   /* 0d: movzx eax, byte [rsi+2]: another byte */
       0x90, 0x48, 0x63, 0x04, 0x81, 0x48, 0x01, 0xc8, 0x3e, 0xff, 0xe0},
      {0x48, 0x8d, 0x0d, 0x21, 0x00, 0x00, 0x00, 0x80, 0x7e, 0x01, 0x02,
       0x88, 0x06,                               /* 0b: mov [rsi], al: beside the byte */
       0x77, 0x12,                               /* 0d: ja 21 */
       0x0f, 0xb6, 0x46, 0x01,                   /* 0f: movzx eax, byte [rsi+1] */
       0x48, 0x63, 0x04, 0x81, 0x48, 0x01, 0xc8, 0xff, 0xe0},
  };
  static const char *const names[6] = {
      "jump table, cmp dil, 0x82 (131 entries)", "jump table, byte compare of a 32-bit index",
      "jump table, cmp byte [rsi+1]", "jump table, store between compare and load",
      "jump table, compare and load of different bytes", "jump table, store beside the compared byte"};
  static const size_t want_entries[6] = {N, 0, 3, 0, 0, 3};
  static uint8_t in[T + 4 * N];
  for (size_t v = 0; v < 6; v++) {
    memset(in, 0xcc, sizeof in);
    memcpy(in, head[v], sizeof head[v]);
    static const uint8_t cases[] = {0xb0, 0x01, 0xc3, 0xb0, 0x02, 0x31, 0xc0, 0xc3};
    memcpy(in + 0x1c, cases, sizeof cases); /* 1c: case 0, 1f: case 1, 21: default */
    for (size_t k = 0; k < N; k++) {        /* T[k]: 1c, 1f, then the default */
      int32_t e = (int32_t)(k == 0 ? 0x1c : k == 1 ? 0x1f : 0x21) - T;
      memcpy(in + T + 4 * k, &e, 4);
    }
    fn_case c = {names[v], in, sizeof in, 0x24, 0, 0};
    reloc_info info;
    uint8_t *out;
    reloc_plan *p = run(&c, NULL, DEST, NULL, 0, &info, &out);
    const char *name = names[v];
    if (want_entries[v]) {
      CHECK(p && info.njump_tables == 1 && !info.leaves_to_original, "%zu tables, leaves %d",
            info.njump_tables, info.leaves_to_original);
      CHECK(p && reloc_copy_offset(p, SRC + 0x1f) >= 0 && reloc_copy_offset(p, SRC + 0x21) >= 0,
            "the cases were not decoded");
      size_t tables = 0;
      const reloc_edge *e = p ? reloc_edges(p) : NULL;
      for (size_t k = 0; e && k < info.nedges; k++) tables += e[k].kind == RELOC_EDGE_TABLE;
      CHECK(tables == 3, "%zu table edges (one per distinct target)", tables);
      CHECK(info.copy_size >= 4 * want_entries[v], "copy of %zu bytes holds no %zu-entry table",
            (size_t)info.copy_size, want_entries[v]);
    } else {
      CHECK(p && info.njump_tables == 0 && info.leaves_to_original, "%zu tables, leaves %d",
            info.njump_tables, info.leaves_to_original);
    }
    reloc_plan_free(p);
    free(out);
  }
}

/* Computed gotos in PIC code (Lua's, CPython's dispatch): the table's
 * address is loaded once at the entry (lea r8, [rip+T]), every handler ends
 * with its own dispatch `mov rcx, [r8+rax*8]; jmp rcx`, and only `and eax, 3`
 * bounds the index.  A jmp separates the lea from the first dispatch, so that
 * r8 is found to hold T in the whole function (every other write of it is
 * followed by the function's end), not on the way back.  Resolved when the
 * table is read-only; not when it may change; nor when a case decoded
 * through the table writes r8 and goes on to a dispatch (decoding starts
 * again without the table: both dispatches leave the copy). */
static void test_table_computed_goto(void) {
  enum { T = 0x38 };
  static const uint8_t dispatch[] = {
      0x0f, 0xb6, 0x07,       /* movzx eax, byte [rdi] */
      0x83, 0xe0, 0x03,       /* and eax, 3 */
      0x49, 0x8b, 0x0c, 0xc0, /* mov rcx, [r8+rax*8] */
      0xff, 0xe1,             /* jmp rcx */
  };
  /* case 3, at 0x2a: */
  static const uint8_t case3_plain[] = {0x31, 0xc0, 0xc3, 0x90, 0x90, 0x90, 0x90}; /* xor eax, eax; ret */
  static const uint8_t case3_epilogue[] = {0x49, 0x89, 0xf8, 0x31, 0xc0, 0xc3, 0x90}; /* mov r8, rdi; xor; ret */
  static const uint8_t case3_jumps[] = {0x49, 0x89, 0xf8, 0xeb, 0xec, 0x90, 0x90}; /* mov r8, rdi; jmp 1b */
  static const uint8_t *const case3[4] = {case3_plain, case3_epilogue, case3_jumps, case3_plain};
  static const char *const names[4] = {
      "computed goto, PIC", "computed goto, PIC, base register restored before a ret",
      "computed goto, PIC, base register written in a case", "computed goto, PIC, table not read-only"};
  static uint8_t in[T + 32];
  for (int v = 0; v < 4; v++) {
    memset(in, 0xcc, sizeof in);
    static const uint8_t head[] = {0x4c, 0x8d, 0x05, T - 7, 0, 0, 0, /* 00: lea r8, [rip+T] */
                                   0xeb, 0x00};                     /* 07: jmp 09 */
    memcpy(in, head, sizeof head);
    memcpy(in + 0x09, dispatch, sizeof dispatch);      /* 09..14: dispatch */
    static const uint8_t c01[] = {0xb0, 0x01, 0xc3, 0xb0, 0x02, 0xc3}; /* 15: case 0, 18: case 1 */
    memcpy(in + 0x15, c01, sizeof c01);
    in[0x1b] = 0x48, in[0x1c] = 0xff, in[0x1d] = 0xc7; /* 1b: case 2: inc rdi, then dispatch again */
    memcpy(in + 0x1e, dispatch, sizeof dispatch);      /* 1e..29 */
    memcpy(in + 0x2a, case3[v], 7);                    /* 2a: case 3 */
    static const uint64_t cases[4] = {0x15, 0x18, 0x1b, 0x2a};
    for (size_t k = 0; k < 4; k++) {
      uint64_t e = SRC + cases[k];
      memcpy(in + T + 8 * k, &e, 8);
    }
    uint64_t ro[1][2] = {{SRC + T, SRC + T + 32}};
    readonly = v == 3 ? NULL : (const uint64_t(*)[2])ro;
    nreadonly = v == 3 ? 0 : 1;
    fn_case c = {names[v], in, sizeof in, T, 0, 0};
    const char *name = names[v];
    reloc_info info;
    uint8_t *out;
    reloc_plan *p = run(&c, NULL, DEST, NULL, 0, &info, &out);
    if (v >= 2) {
      CHECK(p && info.njump_tables == 0 && info.leaves_to_original, "%zu tables, leaves %d",
            info.njump_tables, info.leaves_to_original);
    } else {
      CHECK(p && info.njump_tables == 1 && !info.leaves_to_original, "%zu tables, leaves %d",
            info.njump_tables, info.leaves_to_original);
      x64_insn l;
      if (p && out && reloc_copy_offset(p, SRC) == 0 && decode(out, 15, DEST, &l)) {
        uint64_t table = l.rip_target; /* the copy's lea names the copy's table: */
        bool inside = table >= DEST && table + 32 <= DEST + info.copy_size;
        CHECK(inside, "the lea names no table of the copy");
        for (size_t k = 0; k < 4 && inside; k++) {
          uint64_t e;
          memcpy(&e, out + (table - DEST) + 8 * k, 8);
          CHECK(e == DEST + (uint64_t)reloc_copy_offset(p, SRC + cases[k]),
                "entry %zu does not reach the copy of case 0x%" PRIx64, k, cases[k]);
        }
      } else {
        CHECK(0, "the copy does not start with the lea");
      }
    }
    reloc_plan_free(p);
    free(out);
  }

  /* With arcs each dispatch needs its own table (its counted arcs go through
   * stubs of its own): the second dispatch's load reads [r8+rax*8+d], d the
   * distance from the copy r8 holds to its own copy of the table. */
  {
    memset(in, 0xcc, sizeof in);
    static const uint8_t head[] = {0x4c, 0x8d, 0x05, T - 7, 0, 0, 0, 0xeb, 0x00};
    memcpy(in, head, sizeof head);
    memcpy(in + 0x09, dispatch, sizeof dispatch);
    static const uint8_t c01[] = {0xb0, 0x01, 0xc3, 0xb0, 0x02, 0xc3};
    memcpy(in + 0x15, c01, sizeof c01);
    in[0x1b] = 0x48, in[0x1c] = 0xff, in[0x1d] = 0xc7;
    memcpy(in + 0x1e, dispatch, sizeof dispatch);
    memcpy(in + 0x2a, case3_plain, 7);
    static const uint64_t cases[4] = {0x15, 0x18, 0x1b, 0x2a};
    for (size_t k = 0; k < 4; k++) {
      uint64_t e = SRC + cases[k];
      memcpy(in + T + 8 * k, &e, 8);
    }
    uint64_t ro[1][2] = {{SRC + T, SRC + T + 32}};
    readonly = (const uint64_t(*)[2])ro;
    nreadonly = 1;
    const char *name = "computed goto, PIC, arcs: a table per dispatch";
    fn_case c = {name, in, sizeof in, T, 0, 0};
    reloc_probes arcs = {.entry = true, .arcs = true};
    reloc_info info;
    uint8_t *out;
    reloc_plan *p = run(&c, &arcs, DEST, NULL, 0, &info, &out);
    CHECK(p && info.njump_tables == 2 && !info.leaves_to_original, "%zu tables, leaves %d",
          info.njump_tables, info.leaves_to_original);
    int64_t lea_at = p ? reloc_copy_offset(p, SRC) : -1, load_at = p ? reloc_copy_offset(p, SRC + 0x24) : -1;
    x64_insn l, m;
    if (p && out && lea_at >= 0 && load_at >= 0 && decode(out + lea_at, 15, DEST + (uint64_t)lea_at, &l) &&
        decode(out + load_at, 15, DEST + (uint64_t)load_at, &m)) {
      uint64_t first = l.rip_target, own = first + (uint64_t)m.op[1].disp;
      CHECK(m.op[1].type == X64_OP_MEM && m.op[1].base == ZYDIS_REGISTER_R8 && m.op[1].disp != 0 &&
                own >= DEST && own + 32 <= DEST + info.copy_size && own != first,
            "the second dispatch does not read a table of its own");
      for (size_t k = 0; k < 4 && own >= DEST && own + 32 <= DEST + info.copy_size; k++) {
        uint64_t e;
        memcpy(&e, out + (own - DEST) + 8 * k, 8);
        const uint8_t *at = e >= DEST && e < DEST + info.copy_size ? out + (e - DEST) : NULL;
        bool to_case = e == DEST + (uint64_t)reloc_copy_offset(p, SRC + cases[k]);
        bool to_stub = at && at[0] == 0x48 && at[1] == 0xff && at[2] == 0x05; /* inc qword [rip+c] */
        CHECK(to_case || to_stub, "entry %zu of the second table goes to neither case 0x%" PRIx64
              " nor a counting stub", k, cases[k]);
      }
    } else {
      CHECK(0, "no lea or load in the copy");
    }
    reloc_plan_free(p);
    free(out);
  }
  readonly = NULL;
  nreadonly = 0;
}

/* A computed goto whose index is sign-extended after its mask (CPython's
 * eval loop: `movzx edx, byte [m]; ...; movsxd rdx, edx; mov rax, [T+rdx*8]`):
 * the movsxd is followed back to the masked register, whose bound (4
 * entries, far below 2^31) the sign extension does not change. */
static void test_table_sign_extended_index(void) {
  enum { T = 0x28 };
  static uint8_t in[T + 32];
  memset(in, 0xcc, sizeof in);
  static const uint8_t code[] = {
      0x4c, 0x8d, 0x05, T - 7, 0, 0, 0, /* 00: lea r8, [rip+T] */
      0x0f, 0xb6, 0x07,                 /* 07: movzx eax, byte [rdi] */
      0x83, 0xe0, 0x03,                 /* 0a: and eax, 3 */
      0x48, 0x63, 0xc0,                 /* 0d: movsxd rax, eax */
      0x49, 0x8b, 0x0c, 0xc0,           /* 10: mov rcx, [r8+rax*8] */
      0xff, 0xe1,                       /* 14: jmp rcx */
      0xb0, 0x01, 0xc3,                 /* 16: case 0: mov al, 1; ret */
      0xb0, 0x02, 0xc3,                 /* 19: case 1 */
      0xb0, 0x03, 0xc3,                 /* 1c: case 2 */
      0x31, 0xc0, 0xc3,                 /* 1f: case 3: xor eax, eax; ret */
  };
  memcpy(in, code, sizeof code);
  static const uint64_t cases[4] = {0x16, 0x19, 0x1c, 0x1f};
  for (size_t k = 0; k < 4; k++) {
    uint64_t e = SRC + cases[k];
    memcpy(in + T + 8 * k, &e, 8);
  }
  uint64_t ro[1][2] = {{SRC + T, SRC + T + 32}};
  readonly = (const uint64_t(*)[2])ro;
  nreadonly = 1;
  const char *name = "computed goto, sign-extended index";
  fn_case c = {name, in, sizeof in, T, 0, 0};
  reloc_info info;
  uint8_t *out;
  reloc_plan *p = run(&c, NULL, DEST, NULL, 0, &info, &out);
  CHECK(p && info.njump_tables == 1 && !info.leaves_to_original && info.nblocks == 5,
        "%zu tables, leaves %d, %zu blocks", info.njump_tables, info.leaves_to_original, info.nblocks);
  reloc_plan_free(p);
  free(out);
  readonly = NULL;
  nreadonly = 0;
}

/* A switch whose table base was loaded before a loop (`lea rsi, [rip+T]`,
 * not on the way back from the dispatch: sqlite's resolveP2Values) and whose
 * bound is a byte compare made after the zero-extension (`movzx eax, byte
 * [rdi]; cmp al, 2; ja`): resolved.  Not when the index is loaded whole (`mov
 * eax, [rdi]`): the byte compare bounds only its low bits. */
static void test_table_hoisted_base(void) {
  enum { T = 0x28 };
  static const uint8_t code[2][T] = {
      {0x48, 0x8d, 0x35, T - 7, 0, 0, 0, /* 00: lea rsi, [rip+T] */
       0xeb, 0x00,                       /* 07: jmp 09 */
       0x0f, 0xb6, 0x07,                 /* 09: movzx eax, byte [rdi] */
       0x3c, 0x02,                       /* 0c: cmp al, 2 */
       0x77, 0x10,                       /* 0e: ja 20 */
       0x48, 0x63, 0x04, 0x86,           /* 10: movsxd rax, dword [rsi+rax*4] */
       0x48, 0x01, 0xf0,                 /* 14: add rax, rsi */
       0xff, 0xe0,                       /* 17: jmp rax */
       0xb0, 0x01, 0xc3,                 /* 19: case 0 */
       0xb0, 0x02, 0xc3,                 /* 1c: case 1 */
       0x90, 0x31, 0xc0, 0xc3,           /* 1f: nop; 20: default, case 2 */
       0xcc, 0xcc, 0xcc, 0xcc, 0xcc},
      {0x48, 0x8d, 0x35, T - 7, 0, 0, 0, 0xeb, 0x00,
       0x8b, 0x07, 0x90,                 /* 09: mov eax, [rdi]; nop */
       0x3c, 0x02, 0x77, 0x10, 0x48, 0x63, 0x04, 0x86, 0x48, 0x01, 0xf0, 0xff, 0xe0, 0xb0, 0x01,
       0xc3, 0xb0, 0x02, 0xc3, 0x90, 0x31, 0xc0, 0xc3, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc},
  };
  static const char *const names[2] = {"jump table, base loaded before the loop, byte bound",
                                       "jump table, byte compare of an index loaded whole"};
  static uint8_t in[T + 12];
  for (int v = 0; v < 2; v++) {
    memcpy(in, code[v], T);
    static const int32_t entries[3] = {0x19 - T, 0x1c - T, 0x20 - T};
    memcpy(in + T, entries, sizeof entries);
    fn_case c = {names[v], in, sizeof in, T, 0, 0};
    const char *name = names[v];
    reloc_info info;
    uint8_t *out;
    reloc_plan *p = run(&c, NULL, DEST, NULL, 0, &info, &out);
    bool resolved = v == 0;
    CHECK(p && info.njump_tables == (resolved ? 1u : 0u) && info.leaves_to_original == !resolved,
          "%zu tables, leaves %d", info.njump_tables, info.leaves_to_original);
    if (resolved)
      CHECK(p && reloc_copy_offset(p, SRC + 0x1c) >= 0 && reloc_copy_offset(p, SRC + 0x19) >= 0,
            "the cases were not decoded");
    reloc_plan_free(p);
    free(out);
  }
}

/* Plans CODE (SIZE bytes, the function up to T) followed at T by a table of
 * offsets from T to CASES (N of them), the table read-only when READONLY, and
 * checks that the dispatch was RESOLVED (the table found, every case
 * decoded) or not (left to the original body). */
static void check_rel32_switch(const char *name, const uint8_t *code, size_t size, size_t t, const int *cases, int n,
                               bool resolved, bool ro) {
  uint8_t *in = malloc(t + 4 * (size_t)n + 4);
  memset(in, 0xcc, t + 4 * (size_t)n + 4);
  memcpy(in, code, size);
  for (int k = 0; k < n; k++) {
    int32_t e = cases[k] - (int32_t)t;
    memcpy(in + t + 4 * k, &e, 4);
  }
  uint64_t table[1][2] = {{SRC + t, SRC + t + 4 * (uint64_t)n}};
  readonly = ro ? (const uint64_t(*)[2])table : NULL;
  nreadonly = ro;
  fn_case c = {name, in, t + 4 * (size_t)n + 4, t, 0, 0};
  reloc_info info;
  uint8_t *out;
  reloc_plan *p = run(&c, NULL, DEST, NULL, 0, &info, &out);
  CHECK(p && info.njump_tables == (resolved ? 1u : 0u) && info.leaves_to_original == !resolved,
        "%zu tables, leaves %d", info.njump_tables, info.leaves_to_original);
  for (int k = 0; resolved && p && k < n; k++)
    CHECK(reloc_copy_offset(p, SRC + (uint64_t)cases[k]) >= 0, "case %d was not decoded", k);
  reloc_plan_free(p);
  free(out);
  free(in);
  readonly = NULL;
  nreadonly = 0;
}

/* Bases and bounds off the dispatch's straight line (relocate/reloc_function.c,
 * base_reaches and prev_way; tests/corpus/switchloop.c has gcc's shapes):
 * v0, zlib's gz_open: the lea of the table before a loop entered by a jmp, a
 * call elsewhere clobbering its register: resolved, the register holding the
 * table on every way into the dispatch.  v1: the same, but case 0 writes the
 * register before it jumps back into the loop: refused, decoding starts
 * again without the table (the dispatch leaves the copy).  v2, jsoncpp's
 * readToken: the bound is a jbe taken into the dispatch, where no
 * instruction falls through: resolved, walking back through the jbe. */
static void test_table_off_the_straight_line(void) {
  enum { T0 = 0x28, T1 = 0x30, T2 = 0x24 };
  static const uint8_t v0[] = {
      0x48, 0x8d, 0x35, T0 - 7, 0, 0, 0, /* 00: lea rsi, [rip+T] */
      0xeb, 0x03,                        /* 07: jmp 0c */
      0x48, 0xff, 0xc7,                  /* 09: inc rdi */
      0x0f, 0xb6, 0x07,                  /* 0c: movzx eax, byte [rdi] */
      0x3c, 0x02,                        /* 0f: cmp al, 2 */
      0x77, 0x0e,                        /* 11: ja 21 */
      0x48, 0x63, 0x04, 0x86,            /* 13: movsxd rax, dword [rsi+rax*4] */
      0x48, 0x01, 0xf0,                  /* 17: add rax, rsi */
      0xff, 0xe0,                        /* 1a: jmp rax */
      0xeb, 0xeb,                        /* 1c: case 0: jmp 09 */
      0xb0, 0x01, 0xc3,                  /* 1e: case 1: mov al, 1; ret */
      0xe8, 0x5a, 0, 0, 0,               /* 21: case 2: call SRC+0x80 (rsi clobbered) */
      0xc3,                              /* 26: ret */
  };
  static const uint8_t v1[] = {
      0x48, 0x8d, 0x35, T1 - 7, 0, 0, 0, 0xeb, 0x03, 0x48, 0xff, 0xc7, 0x0f, 0xb6, 0x07, 0x3c, 0x02,
      0x77, 0x11,                        /* 11: ja 24 */
      0x48, 0x63, 0x04, 0x86, 0x48, 0x01, 0xf0, 0xff, 0xe0,
      0x48, 0x89, 0xfe,                  /* 1c: case 0: mov rsi, rdi */
      0xeb, 0xe8,                        /* 1f: jmp 09 */
      0xb0, 0x01, 0xc3,                  /* 21: case 1 */
      0xe8, 0x57, 0, 0, 0, 0xc3,         /* 24: case 2: call SRC+0x80; ret */
  };
  static const uint8_t v2[] = {
      0x0f, 0xb6, 0x07,                  /* 00: movzx eax, byte [rdi] */
      0x3c, 0x02,                        /* 03: cmp al, 2 */
      0x76, 0x03,                        /* 05: jbe 0a */
      0x31, 0xc0, 0xc3,                  /* 07: xor eax, eax; ret */
      0x48, 0x8d, 0x35, T2 - 0x11, 0, 0, 0, /* 0a: lea rsi, [rip+T] */
      0x48, 0x63, 0x04, 0x86,            /* 11: movsxd rax, dword [rsi+rax*4] */
      0x48, 0x01, 0xf0,                  /* 15: add rax, rsi */
      0xff, 0xe0,                        /* 18: jmp rax */
      0xb0, 0x01, 0xc3, 0xb0, 0x02, 0xc3, 0xb0, 0x03, 0xc3, /* 1a, 1d, 20: cases 0, 1, 2 */
  };
  static const uint8_t *const code[3] = {v0, v1, v2};
  static const size_t sizes[3] = {sizeof v0, sizeof v1, sizeof v2};
  static const int tables[3] = {T0, T1, T2};
  static const int cases[3][3] = {{0x1c, 0x1e, 0x21}, {0x1c, 0x21, 0x24}, {0x1a, 0x1d, 0x20}};
  static const char *const names[3] = {"jump table, base loaded before a loop, a call elsewhere",
                                       "jump table, base loaded before a loop, written in a case",
                                       "jump table, bound by a jbe into the dispatch"};
  for (int v = 0; v < 3; v++)
    check_rel32_switch(names[v], code[v], sizes[v], (size_t)tables[v], cases[v], 3, v != 1, false);
}

/* The bound compares memory that the index is read from again after the
 * prologue's pushes (Debian's python3: `cmpl $0x1b, (%rsi); ja; push %r15;
 * ...; mov (%rsi), %eax; jmp *T(,%rax,8)`): pushes store below the stack
 * pointer, apart from memory addressed through another register: resolved. */
static void test_table_memory_past_pushes(void) {
  enum { T = 0x2c };
  static const uint8_t code[] = {
      0x83, 0x3e, 0x02,                 /* 00: cmp dword [rsi], 2 */
      0x77, 0x23,                       /* 03: ja 28 */
      0x55, 0x53,                       /* 05: push rbp; push rbx */
      0x8b, 0x06,                       /* 07: mov eax, [rsi] */
      0x48, 0x8d, 0x15, T - 0x10, 0, 0, 0, /* 09: lea rdx, [rip+T] */
      0x48, 0x63, 0x04, 0x82,           /* 10: movsxd rax, dword [rdx+rax*4] */
      0x48, 0x01, 0xd0,                 /* 14: add rax, rdx */
      0xff, 0xe0,                       /* 17: jmp rax */
      0x5b, 0x5d, 0xb0, 0x01, 0xc3,     /* 19: case 0: pop rbx; pop rbp; mov al, 1; ret */
      0x5b, 0x5d, 0xb0, 0x02, 0xc3,     /* 1e: case 1 */
      0x5b, 0x5d, 0xb0, 0x03, 0xc3,     /* 23: case 2 */
      0x31, 0xc0, 0xc3,                 /* 28: default: xor eax, eax; ret */
  };
  static const int cases[3] = {0x19, 0x1e, 0x23};
  check_rel32_switch("jump table, memory bound past the prologue's pushes", code, sizeof code, T, cases, 3, true,
                     false);
}

/* A switch on a global (Debian's tar: `cmpl $0x9, g(%rip); ja; mov g(%rip),
 * %eax; lea T(%rip), %rdx; ...`): the bound is compared in memory named
 * RIP-relative, at the address the index is read from again.  A store to
 * another global between them leaves it alone; one to the same global does
 * not, and the dispatch is left unresolved (to the original body). */
static void test_table_memory_global(void) {
  enum { T = 0x38, G = 0x1000 };
  for (int same = 0; same <= 1; same++) {
    uint32_t store_disp = (uint32_t)(G + (same ? 0 : 8) - 0x13);
    const uint8_t code[] = {
        0x83, 0x3d, LE32(G - 0x07), 0x02,             /* 00: cmp dword [rip+G], 2 */
        0x77, 0x29,                                   /* 07: ja 32 */
        0xc7, 0x05, LE32(store_disp), 1, 0, 0, 0,     /* 09: mov dword [rip+G+8 or G], 1 */
        0x8b, 0x05, LE32(G - 0x19),                   /* 13: mov eax, [rip+G] */
        0x48, 0x8d, 0x15, LE32(T - 0x20),             /* 19: lea rdx, [rip+T] */
        0x48, 0x63, 0x04, 0x82,                       /* 20: movsxd rax, dword [rdx+rax*4] */
        0x48, 0x01, 0xd0,                             /* 24: add rax, rdx */
        0xff, 0xe0,                                   /* 27: jmp rax */
        0xb0, 0x01, 0xc3, 0xb0, 0x02, 0xc3, 0xb0, 0x03, 0xc3, /* 29, 2c, 2f: cases 0-2 */
        0x31, 0xc0, 0xc3,                             /* 32: default: xor eax, eax; ret */
    };
    static const int cases[3] = {0x29, 0x2c, 0x2f};
    check_rel32_switch(same ? "jump table, a global's bound stored over" : "jump table, bound on a global", code,
                       sizeof code, T, cases, 3, !same, false);
  }
}

/* The bound compared on a copy of the index (Debian's perl, Perl_sv_upgrade):
 * the copy made before the compare (`mov r12, rdi; cmp r12d, 2; ja`, the
 * table read at rdi), the index a copy of the compared register (`mov r8d,
 * edi; cmp edi, 2; ja`, read at r8) or of its byte (Perl_sv_setiv: `movzx
 * edx, al; cmp al, 2; ja`, read at rdx).  A copy changed before its compare
 * bounds nothing: that dispatch is left unresolved. */
static void test_table_bound_on_copy(void) {
  enum { T = 0x2c };
  static const struct {
    const char *name;
    uint8_t code[0x29];
    int cases[3];
    bool resolved;
  } v[] = {
      {"jump table, bound on a copy made before",
       {0x49, 0x89, 0xfc,                   /* 00: mov r12, rdi */
        0x41, 0x83, 0xfc, 0x02,             /* 03: cmp r12d, 2 */
        0x77, 0x19,                         /* 07: ja 22 */
        0x48, 0x8d, 0x15, T - 0x10, 0, 0, 0, /* 09: lea rdx, [rip+T] */
        0x48, 0x63, 0x04, 0xba,             /* 10: movsxd rax, dword [rdx+rdi*4] */
        0x48, 0x01, 0xd0, 0xff, 0xe0,       /* 14: add rax, rdx; jmp rax */
        0xb0, 0x01, 0xc3, 0xb0, 0x02, 0xc3, 0xb0, 0x03, 0xc3, /* 19, 1c, 1f: cases */
        0x31, 0xc0, 0xc3},                  /* 22: default */
       {0x19, 0x1c, 0x1f},
       true},
      {"jump table, index a copy of the bounded register",
       {0x41, 0x89, 0xf8,                   /* 00: mov r8d, edi */
        0x83, 0xff, 0x02,                   /* 03: cmp edi, 2 */
        0x77, 0x19,                         /* 06: ja 21 */
        0x48, 0x8d, 0x15, T - 0x0f, 0, 0, 0, /* 08: lea rdx, [rip+T] */
        0x4a, 0x63, 0x04, 0x82,             /* 0f: movsxd rax, dword [rdx+r8*4] */
        0x48, 0x01, 0xd0, 0xff, 0xe0,       /* 13: add rax, rdx; jmp rax */
        0xb0, 0x01, 0xc3, 0xb0, 0x02, 0xc3, 0xb0, 0x03, 0xc3, /* 18, 1b, 1e: cases */
        0x31, 0xc0, 0xc3},                  /* 21: default */
       {0x18, 0x1b, 0x1e},
       true},
      {"jump table, index a byte's zero-extension, the byte bounded",
       {0x0f, 0xb6, 0xd0,                   /* 00: movzx edx, al */
        0x3c, 0x02,                         /* 03: cmp al, 2 */
        0x77, 0x19,                         /* 05: ja 20 */
        0x48, 0x8d, 0x0d, T - 0x0e, 0, 0, 0, /* 07: lea rcx, [rip+T] */
        0x48, 0x63, 0x14, 0x91,             /* 0e: movsxd rdx, dword [rcx+rdx*4] */
        0x48, 0x01, 0xca, 0xff, 0xe2,       /* 12: add rdx, rcx; jmp rdx */
        0xb0, 0x01, 0xc3, 0xb0, 0x02, 0xc3, 0xb0, 0x03, 0xc3, /* 17, 1a, 1d: cases */
        0x31, 0xc0, 0xc3},                  /* 20: default */
       {0x17, 0x1a, 0x1d},
       true},
      {"jump table, bound on a copy changed since",
       {0x49, 0x89, 0xfc,                   /* 00: mov r12, rdi */
        0x41, 0x83, 0xc4, 0x01,             /* 03: add r12d, 1 */
        0x41, 0x83, 0xfc, 0x02,             /* 07: cmp r12d, 2 */
        0x77, 0x19,                         /* 0b: ja 26 */
        0x48, 0x8d, 0x15, T - 0x14, 0, 0, 0, /* 0d: lea rdx, [rip+T] */
        0x48, 0x63, 0x04, 0xba,             /* 14: movsxd rax, dword [rdx+rdi*4] */
        0x48, 0x01, 0xd0, 0xff, 0xe0,       /* 18: add rax, rdx; jmp rax */
        0xb0, 0x01, 0xc3, 0xb0, 0x02, 0xc3, 0xb0, 0x03, 0xc3, /* 1d, 20, 23: cases */
        0x31, 0xc0, 0xc3},                  /* 26: default */
       {0x1d, 0x20, 0x23},
       false},
  };
  for (size_t n = 0; n < sizeof v / sizeof v[0]; n++)
    check_rel32_switch(v[n].name, v[n].code, sizeof v[n].code, T, v[n].cases, 3, v[n].resolved, false);
}

/* Computed gotos in PIC code whose index nothing bounds (CPython's regex
 * engine in a PIC libpython: `mov 0x4(%r10),%eax; mov (%r8,%rax,8),%rax; jmp
 * *%rax`, and its first dispatch `jmp *(%r8,%rax,8)`): the table r8 holds is
 * read to its first entry that is no code (a 0 here).  Under arcs the second
 * dispatch reads a table of its own, a displacement added to its load (the
 * jmp's own, in the second form). */
static void test_table_computed_goto_unbounded(void) {
  enum { T = 0x38 };
  static const uint8_t by_mov[] = {0x49, 0x8b, 0x0c, 0xc0, 0xff, 0xe1}; /* mov rcx, [r8+rax*8]; jmp rcx */
  static const uint8_t by_jmp[] = {0x41, 0xff, 0x24, 0xc0, 0x66, 0x90}; /* jmp [r8+rax*8]; (nop) */
  for (int v = 0; v < 4; v++) {
    static uint8_t in[T + 40];
    memset(in, 0xcc, sizeof in);
    uint8_t dispatch[12] = {0x8b, 0x07, 0x0f, 0x1f, 0x40, 0x00}; /* mov eax, [rdi]; nop */
    memcpy(dispatch + 6, v % 2 ? by_jmp : by_mov, 6);
    static const uint8_t head[] = {0x4c, 0x8d, 0x05, T - 7, 0, 0, 0, 0xeb, 0x00}; /* lea r8, [rip+T]; jmp 09 */
    memcpy(in, head, sizeof head);
    memcpy(in + 0x09, dispatch, sizeof dispatch);
    static const uint8_t c01[] = {0xb0, 0x01, 0xc3, 0xb0, 0x02, 0xc3}; /* 15: case 0, 18: case 1 */
    memcpy(in + 0x15, c01, sizeof c01);
    in[0x1b] = 0x48, in[0x1c] = 0xff, in[0x1d] = 0xc7; /* 1b: case 2: inc rdi, then dispatch again */
    memcpy(in + 0x1e, dispatch, sizeof dispatch);
    static const uint8_t c3[] = {0x31, 0xc0, 0xc3}; /* 2a: case 3 */
    memcpy(in + 0x2a, c3, sizeof c3);
    static const uint64_t cases[4] = {0x15, 0x18, 0x1b, 0x2a};
    for (size_t k = 0; k < 4; k++) {
      uint64_t e = SRC + cases[k];
      memcpy(in + T + 8 * k, &e, 8);
    }
    memset(in + T + 32, 0, 8); /* past the table: no code */
    uint64_t ro[1][2] = {{SRC + T, SRC + T + 40}};
    readonly = (const uint64_t(*)[2])ro;
    nreadonly = 1;
    static const char *const names[4] = {"computed goto, PIC, unbounded", "computed goto, PIC, unbounded, jmp [r8+rax*8]",
                                         "computed goto, PIC, unbounded, arcs",
                                         "computed goto, PIC, unbounded, jmp [r8+rax*8], arcs"};
    const char *name = names[v];
    fn_case c = {name, in, sizeof in, T, 0, 0};
    reloc_probes arcs = {.entry = true, .arcs = true};
    reloc_info info;
    uint8_t *out;
    reloc_plan *p = run(&c, v >= 2 ? &arcs : NULL, DEST, NULL, 0, &info, &out);
    CHECK(p && info.njump_tables == (v >= 2 ? 2u : 1u) && !info.leaves_to_original, "%zu tables, leaves %d",
          info.njump_tables, info.leaves_to_original);
    for (size_t k = 0; p && k < 4; k++)
      CHECK(reloc_copy_offset(p, SRC + cases[k]) >= 0, "case 0x%" PRIx64 " was not decoded", cases[k]);
    reloc_plan_free(p);
    free(out);
    readonly = NULL;
    nreadonly = 0;
  }
}

/* A computed goto whose table base is spilled to the stack and reloaded
 * after a call (CPython's regex engine and eval loop in a PIC libpython):
 * resolved, the reload's slot holding what the lea set (under arcs the
 * second dispatch reads a table of its own).  Not when another case stores
 * something else in the slot on a way to the reload. */
static void test_table_spilled_base(void) {
  enum { T = 0x40 };
  for (int v = 0; v <= 2; v++) {
    bool bad = v == 1, arcs = v == 2;
    static uint8_t in[T + 32];
    memset(in, 0xcc, sizeof in);
    static const uint8_t head[] = {
        0x53,                                     /* 00: push rbx */
        0x48, 0x83, 0xec, 0x20,                   /* 01: sub rsp, 0x20 */
        0x4c, 0x8d, 0x05, T - 0x0c, 0, 0, 0,      /* 05: lea r8, [rip+T] */
        0x4c, 0x89, 0x44, 0x24, 0x10,             /* 0c: mov [rsp+0x10], r8 */
        0x8b, 0x07,                               /* 11: mov eax, [rdi] */
        0x41, 0xff, 0x24, 0xc0,                   /* 13: jmp [r8+rax*8] */
        0xe8, 0xe4, 0x0f, 0x00, 0x00,             /* 17: case 0: call 0x1000 (clobbers r8) */
        0x4c, 0x8b, 0x44, 0x24, 0x10,             /* 1c: mov r8, [rsp+0x10] */
        0x48, 0x83, 0xc7, 0x04,                   /* 21: add rdi, 4 */
        0x8b, 0x07,                               /* 25: mov eax, [rdi] */
        0x41, 0xff, 0x24, 0xc0,                   /* 27: jmp [r8+rax*8] */
    };
    static const uint8_t case1_ret[] = {0x48, 0x83, 0xc4, 0x20, 0x5b, 0xc3, 0x90};  /* 2b: add rsp, 0x20; pop rbx; ret */
    static const uint8_t case1_store[] = {0x48, 0x89, 0x7c, 0x24, 0x10, 0xeb, 0xea}; /* 2b: mov [rsp+0x10], rdi; jmp 1c */
    static const uint8_t case2[] = {0x31, 0xc0, 0x48, 0x83, 0xc4, 0x20, 0x5b, 0xc3}; /* 32: xor eax, eax; add rsp, 0x20; pop rbx; ret */
    memcpy(in, head, sizeof head);
    memcpy(in + 0x2b, bad ? case1_store : case1_ret, 7);
    memcpy(in + 0x32, case2, sizeof case2);
    uint64_t entries[4] = {SRC + 0x17, SRC + 0x2b, SRC + 0x32, 0};
    memcpy(in + T, entries, sizeof entries);
    uint64_t ro[1][2] = {{SRC + T, SRC + T + 32}};
    readonly = (const uint64_t(*)[2])ro;
    nreadonly = 1;
    const char *name = bad    ? "computed goto, base spilled, the slot written in a case"
                       : arcs ? "computed goto, base spilled, arcs"
                              : "computed goto, base spilled";
    fn_case c = {name, in, sizeof in, T, 0, 0};
    reloc_probes probes = {.entry = true, .arcs = true};
    reloc_info info;
    uint8_t *out;
    reloc_plan *p = run(&c, arcs ? &probes : NULL, DEST, NULL, 0, &info, &out);
    CHECK(p && info.njump_tables == (bad ? 0u : arcs ? 2u : 1u) && info.leaves_to_original == bad, "%zu tables, leaves %d",
          info.njump_tables, info.leaves_to_original);
    for (size_t k = 0; p && !bad && k < 3; k++)
      CHECK(reloc_copy_offset(p, entries[k]) >= 0, "case at 0x%" PRIx64 " was not decoded", entries[k]);
    reloc_plan_free(p);
    free(out);
    readonly = NULL;
    nreadonly = 0;
  }
}

/* A table of offsets that only a mask bounds (Duff's device, `switch (len &
 * 3)`: Debian's perl's hashes): every entry up to the mask is read.  Not
 * when a ja tests a compare of a register not known to be the index: the
 * table may be shorter than the mask allows, and it is guarded instead (read
 * up to the read-only bytes' end here: all four cases). */
static void test_table_mask_bound(void) {
  enum { T = 0x30 };
  for (int other = 0; other <= 1; other++) {
    const uint8_t code[] = {
        0x41, 0x89, 0xf2,                    /* 00: mov r10d, esi */
        0x41, 0x83, 0xe2, 0x03,              /* 03: and r10d, 3 */
        0x83, 0xf9, other ? 0x02 : 0x7f,     /* 07: cmp ecx, 2 (or 127, which no ja reads) */
        other ? 0x77 : 0x90, other ? 0x28 - 0x0c : 0x90, /* 0a: nop; nop (or ja 28) */
        0x48, 0x8d, 0x15, T - 0x13, 0, 0, 0, /* 0c: lea rdx, [rip+T] */
        0x4a, 0x63, 0x04, 0x92,              /* 13: movsxd rax, dword [rdx+r10*4] */
        0x48, 0x01, 0xd0, 0xff, 0xe0,        /* 17: add rax, rdx; jmp rax */
        0xb0, 0x01, 0xc3, 0xb0, 0x02, 0xc3, 0xb0, 0x03, 0xc3, 0xb0, 0x04, 0xc3, /* 1c, 1f, 22, 25: cases */
        0x31, 0xc0, 0xc3,                    /* 28: what the ja skips to */
    };
    static const int cases[4] = {0x1c, 0x1f, 0x22, 0x25};
    /* a table no compare bounds is read in read-only memory */
    check_rel32_switch(other ? "jump table, a mask and a compare of another register" : "jump table, bound by a mask",
                       code, sizeof code, T, cases, 4, true, true);
  }
}

/* Does the copy of the load at LOAD begin with a guard, `cmp REG, N` (REG:
 * any when 0)? */
static bool guard_compares(const reloc_plan *p, const uint8_t *out, size_t size, uint64_t load, int reg, int64_t n) {
  int64_t at = p && out ? reloc_copy_offset(p, load) : -1;
  x64_insn cmp;
  return at >= 0 && decode(out + at, size - (size_t)at, DEST + (uint64_t)at, &cmp) &&
         cmp.mnemonic == ZYDIS_MNEMONIC_CMP && (!reg || cmp.op[0].reg == reg) && cmp.op[1].imm == n;
}

/* A table of offsets that nothing bounds (gnulib's regex in Debian's csplit:
 * `mov 0x80(%rsp), %r10d; lea T(%rip), %rcx; movslq (%rcx,%r10,4), %rax;
 * add %rcx, %rax; jmp *%rax`, the default case unreachable): its entries are
 * read up to the first that is no code, decoded in order up to the first
 * that does not decode as code of the function, and the copy compares the
 * index with the entries kept, the others escaping to the original load.
 * Variants: 0, three entries, then bytes that are no code; 1, a fourth entry
 * inside case 0's `mov al, 1`; 2, the read-only bytes end after two
 * entries; 3, 0 under arcs; 4, the load's address 32 bits wide (0x67): not
 * resolved. */
static void test_table_guarded(void) {
  enum { T = 0x20 };
  static const char *const names[] = {"guarded jump table", "guarded jump table, an entry past its end inside an instruction",
                                      "guarded jump table at the end of the read-only bytes",
                                      "guarded jump table, arcs", "guarded jump table, a 32-bit address"};
  for (int v = 0; v <= 4; v++) {
    uint8_t in[T + 64];
    size_t pre = v == 4; /* the 0x67 prefix moves what follows the load by one */
    const uint8_t head[] = {
        0x8b, 0x07,                                 /* 00: mov eax, [rdi] */
        0x48, 0x8d, 0x15, (uint8_t)(T - 0x09), 0, 0, 0, /* 02: lea rdx, [rip+T] */
    };
    const uint8_t tail[] = {
        0x48, 0x63, 0x04, 0x82,                     /* 09: [67] movsxd rax, dword [rdx+rax*4] */
        0x48, 0x01, 0xd0, 0xff, 0xe0,               /* 0d: add rax, rdx; jmp rax */
        0xb0, 0x01, 0xc3, 0xb0, 0x02, 0xc3, 0xb0, 0x03, 0xc3, /* 12, 15, 18: cases */
    };
    memset(in, 0xcc, sizeof in); /* past the entries: offsets that land out of the code */
    memcpy(in, head, sizeof head);
    if (pre) in[sizeof head] = 0x67;
    memcpy(in + sizeof head + pre, tail, sizeof tail);
    int32_t entries[4] = {(int32_t)(0x12 + pre) - T, (int32_t)(0x15 + pre) - T, (int32_t)(0x18 + pre) - T,
                          (int32_t)(0x13 + pre) - T};
    memcpy(in + T, entries, (v == 1 ? 4 : 3) * sizeof *entries);
    uint64_t ro[1][2] = {{SRC + T, SRC + T + (v == 2 ? 8 : 64)}};
    readonly = (const uint64_t(*)[2])ro;
    nreadonly = 1;
    fn_case c = {names[v], in, sizeof in, T, 0, 0};
    const char *name = c.name;
    reloc_probes arcs = {.entry = true, .arcs = true};
    reloc_info info;
    uint8_t *out;
    reloc_plan *p = run(&c, v == 3 ? &arcs : NULL, DEST, NULL, 0, &info, &out);
    bool resolved = v != 4;
    int kept = v == 2 ? 2 : 3;
    CHECK(p && info.njump_tables == (resolved ? 1u : 0u) && info.leaves_to_original == !resolved,
          "%zu tables, leaves %d", info.njump_tables, info.leaves_to_original);
    for (int k = 0; p && resolved && k < 3; k++)
      CHECK((reloc_copy_offset(p, SRC + 0x12 + 3 * (uint64_t)k) >= 0) == (k < kept), "case %d %s decoded", k,
            k < kept ? "was not" : "was");
    CHECK(!p || reloc_copy_offset(p, SRC + 0x13) < 0, "the entry past the end was decoded");
    if (p && resolved)
      CHECK(guard_compares(p, out, info.copy_size, SRC + 0x09, 0, kept), "the guard does not compare with %d", kept);
    reloc_plan_free(p);
    free(out);
    readonly = NULL;
    nreadonly = 0;
  }
}

/* Where each index of the dispatch whose entry LOAD (movsxd rI, [rB+rX*4],
 * after a guard where it has one) reads a table of offsets, rB set by the
 * lea at LEA, sends in the copy: to the copy of CASES[k] for every k < N.
 * Returns the load's displacement in the copy (the table it reads, from the
 * one rB holds), or -1 when the lea or the load was not copied. */
static int64_t check_offsets_reach(const char *name, const reloc_plan *p, const uint8_t *out, size_t size,
                                   uint64_t hi, uint64_t lea, uint64_t load, const uint64_t *cases, size_t n) {
  int64_t at = reloc_copy_offset(p, lea), off = reloc_copy_offset(p, load);
  x64_insn l, m;
  if (at < 0 || off < 0 || !decode(out + at, 15, DEST + (uint64_t)at, &l) || !l.rip_relative ||
      !decode(out + off, 15, DEST + (uint64_t)off, &m)) {
    CHECK(0, "the lea at 0x%" PRIx64 " or the load at 0x%" PRIx64 " was not copied", lea, load);
    return -1;
  }
  for (int skip = 0; skip < 2 && m.mnemonic != ZYDIS_MNEMONIC_MOVSXD; skip++) { /* a guard: cmp; jae */
    off += m.len;
    if (!decode(out + off, 15, DEST + (uint64_t)off, &m)) break;
  }
  if (m.mnemonic != ZYDIS_MNEMONIC_MOVSXD) {
    CHECK(0, "no movsxd where the load at 0x%" PRIx64 " was copied", load);
    return -1;
  }
  uint64_t base = l.rip_target; /* what rB holds in the copy */
  for (size_t k = 0; k < n; k++) {
    uint64_t e = base + (uint64_t)m.op[1].disp + 4 * k;
    int32_t entry = 0;
    if (e >= DEST && e + 4 <= DEST + size) memcpy(&entry, out + (e - DEST), 4);
    uint64_t reach = follow(p, SRC, hi, out, DEST, size, base + (uint64_t)(int64_t)entry);
    CHECK(entry && reach == DEST + (uint64_t)reloc_copy_offset(p, cases[k]),
          "the load at 0x%" PRIx64 ", index %zu reaches 0x%" PRIx64, load, k, reach);
  }
  return m.op[1].disp;
}

/* Two dispatches through one table of offsets nothing bounds, each with a
 * lea of its own (Rust's enums whose niche gives the index: rustup's
 * regex_syntax ClassSetUnion::push, `cmp $0x110000,%ecx; cmovae %eax,%ecx`
 * and no compare of the index): each gets a copy of the table with its own
 * guard and escape to its own original load. */
static void test_table_guarded_twice(void) {
  static const uint8_t own[] = {
      0x8b, 0x07,                               /* 00: mov eax, [rdi] */
      0x85, 0xf6,                               /* 02: test esi, esi */
      0x74, 0x10,                               /* 04: je 0x16 */
      0x48, 0x8d, 0x15, 0x33, 0x00, 0x00, 0x00, /* 06: lea rdx, [rip+0x33] (T = 0x40) */
      0x48, 0x63, 0x04, 0x82,                   /* 0d: movsxd rax, dword [rdx+rax*4] */
      0x48, 0x01, 0xd0, 0xff, 0xe0,             /* 11: add rax, rdx; jmp rax */
      0x48, 0x8d, 0x0d, 0x23, 0x00, 0x00, 0x00, /* 16: lea rcx, [rip+0x23] */
      0x48, 0x63, 0x04, 0x81,                   /* 1d: movsxd rax, dword [rcx+rax*4] */
      0x48, 0x01, 0xc8, 0xff, 0xe0,             /* 21: add rax, rcx; jmp rax */
      0xb0, 0x01, 0xc3, 0xb0, 0x02, 0xc3, 0xb0, 0x03, 0xc3, /* 26, 29, 2c: cases */
      0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,
      0xe6, 0xff, 0xff, 0xff, 0xe9, 0xff, 0xff, 0xff, 0xec, 0xff, 0xff, 0xff, /* 40: T: 0x26, 0x29, 0x2c */
      0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, /* past the entries: offsets out of the code */
  };
  static const uint8_t shared[] = { /* one lea above both (rustup's toml_parser on_scalar) */
      /* (in both, T at 0x40: the bytes past the entries are offsets out of the code) */
      0x8b, 0x07,                               /* 00: mov eax, [rdi] */
      0x48, 0x8d, 0x15, 0x37, 0x00, 0x00, 0x00, /* 02: lea rdx, [rip+0x37] (T = 0x40) */
      0x85, 0xf6,                               /* 09: test esi, esi */
      0x74, 0x09,                               /* 0b: je 0x16 */
      0x48, 0x63, 0x0c, 0x82,                   /* 0d: movsxd rcx, dword [rdx+rax*4] */
      0x48, 0x01, 0xd1, 0xff, 0xe1,             /* 11: add rcx, rdx; jmp rcx */
      0xff, 0xc0,                               /* 16: inc eax */
      0x48, 0x63, 0x04, 0x82,                   /* 18: movsxd rax, dword [rdx+rax*4] */
      0x48, 0x01, 0xd0, 0xff, 0xe0,             /* 1c: add rax, rdx; jmp rax */
      0xb0, 0x01, 0xc3, 0xb0, 0x02, 0xc3, 0xb0, 0x03, 0xc3, /* 21, 24, 27: cases */
      0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,
      0xcc, 0xcc, 0xcc, 0xcc, 0xcc,       /* 2a: padding */
      0xe1, 0xff, 0xff, 0xff, 0xe4, 0xff, 0xff, 0xff, 0xe7, 0xff, 0xff, 0xff, /* 40: T: 0x21, 0x24, 0x27 */
      0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, /* past the entries */
  };
  static const uint64_t own_cases[3] = {SRC + 0x26, SRC + 0x29, SRC + 0x2c};
  static const uint64_t shared_cases[3] = {SRC + 0x21, SRC + 0x24, SRC + 0x27};
  for (int v = 0; v < 4; v++) {
    bool arcs = v & 1, one_lea = v & 2;
    static const char *const names[] = {"guarded jump table, two dispatches", "guarded jump table, two dispatches, arcs",
                                        "guarded jump table, two dispatches, one lea",
                                        "guarded jump table, two dispatches, one lea, arcs"};
    const char *name = names[v];
    fn_case c = one_lea ? CASE(name, shared, 0x2a, 0) : CASE(name, own, 0x2f, 0);
    uint64_t ro[1][2] = {{SRC + 0x40, SRC + c.code_size}};
    readonly = (const uint64_t(*)[2])ro;
    nreadonly = 1;
    reloc_probes probes = {.entry = true, .arcs = true};
    reloc_info info;
    uint8_t *out;
    reloc_plan *p = run(&c, arcs ? &probes : NULL, DEST, NULL, 0, &info, &out);
    CHECK(p && info.njump_tables == 2 && !info.leaves_to_original, "%zu tables, leaves %d", info.njump_tables,
          info.leaves_to_original);
    for (int d = 0; p && out && d < 2; d++) {
      uint64_t load = SRC + (one_lea ? (d ? 0x18 : 0x0d) : (d ? 0x1d : 0x0d));
      CHECK(guard_compares(p, out, info.copy_size, load, 0, 3), "dispatch %d: no guard comparing with 3", d);
      uint64_t lea = SRC + (one_lea ? 0x02 : d ? 0x16 : 0x06);
      check_offsets_reach(name, p, out, info.copy_size, SRC + c.fn_size, lea, load, one_lea ? shared_cases : own_cases,
                          3);
    }
    reloc_plan_free(p);
    free(out);
  }
  readonly = NULL;
  nreadonly = 0;
}

/* Ten guarded tables in one function, each with an entry past its end
 * that lands inside an instruction of a case (Rust's async state machines:
 * rustup's main closure has 89 open and guarded tables): each is cut there
 * in the decoding that meets it, with nothing to undo (the entry's first
 * instruction overlaps one decoded), not by decoding again, which a
 * function may do only MAX_CUT_ATTEMPTS times. */
static void test_table_guarded_many(void) {
  enum { N = 10, BASE = 0x80, D = 0x20, T = 0x200 };
  static uint8_t in[T + N * 16];
  memset(in, 0xcc, sizeof in);
  const uint8_t head[] = {0x8b, 0x07}; /* 00: mov eax, [rdi] */
  memcpy(in, head, sizeof head);
  for (int k = 0; k < N; k++) {
    uint32_t at = 2 + 9 * (uint32_t)k, to = BASE + D * (uint32_t)k;
    uint8_t *c = in + at; /* cmp esi, k; je dispatch k */
    c[0] = 0x83, c[1] = 0xfe, c[2] = (uint8_t)k, c[3] = 0x0f, c[4] = 0x84;
    int32_t rel = (int32_t)(to - (at + 9));
    memcpy(c + 5, &rel, 4);
    uint8_t *d = in + to;
    int32_t disp = (int32_t)(T + 16 * k - (to + 7));
    const uint8_t dispatch[] = {0x48, 0x8d, 0x15, 0, 0, 0, 0, /* lea rdx, [rip+Tk] */
                                0x48, 0x63, 0x04, 0x82,       /* movsxd rax, dword [rdx+rax*4] */
                                0x48, 0x01, 0xd0, 0xff, 0xe0, /* add rax, rdx; jmp rax */
                                0xb0, 0x01, 0xc3, 0xb0, 0x02, 0xc3}; /* +16, +19: cases */
    memcpy(d, dispatch, sizeof dispatch);
    memcpy(d + 3, &disp, 4);
    int32_t entries[3] = {(int32_t)(to + 16) - (T + 16 * k), (int32_t)(to + 19) - (T + 16 * k),
                          (int32_t)(to + 17) - (T + 16 * k)}; /* the third inside case 0's mov */
    memcpy(in + T + 16 * k, entries, sizeof entries);
  }
  in[2 + 9 * N] = 0xc3; /* ret */
  uint64_t ro[1][2] = {{SRC + T, SRC + sizeof in}};
  readonly = (const uint64_t(*)[2])ro;
  nreadonly = 1;
  const char *name = "ten guarded tables, each cut";
  fn_case c = {name, in, sizeof in, BASE + D * N, 0, 0};
  reloc_info info;
  uint8_t *out;
  reloc_plan *p = run(&c, NULL, DEST, NULL, 0, &info, &out);
  CHECK(p && info.njump_tables == N && !info.leaves_to_original, "%zu tables, leaves %d", info.njump_tables,
        info.leaves_to_original);
  for (int k = 0; p && out && k < N; k++) {
    uint64_t to = SRC + BASE + D * (uint64_t)k;
    CHECK(guard_compares(p, out, info.copy_size, to + 7, 0, 2), "dispatch %d: no guard comparing with 2", k);
    CHECK(reloc_copy_offset(p, to + 16) >= 0 && reloc_copy_offset(p, to + 19) >= 0, "dispatch %d: a case was not decoded",
          k);
  }
  reloc_plan_free(p);
  free(out);
  readonly = NULL;
  nreadonly = 0;
}

/* Two tables of offsets that only their byte index bounds, one after the
 * other (Debian's fdfind): the first's entries past its end are the
 * second's offsets read from the first's base, and one of them decodes as
 * an instruction that runs into the second's first case.  The first ends
 * where the second begins, so its cases are all decoded. */
static void test_table_open_back_to_back(void) {
  static const uint8_t in[] = {
      0x0f, 0xb6, 0x07,                         /* 00: movzx eax, byte [rdi] */
      0x48, 0x8d, 0x0d, 0x36, 0x00, 0x00, 0x00, /* 03: lea rcx, [rip+0x36] (TA = 0x40) */
      0x48, 0x63, 0x04, 0x81,                   /* 0a: movsxd rax, dword [rcx+rax*4] */
      0x48, 0x01, 0xc8, 0xff, 0xe0,             /* 0e: add rax, rcx; jmp rax */
      0x0f, 0xb6, 0x06,                         /* 13: movzx eax, byte [rsi] (case A0) */
      0x48, 0x8d, 0x15, 0x2b, 0x00, 0x00, 0x00, /* 16: lea rdx, [rip+0x2b] (TB = 0x48) */
      0x48, 0x63, 0x04, 0x82,                   /* 1d: movsxd rax, dword [rdx+rax*4] */
      0x48, 0x01, 0xd0, 0xff, 0xe0,             /* 21: add rax, rdx; jmp rax */
      0x31, 0xc0, 0xc3,                         /* 26: xor eax, eax; ret (case A1) */
      0x48, 0xb8, 0, 0, 0, 0, 0, 0,             /* 29: bytes no way reaches (a movabs into 0x31) */
      0xb0, 0x01, 0xc3,                         /* 31: mov al, 1; ret (case B0) */
      0xb0, 0x02, 0xc3,                         /* 34: mov al, 2; ret (case B1) */
      0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,       /* 37: padding */
      0xcc, 0xcc, 0xcc,
      0xd3, 0xff, 0xff, 0xff, 0xe6, 0xff, 0xff, 0xff, /* 40: TA: 0x13, 0x26 */
      0xe9, 0xff, 0xff, 0xff, 0xec, 0xff, 0xff, 0xff, /* 48: TB: 0x31, 0x34; from TA: 0x29, 0x2c */
  };
  const char *name = "two open tables back to back";
  uint64_t ro[1][2] = {{SRC + 0x40, SRC + sizeof in}};
  readonly = (const uint64_t(*)[2])ro;
  nreadonly = 1;
  fn_case c = CASE(name, in, 0x37, 0);
  reloc_info info;
  uint8_t *out;
  reloc_plan *p = run(&c, NULL, DEST, NULL, 0, &info, &out);
  CHECK(p && info.njump_tables == 2 && !info.leaves_to_original, "%zu tables, leaves %d", info.njump_tables,
        info.leaves_to_original);
  CHECK(p && reloc_copy_offset(p, SRC + 0x31) >= 0 && reloc_copy_offset(p, SRC + 0x34) >= 0,
        "the second table's cases were not decoded");
  CHECK(p && reloc_copy_offset(p, SRC + 0x29) < 0, "the first table's entry past its end was decoded");
  reloc_plan_free(p);
  free(out);
  readonly = NULL;
  nreadonly = 0;
}

/* A table of offsets that only its byte index bounds (gnulib's regex in
 * Debian's csplit and ptx: `movzbl 8(%rax), %eax; movslq (%rbx,%rax,4), %rax;
 * add %rbx, %rax; jmp *%rax`, gcc having proved fewer cases than 256): the
 * copy's table keeps all 256 entries, its cases are decoded in order up to
 * the first entry that does not decode as code of the function (past the
 * end: here another table's offset that lands inside case 0's `mov al, 1`),
 * which and all after it send to the original's targets.  Variant 2: the
 * read-only bytes end 16 bytes past the table (a small program's .rodata,
 * the last of its segment): the entries past them are not read. */
static void test_table_open(void) {
  enum { T = 0x20, N = 256 };
  for (int garbage = 0; garbage <= 2; garbage++) {
    static uint8_t in[T + 4 * N];
    static const uint8_t code[] = {
        0x0f, 0xb6, 0x07,                    /* 00: movzx eax, byte [rdi] */
        0x48, 0x8d, 0x15, T - 0x0a, 0, 0, 0, /* 03: lea rdx, [rip+T] */
        0x48, 0x63, 0x04, 0x82,              /* 0a: movsxd rax, dword [rdx+rax*4] */
        0x48, 0x01, 0xd0, 0xff, 0xe0,        /* 0e: add rax, rdx; jmp rax */
        0xb0, 0x01, 0xc3, 0xb0, 0x02, 0xc3, 0xb0, 0x03, 0xc3, /* 13, 16, 19: cases */
    };
    memset(in, 0xcc, sizeof in); /* past the cases: offsets that land out of the code */
    memcpy(in, code, sizeof code);
    int32_t entries[4] = {0x13 - T, 0x16 - T, 0x19 - T, 0x14 - T};
    memcpy(in + T, entries, (garbage == 1 ? 4 : 3) * sizeof *entries);
    uint64_t ro[1][2] = {{SRC + T, SRC + T + (garbage == 2 ? 16 : 4 * N)}};
    readonly = (const uint64_t(*)[2])ro;
    nreadonly = 1;
    fn_case c = {garbage == 1   ? "open jump table, an entry past its end inside an instruction"
                 : garbage == 2 ? "open jump table at the end of the read-only bytes"
                                : "open jump table",
                 in, sizeof in, T, 0, 0};
    const char *name = c.name;
    reloc_info info;
    uint8_t *out;
    reloc_plan *p = run(&c, NULL, DEST, NULL, 0, &info, &out);
    CHECK(p && info.njump_tables == 1 && !info.leaves_to_original && info.copy_size >= 4 * N,
          "%zu tables, leaves %d, a copy of %zu bytes", info.njump_tables, info.leaves_to_original, info.copy_size);
    for (int k = 0; p && k < 3; k++)
      CHECK(reloc_copy_offset(p, SRC + 0x13 + 3 * (uint64_t)k) >= 0, "case %d was not decoded", k);
    CHECK(!p || reloc_copy_offset(p, SRC + 0x14) < 0, "the entry past the end was decoded");
    reloc_plan_free(p);
    free(out);
    readonly = NULL;
    nreadonly = 0;
  }
}

/* `jmp [T+rdi*8]` that nothing bounds (CPython's dispatches whose default
 * case is unreachable): the table is read to its first entry that is no
 * code (a 0 here) and resolved.  When an entry read past the real end lands
 * inside an instruction (here inside case 0's `mov al, 1`), decoding starts
 * again without the table: unresolved, not a failed plan. */
static void test_table_guessed(void) {
  enum { T = 0x18 };
  for (int garbage = 0; garbage <= 1; garbage++) {
    static uint8_t in[T + 32];
    static const uint8_t code[] = {
        0xff, 0x24, 0xfd, LE32(SRC + T),                /* 00: jmp [rdi*8+T] */
        0xb0, 0x01, 0xc3, 0xb0, 0x02, 0xc3, 0xb0, 0x03, 0xc3, /* 07, 0a, 0d: cases */
    };
    memset(in, 0xcc, sizeof in);
    memcpy(in, code, sizeof code);
    uint64_t entries[4] = {SRC + 0x07, SRC + 0x0a, SRC + 0x0d, garbage ? SRC + 0x08 : 0};
    memcpy(in + T, entries, sizeof entries);
    uint64_t ro[1][2] = {{SRC + T, SRC + T + 32}};
    readonly = (const uint64_t(*)[2])ro;
    nreadonly = 1;
    fn_case c = {garbage ? "jump table guessed, read past its end" : "jump table guessed", in, sizeof in, T, 0, 0};
    const char *name = c.name;
    reloc_info info;
    uint8_t *out;
    reloc_plan *p = run(&c, NULL, DEST, NULL, 0, &info, &out);
    CHECK(p && info.njump_tables == (garbage ? 0u : 1u) && info.leaves_to_original == (bool)garbage,
          "%zu tables, leaves %d", info.njump_tables, info.leaves_to_original);
    for (int k = 0; p && !garbage && k < 3; k++)
      CHECK(reloc_copy_offset(p, SRC + 0x07 + 3 * (uint64_t)k) >= 0, "case %d was not decoded", k);
    reloc_plan_free(p);
    free(out);
    readonly = NULL;
    nreadonly = 0;
  }
}

/* The bound compares the memory the index is loaded from, addressed through
 * another register (xz's rc_encode: `cmpl $2, 0x30(%rax,%rdx,4); lea
 * 0xc(%rdx), %rcx; ja; mov (%rax,%rcx,4), %ecx`): resolved.  Not when the
 * lea moves the address off the compared one. */
static void test_table_memory_through_lea(void) {
  enum { T = 0x28 };
  static const uint8_t code[T] = {
      0x4c, 0x8d, 0x0d, T - 7, 0, 0, 0, /* 00: lea r9, [rip+T] */
      0x83, 0x7c, 0x90, 0x30, 0x02,     /* 07: cmp dword [rax+rdx*4+0x30], 2 */
      0x48, 0x8d, 0x4a, 0x0c,           /* 0c: lea rcx, [rdx+0xc] */
      0x77, 0x10,                       /* 10: ja 22 */
      0x8b, 0x0c, 0x88,                 /* 12: mov ecx, [rax+rcx*4] */
      0x49, 0x63, 0x0c, 0x89,           /* 15: movsxd rcx, dword [r9+rcx*4] */
      0x4c, 0x01, 0xc9,                 /* 19: add rcx, r9 */
      0xff, 0xe1,                       /* 1c: jmp rcx */
      0xb0, 0x01, 0xc3, 0x90,           /* 1e: case 0; 21: nop */
      0x31, 0xc0, 0xc3,                 /* 22: default, case 2 */
      0xb0, 0x02, 0xc3,                 /* 25: case 1 */
  };
  static uint8_t in[T + 12];
  for (int v = 0; v < 2; v++) {
    memcpy(in, code, T);
    if (v == 1) in[0x0f] = 0x0d; /* lea rcx, [rdx+0xd]: [rax+rdx*4+0x34] is loaded */
    static const int32_t entries[3] = {0x1e - T, 0x25 - T, 0x22 - T};
    memcpy(in + T, entries, sizeof entries);
    const char *name = v ? "jump table, memory bound, the load off the compared address"
                         : "jump table, memory bound, the load addressed through a lea";
    fn_case c = {name, in, sizeof in, T, 0, 0};
    reloc_info info;
    uint8_t *out;
    reloc_plan *p = run(&c, NULL, DEST, NULL, 0, &info, &out);
    CHECK(p && info.njump_tables == (v ? 0u : 1u) && info.leaves_to_original == (v == 1),
          "%zu tables, leaves %d", info.njump_tables, info.leaves_to_original);
    if (!v) CHECK(p && reloc_copy_offset(p, SRC + 0x25) >= 0, "case 1 was not decoded");
    reloc_plan_free(p);
    free(out);
  }
}

static void test_table_absolute(void) {
  static const uint8_t in[] = {
      0x83, 0xff, 0x02,                               /* 00: cmp edi, 2 */
      0x77, 0x13,                                     /* 03: ja 18 */
      0x89, 0xff,                                     /* 05: mov edi, edi */
      0xff, 0x24, 0xfd, 0x20, 0x00, 0x40, 0x00,       /* 07: jmp [rdi*8+0x400020] */
      0xb8, 0x01, 0x00, 0x00, 0x00,                   /* 0e: mov eax, 1   case 0 */
      0xc3,                                           /* 13: ret */
      0x31, 0xc0,                                     /* 14: xor eax, eax case 1 */
      0xff, 0xc0,                                     /* 16: inc eax      case 2 */
      0xc3,                                           /* 18: ret          default */
      0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,       /* 19: padding (hi = 19) */
      0x0e, 0x00, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, /* 20: T[0] = 0x40000e */
      0x14, 0x00, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, /* 28: T[1] = 0x400014 */
      0x16, 0x00, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, /* 30: T[2] = 0x400016 */
  };
  static const uint8_t want[] = {
      0x83, 0xff, 0x02,                               /* 00: cmp edi, 2 */
      0x77, 0x13,                                     /* 03: ja copy of 18 */
      0x89, 0xff,                                     /* 05: mov edi, edi */
      0xff, 0x24, 0xfd, 0x20, 0x00, 0x40, 0x10,       /* 07: jmp [rdi*8+DEST+0x20] */
      0xb8, 0x01, 0x00, 0x00, 0x00,                   /* 0e: mov eax, 1 */
      0xc3,                                           /* 13: ret */
      0x31, 0xc0,                                     /* 14: xor eax, eax */
      0xff, 0xc0,                                     /* 16: inc eax */
      0xc3,                                           /* 18: ret */
      0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,       /* 19: align 8 */
      0x0e, 0x00, 0x40, 0x10, 0x00, 0x00, 0x00, 0x00, /* 20: DEST+0x0e */
      0x14, 0x00, 0x40, 0x10, 0x00, 0x00, 0x00, 0x00, /* 28: DEST+0x14 */
      0x16, 0x00, 0x40, 0x10, 0x00, 0x00, 0x00, 0x00, /* 30: DEST+0x16 */
  };
  const char *name = "jump table, absolute";
  fn_case c = CASE(name, in, 0x19, 0);
  reloc_info info;
  expect_case(&c, NULL, want, sizeof want, &info);
  CHECK(info.njump_tables == 1 && !info.leaves_to_original, "%zu tables, leaves %d",
        info.njump_tables, info.leaves_to_original);
  CHECK(info.min_inner_target == 0xe, "min_inner_target %" PRIu64, info.min_inner_target);

  /* the new table's address must fit a sign-extended disp32 */
  reloc_function_desc d = desc(&c);
  reloc_probes none = {0};
  reloc_plan *p;
  if (reloc_plan_function(&d, &none, &p, &info) == LP_OK) {
    uint8_t *out = malloc(info.copy_size);
    CHECK(reloc_emit(p, 0x90000000ull, out, COUNTER, NULL, NULL) == LP_ERR, "emit above 2 GiB did not fail");
    CHECK(strstr(lp_error(), "reach") != NULL, "message: %s", lp_error());
    free(out);
    reloc_plan_free(p);
  }

  /* an entry leaving the function (a switch's case in FUNC.cold): the table is
   * still resolved, and the copy's entry keeps the original target */
  uint8_t cold[sizeof in];
  memcpy(cold, in, sizeof in);
  cold[0x30] = 0x00, cold[0x31] = 0x10; /* T[2] = 0x401000 */
  fn_case c2 = {"jump table, entry outside", cold, sizeof cold, 0x19, 0, 0};
  uint8_t *out;
  p = run(&c2, NULL, DEST, NULL, 0, &info, &out);
  name = c2.name;
  CHECK(info.njump_tables == 1 && !info.leaves_to_original, "%zu tables, leaves %d",
        info.njump_tables, info.leaves_to_original);
  if (out && info.copy_size >= 0x38) {
    uint64_t kept, inner;
    memcpy(&kept, out + 0x30, sizeof kept);
    memcpy(&inner, out + 0x20, sizeof inner);
    CHECK(kept == 0x401000, "entry outside became 0x%" PRIx64, kept);
    CHECK(inner == DEST + 0x0e, "entry inside became 0x%" PRIx64, inner);
  }
  reloc_plan_free(p);
  free(out);
}

/* Real gcc 12 output (objdump -d -M intel) for
 *   long classify(unsigned k) {
 *     long r;
 *     switch (k) {
 *     case 0: r = c_0(k); break;  …  case 4: r = c_4(k); break;
 *     default: r = c_default(k); break;
 *     }
 *     return r + 1;
 *   }
 * linked with -nostdlib -Wl,-Ttext=0x400000,--section-start=.rodata=0x400100
 * (the table at 0x100, c_K at 0x401000 + 0x10*K, c_default at 0x401050). */

/* Follows a copied table to each case: the instructions at REFS (original
 * offsets) must all name one table inside the copy, whose entry k reaches the
 * copy of CASES[k]. */
static void check_copied_table(const char *name, const reloc_plan *p, const uint8_t *out,
                               size_t copy_size, const size_t *refs, size_t nrefs, bool abs64,
                               const uint64_t *cases, size_t ncases) {
  uint64_t table = 0;
  for (size_t r = 0; r < nrefs; r++) {
    int64_t off = reloc_copy_offset(p, SRC + refs[r]);
    x64_insn n;
    if (off < 0 || !decode(out + off, copy_size - (size_t)off, DEST + (uint64_t)off, &n)) {
      CHECK(0, "no copy of the table reference at 0x%zx", refs[r]);
      return;
    }
    uint64_t t = n.rip_relative ? n.rip_target
                 : n.op[0].type == X64_OP_MEM ? (uint64_t)n.op[0].disp
                                              : (uint64_t)n.op[1].disp;
    CHECK(r == 0 || t == table, "references name 0x%" PRIx64 " and 0x%" PRIx64, table, t);
    table = t;
  }
  size_t esize = abs64 ? 8 : 4;
  if (table < DEST || table - DEST + ncases * esize > copy_size || (table - DEST) % esize) {
    CHECK(0, "table at 0x%" PRIx64 " is not in the copy", table);
    return;
  }
  for (size_t k = 0; k < ncases; k++) {
    const uint8_t *e = out + (table - DEST) + esize * k;
    uint64_t v = 0;
    for (size_t b = 0; b < esize; b++) v |= (uint64_t)e[b] << (8 * b);
    uint64_t to = abs64 ? v : table + (uint64_t)(int64_t)(int32_t)v;
    uint64_t want = DEST + (uint64_t)reloc_copy_offset(p, SRC + cases[k]);
    CHECK(to == want, "entry %zu reaches 0x%" PRIx64 ", want 0x%" PRIx64, k, to, want);
  }
}

/* Plans and emits IN; when WANT, checks that its one table (NCASES distinct
 * cases, named by the instructions at REFS) was recognised and rewritten, else
 * that it was not (the jmp left unresolved). */
static void table_case(const char *name, const uint8_t *in, size_t size, size_t fn_size, bool want,
                       const size_t *refs, size_t nrefs, bool abs64, const uint64_t *cases,
                       size_t ncases) {
  fn_case c = {name, in, size, fn_size, 0, 0};
  reloc_info info;
  uint8_t *out;
  reloc_plan *p = run(&c, NULL, DEST, NULL, 0, &info, &out);
  if (p && out) {
    size_t tables = 0;
    const reloc_edge *e = reloc_edges(p);
    for (size_t k = 0; k < info.nedges; k++) tables += e[k].kind == RELOC_EDGE_TABLE;
    if (want) {
      CHECK(info.njump_tables == 1 && !info.leaves_to_original && tables == ncases,
            "%zu tables, leaves %d, %zu table edges", info.njump_tables, info.leaves_to_original,
            tables);
      check_copied_table(name, p, out, info.copy_size, refs, nrefs, abs64, cases, ncases);
    } else {
      CHECK(info.njump_tables == 0 && info.leaves_to_original && tables == 0,
            "%zu tables, leaves %d: recognised", info.njump_tables, info.leaves_to_original);
    }
  }
  reloc_plan_free(p);
  free(out);
}

/* gcc -O2 -fno-pie: `mov edi, edi` (zero-extends the index in place, writes
 * no flags) between the compare and the ja. */
static void test_table_gcc_o2_nopie(void) {
  static const uint8_t in[0x128] = {
      0x48, 0x83, 0xec, 0x08,                   /* 00: sub rsp, 0x8 */
      0x83, 0xff, 0x04,                         /* 04: cmp edi, 0x4 */
      0x89, 0xff,                               /* 07: mov edi, edi */
      0x0f, 0x87, 0x7c, 0x00, 0x00, 0x00,       /* 09: ja 8b */
      0xff, 0x24, 0xfd, 0x00, 0x01, 0x40, 0x00, /* 0f: jmp qword [rdi*8+0x400100] */
      0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00,       /* 16: cs nop word [rax+rax*1+0x0] */
      0x00, 0x00, 0x00, 0x00,
      0xbf, 0x03, 0x00, 0x00, 0x00,             /* 20: mov edi, 0x3   case 3 */
      0xe8, 0x06, 0x10, 0x00, 0x00,             /* 25: call 0x401030 */
      0x48, 0x83, 0xc4, 0x08,                   /* 2a: add rsp, 0x8 */
      0x48, 0x83, 0xc0, 0x01,                   /* 2e: add rax, 0x1 */
      0xc3,                                     /* 32: ret */
      0x0f, 0x1f, 0x44, 0x00, 0x00,             /* 33: nop dword [rax+rax*1+0x0] */
      0xbf, 0x04, 0x00, 0x00, 0x00,             /* 38: mov edi, 0x4   case 4 */
      0xe8, 0xfe, 0x0f, 0x00, 0x00,             /* 3d: call 0x401040 */
      0x48, 0x83, 0xc4, 0x08,                   /* 42: add rsp, 0x8 */
      0x48, 0x83, 0xc0, 0x01,                   /* 46: add rax, 0x1 */
      0xc3,                                     /* 4a: ret */
      0x0f, 0x1f, 0x44, 0x00, 0x00,             /* 4b: nop dword [rax+rax*1+0x0] */
      0x31, 0xff,                               /* 50: xor edi, edi   case 0 */
      0xe8, 0xa9, 0x0f, 0x00, 0x00,             /* 52: call 0x401000 */
      0x48, 0x83, 0xc4, 0x08,                   /* 57: add rsp, 0x8 */
      0x48, 0x83, 0xc0, 0x01,                   /* 5b: add rax, 0x1 */
      0xc3,                                     /* 5f: ret */
      0xbf, 0x01, 0x00, 0x00, 0x00,             /* 60: mov edi, 0x1   case 1 */
      0xe8, 0xa6, 0x0f, 0x00, 0x00,             /* 65: call 0x401010 */
      0x48, 0x83, 0xc4, 0x08,                   /* 6a: add rsp, 0x8 */
      0x48, 0x83, 0xc0, 0x01,                   /* 6e: add rax, 0x1 */
      0xc3,                                     /* 72: ret */
      0x0f, 0x1f, 0x44, 0x00, 0x00,             /* 73: nop dword [rax+rax*1+0x0] */
      0xbf, 0x02, 0x00, 0x00, 0x00,             /* 78: mov edi, 0x2   case 2 */
      0xe8, 0x9e, 0x0f, 0x00, 0x00,             /* 7d: call 0x401020 */
      0x48, 0x83, 0xc4, 0x08,                   /* 82: add rsp, 0x8 */
      0x48, 0x83, 0xc0, 0x01,                   /* 86: add rax, 0x1 */
      0xc3,                                     /* 8a: ret */
      0xe8, 0xc0, 0x0f, 0x00, 0x00,             /* 8b: call 0x401050  default */
      0x48, 0x83, 0xc4, 0x08,                   /* 90: add rsp, 0x8 */
      0x48, 0x83, 0xc0, 0x01,                   /* 94: add rax, 0x1 */
      0xc3,                                     /* 98: ret            (hi = 99) */
      [0x100] = 0x50, 0x00, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, /* 100: T[0] */
      0x60, 0x00, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, /* 108: T[1] */
      0x78, 0x00, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, /* 110: T[2] */
      0x20, 0x00, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, /* 118: T[3] */
      0x38, 0x00, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, /* 120: T[4] */
  };
  static const size_t refs[] = {0x0f};
  static const uint64_t cases[] = {0x50, 0x60, 0x78, 0x20, 0x38};
  table_case("jump table, gcc -O2 non-PIE", in, sizeof in, 0x99, true, refs, 1, true, cases, 5);

  uint8_t v[sizeof in];
  memcpy(v, in, sizeof in);
  v[0x07] = 0x85; /* 07: test edi, edi: the ja tests its flags, not the compare's */
  table_case("jump table, flags written between cmp and ja", v, sizeof v, 0x99, false, NULL, 0,
             true, NULL, 0);
  v[0x07] = 0x89, v[0x08] = 0xf7; /* 07: mov edi, esi: the index is not what was compared */
  table_case("jump table, index written between cmp and ja", v, sizeof v, 0x99, false, NULL, 0,
             true, NULL, 0);
}

/* gcc -O0 -fno-pie: the bound checked on the index's frame slot, the index
 * reloaded from it, the entry loaded by a mov of its own (which names the
 * table) and then jmp rax. */
static void test_table_gcc_o0_nopie(void) {
  static const uint8_t in[0x128] = {
      0x55,                                           /* 00: push rbp */
      0x48, 0x89, 0xe5,                               /* 01: mov rbp, rsp */
      0x48, 0x83, 0xec, 0x20,                         /* 04: sub rsp, 0x20 */
      0x89, 0x7d, 0xec,                               /* 08: mov dword [rbp-0x14], edi */
      0x83, 0x7d, 0xec, 0x04,                         /* 0b: cmp dword [rbp-0x14], 0x4 */
      0x77, 0x62,                                     /* 0f: ja 73 */
      0x8b, 0x45, 0xec,                               /* 11: mov eax, dword [rbp-0x14] */
      0x48, 0x8b, 0x04, 0xc5, 0x00, 0x01, 0x40, 0x00, /* 14: mov rax, qword [rax*8+0x400100] */
      0xff, 0xe0,                                     /* 1c: jmp rax */
      0x8b, 0x45, 0xec,                               /* 1e: mov eax, dword [rbp-0x14] case 0 */
      0x48, 0x89, 0xc7,                               /* 21: mov rdi, rax */
      0xe8, 0xd7, 0x0f, 0x00, 0x00,                   /* 24: call 0x401000 */
      0x48, 0x89, 0x45, 0xf8,                         /* 29: mov qword [rbp-0x8], rax */
      0xeb, 0x54,                                     /* 2d: jmp 83 */
      0x8b, 0x45, 0xec,                               /* 2f: mov eax, dword [rbp-0x14] case 1 */
      0x48, 0x89, 0xc7,                               /* 32: mov rdi, rax */
      0xe8, 0xd6, 0x0f, 0x00, 0x00,                   /* 35: call 0x401010 */
      0x48, 0x89, 0x45, 0xf8,                         /* 3a: mov qword [rbp-0x8], rax */
      0xeb, 0x43,                                     /* 3e: jmp 83 */
      0x8b, 0x45, 0xec,                               /* 40: mov eax, dword [rbp-0x14] case 2 */
      0x48, 0x89, 0xc7,                               /* 43: mov rdi, rax */
      0xe8, 0xd5, 0x0f, 0x00, 0x00,                   /* 46: call 0x401020 */
      0x48, 0x89, 0x45, 0xf8,                         /* 4b: mov qword [rbp-0x8], rax */
      0xeb, 0x32,                                     /* 4f: jmp 83 */
      0x8b, 0x45, 0xec,                               /* 51: mov eax, dword [rbp-0x14] case 3 */
      0x48, 0x89, 0xc7,                               /* 54: mov rdi, rax */
      0xe8, 0xd4, 0x0f, 0x00, 0x00,                   /* 57: call 0x401030 */
      0x48, 0x89, 0x45, 0xf8,                         /* 5c: mov qword [rbp-0x8], rax */
      0xeb, 0x21,                                     /* 60: jmp 83 */
      0x8b, 0x45, 0xec,                               /* 62: mov eax, dword [rbp-0x14] case 4 */
      0x48, 0x89, 0xc7,                               /* 65: mov rdi, rax */
      0xe8, 0xd3, 0x0f, 0x00, 0x00,                   /* 68: call 0x401040 */
      0x48, 0x89, 0x45, 0xf8,                         /* 6d: mov qword [rbp-0x8], rax */
      0xeb, 0x10,                                     /* 71: jmp 83 */
      0x8b, 0x45, 0xec,                               /* 73: mov eax, dword [rbp-0x14] default */
      0x48, 0x89, 0xc7,                               /* 76: mov rdi, rax */
      0xe8, 0xd2, 0x0f, 0x00, 0x00,                   /* 79: call 0x401050 */
      0x48, 0x89, 0x45, 0xf8,                         /* 7e: mov qword [rbp-0x8], rax */
      0x90,                                           /* 82: nop */
      0x48, 0x8b, 0x45, 0xf8,                         /* 83: mov rax, qword [rbp-0x8] */
      0x48, 0x83, 0xc0, 0x01,                         /* 87: add rax, 0x1 */
      0xc9,                                           /* 8b: leave */
      0xc3,                                           /* 8c: ret (hi = 8d) */
      [0x100] = 0x1e, 0x00, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, /* 100: T[0] */
      0x2f, 0x00, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, /* 108: T[1] */
      0x40, 0x00, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, /* 110: T[2] */
      0x51, 0x00, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, /* 118: T[3] */
      0x62, 0x00, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, /* 120: T[4] */
  };
  static const size_t refs[] = {0x14};
  static const uint64_t cases[] = {0x1e, 0x2f, 0x40, 0x51, 0x62};
  table_case("jump table, gcc -O0 non-PIE", in, sizeof in, 0x8d, true, refs, 1, true, cases, 5);

  uint8_t v[sizeof in];
  memcpy(v, in, sizeof in);
  v[0x13] = 0xe8; /* 11: mov eax, dword [rbp-0x18]: not the slot compared */
  table_case("jump table, index from another slot", v, sizeof v, 0x8d, false, NULL, 0, true, NULL,
             0);
  memcpy(v, in, sizeof in);
  v[0x0f] = 0x73; /* 0f: jae 73: four entries */
  table_case("jump table, gcc -O0 non-PIE, jae", v, sizeof v, 0x8d, true, refs, 1, true, cases, 4);
}

/* gcc -O0 PIC (-fpie): the bound on the frame slot, the table's address
 * loaded twice (both leas name the copy's table), the entry loaded into eax
 * from [rdx+rax] and sign-extended by cdqe. */
static void test_table_gcc_o0_pic(void) {
  static const uint8_t in[0x114] = {
      0x55,                                           /* 00: push rbp */
      0x48, 0x89, 0xe5,                               /* 01: mov rbp, rsp */
      0x48, 0x83, 0xec, 0x20,                         /* 04: sub rsp, 0x20 */
      0x89, 0x7d, 0xec,                               /* 08: mov dword [rbp-0x14], edi */
      0x83, 0x7d, 0xec, 0x04,                         /* 0b: cmp dword [rbp-0x14], 0x4 */
      0x77, 0x78,                                     /* 0f: ja 89 */
      0x8b, 0x45, 0xec,                               /* 11: mov eax, dword [rbp-0x14] */
      0x48, 0x8d, 0x14, 0x85, 0x00, 0x00, 0x00, 0x00, /* 14: lea rdx, [rax*4+0x0] */
      0x48, 0x8d, 0x05, 0xdd, 0x00, 0x00, 0x00,       /* 1c: lea rax, [rip+0xdd] (T = 100) */
      0x8b, 0x04, 0x02,                               /* 23: mov eax, dword [rdx+rax*1] */
      0x48, 0x98,                                     /* 26: cdqe */
      0x48, 0x8d, 0x15, 0xd1, 0x00, 0x00, 0x00,       /* 28: lea rdx, [rip+0xd1] (T) */
      0x48, 0x01, 0xd0,                               /* 2f: add rax, rdx */
      0xff, 0xe0,                                     /* 32: jmp rax */
      0x8b, 0x45, 0xec,                               /* 34: mov eax, dword [rbp-0x14] case 0 */
      0x48, 0x89, 0xc7,                               /* 37: mov rdi, rax */
      0xe8, 0xc1, 0x0f, 0x00, 0x00,                   /* 3a: call 0x401000 */
      0x48, 0x89, 0x45, 0xf8,                         /* 3f: mov qword [rbp-0x8], rax */
      0xeb, 0x54,                                     /* 43: jmp 99 */
      0x8b, 0x45, 0xec,                               /* 45: mov eax, dword [rbp-0x14] case 1 */
      0x48, 0x89, 0xc7,                               /* 48: mov rdi, rax */
      0xe8, 0xc0, 0x0f, 0x00, 0x00,                   /* 4b: call 0x401010 */
      0x48, 0x89, 0x45, 0xf8,                         /* 50: mov qword [rbp-0x8], rax */
      0xeb, 0x43,                                     /* 54: jmp 99 */
      0x8b, 0x45, 0xec,                               /* 56: mov eax, dword [rbp-0x14] case 2 */
      0x48, 0x89, 0xc7,                               /* 59: mov rdi, rax */
      0xe8, 0xbf, 0x0f, 0x00, 0x00,                   /* 5c: call 0x401020 */
      0x48, 0x89, 0x45, 0xf8,                         /* 61: mov qword [rbp-0x8], rax */
      0xeb, 0x32,                                     /* 65: jmp 99 */
      0x8b, 0x45, 0xec,                               /* 67: mov eax, dword [rbp-0x14] case 3 */
      0x48, 0x89, 0xc7,                               /* 6a: mov rdi, rax */
      0xe8, 0xbe, 0x0f, 0x00, 0x00,                   /* 6d: call 0x401030 */
      0x48, 0x89, 0x45, 0xf8,                         /* 72: mov qword [rbp-0x8], rax */
      0xeb, 0x21,                                     /* 76: jmp 99 */
      0x8b, 0x45, 0xec,                               /* 78: mov eax, dword [rbp-0x14] case 4 */
      0x48, 0x89, 0xc7,                               /* 7b: mov rdi, rax */
      0xe8, 0xbd, 0x0f, 0x00, 0x00,                   /* 7e: call 0x401040 */
      0x48, 0x89, 0x45, 0xf8,                         /* 83: mov qword [rbp-0x8], rax */
      0xeb, 0x10,                                     /* 87: jmp 99 */
      0x8b, 0x45, 0xec,                               /* 89: mov eax, dword [rbp-0x14] default */
      0x48, 0x89, 0xc7,                               /* 8c: mov rdi, rax */
      0xe8, 0xbc, 0x0f, 0x00, 0x00,                   /* 8f: call 0x401050 */
      0x48, 0x89, 0x45, 0xf8,                         /* 94: mov qword [rbp-0x8], rax */
      0x90,                                           /* 98: nop */
      0x48, 0x8b, 0x45, 0xf8,                         /* 99: mov rax, qword [rbp-0x8] */
      0x48, 0x83, 0xc0, 0x01,                         /* 9d: add rax, 0x1 */
      0xc9,                                           /* a1: leave */
      0xc3,                                           /* a2: ret (hi = a3) */
      [0x100] = 0x34, 0xff, 0xff, 0xff, /* 100: T[0] */
      0x45, 0xff, 0xff, 0xff, /* 104: T[1] */
      0x56, 0xff, 0xff, 0xff, /* 108: T[2] */
      0x67, 0xff, 0xff, 0xff, /* 10c: T[3] */
      0x78, 0xff, 0xff, 0xff, /* 110: T[4] */
  };
  static const size_t refs[] = {0x1c, 0x28};
  static const uint64_t cases[] = {0x34, 0x45, 0x56, 0x67, 0x78};
  table_case("jump table, gcc -O0 PIC", in, sizeof in, 0xa3, true, refs, 2, false, cases, 5);

  uint8_t v[sizeof in];
  memcpy(v, in, sizeof in);
  v[0x2b] = 0xd5; /* 28: lea rdx, [rip+0xd5]: another address than the entries' */
  table_case("jump table, two tables", v, sizeof v, 0xa3, false, NULL, 0, false, NULL, 0);
  memcpy(v, in, sizeof in);
  v[0x26] = 0x66, v[0x27] = 0x90; /* 26: nop instead of cdqe: the entry is not sign-extended */
  table_case("jump table, entry not sign-extended", v, sizeof v, 0xa3, false, NULL, 0, false, NULL,
             0);

  /* no bound (the default case unreachable: gcc drops the compare at -O0
   * too): guarded, `cmp rdx, 4 * 5` on the index times 4 before the load.
   * The image reaches the callees (a case decoded from a table's entry must
   * call into it: reloc_function.c, plausible) */
  static uint8_t g[0x1100];
  memcpy(g, in, sizeof in);
  memcpy(g + 0x0b, "\x66\x0f\x1f\x44\x00\x00", 6); /* 0b: nopw [rax+rax] for the cmp and the ja */
  uint64_t ro[1][2] = {{SRC + 0x100, SRC + 0x114}};
  readonly = (const uint64_t(*)[2])ro;
  nreadonly = 1;
  table_case("jump table, gcc -O0 PIC, guarded", g, sizeof g, 0xa3, true, refs, 2, false, cases, 5);
  const char *name = "jump table, gcc -O0 PIC, guarded";
  fn_case c = {name, g, sizeof g, 0xa3, 0, 0};
  reloc_info info;
  uint8_t *out;
  reloc_plan *p = run(&c, NULL, DEST, NULL, 0, &info, &out);
  CHECK(guard_compares(p, out, info.copy_size, SRC + 0x23, ZYDIS_REGISTER_RDX, 4 * 5),
        "the guard does not compare rdx with 20");
  reloc_plan_free(p);
  free(out);
  readonly = NULL;
  nreadonly = 0;
}

/* A table whose base is loaded twice: at the top, and again after a call in
 * a case that loops back (gcc reloads a base held in a caller-saved register).
 * Both loads must name the copy's table, or the path through the second one
 * would dispatch through the original table into the original body. */
static void test_table_loaded_twice(void) {
  static const uint8_t in[] = {
      0x4c, 0x8d, 0x15, 0x29, 0x00, 0x00, 0x00, /* 00: lea r10, [rip+0x29] (T = 0x30) */
      0x83, 0xff, 0x02,                         /* 07: cmp edi, 2 */
      0x77, 0x1d,                               /* 0a: ja 0x29 (default) */
      0x49, 0x63, 0x14, 0xba,                   /* 0c: movsxd rdx, dword [r10+rdi*4] */
      0x4c, 0x01, 0xd2,                         /* 10: add rdx, r10 */
      0xff, 0xe2,                               /* 13: jmp rdx */
      0xe8, 0xe6, 0x0f, 0x00, 0x00,             /* 15: call SRC+0x1000 (case 0) */
      0x4c, 0x8d, 0x15, 0x0f, 0x00, 0x00, 0x00, /* 1a: lea r10, [rip+0xf] (T again) */
      0xeb, 0xe4,                               /* 21: jmp 0x07 */
      0xb8, 0x01, 0x00, 0x00, 0x00,             /* 23: mov eax, 1 (case 1) */
      0xc3,                                     /* 28: ret */
      0x31, 0xc0,                               /* 29: xor eax, eax (case 2, default) */
      0xc3,                                     /* 2b: ret */
      0xcc, 0xcc, 0xcc, 0xcc,                   /* 2c: padding */
      0xe5, 0xff, 0xff, 0xff,                   /* 30: T[0] = 0x15 - 0x30 */
      0xf3, 0xff, 0xff, 0xff,                   /* 34: T[1] = 0x23 - 0x30 */
      0xf9, 0xff, 0xff, 0xff,                   /* 38: T[2] = 0x29 - 0x30 */
  };
  const char *name = "table loaded twice";
  fn_case c = CASE(name, in, 0x2c, 0);
  reloc_info info;
  uint8_t *out;
  reloc_plan *p = run(&c, NULL, DEST, NULL, 0, &info, &out);
  CHECK(info.njump_tables == 1 && !info.leaves_to_original, "%zu tables, leaves %d", info.njump_tables,
        info.leaves_to_original);
  uint64_t tables[2] = {0, 0};
  const uint64_t loads[2] = {SRC + 0x00, SRC + 0x1a};
  for (int k = 0; p && out && k < 2; k++) {
    int64_t off = reloc_copy_offset(p, loads[k]);
    x64_insn n;
    CHECK(off >= 0 && decode(out + off, 15, DEST + (uint64_t)off, &n) && n.rip_relative,
          "load %d not copied", k);
    if (off < 0) continue;
    tables[k] = n.rip_target;
    CHECK(n.rip_target != SRC + 0x30 && n.rip_target >= DEST && n.rip_target < DEST + info.copy_size,
          "load %d names 0x%" PRIx64 ", not the copy's table", k, n.rip_target);
  }
  CHECK(tables[0] == tables[1], "the two loads name 0x%" PRIx64 " and 0x%" PRIx64, tables[0], tables[1]);
  reloc_plan_free(p);
  free(out);
}

/* Two dispatches through one table of offsets, its lea hoisted above both
 * (a Rust `std::sync::Once::call`: rustup's): under arcs each dispatch gets
 * a copy of the table, read by its own movsxd at a displacement from the
 * copy the base register holds, and the offsets of both copies count from
 * that one, where the add after the load adds them to.  For every index,
 * what each dispatch's entry sends to must reach the copy of the case. */
static void test_table_rel32_two_dispatches(void) {
  static const uint8_t in[] = {
      0x4c, 0x8d, 0x3d, 0x31, 0x00, 0x00, 0x00, /* 00: lea r15, [rip+0x31] (T = 0x38) */
      0x89, 0xfa,                               /* 07: mov edx, edi */
      0x83, 0xe2, 0x03,                         /* 09: and edx, 3 */
      0x49, 0x63, 0x14, 0x97,                   /* 0c: movsxd rdx, dword [r15+rdx*4] */
      0x4c, 0x01, 0xfa,                         /* 10: add rdx, r15 */
      0xff, 0xe2,                               /* 13: jmp rdx */
      0x83, 0xc6, 0x01,                         /* 15: add esi, 1 (case 0) */
      0x89, 0xf0,                               /* 18: mov eax, esi */
      0x83, 0xe0, 0x03,                         /* 1a: and eax, 3 */
      0x49, 0x63, 0x04, 0x87,                   /* 1d: movsxd rax, dword [r15+rax*4] */
      0x4c, 0x01, 0xf8,                         /* 21: add rax, r15 */
      0xff, 0xe0,                               /* 24: jmp rax */
      0xb8, 0x01, 0x00, 0x00, 0x00, 0xc3,       /* 26: mov eax, 1; ret (case 1) */
      0x31, 0xc0, 0xc3,                         /* 2c: xor eax, eax; ret (case 2) */
      0xb8, 0x03, 0x00, 0x00, 0x00, 0xc3,       /* 2f: mov eax, 3; ret (case 3) */
      0xcc, 0xcc, 0xcc,                         /* 35: padding */
      0xdd, 0xff, 0xff, 0xff,                   /* 38: T[0] = 0x15 - 0x38 */
      0xee, 0xff, 0xff, 0xff,                   /* 3c: T[1] = 0x26 - 0x38 */
      0xf4, 0xff, 0xff, 0xff,                   /* 40: T[2] = 0x2c - 0x38 */
      0xf7, 0xff, 0xff, 0xff,                   /* 44: T[3] = 0x2f - 0x38 */
  };
  static const uint64_t cases[4] = {SRC + 0x15, SRC + 0x26, SRC + 0x2c, SRC + 0x2f};
  uint64_t ro[1][2] = {{SRC + 0x38, SRC + 0x48}}; /* a mask bounds it: read-only */
  readonly = (const uint64_t(*)[2])ro;
  nreadonly = 1;
  for (int arcs = 0; arcs <= 1; arcs++) {
    const char *name = arcs ? "one table of offsets, two dispatches, arcs" : "one table of offsets, two dispatches";
    fn_case c = CASE(name, in, 0x35, 0);
    reloc_probes probes = {.entry = true, .arcs = true};
    reloc_info info;
    uint8_t *out;
    reloc_plan *p = run(&c, arcs ? &probes : NULL, DEST, NULL, 0, &info, &out);
    CHECK(p && info.njump_tables == (arcs ? 2u : 1u) && !info.leaves_to_original, "%zu tables, leaves %d",
          info.njump_tables, info.leaves_to_original);
    if (p && out) {
      int64_t d0 = check_offsets_reach(name, p, out, info.copy_size, SRC + 0x35, SRC, SRC + 0x0c, cases, 4);
      int64_t d1 = check_offsets_reach(name, p, out, info.copy_size, SRC + 0x35, SRC, SRC + 0x1d, cases, 4);
      CHECK(arcs ? d0 != d1 : d0 == d1, "the loads read at %" PRId64 " and %" PRId64, d0, d1);
    }
    reloc_plan_free(p);
    free(out);
  }
  readonly = NULL;
  nreadonly = 0;
}

/* A dispatch's target kept in a stack slot across a call, the jmp through
 * the slot (rustup's clap Parser::get_matches_with, a Rust `match` in a
 * loop): matched where the store fills the slot.  Variant 1: the slot is
 * written again before the jmp, which then does not go through the table. */
static void test_table_through_slot(void) {
  static const uint8_t in[] = {
      0x48, 0x83, 0xec, 0x38,                   /* 00: sub rsp, 0x38 */
      0x8b, 0x07,                               /* 04: mov eax, [rdi] */
      0x83, 0xf8, 0x02,                         /* 06: cmp eax, 2 */
      0x77, 0x35,                               /* 09: ja 0x40 */
      0x48, 0x8d, 0x0d, 0x36, 0x00, 0x00, 0x00, /* 0b: lea rcx, [rip+0x36] (T = 0x48) */
      0x48, 0x63, 0x04, 0x81,                   /* 12: movsxd rax, dword [rcx+rax*4] */
      0x48, 0x01, 0xc8,                         /* 16: add rax, rcx */
      0x48, 0x89, 0x44, 0x24, 0x28,             /* 19: mov [rsp+0x28], rax */
      0xe8, 0xdd, 0x0f, 0x00, 0x00,             /* 1e: call SRC+0x1000 */
      0xb9, 0x06, 0x00, 0x00, 0x00,             /* 23: mov ecx, 6 (variant 1: mov [rsp+0x28], rcx) */
      0xff, 0x64, 0x24, 0x28,                   /* 28: jmp [rsp+0x28] */
      0xb8, 0x01, 0x00, 0x00, 0x00, 0x48, 0x83, 0xc4, 0x38, 0xc3, /* 2c: mov eax, 1; add rsp, 0x38; ret */
      0xb8, 0x02, 0x00, 0x00, 0x00, 0x48, 0x83, 0xc4, 0x38, 0xc3, /* 36: mov eax, 2; add rsp, 0x38; ret */
      0x31, 0xc0, 0x48, 0x83, 0xc4, 0x38, 0xc3, /* 40: xor eax, eax; add rsp, 0x38; ret */
      0xcc,                                     /* 47: padding */
      0xe4, 0xff, 0xff, 0xff, 0xee, 0xff, 0xff, 0xff, 0xf8, 0xff, 0xff, 0xff, /* 48: T: 0x2c, 0x36, 0x40 */
  };
  static const uint64_t cases[3] = {SRC + 0x2c, SRC + 0x36, SRC + 0x40};
  static const uint8_t rewrite[] = {0x48, 0x89, 0x4c, 0x24, 0x28}; /* mov [rsp+0x28], rcx */
  static const char *const names[] = {"dispatch through a stack slot", "dispatch through a stack slot, arcs",
                                      "a stack slot written again before its jmp"};
  for (int v = 0; v < 3; v++) {
    static uint8_t code[sizeof in];
    memcpy(code, in, sizeof in);
    if (v == 2) memcpy(code + 0x23, rewrite, sizeof rewrite);
    const char *name = names[v];
    fn_case c = CASE(name, code, 0x48, 0);
    reloc_probes probes = {.entry = true, .arcs = true};
    reloc_info info;
    uint8_t *out;
    reloc_plan *p = run(&c, v == 1 ? &probes : NULL, DEST, NULL, 0, &info, &out);
    bool resolved = v != 2;
    CHECK(p && info.njump_tables == (resolved ? 1u : 0u) && info.leaves_to_original == !resolved,
          "%zu tables, leaves %d", info.njump_tables, info.leaves_to_original);
    if (p && out && resolved) check_offsets_reach(name, p, out, info.copy_size, SRC + 0x48, SRC + 0x0b, SRC + 0x12, cases, 3);
    reloc_plan_free(p);
    free(out);
  }
}

/* One target kept in a slot and jumped through at two jmps, the store on
 * the way back from both: one table for both (the load is theirs), and
 * under arcs, where its entries could lead to the stubs of one of them
 * only, the second left to the original (the load must not be given a
 * copy of the second's: the first would dispatch through it too). */
static void test_table_slot_jumped_twice(void) {
  static const uint8_t in[] = {
      0x48, 0x83, 0xec, 0x38,                   /* 00: sub rsp, 0x38 */
      0x8b, 0x07,                               /* 04: mov eax, [rdi] */
      0x83, 0xf8, 0x02,                         /* 06: cmp eax, 2 */
      0x77, 0x38,                               /* 09: ja 0x43 */
      0x48, 0x8d, 0x0d, 0x3e, 0x00, 0x00, 0x00, /* 0b: lea rcx, [rip+0x3e] (T = 0x50) */
      0x48, 0x63, 0x04, 0x81,                   /* 12: movsxd rax, dword [rcx+rax*4] */
      0x48, 0x01, 0xc8,                         /* 16: add rax, rcx */
      0x48, 0x89, 0x44, 0x24, 0x28,             /* 19: mov [rsp+0x28], rax */
      0x85, 0xf6,                               /* 1e: test esi, esi */
      0x74, 0x04,                               /* 20: je 0x26 */
      0xff, 0x64, 0x24, 0x28,                   /* 22: jmp [rsp+0x28] */
      0xb9, 0x01, 0x00, 0x00, 0x00,             /* 26: mov ecx, 1 */
      0xff, 0x64, 0x24, 0x28,                   /* 2b: jmp [rsp+0x28] */
      0xb8, 0x01, 0x00, 0x00, 0x00, 0x48, 0x83, 0xc4, 0x38, 0xc3, /* 2f: mov eax, 1; add rsp, 0x38; ret */
      0xb8, 0x02, 0x00, 0x00, 0x00, 0x48, 0x83, 0xc4, 0x38, 0xc3, /* 39: mov eax, 2; add rsp, 0x38; ret */
      0x31, 0xc0, 0x48, 0x83, 0xc4, 0x38, 0xc3, /* 43: xor eax, eax; add rsp, 0x38; ret */
      0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,       /* 4a: padding */
      0xdf, 0xff, 0xff, 0xff, 0xe9, 0xff, 0xff, 0xff, 0xf3, 0xff, 0xff, 0xff, /* 50: T: 0x2f, 0x39, 0x43 */
  };
  static const uint64_t cases[3] = {SRC + 0x2f, SRC + 0x39, SRC + 0x43};
  for (int arcs = 0; arcs <= 1; arcs++) {
    const char *name = arcs ? "a slot jumped through twice, arcs" : "a slot jumped through twice";
    fn_case c = CASE(name, in, 0x50, 0);
    reloc_probes probes = {.entry = true, .arcs = true};
    reloc_info info;
    uint8_t *out;
    reloc_plan *p = run(&c, arcs ? &probes : NULL, DEST, NULL, 0, &info, &out);
    CHECK(p && info.njump_tables == 1 && info.leaves_to_original == arcs, "%zu tables, leaves %d",
          info.njump_tables, info.leaves_to_original);
    if (p && out) check_offsets_reach(name, p, out, info.copy_size, SRC + 0x50, SRC + 0x0b, SRC + 0x12, cases, 3);
    reloc_plan_free(p);
    free(out);
  }
}

/* A table whose base register is written elsewhere (the pops of two
 * epilogues, one before a tail call through the GOT), its cases going back
 * into the dispatch: the base is held on every way into it, and the tail
 * call `jmp [rip+x]`, left unresolved, reads no register that could
 * dispatch through the copy's table (rustup's drop_in_place of a regex
 * ClassSetUnion, whose last call is `jmp *free@GOT`). */
static void test_table_base_with_got_tail(void) {
  static const uint8_t in[] = {
      0x53,                                     /* 00: push rbx */
      0x48, 0x8d, 0x1d, 0x28, 0x00, 0x00, 0x00, /* 01: lea rbx, [rip+0x28] (T = 0x30) */
      0xeb, 0x04,                               /* 08: jmp 0x0e */
      0xff, 0xce, 0x89, 0xf7,                   /* 0a: dec esi; mov edi, esi (case 0) */
      0x83, 0xff, 0x02,                         /* 0e: cmp edi, 2 */
      0x77, 0x14,                               /* 11: ja 0x27 */
      0x48, 0x63, 0x04, 0xbb,                   /* 13: movsxd rax, dword [rbx+rdi*4] */
      0x48, 0x01, 0xd8,                         /* 17: add rax, rbx */
      0xff, 0xe0,                               /* 1a: jmp rax */
      0xbf, 0x03, 0x00, 0x00, 0x00, 0xeb, 0xeb, /* 1c: mov edi, 3; jmp 0x0e (case 1) */
      0x31, 0xc0, 0x5b, 0xc3,                   /* 23: xor eax, eax; pop rbx; ret (case 2) */
      0x5b,                                     /* 27: pop rbx */
      0xff, 0x25, 0x00, 0x10, 0x00, 0x00,       /* 28: jmp [rip+0x1000] */
      0xcc, 0xcc,                               /* 2e: padding */
      0xda, 0xff, 0xff, 0xff,                   /* 30: T[0] = 0x0a - 0x30 */
      0xec, 0xff, 0xff, 0xff,                   /* 34: T[1] = 0x1c - 0x30 */
      0xf3, 0xff, 0xff, 0xff,                   /* 38: T[2] = 0x23 - 0x30 */
  };
  for (int arcs = 0; arcs <= 1; arcs++) {
    const char *name = arcs ? "table base, a tail call through the GOT, arcs" : "table base, a tail call through the GOT";
    fn_case c = CASE(name, in, 0x2e, 0);
    reloc_probes probes = {.entry = true, .arcs = true};
    reloc_info info;
    uint8_t *out;
    reloc_plan *p = run(&c, arcs ? &probes : NULL, DEST, NULL, 0, &info, &out);
    CHECK(p && info.njump_tables == 1 && !info.leaves_to_original, "%zu tables, leaves %d", info.njump_tables,
          info.leaves_to_original);
    for (size_t k = 0; p && k < 3; k++)
      CHECK(reloc_copy_offset(p, SRC + (uint64_t[]){0x0a, 0x1c, 0x23}[k]) >= 0, "case %zu was not decoded", k);
    reloc_plan_free(p);
    free(out);
  }
}

/* A jump through a pointer read from memory (no table) in a function with
 * no call frame information: where a push moved rsp before it, it may jump
 * back into the function (the copy is left there); where nothing moves rsp
 * (the C runtime's deregister_tm_clones, `jmp *%rax` to a function whose
 * address it loaded), it is a tail call. */
static void test_unresolved_indirect(void) {
  static const uint8_t in[] = {
      0x53,             /* push rbx */
      0x48, 0x8b, 0x07, /* mov rax, [rdi] */
      0xff, 0xe0,       /* jmp rax */
  };
  for (int frame = 0; frame <= 1; frame++) {
    const char *name = frame ? "unresolved indirect jmp" : "indirect jmp, no frame";
    fn_case c = {name, in + !frame, sizeof in - !frame, sizeof in - !frame, 0, 0};
    reloc_info info;
    expect_case(&c, NULL, in + !frame, sizeof in - !frame, &info);
    CHECK(info.leaves_to_original == frame && info.njump_tables == 0, "leaves %d", info.leaves_to_original);
  }
}

/* }=== */

/* {=== failures ===*/

static void test_failures(void) {
  static const uint8_t undecodable[] = {
      0x85, 0xff, /* 0: test edi, edi */
      0x74, 0x01, /* 2: je 5 */
      0xc3,       /* 4: ret */
      0xff, 0xff, /* 5: (invalid) */
  };
  fn_case c1 = CASE("undecodable", undecodable, sizeof undecodable, 0);
  expect_plan_failure(&c1, "undecodable instruction at 0x400005");

  static const uint8_t overlap[] = {
      0x74, 0x01,                   /* 0: je 3 (into the mov) */
      0xb8, 0xc3, 0x00, 0x00, 0x00, /* 2: mov eax, 0xc3 */
      0xc3,                         /* 7: ret */
  };
  fn_case c2 = CASE("overlap", overlap, sizeof overlap, 0);
  expect_plan_failure(&c2, "overlapping");

  static const uint8_t self_call[] = {
      0xe8, 0x00, 0x00, 0x00, 0x00, /* 0: call 5 */
      0x58,                         /* 5: pop rax */
      0xc3,                         /* 6: ret */
  };
  fn_case c3 = CASE("call into own body", self_call, sizeof self_call, 0);
  expect_plan_failure(&c3, "call into own body");

  static const uint8_t far[] = {
      0x48, 0x8b, 0x05, 0x00, 0x00, 0x00, 0x70, /* mov rax, [rip+0x70000000] */
      0xc3,                                     /* ret */
  };
  const char *name = "displacement out of range";
  fn_case c4 = {name, far, sizeof far, sizeof far, 0, 0x100000000ull};
  reloc_function_desc d = desc(&c4);
  reloc_probes none = {0};
  reloc_plan *p;
  reloc_info info;
  if (reloc_plan_function(&d, &none, &p, &info) != LP_OK) {
    CHECK(0, "plan failed: %s", lp_error());
    return;
  }
  uint8_t out[64];
  CHECK(reloc_emit(p, 0x100000000ull + 0x10000000, out, COUNTER, NULL, NULL) == LP_OK, "near emit failed: %s",
        lp_error());
  CHECK(reloc_emit(p, 0x100000000ull - 0x20000000, out, COUNTER, NULL, NULL) == LP_ERR, "far emit did not fail");
  CHECK(strstr(lp_error(), "out of rel32 reach") != NULL, "message: %s", lp_error());
  reloc_plan_free(p);
}

/* }=== */

/* reloc_starts_insns: where an int3 may go in a part decoded linearly (core/
 * breaks.c watches a cold part so): push rbp; mov rbp, rsp; ret. */
static void test_starts_insns(void) {
  const char *name = "starts_insns";
  static const uint8_t code[] = {0x55, 0x48, 0x89, 0xe5, 0xc3};
  reloc_function_desc d = {.entry = SRC, .lo = SRC, .hi = SRC + sizeof code, .code = code, .code_base = SRC,
                           .code_size = sizeof code};
  const uint64_t starts[] = {SRC, SRC + 1, SRC + 1, SRC + 4}, inside[] = {SRC + 1, SRC + 2},
                 past[] = {SRC + 5}, before[] = {SRC - 1};
  CHECK(reloc_starts_insns(&d, d.lo, d.hi, starts, 4), "starts (one twice): not found");
  CHECK(reloc_starts_insns(&d, d.lo, d.hi, NULL, 0), "no place: refused");
  CHECK(!reloc_starts_insns(&d, d.lo, d.hi, inside, 2), "a place inside mov rbp, rsp: taken");
  CHECK(!reloc_starts_insns(&d, d.lo, d.hi, past, 1), "a place past the part: taken");
  CHECK(!reloc_starts_insns(&d, d.lo, d.hi, before, 1), "a place before the part: taken");
  CHECK(!reloc_starts_insns(&d, d.lo, d.hi - 2, starts, 3), "a range that ends inside mov rbp, rsp: taken");
  CHECK(reloc_starts_insns(&d, d.lo, d.hi - 1, starts, 3), "a range that ends after mov rbp, rsp: refused");
}

int main(void) {
  test_starts_insns();
  test_prologue();
  test_jcc_rel8();
  test_loop_back_edge();
  test_call_and_tail_jmp();
  test_recursion();
  test_rip_relative();
  test_jrcxz();
  test_entry_counter_loop_to_entry();
  test_entry_counter_atomic();
  test_entry_not_lowest();
  test_fall_off_end();
  test_loop_head_aligned();
  test_branch_out_of_rel8();
  test_relaxation_random();
  test_noreturn_call();
  test_table_pic();
  test_table_pic_variant();
  test_table_byte_bounds();
  test_table_computed_goto();
  test_table_off_the_straight_line();
  test_table_memory_past_pushes();
  test_table_sign_extended_index();
  test_table_hoisted_base();
  test_table_memory_global();
  test_table_bound_on_copy();
  test_table_mask_bound();
  test_table_guessed();
  test_table_open();
  test_table_guarded();
  test_table_computed_goto_unbounded();
  test_table_spilled_base();
  test_table_memory_through_lea();
  test_table_absolute();
  test_table_gcc_o2_nopie();
  test_table_gcc_o0_nopie();
  test_table_gcc_o0_pic();
  test_table_loaded_twice();
  test_table_rel32_two_dispatches();
  test_table_guarded_twice();
  test_table_guarded_many();
  test_table_open_back_to_back();
  test_table_base_with_got_tail();
  test_table_through_slot();
  test_table_slot_jumped_twice();
  test_unresolved_indirect();
  test_writer_shapes();
  test_blocks_cover();
  test_blocks_count_liveness();
  test_edges_fall_taken_return();
  test_edges_counted_live();
  test_edges_counted_at_target();
  test_loops();
  test_side_entry_dominators();
  test_shared_save();
  test_edges_entry_measures();
  test_edges_on_counts();
  test_tail_liveness();
  test_call_sites();
  test_noreturn_edges();
  test_returns_twice();
  test_syscall_forks();
  test_never_returns();
  test_edges_table();
  test_failures();
  if (failures) {
    printf("test_reloc: %d of %d checks failed\n", failures, checks);
    return 1;
  }
  printf("test_reloc: all %d checks passed\n", checks);
  return 0;
}
