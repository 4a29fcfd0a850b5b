/* gdbjit_lib.c — the small library lazyprobe loads into a program it
 * launches (dlopen through a remote call, before any of the program's code
 * runs): the two symbols of GDB's JIT interface ("JIT Compilation Interface"
 * in the GDB manual), which GDB looks up by name in the loaded objects.
 * lazyprobe links an in-memory ELF object describing each copy (its name and
 * its unwind information) into __jit_debug_descriptor's list by writing the
 * target's memory; GDB reads the list when it attaches or opens a core, so
 * `bt` names the copies and unwinds through them.  No code of it runs. */
#include <stdint.h>

struct jit_code_entry {
  struct jit_code_entry *next_entry;
  struct jit_code_entry *prev_entry;
  const char *symfile_addr;
  uint64_t symfile_size;
};

struct jit_descriptor {
  uint32_t version;
  uint32_t action_flag; /* 0 nothing, 1 register, 2 unregister */
  struct jit_code_entry *relevant_entry;
  struct jit_code_entry *first_entry;
};

__attribute__((noinline, used, visibility("default"))) void __jit_debug_register_code(void) {
  __asm__ volatile("" ::: "memory"); /* GDB breaks here to hear of new entries */
}

__attribute__((used, visibility("default"))) struct jit_descriptor __jit_debug_descriptor = {1, 0, 0, 0};
