/* counters.h — the per-process counters file: self-describing, mapped by both
 * lazyprobe and the target, readable alone after a crash of either side.
 *
 * Layout (all little-endian, offsets from the start of the file):
 *   shm_header                      at 0
 *   shm_module[nmodules]            at modules_off
 *   shm_function[nfunctions]        at functions_off
 *   strings (NUL-terminated)        at strings_off, strings_size bytes; offset 0 is ""
 *   notes area (appended strings)   at notes_off, notes_size bytes, notes_used in use
 *   uint64_t counters[ncounters]    at counters_off (page-aligned): the only part
 *                                   the target maps, read-write, never executable
 * The header and index are written before the target runs a single
 * instrumented instruction, so the file is complete at every moment. */
#ifndef SHM_COUNTERS_H
#define SHM_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

#include "lp_status.h"

#define SHM_MAGIC "LZPROBE\x01"
#define SHM_VERSION 1u

enum shm_end { SHM_RUNNING = 0, SHM_EXITED = 1, SHM_KILLED = 2 };

enum shm_state {
  SHM_NOT_RUN = 0,   /* never entered */
  SHM_RELOCATED = 1, /* runs in an instrumented copy */
  SHM_TRAPPED = 2,   /* counted by a break at every call (entry too small to patch) */
  SHM_NATIVE = 3,    /* left uninstrumented; note says why */
};

typedef struct shm_header {
  char magic[8];
  uint32_t version;
  uint32_t header_size;
  uint64_t file_size;
  int64_t pid;
  int32_t end;        /* enum shm_end */
  int32_t end_value;  /* exit status or signal number */
  uint32_t nmodules;
  uint32_t nfunctions;
  uint64_t modules_off, functions_off;
  uint64_t strings_off, strings_size;
  uint64_t notes_off, notes_size, notes_used;
  uint64_t counters_off, ncounters;
  uint32_t program;   /* string: the program's path */
  uint32_t reserved;
} shm_header;

typedef struct shm_module {
  uint32_t path;      /* string */
  uint32_t first_function, nfunctions;
  uint32_t reserved;
  uint64_t bias;      /* run-time address = link-time address + bias */
} shm_module;

typedef struct shm_function {
  uint64_t addr;      /* link-time */
  uint64_t size;
  uint32_t name;      /* string */
  uint32_t module;
  uint32_t state;     /* enum shm_state */
  uint32_t counter;   /* index into counters */
  uint64_t note;      /* offset of a note string from notes_off, or UINT64_MAX */
} shm_function;

/* A counters file as one mapping. */
typedef struct shm_counters {
  int fd;
  uint8_t *base;
  size_t size;
  shm_header *header;
} shm_counters;

/* What a new file must hold. */
typedef struct shm_layout_module {
  const char *path;
  uint64_t bias;
  size_t nfunctions;
  const uint64_t *addr, *size; /* per function */
  const char *const *name;
} shm_layout_module;

/* Creates DIR/lazyprobe.PID.counters with owner-only permissions, never
 * following or replacing an existing entry, and maps it. */
lp_status shm_counters_create(int dirfd, const char *dirname, long pid, const char *program,
                              const shm_layout_module *modules, size_t nmodules,
                              shm_counters *out);

/* Maps an existing counters file read-only and checks it. */
lp_status shm_counters_open(const char *path, shm_counters *out);

void shm_counters_close(shm_counters *c);

static inline shm_module *shm_modules(const shm_counters *c) {
  return (shm_module *)(c->base + c->header->modules_off);
}
static inline shm_function *shm_functions(const shm_counters *c) {
  return (shm_function *)(c->base + c->header->functions_off);
}
static inline volatile uint64_t *shm_counter_array(const shm_counters *c) {
  return (volatile uint64_t *)(c->base + c->header->counters_off);
}
static inline const char *shm_string(const shm_counters *c, uint32_t off) {
  return (const char *)c->base + c->header->strings_off + off;
}
const char *shm_note(const shm_counters *c, const shm_function *f);

/* Records why a function is in its state (appended to the notes area). */
void shm_set_state(shm_counters *c, uint32_t function, enum shm_state state, const char *note);

/* Byte range the target maps: [counters_off, file_size). */
static inline uint64_t shm_target_offset(const shm_counters *c) { return c->header->counters_off; }
static inline uint64_t shm_target_size(const shm_counters *c) {
  return c->header->file_size - c->header->counters_off;
}

#endif
