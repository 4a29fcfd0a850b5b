/* module.c — opening an ELF module (validation, executable segments) and
 * discovering its functions: .symtab and .dynsym function symbols merged with
 * the .eh_frame FDEs (eh_frame.c), PLT stubs and non-code left out, one entry
 * per address with a size and the room up to the next function, a cold part
 * (gcc's NAME.cold) and its hot part linked; and the GOT slots of its PLT
 * stubs (.rela.plt JUMP_SLOTs) by symbol name; the functions, named or
 * through their stubs, a call to which returns twice (setjmp, fork, forkpty,
 * daemon, and a function of the module that forks through any chain of its
 * calls: sweeps of their bytes), never (exit,
 * or by its code), or as its first argument says (error, syscall).  core_module_exports looks
 * up a few exported functions without any of that (libc's dlopen and dlsym). */
#include "module.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "eh_frame.h"
#include "lp_sort.h"
#include "x64_decode.h"

/* A range of code where functions may lie: an executable section, or an
 * executable segment when the file has no section headers. */
typedef struct code_range {
  uint64_t addr, size;
  int is_plt; /* .plt, .plt.got, .plt.sec, ...: stubs, not functions */
} code_range;

typedef struct module_internal {
  uint8_t *image; /* the whole file, mapped private */
  size_t image_size;
  char *names;        /* every core_function.name, back to back */
  uint64_t *max_end;  /* max_end[i] = max(addr + size) over functions[0..i] */
  core_eh_frame frame; /* its .eh_frame (data NULL when none) */
  core_fde *fdes;      /* its FDEs in code, sorted by pc_begin */
  size_t nfdes;
  uint8_t *returns;    /* per function, 0 not known yet, else a returns_how (core_module_callee) */
  bool forks;          /* a function or PLT stub of it forks (CORE_CALLEE_FORKS) */
} module_internal;

/* One piece of evidence that a function starts at addr. */
typedef struct candidate {
  uint64_t addr, size;
  const char *name; /* NULL for an FDE or an unnamed symbol */
  unsigned source;  /* one enum core_function_source bit */
  int bind_rank;    /* 0 GLOBAL, 1 WEAK, 2 LOCAL, 3 other */
} candidate;

typedef struct candidates {
  candidate *v;
  size_t n, cap;
} candidates;

static int push(candidates *c, candidate x) {
  if (c->n == c->cap) {
    size_t ncap = c->cap ? 2 * c->cap : 1024;
    candidate *grown = realloc(c->v, ncap * sizeof *grown);
    if (!grown) return -1;
    c->v = grown;
    c->cap = ncap;
  }
  c->v[c->n++] = x;
  return 0;
}

/* {=== validation ===*/

static const char *machine_name(unsigned m) {
  switch (m) {
  case EM_386: return "i386";
  case EM_ARM: return "ARM";
  case EM_AARCH64: return "AArch64";
  case EM_RISCV: return "RISC-V";
  case EM_PPC: return "PowerPC";
  case EM_PPC64: return "PowerPC64";
  case EM_S390: return "S/390";
  case EM_MIPS: return "MIPS";
  case EM_SPARCV9: return "SPARC V9";
  case EM_IA_64: return "IA-64";
  case EM_LOONGARCH: return "LoongArch";
  default: return NULL;
  }
}

static uint16_t le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

/* Checks the identification and header fields that decide whether we can read
 * the file at all, before libelf sees it. */
static lp_status check_header(const char *path, const uint8_t *img, size_t size) {
  if (size < EI_NIDENT || memcmp(img, ELFMAG, SELFMAG) != 0)
    return lp_fail("%s: not an ELF file", path);
  if (img[EI_CLASS] == ELFCLASS32) return lp_fail("%s: 32-bit ELF is not supported yet", path);
  if (img[EI_CLASS] != ELFCLASS64)
    return lp_fail("%s: not an ELF file (unknown ELF class %u)", path, img[EI_CLASS]);
  if (img[EI_DATA] == ELFDATA2MSB) return lp_fail("%s: big-endian ELF is not supported yet", path);
  if (img[EI_DATA] != ELFDATA2LSB)
    return lp_fail("%s: not an ELF file (unknown data encoding %u)", path, img[EI_DATA]);
  if (size < sizeof(Elf64_Ehdr)) return lp_fail("%s: truncated ELF file (no complete header)", path);
  unsigned type = le16(img + offsetof(Elf64_Ehdr, e_type));
  unsigned machine = le16(img + offsetof(Elf64_Ehdr, e_machine));
  if (machine != EM_X86_64) {
    const char *name = machine_name(machine);
    if (name) return lp_fail("%s: ELF for machine %u (%s) is not supported yet", path, machine, name);
    return lp_fail("%s: ELF for machine %u is not supported yet", path, machine);
  }
  switch (type) {
  case ET_EXEC: case ET_DYN: break;
  case ET_REL:
    return lp_fail("%s: a relocatable object file (ET_REL), not an executable: link it first", path);
  case ET_CORE: return lp_fail("%s: a core file (ET_CORE), not an executable", path);
  default: return lp_fail("%s: ELF type %u is not an executable or a shared library", path, type);
  }
  Elf64_Ehdr eh; /* the host is little-endian too */
  memcpy(&eh, img, sizeof eh);
  uint64_t phend = eh.e_phoff + (uint64_t)eh.e_phnum * eh.e_phentsize;
  uint64_t shend = eh.e_shoff + (uint64_t)(eh.e_shnum ? eh.e_shnum : 1) * eh.e_shentsize;
  if (eh.e_phoff > size || phend > size || (eh.e_shoff && (eh.e_shoff > size || shend > size)))
    return lp_fail("%s: truncated ELF file (headers lie beyond the end of the file)", path);
  return LP_OK;
}

/* Maps PATH privately after checking it is a readable regular file. */
static lp_status map_file(const char *path, uint8_t **image, size_t *size) {
  struct stat st;
  if (stat(path, &st) != 0) return lp_fail("%s: %s", path, strerror(errno));
  if (S_ISDIR(st.st_mode)) return lp_fail("%s: not a regular file (a directory)", path);
  if (!S_ISREG(st.st_mode)) return lp_fail("%s: not a regular file", path);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return lp_fail("%s: not readable: %s", path, strerror(errno));
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) { /* replaced meanwhile */
    close(fd);
    return lp_fail("%s: not a regular file", path);
  }
  if (st.st_size == 0) {
    close(fd);
    return lp_fail("%s: not an ELF file (empty)", path);
  }
  /* Writable but private: libelf may touch its image, the file never changes. */
  void *p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  int err = errno;
  close(fd);
  if (p == MAP_FAILED) return lp_fail("%s: not readable: %s", path, strerror(err));
  *image = p;
  *size = (size_t)st.st_size;
  return LP_OK;
}
/* }=== */

/* {=== code ranges ===*/

static int cmp_range(const void *a, const void *b) {
  const code_range *x = a, *y = b;
  return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The code range that holds ADDR (sorted, non-overlapping), or NULL. */
static const code_range *range_at(const code_range *r, size_t n, uint64_t addr) {
  size_t lo = 0, hi = n;
  while (lo < hi) { /* first range with addr > ADDR */
    size_t mid = lo + (hi - lo) / 2;
    if (r[mid].addr <= addr) lo = mid + 1; else hi = mid;
  }
  if (lo == 0) return NULL;
  const code_range *c = &r[lo - 1];
  return addr - c->addr < c->size ? c : NULL;
}

/* The file bytes at link-time address ADDR in any PT_LOAD, with *avail. */
static const uint8_t *loaded_bytes(Elf *elf, size_t nphdr, const uint8_t *image,
                                   size_t image_size, uint64_t addr, size_t *avail) {
  for (size_t i = 0; i < nphdr; i++) {
    GElf_Phdr ph;
    if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD) continue;
    if (addr < ph.p_vaddr || addr - ph.p_vaddr >= ph.p_filesz) continue;
    uint64_t off = ph.p_offset + (addr - ph.p_vaddr);
    if (off >= image_size) return NULL;
    uint64_t n = ph.p_filesz - (addr - ph.p_vaddr);
    if (n > image_size - off) n = image_size - off;
    *avail = (size_t)n;
    return image + off;
  }
  return NULL;
}
/* }=== */

/* {=== discovery ===*/

static int bind_rank(unsigned bind) {
  switch (bind) {
  case STB_GLOBAL: return 0;
  case STB_WEAK: return 1;
  case STB_LOCAL: return 2;
  default: return 3;
  }
}

/* Adds the defined function symbols of symbol table SCN that lie in code. */
static lp_status add_symbols(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, const code_range *ranges,
                             size_t nranges, candidates *out) {
  unsigned source = sh->sh_type == SHT_SYMTAB ? CORE_FROM_SYMTAB : CORE_FROM_DYNSYM;
  Elf_Data *data = elf_getdata(scn, NULL);
  if (!data || sh->sh_entsize == 0) return LP_OK;
  size_t count = data->d_size / sh->sh_entsize;
  for (size_t i = 1; i < count; i++) { /* entry 0 is the null symbol */
    GElf_Sym sym;
    if (!gelf_getsym(data, (int)i, &sym)) break;
    unsigned type = GELF_ST_TYPE(sym.st_info);
    if (type != STT_FUNC && type != STT_GNU_IFUNC) continue; /* an IFUNC's value is its resolver */
    if (sym.st_shndx == SHN_UNDEF) continue;
    if (sym.st_shndx < SHN_LORESERVE) {
      GElf_Shdr home;
      Elf_Scn *hs = elf_getscn(elf, sym.st_shndx);
      if (!hs || !gelf_getshdr(hs, &home) || !(home.sh_flags & SHF_EXECINSTR)) continue;
    }
    const code_range *r = range_at(ranges, nranges, sym.st_value);
    if (!r || r->is_plt) continue;
    const char *name = elf_strptr(elf, sh->sh_link, sym.st_name);
    candidate c = {sym.st_value, sym.st_size, name && *name ? name : NULL, source,
                   bind_rank(GELF_ST_BIND(sym.st_info))};
    if (push(out, c) != 0) return lp_fail("out of memory");
  }
  return LP_OK;
}

static bool fde_before(const core_fde *x, const core_fde *y) { return x->pc_begin < y->pc_begin; }
LP_MERGE_SORT(sort_fdes, core_fde, fde_before)

/* Adds one candidate per FDE that starts in code and keeps those FDEs, sorted,
 * in IN (core_module_cfi).  Malformed .eh_frame data loses only the FDEs after
 * the damage: symbols may still cover them. */
static lp_status add_fdes(module_internal *in, const code_range *ranges, size_t nranges, candidates *out) {
  core_fde *fdes;
  size_t n, kept = 0;
  (void)core_eh_frame_fdes(&in->frame, &fdes, &n); /* partial results are still right */
  for (size_t i = 0; i < n; i++) {
    const code_range *r = range_at(ranges, nranges, fdes[i].pc_begin);
    if (!r || r->is_plt) continue;
    candidate c = {fdes[i].pc_begin, fdes[i].pc_range, NULL, CORE_FROM_EH_FRAME, 3};
    if (push(out, c) != 0) {
      free(fdes);
      return lp_fail("out of memory");
    }
    fdes[kept++] = fdes[i];
  }
  core_fde *tmp = malloc((kept ? kept : 1) * sizeof *tmp);
  if (!tmp) {
    free(fdes);
    return lp_fail("out of memory");
  }
  sort_fdes(fdes, tmp, kept);
  free(tmp);
  in->fdes = fdes;
  in->nfdes = kept;
  return LP_OK;
}

static int cmp_plt_slot(const void *a, const void *b) {
  const core_plt_slot *x = a, *y = b;
  int c = strcmp(x->name, y->name);
  if (c) return c;
  return (x->got > y->got) - (x->got < y->got);
}

/* The JUMP_SLOT relocations of .rela.plt, by symbol name. */
static lp_status add_plt_slots(core_module *m, Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh) {
  Elf_Scn *symscn = elf_getscn(elf, sh->sh_link);
  GElf_Shdr symsh;
  Elf_Data *rel = elf_getdata(scn, NULL), *syms = symscn ? elf_getdata(symscn, NULL) : NULL;
  if (!rel || !syms || !gelf_getshdr(symscn, &symsh) || !sh->sh_entsize) return LP_OK;
  size_t n = sh->sh_size / sh->sh_entsize;
  core_plt_slot *v = realloc(m->plt_slots, (m->nplt_slots + n + 1) * sizeof *v);
  if (!v) return lp_fail("out of memory");
  m->plt_slots = v;
  for (size_t i = 0; i < n; i++) {
    GElf_Rela r;
    GElf_Sym sym;
    if (!gelf_getrela(rel, (int)i, &r) || GELF_R_TYPE(r.r_info) != R_X86_64_JUMP_SLOT ||
        !gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &sym))
      continue;
    const char *name = elf_strptr(elf, symsh.sh_link, sym.st_name);
    if (name && *name) v[m->nplt_slots++] = (core_plt_slot){r.r_offset, name};
  }
  qsort(m->plt_slots, m->nplt_slots, sizeof *m->plt_slots, cmp_plt_slot);
  return LP_OK;
}

/* How a call to the function NAME returns (core_callee); DEFINED: a function
 * of the module itself, EXPORTED: one it exports. */
/* NAME is LISTED (two bytes or more): every function of a module is asked
 * about (cc1: 45 000), so its first two bytes are compared before strcmp. */
static bool same_name(const char *name, const char *listed) {
  return name[0] == listed[0] && name[1] == listed[1] && !strcmp(name, listed);
}

static core_callee callee_of(const char *name, bool defined, bool exported) {
  static const char *const twice[] = {"setjmp", "sigsetjmp", "savectx", "getcontext", "qsetjmp", NULL};
  /* forkpty returns in the parent and the child, daemon in the child alone
   * (the parent exits inside it): each a count of second returns, the
   * parent's -1 for daemon, as after a longjmp (forks_through) */
  static const char *const forks[] = {"fork", "vfork", "Fork", "forkpty", "daemon", NULL};
  static const char *const never[] = {
      "exit", "_exit", "_Exit", "quick_exit", "abort", "__assert_fail", "__assert_perror_fail", "__stack_chk_fail",
      "__fortify_fail", "__chk_fail", "longjmp", "_longjmp", "siglongjmp", "__longjmp_chk", "pthread_exit",
      "__cxa_throw", "__cxa_rethrow", "__cxa_bad_cast", "__cxa_bad_typeid", "__cxa_throw_bad_array_new_length",
      "__cxa_call_unexpected", "_Unwind_Resume", "err", "errx", "verr", "verrx", "__libc_fatal", "_ZSt9terminatev",
      NULL};
  const char *bare = name;
  while (*bare == '_') bare++;
  for (size_t k = 0; twice[k]; k++)
    if (same_name(bare, twice[k])) return CORE_CALLEE_RETURNS_TWICE;
  for (size_t k = 0; forks[k]; k++)
    if (same_name(bare, forks[k])) return CORE_CALLEE_FORKS;
  if (defined && !exported) return CORE_CALLEE_RETURNS;
  for (size_t k = 0; never[k]; k++)
    if (same_name(name, never[k])) return CORE_CALLEE_NEVER_RETURNS;
  if (!strncmp(name, "_ZSt", 4) && strstr(name, "__throw_")) return CORE_CALLEE_NEVER_RETURNS; /* std::__throw_* */
  if (!strcmp(name, "error") || !strcmp(name, "error_at_line")) return CORE_CALLEE_EXITS_ON_STATUS;
  if (!strcmp(name, "syscall")) return CORE_CALLEE_SYSCALL;
  return CORE_CALLEE_RETURNS;
}

static int cmp_callee(const void *a, const void *b) {
  uint64_t x = ((const core_callee_at *)a)->addr, y = ((const core_callee_at *)b)->addr;
  return (x > y) - (x < y);
}

static lp_status add_callee(core_callee_at **v, size_t *n, uint64_t addr, core_callee kind) {
  core_callee_at *grown = realloc(*v, (*n + 1) * sizeof **v);
  if (!grown) return lp_fail("out of memory");
  *v = grown;
  grown[(*n)++] = (core_callee_at){addr, kind};
  return LP_OK;
}

/* The stubs of RANGE (a PLT section) that jump through one of the SLOTS
 * (their GOT addresses in .addr): each `jmp *slot(%rip)` (bnd or not), and
 * the endbr64 before it (.plt.sec). */
static lp_status add_plt_stubs(const core_module *m, const code_range *range, const core_callee_at *slots,
                               size_t nslots, core_callee_at **out, size_t *n) {
  size_t avail = 0;
  const uint8_t *code = core_module_code(m, range->addr, &avail);
  if (!code) return LP_OK;
  if (avail > range->size) avail = (size_t)range->size;
  uint64_t endbr = 0;
  for (size_t at = 0; at < avail;) {
    x64_insn in;
    if (!x64_decode(code + at, avail - at, range->addr + at, &in)) {
      at++;
      endbr = 0;
      continue;
    }
    for (size_t k = 0; in.flow == X64_FLOW_JMP_INDIRECT && in.rip_relative && k < nslots; k++) {
      if (slots[k].addr != in.rip_target) continue;
      LP_CHECK(add_callee(out, n, in.addr, slots[k].kind));
      if (endbr) LP_CHECK(add_callee(out, n, endbr, slots[k].kind));
    }
    bool is_endbr = in.len == 4 && !memcmp(code + at, "\xf3\x0f\x1e\xfa", 4);
    endbr = is_endbr ? in.addr : 0;
    at += in.len;
  }
  return LP_OK;
}

/* m->callees: the functions so named, and the PLT stubs of their slots. */
static lp_status find_callees(core_module *m, const code_range *ranges, size_t nranges) {
  core_callee_at *v = NULL, *slots = NULL;
  size_t n = 0, nslots = 0;
  lp_status st = LP_OK;
  for (size_t i = 0; i < m->nfunctions && st == LP_OK; i++) {
    const core_function *f = &m->functions[i];
    core_callee kind = callee_of(f->name, true, (f->sources & CORE_FROM_DYNSYM) && f->binding != CORE_BIND_LOCAL);
    if (kind != CORE_CALLEE_RETURNS) st = add_callee(&v, &n, f->addr, kind);
  }
  for (size_t k = 0; k < m->nplt_slots && st == LP_OK; k++) {
    core_callee kind = callee_of(m->plt_slots[k].name, false, false);
    if (kind != CORE_CALLEE_RETURNS) st = add_callee(&slots, &nslots, m->plt_slots[k].got, kind);
  }
  for (size_t r = 0; nslots && r < nranges && st == LP_OK; r++)
    if (ranges[r].is_plt) st = add_plt_stubs(m, &ranges[r], slots, nslots, &v, &n);
  free(slots);
  if (st != LP_OK) {
    free(v);
    return st;
  }
  if (n) qsort(v, n, sizeof *v, cmp_callee);
  m->callees = v;
  m->ncallees = n;
  for (size_t k = 0; k < n; k++) ((module_internal *)m->internal)->forks |= v[k].kind == CORE_CALLEE_FORKS;
  return LP_OK;
}

/* The longest function whose code may_return reads. */
#define MAY_RETURN_MAX 4096

/* Has F a way back to its caller: a ret, an indirect jmp, a jump out of it (a
 * tail call), code that runs on past its end, or bytes that do not decode?
 * A linear sweep of its bytes (gcc puts no data among them), made only when
 * no byte of it is a ret's (0xc3, which most functions have: decoding them
 * all cost sqlite's tracer 6 % more instructions); a function longer than
 * MAY_RETURN_MAX, or with another part, is taken to return. */
static bool may_return(const core_module *m, const core_function *f) {
  size_t avail = 0;
  const uint8_t *code = core_module_code(m, f->addr, &avail);
  if (!code || f->size > MAY_RETURN_MAX || f->part != CORE_NO_PART) return true;
  if (avail > f->size) avail = (size_t)f->size;
  if (memchr(code, 0xc3, avail)) return true;
  x64_flow last = X64_FLOW_NEXT;
  for (size_t at = 0; at < avail;) {
    x64_insn in;
    if (!x64_decode(code + at, avail - at, f->addr + at, &in)) return true;
    switch (in.flow) {
    case X64_FLOW_RET:
    case X64_FLOW_JMP_INDIRECT: return true;
    case X64_FLOW_JMP:
    case X64_FLOW_JCC:
    case X64_FLOW_JCC_SHORT:
      if (in.target < f->addr || in.target - f->addr >= f->size) return true;
      break;
    default: break;
    }
    if (!x64_is_nop(&in)) last = in.flow; /* the padding after a last call is no way on */
    at += in.len;
  }
  return last == X64_FLOW_NEXT || last == X64_FLOW_JCC || last == X64_FLOW_JCC_SHORT ||
         last == X64_FLOW_CALL_INDIRECT;
}

/* How a call to a name listed in m->callees returns, or CORE_CALLEE_RETURNS. */
static core_callee listed(const core_module *m, uint64_t addr) {
  size_t lo = 0, hi = m->ncallees;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (m->callees[mid].addr < addr) lo = mid + 1; else hi = mid;
  }
  return lo < m->ncallees && m->callees[lo].addr == addr ? m->callees[lo].kind : CORE_CALLEE_RETURNS;
}

enum returns_how { HOW_NEVER = 1, HOW_ONCE, HOW_FORKS, HOW_ASKED };

/* How deep forks_through follows calls: deeper chains are taken to return once. */
#define FORK_DEPTH_MAX 64

static enum returns_how returns_how(const core_module *m, const core_function *f, int depth);

/* Does F call a function that forks, directly (`call rel32` to fork@plt) or
 * through functions of the module that do, at any depth (a daemon's main
 * calling spawn_worker calling fork: each caller goes on in the child too),
 * by a call or a tail call (a `jmp` out of F)?  A sweep for the opcode
 * bytes, not a decoding: one met inside another instruction would have to
 * name a fork or such a function by chance, and would cost only a counter.
 * A call of F's whose callee longjmps out never returns at all: the count of
 * its second returns is then one below (reloc_flow.c takes such a count as
 * the negative it is). */
static bool forks_through(const core_module *m, const core_function *f, int depth) {
  size_t avail = 0;
  const uint8_t *code = core_module_code(m, f->addr, &avail);
  if (!code) return false;
  if (avail > f->size) avail = (size_t)f->size;
  for (const uint8_t *at = code; at + 2 <= code + avail; at++) {
    uint64_t target, next = f->addr + (uint64_t)(at - code);
    if (*at == 0xeb) { /* jmp rel8: a tail call of a function next to F */
      target = next + 2 + (uint64_t)(int64_t)(int8_t)at[1];
    } else if ((*at == 0xe8 || *at == 0xe9) && at + 5 <= code + avail) {
      int32_t rel;
      memcpy(&rel, at + 1, 4);
      target = next + 5 + (uint64_t)(int64_t)rel;
    } else {
      continue;
    }
    if (*at != 0xe8 && target - f->addr < f->size) continue; /* a jump within F, no tail call */
    if (listed(m, target) == CORE_CALLEE_FORKS) return true;
    const core_function *callee = core_module_function_at(m, target);
    if (callee && callee != f && callee->addr == target && depth < FORK_DEPTH_MAX &&
        returns_how(m, callee, depth + 1) == HOW_FORKS)
      return true;
  }
  return false;
}

/* How a call to F returns, kept from then on (HOW_ONCE, kept nowhere, when
 * there is no room to keep it).  What a chain deeper than FORK_DEPTH_MAX, or
 * one that loops back to a function still being swept (HOW_ASKED), would
 * add is not looked for: such a function is kept as returning once, even
 * when asked again later from nearer. */
static enum returns_how returns_how(const core_module *m, const core_function *f, int depth) {
  module_internal *in = m->internal;
  if (!in->returns && !(in->returns = calloc(m->nfunctions, 1))) return HOW_ONCE;
  uint8_t *known = &in->returns[f - m->functions];
  if (*known == HOW_ASKED) return HOW_ONCE; /* a cycle of calls */
  if (!*known) {
    if (!may_return(m, f)) {
      *known = HOW_NEVER;
    } else if (!in->forks) {
      *known = HOW_ONCE;
    } else {
      *known = HOW_ASKED;
      *known = forks_through(m, f, depth) ? HOW_FORKS : HOW_ONCE;
    }
  }
  return (enum returns_how)*known;
}

core_callee core_module_callee(const core_module *m, uint64_t addr) {
  core_callee kind = listed(m, addr);
  if (kind != CORE_CALLEE_RETURNS) return kind;
  const core_function *f = core_module_function_at(m, addr);
  if (!f || f->addr != addr) return CORE_CALLEE_RETURNS;
  enum returns_how how = returns_how(m, f, 0);
  return how == HOW_NEVER ? CORE_CALLEE_NEVER_RETURNS : how == HOW_FORKS ? CORE_CALLEE_FORKS : CORE_CALLEE_RETURNS;
}

/* Writes "fn_" and ADDR in lowercase hex, as "fn_%" PRIx64 does, and its
 * NUL at P; returns where the next name goes (a stripped cc1 names 45 000
 * functions so: sprintf was a tenth of reading it). */
static char *put_fn_name(char *p, uint64_t addr) {
  char digits[16];
  size_t n = 0;
  do digits[n++] = "0123456789abcdef"[addr & 15];
  while (addr >>= 4);
  memcpy(p, "fn_", 3);
  p += 3;
  while (n) *p++ = digits[--n];
  *p++ = '\0';
  return p;
}

/* Does X come before Y: by address, then the best name first (.symtab
 * before .dynsym, GLOBAL > WEAK > LOCAL, shorter, then by bytes). */
static bool candidate_before(const candidate *x, const candidate *y) {
  if (x->addr != y->addr) return x->addr < y->addr;
  if (!x->name || !y->name) return x->name && !y->name;
  if (x->source != y->source) return x->source < y->source;
  if (x->bind_rank != y->bind_rank) return x->bind_rank < y->bind_rank;
  size_t lx = strlen(x->name), ly = strlen(y->name);
  if (lx != ly) return lx < ly;
  return strcmp(x->name, y->name) < 0;
}
LP_MERGE_SORT(sort_candidates, candidate, candidate_before)

static const core_function *by_name_of; /* the sort's comparison has no context argument */

static bool name_before(const uint32_t *a, const uint32_t *b) {
  return strcmp(by_name_of[*a].name, by_name_of[*b].name) < 0;
}
LP_MERGE_SORT(sort_by_name, uint32_t, name_before)

/* The length of NAME without gcc's ".cold" (or ".cold.N") suffix of a cold
 * part, or 0 when it has none. */
static size_t cold_part_of(const char *name) {
  const char *cold = strstr(name, ".cold");
  if (!cold || cold == name || (cold[5] && (cold[5] != '.' || !cold[6]))) return 0;
  for (const char *d = cold + 6; cold[5] && *d; d++)
    if (*d < '0' || *d > '9') return 0;
  return (size_t)(cold - name);
}

/* Links each cold part NAME.cold and NAME, its hot part, as each other's
 * part (gcc's -freorder-blocks-and-partition); a name found twice links
 * nothing. */
static lp_status link_parts(core_module *m) {
  size_t n = m->nfunctions, ncold = 0;
  for (size_t i = 0; i < n; i++) {
    m->functions[i].part = CORE_NO_PART;
    ncold += cold_part_of(m->functions[i].name) != 0;
  }
  if (!ncold) return LP_OK;
  uint32_t *order = malloc(2 * n * sizeof *order);
  if (!order) return lp_fail("out of memory");
  for (size_t i = 0; i < n; i++) order[i] = (uint32_t)i;
  by_name_of = m->functions;
  sort_by_name(order, order + n, n);
  for (size_t i = 0; i < n; i++) {
    core_function *cold = &m->functions[i];
    size_t len = cold_part_of(cold->name);
    if (!len) continue;
    size_t lo = 0, hi = n; /* the first name that does not sort below NAME (its hot part) */
    while (lo < hi) {
      size_t mid = (lo + hi) / 2;
      if (strncmp(m->functions[order[mid]].name, cold->name, len) < 0) lo = mid + 1;
      else hi = mid;
    }
    const char *hot = lo < n ? m->functions[order[lo]].name : "";
    bool one = lo < n && !strncmp(hot, cold->name, len) && !hot[len] &&
               !(lo + 1 < n && !strcmp(m->functions[order[lo + 1]].name, hot));
    if (one && m->functions[order[lo]].part == CORE_NO_PART) {
      m->functions[order[lo]].part = (uint32_t)i;
      cold->part = order[lo];
    }
  }
  free(order);
  return LP_OK;
}

/* Merges the sorted candidates into m->functions with sizes, rooms and names. */
static lp_status build_functions(core_module *m, candidates *c, const code_range *ranges,
                                 size_t nranges) {
  module_internal *in = m->internal;
  candidate *tmp = malloc((c->n ? c->n : 1) * sizeof *tmp);
  if (!tmp) return lp_fail("out of memory");
  sort_candidates(c->v, tmp, c->n);
  free(tmp);
  size_t ndistinct = 0;
  for (size_t i = 0; i < c->n; i++)
    if (i == 0 || c->v[i].addr != c->v[i - 1].addr) ndistinct++;
  m->functions = calloc(ndistinct ? ndistinct : 1, sizeof *m->functions);
  in->max_end = calloc(ndistinct ? ndistinct : 1, sizeof *in->max_end);
  const char **best = calloc(ndistinct ? ndistinct : 1, sizeof *best);
  if (!m->functions || !in->max_end || !best) {
    free(best);
    return lp_fail("out of memory");
  }
  size_t nf = 0, names_len = 0;
  for (size_t i = 0; i < c->n;) {
    size_t j = i;
    uint64_t sym_size = 0, fde_size = 0;
    unsigned sources = 0;
    for (; j < c->n && c->v[j].addr == c->v[i].addr; j++) {
      const candidate *x = &c->v[j];
      sources |= x->source;
      uint64_t *sz = x->source == CORE_FROM_EH_FRAME ? &fde_size : &sym_size;
      if (x->size > *sz) *sz = x->size;
    }
    core_function *f = &m->functions[nf];
    f->addr = c->v[i].addr;
    f->size = sym_size ? sym_size : fde_size;
    f->sources = sources;
    f->binding = c->v[i].name ? (unsigned[]){CORE_BIND_GLOBAL, CORE_BIND_WEAK, CORE_BIND_LOCAL,
                                             CORE_BIND_NONE}[c->v[i].bind_rank]
                              : CORE_BIND_NONE;
    best[nf] = c->v[i].name; /* sorted best first; NULL when none has a name */
    names_len += best[nf] ? strlen(best[nf]) + 1 : sizeof "fn_" + 16;
    nf++;
    i = j;
  }
  m->nfunctions = nf;

  in->names = malloc(names_len ? names_len : 1);
  if (!in->names) {
    free(best);
    return lp_fail("out of memory");
  }
  char *p = in->names;
  for (size_t i = 0; i < nf; i++) {
    core_function *f = &m->functions[i];
    if (best[i]) {
      size_t len = strlen(best[i]) + 1;
      memcpy(p, best[i], len);
      f->name = p;
      p += len;
    } else {
      f->name = p;
      p = put_fn_name(p, f->addr);
    }
    const code_range *r = range_at(ranges, nranges, f->addr); /* every candidate has one */
    uint64_t limit = r->addr + r->size;
    if (i + 1 < nf && m->functions[i + 1].addr < limit) limit = m->functions[i + 1].addr;
    f->room = limit - f->addr; /* > 0: addresses are distinct and inside r */
    if (f->size == 0) f->size = f->room; /* asm without .size: up to the next start */
    /* size > room only where functions overlap: room stays the safe bound. */
    uint64_t end = f->addr + f->size;
    in->max_end[i] = i && in->max_end[i - 1] > end ? in->max_end[i - 1] : end;
  }
  free(best);
  return link_parts(m);
}
/* }=== */

static int cmp_segment(const void *a, const void *b) {
  const core_segment *x = a, *y = b;
  return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

/* Reads headers, segments and functions of the validated image into M. */
static lp_status load(core_module *m, Elf *elf) {
  module_internal *in = m->internal;
  const char *path = m->path;
  GElf_Ehdr eh;
  if (!gelf_getehdr(elf, &eh)) return lp_fail("%s: bad ELF header: %s", path, elf_errmsg(-1));
  m->is_pie = eh.e_type == ET_DYN;
  m->entry = eh.e_entry;

  /* {=== segments ===*/
  size_t nphdr = 0;
  if (elf_getphdrnum(elf, &nphdr) != 0)
    return lp_fail("%s: bad program headers: %s", path, elf_errmsg(-1));
  m->exec = calloc(nphdr ? nphdr : 1, sizeof *m->exec);
  m->readonly = calloc(nphdr ? nphdr : 1, sizeof *m->readonly);
  if (!m->exec || !m->readonly) return lp_fail("out of memory");
  int nload = 0;
  uint64_t eh_frame_hdr_addr = 0, eh_frame_hdr_size = 0;
  for (size_t i = 0; i < nphdr; i++) {
    GElf_Phdr ph;
    if (!gelf_getphdr(elf, (int)i, &ph))
      return lp_fail("%s: bad program header %zu: %s", path, i, elf_errmsg(-1));
    if (ph.p_type == PT_DYNAMIC) m->dynamic = ph.p_vaddr;
    if ((ph.p_type == PT_GNU_RELRO || (ph.p_type == PT_LOAD && !(ph.p_flags & PF_W))) && ph.p_filesz) {
      m->readonly[m->nreadonly][0] = ph.p_vaddr;
      m->readonly[m->nreadonly++][1] = ph.p_vaddr + ph.p_filesz;
    }
    if (ph.p_type == PT_GNU_EH_FRAME) {
      eh_frame_hdr_addr = ph.p_vaddr;
      eh_frame_hdr_size = ph.p_filesz;
    }
    if (ph.p_type != PT_LOAD) continue;
    if (ph.p_offset > in->image_size || ph.p_filesz > in->image_size - ph.p_offset)
      return lp_fail("%s: truncated ELF file (a segment lies beyond the end of the file)", path);
    uint64_t lo = ph.p_vaddr & ~(uint64_t)0xfff, hi = ph.p_vaddr + ph.p_memsz;
    if (!nload++ || lo < m->min_vaddr) m->min_vaddr = lo;
    if (hi > m->max_vaddr) m->max_vaddr = hi;
    if ((ph.p_flags & PF_X) && ph.p_filesz) {
      core_segment *s = &m->exec[m->nexec++];
      s->vaddr = ph.p_vaddr;
      s->size = ph.p_filesz;
      s->bytes = in->image + ph.p_offset;
    }
  }
  if (!nload) return lp_fail("%s: no loadable segments", path);
  qsort(m->exec, m->nexec, sizeof *m->exec, cmp_segment);
  /* }=== */

  /* {=== sections: code ranges, symbol tables, .eh_frame ===*/
  size_t nshdr = 0, shstrndx = 0;
  if (elf_getshdrnum(elf, &nshdr) != 0) nshdr = 0;
  if (nshdr && elf_getshdrstrndx(elf, &shstrndx) != 0) nshdr = 0;
  code_range *ranges = calloc(nshdr + m->nexec + 1, sizeof *ranges);
  if (!ranges) return lp_fail("out of memory");
  size_t nranges = 0;
  core_eh_frame frame = {NULL, 0, 0, 0, 0};
  uint64_t got = 0, got_plt = 0;
  for (size_t i = 1; i < nshdr; i++) {
    Elf_Scn *scn = elf_getscn(elf, i);
    GElf_Shdr sh;
    if (!scn || !gelf_getshdr(scn, &sh)) continue;
    const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
    if (!name) name = "";
    if ((sh.sh_flags & SHF_ALLOC) && (sh.sh_flags & SHF_EXECINSTR) && sh.sh_type != SHT_NOBITS &&
        sh.sh_size) {
      code_range *r = &ranges[nranges++];
      r->addr = sh.sh_addr;
      r->size = sh.sh_size;
      r->is_plt = strncmp(name, ".plt", 4) == 0;
      if (!strcmp(name, ".text")) frame.text_base = sh.sh_addr;
    }
    if (!strcmp(name, ".got")) got = sh.sh_addr;
    if (!strcmp(name, ".got.plt")) got_plt = sh.sh_addr;
    if (!strcmp(name, ".eh_frame") && sh.sh_type != SHT_NOBITS && sh.sh_offset <= in->image_size &&
        sh.sh_size <= in->image_size - sh.sh_offset) {
      frame.data = in->image + sh.sh_offset;
      frame.size = sh.sh_size;
      frame.addr = sh.sh_addr;
    }
  }
  frame.data_base = got_plt ? got_plt : got; /* DW_EH_PE_datarel base on x86-64: the GOT */
  if (!nranges) { /* no section headers (sstrip): the executable segments are the code */
    for (size_t i = 0; i < m->nexec; i++)
      ranges[nranges++] = (code_range){m->exec[i].vaddr, m->exec[i].size, 0};
  }
  qsort(ranges, nranges, sizeof *ranges, cmp_range);
  if (!frame.data && eh_frame_hdr_addr) { /* find .eh_frame through PT_GNU_EH_FRAME */
    size_t avail = 0;
    const uint8_t *hdr = loaded_bytes(elf, nphdr, in->image, in->image_size, eh_frame_hdr_addr, &avail);
    uint64_t target;
    if (hdr && core_eh_frame_hdr_target(hdr, avail < eh_frame_hdr_size ? avail : eh_frame_hdr_size,
                                        eh_frame_hdr_addr, &target) == LP_OK) {
      frame.data = loaded_bytes(elf, nphdr, in->image, in->image_size, target, &frame.size);
      frame.addr = target; /* size: to the segment end; the zero terminator stops the walk */
    }
  }

  candidates cands = {NULL, 0, 0};
  lp_status st = LP_OK;
  for (size_t i = 1; i < nshdr && st == LP_OK; i++) {
    Elf_Scn *scn = elf_getscn(elf, i);
    GElf_Shdr sh;
    if (!scn || !gelf_getshdr(scn, &sh)) continue;
    if (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM)
      st = add_symbols(elf, scn, &sh, ranges, nranges, &cands);
    const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
    if (sh.sh_type == SHT_RELA && name && !strcmp(name, ".rela.plt")) st = add_plt_slots(m, elf, scn, &sh);
  }
  in->frame = frame;
  if (st == LP_OK && frame.data) st = add_fdes(in, ranges, nranges, &cands);
  if (st == LP_OK) st = build_functions(m, &cands, ranges, nranges); /* copies the names */
  if (st == LP_OK) st = find_callees(m, ranges, nranges);
  free(cands.v);
  free(ranges);
  /* }=== */
  return st;
}

/* Maps PATH (map_file) when its header says it is a module we can read. */
static lp_status map_module(const char *path, uint8_t **image, size_t *size) {
  LP_CHECK(map_file(path, image, size));
  if (check_header(path, *image, *size) == LP_OK) return LP_OK;
  munmap(*image, *size);
  return LP_ERR;
}

lp_status core_module_open(const char *path, core_module **out) {
  *out = NULL;
  uint8_t *image = NULL;
  size_t size = 0;
  LP_CHECK(map_module(path, &image, &size));
  core_module *m = calloc(1, sizeof *m);
  module_internal *in = calloc(1, sizeof *in);
  char *path_copy = strdup(path);
  if (!m || !in || !path_copy) {
    free(m);
    free(in);
    free(path_copy);
    munmap(image, size);
    return lp_fail("out of memory");
  }
  m->path = path_copy;
  m->internal = in;
  in->image = image;
  in->image_size = size;

  elf_version(EV_CURRENT);
  Elf *elf = elf_memory((char *)image, size);
  if (!elf || elf_kind(elf) != ELF_K_ELF) {
    lp_fail("%s: not an ELF file (%s)", path, elf_errmsg(-1));
    if (elf) elf_end(elf);
    core_module_close(m);
    return LP_ERR;
  }
  lp_status st = load(m, elf);
  elf_end(elf); /* everything kept points into the image or was copied */
  if (st != LP_OK) {
    core_module_close(m);
    return LP_ERR;
  }
  *out = m;
  return LP_OK;
}

lp_status core_module_exports(const char *path, const char *const names[], uint64_t addrs[]) {
  size_t count = 0;
  while (names[count]) addrs[count++] = 0;
  uint8_t *image = NULL;
  size_t size = 0;
  LP_CHECK(map_module(path, &image, &size));
  elf_version(EV_CURRENT);
  Elf *elf = elf_memory((char *)image, size);
  Elf_Scn *dynsym = NULL, *versym = NULL;
  GElf_Shdr sh, dsh = {0};
  for (Elf_Scn *scn = NULL; elf && (scn = elf_nextscn(elf, scn));) {
    if (!gelf_getshdr(scn, &sh)) continue;
    if (sh.sh_type == SHT_DYNSYM) dynsym = scn, dsh = sh;
    if (sh.sh_type == SHT_GNU_versym) versym = scn;
  }
  Elf_Data *syms = dynsym ? elf_getdata(dynsym, NULL) : NULL;
  Elf_Data *vers = versym ? elf_getdata(versym, NULL) : NULL;
  size_t nsyms = syms && dsh.sh_entsize ? syms->d_size / dsh.sh_entsize : 0;
  bool *hidden = calloc(count ? count : 1, sizeof *hidden); /* addrs[k] is a non-default version's */
  for (size_t i = 1; hidden && i < nsyms; i++) {
    GElf_Sym sym;
    if (!gelf_getsym(syms, (int)i, &sym) || sym.st_shndx == SHN_UNDEF) continue;
    if (GELF_ST_TYPE(sym.st_info) != STT_FUNC) continue;
    const char *name = elf_strptr(elf, dsh.sh_link, sym.st_name);
    GElf_Versym v = 0;
    bool default_version = !vers || !gelf_getversym(vers, (int)i, &v) || !(v & 0x8000);
    for (size_t k = 0; name && k < count; k++)
      if (!strcmp(name, names[k]) && (!addrs[k] || (hidden[k] && default_version))) {
        addrs[k] = sym.st_value;
        hidden[k] = !default_version;
      }
  }
  lp_status st = !elf ? lp_fail("%s: not an ELF file (%s)", path, elf_errmsg(-1))
                 : hidden ? LP_OK : lp_fail("out of memory");
  free(hidden);
  if (elf) elf_end(elf);
  munmap(image, size);
  return st;
}

void core_module_close(core_module *m) {
  if (!m) return;
  module_internal *in = m->internal;
  if (in) {
    if (in->image) munmap(in->image, in->image_size);
    free(in->names);
    free(in->max_end);
    free(in->fdes);
    free(in->returns);
    free(in);
  }
  free(m->functions);
  free(m->plt_slots);
  free(m->callees);
  free(m->exec);
  free(m->readonly);
  free(m->path);
  free(m);
}

const uint8_t *core_module_code(const core_module *m, uint64_t addr, size_t *avail) {
  size_t lo = 0, hi = m->nexec;
  while (lo < hi) { /* first segment with vaddr > addr */
    size_t mid = lo + (hi - lo) / 2;
    if (m->exec[mid].vaddr <= addr) lo = mid + 1; else hi = mid;
  }
  if (lo == 0) return NULL;
  const core_segment *s = &m->exec[lo - 1];
  if (addr - s->vaddr >= s->size) return NULL;
  if (avail) *avail = (size_t)(s->size - (addr - s->vaddr));
  return s->bytes + (addr - s->vaddr);
}

const core_function *core_module_function_at(const core_module *m, uint64_t addr) {
  const module_internal *in = m->internal;
  size_t lo = 0, hi = m->nfunctions;
  while (lo < hi) { /* first function with addr > ADDR */
    size_t mid = lo + (hi - lo) / 2;
    if (m->functions[mid].addr <= addr) lo = mid + 1; else hi = mid;
  }
  /* Usually the last start <= ADDR holds it; where functions overlap an
   * earlier one may, and max_end says when no earlier one can. */
  for (size_t i = lo; i-- > 0 && in->max_end[i] > addr;) {
    const core_function *f = &m->functions[i];
    if (addr - f->addr < f->size) return f;
  }
  return NULL;
}

const core_eh_frame *core_module_eh_frame(const core_module *module) {
  const module_internal *in = module->internal;
  return in->frame.data ? &in->frame : NULL;
}

lp_status core_module_cfi(const core_module *module, uint64_t addr, struct core_cfi *out) {
  const module_internal *in = module->internal;
  size_t lo = 0, hi = in->nfdes;
  while (lo < hi) { /* the first FDE starting above addr */
    size_t mid = (lo + hi) / 2;
    if (in->fdes[mid].pc_begin <= addr) lo = mid + 1;
    else hi = mid;
  }
  if (lo == 0 || addr - in->fdes[lo - 1].pc_begin >= in->fdes[lo - 1].pc_range)
    return lp_fail("no FDE covers 0x%llx", (unsigned long long)addr);
  return core_eh_frame_cfi(&in->frame, in->fdes[lo - 1].offset, out);
}
