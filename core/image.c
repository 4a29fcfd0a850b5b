/* image.c — the PT_LOAD segments of an ELF64 file laid out in one span at
 * their link-time addresses.  Each segment is mapped from the file, as the
 * loader maps it, so only the pages the relocator reads are ever brought in:
 * a copy of the whole file cost a page fault per 4 KB page (10-15 us each on
 * this project's virtual machines, docs/PERFORMANCE.md session 19).  A
 * segment whose file offset and address disagree within a page, or that
 * shares a page with another, is read instead. */
#include "image.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define PAGE 4096u

static uint64_t page_down(uint64_t a) { return a & ~(uint64_t)(PAGE - 1); }
static uint64_t page_up(uint64_t a) { return page_down(a + PAGE - 1); }

static lp_status read_at(int fd, void *buf, size_t n, off_t off, const char *path) {
  ssize_t got = pread(fd, buf, n, off);
  if (got != (ssize_t)n) return lp_fail("%s: truncated ELF file", path);
  return LP_OK;
}

/* Whether segment I may be mapped: its offset and address agree within a
 * page, and no other segment has bytes in its pages. */
static bool mappable(const Elf64_Phdr *ph, int n, int i) {
  if ((ph[i].p_offset & (PAGE - 1)) != (ph[i].p_vaddr & (PAGE - 1))) return false;
  uint64_t lo = page_down(ph[i].p_vaddr), hi = page_up(ph[i].p_vaddr + ph[i].p_memsz);
  for (int j = 0; j < n; j++) {
    if (j == i || ph[j].p_type != PT_LOAD || ph[j].p_memsz == 0) continue;
    if (ph[j].p_vaddr < hi && ph[j].p_vaddr + ph[j].p_memsz > lo) return false;
  }
  return true;
}

/* Segment S's file bytes into the span at BYTES (link-time address BASE);
 * the rest of its first and last pages stays zero (the loader leaves the
 * file's bytes before it, the ELF header say, where no segment lies). */
static lp_status place(int fd, uint64_t file_size, const Elf64_Phdr *ph, int n, int s, uint8_t *bytes, uint64_t base,
                       const char *path) {
  const Elf64_Phdr *seg = &ph[s];
  if (!mappable(ph, n, s))
    return read_at(fd, bytes + (seg->p_vaddr - base), seg->p_filesz, (off_t)seg->p_offset, path);
  if (seg->p_offset + seg->p_filesz > file_size) return lp_fail("%s: truncated ELF file", path);
  uint64_t page = page_down(seg->p_vaddr), end = seg->p_vaddr + seg->p_filesz;
  void *at = mmap(bytes + (page - base), end - page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd,
                  (off_t)page_down(seg->p_offset));
  if (at == MAP_FAILED) return lp_fail("%s: mmap: %s", path, strerror(errno));
  if (seg->p_vaddr > page) memset(bytes + (page - base), 0, seg->p_vaddr - page);
  if (end & (PAGE - 1)) memset(bytes + (end - base), 0, page_up(end) - end);
  return LP_OK;
}

lp_status core_image_load(const char *path, core_image *out) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return lp_fail("%s: %s", path, strerror(errno));
  Elf64_Ehdr eh;
  Elf64_Phdr *ph = NULL;
  out->bytes = NULL;
  lp_status st = read_at(fd, &eh, sizeof eh, 0, path);
  if (st == LP_OK && (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0))
    st = lp_fail("%s: no program headers", path);
  if (st == LP_OK && !(ph = calloc(eh.e_phnum, sizeof *ph))) st = lp_fail("out of memory");
  if (st == LP_OK) st = read_at(fd, ph, eh.e_phnum * sizeof *ph, (off_t)eh.e_phoff, path);

  uint64_t lo = UINT64_MAX, hi = 0;
  for (int i = 0; st == LP_OK && i < eh.e_phnum; i++) {
    if (ph[i].p_type != PT_LOAD) continue;
    if (ph[i].p_vaddr < lo) lo = ph[i].p_vaddr;
    if (ph[i].p_vaddr + ph[i].p_memsz > hi) hi = ph[i].p_vaddr + ph[i].p_memsz;
  }
  if (st == LP_OK && lo >= hi) st = lp_fail("%s: no loadable segments", path);
  struct stat sb;
  if (st == LP_OK && fstat(fd, &sb) != 0) st = lp_fail("%s: %s", path, strerror(errno));
  if (st == LP_OK) {
    out->base = page_down(lo);
    out->size = page_up(hi) - out->base;
    void *span = mmap(NULL, out->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (span == MAP_FAILED) st = lp_fail("out of memory for the image of %s", path);
    else out->bytes = span;
  }
  for (int i = 0; st == LP_OK && i < eh.e_phnum; i++)
    if (ph[i].p_type == PT_LOAD && ph[i].p_filesz > 0)
      st = place(fd, (uint64_t)sb.st_size, ph, eh.e_phnum, i, out->bytes, out->base, path);
  if (st == LP_OK && mprotect(out->bytes, out->size, PROT_READ) != 0)
    st = lp_fail("%s: mprotect: %s", path, strerror(errno));
  free(ph);
  close(fd);
  if (st != LP_OK) core_image_free(out);
  return st;
}

void core_image_free(core_image *image) {
  if (image->bytes) munmap(image->bytes, image->size);
  image->bytes = NULL;
}
