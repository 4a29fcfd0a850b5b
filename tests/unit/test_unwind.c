/* test_unwind.c — unwind information for copies (relocate/reloc_unwind.h,
 * core/eh_frame.c's core_eh_frame_find), checked by independent consumers.
 *
 * A C++ source is compiled at test time with g++ into shared objects (-O2,
 * -O0, -O1 with frame pointers), whose functions cover pushes and pops,
 * frame-pointer CFAs, remember/restore state (early returns), alloca, jump
 * tables, catch clauses, exception specifications and cleanups.
 *
 * 1. CFI oracle (libdw): every function with an FDE is planned at link-time
 *    addresses with every probe on (entry, block counters, edges, call
 *    sites: the copy moves the most), its fragment is built for a DEST and
 *    written into a small ELF file in memory; libdw's dwarf_cfi_addrframe
 *    reads the original from the .so and the fragment from that file, and
 *    for every original instruction X the CFA rule and the rules of
 *    registers 0-16 (16: return address) at X must equal those at the copy
 *    of X; the same for every byte the origin map gives to X (probes, stubs),
 *    a CFA computed from rsp (DW_OP_bregx 7) raised by the map's sp_below.
 *    core_eh_frame_find must agree with libdw on each FDE's range.
 * 2. Execution (libgcc, libstdc++): the objects are dlopen'ed, functions
 *    relocated in-process next to them, the fragment registered with
 *    __register_frame, and in a child process each: a throw caught by a
 *    catch clause of the copy (translated LSDA), a throw passing through the
 *    copy running its cleanup to a native catch, glibc backtrace() from a
 *    callee of the copy giving the same frames as through the original (the
 *    copy's frame in the copy).  Negative control: the same throw through an
 *    unregistered copy must end the child by std::terminate.
 * 3. The target side (core/unwind.c, core_remote_call): a forked child,
 *    traced and stopped, gets the fragment registered by a flush (a remote
 *    call of its __register_frame_info); then it runs the copy's catch
 *    clauses itself.  core_remote_call is also checked on six arguments and
 *    the stack alignment the ABI promises at a function's entry.
 * No arguments; exit status 0 when all pass (77, skipped, without g++). */
#include <dlfcn.h>
#include <elf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "eh_frame.h"
#include "image.h"
#include "reloc.h"
#include "reloc_unwind.h"
#include "target.h"
#include "unit.h"
#include "unwind.h"

static const char source[] =
    "#include <stdexcept>\n"
    "#include <execinfo.h>\n"
    "#include <string.h>\n"
    "#include <alloca.h>\n"
    "extern \"C\" {\n"
    "__attribute__((noinline)) int thrower(int x) {\n"
    "  if (x < 0) throw std::runtime_error(\"negative\");\n"
    "  if (x == 7) throw 7;\n"
    "  if (x == 8) throw 8.0;\n"
    "  return x * 3;\n"
    "}\n"
    "int catcher(int x) {\n"
    "  int r;\n"
    "  try { r = thrower(x); } catch (const std::runtime_error &) { r = -1; } catch (int v) { r = 100 + v; }\n"
    "  catch (...) { r = -2; }\n"
    "  return r;\n"
    "}\n"
    "struct Guard { int *p; ~Guard() { (*p)++; } };\n"
    "int cleaner(int x, int *g) { Guard gd{g}; int r = thrower(x); return r * 2 + thrower(r); }\n"
    "int catch_all(int (*fn)(int, int *), int x, int *g) {\n"
    "  try { return fn(x, g); } catch (...) { return -999; }\n"
    "}\n"
    "void *frames[64]; int nframes;\n"
    "__attribute__((noinline)) int leaf_bt(void) { nframes = backtrace(frames, 64); return nframes; }\n"
    "int outer_bt(void) { int k = leaf_bt(); return k + 1; }\n"
    "__attribute__((noinline)) int invoke(int (*f)(void)) { return f() + 0 * nframes; }\n"
    "__attribute__((noinline)) int sink(volatile char *p, int n) { return p[0] + n; }\n"
    "int early(int a, int b, int c) {\n"
    "  if (a == 0) return b;\n"
    "  int s = 0;\n"
    "  for (int i = 0; i < a; i++) s += sink((volatile char *)&s, i * b + c);\n"
    "  if (s > 1000) return s - c;\n"
    "  return s + thrower(b);\n"
    "}\n"
    "int stacky(int n) { char *p = (char *)alloca(n + 16); memset(p, n, n + 16); return sink(p, n) + sink(p + n, 1); }\n"
    "int table(int k, int v) {\n"
    "  switch (k) { case 0: return sink((volatile char *)&v, 1); case 1: return v * 7; case 2: return v - 3;\n"
    "  case 3: return sink((volatile char *)&k, v); case 4: return v << 2; case 5: return v ^ 55; default: return 0; }\n"
    "}\n"
    "int spec(int x) noexcept(false) { try { return thrower(x); } catch (double) { return -8; } }\n"
    "long six(long a, long b, long c, long d, long e, long f) { return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f; }\n"
    "int stack_aligned(void) { volatile char x __attribute__((aligned(16))) = 1; return ((unsigned long)&x & 15) == 0 && x; }\n"
    "}\n";

static const struct variant {
  const char *tag, *flags;
} variants[] = {
    {"O2", "-O2"},
    {"O0", "-O0"},
    {"O1fp", "-O1 -fno-omit-frame-pointer"},
};

/* {=== the CFI oracle (libdw) ===*/

#define DEST 0x70000000ull
#define EH_ADDR 0x60000000ull

/* A minimal ELF file holding one .eh_frame section at EH_ADDR, in memory. */
static Elf *eh_elf(const uint8_t *eh, size_t size, uint8_t **keep) {
  static const char names[] = "\0.eh_frame\0.shstrtab";
  size_t shoff = (sizeof(Elf64_Ehdr) + size + sizeof names + 7) & ~(size_t)7;
  size_t total = shoff + 3 * sizeof(Elf64_Shdr);
  uint8_t *buf = calloc(1, total);
  Elf64_Ehdr *eh_hdr = (Elf64_Ehdr *)buf;
  memcpy(eh_hdr->e_ident, ELFMAG, SELFMAG);
  eh_hdr->e_ident[EI_CLASS] = ELFCLASS64;
  eh_hdr->e_ident[EI_DATA] = ELFDATA2LSB;
  eh_hdr->e_ident[EI_VERSION] = EV_CURRENT;
  eh_hdr->e_type = ET_EXEC;
  eh_hdr->e_machine = EM_X86_64;
  eh_hdr->e_version = EV_CURRENT;
  eh_hdr->e_ehsize = sizeof(Elf64_Ehdr);
  eh_hdr->e_shoff = shoff;
  eh_hdr->e_shentsize = sizeof(Elf64_Shdr);
  eh_hdr->e_shnum = 3;
  eh_hdr->e_shstrndx = 2;
  memcpy(buf + sizeof(Elf64_Ehdr), eh, size);
  memcpy(buf + sizeof(Elf64_Ehdr) + size, names, sizeof names);
  Elf64_Shdr *shdr = (Elf64_Shdr *)(buf + shoff);
  shdr[1] = (Elf64_Shdr){.sh_name = 1, .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC, .sh_addr = EH_ADDR,
                       .sh_offset = sizeof(Elf64_Ehdr), .sh_size = size, .sh_addralign = 8};
  shdr[2] = (Elf64_Shdr){.sh_name = 11, .sh_type = SHT_STRTAB, .sh_offset = sizeof(Elf64_Ehdr) + size,
                       .sh_size = sizeof names, .sh_addralign = 1};
  *keep = buf;
  return elf_memory((char *)buf, total);
}

/* The CFA and register 0-16 rules at PC, printed into OUT (a canonical
 * text: atoms and operands); false when libdw has no frame there. */
static bool rules_at(Dwarf_CFI *cfi, uint64_t pc, char *out, size_t size) {
  Dwarf_Frame *frame;
  if (dwarf_cfi_addrframe(cfi, pc, &frame) != 0) return false;
  size_t used = 0;
  Dwarf_Op *ops, mem[3];
  size_t nops;
  int rc = dwarf_frame_cfa(frame, &ops, &nops);
  used += (size_t)snprintf(out + used, size - used, "cfa(%d):", rc);
  for (size_t k = 0; rc == 0 && k < nops && used < size; k++)
    used += (size_t)snprintf(out + used, size - used, " %x/%" PRIu64 "/%" PRIu64, ops[k].atom, ops[k].number,
                             ops[k].number2);
  for (int r = 0; r <= 16 && used < size; r++) {
    rc = dwarf_frame_register(frame, r, mem, &ops, &nops);
    used += (size_t)snprintf(out + used, size - used, "; r%d(%d,%s):", r, rc,
                             nops ? "ops" : ops ? "undefined" : "same");
    for (size_t k = 0; rc == 0 && k < nops && used < size; k++)
      used += (size_t)snprintf(out + used, size - used, " %x/%" PRIu64 "/%" PRIu64, ops[k].atom, ops[k].number,
                               ops[k].number2);
  }
  free(frame);
  return true;
}

typedef struct so_file {
  const char *path;
  core_image image;
  Elf *elf;
  core_eh_frame frame;
  uint64_t except_hi; /* end of .gcc_except_table */
} so_file;

static reloc_cfi to_reloc_cfi(const core_cfi *c, const uint8_t *lsda_bytes, uint64_t lsda_hi) {
  return (reloc_cfi){.pc_begin = c->pc_begin, .pc_range = c->pc_range, .code_align = c->code_align,
                     .data_align = c->data_align, .ra_reg = c->ra_reg, .signal_frame = c->signal_frame,
                     .cie_program = c->cie_program, .cie_program_size = c->cie_program_size,
                     .fde_program = c->fde_program, .fde_program_size = c->fde_program_size,
                     .personality_enc = c->personality_enc, .personality = c->personality, .lsda = c->lsda,
                     .lsda_bytes = lsda_bytes, .lsda_size = c->lsda ? lsda_hi - c->lsda : 0};
}

static void oracle_function(const char *tag, const so_file *so, Dwarf_CFI *orig, const char *fname,
                            uint64_t lo, uint64_t size, size_t *nfns, size_t *npoints) {
  char name[160];
  snprintf(name, sizeof name, "%s %s", tag, fname);
  core_cfi cc;
  if (core_eh_frame_find(&so->frame, lo, &cc) != LP_OK) return; /* no FDE: nothing to build */
  Dwarf_Frame *f;
  Dwarf_Addr start = 0, end = 0;
  if (dwarf_cfi_addrframe(orig, lo, &f) == 0) {
    dwarf_frame_info(f, &start, &end, NULL);
    free(f);
  }
  /* libdw's [start, end) is the row's, within the FDE's range */
  CHECK(cc.pc_begin <= lo && start >= cc.pc_begin && end <= cc.pc_begin + cc.pc_range,
        "core_eh_frame_find gives [0x%" PRIx64 ", +0x%" PRIx64 "), libdw's row [0x%" PRIx64 ", 0x%" PRIx64 ")",
        cc.pc_begin, cc.pc_range, (uint64_t)start, (uint64_t)end);
  reloc_function_desc d = {.entry = lo, .lo = lo, .hi = lo + size, .code = so->image.bytes,
                           .code_base = so->image.base, .code_size = so->image.size};
  reloc_probes all = {.entry = true, .blocks = RELOC_BLOCKS_COUNT, .arcs = true, .calls = true};
  reloc_plan *p;
  reloc_info info;
  if (reloc_plan_function(&d, &all, &p, &info) != LP_OK) {
    printf("  %s: not relocated (%s)\n", name, lp_error());
    return;
  }
  const uint8_t *lsda = cc.lsda ? so->image.bytes + (cc.lsda - so->image.base) : NULL;
  reloc_cfi cfi = to_reloc_cfi(&cc, lsda, so->except_hi);
  uint8_t *scratch = malloc(info.copy_size + 1); /* emitted first: where each instruction went */
  lp_status emitted = scratch ? reloc_emit(p, DEST, scratch, DEST + (1u << 20), NULL, NULL) : LP_ERR;
  free(scratch);
  reloc_unwind u;
  if (emitted != LP_OK || reloc_unwind_build(p, &cfi, DEST, &u) != LP_OK) {
    CHECK(0, "build: %s", lp_error());
    reloc_plan_free(p);
    return;
  }
  CHECK(!cc.lsda == !u.lsda, "LSDA %s", u.lsda ? "made without one" : "missing");
  uint8_t *buf;
  Elf *elf = eh_elf(u.eh, u.eh_size, &buf);
  Dwarf_CFI *copy = elf ? dwarf_getcfi_elf(elf) : NULL;
  CHECK(copy != NULL, "libdw does not read the fragment: %s", dwarf_errmsg(-1));
  char want[2048], got[2048];
  size_t points = 0;
  for (uint64_t a = lo; copy && a < lo + size; a++) { /* every instruction boundary */
    int64_t off = reloc_copy_offset(p, a);
    if (off < 0) continue;
    points++;
    bool w = rules_at(orig, a, want, sizeof want), g = rules_at(copy, DEST + (uint64_t)off, got, sizeof got);
    CHECK(w && g && !strcmp(want, got), "at 0x%" PRIx64 " (copy +0x%" PRIx64 "):\n    original %s\n    copy     %s",
          a, off, w ? want : "(none)", g ? got : "(none)");
  }
  size_t n;
  const reloc_origin *o = reloc_origins(p, &n);
  for (size_t k = 0; copy && k < n; k++) { /* every byte of the copy that stands for code */
    uint64_t x = o[k].orig, hi = k + 1 < n ? o[k + 1].offset : reloc_copy_size(p);
    if (x == RELOC_ORIGIN_DATA || x < cc.pc_begin || x >= cc.pc_begin + cc.pc_range) continue;
    bool w = rules_at(orig, x, want, sizeof want);
    unsigned long long off;
    int tail = 0;
    if (w && o[k].sp_below && sscanf(want, "cfa(0): 92/7/%llu%n", &off, &tail) == 1) { /* rsp-based CFA */
      char rest[sizeof want - 64];
      snprintf(rest, sizeof rest, "%s", want + tail);
      snprintf(want, sizeof want, "cfa(0): 92/7/%llu%s", off + o[k].sp_below, rest);
    }
    for (uint64_t y = o[k].offset; y < hi; y++) {
      bool g = rules_at(copy, DEST + y, got, sizeof got);
      points++;
      if (!(w && g && !strcmp(want, got))) {
        CHECK(0, "copy +0x%" PRIx64 " standing for 0x%" PRIx64 ":\n    original %s\n    copy     %s", y, x,
              w ? want : "(none)", g ? got : "(none)");
        break;
      }
    }
  }
  CHECK(!copy || !rules_at(copy, DEST + info.copy_size, got, sizeof got), "the fragment covers past the copy");
  *npoints += points;
  (*nfns)++;
  if (copy) dwarf_cfi_end(copy);
  if (elf) elf_end(elf);
  free(buf);
  reloc_unwind_free(&u);
  reloc_plan_free(p);
}

static bool open_so(so_file *so, const char *path) {
  so->path = path;
  if (core_image_load(path, &so->image) != LP_OK) return false;
  int fd = open(path, O_RDONLY);
  so->elf = elf_begin(fd, ELF_C_READ, NULL);
  Elf_Scn *scn = NULL;
  size_t shstrndx;
  elf_getshdrstrndx(so->elf, &shstrndx);
  while ((scn = elf_nextscn(so->elf, scn))) {
    GElf_Shdr shdr;
    gelf_getshdr(scn, &shdr);
    const char *sname = elf_strptr(so->elf, shstrndx, shdr.sh_name);
    if (!strcmp(sname, ".eh_frame"))
      so->frame = (core_eh_frame){so->image.bytes + (shdr.sh_addr - so->image.base), shdr.sh_size,
                                  shdr.sh_addr, 0, 0};
    if (!strcmp(sname, ".gcc_except_table")) so->except_hi = shdr.sh_addr + shdr.sh_size;
  }
  return so->frame.data != NULL;
}

static void test_oracle(const char *tag, const char *path) {
  const char *name = tag;
  so_file so = {0};
  if (!open_so(&so, path)) {
    CHECK(0, "cannot read %s", path);
    return;
  }
  Dwarf_CFI *orig = dwarf_getcfi_elf(so.elf);
  size_t nfns = 0, npoints = 0;
  Elf_Scn *scn = NULL;
  while ((scn = elf_nextscn(so.elf, scn))) { /* every function symbol with a size */
    GElf_Shdr shdr;
    gelf_getshdr(scn, &shdr);
    if (shdr.sh_type != SHT_SYMTAB) continue;
    Elf_Data *data = elf_getdata(scn, NULL);
    for (size_t k = 0; k < shdr.sh_size / shdr.sh_entsize; k++) {
      GElf_Sym sym;
      gelf_getsym(data, (int)k, &sym);
      if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_size || !sym.st_value) continue;
      oracle_function(tag, &so, orig, elf_strptr(so.elf, shdr.sh_link, sym.st_name), sym.st_value,
                      sym.st_size, &nfns, &npoints);
    }
  }
  printf("  %-5s %2zu functions, %5zu points compared by libdw\n", tag, nfns, npoints);
  CHECK(nfns >= 10, "only %zu functions checked", nfns);
  dwarf_cfi_end(orig);
  elf_end(so.elf);
  core_image_free(&so.image);
}

/* }=== */

/* {=== execution through libgcc and libstdc++ ===*/

typedef struct loaded {
  uint64_t base, size;
  uint8_t *bytes;     /* a readable copy, gaps 0 */
  core_eh_frame frame;
} loaded;

static int find_loaded(struct dl_phdr_info *info, size_t size, void *ctx) {
  (void)size;
  loaded *l = ctx;
  uint64_t lo = UINT64_MAX, hi = 0, hdr = 0, hdr_size = 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type == PT_GNU_EH_FRAME) hdr = info->dlpi_addr + ph->p_vaddr, hdr_size = ph->p_memsz;
    if (ph->p_type != PT_LOAD) continue;
    uint64_t a = info->dlpi_addr + ph->p_vaddr;
    if (a < lo) lo = a;
    if (a + ph->p_memsz > hi) hi = a + ph->p_memsz;
  }
  if (l->base < lo || l->base >= hi || !hdr) return 0;
  l->bytes = calloc(1, hi - lo);
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type == PT_LOAD)
      memcpy(l->bytes + (info->dlpi_addr + ph->p_vaddr - lo), (void *)(info->dlpi_addr + ph->p_vaddr), ph->p_memsz);
  }
  l->base = lo;
  l->size = hi - lo;
  uint64_t eh;
  if (core_eh_frame_hdr_target(l->bytes + (hdr - lo), hdr_size, hdr, &eh) == LP_OK && eh >= lo && eh < hi)
    l->frame = (core_eh_frame){l->bytes + (eh - lo), hi - eh, eh, 0, 0};
  return 1;
}

static uint8_t *map_near(uint64_t addr, size_t size) {
  for (uint64_t d = 1ull << 24; d < 1ull << 30; d += 1ull << 24) {
    uint64_t want = ((addr & ~0xfffull) + d) & ~0xffffull;
    void *m = mmap((void *)want, size, PROT_READ | PROT_WRITE | PROT_EXEC,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (m != MAP_FAILED) return m;
  }
  return NULL;
}

typedef struct copy {
  uint8_t *mem;       /* the copy at mem, its counters, its fragment and LSDA after */
  size_t region;
  reloc_plan *plan;
  size_t copy_size;
  reloc_unwind u;
} copy;

/* Relocates FN into memory near the object with its fragment; registers it
 * when REGISTER. */
static bool make_copy(const char *name, const loaded *l, void *fn, bool do_register, copy *c) {
  uint64_t entry = (uint64_t)fn;
  core_cfi cc;
  *c = (copy){0};
  if (core_eh_frame_find(&l->frame, entry, &cc) != LP_OK) {
    CHECK(0, "no FDE: %s", lp_error());
    return false;
  }
  /* the FDE gives the function's bounds (the first FDE of a function starts at it) */
  reloc_function_desc d = {.entry = entry, .lo = entry, .hi = cc.pc_begin + cc.pc_range, .code = l->bytes,
                           .code_base = l->base, .code_size = l->size};
  reloc_probes all = {.entry = true, .blocks = RELOC_BLOCKS_COUNT, .arcs = true, .calls = true};
  reloc_info info;
  if (reloc_plan_function(&d, &all, &c->plan, &info) != LP_OK) {
    CHECK(0, "plan: %s", lp_error());
    return false;
  }
  c->region = 1 << 20;
  c->mem = map_near(entry, c->region);
  if (!c->mem) {
    CHECK(0, "no memory near 0x%" PRIx64, entry);
    return false;
  }
  uint8_t *counters = c->mem + c->region / 2, *eh = c->mem + c->region / 4;
  const uint8_t *lsda = cc.lsda ? l->bytes + (cc.lsda - l->base) : NULL;
  reloc_cfi cfi = to_reloc_cfi(&cc, lsda, l->base + l->size);
  if (reloc_emit(c->plan, (uint64_t)c->mem, c->mem, (uint64_t)counters, NULL, NULL) != LP_OK ||
      reloc_unwind_build(c->plan, &cfi, (uint64_t)c->mem, &c->u) != LP_OK) {
    CHECK(0, "copy: %s", lp_error());
    return false;
  }
  c->copy_size = reloc_copy_size(c->plan);
  memcpy(eh, c->u.eh, c->u.eh_size);
  if (c->u.lsda) {
    uint8_t *at = eh + ((c->u.eh_size + 15) & ~(size_t)15);
    memcpy(at, c->u.lsda, c->u.lsda_size);
    reloc_unwind_place_lsda(&c->u, (uint64_t)at);
    memcpy(eh, c->u.eh, c->u.eh_size);
  }
  if (do_register) {
    /* the unwinder libstdc++ uses: libgcc_s, loaded with the object */
    void *gcc_s = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_NOLOAD);
    void (*reg)(const void *) = gcc_s ? (void (*)(const void *))dlsym(gcc_s, "__register_frame") : NULL;
    CHECK(reg != NULL, "no __register_frame");
    if (!reg) return false;
    reg(eh);
  }
  return true;
}

/* Runs BODY(ARG) in a child (which keeps its copies until it exits); its
 * exit status, or 128 + signal. */
static int in_child(int (*body)(void *), void *arg) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    alarm(20); /* a landing pad gone wrong may loop */
    int rc = body(arg);
    fflush(stdout);
    _exit(rc);
  }
  int status;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

typedef struct scenario {
  void *so;
  const loaded *l;
} scenario;

static int catcher_body(void *arg) { /* 0: every result as native */
  const scenario *s = arg;
  const char *name = "catcher";
  copy c;
  int (*native)(int) = (int (*)(int))dlsym(s->so, "catcher");
  if (!make_copy(name, s->l, (void *)native, true, &c)) return 2;
  int (*fn)(int) = (int (*)(int))(void *)c.mem;
  static const int args[] = {5, -1, 7, 8, 0};
  for (size_t k = 0; k < sizeof args / sizeof *args; k++)
    if (fn(args[k]) != native(args[k])) return 3;
  return 0;
}

static int unregistered_body(void *arg) { /* must not return: terminate */
  const scenario *s = arg;
  const char *name = "unregistered";
  copy c;
  if (!freopen("/dev/null", "w", stderr)) return 2; /* terminate's message is expected */
  if (!make_copy(name, s->l, dlsym(s->so, "catcher"), false, &c)) return 2;
  return ((int (*)(int))(void *)c.mem)(-1) == -1 ? 0 : 3;
}

static int cleaner_body(void *arg) { /* 0: the cleanup ran and the native catch caught */
  const scenario *s = arg;
  const char *name = "cleaner";
  copy c;
  if (!make_copy(name, s->l, dlsym(s->so, "cleaner"), true, &c)) return 2;
  int (*catch_all)(int (*)(int, int *), int, int *) =
      (int (*)(int (*)(int, int *), int, int *))dlsym(s->so, "catch_all");
  int (*fn)(int, int *) = (int (*)(int, int *))(void *)c.mem;
  int g = 0;
  if (catch_all(fn, 2, &g) != 2 * 6 + 18 || g != 1) return 3;  /* no throw */
  if (catch_all(fn, -1, &g) != -999 || g != 2) return 4;       /* first call throws */
  if (catch_all(fn, 7, &g) != -999 || g != 3) return 5;
  return 0;
}

static int backtrace_body(void *arg) { /* 0: same frames as through the original */
  const scenario *s = arg;
  const char *name = "backtrace";
  copy c;
  void *outer = dlsym(s->so, "outer_bt");
  if (!make_copy(name, s->l, outer, true, &c)) return 2;
  int (*invoke)(int (*)(void)) = (int (*)(int (*)(void)))dlsym(s->so, "invoke");
  void **frames = dlsym(s->so, "frames");
  int *nframes = dlsym(s->so, "nframes");
  void *native[64];
  int nnative = 0;
  for (volatile int run = 0; run < 2; run++) { /* one call site: the frames below are alike */
    invoke(run ? (int (*)(void))(void *)c.mem : (int (*)(void))outer);
    if (run == 0) nnative = *nframes, memcpy(native, frames, sizeof native);
  }
  if (*nframes != nnative || nnative < 4) return 3;
  int in_copy = 0;
  for (int k = 0; k < nnative; k++) {
    uint64_t f = (uint64_t)frames[k];
    if (f > (uint64_t)c.mem && f <= (uint64_t)c.mem + c.copy_size) {
      in_copy++;
      uint64_t o = (uint64_t)native[k];
      if (o <= (uint64_t)outer || o > (uint64_t)outer + 0x1000) return 4; /* the original's frame there */
    } else if (frames[k] != native[k]) {
      return 5;
    }
  }
  return in_copy == 1 ? 0 : 6;
}

static void test_execution(const char *tag, const char *path) {
  char name[64];
  snprintf(name, sizeof name, "%s execution", tag);
  void *so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  CHECK(so != NULL, "dlopen: %s", dlerror());
  if (!so) return;
  loaded l = {.base = (uint64_t)dlsym(so, "catcher")};
  dl_iterate_phdr(find_loaded, &l);
  CHECK(l.frame.data != NULL, "loaded object or its .eh_frame not found");
  if (l.frame.data) {
    scenario s = {so, &l};
    int rc;
    CHECK((rc = in_child(catcher_body, &s)) == 0, "catch clauses of the copy: child status %d", rc);
    CHECK((rc = in_child(cleaner_body, &s)) == 0, "cleanup in the copy, caught natively: child status %d", rc);
    CHECK((rc = in_child(backtrace_body, &s)) == 0, "backtrace() through the copy: child status %d", rc);
    CHECK((rc = in_child(unregistered_body, &s)) == 128 + SIGABRT,
          "negative control: a throw through an unregistered copy ended with status %d, not SIGABRT", rc);
  }
  free(l.bytes);
  dlclose(so);
}

/* }=== */

/* {=== the target side: registration through ptrace ===*/

static int traced_child(int (*fn)(int), int (*native)(int)) {
  alarm(20);
  if (ptrace(PTRACE_TRACEME, 0, 0, 0) != 0) return 10;
  kill(getpid(), SIGSTOP); /* the parent registers the copy's fragment meanwhile */
  static const int args[] = {5, -1, 7, 8, 0};
  for (size_t k = 0; k < sizeof args / sizeof *args; k++)
    if (fn(args[k]) != native(args[k])) return 11;
  return 0;
}

static void remote_steps(const char *name, pid_t pid, void *so, const copy *c) {
  core_target t;
  if (core_target_open(pid, &t) != LP_OK) {
    CHECK(0, "%s", lp_error());
    return;
  }
  uint64_t scratch = (uint64_t)c->mem + c->region - 16, data = (uint64_t)c->mem + 3 * c->region / 4, ret = 0;
  int deferred = 0;
  uint64_t args[6] = {1, 2, 3, 4, 5, 6};
  CHECK(core_remote_call(&t, pid, scratch, (uint64_t)dlsym(so, "six"), args, &ret, &deferred, NULL) == LP_OK &&
            ret == 1 + 4 + 9 + 16 + 25 + 36,
        "remote six(1..6) = %" PRIu64 ": %s", ret, lp_error());
  CHECK(core_remote_call(&t, pid, scratch, (uint64_t)dlsym(so, "stack_aligned"), args, &ret, &deferred, NULL) == LP_OK &&
            (int)ret == 1,
        "remote call entered with a misaligned stack (%" PRIu64 ")", ret);
  core_unwind *u = NULL;
  void *gcc_s = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_NOLOAD);
  void *reg = gcc_s ? dlsym(gcc_s, "__register_frame_info") : NULL;
  size_t used = 0;
  CHECK(reg != NULL, "no __register_frame_info");
  if (reg && core_unwind_new(&u) == LP_OK && core_unwind_add(u, (uint64_t)c->mem, (uint64_t)c->mem, &c->u) == LP_OK) {
    size_t want = core_unwind_flush_size(u);
    CHECK(core_unwind_pending(u) == 1 && want > CORE_UNWIND_OBJECT_ROOM, "pending %zu, %zu bytes",
          core_unwind_pending(u), want);
    CHECK(core_unwind_flush(u, &t, pid, scratch, (uint64_t)reg, data, want - 1, &used, &deferred, NULL) != LP_OK &&
              used == 0 && core_unwind_pending(u) == 1,
          "a flush without room must fail and keep the fragments");
    CHECK(core_unwind_flush(u, &t, pid, scratch, (uint64_t)reg, data, c->region / 8, &used, &deferred, NULL) == LP_OK &&
              used == want && core_unwind_pending(u) == 0,
          "flush: %s", lp_error());
  }
  core_unwind_free(u);
  CHECK(deferred == 0, "signal %d deferred", deferred);
  core_target_close(&t);
}

/* Four copies in two arenas, A (copies 0 and 1) and B (2 and 3), at
 * increasing addresses, registered by two flushes that each hold one copy of
 * each arena, as a program's and a library's copies come: libgcc searches
 * only the object with the greatest start at or below a pc, so one object
 * per flush (0..2, then 1..3) hid copy 2.  The child then throws through all
 * four. */
static int traced_child_four(const copy *c, int (*native)(int)) {
  alarm(20);
  if (ptrace(PTRACE_TRACEME, 0, 0, 0) != 0) return 10;
  kill(getpid(), SIGSTOP);
  static const int args[] = {5, -1, 7, 8, 0};
  for (int k = 0; k < 4; k++)
    for (size_t a = 0; a < sizeof args / sizeof *args; a++)
      if (((int (*)(int))(void *)c[k].mem)(args[a]) != native(args[a])) return 11 + k;
  return 0;
}

static void remote_two_arenas(const char *name, pid_t pid, const copy *c) {
  core_target t;
  if (core_target_open(pid, &t) != LP_OK) {
    CHECK(0, "%s", lp_error());
    return;
  }
  void *gcc_s = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_NOLOAD);
  void *reg = gcc_s ? dlsym(gcc_s, "__register_frame_info") : NULL;
  uint64_t scratch = (uint64_t)c[0].mem + c[0].region - 16, arena[2] = {(uint64_t)c[0].mem, (uint64_t)c[2].mem};
  core_unwind *u = NULL;
  int deferred = 0;
  CHECK(reg != NULL && core_unwind_new(&u) == LP_OK, "no __register_frame_info or no registry");
  for (int flush = 0; u && reg && flush < 2; flush++) {
    uint64_t data = (uint64_t)c[flush].mem + 3 * c[flush].region / 4;
    size_t used = 0;
    CHECK(core_unwind_add(u, (uint64_t)c[flush].mem, arena[0], &c[flush].u) == LP_OK &&
              core_unwind_add(u, (uint64_t)c[2 + flush].mem, arena[1], &c[2 + flush].u) == LP_OK &&
              core_unwind_flush(u, &t, pid, scratch, (uint64_t)reg, data, c[flush].region / 8, &used, &deferred,
                                NULL) == LP_OK &&
              core_unwind_pending(u) == 0,
          "flush %d: %s", flush, lp_error());
  }
  core_unwind_free(u);
  core_target_close(&t);
}

static void test_remote_two_arenas(const char *tag, const char *path) {
  char name[64];
  snprintf(name, sizeof name, "%s two arenas", tag);
  void *so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!so) return;
  loaded l = {.base = (uint64_t)dlsym(so, "catcher")};
  dl_iterate_phdr(find_loaded, &l);
  copy c[4] = {0};
  int made = 0;
  while (l.frame.data && made < 4 && make_copy(name, &l, dlsym(so, "catcher"), false, &c[made])) made++;
  bool ascending = made == 4 && c[0].mem < c[1].mem && c[1].mem < c[2].mem && c[2].mem < c[3].mem;
  CHECK(made < 4 || ascending, "the copies' memory is not in address order");
  if (ascending) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) _exit(traced_child_four(c, (int (*)(int))dlsym(so, "catcher")));
    int status = 0;
    bool stopped = pid > 0 && waitpid(pid, &status, 0) == pid && WIFSTOPPED(status);
    CHECK(stopped, "child did not stop (status 0x%x)", status);
    if (stopped) {
      remote_two_arenas(name, pid, c);
      ptrace(PTRACE_DETACH, pid, 0, 0);
      waitpid(pid, &status, 0);
      CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
            "child's catches through the four copies: status 0x%x (11 + the copy not found)", status);
    } else if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
    }
  }
  for (int k = 0; k < made; k++) {
    munmap(c[k].mem, c[k].region);
    reloc_plan_free(c[k].plan);
    reloc_unwind_free(&c[k].u);
  }
  free(l.bytes);
  dlclose(so);
}

static void test_remote(const char *tag, const char *path) {
  char name[64];
  snprintf(name, sizeof name, "%s target side", tag);
  void *so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!so) return;
  loaded l = {.base = (uint64_t)dlsym(so, "catcher")};
  dl_iterate_phdr(find_loaded, &l);
  copy c;
  if (l.frame.data && make_copy(name, &l, dlsym(so, "catcher"), false, &c)) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) _exit(traced_child((int (*)(int))(void *)c.mem, (int (*)(int))dlsym(so, "catcher")));
    int status = 0;
    bool stopped = pid > 0 && waitpid(pid, &status, 0) == pid && WIFSTOPPED(status);
    CHECK(stopped, "child did not stop (status 0x%x)", status);
    if (stopped) {
      remote_steps(name, pid, so, &c);
      ptrace(PTRACE_DETACH, pid, 0, 0);
      waitpid(pid, &status, 0);
      CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child's catch through the registered copy: status 0x%x",
            status);
    } else if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
    }
    munmap(c.mem, c.region);
    reloc_plan_free(c.plan);
    reloc_unwind_free(&c.u);
  }
  free(l.bytes);
  dlclose(so);
}

/* }=== */

int main(void) {
  const char *name = "setup";
  char dir[] = "/tmp/test_unwind.XXXXXX";
  if (!mkdtemp(dir)) return 1;
  char *src = fmt("%s/fns.cc", dir);
  FILE *fp = fopen(src, "w");
  if (!fp) return 1;
  fputs(source, fp);
  fclose(fp);
  elf_version(EV_CURRENT);
  int skipped = 0;
  for (size_t v = 0; v < sizeof variants / sizeof *variants; v++) {
    char *so = fmt("%s/fns-%s.so", dir, variants[v].tag);
    char *cmd = fmt("g++ %s -fPIC -shared -o '%s' '%s'", variants[v].flags, so, src);
    if (sh(cmd) != 0) {
      skipped = 1;
    } else {
      test_oracle(variants[v].tag, so);
      test_execution(variants[v].tag, so);
      test_remote(variants[v].tag, so);
      test_remote_two_arenas(variants[v].tag, so);
    }
    free(cmd);
    free(so);
  }
  char *rm = fmt("rm -rf '%s'", dir);
  if (system(rm) != 0) printf("test_unwind: could not remove %s\n", dir);
  free(rm);
  free(src);
  CHECK(1, "done");
  if (skipped && checks <= 1) {
    printf("test_unwind: g++ not usable, skipped\n");
    return 77;
  }
  if (failures) {
    printf("test_unwind: %d of %d checks failed\n", failures, checks);
    return 1;
  }
  printf("test_unwind: all %d checks passed\n", checks);
  return 0;
}
