/* gdbjit.c — in-memory ELF objects for GDB's JIT interface (see gdbjit.h).
 *
 * Layout of one object (all offsets from its start, which sits at AT):
 *   Elf64_Ehdr | .eh_frame (8-aligned) | .symtab (2 symbols) | .strtab |
 *   .shstrtab | section headers (8-aligned)
 * then, in the region, the 32-byte jit_code_entry that names it. */
#include "gdbjit.h"

#include <elf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#ifndef LP_GDBJIT_LIB
#error LP_GDBJIT_LIB (the path of liblazyprobe-gdbjit.so) is set by meson
#endif

#define JIT_REGISTER 1

const char *core_gdbjit_library(void) { return LP_GDBJIT_LIB; }

static size_t align8(size_t v) { return (v + 7) & ~(size_t)7; }

enum { SEC_NULL, SEC_TEXT, SEC_EH, SEC_SYMTAB, SEC_STRTAB, SEC_SHSTRTAB, NSECTIONS };

static const char shstrtab[] = "\0.text\0.eh_frame\0.symtab\0.strtab\0.shstrtab";
enum { NAME_TEXT = 1, NAME_EH = 7, NAME_SYMTAB = 17, NAME_STRTAB = 25, NAME_SHSTRTAB = 33 };

lp_status core_gdbjit_image(const core_gdbjit_copy *c, uint64_t at, uint8_t **out, size_t *size) {
  size_t name_len = strlen(c->name) + 1;
  size_t eh_off = sizeof(Elf64_Ehdr);
  size_t eh_size = c->eh ? c->eh_size : 0;
  size_t sym_off = align8(eh_off + eh_size);
  size_t str_off = sym_off + 2 * sizeof(Elf64_Sym);
  size_t shstr_off = str_off + 1 + name_len;
  size_t sh_off = align8(shstr_off + sizeof shstrtab);
  size_t total = sh_off + NSECTIONS * sizeof(Elf64_Shdr);
  uint8_t *b = calloc(1, total);
  if (!b) return lp_fail("out of memory");

  Elf64_Ehdr *e = (Elf64_Ehdr *)b;
  memcpy(e->e_ident, ELFMAG, SELFMAG);
  e->e_ident[EI_CLASS] = ELFCLASS64;
  e->e_ident[EI_DATA] = ELFDATA2LSB;
  e->e_ident[EI_VERSION] = EV_CURRENT;
  e->e_type = ET_EXEC;
  e->e_machine = EM_X86_64;
  e->e_version = EV_CURRENT;
  e->e_entry = c->code;
  e->e_shoff = sh_off;
  e->e_ehsize = sizeof(Elf64_Ehdr);
  e->e_shentsize = sizeof(Elf64_Shdr);
  e->e_shnum = NSECTIONS;
  e->e_shstrndx = SEC_SHSTRTAB;

  if (eh_size) memcpy(b + eh_off, c->eh, eh_size);
  Elf64_Sym *sym = (Elf64_Sym *)(b + sym_off);
  sym[1] = (Elf64_Sym){.st_name = 1, .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC), .st_shndx = SEC_TEXT,
                       .st_value = c->code, .st_size = c->code_size};
  memcpy(b + str_off + 1, c->name, name_len);
  memcpy(b + shstr_off, shstrtab, sizeof shstrtab);

  Elf64_Shdr *sh = (Elf64_Shdr *)(b + sh_off);
  sh[SEC_TEXT] = (Elf64_Shdr){.sh_name = NAME_TEXT, .sh_type = SHT_NOBITS, .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
                              .sh_addr = c->code, .sh_offset = eh_off, .sh_size = c->code_size, .sh_addralign = 16};
  sh[SEC_EH] = (Elf64_Shdr){.sh_name = NAME_EH, .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC,
                            .sh_addr = at + eh_off, .sh_offset = eh_off, .sh_size = eh_size, .sh_addralign = 8};
  sh[SEC_SYMTAB] = (Elf64_Shdr){.sh_name = NAME_SYMTAB, .sh_type = SHT_SYMTAB, .sh_offset = sym_off,
                                .sh_size = 2 * sizeof(Elf64_Sym), .sh_link = SEC_STRTAB, .sh_info = 1,
                                .sh_addralign = 8, .sh_entsize = sizeof(Elf64_Sym)};
  sh[SEC_STRTAB] = (Elf64_Shdr){.sh_name = NAME_STRTAB, .sh_type = SHT_STRTAB, .sh_offset = str_off,
                                .sh_size = 1 + name_len, .sh_addralign = 1};
  sh[SEC_SHSTRTAB] = (Elf64_Shdr){.sh_name = NAME_SHSTRTAB, .sh_type = SHT_STRTAB, .sh_offset = shstr_off,
                                  .sh_size = sizeof shstrtab, .sh_addralign = 1};
  *out = b;
  *size = total;
  return LP_OK;
}

enum { NEXT = 0, PREV = 8, ENTRY_SIZE = 32 }; /* struct jit_code_entry: next, prev, symfile addr, size */
_Static_assert(sizeof((core_gdbjit *)0)->first_entry == ENTRY_SIZE, "core_gdbjit.first_entry holds one entry");

static void put64(uint8_t *at, uint64_t v) { memcpy(at, &v, sizeof v); }

lp_status core_gdbjit_add(core_gdbjit *g, const core_gdbjit_copy *c) {
  if (!g->descriptor) return LP_OK;
  uint64_t at = g->base + g->used + g->nstaged;
  uint8_t *image;
  size_t size;
  LP_CHECK(core_gdbjit_image(c, at, &image, &size));
  size_t entry_off = align8(size), total = (entry_off + ENTRY_SIZE + 15) & ~(size_t)15;
  if (total > g->size - g->used - g->nstaged) {
    free(image);
    return lp_fail("no room left for GDB's objects (%llu bytes)", (unsigned long long)g->size);
  }
  if (g->nstaged + total > g->capstaged) {
    size_t cap = g->capstaged ? 2 * g->capstaged : 16384;
    while (cap < g->nstaged + total) cap *= 2;
    uint8_t *grown = realloc(g->staged, cap);
    if (!grown) {
      free(image);
      return lp_fail("out of memory");
    }
    g->staged = grown;
    g->capstaged = cap;
  }
  uint8_t *o = g->staged + g->nstaged;
  memset(o, 0, total);
  memcpy(o, image, size);
  free(image);
  uint64_t entry = at + entry_off;
  bool first_staged = g->nstaged == 0;
  put64(o + entry_off + NEXT, first_staged ? g->first : g->base + g->used + g->newest);
  put64(o + entry_off + 16, at);
  put64(o + entry_off + 24, size);
  if (!first_staged) put64(g->staged + g->newest + PREV, entry); /* the one staged before points back */
  if (first_staged) g->oldest = g->nstaged + entry_off;
  g->newest = g->nstaged + entry_off;
  g->nstaged += total;
  return LP_OK;
}

lp_status core_gdbjit_flush(core_gdbjit *g, const core_target *t) {
  if (!g->nstaged) return LP_OK;
  uint64_t base = g->base + g->used, newest = base + g->newest, oldest = base + g->oldest;
  lp_status st;
  if (g->first) { /* the entry staged last before: just below, then zeros to 16 bytes */
    static const uint8_t zeros[16];
    put64(g->first_entry + PREV, oldest);
    struct iovec iov[3] = {{g->first_entry, ENTRY_SIZE},
                           {(void *)zeros, base - (g->first + ENTRY_SIZE)},
                           {g->staged, g->nstaged}};
    st = core_mem_writev(t, g->first, iov, 3);
  } else {
    st = core_mem_write(t, base, g->staged, g->nstaged);
  }
  const struct {
    uint32_t version, action_flag;
    uint64_t relevant_entry, first_entry;
  } descriptor = {1, JIT_REGISTER, newest, newest};
  if (st == LP_OK) st = core_mem_write(t, g->descriptor, &descriptor, sizeof descriptor);
  if (st == LP_OK) {
    memcpy(g->first_entry, g->staged + g->newest, ENTRY_SIZE);
    g->used += g->nstaged;
    g->first = newest;
  }
  g->nstaged = 0;
  return st;
}

void core_gdbjit_free(core_gdbjit *g) {
  free(g->staged);
  g->staged = NULL;
  g->nstaged = g->capstaged = 0;
}
