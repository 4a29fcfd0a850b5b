/* test_lines.c — checks core/lines.c (the DWARF line table) against an
 * independent oracle: small C programs compiled here with the system gcc (two
 * .c files in src/, an inline function in inc/util.h, built from build/ with
 * relative paths; -O0, -O2, DWARF 4, compressed sections, non-PIE,
 * --gc-sections) are compared, at every instruction address objdump -d shows,
 * with what binutils' addr2line says: same line, same file (basename and full
 * path).  Also: a stripped copy and a build without -g have no lines, a copy
 * whose DWARF sits in a .gnu_debuglink file has the same lines as the
 * original, a non-ELF file fails, core_lines_range returns rows in order within
 * [lo, hi), and the Lua interpreter of the benchmarks (when built) loads fast
 * and agrees with addr2line too.  lines.c reads the line programs itself
 * (dwarf_line.c): every row libdw's dwarf_getsrclines gives must be in the
 * table, same address, line and file (compare_with_libdw), and a program
 * cut short is an error.  Runs with no arguments; prints each failure; exit
 * status 0 when all pass. */
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>

#include "lines.h"
#include "unit.h"

static const char name[] = "lines"; /* for CHECK */
static char tmpdir[PATH_MAX];


/* {=== helpers ===*/

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f || fputs(text, f) < 0) {
    printf("cannot write %s\n", path);
    exit(2);
  }
  fclose(f);
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static const char *base_name(const char *p) {
  const char *s = strrchr(p, '/');
  return s ? s + 1 : p;
}

/* }=== */

/* {=== the oracle: objdump for addresses, addr2line for their lines ===*/

typedef struct insn {
  uint64_t addr;
  char func[256];
  int padding; /* a nop or int3: alignment between functions */
} insn;

/* Every instruction address objdump -d shows, with its function. */
static insn *objdump_insns(const char *bin, size_t *n) {
  char *cmd = fmt("objdump -d --no-show-raw-insn '%s'", bin);
  FILE *p = popen(cmd, "r");
  free(cmd);
  if (!p) return NULL;
  size_t cap = 1024;
  insn *v = malloc(cap * sizeof *v);
  *n = 0;
  char line[1024], func[256] = "";
  while (fgets(line, sizeof line, p)) {
    uint64_t a;
    char name[256];
    if (sscanf(line, "%" SCNx64 " <%255[^>]>:", &a, name) == 2) {
      snprintf(func, sizeof func, "%s", name);
      continue;
    }
    int used = 0;
    if (line[0] == ' ' && sscanf(line, " %" SCNx64 ":%n", &a, &used) == 1 && used > 0 &&
        line[used] == '\t' && !strstr(line + used, "(bad)")) {
      if (*n == cap) v = realloc(v, (cap *= 2) * sizeof *v);
      v[*n].addr = a;
      const char *op = line + used + 1;
      v[*n].padding = strstr(op, "nop") || strncmp(op, "int3", 4) == 0 ||
                      strncmp(op, "xchg   %ax,%ax", 14) == 0;
      snprintf(v[*n].func, sizeof v[*n].func, "%s", func);
      (*n)++;
    }
  }
  pclose(p);
  return v;
}

typedef struct where {
  char *file; /* NULL for "??" */
  unsigned line;
} where;

/* addr2line's answer for each address (all in one call, through a file). */
static where *addr2line(const char *bin, const insn *v, size_t n) {
  char *in = fmt("%s/addrs.txt", tmpdir);
  FILE *f = fopen(in, "w");
  for (size_t i = 0; i < n; i++) fprintf(f, "0x%" PRIx64 "\n", v[i].addr);
  fclose(f);
  char *cmd = fmt("addr2line -e '%s' < '%s'", bin, in);
  FILE *p = popen(cmd, "r");
  free(cmd);
  free(in);
  where *w = calloc(n ? n : 1, sizeof *w);
  char line[PATH_MAX + 128];
  for (size_t i = 0; i < n && fgets(line, sizeof line, p); i++) {
    line[strcspn(line, "\n")] = '\0';
    char *disc = strstr(line, " (discriminator ");
    if (disc) *disc = '\0';
    char *colon = strrchr(line, ':');
    if (!colon) continue;
    *colon = '\0';
    w[i].line = colon[1] == '?' ? 0 : (unsigned)strtoul(colon + 1, NULL, 10);
    if (strcmp(line, "??") != 0) {
      char real[PATH_MAX];
      w[i].file = strdup(realpath(line, real) ? real : line); /* addr2line does not normalise */
    }
  }
  pclose(p);
  return w;
}

/* gdb's answer for each address (info line *ADDR), a second opinion where
 * addr2line disagrees: binutils 2.40's addr2line starts every DWARF 5 sequence
 * at file entry 0 instead of 1 (binutils PR 30783, fixed in 2.42), so it names
 * the unit's main file for the rows before the first DW_LNS_set_file.  File
 * names gdb prints relative are taken from COMP_DIR.  NULL when no gdb. */
static where *gdb_lines(const char *bin, const uint64_t *a, size_t n, const char *comp_dir) {
  if (n == 0 || system("command -v gdb > /dev/null 2>&1") != 0) return NULL;
  char *script = fmt("%s/gdb.cmd", tmpdir);
  FILE *f = fopen(script, "w");
  for (size_t i = 0; i < n; i++)
    fprintf(f, "echo @@%zu\\n\ninfo line *0x%" PRIx64 "\n", i, a[i]);
  fclose(f);
  char *cmd = fmt("gdb -nx -batch -x '%s' '%s' 2>&1", script, bin);
  FILE *p = popen(cmd, "r");
  free(cmd);
  free(script);
  where *w = calloc(n, sizeof *w);
  char line[PATH_MAX + 256];
  size_t cur = n;
  while (fgets(line, sizeof line, p)) {
    size_t k;
    unsigned ln;
    char file[PATH_MAX];
    if (sscanf(line, "@@%zu", &k) == 1) cur = k < n ? k : n;
    else if (cur < n && !w[cur].file && sscanf(line, "Line %u of \"%4095[^\"]\"", &ln, file) == 2) {
      char *full = file[0] == '/' ? strdup(file) : fmt("%s/%s", comp_dir, file), real[PATH_MAX];
      w[cur].file = strdup(realpath(full, real) ? real : full);
      w[cur].line = ln;
      free(full);
    }
  }
  pclose(p);
  return w;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* The addresses of the is_stmt rows objdump --dwarf=decodedline shows (its
 * last column is "x"), sorted. */
static uint64_t *objdump_stmt_addrs(const char *bin, size_t *n) {
  char *cmd = fmt("objdump --dwarf=decodedline '%s' 2>/dev/null", bin);
  FILE *p = popen(cmd, "r");
  free(cmd);
  size_t cap = 1024;
  uint64_t *v = malloc(cap * sizeof *v);
  *n = 0;
  char line[PATH_MAX + 256];
  while (p && fgets(line, sizeof line, p)) {
    char *hex = strstr(line, " 0x");
    size_t len = strcspn(line, "\n");
    while (len && line[len - 1] == ' ') len--;
    if (!hex || len < 2 || line[len - 1] != 'x' || line[len - 2] != ' ') continue;
    if (*n == cap) v = realloc(v, (cap *= 2) * sizeof *v);
    v[(*n)++] = strtoull(hex + 1, NULL, 16);
  }
  if (p) pclose(p);
  qsort(v, *n, sizeof *v, cmp_u64);
  return v;
}

/* Each row's stmt flag says whether the table has an is_stmt row there. */
static void check_stmt(const char *what, const char *bin, const core_lines *l) {
  size_t n, bad = 0, nstmt = 0;
  uint64_t *v = objdump_stmt_addrs(bin, &n);
  for (size_t i = 0; i < l->nrows; i++) {
    int listed = bsearch(&l->rows[i].addr, v, n, sizeof *v, cmp_u64) != NULL;
    nstmt += l->rows[i].stmt;
    if (listed != l->rows[i].stmt && bad++ < 5)
      printf("FAIL %s: row 0x%" PRIx64 " stmt %d, objdump %d\n", what, l->rows[i].addr,
             l->rows[i].stmt, listed);
  }
  CHECK(bad == 0, "%s: %zu rows with another is_stmt flag than objdump's", what, bad);
  CHECK(nstmt > 0 && nstmt < l->nrows, "%s: %zu of %zu rows are statements", what, nstmt, l->nrows);
  free(v);
}

/* }=== */

/* {=== checks on one loaded table ===*/

static void check_table_shape(const char *what, const core_lines *l) {
  int sorted = 1, files_ok = 1;
  for (size_t i = 1; i < l->nrows; i++)
    if (l->rows[i].addr <= l->rows[i - 1].addr) sorted = 0;
  for (size_t i = 0; i < l->nrows; i++)
    if (l->rows[i].file >= l->nfiles) files_ok = 0;
  CHECK(sorted, "%s: rows not strictly sorted by address", what);
  CHECK(files_ok, "%s: a row's file index is out of range", what);
  for (size_t i = 0; i < l->nfiles; i++) {
    const char *f = l->files[i];
    CHECK(f[0] == '/' && !strstr(f, "/./") && !strstr(f, "/../") && !strstr(f, "//") &&
              strcmp(f + strlen(f) - 2, "/.") != 0 && strcmp(f + strlen(f) - 3, "/..") != 0,
          "%s: file path not absolute and normalised: %s", what, f);
    for (size_t j = 0; j < i; j++) CHECK(strcmp(f, l->files[j]) != 0, "%s: file twice: %s", what, f);
  }
  const core_line *first;
  CHECK(core_lines_range(l, 0, UINT64_MAX, &first) == l->nrows && (l->nrows == 0 || first == l->rows),
        "%s: range over everything is not all rows", what);
}

/* core_lines_range over each function of V (the first MAX ones): in order,
 * within bounds, complete (against a scan of all rows). */
static void check_ranges(const char *what, const core_lines *l, const insn *v, size_t n, size_t max) {
  size_t funcs = 0;
  for (size_t i = 0, j; i < n && funcs < max; i = j, funcs++) {
    for (j = i + 1; j < n && strcmp(v[j].func, v[i].func) == 0;) j++;
    uint64_t lo = v[i].addr, hi = v[j - 1].addr + 1;
    const core_line *first;
    size_t k = core_lines_range(l, lo, hi, &first), brute = 0;
    for (size_t m = 0; m < l->nrows; m++) brute += l->rows[m].addr >= lo && l->rows[m].addr < hi;
    int ok = k == brute && (k == 0 || first != NULL);
    for (size_t m = 0; m < k && ok; m++)
      ok = first[m].addr >= lo && first[m].addr < hi && (m == 0 || first[m].addr > first[m - 1].addr);
    CHECK(ok, "%s: core_lines_range(<%s> 0x%" PRIx64 "..0x%" PRIx64 ") gives %zu rows, %zu expected",
          what, v[i].func, lo, hi, k, brute);
  }
}

/* Compares core_lines_find with addr2line at every STRIDE-th instruction of
 * BIN (with gdb as the judge where they differ, when COMP_DIR is given or
 * !FULL_PATHS); file
 * names compared in full when FULL_PATHS, else by basename (when the DWARF's
 * comp_dir is relative and the sources are absent, as in Debian's debug
 * packages).  Also checks core_lines_range on the first functions.  Returns
 * how many addresses a row covers. */
static size_t compare_with_addr2line(const char *what, const char *bin, const core_lines *l,
                                     const char *must_file, const char *comp_dir, size_t stride,
                                     int full_paths) {
  size_t n = 0;
  insn *v = objdump_insns(bin, &n);
  CHECK(v && n > 0, "%s: objdump shows no instructions", what);
  if (!v || n == 0) return 0;
  int inside = 1; /* no row outside the code (discarded functions' rows at 0) */
  for (size_t i = 0; i < l->nrows; i++)
    if (l->rows[i].addr < v[0].addr || l->rows[i].addr > v[n - 1].addr) inside = 0;
  CHECK(inside, "%s: a row lies outside the code objdump shows", what);
  check_ranges(what, l, v, n, l->nrows > 50000 ? 200 : n);
  size_t kept = 0;
  for (size_t i = 0; i < n; i += stride) v[kept++] = v[i];
  n = kept;
  where *w = addr2line(bin, v, n);
  size_t *differ = malloc(n * sizeof *differ), ndiffer = 0, covered = 0, in_must = 0;
  for (size_t i = 0; i < n; i++) {
    const core_line *r = core_lines_find(l, v[i].addr);
    const char *ours = r ? l->files[r->file] : NULL;
    if (r) covered++;
    if (ours && must_file && strcmp(base_name(ours), must_file) == 0) in_must++;
    int same_file = ours && w[i].file && strcmp(base_name(ours), base_name(w[i].file)) == 0 &&
                    (!full_paths || strcmp(ours, w[i].file) == 0);
    int same;
    if (!w[i].file) same = r == NULL; /* addr2line: ??, no row */
    else if (w[i].line == 0) /* no row, the file from the function's DIE; or a line-0 row */
      same = r == NULL || (r->line == 0 && same_file);
    else same = r && r->line == w[i].line && same_file;
    if (!same) differ[ndiffer++] = i;
  }

  /* Where addr2line differs, gdb decides: it must agree with us. */
  uint64_t *a = calloc(ndiffer ? ndiffer : 1, sizeof *a);
  for (size_t k = 0; k < ndiffer; k++) a[k] = v[differ[k]].addr;
  where *g = comp_dir || !full_paths ? gdb_lines(bin, a, ndiffer, comp_dir ? comp_dir : ".") : NULL;
  size_t bad = 0, judged = 0, padding = 0;
  for (size_t k = 0; k < ndiffer; k++) {
    size_t i = differ[k];
    const core_line *r = core_lines_find(l, v[i].addr);
    const char *ours = r ? l->files[r->file] : NULL;
    /* Alignment padding a row covers per the line table, which addr2line does
     * not answer because the unit's address ranges leave it out. */
    if (r && !w[i].file && v[i].padding) {
      padding++;
      continue;
    }
    /* The PR 30783 pattern: addr2line has our line but another file, and gdb
     * has our file (its line may differ: gdb prefers is_stmt rows). */
    if (g && r && g[k].file && w[i].line == r->line &&
        strcmp(full_paths ? ours : base_name(ours), full_paths ? g[k].file : base_name(g[k].file)) == 0) {
      judged++;
      continue;
    }
    if (bad++ < 8)
      printf("FAIL %s: 0x%" PRIx64 " <%s>: ours %s:%u, addr2line %s:%u, gdb %s:%u\n", what,
             v[i].addr, v[i].func, ours ? ours : "(none)", r ? r->line : 0,
             w[i].file ? w[i].file : "??", w[i].line, g && g[k].file ? g[k].file : "-",
             g ? g[k].line : 0);
  }
  checks++;
  if (bad) {
    failures++;
    printf("FAIL %s: %zu of %zu instruction addresses differ from addr2line\n", what, bad, n);
  }
  if (judged)
    printf("note: %s: %zu addresses where addr2line names another file (binutils PR 30783) "
           "and gdb agrees with us\n", what, judged);
  if (padding)
    printf("note: %s: %zu padding instructions have a row, addr2line says ??\n", what, padding);
  for (size_t k = 0; g && k < ndiffer; k++) free(g[k].file);
  free(g);
  free(a);
  free(differ);
  if (must_file) CHECK(in_must > 0, "%s: no address maps to %s", what, must_file);
  CHECK(covered > 0, "%s: no instruction address has a line", what);

  for (size_t i = 0; i < n; i++) free(w[i].file);
  free(w);
  free(v);
  return covered;
}

/* }=== */

/* {=== the test programs ===*/

/* libdw as a second reader of the same line programs: every row it gives
 * (the last at its address, in its sorted order) inside a sequence the table
 * kept is a row of the table at that address, with the same line and the same
 * file (libdw's path, joined to the unit's comp_dir when relative, resolved by
 * realpath: the sources exist here).  Rows at
 * an address where a sequence ends cover nothing and may be missing. */
static void compare_with_libdw(const char *what, const char *bin, const core_lines *l) {
  int fd = open(bin, O_RDONLY | O_CLOEXEC);
  Dwarf *dw = fd >= 0 ? dwarf_begin(fd, DWARF_C_READ) : NULL;
  CHECK(dw != NULL, "%s: libdw cannot open %s", what, bin);
  size_t compared = 0, bad = 0;
  Dwarf_CU *cu = NULL;
  Dwarf_Die cudie;
  uint8_t unit_type;
  while (dw && dwarf_get_units(dw, cu, &cu, NULL, &unit_type, &cudie, NULL) == 0) {
    Dwarf_Lines *lines;
    size_t n;
    if (dwarf_getsrclines(&cudie, &lines, &n) != 0) continue;
    Dwarf_Attribute attr;
    const char *comp_dir = dwarf_formstring(dwarf_attr(&cudie, DW_AT_comp_dir, &attr));
    uint64_t *ends = malloc((n ? n : 1) * sizeof *ends); /* where the unit's sequences end, sorted */
    size_t nends = 0;
    for (size_t i = 0; ends && i < n; i++) {
      Dwarf_Addr e;
      bool je = false;
      dwarf_lineendsequence(dwarf_onesrcline(lines, i), &je);
      if (je && dwarf_lineaddr(dwarf_onesrcline(lines, i), &e) == 0) ends[nends++] = e;
    }
    if (ends) qsort(ends, nends, sizeof *ends, cmp_u64);
    for (size_t i = 0; ends && i < n; i++) {
      Dwarf_Line *ln = dwarf_onesrcline(lines, i), *next = i + 1 < n ? dwarf_onesrcline(lines, i + 1) : NULL;
      Dwarf_Addr a, b = 0;
      bool end = false;
      dwarf_lineaddr(ln, &a);
      dwarf_lineendsequence(ln, &end);
      if (next) dwarf_lineaddr(next, &b);
      if (end || (next && b == a)) continue; /* not the last row at A */
      uint64_t key = a;
      bool ends_here = bsearch(&key, ends, nends, sizeof *ends, cmp_u64) != NULL;
      const core_line *r = core_lines_find(l, a);
      if (!r || ends_here) continue; /* outside the kept sequences, or covering nothing */
      int lineno = 0;
      dwarf_lineno(ln, &lineno);
      const char *src = dwarf_linesrc(ln, NULL, NULL);
      char *joined = src && src[0] != '/' && comp_dir ? fmt("%s/%s", comp_dir, src) : NULL;
      char *full = src ? realpath(joined ? joined : src, NULL) : NULL;
      free(joined);
      bool same = r->addr == a && r->line == (uint32_t)lineno && full && strcmp(l->files[r->file], full) == 0;
      if (!same && bad++ < 5)
        printf("  %s: 0x%" PRIx64 ": libdw says %s:%d, the table %s:%u at 0x%" PRIx64 "\n", what, (uint64_t)a,
               src ? src : "?", lineno, l->files[r->file], r->line, r->addr);
      compared++;
      free(full);
    }
    free(ends);
  }
  CHECK(bad == 0, "%s: %zu of %zu rows differ from libdw's", what, bad, compared);
  CHECK(compared > 20, "%s: only %zu rows compared with libdw's", what, compared);
  if (dw) dwarf_end(dw);
  if (fd >= 0) close(fd);
}

static const char util_h[] =
    "#ifndef UTIL_H\n"
    "#define UTIL_H\n"
    "#include <stdio.h>\n"
    "static inline int clamp(int v, int lo, int hi) {\n"
    "  if (v < lo)\n"
    "    return lo;\n"
    "  if (v > hi)\n"
    "    return hi;\n"
    "  return v;\n"
    "}\n"
    "static inline void report(const char *what, int v) {\n"
    "  if (v > 1000)\n"
    "    fprintf(stderr, \"%s: %d\\n\", what,\n"
    "            v);\n"
    "}\n"
    "int sum_clamped(const int *a, int n);\n"
    "int unused_function(int x);\n"
    "#endif\n";

static const char util_c[] =
    "#include \"util.h\"\n"
    "int sum_clamped(const int *a, int n) {\n"
    "  int s = 0;\n"
    "  for (int i = 0; i < n; i++)\n"
    "    s += clamp(a[i], -10, 10);\n"
    "  report(\"sum\", s);\n"
    "  return s;\n"
    "}\n"
    "\n"
    "int unused_function(int x) {\n"
    "  int y = x * 3;\n"
    "  for (int i = 0; i < x; i++)\n"
    "    y ^= i * 7;\n"
    "  return y + 1;\n"
    "}\n";

static const char main_c[] =
    "#include <stdio.h>\n"
    "#include <stdlib.h>\n"
    "#include \"util.h\"\n"
    "\n"
    "static int table[64];\n"
    "\n"
    "__attribute__((noinline)) static int fill(int n, int seed) {\n"
    "  if (n > 64)\n"
    "    n = 64;\n"
    "  for (int i = 0; i < n; i++) {\n"
    "    seed = seed * 1103515245 + 12345;\n"
    "    table[i] = (seed >> 16) % 50 - 25;\n"
    "  }\n"
    "  return n;\n"
    "}\n"
    "\n"
    "__attribute__((cold, noinline)) static void fail(const char *what) {\n"
    "  fprintf(stderr, \"%s\\n\", what);\n"
    "  exit(2);\n"
    "}\n"
    "\n"
    "int main(int argc, char **argv) {\n"
    "  int n = fill(argc > 1 ? atoi(argv[1]) : 64, 7);\n"
    "  if (n < 0)\n"
    "    fail(\"negative\");\n"
    "  int s = sum_clamped(table, n);\n"
    "  report(\"main\", s * n);\n"
    "  printf(\"%d %d\\n\", s, clamp(s, 0, 100));\n"
    "  return 0;\n"
    "}\n";

typedef struct variant {
  const char *name, *flags;
} variant;

static const variant variants[] = {
    {"O0", "-g -O0"},
    {"O2", "-g -O2"},
    {"O2-dwarf4", "-g -gdwarf-4 -O2"},
    {"O2-gz", "-g -O2 -gz"},
    {"O2-nopie", "-g -O2 -no-pie -fno-pie"},
    {"O2-gc", "-g -O2 -ffunction-sections -Wl,--gc-sections"},
    {"Os-split", "-g -Os -freorder-blocks-and-partition"},
};

/* Builds variant V from build/ with relative source paths; its path or NULL. */
static char *build(const variant *v) {
  char *bin = fmt("%s/build/prog-%s", tmpdir, v->name);
  char *cmd = fmt("cd '%s/build' && gcc %s -I../inc ../src/main.c ../src/util.c -o '%s'", tmpdir,
                  v->flags, bin);
  int rc = sh(cmd);
  free(cmd);
  CHECK(rc == 0, "cannot build the %s program", v->name);
  if (rc == 0) return bin;
  free(bin);
  return NULL;
}

/* }=== */

static void test_programs(void) {
  char *p;
  sh(p = fmt("mkdir -p '%s/src' '%s/inc' '%s/build'", tmpdir, tmpdir, tmpdir)), free(p);
  write_file(p = fmt("%s/inc/util.h", tmpdir), util_h), free(p);
  write_file(p = fmt("%s/src/util.c", tmpdir), util_c), free(p);
  write_file(p = fmt("%s/src/main.c", tmpdir), main_c), free(p);

  for (size_t i = 0; i < sizeof variants / sizeof *variants; i++) {
    const variant *v = &variants[i];
    char *bin = build(v);
    if (!bin) continue;
    core_lines l;
    lp_status st = core_lines_load(bin, &l);
    CHECK(st == LP_OK, "%s: core_lines_load: %s", v->name, lp_error());
    if (st == LP_OK) {
      CHECK(l.present && l.nrows > 0, "%s: no lines found", v->name);
      check_table_shape(v->name, &l);
      int has_main = 0, has_util = 0, has_h = 0;
      for (size_t k = 0; k < l.nfiles; k++) {
        char *want = fmt("%s/src/main.c", tmpdir);
        has_main |= strcmp(l.files[k], want) == 0;
        free(want);
        want = fmt("%s/src/util.c", tmpdir);
        has_util |= strcmp(l.files[k], want) == 0;
        free(want);
        want = fmt("%s/inc/util.h", tmpdir);
        has_h |= strcmp(l.files[k], want) == 0;
        free(want);
      }
      CHECK(has_main && has_util && has_h, "%s: files main.c %d, util.c %d, util.h %d", v->name,
            has_main, has_util, has_h);
      char *comp_dir = fmt("%s/build", tmpdir);
      compare_with_addr2line(v->name, bin, &l, "util.h", comp_dir, 1, 1);
      free(comp_dir);
      check_stmt(v->name, bin, &l);
      compare_with_libdw(v->name, bin, &l);
      CHECK(core_lines_find(&l, 0) == NULL && core_lines_find(&l, UINT64_MAX) == NULL,
            "%s: addresses 0 and ~0 have a line", v->name);
    }
    core_lines_free(&l);

    if (strcmp(v->name, "O2") == 0) {
      /* Stripped: no lines, not an error. */
      char *s = fmt("%s-stripped", bin);
      sh(p = fmt("strip -o '%s' '%s'", s, bin)), free(p);
      st = core_lines_load(s, &l);
      CHECK(st == LP_OK && !l.present && l.nrows == 0, "stripped: status %d present %d rows %zu (%s)",
            st, l.present, l.nrows, lp_error());
      core_lines_free(&l);
      free(s);

      /* DWARF in a separate file named by .gnu_debuglink: same table. */
      char *dbg = fmt("%s.debug", bin), *lnk = fmt("%s-linked", bin);
      sh(p = fmt("objcopy --only-keep-debug '%s' '%s' && strip --strip-debug -o '%s' '%s' && "
                 "objcopy --add-gnu-debuglink='%s' '%s'",
                 bin, dbg, lnk, bin, dbg, lnk)), free(p);
      core_lines a, b;
      lp_status sa = core_lines_load(bin, &a), sb = core_lines_load(lnk, &b);
      int same = sa == LP_OK && sb == LP_OK && a.nrows == b.nrows && b.present;
      for (size_t k = 0; same && k < a.nrows; k++)
        same = a.rows[k].addr == b.rows[k].addr && a.rows[k].line == b.rows[k].line &&
               strcmp(a.files[a.rows[k].file], b.files[b.rows[k].file]) == 0;
      CHECK(same, "debuglink: %zu rows from the debug file, %zu from the original (%s)", b.nrows,
            a.nrows, lp_error());
      core_lines_free(&a);
      core_lines_free(&b);
      free(dbg);
      free(lnk);
    }
    free(bin);
  }

  /* Built without -g: no lines (Debian's crt files carry no DWARF either). */
  char *nog = fmt("%s/build/prog-nog", tmpdir);
  if (sh(p = fmt("cd '%s/build' && gcc -O2 -I../inc ../src/main.c ../src/util.c -o '%s'", tmpdir,
                 nog)) == 0) {
    core_lines l;
    lp_status st = core_lines_load(nog, &l);
    CHECK(st == LP_OK && !l.present && l.nrows == 0, "no -g: status %d present %d rows %zu (%s)", st,
          l.present, l.nrows, lp_error());
    core_lines_free(&l);
  }
  free(p);
  free(nog);
}

/* Keeps unit_length, spoils the version and all after it. */
static bool spoil_from_version(FILE *w, unsigned long long off, unsigned long long size) {
  fseek(w, (long)off + 4, SEEK_SET);
  for (unsigned long long i = 4; i < size; i++) fputc(0xff, w);
  return true;
}

/* Keeps the header (DWARF 5, 32-bit) and makes the program's first opcode an
 * extended one longer than the unit. */
static bool spoil_first_opcode(FILE *w, unsigned long long off, unsigned long long size) {
  unsigned char h[12];
  fseek(w, (long)off, SEEK_SET);
  if (size < 16 || fread(h, 1, sizeof h, w) != sizeof h || h[4] != 5) return false;
  unsigned long hlen = h[8] | h[9] << 8 | (unsigned long)h[10] << 16 | (unsigned long)h[11] << 24;
  static const unsigned char spoil[] = {0x00, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x02};
  fseek(w, (long)(off + 12 + hlen), SEEK_SET);
  return fwrite(spoil, 1, sizeof spoil, w) == sizeof spoil;
}

/* A copy of prog-O2 named NAME with its .debug_line spoiled by SPOIL: loading
 * it must fail with a message containing WANT. */
static void check_spoiled(const char *name, bool (*spoil)(FILE *, unsigned long long, unsigned long long),
                          const char *want) {
  char *bin = fmt("%s/build/prog-O2", tmpdir), *p = fmt("%s/%s", tmpdir, name);
  char *cmd = fmt("cp '%s' '%s' && readelf -SW '%s' | awk '$2 == \".debug_line\" {print $5, $6}'", bin, p, p);
  FILE *f = popen(cmd, "r");
  unsigned long long off = 0, size = 0;
  FILE *w = f && fscanf(f, "%llx %llx", &off, &size) == 2 && size > 8 ? fopen(p, "r+b") : NULL;
  bool spoilt = w && spoil(w, off, size);
  if (w) fclose(w);
  CHECK(spoilt, "%s: cannot spoil the .debug_line of %s", name, bin);
  if (spoilt) {
    core_lines l;
    lp_status st = core_lines_load(p, &l);
    CHECK(st == LP_ERR && strstr(lp_error(), want), "%s: status %d: \"%s\"", name, st, lp_error());
    core_lines_free(&l);
  }
  if (f) pclose(f);
  free(cmd);
  free(p);
  free(bin);
}

static void test_errors(void) {
  core_lines l;
  char *p = fmt("%s/not-elf.txt", tmpdir);
  write_file(p, "this is not an ELF file, only some text\n");
  CHECK(core_lines_load(p, &l) == LP_ERR && strstr(lp_error(), "not an ELF"),
        "non-ELF file: \"%s\"", lp_error());
  core_lines_free(&l);
  free(p);

  p = fmt("%s/does-not-exist", tmpdir);
  CHECK(core_lines_load(p, &l) == LP_ERR && strstr(lp_error(), "does-not-exist"),
        "missing file: \"%s\"", lp_error());
  core_lines_free(&l);
  free(p);

  /* The first 600 bytes of a real program: ELF header, nothing else. */
  char *bin = fmt("%s/build/prog-O0", tmpdir);
  p = fmt("%s/truncated", tmpdir);
  char *cmd = fmt("head -c 600 '%s' > '%s'", bin, p);
  if (sh(cmd) == 0) {
    lp_status st = core_lines_load(p, &l);
    CHECK(st == LP_ERR && strstr(lp_error(), "truncated"), "truncated ELF: status %d: \"%s\"", st,
          lp_error());
    core_lines_free(&l);
  }
  free(cmd);
  free(p);
  free(bin);

  /* A line table whose bytes are garbage: an error, not an empty table; and
   * one whose program's first opcode runs past the unit. */
  check_spoiled("bad-line-table", spoil_from_version, "bad-line-table: bad DWARF");
  check_spoiled("bad-line-program", spoil_first_opcode,
                "bad-line-program: bad DWARF line table: extended opcode");

  /* An empty table answers nothing. */
  core_lines empty = {0};
  const core_line *first = (const core_line *)1;
  CHECK(core_lines_find(&empty, 0x1000) == NULL && core_lines_range(&empty, 0, 100, &first) == 0 &&
            first == NULL,
        "empty table answers");
}

/* The Lua interpreter of the benchmarks, when it has been built (with -g). */
static void test_lua(void) {
  char lua[PATH_MAX];
#ifdef LP_COLLECTORS_DIR /* the source tree's collectors/, set by meson.build */
  snprintf(lua, sizeof lua, "%s/../bench/work/lua/lua", LP_COLLECTORS_DIR);
#else
  snprintf(lua, sizeof lua, "bench/work/lua/lua");
#endif
  if (access(lua, R_OK) != 0) {
    printf("note: %s not built, Lua check skipped\n", lua);
    return;
  }
  core_lines l;
  double best = 1e9;
  for (int i = 0; i < 3; i++) {
    double t0 = now_ms();
    lp_status st = core_lines_load(lua, &l);
    double t = now_ms() - t0;
    if (t < best) best = t;
    CHECK(st == LP_OK && l.present, "lua: core_lines_load: %s", lp_error());
    if (i < 2) core_lines_free(&l);
  }
  printf("lua: %zu rows, %zu files, %zu sequences, loaded in %.1f ms (best of 3)\n", l.nrows,
         l.nfiles, l.nseqs, best);
  CHECK(best < 250, "lua: loading took %.1f ms", best);
  check_table_shape("lua", &l);
  compare_with_addr2line("lua", lua, &l, NULL, NULL, 1, 1);
  check_stmt("lua", lua, &l);
  compare_with_libdw("lua", lua, &l);
  core_lines_free(&l);
}

/* The C library: its DWARF is in Debian's libc6-dbg, found by build-id under
 * /usr/lib/debug; checked when that package is installed. */
static void test_libc(void) {
  const char *libc = "/lib/x86_64-linux-gnu/libc.so.6";
  char *cmd = fmt("readelf -n %s 2>/dev/null | awk '/Build ID/ {print $3}'", libc);
  FILE *p = popen(cmd, "r");
  free(cmd);
  char id[128] = "";
  if (!p || !fgets(id, sizeof id, p)) id[0] = '\0';
  if (p) pclose(p);
  id[strcspn(id, "\n")] = '\0';
  char *dbg = fmt("/usr/lib/debug/.build-id/%.2s/%s.debug", id, id[0] ? id + 2 : "");
  if (strlen(id) < 4 || access(dbg, R_OK) != 0) {
    printf("note: no debug file for %s (libc6-dbg), build-id check skipped\n", libc);
    free(dbg);
    return;
  }
  core_lines l;
  double t0 = now_ms();
  lp_status st = core_lines_load(libc, &l);
  double t = now_ms() - t0;
  CHECK(st == LP_OK && l.present, "libc: core_lines_load: %s", lp_error());
  printf("libc (debug file by build-id): %zu rows, %zu files, loaded in %.1f ms\n", l.nrows,
         l.nfiles, t);
  compare_with_addr2line("libc", libc, &l, NULL, NULL, 41, 0);
  check_stmt("libc", dbg, &l); /* objdump reads the line table from the debug file itself */
  core_lines_free(&l);
  free(dbg);
}

int main(void) {
  char tmpl[] = "/tmp/lp_test_lines.XXXXXX";
  if (!mkdtemp(tmpl) || !realpath(tmpl, tmpdir)) {
    perror("mkdtemp");
    return 2;
  }
  test_programs();
  test_errors();
  test_lua();
  test_libc();
  char *cmd = fmt("rm -rf '%s'", tmpdir);
  if (failures == 0) sh(cmd);
  else printf("kept %s\n", tmpdir);
  free(cmd);
  printf("%d checks, %d failures\n", checks, failures);
  return failures ? 1 : 0;
}
