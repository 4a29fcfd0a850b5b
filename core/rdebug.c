/* rdebug.c — r_debug and link_map of a traced process (rdebug.h). */
#include "rdebug.h"

#include <elf.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DYNAMIC 1024  /* entries read before giving up on DT_NULL */
#define MAX_MODULES 4096  /* a longer chain is taken as a corrupt one */
#define PATH_MAX_READ 4096

/* The dynamic section is read up to the end of the page it is in, then a
 * page at a time: one read for the ~30 entries a program has (a read each
 * was ~2 us, and a test suite starts thousands of programs). */
#define DYN_PAGE 4096u

lp_status core_rdebug_find(const core_target *t, uint64_t dynamic, uint64_t *r_debug) {
  *r_debug = 0;
  Elf64_Dyn d[DYN_PAGE / sizeof(Elf64_Dyn)];
  for (size_t i = 0; i < MAX_DYNAMIC;) {
    uint64_t at = dynamic + i * sizeof *d;
    size_t n = (DYN_PAGE - at % DYN_PAGE) / sizeof *d; /* never past the page the entry is in */
    if (n == 0) n = 1;                                  /* an entry across two pages */
    LP_CHECK(core_mem_read(t, at, d, n * sizeof *d));
    for (size_t k = 0; k < n; k++, i++) {
      if (d[k].d_tag == DT_NULL) return LP_OK;
      if (d[k].d_tag == DT_DEBUG) {
        *r_debug = d[k].d_un.d_ptr;
        return LP_OK;
      }
    }
  }
  return LP_OK;
}

lp_status core_rdebug_read(const core_target *t, uint64_t r_debug, core_rdebug *out) {
  struct {
    int32_t version, pad;
    uint64_t map, brk;
    int32_t state, pad2;
  } r;
  LP_CHECK(core_mem_read(t, r_debug, &r, sizeof r));
  *out = (core_rdebug){r.map, r.brk, r.state};
  return LP_OK;
}

/* Reads the NUL-terminated string at ADDR (at most PATH_MAX_READ bytes). */
static char *read_string(const core_target *t, uint64_t addr) {
  char *s = malloc(PATH_MAX_READ);
  if (!s) return NULL;
  size_t n = 0;
  while (n < PATH_MAX_READ - 1) {
    size_t chunk = 64 - (addr + n) % 64; /* never read past the page the string ends in */
    if (n + chunk > PATH_MAX_READ - 1) chunk = PATH_MAX_READ - 1 - n;
    if (core_mem_read(t, addr + n, s + n, chunk) != LP_OK) break;
    void *nul = memchr(s + n, 0, chunk);
    if (nul) return s;
    n += chunk;
  }
  s[n] = '\0';
  return s;
}

lp_status core_link_map_read(const core_target *t, uint64_t first, core_loaded **out, size_t *n) {
  core_loaded *list = NULL;
  size_t count = 0;
  for (uint64_t at = first, k = 0; at && k < MAX_MODULES; k++) {
    struct {
      uint64_t addr, name, ld, next, prev;
    } lm;
    if (core_mem_read(t, at, &lm, sizeof lm) != LP_OK) {
      core_loaded_free(list, count);
      return lp_fail("cannot read the loader's module list");
    }
    char *path = lm.name ? read_string(t, lm.name) : NULL;
    if (path && strchr(path, '/')) {
      core_loaded *grown = realloc(list, (count + 1) * sizeof *grown);
      if (!grown) {
        free(path);
        core_loaded_free(list, count);
        return lp_fail("out of memory");
      }
      list = grown;
      list[count++] = (core_loaded){at, lm.addr, path};
    } else {
      free(path);
    }
    at = lm.next;
  }
  *out = list;
  *n = count;
  return LP_OK;
}

void core_loaded_free(core_loaded *list, size_t n) {
  for (size_t i = 0; i < n; i++) free(list[i].path);
  free(list);
}
