/* x64_displace.h — a function's first instructions run elsewhere, so that
 * its entry can hold a jmp while its first call goes on without waiting.
 *
 * A function whose first call is all that is asked of it (core/breaks.c,
 * marks_alone) need not wait for the tracer at that call: its stub asks, then
 * runs a copy of the instructions the entry's jmp covers (the window: at
 * least 5 bytes, or fewer that end in a ret or jmp, as `xor eax, eax; ret`,
 * whose padding the jmp takes) and jumps to the first one after them, or
 * calls from there (core/stubs.c).  That is safe only where nothing branches into the jmp's
 * bytes while it is there, and where what the copy runs cannot tell it runs
 * elsewhere:
 *   - no direct branch of the function's own bytes lands 1..N-1 bytes past
 *     its entry, N the window's length or 5 (every byte offset read as a
 *     rel8 or rel32 jmp or jcc, a loop or jrcxz: data that looks like one
 *     only costs the wait, but for bytes inside the instructions that run
 *     one after another from the entry, through calls of other functions,
 *     up to its first jmp, ret, indirect call or call into its own bytes:
 *     an immediate's or a displacement's; calls go to entries);
 *   - each instruction falls through, or is a direct jmp or jcc (rewritten
 *     for the copy's address) or a ret, or a direct call, the window's last:
 *     copied as a push of the address after it at home and a jmp to its
 *     callee, which returns to the rest of the function (a return address
 *     in the arena would be one where an unwinder finds no frame); nothing
 *     indirect;
 *   - it is one of a few plain instructions (push, mov, lea, arithmetic,
 *     shifts, multiplies, compares, sign extensions, SSE moves and xors,
 *     endbr64).  One that faults in the copy is moved home by the tracer
 *     before the signal is delivered (core/stubs.c, stubs_fault_home;
 *     x64_displaced_layout says where each instruction lies in the copy): a
 *     handler, or a core, sees the program's own address and frame.
 * Other functions wait at their first call, as before. */
#ifndef X64_DISPLACE_H
#define X64_DISPLACE_H

#include <stddef.h>
#include <stdint.h>

#include "x64_decode.h"
#include "x64_writer.h"

#define X64_DISPLACE_MAX 5 /* instructions: a window of 5 bytes takes at most 5 */
/* A window's copy at most: 19 bytes, 4 more for each rel8 branch made rel32,
 * and the jmp back. */
#define X64_DISPLACED_MAX_SIZE 48

/* The window of the function at run-time address ADDR whose SIZE bytes are
 * CODE: its instructions in OUT (*N of them) and its length, or 0 when its
 * first instructions cannot run elsewhere. */
size_t x64_displace_window(const uint8_t *code, size_t size, uint64_t addr, x64_insn out[X64_DISPLACE_MAX], size_t *n);

/* The distinct places in [LO, HI) (offsets from CODE, which may lie before
 * it) where a direct jmp or jcc possibly encoded at some byte of CODE (SIZE
 * bytes: a function's) lands, sorted, the first MAX into OUT; returns how
 * many there are.  Every real one is among them, and so may be bytes of
 * other instructions that read as one: where a function jumps into its
 * other part (core/breaks.c watches those places from the start). */
size_t x64_branches_into(const uint8_t *code, size_t size, int64_t lo, int64_t hi, int64_t *out, size_t max);

/* Writes the N instructions of a window rewritten for W's address, then a
 * jmp to RESUME (the entry + the window's length). */
void x64_put_displaced(x64_writer *w, const x64_insn *in, size_t n, uint64_t resume);

/* Where x64_put_displaced puts each of the N instructions IN: OFFSETS[k]
 * bytes from the copy's start (the size never depends on the address);
 * returns the copy's size. */
size_t x64_displaced_layout(const x64_insn *in, size_t n, size_t offsets[X64_DISPLACE_MAX]);

#endif
