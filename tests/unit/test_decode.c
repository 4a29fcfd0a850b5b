/* test_decode.c — x64_quick.c's table, which x64_decode tries first, against
 * Zydis alone (x64_decode_zydis), the oracle: every field relocation reads must be the same wherever
 * the table decodes an instruction, and so must the operands it gives (a
 * RIP-relative operand's instruction) and the registers it writes
 * (x64_quick_gprs_written against Zydis's operands), and the table must
 * decode nothing Zydis rejects; and which stack slots an instruction may
 * store to, read from the two operands x64_insn keeps, against all of
 * Zydis's (x64_insn_may_store_to_slot).  Over the .text of whole binaries (a
 * linear sweep, padding and all) and over random bytes behind the opcodes
 * the table knows. */
#include <elf.h>
#include <inttypes.h>
#include <string.h>

#include "unit.h"
#include "x64_jumptable.h"
#include "x64_quick.h"
#include "x64_zydis.h"

typedef struct tally {
  size_t decoded, quick;
} tally;

static bool same(const x64_insn *a, const x64_insn *b) {
  return a->addr == b->addr && a->len == b->len && !memcmp(a->bytes, b->bytes, a->len) && a->flow == b->flow &&
         a->mnemonic == b->mnemonic && a->cc == b->cc && a->target == b->target &&
         a->rip_relative == b->rip_relative && a->rip_target == b->rip_target && a->disp_offset == b->disp_offset &&
         a->disp_size == b->disp_size && a->flags_read == b->flags_read && a->flags_written == b->flags_written;
}

static bool same_operand(const x64_operand *a, const x64_operand *b) {
  return a->type == b->type && a->size == b->size && a->written == b->written && a->reg == b->reg &&
         a->base == b->base && a->index == b->index && a->scale == b->scale && a->disp == b->disp && a->imm == b->imm;
}

/* The operands, where the table gave them (a RIP-relative operand's instruction). */
static bool same_operands(const x64_insn *a, const x64_insn *b) {
  if (!a->operands_decoded) return true;
  if (!b->operands_decoded || a->nops != b->nops) return false;
  for (unsigned k = 0; k < a->nops; k++)
    if (!same_operand(&a->op[k], &b->op[k])) return false;
  return true;
}

/* Whether I may store to one of the 8 bytes at [rsp+D], from Zydis's full
 * operands, every one of them (the oracle of x64_insn_may_store_to_slot,
 * which reads the two x64_insn keeps). */
static bool stores_to_slot(const x64_insn *i, int64_t d) {
  ZydisDecodedInstruction zi;
  ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
  if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(x64_zydis_decoder(), i->bytes, i->len, &zi, ops))) return true;
  for (unsigned k = 0; k < zi.operand_count; k++) {
    const ZydisDecodedOperand *o = &ops[k];
    if (o->type != ZYDIS_OPERAND_TYPE_MEMORY || !(o->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE) ||
        x64_widen(o->mem.base) != ZYDIS_REGISTER_RSP || o->visibility == ZYDIS_OPERAND_VISIBILITY_HIDDEN)
      continue; /* elsewhere, or a push's (below rsp) */
    if (o->mem.index != ZYDIS_REGISTER_NONE) return true;
    int64_t lo = o->mem.disp.value, hi = lo + (o->size ? o->size / 8 : 1);
    if (lo < d + 8 && d < hi) return true;
  }
  return false;
}

/* x64_insn_may_store_to_slot of WANT (Zydis's decoding, its operands
 * decoded) against stores_to_slot, at the slots around each of its memory
 * operands. */
static void compare_slot_stores(const char *name, x64_insn *want) {
  if (!x64_decode_operands(want)) return;
  static const int64_t around[] = {-16, -9, -8, -7, -1, 0, 1, 7, 8, 15, 16, 31, 32};
  for (unsigned k = 0; k < want->nops; k++) {
    if (want->op[k].type != X64_OP_MEM || want->op[k].base != ZYDIS_REGISTER_RSP) continue;
    for (size_t a = 0; a < sizeof around / sizeof around[0]; a++) {
      int64_t d = want->op[k].disp + around[a];
      CHECK(x64_insn_may_store_to_slot(want, d) == stores_to_slot(want, d),
            "0x%" PRIx64 " (%02x %02x %02x %02x): a store to [rsp%+" PRId64 "]: %d, Zydis's operands: %d",
            want->addr, want->bytes[0], want->bytes[1], want->bytes[2], want->bytes[3], d,
            x64_insn_may_store_to_slot(want, d), stores_to_slot(want, d));
    }
  }
}

/* One position: what the table says against Zydis alone. */
static void compare(const char *name, const uint8_t *code, size_t avail, uint64_t addr, tally *t) {
  x64_insn got, want;
  bool ok = x64_decode_quick(code, avail, addr, &got), zok = x64_decode_zydis(code, avail, addr, &want);
  size_t len;
  x64_flow flow;
  bool fok = x64_decode_flow(code, avail, &len, &flow); /* what a scan reads: the same */
  CHECK(fok == zok && (!fok || (len == want.len && flow == want.flow)),
        "0x%" PRIx64 " (%02x %02x %02x): x64_decode_flow %d len %zu flow %d, x64_decode %d len %u flow %d", addr,
        code[0], avail > 1 ? code[1] : 0, avail > 2 ? code[2] : 0, fok, fok ? len : 0, fok ? (int)flow : -1, zok,
        zok ? want.len : 0, zok ? (int)want.flow : -1);
  if (!zok) {
    CHECK(!ok, "0x%" PRIx64 ": decoded bytes %02x %02x %02x that Zydis rejects", addr, code[0],
          avail > 1 ? code[1] : 0, avail > 2 ? code[2] : 0);
    return;
  }
  t->decoded++;
  compare_slot_stores(name, &want);
  if (!ok) return; /* left to Zydis */
  t->quick++;
  CHECK(same(&got, &want),
        "0x%" PRIx64 " (%02x %02x %02x %02x): len %u/%u flow %d/%d mnemonic %d/%d cc %u/%u target 0x%" PRIx64
        "/0x%" PRIx64 " disp %u@%u/%u@%u flags r%02x w%02x / r%02x w%02x",
        addr, code[0], avail > 1 ? code[1] : 0, avail > 2 ? code[2] : 0, avail > 3 ? code[3] : 0, got.len, want.len,
        got.flow, want.flow, got.mnemonic, want.mnemonic, got.cc, want.cc, got.target, want.target, got.disp_size,
        got.disp_offset, want.disp_size, want.disp_offset, got.flags_read, got.flags_written, want.flags_read,
        want.flags_written);
  CHECK(same_operands(&got, &want),
        "0x%" PRIx64 " (%02x %02x %02x %02x): operands: %u [t%d s%u w%d r%d b%d d%" PRId64 " i%" PRId64
        "] [t%d s%u w%d r%d i%" PRId64 "] / %u [t%d s%u w%d r%d b%d d%" PRId64 " i%" PRId64 "] [t%d s%u w%d r%d i%" PRId64 "]",
        addr, code[0], avail > 1 ? code[1] : 0, avail > 2 ? code[2] : 0, avail > 3 ? code[3] : 0, got.nops,
        got.op[0].type, got.op[0].size, got.op[0].written, got.op[0].reg, got.op[0].base, got.op[0].disp,
        got.op[0].imm, got.op[1].type, got.op[1].size, got.op[1].written, got.op[1].reg, got.op[1].imm, want.nops,
        want.op[0].type, want.op[0].size, want.op[0].written, want.op[0].reg, want.op[0].base, want.op[0].disp,
        want.op[0].imm, want.op[1].type, want.op[1].size, want.op[1].written, want.op[1].reg, want.op[1].imm);
  uint16_t gprs = x64_insn_gprs_written(&want); /* Zydis's operands: want.quick is false */
  CHECK(got.quick && x64_quick_gprs_written(&got) == gprs,
        "0x%" PRIx64 " (%02x %02x %02x %02x): general-purpose registers written %04x, Zydis's %04x", addr, code[0],
        avail > 1 ? code[1] : 0, avail > 2 ? code[2] : 0, avail > 3 ? code[3] : 0, x64_quick_gprs_written(&got), gprs);
}

/* The .text of the ELF file PATH, read whole; NULL (and a note) when absent. */
static uint8_t *read_text(const char *path, size_t *size, uint64_t *addr) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  rewind(f);
  uint8_t *image = malloc((size_t)n);
  if (!image || fread(image, 1, (size_t)n, f) != (size_t)n) {
    fclose(f);
    free(image);
    return NULL;
  }
  fclose(f);
  const Elf64_Ehdr *eh = (const Elf64_Ehdr *)image;
  const Elf64_Shdr *sh = (const Elf64_Shdr *)(image + eh->e_shoff);
  const char *names = (const char *)image + sh[eh->e_shstrndx].sh_offset;
  for (unsigned i = 0; i < eh->e_shnum; i++) {
    if (strcmp(names + sh[i].sh_name, ".text") != 0) continue;
    uint8_t *text = malloc(sh[i].sh_size);
    memcpy(text, image + sh[i].sh_offset, sh[i].sh_size);
    *size = sh[i].sh_size;
    *addr = sh[i].sh_addr;
    free(image);
    return text;
  }
  free(image);
  return NULL;
}

/* Every instruction of a linear sweep of PATH's .text. */
static void sweep_binary(const char *path) {
  const char *name = path;
  size_t size;
  uint64_t addr;
  uint8_t *text = read_text(path, &size, &addr);
  CHECK(text != NULL, "cannot read the .text of %s", path);
  if (!text) return;
  tally t = {0};
  for (size_t at = 0; at < size;) {
    compare(name, text + at, size - at, addr + at, &t);
    x64_insn in;
    at += x64_decode_zydis(text + at, size - at, addr + at, &in) ? in.len : 1;
  }
  printf("%s: %zu instructions, %zu (%.0f%%) from the table\n", path, t.decoded, t.quick,
         t.decoded ? 100.0 * (double)t.quick / (double)t.decoded : 0.0);
  CHECK(t.quick * 2 > t.decoded, "the table decoded only %zu of %zu", t.quick, t.decoded);
  free(text);
}

/* Random bytes behind each prefix choice and opcode: every combination the
 * table may take, with random ModRM, SIB, displacements and immediates. */
static void random_bytes(void) {
  const char *name = "random";
  static const uint8_t prefixes[][3] = {{0},          {0x66},       {0x48},       {0x41},      {0x4c},
                                        {0x66, 0x41}, {0x66, 0x48}, {0x40},       {0x66, 0x66}, {0x2e},
                                        {0x66, 0x2e}, {0x66, 0x66, 0x2e}};
  static const size_t nprefix[] = {0, 1, 1, 1, 1, 2, 2, 1, 2, 1, 2, 3};
  uint64_t seed = 0x9e3779b97f4a7c15u;
  tally t = {0};
  for (int round = 0; round < 400; round++)
    for (int two = 0; two < 2; two++)
      for (int op = 0; op < 256; op++)
        for (size_t p = 0; p < sizeof nprefix / sizeof nprefix[0]; p++) {
          uint8_t code[16];
          size_t n = 0;
          for (size_t k = 0; k < nprefix[p]; k++) code[n++] = prefixes[p][k];
          if (two) code[n++] = 0x0f;
          code[n++] = (uint8_t)op;
          while (n < sizeof code) {
            seed = seed * 6364136223846793005u + 1442695040888963407u;
            code[n++] = (uint8_t)(seed >> 56);
          }
          size_t avail = round % 7 == 0 ? (size_t)(seed >> 40) % sizeof code : sizeof code; /* short reads */
          compare(name, code, avail, 0x400000 + (seed >> 48), &t);
        }
  printf("random: %zu valid, %zu from the table\n", t.decoded, t.quick);
  CHECK(t.quick > 1000, "the table decoded only %zu random instructions", t.quick);
}

/* The transactional instructions, which Zydis files with the conditional
 * branches: xend and xabort fall through (libc's lock-elision unlock was
 * refused: xend taken for a jcc to 0); xbegin's fallback is a relative
 * target no jcc rewriting may move. */
static void transactions(void) {
  const char *name = "transactions";
  static const struct {
    uint8_t bytes[6];
    size_t len;
    x64_flow flow;
  } cases[] = {
      {{0x0f, 0x01, 0xd5}, 3, X64_FLOW_NEXT},                    /* xend */
      {{0xc6, 0xf8, 0x07}, 3, X64_FLOW_NEXT},                    /* xabort 7 */
      {{0xc7, 0xf8, 0x10, 0x00, 0x00, 0x00}, 6, X64_FLOW_UNSUPPORTED}, /* xbegin +0x10 */
      {{0x0f, 0x84, 0x10, 0x00, 0x00, 0x00}, 6, X64_FLOW_JCC},   /* je +0x10: still a jcc */
  };
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    x64_insn in;
    bool ok = x64_decode(cases[k].bytes, cases[k].len, 0x1000, &in);
    CHECK(ok && in.len == cases[k].len && in.flow == cases[k].flow, "case %zu (%02x %02x %02x): len %u flow %d",
          k, cases[k].bytes[0], cases[k].bytes[1], cases[k].bytes[2], ok ? in.len : 0, ok ? (int)in.flow : -1);
  }
}

int main(int argc, char **argv) {
  transactions();
  random_bytes();
  /* binaries on every machine the README sets up, and whatever is named */
  sweep_binary("/usr/lib/x86_64-linux-gnu/libc.so.6");
  sweep_binary("/usr/lib/x86_64-linux-gnu/liblua5.4.so.0");
  sweep_binary("/usr/lib/x86_64-linux-gnu/libZydis.so.4.0");
  sweep_binary("/usr/bin/bash");
  for (int i = 1; i < argc; i++) sweep_binary(argv[i]);
  printf("test_decode: %d of %d checks failed\n", failures, checks);
  return failures != 0;
}
