/* probeplan.c — a bench tool (not part of lazyprobe): plans every function of an ELF program
 * with the relocator of build/liblazyprobe.a, as `lazyprobe run` would, and prints per
 * function what the copies would hold, including what the run table does not expose:
 * counted edges (off the spanning tree) and the probes that must save the flags.
 *
 *   probeplan PROGRAM [ADDRESSES]     (ADDRESSES: file of hex link-time entries to keep, one a line)
 *
 * One line per function: addr name nblocks nedges ncounted ncalls
 *   saved_cover (probes {entry, blocks=cover}) saved_arcs ({entry, arcs}, as -c arcs)
 *   saved_count ({entry, blocks=count}, for comparison) cover_probes (blocks with a cover
 *   probe of their own under {entry, blocks=cover})  — or "addr name FAIL message".
 * Built by bench/collectors.py: gcc -O2 -Icore -Irelocate ... bench/probeplan.c build/liblazyprobe.a */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"
#include "module.h"
#include "reloc.h"

static const core_module *M;

static bool is_entry(void *ctx, uint64_t addr) { /* as core/session.c */
  (void)ctx;
  const core_function *f = core_module_function_at(M, addr);
  return f && f->addr == addr && (f->sources & (CORE_FROM_SYMTAB | CORE_FROM_DYNSYM)) &&
         !strstr(f->name, ".cold");
}

static int cmp(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: probeplan PROGRAM [ADDRESSES]\n");
    return 2;
  }
  core_module *m;
  core_image img;
  if (core_module_open(argv[1], &m) != LP_OK || core_image_load(argv[1], &img) != LP_OK) {
    fprintf(stderr, "probeplan: %s\n", lp_error());
    return 1;
  }
  M = m;
  uint64_t *keep = NULL;
  size_t nkeep = 0, cap = 0;
  if (argc > 2) {
    FILE *f = fopen(argv[2], "r");
    if (!f) { perror(argv[2]); return 1; }
    uint64_t a;
    while (fscanf(f, "%" SCNx64, &a) == 1) {
      if (nkeep == cap) keep = realloc(keep, (cap = cap ? 2 * cap : 256) * sizeof *keep);
      keep[nkeep++] = a;
    }
    fclose(f);
    qsort(keep, nkeep, sizeof *keep, cmp);
  }
  reloc_probes cfg[3] = {
      {.entry = true, .blocks = RELOC_BLOCKS_COVER, .is_entry = is_entry},
      {.entry = true, .arcs = true, .is_entry = is_entry},
      {.entry = true, .blocks = RELOC_BLOCKS_COUNT, .is_entry = is_entry},
  };
  for (size_t i = 0; i < m->nfunctions; i++) {
    const core_function *fn = &m->functions[i];
    if (keep && !bsearch(&fn->addr, keep, nkeep, sizeof *keep, cmp)) continue;
    reloc_function_desc d = {.entry = fn->addr, .lo = fn->addr, .hi = fn->addr + fn->size,
                             .code = img.bytes, .code_base = img.base, .code_size = img.size,
                             .readonly = (const uint64_t(*)[2])m->readonly, .nreadonly = m->nreadonly};
    reloc_info info[3];
    int ok = 1;
    for (int k = 0; k < 3 && ok; k++) {
      reloc_plan *plan;
      if (reloc_plan_function(&d, &cfg[k], &plan, &info[k]) != LP_OK) {
        printf("%" PRIx64 " %s FAIL %s\n", fn->addr, fn->name, lp_error());
        ok = 0;
      } else {
        reloc_plan_free(plan);
      }
    }
    if (ok)
      printf("%" PRIx64 " %s %zu %zu %zu %zu %zu %zu %zu %zu\n", fn->addr, fn->name, info[1].nblocks,
             info[1].nedges, info[1].ncounted, info[1].ncalls, info[0].nsaved, info[1].nsaved,
             info[2].nsaved, info[0].ncover_probes);
  }
  core_image_free(&img);
  core_module_close(m);
  return 0;
}
