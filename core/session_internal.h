/* session_internal.h — the state shared by the files of the session: the
 * processes it traces, the modules mapped in each, their threads.
 *
 *   session.c   the event loop, threads, fork/vfork/exec, attach and detach
 *   process.c   a process image: its modules, counters file, mappings
 *   breaks.c    the lazy break manager of one process: entry breaks, first
 *               hits, entry patches, PLT slots, removal of covered probes,
 *               second copies of hot functions
 *   stubs.c     first hits asked for through arena stubs, without a stop
 *   adopt.c     attach: frames already running moved into copies */
#ifndef CORE_SESSION_INTERNAL_H
#define CORE_SESSION_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "arena.h"
#include "counters.h"
#include "doorbell.h"
#include "image.h"
#include "module.h"
#include "gdbjit.h"
#include "perfmap.h"
#include "reloc.h"
#include "reloc_unwind.h"
#include "session.h"
#include "target.h"
#include "unwind.h"

#define INT3 0xcc
#define PAGE 4096ull

/* A copy whose unwind information and GDB object are made only when first
 * needed (process_describe_copies): a function without exception tables,
 * whose information nothing reads unless the program unwinds, dumps core or
 * is left to a debugger. */
typedef struct later_copy {
  const char *name;       /* its function's (the module's, which outlives it) */
  uint64_t dest, size;    /* the copy */
  uint64_t region;        /* its arena's base (core_unwind_add) */
  bool has_cfi;
  reloc_cfi cfi;          /* the original's call frame information */
  reloc_origin *origins;  /* the copy's origin map (malloc'd) */
  size_t norigins;
} later_copy;

/* The plan of a function's last stripped copy, kept to make the next one
 * (breaks.c): measured again, not decoded again. */
typedef struct kept_plan {
  struct reloc_plan *plan;
  reloc_info info;
} kept_plan;

typedef struct fn_state {
  uint8_t state;  /* enum shm_state */
  bool entered_inside; /* a copy branches into its first 5 bytes: never a jmp there */
  bool second_looked;  /* considered for re-placing its arcs (breaks.c, once) */
  bool stub;           /* its entry is a jmp to its stub (stubs.c), not an int3 */
  bool part_watched;   /* where it jumps into its other part, home probes from the start
                          (breaks_watch_parts): its first call may go on too */
  bool go_on;          /* its stub goes on to a copy of its first instructions
                          at once: its first call does not wait (stubs.c) */
  uint8_t nstrips;     /* copies made without the cover probes that ran (breaks.c) */
  uint32_t strip_covered; /* at the last: its blocks whose probes had run */
  kept_plan *kept;        /* the last's plan (this process's own: a fork child starts without) */
  uint32_t calls_slot; /* under entry_cover: the slot counting its calls once its
                          mark is removed (0: none) */
  uint64_t copy;  /* run-time address of the instrumented copy (the second, once re-placed) */
  uint64_t first_copy; /* once it has a second copy: the first, whose top jumps to copy */
  bool home;           /* runs its original code again (breaks.c, "going home") */
  bool home_looked;    /* hot at the last pass, home_covered of its probes had run */
  uint32_t home_covered;
  uint32_t side_jumps; /* the last side_jump made for it (index + 1 in process.side_jumps), 0: none */
} fn_state;

/* A function's plan kept for the next process image that maps its module
 * (breaks.c): rebased there, not planned again. */
typedef struct cached_plan {
  struct reloc_plan *plan;
  reloc_info info;
  uint64_t bias;          /* the one it was last emitted for */
} cached_plan;

/* Where a function's other part (core_function.part) jumps into it
 * (breaks.c, "a function's other part"): link-time addresses, sorted, and
 * where each landed in its first copy (offsets from its start, -1 until the
 * first copy of a process image was made: the same for every image). */
typedef struct side_entries {
  bool scanned;
  uint8_t watchable; /* 1: each at an instruction's start in a linear decode (an int3 may
                        go there: breaks.c, watch_part), 2: not, 0: not looked at yet */
  uint32_t n;
  uint64_t *at;
  int64_t *off;
} side_entries;

/* A jump of a copy to a side entry of a function that had no copy yet: the
 * 5-byte jmp it goes through, at AT, to TARGET until that function's first
 * copy, then to TO there; or, while that function has not run (WAITS), an
 * int3 there whose first hit relocates it (breaks.c).  A function's are
 * chained from its fn_state. */
typedef struct side_jump {
  uint32_t module;        /* in the process's mods */
  uint32_t function;
  uint64_t target;        /* run-time */
  uint64_t at;
  uint64_t to;            /* 0 while it goes to TARGET (or waits) */
  uint32_t before;        /* the one made before it for the same function (index + 1), 0: none */
  bool waits;
} side_jump;

/* A module file, opened once per session and shared by every process that
 * maps it. */
/* What tells a file from one rebuilt since: a file rebuilt may get the
 * inode of the one it replaced. */
typedef struct file_identity {
  dev_t dev;
  ino_t ino;
  off_t size;
  struct timespec mtime;
} file_identity;

/* libc's exports that a process needs when libc is not instrumented. */
typedef struct libc_exports {
  file_identity id;
  uint64_t dlopen, dlsym; /* link-time, 0 when not exported */
  bool known;
} libc_exports;

typedef struct module_file {
  char *path;
  file_identity id;
  core_module *module;
  core_image image;
  unsigned images;        /* process images that instrumented it (not fork children) */
  cached_plan *plans;     /* per function, from its second image on (NULL: none yet) */
  side_entries *sides;    /* per function, once looked at (NULL: none yet) */
  bool unnamed_parts_linked; /* its functions' unnamed parts linked to them (breaks.c) */
  int8_t lines;           /* whether it may have line info (core_lines_maybe): -1 not asked yet */
  char **names;           /* of those parts, NAME.cold: owned here */
  size_t nnames;
  struct module_file *next;
} module_file;

/* A module as loaded in one process. */
typedef struct pmodule {
  module_file *file;
  uint64_t bias;
  uint64_t lo, hi;        /* run-time [min_vaddr, max_vaddr) */
  uint64_t link_map;      /* its loader entry; 0 for the main program */
  uint32_t index;         /* in the counters file's module table */
  uint32_t first;         /* its first function in the counters file */
  uint64_t slots;         /* run-time address of slot 0 in the view of the counters near it */
  shm_arena arena;        /* its copies, within reach of it and of the view */
  uint64_t stubs;         /* run-time address of its stubs in the arena (0: none) */
  uint32_t state_slot;    /* its functions' stub words (uint32 each) from this slot on */
  uint32_t summary_slot;  /* and their summary: a bit per 64 words, set by a stub that asks */
  uint64_t windows, windows_end; /* the copies of its functions' windows (stubs.c: go_on), in function order */
  fn_state *fns;          /* one per module function */
  bool unloaded;          /* dlclose'd: nothing of it is looked up any more */
} pmodule;

typedef struct cover_probe {
  uint64_t addr;          /* run-time address of the probe in a copy */
  uint64_t then_count;    /* once removed: the run-time address of a counter it
                             increments instead of a NOP (an entry's mark whose
                             calls tell whether the function is hot), or 0 */
} cover_probe;

/* An int3 on the first byte of a block, in the original code of a function
 * gone home, whose cover probe had not run (breaks.c). */
typedef struct home_probe {
  uint64_t addr;          /* run-time */
  uint32_t slot;          /* the block's cover slot, set when a thread meets it (SHM_NONE for a
                             part's: mark_ran marks the part) */
  uint32_t module;        /* index in process.mods */
  uint8_t byte;           /* the original byte under it */
  bool met;               /* a thread met it: the byte is back */
  uint32_t part;          /* 0, or 1 + the function it marks run when met: a part of a
                             marked function, entered by its jumps (breaks.c, watch_part) */
} home_probe;

/* A PLT slot of some module pointed at a copy instead of its entry. */
typedef struct plt_redirect {
  uint64_t slot, entry;   /* run-time: the slot, what it held */
  size_t module;          /* index in process.mods of the module holding the slot */
} plt_redirect;

typedef struct process {
  pid_t pid;
  pid_t ppid;             /* the traced process it came from, 0 for the first */
  core_target target;
  int refs;               /* threads and vfork children using this memory */
  uint32_t image;         /* shm_header.image */
  bool ready;             /* instrumented; false from exec to the program's entry */
  uint64_t entry;         /* AT_ENTRY, where a temporary break waits while !ready */
  uint8_t entry_byte;     /* the byte under it */
  bool remap;             /* a fork child whose first stop must map its own counters */
  bool stubs;             /* entries may be jmps to stubs: first hits asked for, no stop */
  bool watched;           /* its bell is among those the event loop sleeps on */
  bool threaded;          /* it has run a second thread (stats.threaded) */
  uint32_t bell_slot;     /* the slot whose low word its stubs ring (SHM_NONE: none yet) */
  uint32_t bell_seen;     /* the bell's value when its requests were last served */
  shm_counters counters;  /* its own file */
  uint64_t scratch;       /* a page of executable memory for remote system calls */
  pmodule *mods;
  size_t nmods;
  uint64_t r_debug, r_brk; /* the loader's list and its hook (0: none) */
  uint8_t r_brk_byte;     /* the byte under the hook's break */
  core_unwind *unwind;    /* unwind information of copies not yet registered */
  later_copy *later;      /* copies not described yet (process_describe_copies) */
  size_t nlater, caplater;
  uint64_t find_fde;      /* the unwinder's _Unwind_Find_FDE (0: none loaded yet) */
  uint64_t register_fn;   /* __register_frame_info, in the same library */
  uint64_t registry_lock; /* the lock of its list of registered objects (0: not found) */
  bool find_fde_armed;    /* a break waits there: registrations are pending */
  uint8_t find_fde_byte;  /* the byte under it */
  shm_arena eh_data;      /* read-write memory for registered unwind information */
  core_perfmap perfmap;   /* /tmp/perf-PID.map naming the copies */
  cover_probe *pending;   /* cover probes still in place */
  uint32_t *pending_slots;/* the slot each sets, apart: all a sweep reads of
                             those whose blocks have not run */
  size_t npending, cappending;
  uint64_t *removed;      /* addresses of removed probes, sorted (their int3 may
                             still be reported by a thread that met it) */
  uint64_t sweep_next_ns; /* no sweep before (breaks_sweep) */
  uint32_t sweep_ms;      /* the wait after the last sweep */
  size_t nremoved;
  size_t nsecond;         /* functions with a second copy (fn_state.first_copy) */
  size_t nhome;           /* functions gone home (fn_state.home) */
  home_probe *homes;      /* their int3s, sorted by address */
  size_t nhomes, caphomes;
  uint64_t second_ns;     /* the last pass making second copies (breaks_second_pass) */
  bool second_ended;      /* a pass could not write its memory: it is ending */
  plt_redirect *redirects; /* undone at detach */
  size_t nredirects, capredirects;
  side_jump *side_jumps;  /* waiting for their function's first copy */
  size_t nside_jumps, capside_jumps;
  core_gdbjit gdbjit;     /* GDB's view of the copies (descriptor 0: none) */
  bool libc;              /* libc.so.6 is there, not instrumented (its dlopen usable) */
  uint64_t dlopen_fn, dlsym_fn; /* its dlopen and dlsym in the process, 0 when it exports none */
  bool sigtrap_seen;      /* the program's own SIGTRAP came with this action set: */
  uint64_t sigtrap_action[4]; /* struct k_sigaction: handler, flags, restorer, mask */
} process;

typedef struct thread {
  pid_t tid;
  process *proc;
  bool started;           /* its first stop was seen */
} thread;

struct core_session {
  core_session_options opt;
  module_file *files;     /* every module file opened */
  libc_exports libc;      /* the last libc.so.6 looked at, not opened as a module */
  pid_t main_pid;
  int deferred_sig;       /* signal that arrived during a remote system call */
  pid_t deferred_tid;     /* in this thread, for its next resume */
  thread *threads;
  size_t nthreads, cap;
  pid_t early[64];        /* tids whose first stop came before their parent's event */
  size_t nearly;
  volatile int detaching;
  volatile int main_ended; /* the first process ended; the loop waits for those that outlive it */
  bool stubs;             /* launched, futex_waitv there, no --no-stubs: stubs armed */
  bool unwinder_said;     /* that libgcc_s, though selected, is not instrumented (process.c) */
  bool lsan_said;         /* that the program's leak check cannot run under ptrace (process.c) */
  process *watched[CORE_DOORBELL_MAX_BELLS]; /* the processes whose bells the loop sleeps on */
  size_t nwatched;
  core_session_stats stats;
};

uint64_t core_now_ns(void);

/* process.c */
/* FILE at PATH, opened (validated, functions discovered) once per session. */
lp_status module_file_open(core_session *s, const char *path, module_file **out);
lp_status process_setup(core_session *s, process *p, pid_t tid, uint64_t scratch);
lp_status process_sync_modules(core_session *s, process *p, pid_t tid);
lp_status process_fork(core_session *s, const process *parent, pid_t pid, process **out);
lp_status process_remap(core_session *s, process *p, pid_t tid);
void process_free(process *p);
pmodule *process_module_at(process *p, uint64_t addr, long *function);
lp_status process_arm_unwinder(process *p);
/* Keeps the copy of NAME at DEST (SIZE bytes, in the arena at REGION) to be
 * described later; CFI (NULL: none) has no LSDA; ORIGINS is copied. */
lp_status process_describe_later(process *p, const char *name, uint64_t dest, uint64_t size, uint64_t region,
                                 const reloc_cfi *cfi, const reloc_origin *origins, size_t norigins);
/* Describes the copy of NAME at DEST (SIZE bytes, in the arena at REGION)
 * by U, its unwind information (none: U->eh NULL): its GDB object staged,
 * U queued for registration. */
lp_status process_describe(process *p, const char *name, uint64_t dest, uint64_t size, uint64_t region,
                           const reloc_unwind *u);
/* Describes the copies kept for later (process_describe), GDB's objects
 * written into the target. */
void process_describe_copies(process *p);
lp_status process_register_unwind(core_session *s, process *p, pid_t tid);
void process_register_at_detach(core_session *s, process *p, pid_t tid);
lp_status process_keep_sigtrap_action(core_session *s, process *p, pid_t tid);
/* Loads GDB's JIT library into P, set up after an attach, from thread TID;
 * the caller has made sure that no thread is in the loader or in malloc. */
lp_status process_load_gdbjit_attached(core_session *s, process *p, pid_t tid);

/* breaks.c */
/* A thread of the original that is to go on in a copy (breaks_instrument_running). */
typedef struct breaks_resume {
  uint64_t orig;     /* where it is (the instruction it stopped at), or */
  bool after_call;   /* where it returns to: ORIG follows a call */
  uint64_t copy;     /* out: where it goes on in the copy; 0 when it cannot */
} breaks_resume;

/* Relocates function I of M, not run yet, for threads already in it (attach)
 * and says where each of them goes on; nothing changes for a function that
 * has run or cannot be relocated (every copy 0). */
lp_status breaks_instrument_running(core_session *s, process *p, pmodule *m, long i, breaks_resume *resume,
                                    size_t nresume);

/* core/adopt.c: moves the frames of P's stopped threads that run in selected
 * functions into copies (attach). */
lp_status adopt_activations(core_session *s, process *p);

lp_status breaks_write(process *p, pmodule *m, unsigned mask, bool restore);
/* An int3 at the entry of function I of M, its original bytes 1..4 back
 * after it where a jmp was (to its stub or its copy), the stub's waiters let
 * go. */
lp_status breaks_put_break(process *p, pmodule *m, long i);
/* May the entry of function I of M become a 5-byte jmp (room, nothing that
 * branches into its bytes 1..4)? */
bool breaks_may_jump(const pmodule *m, long i);
/* Links gcc's parts of FILE's functions that have no name of their own (a
 * stripped module), FILE loaded at BIAS; once per file, before its functions
 * are listed in a counters file (they take their names). */
lp_status breaks_link_unnamed_parts(core_session *s, module_file *file, uint64_t bias);
/* Is a first call all that is asked of function I of M, and may it go on
 * without waiting (no other part, or one watched from the start; not
 * attached)?  Its stub then need not wait for the tracer (stubs_arm). */
bool breaks_marks_at_once(core_session *s, pmodule *m, long i);
/* Before M's stubs are written: for each function whose first call is all
 * that is asked, that has a stub and an other part without one (gcc's
 * NAME.cold), home probes where it may jump into that part, put now, so
 * that its first call need not wait for them (fn_state.part_watched). */
lp_status breaks_watch_parts(core_session *s, process *p, pmodule *m);
/* Function I of M ran, its stub went on: marked so in the counters file
 * alone (its process has ended or is let go: its memory is not written). */
void breaks_mark_in_file(core_session *s, process *p, pmodule *m, long i);
/* Function I of M was asked for through its stub: relocated if it has not
 * run, its entry made to lead elsewhere, its stub's waiters let go. */
lp_status breaks_on_request(core_session *s, process *p, pmodule *m, long i);
lp_status breaks_on_trap(core_session *s, process *p, pid_t tid, struct user_regs_struct *regs, bool *ours);
lp_status breaks_restore_all(process *p);
bool breaks_sweeping(const core_session *s);
lp_status breaks_sweep(core_session *s, process *p);
#define SECOND_MS 100 /* how often hot copies are considered for a second copy */
#define SWEEP_MS 50       /* how often covered probes are removed, while some are */
#define SWEEP_MAX_MS 800  /* at most, after sweeps that found none (breaks_sweep) */
bool breaks_second_copies(const core_session *s);
lp_status breaks_second_pass(core_session *s, process *p);

/* stubs.c */
/* Writes M's stubs into its arena and marks the functions whose entries
 * breaks_write makes jmps to them, if P has stubs; and, for those whose
 * first call is all that is asked (breaks_marks_at_once) and whose first
 * instructions may run elsewhere (x64_displace.h), a copy of those that
 * their stub goes on to without waiting (go_on). */
lp_status stubs_arm(core_session *s, process *p, pmodule *m);
/* The jmp from the entry of function I of M to its stub. */
void stubs_entry(const pmodule *m, long i, uint8_t jmp[5]);
/* The entry of function I of M no longer leads to its stub: its waiters go
 * on to the entry. */
void stubs_release(process *p, pmodule *m, long i);
/* Every entry of P is restored: every waiter goes on. */
void stubs_release_all(process *p);
/* Entries of P that still lead to stubs become int3s (P stopped, one thread),
 * for a process whose bell nobody watches. */
lp_status stubs_disable(process *p);
/* P's bell, in the tracer's mapping of its counters file. */
const volatile uint32_t *stubs_bell(const process *p);
/* Serves the first hits P's stubs ask for. */
lp_status stubs_serve(core_session *s, process *p);
/* Thread TID of P stopped to get a fault signal: if it faulted in the copy
 * of a function's window, it is moved to the same instruction at home (the
 * function marked run and its entry given back first), so that its handler,
 * or the core, sees the program's own address and frame. */
lp_status stubs_fault_home(core_session *s, process *p, pid_t tid);
/* P has ended or is let go: the functions whose first call went on and
 * that the tracer had not come to yet are marked run in its counters file. */
void stubs_settle(core_session *s, process *p);

#endif
