/* module.h — an ELF module as lazyprobe sees it: its executable bytes as in
 * the file, the ranges the program cannot change (read-only segments,
 * RELRO), and the functions discovered in it.
 *
 * Functions come from .symtab, .dynsym and the .eh_frame FDEs (so stripped
 * binaries work); PLT stubs (.plt, .plt.got, .plt.sec) are not functions of the
 * program; the GOT slots those stubs jump through are listed by symbol, and
 * the functions a call to which returns twice, never, or as its first argument
 * says (core_module_callee).  All
 * addresses here are link-time addresses (st_value, p_vaddr);
 * add the load bias to get run-time addresses. */
#ifndef CORE_MODULE_H
#define CORE_MODULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lp_status.h"

enum core_function_source {
  CORE_FROM_SYMTAB = 1u << 0,
  CORE_FROM_DYNSYM = 1u << 1,
  CORE_FROM_EH_FRAME = 1u << 2,
};

enum core_binding { CORE_BIND_NONE, CORE_BIND_GLOBAL, CORE_BIND_WEAK, CORE_BIND_LOCAL };

typedef struct core_function {
  uint64_t addr;    /* link-time entry address */
  uint64_t size;    /* bytes, never 0: symbol or FDE size, else up to the next start */
  uint64_t room;    /* bytes from addr to the next function start or section end:
                       how much may be overwritten at the entry without touching
                       another function (>= size) */
  const char *name; /* symbol name, or "fn_<hex addr>" when none; owned by the module */
  unsigned sources; /* enum core_function_source bits */
  unsigned binding; /* enum core_binding of the symbol that names it (NONE: no symbol) */
  uint32_t part;    /* the index of its other part, gcc's NAME.cold for NAME and NAME for
                       it (the hot part jumps into the cold one, which jumps back), or
                       CORE_NO_PART; linked by name here, the unnamed parts of a stripped
                       module by breaks.c (breaks_link_unnamed_parts) */
} core_function;

#define CORE_NO_PART UINT32_MAX

/* A PLT stub's GOT slot (an R_X86_64_JUMP_SLOT relocation): only the stub
 * jumps through it, so it may point anywhere the symbol's code is. */
typedef struct core_plt_slot {
  uint64_t got;     /* link-time address of the slot */
  const char *name; /* the symbol it is bound to (.dynsym); owned by the module */
} core_plt_slot;

typedef struct core_segment {
  uint64_t vaddr;       /* link-time address of bytes[0] */
  uint64_t size;        /* bytes available (file size of the PT_LOAD; the rest is zero) */
  const uint8_t *bytes; /* the file's bytes, owned by the module */
} core_segment;

typedef struct core_module {
  char *path;          /* as opened */
  int is_pie;          /* ET_DYN */
  uint64_t entry;      /* e_entry, link-time */
  uint64_t min_vaddr;  /* lowest PT_LOAD p_vaddr (page-aligned down) */
  uint64_t max_vaddr;  /* highest PT_LOAD p_vaddr + p_memsz */
  uint64_t dynamic;    /* PT_DYNAMIC p_vaddr, 0 if none (static programs) */
  core_segment *exec;  /* executable PT_LOAD segments */
  size_t nexec;
  uint64_t (*readonly)[2]; /* link-time [lo, hi) whose bytes the program cannot change:
                              PT_LOAD without PF_W (file part), PT_GNU_RELRO */
  size_t nreadonly;
  core_function *functions; /* sorted by addr, one per distinct address */
  size_t nfunctions;
  core_plt_slot *plt_slots; /* sorted by name (then got) */
  size_t nplt_slots;
  struct core_callee_at *callees; /* the functions that do not return as calls do, by
                                      address (core_module_callee); NULL when none */
  size_t ncallees;
  void *internal;      /* owned by module.c */
} core_module;

/* Opens and validates PATH (regular file, ELF, 64-bit, x86-64, ET_EXEC or
 * ET_DYN) and discovers its functions.  Failures say what is wrong in one
 * line, e.g. "PATH: not an ELF file", "PATH: 32-bit ELF is not supported yet". */
lp_status core_module_open(const char *path, core_module **out);

void core_module_close(core_module *module);

/* The link-time addresses of the functions NAMES (NULL-terminated) that PATH
 * exports (its .dynsym; the default version where there are several) into
 * ADDRS, 0 for those it does not; without discovering its functions: what
 * libc's dlopen needs costs ~0.1 M instructions, libc opened as a module 8 M.
 * Fails as core_module_open does on a file that is not a module. */
lp_status core_module_exports(const char *path, const char *const names[], uint64_t addrs[]);

/* The file's bytes at link-time address ADDR within an executable segment, and
 * in *avail how many follow in that segment; NULL when ADDR is in none. */
const uint8_t *core_module_code(const core_module *module, uint64_t addr, size_t *avail);

/* How a call to a function returns, known by the function's name or, for a
 * function of the module, by its code. */
typedef enum core_callee {
  CORE_CALLEE_RETURNS,        /* once, as calls do */
  CORE_CALLEE_RETURNS_TWICE,  /* the code after the call may run again without the call
                                 running again: gcc's returns_twice functions (setjmp,
                                 sigsetjmp, savectx, getcontext, qsetjmp, under any number of
                                 leading underscores) */
  CORE_CALLEE_NEVER_RETURNS,  /* exit, abort, __assert_fail, __stack_chk_fail, longjmp,
                                 pthread_exit, __cxa_throw, _Unwind_Resume, err, std::terminate,
                                 std::__throw_*, ...; a function whose code has no way back */
  CORE_CALLEE_EXITS_ON_STATUS, /* error, error_at_line: never returns when its first argument
                                  (the exit status) is not 0 */
  CORE_CALLEE_SYSCALL,          /* syscall: returns twice when its first argument (the system
                                  call's number) is a fork's */
  CORE_CALLEE_FORKS             /* returns twice, the second time in a child that goes on with
                                   counters of its own: fork, vfork, and a function of the
                                   module that calls one, directly (bash's make_child) or through others */
} core_callee;

typedef struct core_callee_at {
  uint64_t addr; /* link-time */
  core_callee kind;
} core_callee_at;

/* How a call to link-time ADDR returns: ADDR is the function (linked in; for
 * the functions that never return by their name, one the module exports, so
 * that a program's own `err` is not taken for libc's) or a PLT stub that
 * jumps through its GOT slot.  A function of the module known by no such name
 * never returns when its code has no way back (no ret, indirect jmp or jump
 * out, and it ends in a call: coreutils' usage()), and forks when its bytes
 * hold a direct call of fork or vfork (in a module that calls one); that is
 * read once, the first time it is asked (no way back: for functions up to
 * 4 KB). */
core_callee core_module_callee(const core_module *module, uint64_t addr);

/* The function whose [addr, addr+size) contains ADDR, or NULL. */
const core_function *core_module_function_at(const core_module *module, uint64_t addr);

/* The module's .eh_frame (core/eh_frame.h), NULL when it has none. */
struct core_eh_frame;
const struct core_eh_frame *core_module_eh_frame(const core_module *module);

/* The call frame information of the FDE covering link-time ADDR, found among
 * the FDEs read at discovery (core_eh_frame_cfi); fails when none does. */
struct core_cfi;
lp_status core_module_cfi(const core_module *module, uint64_t addr, struct core_cfi *out);

#endif
