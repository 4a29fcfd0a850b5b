/* test_reloc.c — unit tests of the whole-function relocator (relocate/ over arch/x86_64).
 *
 * Byte tables in the Frida style: input bytes with their disassembly, planned
 * at SRC and emitted at SRC + 0x10000000, checked against expected bytes, and
 * by an oracle that decodes the copy and checks that every RIP-relative
 * operand and branch names the same absolute address or the copy of the same
 * target.  No arguments; exit status 0 when all pass. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <Zydis/Zydis.h>

#include "reloc.h"
#include "x64_decode.h"

#define SRC 0x400000ull
#define DEST (SRC + 0x10000000ull)
#define COUNTER (SRC + 0x5000ull)

static int failures, checks;

#define CHECK(cond, ...)                                     \
  do {                                                       \
    checks++;                                                \
    if (!(cond)) {                                           \
      failures++;                                            \
      printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, name);  \
      printf(__VA_ARGS__);                                   \
      printf("\n");                                          \
    }                                                        \
  } while (0)

typedef struct fn_case {
  const char *name;
  const uint8_t *code;
  size_t code_size; /* bytes readable (function plus any table after it) */
  size_t fn_size;   /* hi - lo */
  size_t entry;     /* offset of the entry */
  uint64_t base;    /* run-time address of code[0] (SRC when 0) */
} fn_case;

static reloc_function_desc desc(const fn_case *c) {
  uint64_t base = c->base ? c->base : SRC;
  return (reloc_function_desc){.entry = base + c->entry, .lo = base, .hi = base + c->fn_size,
                               .code = c->code, .code_base = base, .code_size = c->code_size};
}

static void dump(const char *what, const uint8_t *b, size_t n) {
  printf("  %s:", what);
  for (size_t i = 0; i < n; i++) printf(" %02x", b[i]);
  printf("\n");
}

/* Decodes the copy at every original instruction's offset and compares. */
static void oracle(const char *name, const fn_case *c, const reloc_plan *p, const uint8_t *out,
                   uint64_t dest, size_t copy_size) {
  reloc_function_desc d = desc(c);
  for (uint64_t a = d.lo; a < d.hi; a++) {
    int64_t off = reloc_copy_offset(p, a);
    if (off < 0) continue;
    x64_insn o, n;
    if (!x64_decode(c->code + (a - d.code_base), d.hi - a, a, &o) ||
        !x64_decode(out + off, 15, dest + (uint64_t)off, &n)) {
      CHECK(0, "oracle cannot decode at 0x%" PRIx64, a);
      continue;
    }
    uint64_t want = 0;
    if (o.flow == X64_FLOW_JMP || o.flow == X64_FLOW_JCC || o.flow == X64_FLOW_JCC_SHORT) {
      int64_t t = o.target == d.entry ? 0 : reloc_copy_offset(p, o.target);
      want = t >= 0 ? dest + (uint64_t)t : o.target;
    }
    switch (o.flow) {
    case X64_FLOW_JMP:
    case X64_FLOW_JCC:
      CHECK(n.flow == o.flow && n.cc == o.cc && n.target == want,
            "branch at 0x%" PRIx64 " goes to 0x%" PRIx64 ", want 0x%" PRIx64, a, n.target, want);
      break;
    case X64_FLOW_JCC_SHORT: { /* op +2; jmp short +5; jmp rel32 */
      x64_insn j;
      size_t at = (size_t)off + n.len + 2;
      bool ok = n.mnemonic == o.mnemonic && n.target == dest + at &&
                x64_decode(out + at, 5, dest + at, &j) && j.flow == X64_FLOW_JMP &&
                j.target == want;
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
      } else if (o.disp_size != 32 || o.flow != X64_FLOW_JMP_INDIRECT) {
        CHECK(o.len == n.len && !memcmp(o.bytes, n.bytes, o.len),
              "instruction at 0x%" PRIx64 " not copied as is", a);
      }
    }
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
  *out = calloc(1, info->copy_size + 1);
  if (reloc_emit(p, dest, *out, COUNTER, NULL, NULL) != LP_OK) {
    CHECK(0, "emit failed: %s", lp_error());
    return p;
  }
  if (expect) {
    bool same = info->copy_size == expect_size && !memcmp(*out, expect, expect_size);
    CHECK(same, "copy differs (size %zu, expected %zu)", info->copy_size, expect_size);
    if (!same) {
      dump("got ", *out, info->copy_size);
      dump("want", expect, expect_size);
    }
  }
  oracle(name, c, p, *out, dest, info->copy_size);
  return p;
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
      0x85, 0xff,                         /* test edi, edi */
      0x0f, 0x84, 0x03, 0x00, 0x00, 0x00, /* je +3 (rel32) */
      0x31, 0xc0,                         /* xor eax, eax */
      0xc3,                               /* ret */
      0xb8, 0x01, 0x00, 0x00, 0x00,       /* mov eax, 1 */
      0xc3,                               /* ret */
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
  CHECK(p && reloc_copy_offset(p, SRC + 7) == 11 && reloc_copy_offset(p, SRC + 1) == -1 &&
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
      0x31, 0xc0,                         /* xor eax, eax */
      0x01, 0xf8,                         /* add eax, edi */
      0xff, 0xcf,                         /* dec edi */
      0x0f, 0x85, 0xf6, 0xff, 0xff, 0xff, /* jne -10 */
      0xc3,                               /* ret */
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
  CHECK(info.nblocks == 1 && info.min_inner_target == UINT64_MAX && !info.leaves_to_original,
        "%zu blocks", info.nblocks);

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
  uint8_t out[sizeof linked];
  CHECK(info.copy_size == sizeof linked && reloc_emit(p, DEST, out, COUNTER, copy_of_callee, NULL) == LP_OK &&
            !memcmp(out, linked, sizeof linked),
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
      0x85, 0xff,                         /* test edi, edi */
      0x0f, 0x84, 0x07, 0x00, 0x00, 0x00, /* je copy of b */
      0xff, 0xcf,                         /* dec edi */
      0xe8, 0xf1, 0xff, 0xff, 0xff,       /* call the copy's entry */
      0xc3,                               /* ret */
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
      0x48, 0xff, 0x05, 0xf9, 0x4f, 0x00, 0xf0, /* inc qword [rip→COUNTER] */
      0x67, 0xe3, 0x02,                         /* jecxz +2 */
      0xeb, 0x05,                               /* jmp short +5 */
      0xe9, 0x0e, 0x00, 0x00, 0x00,             /* jmp copy of ret */
      0xe2, 0x02,                               /* loop +2 */
      0xeb, 0x05,                               /* jmp short +5 */
      0xe9, 0xe6, 0xff, 0xff, 0xff,             /* jmp 0 (through the probe) */
      0xe9, 0xe1, 0xff, 0xff, 0xff,             /* jmp 0 (through the probe) */
      0xc3,                                     /* ret */
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
      0x85, 0xff,                         /* test edi, edi */
      0x0f, 0x84, 0x01, 0x00, 0x00, 0x00, /* je copy of 0 */
      0xc3,                               /* ret */
      0x31, 0xc0,                         /* xor eax, eax */
      0xff, 0xc0,                         /* inc eax */
      0xe9, 0xee, 0xff, 0xff, 0xff,       /* jmp entry (fall-through gap) */
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
      0x85, 0xff,                         /* test edi, edi */
      0x0f, 0x85, 0x01, 0x00, 0x00, 0x00, /* jne copy of 5 */
      0xc3,                               /* ret */
      0x90,                               /* nop */
      0xe9, 0xf7, 0xff, 0xff, 0xef,       /* jmp SRC+6 (original) */
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
      0x85, 0xff,                         /* test edi, edi */
      0x0f, 0x84, 0x01, 0x00, 0x00, 0x00, /* je copy of 5 */
      0xc3,                               /* ret */
      0xe8, 0xf2, 0x0f, 0x00, 0xf0,       /* call SRC+0x1000 */
      0x0f, 0x0b,                         /* ud2 */
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
      0x0f, 0x87, 0x1e, 0x00, 0x00, 0x00,       /* 03: ja copy of 23 */
      0x48, 0x8d, 0x15, 0x1c, 0x00, 0x00, 0x00, /* 09: lea rdx, [rip+0x1c] (new T = 2c) */
      0x89, 0xff,                               /* 10: mov edi, edi */
      0x48, 0x63, 0x04, 0xba,                   /* 12: movsxd rax, dword [rdx+rdi*4] */
      0x48, 0x01, 0xd0,                         /* 16: add rax, rdx */
      0xff, 0xe0,                               /* 19: jmp rax */
      0xb8, 0x01, 0x00, 0x00, 0x00,             /* 1b: mov eax, 1 */
      0xc3,                                     /* 20: ret */
      0xb8, 0x02, 0x00, 0x00, 0x00,             /* 21: mov eax, 2 */
      0xc3,                                     /* 26: ret */
      0x31, 0xc0,                               /* 27: xor eax, eax */
      0xc3,                                     /* 29: ret */
      0xcc, 0xcc,                               /* 2a: align 4 */
      0xef, 0xff, 0xff, 0xff,                   /* 2c: 1b - 2c */
      0xf5, 0xff, 0xff, 0xff,                   /* 30: 21 - 2c */
      0xfb, 0xff, 0xff, 0xff,                   /* 34: 27 - 2c */
      0xf5, 0xff, 0xff, 0xff,                   /* 38: 21 - 2c */
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
    CHECK(lea == 0 && x64_decode(out, 15, DEST, &l), "lea not first");
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
      0x0f, 0x87, 0x13, 0x00, 0x00, 0x00,             /* 03: ja copy of 18 */
      0x89, 0xff,                                     /* 09: mov edi, edi */
      0xff, 0x24, 0xfd, 0x20, 0x00, 0x40, 0x10,       /* 0b: jmp [rdi*8+DEST+0x20] */
      0xb8, 0x01, 0x00, 0x00, 0x00,                   /* 12: mov eax, 1 */
      0xc3,                                           /* 17: ret */
      0x31, 0xc0,                                     /* 18: xor eax, eax */
      0xff, 0xc0,                                     /* 1a: inc eax */
      0xc3,                                           /* 1c: ret */
      0xcc, 0xcc, 0xcc,                               /* 1d: align 8 */
      0x12, 0x00, 0x40, 0x10, 0x00, 0x00, 0x00, 0x00, /* 20: DEST+0x12 */
      0x18, 0x00, 0x40, 0x10, 0x00, 0x00, 0x00, 0x00, /* 28: DEST+0x18 */
      0x1a, 0x00, 0x40, 0x10, 0x00, 0x00, 0x00, 0x00, /* 30: DEST+0x1a */
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
    CHECK(inner == DEST + 0x12, "entry inside became 0x%" PRIx64, inner);
  }
  reloc_plan_free(p);
  free(out);
}

static void test_unresolved_indirect(void) {
  static const uint8_t in[] = {
      0x48, 0x8b, 0x07, /* mov rax, [rdi] */
      0xff, 0xe0,       /* jmp rax */
  };
  const char *name = "unresolved indirect jmp";
  fn_case c = CASE(name, in, sizeof in, 0);
  reloc_info info;
  expect_case(&c, NULL, in, sizeof in, &info);
  CHECK(info.leaves_to_original && info.njump_tables == 0, "leaves %d", info.leaves_to_original);
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

int main(void) {
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
  test_noreturn_call();
  test_table_pic();
  test_table_pic_variant();
  test_table_absolute();
  test_unresolved_indirect();
  test_failures();
  if (failures) {
    printf("test_reloc: %d of %d checks failed\n", failures, checks);
    return 1;
  }
  printf("test_reloc: all %d checks passed\n", checks);
  return 0;
}
