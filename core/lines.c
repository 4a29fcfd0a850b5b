/* lines.c — the DWARF line table of a module (lines.h).
 *
 * libdw finds the DWARF (the file's own, decompressed, or a separate debug
 * file's) and its compilation units; each unit's line program is read by
 * dwarf_line.c, whose rows come in program order: sequence by sequence, each
 * by rising address.  We keep one row per address (the last one, as binutils'
 * addr2line does), give every file one absolute normalised path, and merge
 * the sequences of all units into one sorted table.  Sequences outside the
 * module's executable sections (code the linker discarded, relocated to 0 or
 * to a tombstone) are dropped, and so is a sequence that overlaps one already
 * kept (a line table read twice).  core_lines_maybe only looks for the DWARF,
 * for the tracer (core/breaks.c: a module without line info). */
#include "lines.h"

#include "dwarf_line.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEBUG_ROOT "/usr/lib/debug"

/* {=== growable arrays and the file-name table ===*/

typedef struct seq_build {
  uint64_t lo, hi;
  size_t first, n; /* rows[first .. first+n) of the builder */
} seq_build;

typedef struct builder {
  core_line *rows;
  size_t nrows, caprows;
  seq_build *seqs;
  size_t nseqs, capseqs;
  char **files;
  size_t nfiles, capfiles;
  uint32_t *hash; /* open addressing: file index + 1, 0 = empty */
  size_t hashcap;
  uint64_t (*code)[2]; /* executable [lo, hi) ranges of the module */
  size_t ncode;
} builder;

static int grow(void **v, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return 0;
  size_t ncap = *cap ? *cap : 64;
  while (ncap < need) ncap *= 2;
  void *p = realloc(*v, ncap * elem);
  if (!p) return -1;
  *v = p;
  *cap = ncap;
  return 0;
}

static uint64_t hash_str(const char *s) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

/* COMP_DIR joined with NAME (when NAME is relative), with "." and ".."
 * components and repeated slashes removed, in a new string. */
static char *normalise(const char *comp_dir, const char *name) {
  size_t nd = (name[0] != '/' && comp_dir) ? strlen(comp_dir) : 0;
  size_t nn = strlen(name);
  char *joined = malloc(nd + nn + 2);
  if (!joined) return NULL;
  if (nd) {
    memcpy(joined, comp_dir, nd);
    joined[nd++] = '/';
  }
  memcpy(joined + nd, name, nn + 1);

  char *out = malloc(nd + nn + 2);
  if (!out) {
    free(joined);
    return NULL;
  }
  int absolute = joined[0] == '/';
  size_t len = 0, floor = 0; /* out[0..floor) holds leading ".." of a relative path */
  if (absolute) out[len++] = '/', floor = 1;
  for (char *p = joined; *p;) {
    while (*p == '/') p++;
    char *q = p;
    while (*q && *q != '/') q++;
    size_t n = (size_t)(q - p);
    if (n == 0 || (n == 1 && p[0] == '.')) {
      /* nothing */
    } else if (n == 2 && p[0] == '.' && p[1] == '.') {
      if (len > floor) { /* drop the last component */
        while (len > floor && out[len - 1] != '/') len--;
        if (len > floor) len--; /* its separator */
      } else if (!absolute) { /* a leading ".." stays */
        if (len && out[len - 1] != '/') out[len++] = '/';
        memcpy(out + len, "..", 2);
        len += 2;
        floor = len;
      }
    } else {
      if (len && out[len - 1] != '/') out[len++] = '/';
      memcpy(out + len, p, n);
      len += n;
    }
    p = q;
  }
  if (len == 0) out[len++] = '.';
  out[len] = '\0';
  free(joined);
  return out;
}

/* The index of PATH (taken over) in the file table; UINT32_MAX when out of memory. */
static uint32_t intern(builder *b, char *path) {
  if (!path) return UINT32_MAX;
  if (2 * (b->nfiles + 1) > b->hashcap) {
    size_t ncap = b->hashcap ? 2 * b->hashcap : 256;
    uint32_t *nh = calloc(ncap, sizeof *nh);
    if (!nh) goto oom;
    for (size_t i = 0; i < b->nfiles; i++) {
      size_t j = hash_str(b->files[i]) & (ncap - 1);
      while (nh[j]) j = (j + 1) & (ncap - 1);
      nh[j] = (uint32_t)i + 1;
    }
    free(b->hash);
    b->hash = nh;
    b->hashcap = ncap;
  }
  size_t j = hash_str(path) & (b->hashcap - 1);
  for (; b->hash[j]; j = (j + 1) & (b->hashcap - 1)) {
    uint32_t k = b->hash[j] - 1;
    if (strcmp(b->files[k], path) == 0) {
      free(path);
      return k;
    }
  }
  if (grow((void **)&b->files, &b->capfiles, b->nfiles + 1, sizeof *b->files)) goto oom;
  b->files[b->nfiles] = path;
  b->hash[j] = (uint32_t)b->nfiles + 1;
  return (uint32_t)b->nfiles++;
oom:
  free(path);
  return UINT32_MAX;
}

static int in_code(const builder *b, uint64_t addr) {
  if (b->ncode == 0) return 1; /* no section or segment said where code is */
  for (size_t i = 0; i < b->ncode; i++)
    if (addr >= b->code[i][0] && addr < b->code[i][1]) return 1;
  return 0;
}

/* }=== */

/* {=== one compilation unit ===*/

/* A unit's rows arriving in program order (dwarf_line.c). */
typedef struct unit_rows {
  builder *b;
  const dwarf_line_unit *u;
  const char *comp_dir;
  uint32_t *index; /* the unit's file k as a file of the table, UINT32_MAX until interned */
  uint32_t unknown; /* the file "???" for an index past the unit's table, UINT32_MAX until interned */
  bool open;       /* inside a sequence */
} unit_rows;

static uint32_t file_of(unit_rows *x, uint32_t k) {
  if (!x->index) {
    x->index = malloc((x->u->nfiles ? x->u->nfiles : 1) * sizeof *x->index);
    if (!x->index) return UINT32_MAX;
    memset(x->index, 0xff, (x->u->nfiles ? x->u->nfiles : 1) * sizeof *x->index);
  }
  if (k >= x->u->nfiles) {
    if (x->unknown == UINT32_MAX) x->unknown = intern(x->b, normalise(x->comp_dir, "???"));
    return x->unknown;
  }
  if (x->index[k] == UINT32_MAX) x->index[k] = intern(x->b, normalise(x->comp_dir, x->u->files[k]));
  return x->index[k];
}

/* One row: a sequence's rows by rising address, one per address (the last
 * one, is_stmt when any was), closed by the end_sequence row.  A row at the
 * end address covers nothing and is dropped, and so is one whose address
 * goes back (no compiler here emits one; libdw would sort it in). */
static lp_status add_row(void *ctx, const dwarf_line_row *r) {
  unit_rows *x = ctx;
  builder *b = x->b;
  seq_build *s = x->open ? &b->seqs[b->nseqs - 1] : NULL;
  if (r->end_sequence) {
    if (!s) return LP_OK;
    while (b->nrows > s->first && b->rows[b->nrows - 1].addr >= r->addr) b->nrows--;
    s->hi = r->addr;
    s->n = b->nrows - s->first;
    x->open = false;
    return LP_OK;
  }
  bool stmt = r->stmt;
  if (!s) {
    if (grow((void **)&b->seqs, &b->capseqs, b->nseqs + 1, sizeof *b->seqs)) return lp_fail("out of memory");
    b->seqs[b->nseqs++] = (seq_build){.lo = r->addr, .hi = r->addr, .first = b->nrows, .n = 0};
    x->open = true;
  } else if (b->nrows > s->first) {
    uint64_t last = b->rows[b->nrows - 1].addr;
    if (r->addr < last) return LP_OK;
    if (r->addr == last) stmt |= b->rows[--b->nrows].stmt;
  }
  uint32_t file = file_of(x, r->file);
  if (file == UINT32_MAX || grow((void **)&b->rows, &b->caprows, b->nrows + 1, sizeof *b->rows))
    return lp_fail("out of memory");
  b->rows[b->nrows++] = (core_line){.addr = r->addr, .file = file, .line = r->line, .stmt = stmt};
  return LP_OK;
}

static lp_status add_unit(builder *b, const dwarf_line_sections *sec, Dwarf_Die *cudie, const char *path) {
  Dwarf_Attribute attr;
  Dwarf_Word offset;
  if (dwarf_formudata(dwarf_attr(cudie, DW_AT_stmt_list, &attr), &offset) != 0)
    return lp_fail("%s: bad DWARF line table offset: %s", path, dwarf_errmsg(-1));
  const char *comp_dir = dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &attr));
  dwarf_line_unit u;
  unit_rows x = {.b = b, .u = &u, .comp_dir = comp_dir, .unknown = UINT32_MAX};
  lp_status st = dwarf_line_read(sec, offset, comp_dir, &u, add_row, &x);
  if (x.open) b->nseqs--; /* a sequence without its end_sequence row covers nothing */
  free(x.index);
  dwarf_line_unit_free(&u);
  return st == LP_OK ? LP_OK : lp_context("%s", path);
}

/* The bytes of section NAME of ELF (decompressed: SHF_COMPRESSED, or .zdebug_*
 * for NAME .debug_*), NULL when it is absent. */
static const uint8_t *section_bytes(Elf *elf, const char *name, size_t *size) {
  size_t shstrndx;
  *size = 0;
  if (elf_getshdrstrndx(elf, &shstrndx) != 0) return NULL;
  Elf_Scn *scn = NULL;
  while ((scn = elf_nextscn(elf, scn))) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS) continue;
    const char *n = elf_strptr(elf, shstrndx, sh.sh_name);
    if (!n) continue;
    bool gnu = n[0] == '.' && n[1] == 'z' && strcmp(n + 2, name + 2) == 0;
    if (!gnu && strcmp(n, name) != 0) continue;
    if (gnu ? elf_compress_gnu(scn, 0, 0) < 0
            : (sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
      return NULL;
    Elf_Data *d = elf_getdata(scn, NULL);
    if (!d || !d->d_buf) return NULL;
    *size = d->d_size;
    return d->d_buf;
  }
  return NULL;
}

/* }=== */

/* {=== finding the DWARF: the file itself or its separate debug file ===*/

typedef struct dwarf_file {
  int fd;
  Elf *elf;
  Dwarf *dwarf;
} dwarf_file;

static void close_dwarf_file(dwarf_file *f) {
  if (f->dwarf) dwarf_end(f->dwarf);
  if (f->elf) elf_end(f->elf);
  if (f->fd >= 0) close(f->fd);
  *f = (dwarf_file){.fd = -1};
}

/* Opens CANDIDATE as a debug file for a module whose build-id is ID (N bytes,
 * 0 when none): it must be ELF, have DWARF, and carry the same build-id. */
static int try_debug_file(const char *candidate, const void *id, ssize_t n, dwarf_file *out) {
  dwarf_file f = {.fd = open(candidate, O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) return 0;
  f.elf = elf_begin(f.fd, ELF_C_READ_MMAP, NULL);
  if (!f.elf || elf_kind(f.elf) != ELF_K_ELF) goto no;
  if (n > 0) {
    const void *id2;
    ssize_t n2 = dwelf_elf_gnu_build_id(f.elf, &id2);
    if (n2 > 0 && (n2 != n || memcmp(id, id2, (size_t)n) != 0)) goto no;
  }
  f.dwarf = dwarf_begin_elf(f.elf, DWARF_C_READ, NULL);
  if (!f.dwarf) goto no;
  *out = f;
  return 1;
no:
  close_dwarf_file(&f);
  return 0;
}

/* The separate debug file of ELF (opened from PATH), as gdb looks for it:
 * /usr/lib/debug/.build-id/xx/yyyy.debug, then the .gnu_debuglink name in the
 * file's directory, its .debug/ subdirectory and under /usr/lib/debug. */
static int find_debug_file(Elf *elf, const char *path, dwarf_file *out) {
  const unsigned char *id = NULL;
  ssize_t n = dwelf_elf_gnu_build_id(elf, (const void **)&id);
  char buf[PATH_MAX + 64];
  if (n > 1) {
    int len = snprintf(buf, sizeof buf, DEBUG_ROOT "/.build-id/%02x/", id[0]);
    for (ssize_t i = 1; i < n && len < (int)sizeof buf - 8; i++)
      len += snprintf(buf + len, sizeof buf - (size_t)len, "%02x", id[i]);
    snprintf(buf + len, sizeof buf - (size_t)len, ".debug");
    if (try_debug_file(buf, id, n, out)) return 1;
  }

  GElf_Word crc;
  const char *link = dwelf_elf_gnu_debuglink(elf, &crc);
  char real[PATH_MAX];
  if (!link || !*link || !realpath(path, real)) return 0;
  char *slash = strrchr(real, '/');
  *slash = '\0'; /* real is now the directory ("" for /) */
  const char *forms[] = {"%s/%s", "%s/.debug/%s", DEBUG_ROOT "%s/%s"};
  for (size_t i = 0; i < sizeof forms / sizeof *forms; i++) {
    snprintf(buf, sizeof buf, forms[i], real, link);
    struct stat a, b;
    if (stat(buf, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
      continue; /* the module itself */
    if (try_debug_file(buf, id, n, out)) return 1;
  }
  return 0;
}

/* The executable ranges of ELF: SHF_EXECINSTR sections, else PF_X segments;
 * and in *HAS_DWARF whether it has a .debug_info section (compressed or not). */
static lp_status code_ranges(builder *b, Elf *elf, int *has_dwarf) {
  size_t cap = 0, shstrndx, nsec;
  *has_dwarf = 0;
  if (elf_getshdrnum(elf, &nsec) != 0 || (nsec && elf_getshdrstrndx(elf, &shstrndx) != 0))
    return lp_fail("broken ELF file: %s", elf_errmsg(-1));
  Elf_Scn *scn = NULL;
  while ((scn = elf_nextscn(elf, scn))) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh)) return lp_fail("broken ELF file: %s", elf_errmsg(-1));
    const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
    if (name && (strcmp(name, ".debug_info") == 0 || strcmp(name, ".zdebug_info") == 0) &&
        sh.sh_type != SHT_NOBITS)
      *has_dwarf = 1;
    if (!(sh.sh_flags & SHF_EXECINSTR) || !(sh.sh_flags & SHF_ALLOC) || sh.sh_size == 0) continue;
    if (grow((void **)&b->code, &cap, b->ncode + 1, sizeof *b->code)) return lp_fail("out of memory");
    b->code[b->ncode][0] = sh.sh_addr;
    b->code[b->ncode++][1] = sh.sh_addr + sh.sh_size;
  }
  if (b->ncode) return LP_OK;
  size_t nph = 0;
  if (elf_getphdrnum(elf, &nph) != 0) return LP_OK;
  for (size_t i = 0; i < nph; i++) {
    GElf_Phdr ph;
    if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
    if (grow((void **)&b->code, &cap, b->ncode + 1, sizeof *b->code)) return lp_fail("out of memory");
    b->code[b->ncode][0] = ph.p_vaddr;
    b->code[b->ncode++][1] = ph.p_vaddr + ph.p_memsz;
  }
  return LP_OK;
}

/* }=== */

static int cmp_seq(const void *a, const void *b) {
  const seq_build *x = a, *y = b;
  if (x->lo != y->lo) return x->lo < y->lo ? -1 : 1;
  if (x->hi != y->hi) return x->hi > y->hi ? -1 : 1; /* the longer first */
  return x->first < y->first ? -1 : x->first > y->first;
}

/* Sorts the sequences, drops the ones outside code, empty or overlapping a
 * kept one, and moves the survivors' rows into OUT. */
static char *const *sort_paths; /* qsort has no context argument */

static int by_path(const void *a, const void *b) {
  return strcmp(sort_paths[*(const uint32_t *)a], sort_paths[*(const uint32_t *)b]);
}

/* file_rank: sorting rows by path compares two integers. */
static lp_status rank_files(core_lines *l) {
  uint32_t *order = malloc((l->nfiles ? l->nfiles : 1) * sizeof *order);
  l->file_rank = malloc((l->nfiles ? l->nfiles : 1) * sizeof *l->file_rank);
  if (!order || !l->file_rank) {
    free(order);
    return lp_fail("out of memory");
  }
  for (size_t k = 0; k < l->nfiles; k++) order[k] = (uint32_t)k;
  sort_paths = l->files;
  qsort(order, l->nfiles, sizeof *order, by_path);
  for (size_t k = 0; k < l->nfiles; k++) l->file_rank[order[k]] = (uint32_t)k;
  free(order);
  return LP_OK;
}

static lp_status finish(builder *b, core_lines *out) {
  qsort(b->seqs, b->nseqs, sizeof *b->seqs, cmp_seq);
  size_t nrows = 0, nseqs = 0;
  uint64_t kept_hi = 0;
  for (size_t i = 0; i < b->nseqs; i++) {
    seq_build *s = &b->seqs[i];
    if (s->n == 0 || s->hi <= s->lo || !in_code(b, s->lo) || (nseqs && s->lo < kept_hi)) {
      s->n = 0;
      continue;
    }
    kept_hi = s->hi;
    nrows += s->n;
    nseqs++;
  }
  out->rows = malloc((nrows ? nrows : 1) * sizeof *out->rows);
  out->seqs = malloc((nseqs ? nseqs : 1) * sizeof *out->seqs);
  if (!out->rows || !out->seqs) return lp_fail("out of memory");
  for (size_t i = 0; i < b->nseqs; i++) {
    seq_build *s = &b->seqs[i];
    if (s->n == 0) continue;
    memcpy(out->rows + out->nrows, b->rows + s->first, s->n * sizeof *out->rows);
    out->nrows += s->n;
    out->seqs[out->nseqs++] = (core_line_seq){s->lo, s->hi};
  }
  out->files = b->files;
  out->nfiles = b->nfiles;
  b->files = NULL;
  b->nfiles = 0;
  out->present = out->nrows > 0;
  return rank_files(out);
}

bool core_lines_maybe(const char *elf_path) {
  elf_version(EV_CURRENT);
  dwarf_file main = {.fd = open(elf_path, O_RDONLY | O_CLOEXEC)}, debug = {.fd = -1};
  if (main.fd < 0) return true;
  bool maybe = true;
  main.elf = elf_begin(main.fd, ELF_C_READ_MMAP, NULL);
  builder b = {0};
  int has_dwarf;
  if (main.elf && elf_kind(main.elf) == ELF_K_ELF && code_ranges(&b, main.elf, &has_dwarf) == LP_OK)
    maybe = has_dwarf || find_debug_file(main.elf, elf_path, &debug);
  free(b.code);
  close_dwarf_file(&debug);
  close_dwarf_file(&main);
  return maybe;
}

lp_status core_lines_load(const char *elf_path, core_lines *out) {
  memset(out, 0, sizeof *out);
  elf_version(EV_CURRENT);
  dwarf_file main = {.fd = open(elf_path, O_RDONLY | O_CLOEXEC)}, debug = {.fd = -1};
  if (main.fd < 0) return lp_fail("%s: %s", elf_path, strerror(errno));
  builder b = {0};
  lp_status st = LP_OK;

  main.elf = elf_begin(main.fd, ELF_C_READ_MMAP, NULL);
  if (!main.elf || elf_kind(main.elf) != ELF_K_ELF) {
    st = lp_fail("%s: not an ELF file", elf_path);
    goto done;
  }
  /* libelf shows a file cut short as one without sections: say what it is. */
  GElf_Ehdr eh;
  struct stat sb;
  if (!gelf_getehdr(main.elf, &eh) || fstat(main.fd, &sb) != 0) {
    st = lp_fail("%s: broken ELF file: %s", elf_path, elf_errmsg(-1));
    goto done;
  }
  if ((eh.e_shnum && eh.e_shoff + (uint64_t)eh.e_shnum * eh.e_shentsize > (uint64_t)sb.st_size) ||
      (eh.e_phnum && eh.e_phoff + (uint64_t)eh.e_phnum * eh.e_phentsize > (uint64_t)sb.st_size)) {
    st = lp_fail("%s: truncated ELF file (its headers end past its %lld bytes)", elf_path,
                 (long long)sb.st_size);
    goto done;
  }

  int has_dwarf;
  if (code_ranges(&b, main.elf, &has_dwarf) != LP_OK) {
    st = lp_context("%s", elf_path);
    goto done;
  }

  Dwarf *dwarf;
  if (has_dwarf) {
    dwarf = main.dwarf = dwarf_begin_elf(main.elf, DWARF_C_READ, NULL);
    if (!dwarf) {
      st = lp_fail("%s: bad DWARF: %s", elf_path, dwarf_errmsg(-1));
      goto done;
    }
  } else {
    if (!find_debug_file(main.elf, elf_path, &debug)) goto done; /* no DWARF: not present */
    dwarf = debug.dwarf;
  }

  Elf *delf = dwarf_getelf(dwarf);
  dwarf_line_sections sec = {0};
  sec.line = section_bytes(delf, ".debug_line", &sec.line_size);
  sec.line_str = section_bytes(delf, ".debug_line_str", &sec.line_str_size);
  sec.str = section_bytes(delf, ".debug_str", &sec.str_size);
  Dwarf_CU *cu = NULL;
  Dwarf_Die cudie;
  uint8_t unit_type;
  int rc;
  while ((rc = dwarf_get_units(dwarf, cu, &cu, NULL, &unit_type, &cudie, NULL)) == 0) {
    if (unit_type == DW_UT_type || unit_type == DW_UT_split_type) continue;
    int tag = dwarf_tag(&cudie);
    if (tag != DW_TAG_compile_unit && tag != DW_TAG_partial_unit) continue;
    if (!dwarf_hasattr(&cudie, DW_AT_stmt_list)) continue;
    if (add_unit(&b, &sec, &cudie, elf_path) != LP_OK) goto fail;
  }
  if (rc < 0) {
    st = lp_fail("%s: bad DWARF unit: %s", elf_path, dwarf_errmsg(-1));
    goto done;
  }
  if (finish(&b, out) != LP_OK) goto fail;
  goto done;

fail:
  st = LP_ERR;
done:
  for (size_t i = 0; i < b.nfiles; i++) free(b.files[i]);
  free(b.files);
  free(b.hash);
  free(b.rows);
  free(b.seqs);
  free(b.code);
  close_dwarf_file(&debug);
  close_dwarf_file(&main);
  return st;
}

/* How many rows (sequences) start at or below ADDR: binary searches. */
static size_t rows_upto(const core_lines *l, uint64_t addr) {
  size_t lo = 0, hi = l->nrows;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (l->rows[mid].addr <= addr) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

static size_t seqs_upto(const core_lines *l, uint64_t addr) {
  size_t lo = 0, hi = l->nseqs;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (l->seqs[mid].lo <= addr) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const core_line *core_lines_find(const core_lines *l, uint64_t addr) {
  size_t s = seqs_upto(l, addr); /* sequences starting at or below ADDR */
  if (s == 0 || addr >= l->seqs[s - 1].hi) return NULL;
  size_t r = rows_upto(l, addr);
  if (r == 0 || l->rows[r - 1].addr < l->seqs[s - 1].lo) return NULL; /* no row yet in the sequence */
  return &l->rows[r - 1];
}

size_t core_lines_range(const core_lines *l, uint64_t lo, uint64_t hi, const core_line **first) {
  *first = NULL;
  if (lo >= hi) return 0;
  size_t a = lo ? rows_upto(l, lo - 1) : 0; /* rows below LO */
  size_t b = rows_upto(l, hi - 1);          /* rows below HI */
  if (b <= a) return 0;
  *first = &l->rows[a];
  return b - a;
}

void core_lines_free(core_lines *l) {
  if (!l) return;
  for (size_t i = 0; i < l->nfiles; i++) free(l->files[i]);
  free(l->files);
  free(l->file_rank);
  free(l->rows);
  free(l->seqs);
  memset(l, 0, sizeof *l);
}
