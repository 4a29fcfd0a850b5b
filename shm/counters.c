/* counters.c — creating, opening, annotating and sealing counters files, and
 * the flow of one copy from its counters (see counters.h). */
#include "counters.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reloc_flow.h"

#define PAGE 4096u
#define NOTES_SIZE (256u * 1024u)
#define MODULES_CAP 1024u
#define PATH_ROOM (1u << 20) /* string room for module paths */

static uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

void shm_counters_name(long pid, uint32_t image, char *buf, size_t size) {
  if (image <= 1) snprintf(buf, size, "lazyprobe.%ld.counters", pid);
  else snprintf(buf, size, "lazyprobe.%ld.%u.counters", pid, image);
}

/* Sets the offsets of H's tables and the file's size from their capacities. */
static void place_tables(shm_header *h) {
  h->modules_off = align_up(sizeof *h, 64);
  h->functions_off = align_up(h->modules_off + h->modules_cap * sizeof(shm_module), 64);
  h->strings_off = align_up(h->functions_off + (uint64_t)h->functions_cap * sizeof(shm_function), 64);
  h->notes_off = align_up(h->strings_off + h->strings_size, 64);
  h->blocks_off = align_up(h->notes_off + h->notes_size, PAGE);
  h->edges_off = align_up(h->blocks_off + h->blocks_cap * sizeof(shm_block), PAGE);
  h->calls_off = align_up(h->edges_off + h->edges_cap * sizeof(shm_edge), PAGE);
  h->slots_off = align_up(h->calls_off + h->calls_cap * sizeof(shm_call), PAGE);
  h->file_size = h->slots_off + align_up(h->slots_cap * sizeof(uint64_t), PAGE);
}

/* Creates, sizes and maps the file NAME for header H (file_size set). */
static lp_status create_file(int dirfd, const char *dirname, const char *name, const shm_header *h,
                             shm_counters *out) {
  int fd = openat(dirfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return lp_fail("cannot create %s/%s: %s", dirname, name, strerror(errno));
  if (ftruncate(fd, (off_t)h->file_size) != 0) {
    int e = errno;
    close(fd);
    return lp_fail("cannot size %s/%s: %s", dirname, name, strerror(e));
  }
  uint8_t *base = mmap(NULL, h->file_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    int e = errno;
    close(fd);
    return lp_fail("cannot map %s/%s: %s", dirname, name, strerror(e));
  }
  madvise(base, h->file_size, MADV_RANDOM); /* no readahead: it would fill the holes with zeros */
  out->fd = fd;
  out->base = base;
  out->size = h->file_size;
  out->header = (shm_header *)base;
  out->last_note = UINT64_MAX;
  return LP_OK;
}

/* Appends S to the string table; returns its offset, 0 ("") when full. */
static uint32_t put_string(shm_counters *c, const char *s) {
  shm_header *h = c->header;
  size_t n = strlen(s) + 1;
  if (h->strings_used + n > h->strings_size) return 0;
  uint32_t off = (uint32_t)h->strings_used;
  memcpy(c->base + h->strings_off + off, s, n);
  h->strings_used += n;
  return off;
}

lp_status shm_counters_create(int dirfd, const char *dirname, const shm_identity *who, uint64_t code_size,
                              uint32_t probes, shm_counters *out) {
  shm_header h = {0};
  memcpy(h.magic, SHM_MAGIC, sizeof h.magic);
  h.version = SHM_VERSION;
  h.header_size = sizeof h;
  h.pid = who->pid;
  h.ppid = who->ppid;
  h.image = who->image;
  /* Generous, and sparse: a function per 16 bytes of code, a block or a call
   * per 8, two edges per block (compiled code has a block per ~25 bytes, a
   * call per ~120: sqlite); untouched pages cost nothing.  But every module
   * maps the slots within 2 GiB of itself, a non-PIE executable below 2 GiB:
   * clang-14 with libLLVM and libclang-cpp (158 MB of code) included asked
   * for 1.4 GB of them at a function per 8 bytes and a block per 4, more
   * than its first 2 GiB had room for. */
  h.modules_cap = MODULES_CAP;
  h.functions_cap = (uint32_t)(code_size / 16 + 4096);
  h.notes_size = NOTES_SIZE;
  h.blocks_cap = code_size / 8 + 4096;
  h.edges_cap = 2 * h.blocks_cap;
  h.calls_cap = code_size / 8 + 4096;
  h.slots_cap = h.functions_cap + h.blocks_cap + h.edges_cap + h.calls_cap;
  h.strings_size = (uint64_t)h.functions_cap * 64 + PATH_ROOM;
  h.strings_used = 1; /* offset 0 is the empty string */
  place_tables(&h);
  h.probes = probes;

  char name[64];
  shm_counters_name(who->pid, who->image, name, sizeof name);
  LP_CHECK(create_file(dirfd, dirname, name, &h, out));
  uint8_t magic[sizeof h.magic];
  memcpy(magic, h.magic, sizeof magic);
  memset(h.magic, 0, sizeof h.magic);
  memcpy(out->base, &h, sizeof h);
  out->header->program = put_string(out, who->program);
  memcpy(out->base, magic, sizeof magic); /* the magic goes in last: a half-made file is not valid */
  return LP_OK;
}

static lp_status write_at(int fd, const void *bytes, size_t n, uint64_t off);

/* Bytes bound for one run of the file from OFF on, written by pwrite a
 * buffer at a time: a new page of the file's shared mapping costs a fault
 * (10-25 us on this project's machines), a pwrite of it a fraction of that
 * (docs/PERFORMANCE.md, session 27: cc1's 45 000 functions). */
typedef struct file_run {
  int fd;
  uint64_t off;
  size_t n;
  uint8_t buf[32 << 10];
} file_run;

static lp_status run_flush(file_run *r) {
  LP_CHECK(write_at(r->fd, r->buf, r->n, r->off));
  r->off += r->n;
  r->n = 0;
  return LP_OK;
}

static lp_status run_put(file_run *r, const void *bytes, size_t n) {
  for (const uint8_t *b = bytes; n;) {
    size_t k = sizeof r->buf - r->n < n ? sizeof r->buf - r->n : n;
    memcpy(r->buf + r->n, b, k);
    r->n += k, b += k, n -= k;
    if (r->n == sizeof r->buf) LP_CHECK(run_flush(r));
  }
  return LP_OK;
}

lp_status shm_add_module(shm_counters *c, const shm_layout_module *m, uint32_t *first) {
  shm_header *h = c->header;
  size_t strings = strlen(m->path) + 1;
  for (size_t i = 0; i < m->nfunctions; i++) strings += strlen(m->name[i]) + 1;
  if (h->nmodules == h->modules_cap || h->nfunctions + m->nfunctions > h->functions_cap ||
      h->strings_used + strings > h->strings_size)
    return lp_fail("counters file full: no room for %s", m->path);
  uint32_t k = h->nfunctions, index = h->nmodules;
  static file_run entries, names; /* 64 KB: not on the stack */
  entries = (file_run){.fd = c->fd, .off = h->functions_off + (uint64_t)k * sizeof(shm_function)};
  names = (file_run){.fd = c->fd, .off = h->strings_off + h->strings_used};
  uint64_t name_at = h->strings_used;
  lp_status st = LP_OK;
  for (size_t i = 0; st == LP_OK && i < m->nfunctions; i++) {
    bool excluded = m->excluded && m->excluded[i];
    size_t len = strlen(m->name[i]) + 1;
    shm_function f = {
        .addr = m->addr[i],
        .size = m->size[i],
        .name = (uint32_t)name_at,
        .module = index,
        .state = excluded ? SHM_EXCLUDED : SHM_NOT_RUN,
        .slot = SHM_NONE,
        .note = UINT64_MAX,
        .first_block = SHM_NONE,
        .first_edge = SHM_NONE,
        .first_call = SHM_NONE,
        .binding = m->binding ? m->binding[i] : 0,
        .retree_slot = SHM_NONE,
        .retree_edge = SHM_NONE,
    };
    name_at += len;
    st = run_put(&entries, &f, sizeof f);
    if (st == LP_OK) st = run_put(&names, m->name[i], len);
  }
  if (st == LP_OK) st = run_flush(&entries);
  if (st == LP_OK) st = run_flush(&names);
  LP_CHECK(st);
  h->strings_used = name_at;
  shm_modules(c)[index] = (shm_module){put_string(c, m->path), k, (uint32_t)m->nfunctions, 0, m->bias};
  /* Readers see a module only once it is complete. */
  __atomic_store_n(&h->nfunctions, k + (uint32_t)m->nfunctions, __ATOMIC_RELEASE);
  __atomic_store_n(&h->nmodules, index + 1, __ATOMIC_RELEASE);
  *first = k;
  return LP_OK;
}

/* Writes N BYTES at offset OFF of FD, however many pwrites it takes. */
static lp_status write_at(int fd, const void *bytes, size_t n, uint64_t off) {
  const uint8_t *b = bytes;
  while (n > 0) {
    ssize_t w = pwrite(fd, b, n, (off_t)off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return lp_fail("cannot write a counters file: %s", w < 0 ? strerror(errno) : "disk full");
    b += w, off += (uint64_t)w, n -= (size_t)w;
  }
  return LP_OK;
}

/* Copies SIZE bytes at offset FROM of file F to offset TO of file T (at
 * TO_FD) in the kernel (copy_file_range: no page of either is faulted into
 * lazyprobe), else through F's mapping. */
static lp_status copy_part(const shm_counters *f, uint64_t from, int to_fd, uint64_t to, uint64_t size) {
  loff_t in = (loff_t)from, out = (loff_t)to;
  while (size) {
    ssize_t n = copy_file_range(f->fd, &in, to_fd, &out, size, 0);
    if (n <= 0) break;
    size -= (uint64_t)n;
  }
  return size ? write_at(to_fd, f->base + in, size, (uint64_t)out) : LP_OK;
}

/* Copies the entries in use of FROM's tables (and its slots if SLOTS) into
 * the file at TO_FD, whose header T places them. */
static lp_status copy_tables(const shm_counters *from, int to_fd, const shm_header *t, bool slots) {
  const shm_header *f = from->header;
  const struct {
    uint64_t from, to, size;
  } part[] = {
      {f->modules_off, t->modules_off, f->nmodules * sizeof(shm_module)},
      {f->functions_off, t->functions_off, f->nfunctions * sizeof(shm_function)},
      {f->strings_off, t->strings_off, f->strings_used},
      {f->notes_off, t->notes_off, f->notes_used},
      {f->blocks_off, t->blocks_off, f->nblocks * sizeof(shm_block)},
      {f->edges_off, t->edges_off, f->nedges * sizeof(shm_edge)},
      {f->calls_off, t->calls_off, f->ncalls * sizeof(shm_call)},
      {f->slots_off, t->slots_off, slots ? f->nslots * sizeof(uint64_t) : 0},
  };
  for (size_t i = 0; i < sizeof part / sizeof part[0]; i++)
    LP_CHECK(copy_part(from, part[i].from, to_fd, part[i].to, part[i].size));
  return LP_OK;
}

lp_status shm_counters_fork(const shm_counters *from, int dirfd, const char *dirname, long pid,
                            shm_counters *out) {
  const shm_header *fh = from->header;
  char name[64];
  shm_counters_name(pid, 1, name, sizeof name);
  LP_CHECK(create_file(dirfd, dirname, name, fh, out));
  shm_header *h = out->header;
  memcpy(h, fh, sizeof *fh);
  memset(h->magic, 0, sizeof h->magic);
  lp_status st = copy_tables(from, out->fd, h, false); /* the slots stay zero */
  if (st != LP_OK) {
    shm_counters_close(out);
    unlinkat(dirfd, name, 0);
    return st;
  }
  h->pid = pid;
  h->ppid = fh->pid;
  h->image = 1;
  h->end = SHM_RUNNING;
  h->end_value = 0;
  memcpy(h->magic, fh->magic, sizeof h->magic);
  return LP_OK;
}

lp_status shm_counters_seal(const shm_counters *c, int dirfd, const char *dirname) {
  shm_header h = *c->header;
  h.modules_cap = h.nmodules;
  h.functions_cap = h.nfunctions;
  h.strings_size = h.strings_used;
  h.notes_size = h.notes_used;
  h.blocks_cap = h.nblocks;
  h.edges_cap = h.nedges;
  h.calls_cap = h.ncalls;
  h.slots_cap = h.nslots;
  place_tables(&h);
  if (h.file_size >= c->header->file_size) return LP_OK;
  char name[64], part[80];
  shm_counters_name((long)h.pid, h.image, name, sizeof name);
  snprintf(part, sizeof part, "%s.part", name);
  unlinkat(dirfd, part, 0); /* left by an earlier lazyprobe that died here */
  int fd = openat(dirfd, part, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return lp_fail("cannot create %s/%s: %s", dirname, part, strerror(errno));
  memset(h.magic, 0, sizeof h.magic); /* the magic goes last */
  lp_status st = ftruncate(fd, (off_t)h.file_size) == 0 && pwrite(fd, &h, sizeof h, 0) == (ssize_t)sizeof h
                     ? copy_tables(c, fd, &h, true)
                     : lp_fail("cannot write %s/%s: %s", dirname, part, strerror(errno));
  if (st == LP_OK && pwrite(fd, c->header->magic, sizeof h.magic, 0) != (ssize_t)sizeof h.magic)
    st = lp_fail("cannot write %s/%s: %s", dirname, part, strerror(errno));
  close(fd);
  if (st != LP_OK) {
    unlinkat(dirfd, part, 0);
    return st;
  }
  if (renameat(dirfd, part, dirfd, name) != 0) {
    int e = errno;
    unlinkat(dirfd, part, 0);
    return lp_fail("cannot replace %s/%s: %s", dirname, name, strerror(e));
  }
  return LP_OK;
}

lp_status shm_counters_open(const char *path, shm_counters *out) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return lp_fail("%s: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size < sizeof(shm_header)) {
    close(fd);
    return lp_fail("%s: not a lazyprobe counters file", path);
  }
  uint8_t *base = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    int e = errno;
    close(fd);
    return lp_fail("%s: %s", path, strerror(e));
  }
  madvise(base, (size_t)st.st_size, MADV_RANDOM);
  const shm_header *h = (const shm_header *)base;
  const char *bad = NULL;
  if (memcmp(h->magic, SHM_MAGIC, sizeof h->magic) != 0) bad = "not a lazyprobe counters file";
  else if (h->version != SHM_VERSION) bad = "counters file of another version";
  else if (h->file_size != (uint64_t)st.st_size || h->nslots > h->slots_cap ||
           h->slots_off + h->slots_cap * 8 > h->file_size || h->nblocks > h->blocks_cap ||
           h->blocks_off + h->blocks_cap * sizeof(shm_block) > h->file_size || h->nedges > h->edges_cap ||
           h->edges_off + h->edges_cap * sizeof(shm_edge) > h->file_size || h->ncalls > h->calls_cap ||
           h->calls_off + h->calls_cap * sizeof(shm_call) > h->file_size ||
           h->strings_off + h->strings_size > h->file_size || h->strings_used > h->strings_size ||
           h->nmodules > h->modules_cap || h->nfunctions > h->functions_cap ||
           h->modules_off + (uint64_t)h->modules_cap * sizeof(shm_module) > h->file_size ||
           h->functions_off + (uint64_t)h->functions_cap * sizeof(shm_function) > h->file_size ||
           h->notes_off + h->notes_size > h->file_size || h->notes_used > h->notes_size)
    bad = "counters file is truncated or damaged";
  if (bad) {
    munmap(base, (size_t)st.st_size);
    close(fd);
    return lp_fail("%s: %s", path, bad);
  }
  out->fd = fd;
  out->base = base;
  out->size = (size_t)st.st_size;
  out->header = (shm_header *)base;
  out->last_note = UINT64_MAX;
  return LP_OK;
}

void shm_counters_close(shm_counters *c) {
  if (c->base) munmap(c->base, c->size);
  if (c->fd >= 0) close(c->fd);
  c->base = NULL;
  c->fd = -1;
}

const char *shm_note(const shm_counters *c, const shm_function *f) {
  if (f->note == UINT64_MAX || f->note >= c->header->notes_size) return "";
  return (const char *)c->base + c->header->notes_off + f->note;
}

lp_status shm_flow(const shm_counters *c, const shm_function *f, const shm_edge *edges, uint32_t copy_slot,
                   bool estimate, uint64_t *ec, uint64_t *bc) {
  uint32_t nb = f->nblocks, ne = f->nedges;
  uint64_t entry = shm_slot_value(c, copy_slot);
  const shm_block *blocks = shm_blocks(c) + f->first_block;
  reloc_edge *re = calloc(ne + 1, sizeof *re);
  bool *leaky = calloc(nb + 1, sizeof *leaky);
  uint64_t *entered = calloc(nb + 1, sizeof *entered);
  lp_status st = re && leaky && entered ? LP_OK : lp_fail("out of memory");
  for (uint32_t e = 0; st == LP_OK && e < ne; e++) {
    re[e] = (reloc_edge){edges[e].from, edges[e].to == SHM_NONE ? RELOC_EXIT : edges[e].to, edges[e].kind,
                         edges[e].slot != SHM_NONE, edges[e].branch, edges[e].target};
    ec[e] = shm_slot_value(c, edges[e].slot);
  }
  bool ran = entry != 0; /* or entered only at a side entry (a cold part's, from its hot part) */
  for (uint32_t e = 0; !ran && e < ne; e++) ran = ec[e] != 0;
  for (uint32_t b = 0; st == LP_OK && b < nb; b++) {
    leaky[b] = blocks[b].flags & SHM_BLOCK_LEAKS; /* as the tree had it */
    if ((blocks[b].flags & SHM_BLOCK_ENTERED) && blocks[b].side_slot != SHM_NONE && copy_slot != SHM_NONE)
      entered[b] = shm_slot_value(c, blocks[b].side_slot - f->slot + copy_slot);
    if (estimate && entered[b] > INT64_MAX) /* a thread between the decrement before a call */
      entered[b] = 0;                       /* returning twice and the increment after it */
    ran |= entered[b] != 0;
  }
  if (st == LP_OK && !ran) /* never entered, nothing counted: every flow is 0 */
    memset(bc, 0, nb * sizeof *bc);
  else if (st == LP_OK)
    st = (estimate ? reloc_flow_estimate : reloc_flow_solve)(re, ne, nb, entry, leaky, entered, ec, bc);
  free(re);
  free(leaky);
  free(entered);
  return st;
}

lp_status shm_reserve(shm_counters *c, uint32_t nslots, uint32_t nblocks, uint32_t nedges,
                      uint32_t ncalls, shm_reservation *out) {
  shm_header *h = c->header;
  if (h->nslots + nslots > h->slots_cap || h->nblocks + nblocks > h->blocks_cap ||
      h->nedges + nedges > h->edges_cap || h->ncalls + ncalls > h->calls_cap)
    return lp_fail("counters file full");
  *out = (shm_reservation){(uint32_t)h->nslots, (uint32_t)h->nblocks, (uint32_t)h->nedges,
                           (uint32_t)h->ncalls};
  h->nslots += nslots;
  h->nblocks += nblocks;
  h->nedges += nedges;
  h->ncalls += ncalls;
  return LP_OK;
}

static lp_status put(shm_counters *c, uint64_t off, const void *bytes, size_t n) {
  if (off + n > c->size) return lp_fail("counters file: a table written past its end");
  return write_at(c->fd, bytes, n, off);
}

lp_status shm_put_blocks(shm_counters *c, uint32_t first, const shm_block *blocks, size_t n) {
  return put(c, c->header->blocks_off + (uint64_t)first * sizeof *blocks, blocks, n * sizeof *blocks);
}

lp_status shm_put_edges(shm_counters *c, uint32_t first, const shm_edge *edges, size_t n) {
  return put(c, c->header->edges_off + (uint64_t)first * sizeof *edges, edges, n * sizeof *edges);
}

lp_status shm_put_calls(shm_counters *c, uint32_t first, const shm_call *calls, size_t n) {
  return put(c, c->header->calls_off + (uint64_t)first * sizeof *calls, calls, n * sizeof *calls);
}

void shm_set_state(shm_counters *c, uint32_t function, enum shm_state state, const char *note) {
  shm_function *f = &shm_functions(c)[function];
  f->state = state;
  if (!note || !*note) return;
  shm_header *h = c->header;
  const char *notes = (const char *)c->base + h->notes_off;
  if (c->last_note < h->notes_used && !strcmp(notes + c->last_note, note)) { /* a note made again and again */
    f->note = c->last_note;
    return;
  }
  size_t n = strlen(note) + 1;
  if (h->notes_used + n > h->notes_size) return; /* notes full: the state alone remains */
  memcpy(c->base + h->notes_off + h->notes_used, note, n);
  f->note = c->last_note = h->notes_used;
  h->notes_used += n;
}
