/* x64_quick.h — the common instructions decoded without Zydis (private to
 * arch/x86_64: x64_decode tries this first, x64_decode_flow its flow scan,
 * x64_jumptable.c its registers written). */
#ifndef X64_QUICK_H
#define X64_QUICK_H

#include "x64_decode.h"

/* Fills OUT as x64_decode would, but only for the instructions x64_quick.c
 * lists, with operands left for x64_decode_operands; false for any other
 * (OUT then untouched). */
bool x64_decode_quick(const uint8_t *code, size_t avail, uint64_t addr, x64_insn *out);

/* The length and flow of the instruction at CODE, as x64_decode_quick would
 * give them, without filling an x64_insn; false for one it leaves to Zydis. */
bool x64_quick_flow(const uint8_t *code, size_t avail, size_t *len, x64_flow *flow);

/* What x64_insn_gprs_written says of IN, which x64_decode_quick decoded
 * (IN->quick), read from its bytes: a planner asks it of every instruction
 * of a function whose jump tables it checks, and Zydis's full decoding cost
 * ~3 000 instructions an answer. */
uint16_t x64_quick_gprs_written(const x64_insn *in);

#endif
