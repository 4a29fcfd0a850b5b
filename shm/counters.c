/* counters.c — creating, opening and annotating counters files (see counters.h). */
#include "counters.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define PAGE 4096u
#define NOTES_SIZE (64u * 1024u)

static uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

/* Appends S to the string table being built; returns its offset. */
static uint32_t put_string(uint8_t *table, uint64_t *used, const char *s) {
  uint32_t off = (uint32_t)*used;
  size_t n = strlen(s) + 1;
  memcpy(table + *used, s, n);
  *used += n;
  return off;
}

lp_status shm_counters_create(int dirfd, const char *dirname, long pid, const char *program,
                              const shm_layout_module *modules, size_t nmodules,
                              uint32_t probes, shm_counters *out) {
  size_t nfunctions = 0;
  uint64_t strings_size = 1 + strlen(program) + 1, code_size = 0;
  for (size_t m = 0; m < nmodules; m++) {
    nfunctions += modules[m].nfunctions;
    code_size += modules[m].code_size;
    strings_size += strlen(modules[m].path) + 1;
    for (size_t i = 0; i < modules[m].nfunctions; i++)
      strings_size += strlen(modules[m].name[i]) + 1;
  }

  shm_header h = {0};
  memcpy(h.magic, SHM_MAGIC, sizeof h.magic);
  h.version = SHM_VERSION;
  h.header_size = sizeof h;
  h.pid = pid;
  h.nmodules = (uint32_t)nmodules;
  h.nfunctions = (uint32_t)nfunctions;
  h.modules_off = align_up(sizeof h, 64);
  h.functions_off = align_up(h.modules_off + nmodules * sizeof(shm_module), 64);
  h.strings_off = h.functions_off + nfunctions * sizeof(shm_function);
  h.strings_size = strings_size;
  h.notes_off = align_up(h.strings_off + strings_size, 64);
  h.notes_size = NOTES_SIZE;
  /* Generous: a block or a call per 4 bytes of code, two edges per block. */
  h.blocks_cap = code_size / 4 + 4096;
  h.edges_cap = 2 * h.blocks_cap;
  h.calls_cap = code_size / 4 + 4096;
  h.slots_cap = nfunctions + h.blocks_cap + h.edges_cap + h.calls_cap;
  h.blocks_off = align_up(h.notes_off + h.notes_size, PAGE);
  h.edges_off = align_up(h.blocks_off + h.blocks_cap * sizeof(shm_block), PAGE);
  h.calls_off = align_up(h.edges_off + h.edges_cap * sizeof(shm_edge), PAGE);
  h.slots_off = align_up(h.calls_off + h.calls_cap * sizeof(shm_call), PAGE);
  h.file_size = h.slots_off + align_up(h.slots_cap * sizeof(uint64_t), PAGE);
  h.probes = probes;

  char name[64];
  snprintf(name, sizeof name, "lazyprobe.%ld.counters", pid);
  int fd = openat(dirfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return lp_fail("cannot create %s/%s: %s", dirname, name, strerror(errno));
  if (ftruncate(fd, (off_t)h.file_size) != 0) {
    int e = errno;
    close(fd);
    return lp_fail("cannot size %s/%s: %s", dirname, name, strerror(e));
  }
  uint8_t *base = mmap(NULL, h.file_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    int e = errno;
    close(fd);
    return lp_fail("cannot map %s/%s: %s", dirname, name, strerror(e));
  }

  uint8_t *strings = base + h.strings_off;
  uint64_t used = 1; /* offset 0 is the empty string */
  h.program = put_string(strings, &used, program);
  shm_module *mods = (shm_module *)(base + h.modules_off);
  shm_function *fns = (shm_function *)(base + h.functions_off);
  uint32_t k = 0;
  for (size_t m = 0; m < nmodules; m++) {
    mods[m].path = put_string(strings, &used, modules[m].path);
    mods[m].first_function = k;
    mods[m].nfunctions = (uint32_t)modules[m].nfunctions;
    mods[m].bias = modules[m].bias;
    for (size_t i = 0; i < modules[m].nfunctions; i++, k++) {
      fns[k].addr = modules[m].addr[i];
      fns[k].size = modules[m].size[i];
      fns[k].name = put_string(strings, &used, modules[m].name[i]);
      fns[k].module = (uint32_t)m;
      fns[k].state = SHM_NOT_RUN;
      fns[k].slot = SHM_NONE;
      fns[k].note = UINT64_MAX;
      fns[k].first_block = fns[k].first_edge = fns[k].first_call = SHM_NONE;
      fns[k].binding = modules[m].binding ? modules[m].binding[i] : 0;
    }
  }
  memcpy(base, &h, sizeof h); /* the magic goes in last: a half-made file is not valid */

  out->fd = fd;
  out->base = base;
  out->size = h.file_size;
  out->header = (shm_header *)base;
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
  const shm_header *h = (const shm_header *)base;
  const char *bad = NULL;
  if (memcmp(h->magic, SHM_MAGIC, sizeof h->magic) != 0) bad = "not a lazyprobe counters file";
  else if (h->version != SHM_VERSION) bad = "counters file of another version";
  else if (h->file_size != (uint64_t)st.st_size || h->nslots > h->slots_cap ||
           h->slots_off + h->slots_cap * 8 > h->file_size || h->nblocks > h->blocks_cap ||
           h->blocks_off + h->blocks_cap * sizeof(shm_block) > h->file_size || h->nedges > h->edges_cap ||
           h->edges_off + h->edges_cap * sizeof(shm_edge) > h->file_size || h->ncalls > h->calls_cap ||
           h->calls_off + h->calls_cap * sizeof(shm_call) > h->file_size ||
           h->strings_off + h->strings_size > h->file_size ||
           h->functions_off + (uint64_t)h->nfunctions * sizeof(shm_function) > h->file_size ||
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

void shm_set_state(shm_counters *c, uint32_t function, enum shm_state state, const char *note) {
  shm_function *f = &shm_functions(c)[function];
  f->state = state;
  if (!note || !*note) return;
  shm_header *h = c->header;
  size_t n = strlen(note) + 1;
  if (h->notes_used + n > h->notes_size) return; /* notes full: the state alone remains */
  memcpy(c->base + h->notes_off + h->notes_used, note, n);
  f->note = h->notes_used;
  h->notes_used += n;
}
