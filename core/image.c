/* image.c — reads PT_LOAD segments of an ELF64 file into one flat buffer. */
#include "image.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static lp_status read_at(int fd, void *buf, size_t n, off_t off, const char *path) {
  ssize_t got = pread(fd, buf, n, off);
  if (got != (ssize_t)n) return lp_fail("%s: truncated ELF file", path);
  return LP_OK;
}

lp_status core_image_load(const char *path, core_image *out) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return lp_fail("%s: %s", path, strerror(errno));
  Elf64_Ehdr eh;
  Elf64_Phdr *ph = NULL;
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
  if (st == LP_OK) {
    lo &= ~(uint64_t)4095;
    out->base = lo;
    out->size = hi - lo;
    out->bytes = calloc(1, out->size);
    if (!out->bytes) st = lp_fail("out of memory for the image of %s", path);
  }
  for (int i = 0; st == LP_OK && i < eh.e_phnum; i++) {
    if (ph[i].p_type != PT_LOAD || ph[i].p_filesz == 0) continue;
    st = read_at(fd, out->bytes + (ph[i].p_vaddr - lo), ph[i].p_filesz, (off_t)ph[i].p_offset, path);
  }
  free(ph);
  close(fd);
  if (st != LP_OK && out->bytes) core_image_free(out);
  return st;
}

void core_image_free(core_image *image) {
  free(image->bytes);
  image->bytes = NULL;
}
