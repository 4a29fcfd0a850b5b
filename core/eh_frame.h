/* eh_frame.h — private to core/: the FDE address ranges of an .eh_frame
 * section, read by our own small parser (no libdw). */
#ifndef CORE_EH_FRAME_H
#define CORE_EH_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "lp_status.h"

typedef struct core_fde {
  uint64_t pc_begin; /* link-time address of the code the FDE covers */
  uint64_t pc_range; /* its length in bytes */
} core_fde;

/* Where the bytes of .eh_frame sit and the bases its pointer encodings may use. */
typedef struct core_eh_frame {
  const uint8_t *data; /* section contents */
  size_t size;         /* bytes of data (up to the zero terminator or the end) */
  uint64_t addr;       /* link-time address of data[0] (base of DW_EH_PE_pcrel) */
  uint64_t data_base;  /* base of DW_EH_PE_datarel (the GOT on x86-64), 0 if unknown */
  uint64_t text_base;  /* base of DW_EH_PE_textrel (.text), 0 if unknown */
} core_eh_frame;

/* Collects every FDE of FRAME into a malloc'd array (*out, *count; the caller
 * frees *out).  On malformed data it stops there, keeps the FDEs read so far
 * in *out and *count, and returns LP_ERR with a message saying where. */
lp_status core_eh_frame_fdes(const core_eh_frame *frame, core_fde **out, size_t *count);

/* Reads the .eh_frame address out of an .eh_frame_hdr (for binaries without
 * section headers, found through PT_GNU_EH_FRAME at link-time address ADDR). */
lp_status core_eh_frame_hdr_target(const uint8_t *hdr, size_t size, uint64_t addr,
                                   uint64_t *eh_frame_addr);

#endif
