/* reloc_unwind.h — unwind information for a function's copy.
 *
 * From the original function's call frame information (its CIE and FDE, as
 * .eh_frame states them) and a plan, builds a self-contained .eh_frame
 * fragment for the copy at DEST: one CIE and one FDE covering
 * [DEST, DEST + copy_size), then a 4-byte zero, as libgcc's
 * __register_frame_info(begin, object) takes it; and, when the function has
 * one, its own LSDA (the C++ call-site table of .gcc_except_table) with the
 * call sites moved to the copy.
 *
 * The CFA program is interpreted into rows and written again along the
 * copy's origin map (reloc_origins): every range of the copy gets the rules
 * of the original address it stands for, so probes, widened branches,
 * reordered blocks and edge stubs all keep the frame state of the
 * instruction they belong to.  Inside a counter probe's save
 * (`lea rsp, [rsp-128]; push rax; ...; pop rax; lea rsp, [rsp+128]`, or
 * pushfq/popfq around lock inc) a CFA
 * defined from rsp is raised by what the probe pushed, so even an unwinder
 * stopping there (a signal handler, a profiler) is right; only a CFA given
 * by a DWARF expression (stack realignment) is left as the original says,
 * off by up to 136 bytes for those few instructions.
 *
 * Pointers are written absolute (DW_EH_PE_absptr, with DW_EH_PE_indirect
 * kept for the personality and type entries), so the CIE and FDE can be
 * moved anywhere as one piece; only the FDE's LSDA pointer names where the
 * LSDA goes (reloc_unwind_place_lsda).  The LSDA's landing pads point into
 * the copy when the landing pad was copied, else into the original body
 * (landing pads are reached only by the unwinder, so recursive decoding
 * from the entry does not find them: gcc's usually stay in the original,
 * which is intact but uninstrumented, and rejoin the original body).  The
 * action table, type table and exception specifications are carried over,
 * type entries re-encoded absolute. */
#ifndef RELOC_UNWIND_H
#define RELOC_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lp_status.h"
#include "reloc.h"

/* The original function's call frame information, at run-time addresses. */
typedef struct reloc_cfi {
  uint64_t pc_begin, pc_range;  /* what the FDE covers (the copy's region start
                                   is its own DEST, call sites move with it) */
  uint64_t code_align;          /* CIE factors and return address column */
  int64_t data_align;
  uint64_t ra_reg;
  bool signal_frame;            /* 'S' */
  const uint8_t *cie_program;   /* the CIE's initial instructions */
  size_t cie_program_size;
  const uint8_t *fde_program;   /* the FDE's instructions */
  size_t fde_program_size;
  uint8_t personality_enc;      /* 0xff (DW_EH_PE_omit) without; only its
                                   DW_EH_PE_indirect bit (0x80) matters: */
  uint64_t personality;         /* the routine, or the slot holding it when indirect */
  uint64_t lsda;                /* run-time address of the LSDA, 0 without */
  const uint8_t *lsda_bytes;    /* lsda_bytes[0] is at lsda; reads stay below */
  size_t lsda_size;             /*   lsda_bytes + lsda_size */
} reloc_cfi;

typedef struct reloc_unwind {
  uint8_t *eh;          /* one CIE, one FDE, a 4-byte zero (malloc'd) */
  size_t eh_size;       /* including the zero */
  uint8_t *lsda;        /* the copy's LSDA (malloc'd), NULL without; no pointer
                           in it depends on where it goes */
  size_t lsda_size;
  size_t lsda_field;    /* offset in eh of the FDE's 8-byte LSDA pointer */
  size_t landing_pads_in_original; /* call sites whose landing pad stays in the
                                      original body (not copied) */
} reloc_unwind;

/* Builds the fragment for the copy of PLAN at DEST.  The LSDA pointer is left
 * 0 until reloc_unwind_place_lsda.  Fails with a message on a CFA operation
 * or pointer encoding it does not handle (DW_CFA_set_loc, GNU_window_save,
 * registers above 32, datarel/textrel LSDA fields). */
lp_status reloc_unwind_build(const reloc_plan *plan, const reloc_cfi *cfi, uint64_t dest,
                             reloc_unwind *out);

/* The same for a function without an LSDA, once its plan is gone: from the
 * copy's origin map (reloc_origins, kept) and size.  Fails for one with an
 * LSDA. */
lp_status reloc_unwind_build_later(const reloc_origin *origins, size_t norigins, size_t copy_size,
                                   const reloc_cfi *cfi, uint64_t dest, reloc_unwind *out);

/* Does the original's frame at pc_begin look as a call leaves it (CFA =
 * rsp + 8, no register saved but the return address)?  False for a part of
 * another function's frame, such as gcc's FUNC.cold parts: they are entered by
 * jumps, at their first address or past it.  True when the program cannot be
 * read. */
bool reloc_cfi_starts_called(const reloc_cfi *cfi);

/* Does the original's LSDA send the unwinder into [FROM, TO): a landing pad
 * there?  (gcc puts a part's first pad past a nop at its start, 1 byte in:
 * a jmp over its entry would cut it.)  False when the LSDA cannot be read. */
bool reloc_cfi_pad_in(const reloc_cfi *cfi, uint64_t from, uint64_t to);

/* Is the original's frame at ADDR gone, its return address on top of the
 * stack (CFA = rsp + 8), as at its entry: an indirect jmp there that reads
 * no table is a tail call.  False when the program cannot be read. */
bool reloc_cfi_returns_from(const reloc_cfi *cfi, uint64_t addr);

/* Writes the run-time address where U->lsda will be into the FDE. */
void reloc_unwind_place_lsda(reloc_unwind *u, uint64_t lsda_addr);

void reloc_unwind_free(reloc_unwind *u);

#endif
