/* x64_zydis.h — the one Zydis decoder of arch/x86_64 and register widening,
 * for the files that need Zydis's full view of an instruction (private to
 * arch/x86_64; x64_decode.h is the view the rest of lazyprobe gets). */
#ifndef X64_ZYDIS_H
#define X64_ZYDIS_H

#include <Zydis/Zydis.h>

/* A 64-bit decoder, initialised on first use. */
const ZydisDecoder *x64_zydis_decoder(void);

/* R widened to its 64-bit register (eax -> rax); 0 for none. */
int x64_widen(ZydisRegister r);

#endif
