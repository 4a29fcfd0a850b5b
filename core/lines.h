/* lines.h — the source-line table of an ELF module: which source file and line
 * each link-time code address comes from, read from the DWARF line table
 * (.debug_line, read by dwarf_line.c), of the file itself or of its separate debug
 * file under /usr/lib/debug.  Owns nothing else: no symbols, no inlining, no
 * run-time addresses (add the load bias, as for module.h). */
#ifndef CORE_LINES_H
#define CORE_LINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lp_status.h"

typedef struct core_line {
  uint64_t addr; /* link-time address where the row begins */
  uint32_t file; /* index into core_lines.files */
  uint32_t line; /* 1-based source line; 0 when the compiler says "no line" */
  bool stmt;     /* a statement begins here (is_stmt): where a debugger would
                    put a breakpoint for LINE; rows without it are instructions
                    of LINE scheduled among other lines' (gcc -O2) */
} core_line;

/* A sequence of the line table: rows cover [lo, hi) without gaps.  Private to
 * lines.c (kept here so core_lines is a plain struct). */
typedef struct core_line_seq {
  uint64_t lo, hi;
} core_line_seq;

typedef struct core_lines {
  core_line *rows; /* sorted by addr, one per address: where a new row of the
                      line table begins, is_stmt or not (the last row of the
                      table at that address, as addr2line and gdb answer); a
                      row covers up to the next row or the end of its sequence */
  size_t nrows;
  char **files;    /* normalised paths (no ./, ../ or //), each once: the unit's
                      comp_dir + include dir + name, absolute unless the DWARF's
                      comp_dir is relative (Debian's packages map it to ".") */
  size_t nfiles;
  uint32_t *file_rank; /* file k's position among the paths in strcmp order */
  bool present;    /* the module (or its debug file) has line rows */
  core_line_seq *seqs; /* private: sorted, disjoint */
  size_t nseqs;
} core_lines;

/* Reads the line table of the ELF file ELF_PATH into *OUT (which the caller
 * frees with core_lines_free, also after a failure).  When the file has no
 * DWARF and no separate debug file is found (.gnu_debuglink or build-id under
 * /usr/lib/debug): LP_OK with present=false and no rows.  A file that is not
 * ELF, or whose DWARF is broken: LP_ERR with "PATH: what is wrong". */
lp_status core_lines_load(const char *elf_path, core_lines *out);

/* Whether core_lines_load may find line rows for ELF_PATH: it has DWARF, or
 * a separate debug file is found; true too when that cannot be told (the
 * file does not open, is not ELF).  Reads no line program. */
bool core_lines_maybe(const char *elf_path);

/* The row that covers ADDR (the last row at or below ADDR in ADDR's sequence),
 * or NULL when ADDR is in no sequence. */
const core_line *core_lines_find(const core_lines *l, uint64_t addr);

/* The rows with LO <= addr < HI: sets *FIRST to the first and returns how
 * many (0, with *FIRST NULL, when none). */
size_t core_lines_range(const core_lines *l, uint64_t lo, uint64_t hi, const core_line **first);

void core_lines_free(core_lines *l);

#endif
