/* x64_stub.h — the arena code through which a function's first call asks the
 * tracer for its copy without stopping (core/stubs.c, core/doorbell.h).
 *
 * For the N functions of a module, at run-time address AT:
 *   N stubs of X64_STUB_SIZE bytes, stub i at AT + i * X64_STUB_SIZE:
 *     push imm32 i; jmp common                 (the entry's jmp lands here)
 *   the N entries (uint64, run-time), 8-aligned, where a served stub goes
 *   the N go-on addresses (uint64, run-time; 0: none): a copy of the
 *     function's first instructions that jumps on to the rest (x64_displace.h)
 *   common: saves the flags and every register a system call or the code
 *     below touches; compare-and-swaps STATES[i] (uint32) from 0 to 1
 *     (requested) and, if it did, sets bit i / 64 of the bit string SUMMARY
 *     (uint64 words: one bit per 64 functions, so that the tracer reads the
 *     words of the groups asked from alone), adds one to BELL and futex-wakes it;
 *     then, where function i has a go-on address, restores everything and
 *     returns there at once (the tracer marks it when it comes to it);
 *     otherwise spins a while and futex-waits while STATES[i] is 1; a
 *     serializing cpuid (the entry was rewritten by another processor);
 *     restores everything and returns to entry i, with the stack as the call
 *     left it.
 * STATES, SUMMARY and BELL are run-time addresses within 2 GiB of the code. */
#ifndef X64_STUB_H
#define X64_STUB_H

#include <stddef.h>
#include <stdint.h>

#include "lp_status.h"

#define X64_STUB_SIZE 10
#define X64_STUB_REQUESTED 1u /* STATES[i]: 0 not asked for, 1 asked for, 2 served */
#define X64_STUB_SERVED 2u

/* Bytes the stubs of N functions take. */
size_t x64_stubs_size(size_t n);

/* Writes them into OUT (x64_stubs_size(n) bytes) to run at AT; GO_ON may be NULL. */
lp_status x64_stubs_write(uint8_t *out, uint64_t at, size_t n, const uint64_t *entries, const uint64_t *go_on,
                          uint64_t states, uint64_t summary, uint64_t bell);

/* The uint64 words of the SUMMARY of N functions. */
static inline size_t x64_stubs_summary_words(size_t n) { return (n + 64 * 64 - 1) / (64 * 64); }

#endif
