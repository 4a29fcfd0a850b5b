/* test_module.c — checks core/module.c (ELF validation and function
 * discovery) against independent oracles: small C programs compiled here with
 * the system gcc (-O0/-O2, PIE/non-PIE, stripped copies) are compared with what
 * binutils' readelf says about their symbols, sections and FDEs; error cases
 * are checked for their one-line message; /bin/ls stands for a stripped Debian
 * binary.  Also unit-tests the .eh_frame parser (eh_frame.c) on crafted bytes,
 * and core/image.c's layout of a file's segments against one read here with
 * pread, segment by segment, zero elsewhere (as the ELF specification puts
 * them), for mapped segments, read ones and a truncated file; and
 * core_module_exports against readelf's dynamic symbols (libc, a library
 * with two versions of one function).
 * Runs with no arguments; prints each failure; exit status 0 when all pass. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <elf.h>
#include <fcntl.h>

#include "eh_frame.h"
#include "image.h"
#include "module.h"
#include "unit.h"

static const char name[] = "module"; /* for CHECK */
static char tmpdir[] = "/tmp/lp_test_module.XXXXXX";


/* {=== helpers ===*/

static void write_file(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(data, 1, n, f) != n) {
    printf("cannot write %s\n", path);
    exit(2);
  }
  fclose(f);
}

/* A section as readelf -SW prints it. */
typedef struct osec {
  char name[128];
  uint64_t addr, off, size;
  int exec;
} osec;

/* A .symtab function symbol as readelf -sW prints it. */
typedef struct osym {
  char name[256];
  uint64_t addr, size;
  int shndx;
  char bind[32];
} osym;

typedef struct oracle {
  osec sec[128];
  int nsec;
  osym *sym;
  int nsym;
  uint64_t *fde; /* FDE pc begins */
  int nfde;
  uint64_t entry;
} oracle;

static void read_oracle(const char *path, oracle *o) {
  memset(o, 0, sizeof *o);
  char line[4096];
  char *cmd = fmt("readelf -SW '%s'", path);
  FILE *p = popen(cmd, "r");
  while (p && fgets(line, sizeof line, p)) {
    char *rb = strchr(line, ']');
    if (!strstr(line, "  [") || !rb || o->nsec == 128) continue;
    osec s = {0};
    char type[64], flags[64] = "";
    unsigned long es;
    int idx = atoi(strchr(line, '[') + 1);
    if (idx == 0) continue; /* NULL section (and the header line) */
    int n = sscanf(rb + 1, "%127s %63s %" SCNx64 " %" SCNx64 " %" SCNx64 " %lx %63s", s.name, type,
                   &s.addr, &s.off, &s.size, &es, flags);
    if (n < 6) continue;
    s.exec = n == 7 && flags[0] >= 'A' && strchr(flags, 'X') != NULL;
    o->sec[idx < 128 ? idx : 127] = s;
    if (idx + 1 > o->nsec) o->nsec = idx + 1;
  }
  if (p) pclose(p);
  free(cmd);

  cmd = fmt("readelf -sW '%s'", path);
  p = popen(cmd, "r");
  int in_symtab = 0, cap = 0;
  while (p && fgets(line, sizeof line, p)) {
    if (strstr(line, "Symbol table '")) {
      in_symtab = strstr(line, "'.symtab'") != NULL;
      continue;
    }
    if (!in_symtab) continue;
    char value[32], size[32], type[32], bind[32], vis[32], ndx[32], name[256] = "";
    if (sscanf(line, " %*[0-9]: %31s %31s %31s %31s %31s %31s %255s", value, size, type, bind, vis,
               ndx, name) < 6)
      continue;
    if (strcmp(type, "FUNC") && strcmp(type, "IFUNC")) continue;
    if (ndx[0] < '0' || ndx[0] > '9') continue; /* UND, ABS */
    if (o->nsym == cap) {
      cap = cap ? 2 * cap : 256;
      o->sym = realloc(o->sym, cap * sizeof *o->sym);
    }
    osym *s = &o->sym[o->nsym++];
    snprintf(s->name, sizeof s->name, "%s", name);
    s->addr = strtoull(value, NULL, 16);
    s->size = strtoull(size, NULL, 0);
    s->shndx = atoi(ndx);
    snprintf(s->bind, sizeof s->bind, "%s", bind);
  }
  if (p) pclose(p);
  free(cmd);

  cmd = fmt("readelf -wf '%s'", path);
  p = popen(cmd, "r");
  cap = 0;
  while (p && fgets(line, sizeof line, p)) {
    char *pc = strstr(line, " FDE ");
    if (!pc || !(pc = strstr(pc, "pc="))) continue;
    if (o->nfde == cap) {
      cap = cap ? 2 * cap : 256;
      o->fde = realloc(o->fde, cap * sizeof *o->fde);
    }
    o->fde[o->nfde++] = strtoull(pc + 3, NULL, 16);
  }
  if (p) pclose(p);
  free(cmd);

  cmd = fmt("readelf -hW '%s'", path);
  p = popen(cmd, "r");
  while (p && fgets(line, sizeof line, p)) {
    char *e = strstr(line, "Entry point address:");
    if (e) o->entry = strtoull(e + strlen("Entry point address:"), NULL, 0);
  }
  if (p) pclose(p);
  free(cmd);
}

static void free_oracle(oracle *o) {
  free(o->sym);
  free(o->fde);
}

/* The oracle's section holding ADDR, or NULL. */
static const osec *osec_at(const oracle *o, uint64_t addr) {
  for (int i = 1; i < o->nsec; i++) {
    const osec *s = &o->sec[i];
    if (s->exec && addr >= s->addr && addr < s->addr + s->size) return s;
  }
  return NULL;
}

static int is_plt(const osec *s) { return s && strncmp(s->name, ".plt", 4) == 0; }

/* Exact-address lookup in the discovered list. */
static const core_function *find(const core_module *m, uint64_t addr) {
  size_t lo = 0, hi = m->nfunctions;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (m->functions[mid].addr < addr) lo = mid + 1; else hi = mid;
  }
  return lo < m->nfunctions && m->functions[lo].addr == addr ? &m->functions[lo] : NULL;
}

static const osym *osym_named(const oracle *o, const char *name) {
  for (int i = 0; i < o->nsym; i++)
    if (!strcmp(o->sym[i].name, name)) return &o->sym[i];
  return NULL;
}
/* }=== */

/* {=== properties every discovered list must have ===*/

static void check_invariants(const char *what, const core_module *m, const oracle *o) {
  for (size_t i = 0; i < m->nfunctions; i++) {
    const core_function *f = &m->functions[i];
    const osec *s = osec_at(o, f->addr);
    CHECK(i == 0 || m->functions[i - 1].addr < f->addr, "%s: not sorted/distinct at %zu", what, i);
    CHECK(f->size > 0 && f->room > 0, "%s: %s has size %" PRIu64 " room %" PRIu64, what,
          f->name, f->size, f->room);
    CHECK(f->name && *f->name, "%s: function at 0x%" PRIx64 " has no name", what, f->addr);
    CHECK(f->sources != 0, "%s: %s has no source", what, f->name);
    CHECK(s != NULL, "%s: %s at 0x%" PRIx64 " is not in an executable section", what, f->name,
          f->addr);
    CHECK(!is_plt(s), "%s: %s at 0x%" PRIx64 " is in %s", what, f->name, f->addr, s ? s->name : "");
    if (s) {
      uint64_t limit = s->addr + s->size;
      if (i + 1 < m->nfunctions && m->functions[i + 1].addr < limit) limit = m->functions[i + 1].addr;
      CHECK(f->room == limit - f->addr, "%s: %s room %" PRIu64 ", expected %" PRIu64, what, f->name,
            f->room, limit - f->addr);
    }
    CHECK(core_module_function_at(m, f->addr) != NULL, "%s: function_at(%s) is NULL", what, f->name);
  }
  /* No address of a PLT section belongs to a function. */
  for (int i = 1; i < o->nsec; i++)
    if (o->sec[i].exec && is_plt(&o->sec[i]))
      CHECK(core_module_function_at(m, o->sec[i].addr) == NULL, "%s: function_at(%s) found one",
            what, o->sec[i].name);
  /* Every FDE outside the PLT is a function start. */
  for (int i = 0; i < o->nfde; i++) {
    const osec *s = osec_at(o, o->fde[i]);
    if (!s || is_plt(s)) continue;
    const core_function *f = find(m, o->fde[i]);
    CHECK(f && (f->sources & CORE_FROM_EH_FRAME), "%s: FDE at 0x%" PRIx64 " not found", what,
          o->fde[i]);
  }
  CHECK(m->entry == o->entry, "%s: entry 0x%" PRIx64 ", readelf says 0x%" PRIx64, what, m->entry,
        o->entry);
}
/* }=== */

/* {=== compiled test programs ===*/

static const char program[] =
    "#include <stdio.h>\n"
    "#include <stdlib.h>\n"
    "static __attribute__((noinline)) int static_helper(int x) { return x * 3 + 1; }\n"
    "__attribute__((noinline)) int global_fn(int x) { return static_helper(x) ^ 5; }\n"
    "__attribute__((noinline)) int with_switch(int x) {\n"
    "  switch (x) {\n"
    "  case 0: return 11; case 1: return 22; case 2: return global_fn(x);\n"
    "  case 3: return 44; case 4: return 57; case 5: return 66; case 6: return 79;\n"
    "  case 7: return puts(\"seven\");\n"
    "  default: return -1;\n"
    "  }\n"
    "}\n"
    "static __attribute__((noinline)) int impl_local(void) { return 42; }\n"
    "int alias_global(void) __attribute__((alias(\"impl_local\")));\n"
    "int wk(int) __attribute__((weak, alias(\"global_fn\")));\n"
    "static int ifunc_impl(void) { return 7; }\n"
    "static void *resolve_my_ifunc(void) { return (void *)ifunc_impl; }\n"
    "int my_ifunc(void) __attribute__((ifunc(\"resolve_my_ifunc\")));\n"
    "__attribute__((noinline, cold)) void rarely(const char *s) { fprintf(stderr, \"%s\\n\", s); "
    "exit(3); }\n"
    "/* asm functions: one without .size (size 0), its neighbour with one */\n"
    "__asm__(\".text\\n.globl asm_nosize\\n.type asm_nosize,@function\\nasm_nosize:\\n\"\n"
    "        \"ret\\nnop\\nnop\\nnop\\nnop\\n\"\n"
    "        \".globl asm_after\\n.type asm_after,@function\\nasm_after:\\nret\\n.size asm_after,1\\n\");\n"
    "int asm_nosize(void);\n"
    "int main(int argc, char **argv) {\n"
    "  (void)argv;\n"
    "  if (argc > 5) rarely(\"many\");\n"
    "  return with_switch(argc) + alias_global() + wk(argc) + my_ifunc() + asm_nosize() > 1000;\n"
    "}\n";

/* Compares an unstripped build with readelf's .symtab. */
static void check_unstripped(const char *what, const char *bin, int pie) {
  oracle o;
  read_oracle(bin, &o);
  core_module *m = NULL;
  lp_status st = core_module_open(bin, &m);
  CHECK(st == LP_OK, "%s: open failed: %s", what, lp_error());
  if (st != LP_OK) {
    free_oracle(&o);
    return;
  }
  CHECK(o.nsym > 10 && o.nfde > 3, "%s: oracle looks empty (%d symbols, %d FDEs)", what, o.nsym,
        o.nfde);
  CHECK(m->is_pie == pie, "%s: is_pie %d", what, m->is_pie);
  CHECK(m->nexec >= 1, "%s: no executable segment", what);
  check_invariants(what, m, &o);

  /* Every function symbol outside the PLT: same address, same size. */
  for (int i = 0; i < o.nsym; i++) {
    const osym *s = &o.sym[i];
    if (s->shndx >= o.nsec || !o.sec[s->shndx].exec || is_plt(&o.sec[s->shndx])) continue;
    const core_function *f = find(m, s->addr);
    CHECK(f != NULL, "%s: symbol %s at 0x%" PRIx64 " not found", what, s->name, s->addr);
    if (!f) continue;
    CHECK(f->sources & CORE_FROM_SYMTAB, "%s: %s not marked as from .symtab", what, s->name);
    if (s->size) {
      int alone = 1; /* the size is the largest of the symbols at that address */
      for (int j = 0; j < o.nsym; j++)
        if (j != i && o.sym[j].addr == s->addr && o.sym[j].size > s->size) alone = 0;
      if (alone)
        CHECK(f->size == s->size, "%s: %s size %" PRIu64 ", readelf says %" PRIu64, what, s->name,
              f->size, s->size);
    }
    const core_function *at = core_module_function_at(m, s->addr + (s->size ? s->size - 1 : 0));
    CHECK(at == f, "%s: function_at(end of %s) is %s", what, s->name, at ? at->name : "NULL");
  }

  /* Names at shared addresses: GLOBAL over WEAK over LOCAL, whatever the length. */
  static const char *const expect_names[][2] = {
      {"global_fn", "global_fn"},       /* vs WEAK wk (shorter) */
      {"impl_local", "alias_global"},   /* LOCAL vs GLOBAL */
      {"resolve_my_ifunc", "my_ifunc"}, /* LOCAL FUNC vs GLOBAL IFUNC */
      {"main", "main"},
      {"static_helper", "static_helper"},
      {"with_switch", "with_switch"},
      {"_start", "_start"},
  };
  for (size_t i = 0; i < sizeof expect_names / sizeof *expect_names; i++) {
    const osym *s = osym_named(&o, expect_names[i][0]);
    CHECK(s != NULL, "%s: readelf does not list %s", what, expect_names[i][0]);
    if (!s) continue;
    const core_function *f = find(m, s->addr);
    CHECK(f && !strcmp(f->name, expect_names[i][1]), "%s: at %s the name is %s, expected %s", what,
          expect_names[i][0], f ? f->name : "(none)", expect_names[i][1]);
  }

  /* A symbol without size reaches up to the next function start. */
  const osym *nosize = osym_named(&o, "asm_nosize"), *after = osym_named(&o, "asm_after");
  CHECK(nosize && after && nosize->size == 0 && after->addr > nosize->addr,
        "%s: asm functions not as expected", what);
  if (nosize && after) {
    const core_function *f = find(m, nosize->addr);
    CHECK(f && f->size == after->addr - nosize->addr && f->room == f->size,
          "%s: asm_nosize size %" PRIu64 " room %" PRIu64 ", expected %" PRIu64, what,
          f ? f->size : 0, f ? f->room : 0, after->addr - nosize->addr);
  }

  /* The code bytes are the file's: compare main's first bytes with the file. */
  const osym *main_sym = osym_named(&o, "main");
  const osec *ms = main_sym ? osec_at(&o, main_sym->addr) : NULL;
  if (main_sym && ms) {
    size_t avail = 0;
    const uint8_t *code = core_module_code(m, main_sym->addr, &avail);
    uint8_t want[16];
    FILE *f = fopen(bin, "rb");
    int ok = f && fseek(f, (long)(ms->off + (main_sym->addr - ms->addr)), SEEK_SET) == 0 &&
             fread(want, 1, sizeof want, f) == sizeof want;
    if (f) fclose(f);
    CHECK(ok && code && avail >= sizeof want && !memcmp(code, want, sizeof want),
          "%s: core_module_code(main) differs from the file", what);
  }
  CHECK(core_module_code(m, 0, NULL) == NULL, "%s: core_module_code(0) not NULL", what);
  core_module_close(m);
  free_oracle(&o);
}

/* Compares a stripped copy with the unstripped build's FDE functions. */
static void check_stripped(const char *what, const char *bin, const char *stripped) {
  oracle o;
  read_oracle(stripped, &o);
  CHECK(o.nsym == 0, "%s: strip left .symtab functions", what);
  core_module *full = NULL, *m = NULL;
  if (core_module_open(bin, &full) != LP_OK || core_module_open(stripped, &m) != LP_OK) {
    CHECK(0, "%s: open failed: %s", what, lp_error());
    core_module_close(full);
    return;
  }
  check_invariants(what, m, &o);
  size_t with_fde = 0;
  for (size_t i = 0; i < full->nfunctions; i++) {
    const core_function *g = &full->functions[i];
    if (!(g->sources & CORE_FROM_EH_FRAME)) continue;
    with_fde++;
    const core_function *f = find(m, g->addr);
    CHECK(f != NULL, "%s: %s at 0x%" PRIx64 " not found", what, g->name, g->addr);
    if (!f) continue;
    char expect[32];
    snprintf(expect, sizeof expect, "fn_%" PRIx64, g->addr);
    /* .dynsym survives strip: an exported function keeps its name. */
    CHECK(!strcmp(f->name, expect) || ((f->sources & CORE_FROM_DYNSYM) && !strcmp(f->name, g->name)),
          "%s: name %s at 0x%" PRIx64 ", expected %s", what, f->name, g->addr, expect);
    /* gcc's FDEs cover exactly the symbol's bytes. */
    CHECK(f->size == g->size, "%s: size of %s is %" PRIu64 ", unstripped %" PRIu64, what, f->name,
          f->size, g->size);
  }
  CHECK(with_fde >= 8, "%s: only %zu FDE functions in the unstripped build", what, with_fde);
  core_module_close(full);
  core_module_close(m);
  free_oracle(&o);
}

/* Without section headers (as after `sstrip`): the FDEs are found through
 * PT_GNU_EH_FRAME, the code ranges are the executable segments.  The PLT
 * cannot be told apart there, so only the program's own FDEs are compared. */
static void check_no_sections(const char *what, const char *bin, const char *stripped) {
  char *copy = fmt("%s.noshdr", stripped);
  FILE *in = fopen(stripped, "rb");
  static uint8_t image[4 << 20];
  size_t n = in ? fread(image, 1, sizeof image, in) : 0;
  if (in) fclose(in);
  CHECK(n > 64 && n < sizeof image, "%s: cannot read %s", what, stripped);
  if (n <= 64 || n >= sizeof image) {
    free(copy);
    return;
  }
  memset(image + 0x28, 0, 8); /* e_shoff */
  memset(image + 0x3c, 0, 4); /* e_shnum, e_shstrndx */
  write_file(copy, image, n);
  core_module *full = NULL, *m = NULL;
  if (core_module_open(bin, &full) != LP_OK || core_module_open(copy, &m) != LP_OK) {
    CHECK(0, "%s: open failed: %s", what, lp_error());
    core_module_close(full);
    free(copy);
    return;
  }
  for (size_t i = 0; i < full->nfunctions; i++) {
    const core_function *g = &full->functions[i];
    if (!(g->sources & CORE_FROM_EH_FRAME)) continue;
    const core_function *f = find(m, g->addr);
    CHECK(f && (f->sources & CORE_FROM_EH_FRAME), "%s: %s at 0x%" PRIx64 " not found", what,
          g->name, g->addr);
  }
  for (size_t i = 0; i < m->nfunctions; i++)
    CHECK(core_module_code(m, m->functions[i].addr, NULL) != NULL, "%s: %s outside the code", what,
          m->functions[i].name);
  core_module_close(full);
  core_module_close(m);
  free(copy);
}

static void test_programs(void) {
  char *src = fmt("%s/prog.c", tmpdir);
  write_file(src, program, strlen(program));
  static const struct { const char *name, *flags; int pie; } variants[] = {
      {"O0-pie", "-O0 -pie -fPIE", 1},
      {"O2-pie", "-O2 -pie -fPIE", 1},
      {"O0-nopie", "-O0 -no-pie -fno-PIE", 0},
      {"O2-nopie", "-O2 -no-pie -fno-PIE", 0},
  };
  for (size_t i = 0; i < sizeof variants / sizeof *variants; i++) {
    char *bin = fmt("%s/prog-%s", tmpdir, variants[i].name);
    char *stripped = fmt("%s.stripped", bin);
    char *cc = fmt("gcc %s -o '%s' '%s'", variants[i].flags, bin, src);
    char *st = fmt("strip -o '%s' '%s'", stripped, bin);
    if (sh(cc) != 0 || sh(st) != 0) {
      CHECK(0, "%s: cannot build the test program", variants[i].name);
    } else {
      check_unstripped(variants[i].name, bin, variants[i].pie);
      char *what = fmt("%s stripped", variants[i].name);
      check_stripped(what, bin, stripped);
      free(what);
      what = fmt("%s without section headers", variants[i].name);
      check_no_sections(what, bin, stripped);
      free(what);
    }
    free(bin);
    free(stripped);
    free(cc);
    free(st);
  }

  /* A shared library is accepted (the caller decides what to do with it). */
  char *lib = fmt("%s/libprog.so", tmpdir);
  char *cc = fmt("gcc -O2 -shared -fPIC -o '%s' '%s'", lib, src);
  if (sh(cc) == 0) {
    core_module *m = NULL;
    lp_status st = core_module_open(lib, &m);
    CHECK(st == LP_OK && m->is_pie, "shared library: %s", st == LP_OK ? "not ET_DYN" : lp_error());
    if (st == LP_OK) {
      oracle o;
      read_oracle(lib, &o);
      check_invariants("shared library", m, &o);
      free_oracle(&o);
    }
    core_module_close(m);
  }
  free(lib);
  free(cc);
  free(src);
}
/* }=== */

/* {=== how calls return ===*/

/* A program calling functions that return twice (setjmp; spawn, which forks,
 * and spawn_deep and spawn_tail, which call it and tail-call it, and main,
 * which calls all three), never (exit, abort, longjmp, its own usage), never
 * with a status (error) and once (twice, and once_deep, which calls it). */
static const char callees_program[] =
    "#include <error.h>\n#include <setjmp.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <unistd.h>\n"
    "static jmp_buf jb;\n"
    "__attribute__((noinline, noclone, noreturn)) static void usage(int status) {\n"
    "  fprintf(stderr, \"usage %d\\n\", status);\n  exit(status);\n}\n"
    "__attribute__((noinline, noclone)) static int twice(int x) { return x * 2; }\n"
    "__attribute__((noinline, noclone)) static int spawn(int x) { return fork() + x; }\n"
    "__attribute__((noinline, noclone)) static int spawn_deep(int x) { return spawn(x) * 3; }\n"
    "__attribute__((noinline, noclone)) static int spawn_tail(int x) { return spawn(x + 1); }\n"
    "__attribute__((noinline, noclone)) static int once_deep(int x) { return twice(x) * 3; }\n"
    "int main(int argc, char **argv) {\n"
    "  if (setjmp(jb)) return 3;\n  if (argc > 5) usage(2);\n  if (argc > 4) error(1, 0, \"%s\", argv[0]);\n"
    "  if (argc > 3) abort();\n  if (argc > 2) longjmp(jb, 1);\n  if (argc > 1) return (int)syscall(39);\n"
    "  if (argc < -2) return spawn_tail(argc);\n  if (argc < -1) return spawn_deep(argc);\n"
    "  if (argc < 0) return spawn(argc);\n  if (argc == 0) return once_deep(argc);\n"
    "  return twice(argc);\n}\n";

/* The address objdump names <WHAT> in BIN (a PLT stub "exit@plt", or a
 * symbol of the unstripped program), 0 when none. */
static uint64_t objdump_label(const char *bin, const char *what) {
  char *cmd = fmt("objdump -d '%s' | sed -n 's/^\\([0-9a-f]*\\) <%s>:$/\\1/p'", bin, what);
  FILE *p = popen(cmd, "r");
  uint64_t a = 0;
  if (p && fscanf(p, "%" SCNx64, &a) != 1) a = 0;
  if (p) pclose(p);
  free(cmd);
  return a;
}

static void test_callees(void) {
  char *src = fmt("%s/callees.c", tmpdir);
  write_file(src, callees_program, strlen(callees_program));
  static const char *const flags[] = {"-O2 -pie -fPIE", "-O2 -no-pie -fno-PIE"};
  static const struct { const char *label; core_callee want; } calls[] = {
      {"_setjmp@plt", CORE_CALLEE_RETURNS_TWICE}, {"exit@plt", CORE_CALLEE_NEVER_RETURNS},
      {"abort@plt", CORE_CALLEE_NEVER_RETURNS},   {"longjmp@plt", CORE_CALLEE_NEVER_RETURNS},
      {"error@plt", CORE_CALLEE_EXITS_ON_STATUS}, {"usage", CORE_CALLEE_NEVER_RETURNS},
      {"twice", CORE_CALLEE_RETURNS},             {"once_deep", CORE_CALLEE_RETURNS},
      {"syscall@plt", CORE_CALLEE_SYSCALL},       {"fork@plt", CORE_CALLEE_FORKS},
      {"spawn", CORE_CALLEE_FORKS},               {"spawn_deep", CORE_CALLEE_FORKS},
      {"spawn_tail", CORE_CALLEE_FORKS},          {"main", CORE_CALLEE_FORKS},
  };
  for (size_t v = 0; v < sizeof flags / sizeof *flags; v++) {
    char *bin = fmt("%s/callees-%zu", tmpdir, v), *stripped = fmt("%s.stripped", bin);
    char *cc = fmt("gcc %s -o '%s' '%s' && strip -o '%s' '%s'", flags[v], bin, src, stripped, bin);
    if (sh(cc) != 0) {
      CHECK(0, "%s: cannot build the callees program", flags[v]);
    } else {
      for (int s = 0; s < 2; s++) {
        core_module *m = NULL;
        if (core_module_open(s ? stripped : bin, &m) != LP_OK) {
          CHECK(0, "%s: %s", flags[v], lp_error());
          continue;
        }
        for (size_t k = 0; k < sizeof calls / sizeof *calls; k++) {
          uint64_t a = objdump_label(bin, calls[k].label); /* the unstripped one names them */
          core_callee got = a ? core_module_callee(m, a) : (core_callee)-1;
          CHECK(got == calls[k].want, "%s%s: a call to %s at 0x%" PRIx64 " returns as %d, want %d", flags[v],
                s ? " stripped" : "", calls[k].label, a, (int)got, (int)calls[k].want);
        }
        core_module_close(m);
      }
    }
    free(bin);
    free(stripped);
    free(cc);
  }
  free(src);
}
/* }=== */

/* {=== parts ===*/

/* gcc -O2 moves the unlikely block of hot() (it calls a cold function and
 * comes back) into hot.cold; its_cold_copy has ".cold" inside its name. */
static const char parts_program[] =
    "#include <stdlib.h>\n"
    "__attribute__((cold, noinline)) void oops(int x) { if (x == 7) exit(3); }\n"
    "__attribute__((noinline)) int hot(int x) {\n"
    "  if (__builtin_expect(x == 42, 0)) { oops(x); x += 3; }\n"
    "  return x * 2;\n"
    "}\n"
    "__attribute__((noinline)) int its_cold_copy(int x) { return x - 1; }\n"
    "int main(int argc, char **argv) { (void)argv; return hot(argc) + its_cold_copy(argc); }\n";

static void test_parts(void) {
  char *src = fmt("%s/parts.c", tmpdir), *bin = fmt("%s/parts", tmpdir);
  write_file(src, parts_program, strlen(parts_program));
  char *cc = fmt("gcc -O2 -o '%s' '%s'", bin, src);
  core_module *m = NULL;
  if (sh(cc) != 0 || core_module_open(bin, &m) != LP_OK) {
    CHECK(0, "parts: cannot build or open the program: %s", lp_error());
  } else {
    long hot = -1, cold = -1, copy = -1;
    for (size_t i = 0; i < m->nfunctions; i++) {
      if (!strcmp(m->functions[i].name, "hot")) hot = (long)i;
      if (!strcmp(m->functions[i].name, "hot.cold")) cold = (long)i;
      if (!strcmp(m->functions[i].name, "its_cold_copy")) copy = (long)i;
    }
    CHECK(hot >= 0 && cold >= 0 && copy >= 0, "parts: hot, hot.cold, its_cold_copy not all found");
    if (hot >= 0 && cold >= 0 && copy >= 0) {
      CHECK(m->functions[hot].part == (uint32_t)cold && m->functions[cold].part == (uint32_t)hot,
            "parts: hot and hot.cold not linked (%u, %u)", m->functions[hot].part, m->functions[cold].part);
      CHECK(m->functions[copy].part == CORE_NO_PART, "parts: its_cold_copy linked");
    }
    size_t linked = 0;
    for (size_t i = 0; i < m->nfunctions; i++) linked += m->functions[i].part != CORE_NO_PART;
    CHECK(linked == 2, "parts: %zu functions linked, 2 expected", linked);
  }
  core_module_close(m);
  free(src);
  free(bin);
  free(cc);
}
/* }=== */

/* {=== exports (core_module_exports) ===*/

/* The value of NAME's default version in PATH's dynamic symbols, as readelf
 * prints them ("NAME@@V", or "NAME" unversioned); 0 when it has none. */
static uint64_t readelf_export(const char *path, const char *name) {
  char line[4096], *cmd = fmt("readelf -W --dyn-syms '%s'", path);
  FILE *p = popen(cmd, "r");
  uint64_t found = 0;
  while (p && fgets(line, sizeof line, p)) {
    char value[32], type[32], ndx[32], sym[256];
    if (sscanf(line, " %*[0-9]: %31s %*s %31s %*s %*s %31s %255s", value, type, ndx, sym) != 4) continue;
    if (strcmp(type, "FUNC") || !strcmp(ndx, "UND")) continue;
    size_t n = strlen(name);
    if (!strncmp(sym, name, n) && (sym[n] == '\0' || !strncmp(sym + n, "@@", 2))) found = strtoull(value, NULL, 16);
  }
  if (p) pclose(p);
  free(cmd);
  return found;
}

/* A library with two versions of f: f@V1 (old_f) and the default f@@V2
 * (new_f), at different addresses. */
static const char versioned_library[] =
    "__asm__(\".symver old_f, f@V1\");\n"
    "__asm__(\".symver new_f, f@@V2\");\n"
    "int old_f(void) { return 1; }\n"
    "int new_f(void) { return 2; }\n"
    "int g(void) { return 3; }\n";

static void test_exports(void) {
  const char *libc = "/lib/x86_64-linux-gnu/libc.so.6";
  static const char *const names[] = {"dlopen", "dlsym", "malloc", "lazyprobe_not_exported", NULL};
  uint64_t addrs[4];
  CHECK(core_module_exports(libc, names, addrs) == LP_OK, "exports of libc: %s", lp_error());
  for (int k = 0; k < 4; k++) {
    uint64_t want = readelf_export(libc, names[k]);
    CHECK(addrs[k] == want, "libc: %s at 0x%" PRIx64 ", readelf says 0x%" PRIx64, names[k], addrs[k], want);
  }
  CHECK(addrs[0] && addrs[1] && !addrs[3], "libc: dlopen, dlsym found, the unknown name not");

  char *src = fmt("%s/versioned.c", tmpdir), *map = fmt("%s/versioned.map", tmpdir);
  char *lib = fmt("%s/libversioned.so", tmpdir);
  write_file(src, versioned_library, sizeof versioned_library - 1);
  static const char script[] = "V1 { global: f; g; local: *; };\nV2 { global: f; } V1;\n";
  write_file(map, script, sizeof script - 1);
  char *cc = fmt("gcc -O2 -shared -fPIC -Wl,--version-script='%s' -o '%s' '%s'", map, lib, src);
  CHECK(system(cc) == 0, "%s failed", cc);
  static const char *const fg[] = {"f", "g", NULL};
  uint64_t at[2];
  CHECK(core_module_exports(lib, fg, at) == LP_OK, "exports of %s: %s", lib, lp_error());
  CHECK(at[0] && at[0] == readelf_export(lib, "f"), "f at 0x%" PRIx64 ", its default version at 0x%" PRIx64,
        at[0], readelf_export(lib, "f"));
  CHECK(at[1] && at[1] == readelf_export(lib, "g"), "g at 0x%" PRIx64, at[1]);

  char *text = fmt("%s/not-elf.txt", tmpdir);
  write_file(text, "hello\n", 6);
  CHECK(core_module_exports(text, fg, at) == LP_ERR && strstr(lp_error(), "not an ELF file"),
        "a text file: \"%s\"", lp_error());
  free(text);
  free(cc);
  free(src);
  free(map);
  free(lib);
}
/* }=== */

/* {=== errors ===*/

static void expect_error(const char *what, const char *path, const char *substring) {
  core_module *m = (core_module *)1;
  lp_status st = core_module_open(path, &m);
  CHECK(st == LP_ERR && m == NULL, "%s: open succeeded", what);
  CHECK(strstr(lp_error(), substring) && strstr(lp_error(), path) && !strchr(lp_error(), '\n'),
        "%s: message \"%s\", expected \"%s\"", what, lp_error(), substring);
  if (st == LP_OK) core_module_close(m);
}

static void test_errors(void) {
  char *p = fmt("%s/does-not-exist", tmpdir);
  expect_error("missing file", p, "No such file or directory");
  free(p);
  expect_error("directory", tmpdir, "not a regular file");

  p = fmt("%s/text.txt", tmpdir);
  write_file(p, "hello, world\n", 13);
  expect_error("text file", p, "not an ELF file");
  free(p);

  p = fmt("%s/empty", tmpdir);
  write_file(p, "", 0);
  expect_error("empty file", p, "not an ELF file");
  free(p);

  /* Minimal headers: 52-byte ELF32 (i386 executable), 64-byte ELF64 for AArch64. */
  uint8_t h32[52] = {0x7f, 'E', 'L', 'F', 1 /*ELFCLASS32*/, 1 /*LSB*/, 1 /*EV_CURRENT*/};
  h32[16] = 2;  /* e_type = ET_EXEC */
  h32[18] = 3;  /* e_machine = EM_386 */
  h32[20] = 1;  /* e_version */
  h32[40] = 52; /* e_ehsize */
  p = fmt("%s/elf32", tmpdir);
  write_file(p, h32, sizeof h32);
  expect_error("32-bit ELF", p, "32-bit ELF is not supported yet");
  free(p);

  uint8_t h64[64] = {0x7f, 'E', 'L', 'F', 2 /*ELFCLASS64*/, 1 /*LSB*/, 1 /*EV_CURRENT*/};
  h64[16] = 2;   /* e_type = ET_EXEC */
  h64[18] = 183; /* e_machine = EM_AARCH64 */
  h64[20] = 1;   /* e_version */
  h64[52] = 64;  /* e_ehsize */
  p = fmt("%s/elf-aarch64", tmpdir);
  write_file(p, h64, sizeof h64);
  expect_error("AArch64 ELF", p, "ELF for machine 183 (AArch64) is not supported yet");
  free(p);

  h64[18] = 62; /* EM_X86_64 */
  h64[16] = 4;  /* ET_CORE */
  p = fmt("%s/core", tmpdir);
  write_file(p, h64, sizeof h64);
  expect_error("core file", p, "core file");
  free(p);

  /* A real ELF cut after its header: program headers lie beyond the end. */
  p = fmt("%s/truncated", tmpdir);
  char *cmd = fmt("head -c 200 /bin/ls > '%s'", p);
  if (sh(cmd) == 0) expect_error("truncated ELF", p, "truncated ELF file");
  free(cmd);
  free(p);

  char *src = fmt("%s/obj.c", tmpdir), *obj = fmt("%s/obj.o", tmpdir);
  write_file(src, "int f(int x) { return x + 1; }\n", 31);
  cmd = fmt("gcc -c -O2 -o '%s' '%s'", obj, src);
  if (sh(cmd) == 0) expect_error("relocatable object", obj, "relocatable");
  else CHECK(0, "cannot build %s", obj);
  free(cmd);
  free(src);
  free(obj);

  if (geteuid() != 0) { /* root reads everything */
    p = fmt("%s/unreadable", tmpdir);
    write_file(p, "x", 1);
    chmod(p, 0);
    expect_error("unreadable file", p, "not readable");
    free(p);
  }
}
/* }=== */

/* {=== /bin/ls: a stripped Debian PIE ===*/

static void test_bin_ls(void) {
  const char *ls = "/bin/ls";
  if (access(ls, R_OK) != 0) {
    printf("note: %s missing, skipped\n", ls);
    return;
  }
  oracle o;
  read_oracle(ls, &o);
  core_module *m = NULL;
  lp_status st = core_module_open(ls, &m);
  CHECK(st == LP_OK, "/bin/ls: %s", lp_error());
  if (st != LP_OK) {
    free_oracle(&o);
    return;
  }
  CHECK(m->is_pie, "/bin/ls: not PIE?");
  check_invariants("/bin/ls", m, &o);
  size_t from_fde = 0;
  for (size_t i = 0; i < m->nfunctions; i++)
    if (m->functions[i].sources & CORE_FROM_EH_FRAME) from_fde++;
  CHECK(from_fde >= 100, "/bin/ls: only %zu functions from FDEs", from_fde);
  CHECK(find(m, m->entry) != NULL, "/bin/ls: entry 0x%" PRIx64 " is no function", m->entry);
  CHECK(m->min_vaddr == 0 && m->max_vaddr > m->entry, "/bin/ls: vaddr range 0x%" PRIx64 "..0x%" PRIx64,
        m->min_vaddr, m->max_vaddr);
  core_module_close(m);
  free_oracle(&o);
}
/* }=== */

/* {=== a module's image (core/image.c) ===*/

/* What core_image_load should give for PATH: each PT_LOAD's file bytes at its
 * address minus the lowest one's page, zero everywhere else.  False when
 * PATH cannot be read as an ELF64 file. */
static bool expected_image(const char *path, uint64_t *base, size_t *size, uint8_t **bytes) {
  int fd = open(path, O_RDONLY);
  Elf64_Ehdr eh;
  if (fd < 0 || pread(fd, &eh, sizeof eh, 0) != sizeof eh) return false;
  Elf64_Phdr *ph = calloc(eh.e_phnum, sizeof *ph);
  if (!ph || pread(fd, ph, eh.e_phnum * sizeof *ph, (off_t)eh.e_phoff) != (ssize_t)(eh.e_phnum * sizeof *ph)) abort();
  uint64_t lo = UINT64_MAX, hi = 0;
  for (int i = 0; i < eh.e_phnum; i++)
    if (ph[i].p_type == PT_LOAD) {
      if (ph[i].p_vaddr < lo) lo = ph[i].p_vaddr;
      if (ph[i].p_vaddr + ph[i].p_memsz > hi) hi = ph[i].p_vaddr + ph[i].p_memsz;
    }
  *base = lo & ~(uint64_t)4095;
  *size = ((hi + 4095) & ~(uint64_t)4095) - *base;
  *bytes = calloc(1, *size);
  for (int i = 0; i < eh.e_phnum; i++)
    if (ph[i].p_type == PT_LOAD &&
        pread(fd, *bytes + (ph[i].p_vaddr - *base), ph[i].p_filesz, (off_t)ph[i].p_offset) != (ssize_t)ph[i].p_filesz)
      abort();
  free(ph);
  close(fd);
  return true;
}

static void check_image(const char *path) {
  uint64_t base;
  size_t size;
  uint8_t *want;
  if (!expected_image(path, &base, &size, &want)) {
    printf("note: %s unreadable, skipped\n", path);
    return;
  }
  core_image im;
  lp_status st = core_image_load(path, &im);
  CHECK(st == LP_OK, "%s: %s", path, lp_error());
  if (st == LP_OK) {
    CHECK(im.base == base && im.size == size, "%s: image at 0x%" PRIx64 " + 0x%zx, want 0x%" PRIx64 " + 0x%zx", path,
          im.base, im.size, base, size);
    size_t at = 0;
    while (at < size && at < im.size && im.bytes[at] == want[at]) at++;
    CHECK(at == size, "%s: first differing byte at 0x%" PRIx64, path, base + at);
    core_image_free(&im);
  }
  free(want);
}

/* PATH's first PT_LOAD moved one byte up in the address space: its offset
 * and address then disagree within a page, and the segment is read. */
static void shift_first_segment(const char *path) {
  int fd = open(path, O_RDWR);
  Elf64_Ehdr eh;
  Elf64_Phdr ph;
  if (fd < 0 || pread(fd, &eh, sizeof eh, 0) != sizeof eh) abort();
  for (int i = 0; i < eh.e_phnum; i++) {
    off_t at = (off_t)(eh.e_phoff + (uint64_t)i * sizeof ph);
    if (pread(fd, &ph, sizeof ph, at) != sizeof ph) abort();
    if (ph.p_type != PT_LOAD) continue;
    ph.p_vaddr += 1, ph.p_paddr += 1;
    if (pwrite(fd, &ph, sizeof ph, at) != sizeof ph) abort();
    break;
  }
  close(fd);
}

static void test_image(void) {
  check_image("/bin/ls");
  check_image("/lib/x86_64-linux-gnu/libc.so.6");
  /* one RWX segment at an offset that is not a page's, data after its file bytes (.bss) */
  const char *tiny = fmt("%s/tiny_bss", tmpdir), *src = fmt("%s/tiny_bss.c", tmpdir);
  const char text[] = "int d = 5; const char r[5000] = \"x\"; int bss[3000];\n"
                      "void _start(void) { __asm__ volatile(\"mov $60, %%eax; mov %0, %%edi; syscall\" :: "
                      "\"r\"(d + r[0] + bss[5]) : \"rax\", \"rdi\"); }\n";
  write_file(src, text, strlen(text));
  if (sh(fmt("gcc -O2 -nostdlib -static -Wl,-N -Wl,--no-warn-rwx-segments -o '%s' '%s'", tiny, src)) == 0) {
    check_image(tiny);
    const char *shifted = fmt("%s/tiny_shifted", tmpdir);
    sh(fmt("cp '%s' '%s'", tiny, shifted));
    shift_first_segment(shifted);
    check_image(shifted);
  }
  /* a file cut short of its segments: an error, not a SIGBUS when the image is read */
  const char *cut = fmt("%s/ls_cut", tmpdir);
  if (sh(fmt("head -c 40000 /bin/ls > '%s'", cut)) == 0) {
    core_image im;
    CHECK(core_image_load(cut, &im) != LP_OK, "a truncated file gave an image");
  }
}

/* }=== */

/* {=== the .eh_frame parser on crafted bytes ===*/

typedef struct buf {
  uint8_t b[512];
  size_t n;
} buf;

static void put(buf *b, uint64_t v, int n) {
  for (int i = 0; i < n; i++) b->b[b->n++] = (uint8_t)(v >> (8 * i));
}
static void puts_(buf *b, const char *s) {
  size_t n = strlen(s) + 1;
  memcpy(b->b + b->n, s, n);
  b->n += n;
}
static void patch32(buf *b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; i++) b->b[at + i] = (uint8_t)(v >> (8 * i));
}

/* A CIE with augmentation AUG; the caller appends the augmentation data in
 * DATA (length LEN). Returns its offset. */
static size_t cie(buf *b, int long_form, const char *aug, const uint8_t *data, size_t len) {
  size_t start = b->n;
  if (long_form) {
    put(b, 0xffffffffu, 4);
    put(b, 0, 8); /* length, patched below */
    put(b, 0, 8); /* CIE id */
  } else {
    put(b, 0, 4);
    put(b, 0, 4);
  }
  put(b, 1, 1); /* version */
  puts_(b, aug);
  put(b, 1, 1);    /* code alignment 1 */
  put(b, 0x78, 1); /* data alignment -8 */
  put(b, 16, 1);   /* return address register */
  if (aug[0] == 'z') {
    put(b, len, 1);
    memcpy(b->b + b->n, data, len);
    b->n += len;
  }
  put(b, 0x0c, 1), put(b, 7, 1), put(b, 8, 1); /* DW_CFA_def_cfa rsp+8 */
  if (long_form) {
    uint64_t l = b->n - start - 12;
    for (int i = 0; i < 8; i++) b->b[start + 4 + i] = (uint8_t)(l >> (8 * i));
  } else {
    patch32(b, start, (uint32_t)(b->n - start - 4));
  }
  return start;
}

static void test_eh_frame_parser(void) {
  /* CIE 1: "zPLR" with sdata4|pcrel personality, LSDA udata4, R = pcrel|sdata4.
   * CIE 2: 64-bit length, "zR" with R = udata8.  CIE 3: "zR" with datarel|sdata4.
   * CIE 4: no augmentation (absptr). */
  buf b = {{0}, 0};
  const uint64_t addr = 0x2000, got = 0x9000;
  uint8_t aug1[] = {0x1b, 0x12, 0x34, 0x56, 0x78, 0x03, 0x1b}; /* P enc, P ptr(4), L enc, R enc */
  size_t c1 = cie(&b, 0, "zPLR", aug1, sizeof aug1);
  size_t f1 = b.n; /* FDE: pc_begin pcrel -> 0x1100, range 0x40, aug data: LSDA udata4 */
  put(&b, 0, 4);
  put(&b, b.n - c1, 4);
  put(&b, (uint32_t)(0x1100 - (addr + b.n)), 4);
  put(&b, 0x40, 4);
  put(&b, 4, 1), put(&b, 0xdeadbeef, 4);
  put(&b, 0, 1);
  patch32(&b, f1, (uint32_t)(b.n - f1 - 4));

  uint8_t aug2[] = {0x04};
  size_t c2 = cie(&b, 1, "zR", aug2, sizeof aug2);
  size_t f2 = b.n; /* 64-bit FDE: udata8 0x401136, range 0x22 */
  put(&b, 0xffffffffu, 4);
  put(&b, 0, 8);
  put(&b, b.n - c2, 8);
  put(&b, 0x401136, 8);
  put(&b, 0x22, 8);
  put(&b, 0, 1);
  { uint64_t l = b.n - f2 - 12; for (int i = 0; i < 8; i++) b.b[f2 + 4 + i] = (uint8_t)(l >> (8 * i)); }

  uint8_t aug3[] = {0x3b};
  size_t c3 = cie(&b, 0, "zR", aug3, sizeof aug3);
  size_t f3 = b.n; /* datarel sdata4: -0x100 from the GOT */
  put(&b, 0, 4);
  put(&b, b.n - c3, 4);
  put(&b, (uint32_t)-0x100, 4);
  put(&b, 0x10, 4);
  put(&b, 0, 1);
  patch32(&b, f3, (uint32_t)(b.n - f3 - 4));

  size_t c4 = cie(&b, 0, "", NULL, 0);
  size_t f4 = b.n; /* no augmentation: absptr, no augmentation length */
  put(&b, 0, 4);
  put(&b, b.n - c4, 4);
  put(&b, 0x3000, 8);
  put(&b, 0x8, 8);
  patch32(&b, f4, (uint32_t)(b.n - f4 - 4));

  put(&b, 0, 4); /* terminator */
  put(&b, 0x12345678, 4); /* garbage after it must be ignored */

  core_eh_frame frame = {b.b, b.n, addr, got, 0};
  core_fde *fdes = NULL;
  size_t n = 0;
  lp_status st = core_eh_frame_fdes(&frame, &fdes, &n);
  CHECK(st == LP_OK, "eh_frame parser: %s", lp_error());
  const core_fde want[] = {{0x1100, 0x40, f1}, {0x401136, 0x22, f2}, {0x9000 - 0x100, 0x10, f3},
                           {0x3000, 0x8, f4}};
  CHECK(n == 4, "eh_frame parser: %zu FDEs, expected 4", n);
  for (size_t i = 0; i < n && i < 4; i++) {
    CHECK(fdes[i].pc_begin == want[i].pc_begin && fdes[i].pc_range == want[i].pc_range &&
              fdes[i].offset == want[i].offset,
          "eh_frame parser: FDE %zu is 0x%" PRIx64 "+0x%" PRIx64 " at offset %zu (expected %zu)", i,
          fdes[i].pc_begin, fdes[i].pc_range, fdes[i].offset, want[i].offset);
    core_cfi cfi; /* read again from its offset: the same FDE, as the walk finds it */
    core_cfi walked;
    CHECK(core_eh_frame_cfi(&frame, want[i].offset, &cfi) == LP_OK && cfi.pc_begin == want[i].pc_begin &&
              cfi.pc_range == want[i].pc_range,
          "core_eh_frame_cfi at offset %zu: %s", want[i].offset, lp_error());
    CHECK(core_eh_frame_find(&frame, want[i].pc_begin, &walked) == LP_OK && walked.fde_offset == cfi.fde_offset,
          "core_eh_frame_find(0x%" PRIx64 ") and core_eh_frame_cfi disagree", want[i].pc_begin);
  }
  CHECK(core_eh_frame_cfi(&frame, c1, &(core_cfi){0}) == LP_ERR, "core_eh_frame_cfi read a CIE as an FDE");
  free(fdes);

  /* Damage: an entry running past the end keeps what came before it. */
  patch32(&b, f3, 0x7fffffff);
  st = core_eh_frame_fdes(&frame, &fdes, &n);
  CHECK(st == LP_ERR && n == 2 && strstr(lp_error(), "eh_frame"),
        "eh_frame parser: damaged input gave %zu FDEs, \"%s\"", n, lp_error());
  free(fdes);
}
/* }=== */

int main(void) {
  if (!mkdtemp(tmpdir)) {
    perror("mkdtemp");
    return 2;
  }
  test_eh_frame_parser();
  test_errors();
  test_programs();
  test_parts();
  test_callees();
  test_bin_ls();
  test_image();
  test_exports();
  if (getenv("KEEP_TMP")) { /* for debugging: leave the built programs */
    printf("test_module: kept %s\n", tmpdir);
  } else {
    char *rm = fmt("rm -rf '%s'", tmpdir);
    if (system(rm) != 0) printf("note: could not remove %s\n", tmpdir);
    free(rm);
  }
  printf("test_module: %d checks, %d failures\n", checks, failures);
  return failures ? 1 : 0;
}
