/* dwarf_line.h — one unit's DWARF line program (.debug_line, versions 2 to 5),
 * read straight from the section's bytes: the header's file table, then the
 * rows in program order, each sequence's rows by rising address and closed by
 * its end_sequence row.
 *
 * libdw's dwarf_getsrclines gives the same rows, but sorted across sequences
 * with a stable sort of the whole unit: on a large unit (sqlite's amalgamation:
 * 214 k rows) that sort and the per-row objects were two thirds of a coverage
 * report's line table.  In program order nothing needs sorting but the
 * sequences.  Knows nothing of ELF: lines.c finds the sections and the unit. */
#ifndef CORE_DWARF_LINE_H
#define CORE_DWARF_LINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lp_status.h"

/* The section bytes a line program may refer to; absent ones are NULL. */
typedef struct dwarf_line_sections {
  const uint8_t *line; /* .debug_line */
  size_t line_size;
  const uint8_t *line_str; /* .debug_line_str (DWARF 5 DW_FORM_line_strp) */
  size_t line_str_size;
  const uint8_t *str; /* .debug_str (DW_FORM_strp) */
  size_t str_size;
} dwarf_line_sections;

typedef struct dwarf_line_row {
  uint64_t addr;
  uint32_t file; /* index into the unit's files (dwarf_line_unit.files) */
  uint32_t line;
  bool stmt;         /* is_stmt */
  bool end_sequence; /* the first address after the sequence; no line of its own */
} dwarf_line_row;

/* A file of the unit's table: its name, joined to its directory as libdw's
 * dwarf_filesrc does (an absolute name alone; else the directory, the unit's
 * comp_dir for directory 0 before DWARF 5, then "/" and the name).  Index 0 is
 * "???" before DWARF 5, where files count from 1. */
typedef struct dwarf_line_unit {
  char **files;
  size_t nfiles;
} dwarf_line_unit;

/* Reads the line program at OFFSET of S->line for a unit whose DW_AT_comp_dir
 * is COMP_DIR (NULL when absent): fills *UNIT (freed with dwarf_line_unit_free,
 * also after a failure) and calls ROW for every row in program order; ROW's
 * LP_ERR stops the reading and is returned.  Malformed bytes: LP_ERR, "bad
 * DWARF line table: what". */
lp_status dwarf_line_read(const dwarf_line_sections *s, uint64_t offset, const char *comp_dir,
                          dwarf_line_unit *unit, lp_status (*row)(void *ctx, const dwarf_line_row *r),
                          void *ctx);

void dwarf_line_unit_free(dwarf_line_unit *unit);

#endif
