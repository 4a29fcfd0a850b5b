/* rdebug.c — r_debug and link_map of a traced process (rdebug.h). */
#include "rdebug.h"

#include <elf.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DYNAMIC 1024  /* entries read before giving up on DT_NULL */
#define MAX_MODULES 4096  /* a longer chain is taken as a corrupt one */
#define PATH_MAX_READ 4096

lp_status core_rdebug_find(const core_target *t, uint64_t dynamic, uint64_t *r_debug) {
  *r_debug = 0;
  for (size_t i = 0; i < MAX_DYNAMIC; i++) {
    Elf64_Dyn d;
    LP_CHECK(core_mem_read(t, dynamic + i * sizeof d, &d, sizeof d));
    if (d.d_tag == DT_NULL) break;
    if (d.d_tag == DT_DEBUG) {
      *r_debug = d.d_un.d_ptr;
      break;
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
