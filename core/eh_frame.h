/* eh_frame.h — private to core/: the FDE address ranges of an .eh_frame
 * section (discovery) and one function's call frame information (unwind
 * information for its copy), read by our own small parser (no libdw). */
#ifndef CORE_EH_FRAME_H
#define CORE_EH_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lp_status.h"

typedef struct core_fde {
  uint64_t pc_begin; /* link-time address of the code the FDE covers */
  uint64_t pc_range; /* its length in bytes */
  size_t offset;     /* of the FDE (its length field) in the section */
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

/* The call frame information of one FDE as its CIE and FDE state it, at
 * link-time addresses.  The programs point into the section's data. */
typedef struct core_cfi {
  size_t fde_offset;         /* of the FDE in the section */
  uint64_t pc_begin, pc_range;
  uint64_t code_align;       /* CIE factors and return address column */
  int64_t data_align;
  uint64_t ra_reg;
  bool signal_frame;         /* 'S' */
  const uint8_t *cie_program; /* the CIE's initial instructions */
  size_t cie_program_size;
  const uint8_t *fde_program; /* the FDE's instructions */
  size_t fde_program_size;
  uint8_t personality_enc;   /* 'P' encoding, 0xff (omit) without; only its
                                DW_EH_PE_indirect bit still matters: */
  uint64_t personality;      /* the routine, or the slot holding it when indirect */
  uint8_t lsda_enc;          /* 'L' encoding, 0xff (omit) without */
  uint64_t lsda;             /* the LSDA (.gcc_except_table), 0 without */
} core_cfi;

/* The call frame information of the FDE at OFFSET (core_fde.offset).
 * Fails with a message when there is no FDE there or its CIE uses an
 * augmentation or an encoding this reader cannot resolve. */
lp_status core_eh_frame_cfi(const core_eh_frame *frame, size_t offset, core_cfi *out);

/* The call frame information of the FDE whose range holds PC (link-time).
 * Walks the section from its start: cost grows with the number of FDEs
 * (core_module_cfi looks it up in the FDEs found at discovery instead).
 * Fails with a message when no FDE covers PC or its CIE uses an augmentation
 * or an encoding this reader cannot resolve. */
lp_status core_eh_frame_find(const core_eh_frame *frame, uint64_t pc, core_cfi *out);

/* Reads the .eh_frame address out of an .eh_frame_hdr (for binaries without
 * section headers, found through PT_GNU_EH_FRAME at link-time address ADDR). */
lp_status core_eh_frame_hdr_target(const uint8_t *hdr, size_t size, uint64_t addr,
                                   uint64_t *eh_frame_addr);

#endif
