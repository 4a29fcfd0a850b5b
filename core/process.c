/* process.c — one process image under lazyprobe: the modules it has loaded
 * (the main program, then the libraries of the loader's list, selected by
 * --include/--exclude), its own counters file, and what is mapped into it for
 * each module: a view of the counters' slots and a code arena for the copies,
 * placed together within reach of the module (remote system calls; less
 * room left for the heap's brk where there is none else).
 *
 * A fork child starts as a copy of its parent's state; its first stop maps a
 * file of its own over every view, at the same addresses, so that the copies
 * it inherited count into its file.  Modules the loader adds later are found
 * at its hook (r_debug.r_brk); those it removes keep their counts.  The
 * copies' unwind information (made, with their GDB objects, only when first
 * needed for functions without an LSDA: process_describe_copies, at an
 * unwind, a signal that dumps core or a detach) is registered with libgcc's
 * unwinder from the first thread that enters _Unwind_Find_FDE while some is
 * pending (the
 * others wait at its break meanwhile; a fork child registers what its
 * memory lacks, its unwinder's lock released if a thread held it at the
 * fork), or at a detach, when the unwinder's lock is free; libgcc_s
 * itself is never instrumented, and a program's own unwinder (linked in)
 * keeps _Unwind_Find_FDE native.  Functions named Builtins_* (V8's) are never
 * instrumented: V8 maps the return addresses in them to its code.  A
 * program built with AddressSanitizer's leak check, which cannot run under
 * ptrace, is said to be so.  GDB's JIT
 * library (core/gdbjit.h) is dlopen'd through the program's libc, and the
 * program's SIGTRAP action is kept as it set it (process_keep_sigtrap_action). */
#include <errno.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rdebug.h"
#include "x64_decode.h"
#include "session_internal.h"

#define HEAP_ROOM (1ull << 30)      /* leave brk() this much room to grow */
#define NON_PIE_LIMIT (1ull << 31)  /* absolute jump tables need sign-extended disp32 */
#define LATER_CODE (16ull << 20)    /* counters room for code of modules loaded later */
#define VIEW_GAP (16 * PAGE)        /* between a view of the counters and its arena */
#define EH_DATA_SIZE (1ull << 20)   /* read-write memory for unwind information, per mapping */

static const uint8_t ret_insn[] = {0xc3};
static const uint8_t endbr_ret_insns[] = {0xf3, 0x0f, 0x1e, 0xfa, 0xc3};

/* {=== module files ===*/

/* NAME in a new string, made absolute against directory DIR when it is
 * relative ("./" prefixes dropped); NULL when out of memory. */
static char *absolute_in(const char *dir, const char *name) {
  if (name[0] == '/') return strdup(name);
  while (name[0] == '.' && name[1] == '/') name += 2;
  char *joined;
  return asprintf(&joined, "%s%s%s", dir, strcmp(dir, "/") ? "/" : "", name) < 0 ? NULL : joined;
}

/* PATH made absolute against our working directory (the program's when it
 * was launched), so that a report made elsewhere finds the file. */
static char *absolute_path(const char *path) {
  char cwd[PATH_MAX];
  return getcwd(cwd, sizeof cwd) ? absolute_in(cwd, path) : strdup(path);
}

static file_identity identity_of(const struct stat *st) {
  return (file_identity){st->st_dev, st->st_ino, st->st_size, st->st_mtim};
}

static bool same_file(const file_identity *a, const file_identity *b) {
  return a->dev == b->dev && a->ino == b->ino && a->size == b->size && a->mtime.tv_sec == b->mtime.tv_sec &&
         a->mtime.tv_nsec == b->mtime.tv_nsec;
}

lp_status module_file_open(core_session *s, const char *path, module_file **out) {
  struct stat st;
  if (stat(path, &st) != 0) return lp_fail("%s: %s", path, strerror(errno));
  file_identity id = identity_of(&st);
  for (module_file *f = s->files; f; f = f->next)
    if (same_file(&f->id, &id)) {
      *out = f;
      return LP_OK;
    }
  module_file *f = calloc(1, sizeof *f);
  if (!f || !(f->path = absolute_path(path))) {
    free(f);
    return lp_fail("out of memory");
  }
  f->id = id;
  f->lines = -1;
  lp_status ok = core_module_open(path, &f->module);
  if (ok == LP_OK) ok = core_image_load(path, &f->image);
  if (ok != LP_OK) {
    if (f->module) core_module_close(f->module);
    free(f->path);
    free(f);
    return LP_ERR;
  }
  f->next = s->files;
  s->files = f;
  *out = f;
  return LP_OK;
}

/* The dlopen and dlsym of libc at PATH, looked up once per file (a test
 * suite starts thousands of processes on one libc). */
static lp_status libc_exports_of(core_session *s, const char *path, const libc_exports **out) {
  struct stat st;
  if (stat(path, &st) != 0) return lp_fail("%s: %s", path, strerror(errno));
  file_identity id = identity_of(&st);
  if (!s->libc.known || !same_file(&s->libc.id, &id)) {
    static const char *const names[] = {"dlopen", "dlsym", NULL};
    uint64_t addrs[2];
    s->libc.known = false;
    LP_CHECK(core_module_exports(path, names, addrs));
    s->libc = (libc_exports){id, addrs[0], addrs[1], true};
  }
  *out = &s->libc;
  return LP_OK;
}

static uint64_t code_size(const core_module *m) {
  uint64_t n = 0;
  for (size_t i = 0; i < m->nexec; i++) n += m->exec[i].size;
  return n;
}

/* }=== */

/* {=== remote system calls ===*/

static lp_status remote(core_session *s, process *p, pid_t tid, uint64_t scratch, long nr, uint64_t a0,
                        uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5, int64_t *ret) {
  const uint64_t args[6] = {a0, a1, a2, a3, a4, a5};
  int deferred = 0;
  LP_CHECK(core_remote_syscall(&p->target, tid, scratch, nr, args, ret, &deferred));
  if (deferred && !s->deferred_sig) {
    s->deferred_sig = deferred;
    s->deferred_tid = tid;
  }
  if (*ret < 0 && *ret > -4096) return lp_fail("system call %ld in the program: %s", nr, strerror((int)-*ret));
  return LP_OK;
}

/* Opens P's counters file in the target; the target must have opened the
 * very file we created, not one swapped in. */
static lp_status open_counters_in_target(core_session *s, process *p, pid_t tid, uint64_t scratch, int64_t *fd) {
  char name[64], path[PATH_MAX + 64];
  shm_counters_name(p->pid, p->image, name, sizeof name);
  char *dir = realpath(s->opt.outdir, NULL);
  if (!dir) return lp_fail("%s: %s", s->opt.outdir, strerror(errno));
  snprintf(path, sizeof path, "%s/%s", dir, name);
  free(dir);
  uint64_t path_addr;
  LP_CHECK(core_push_bytes(&p->target, tid, path, strlen(path) + 1, &path_addr));
  LP_CHECK(remote(s, p, tid, scratch, SYS_open, path_addr, O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0, 0, 0, 0, fd));
  char link[64];
  struct stat mine, theirs;
  snprintf(link, sizeof link, "/proc/%d/fd/%d", (int)p->pid, (int)*fd);
  if (fstat(p->counters.fd, &mine) != 0 || stat(link, &theirs) != 0 || mine.st_dev != theirs.st_dev ||
      mine.st_ino != theirs.st_ino)
    return lp_fail("%s was replaced while the program opened it", path);
  return LP_OK;
}

/* The program's own SIGTRAP is about to be delivered in TID: its action must
 * be the program's.  One of our int3s met while SIGTRAP was blocked (in the
 * program's SIGTRAP handler, which blocks its own signal, say) or ignored
 * made the kernel reset the action to SIG_DFL (force_sig_info_to_task) before
 * we saw the stop; the action seen at the program's last own SIGTRAP is put
 * back then.  A handler installed, then reset by us before its first SIGTRAP,
 * is not known and stays lost. */
lp_status process_keep_sigtrap_action(core_session *s, process *p, pid_t tid) {
  if (!p->ready || !p->scratch) return LP_OK;
  uint64_t action[4] = {0}, at;
  int64_t ret;
  LP_CHECK(core_push_bytes(&p->target, tid, action, sizeof action, &at));
  LP_CHECK(remote(s, p, tid, p->scratch, SYS_rt_sigaction, SIGTRAP, 0, at, 8, 0, 0, &ret));
  LP_CHECK(core_mem_read(&p->target, at, action, sizeof action));
  if (action[0] != (uint64_t)(uintptr_t)SIG_DFL) {
    memcpy(p->sigtrap_action, action, sizeof action);
    p->sigtrap_seen = true;
    return LP_OK;
  }
  if (!p->sigtrap_seen) return LP_OK;
  LP_CHECK(core_push_bytes(&p->target, tid, p->sigtrap_action, sizeof p->sigtrap_action, &at));
  return remote(s, p, tid, p->scratch, SYS_rt_sigaction, SIGTRAP, at, 0, 8, 0, 0, &ret);
}

static lp_status close_in_target(core_session *s, process *p, pid_t tid, uint64_t scratch, int64_t fd) {
  int64_t ignored;
  return remote(s, p, tid, scratch, SYS_close, (uint64_t)fd, 0, 0, 0, 0, 0, &ignored);
}

/* Maps a view of the counters' slots (read-write, shared) and a code arena
 * (read-execute, private, anonymous: nobody but lazyprobe, through ptrace, can
 * write it) into the target within reach of module M. */
static lp_status map_module(core_session *s, process *p, pid_t tid, uint64_t scratch, int64_t fd, pmodule *m) {
  const core_module *mod = m->file->module;
  uint64_t view_size = shm_target_size(&p->counters);
  uint64_t arena_size = ((code_size(mod) * 3 + (1u << 20)) + PAGE - 1) & ~(PAGE - 1);
  shm_range *mapped;
  size_t nmapped;
  uint64_t at;
  lp_status st = LP_ERR;
  /* Less room for brk where a non-PIE executable's first 2 GiB have none
   * left (clang-14 with libLLVM included: 750 MB of slots, its heap anywhere
   * in its first GiB): glibc's malloc maps its memory once brk fails. */
  for (uint64_t room = HEAP_ROOM; st != LP_OK && room >= HEAP_ROOM / 64; room /= 8) {
    LP_CHECK(core_maps_read(p->pid, room, &mapped, &nmapped));
    st = shm_place_near(mapped, nmapped, m->lo, m->hi, view_size + VIEW_GAP + arena_size,
                        mod->is_pie ? UINT64_MAX : NON_PIE_LIMIT, &at);
    free(mapped);
  }
  LP_CHECK(st);
  int64_t ret;
  LP_CHECK(remote(s, p, tid, scratch, SYS_mmap, at, view_size, PROT_READ | PROT_WRITE,
                  MAP_SHARED | MAP_FIXED_NOREPLACE, (uint64_t)fd, shm_target_offset(&p->counters), &ret));
  if ((uint64_t)ret != at) return lp_fail("counters mapped at 0x%" PRIx64 ", not 0x%" PRIx64, ret, at);
  m->slots = at;
  LP_CHECK(remote(s, p, tid, scratch, SYS_madvise, at, view_size, MADV_RANDOM, 0, 0, 0, &ret)); /* no readahead */
  uint64_t arena_at = at + view_size + VIEW_GAP;
  LP_CHECK(remote(s, p, tid, scratch, SYS_mmap, arena_at, arena_size, PROT_READ | PROT_EXEC,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, (uint64_t)-1, 0, &ret));
  if ((uint64_t)ret != arena_at) return lp_fail("code arena mapped at 0x%" PRIx64 ", not 0x%" PRIx64, ret, arena_at);
  m->arena = (shm_arena){arena_at, arena_size, 0};
  return LP_OK;
}

/* }=== */

/* {=== the unwinder: unwind information of the copies ===*/

static uint64_t find_symbol(const module_file *f, const char *name) {
  const core_module *m = f->module;
  for (size_t i = 0; i < m->nfunctions; i++)
    if (!strcmp(m->functions[i].name, name)) return m->functions[i].addr;
  return 0;
}

/* Whether a call to TARGET in MODULE calls pthread_mutex_lock: the function
 * itself (linked in, under one of glibc's names for it) or its PLT stub
 * (`jmp *slot(%rip)`, after an endbr64 in .plt.sec). */
static bool calls_mutex_lock(const core_module *module, uint64_t target) {
  const core_function *fn = core_module_function_at(module, target);
  if (fn && fn->addr == target && strstr(fn->name, "pthread_mutex_lock")) return true;
  size_t avail;
  const uint8_t *code = core_module_code(module, target, &avail);
  x64_insn in = {0};
  for (size_t at = 0; code && at < avail && at < 8;) {
    if (!x64_decode(code + at, avail - at, target + at, &in)) return false;
    if (in.flow != X64_FLOW_NEXT) break;
    at += in.len; /* endbr64 */
  }
  if (in.flow != X64_FLOW_JMP_INDIRECT || !in.rip_relative) return false;
  for (size_t k = 0; k < module->nplt_slots; k++)
    if (module->plt_slots[k].got == in.rip_target && !strcmp(module->plt_slots[k].name, "pthread_mutex_lock"))
      return true;
  return false;
}

/* The lock of libgcc's list of registered objects, up to gcc 12 a pthread
 * mutex: __register_frame_info_bases (at ADDR in MODULE's file) loads its
 * address with `lea m(%rip), %rdi` (48 8d 3d) just before it calls
 * pthread_mutex_lock.  0 when not found (another unwinder; gcc 13's
 * lock-free list, whose structure must not be taken for a mutex: a fork
 * child's lock is written over). */
static uint64_t registry_lock(const core_module *module, uint64_t addr) {
  size_t avail;
  const uint8_t *code = core_module_code(module, addr, &avail);
  if (!code) return 0;
  if (avail > 128) avail = 128;
  uint64_t lea_target = 0;
  for (size_t at = 0; at < avail;) {
    x64_insn in;
    if (!x64_decode(code + at, avail - at, addr + at, &in)) return 0;
    if (in.flow == X64_FLOW_CALL) return lea_target && calls_mutex_lock(module, in.target) ? lea_target : 0;
    if (in.flow != X64_FLOW_NEXT && in.flow != X64_FLOW_JCC) return 0;
    bool lea_rdi = in.len == 7 && in.bytes[0] == 0x48 && in.bytes[1] == 0x8d && in.bytes[2] == 0x3d;
    lea_target = lea_rdi ? in.rip_target : 0;
    at += in.len;
  }
  return 0;
}

/* Looks for libgcc's unwinder in FILE (loaded at BIAS): where it looks up
 * unwind information, and how information is registered with it. */
static void find_unwinder(process *p, const module_file *file, uint64_t bias) {
  if (p->find_fde) return;
  uint64_t find = find_symbol(file, "_Unwind_Find_FDE"), reg = find_symbol(file, "__register_frame_info");
  if (!find || !reg) return;
  uint64_t bases = find_symbol(file, "__register_frame_info_bases");
  uint64_t lock = registry_lock(file->module, bases ? bases : reg);
  p->find_fde = find + bias;
  p->register_fn = reg + bias;
  p->registry_lock = lock ? lock + bias : 0;
}

static bool is_unwinder_library(const char *path) {
  const char *base = strrchr(path, '/');
  return !strncmp(base ? base + 1 : path, "libgcc_s.so", 11);
}

lp_status process_describe_later(process *p, const char *name, uint64_t dest, uint64_t size, uint64_t region,
                                 const reloc_cfi *cfi, const reloc_origin *origins, size_t norigins) {
  if (p->nlater == p->caplater) {
    size_t cap = p->caplater ? 2 * p->caplater : 64;
    later_copy *grown = realloc(p->later, cap * sizeof *grown);
    if (!grown) return lp_fail("out of memory");
    p->later = grown;
    p->caplater = cap;
  }
  later_copy *c = &p->later[p->nlater];
  *c = (later_copy){name, dest, size, region, cfi != NULL, cfi ? *cfi : (reloc_cfi){0}, NULL, 0};
  if (cfi && norigins) {
    if (!(c->origins = malloc(norigins * sizeof *c->origins))) return lp_fail("out of memory");
    memcpy(c->origins, origins, norigins * sizeof *c->origins);
    c->norigins = norigins;
  }
  p->nlater++;
  return LP_OK;
}

lp_status process_describe(process *p, const char *name, uint64_t dest, uint64_t size, uint64_t region,
                           const reloc_unwind *u) {
  core_gdbjit_copy gdb = {name, dest, size, u->eh, u->eh_size};
  if (core_gdbjit_add(&p->gdbjit, &gdb) != LP_OK) p->gdbjit.descriptor = 0; /* full: no more */
  return u->eh && p->unwind ? core_unwind_add(p->unwind, dest, region, u) : LP_OK;
}

void process_describe_copies(process *p) {
  for (size_t k = 0; k < p->nlater; k++) {
    later_copy *c = &p->later[k];
    reloc_unwind u = {0};
    if (c->has_cfi && reloc_unwind_build_later(c->origins, c->norigins, c->size, &c->cfi, c->dest, &u) != LP_OK)
      u = (reloc_unwind){0}; /* none usable from the original's: the copy goes without */
    if (process_describe(p, c->name, c->dest, c->size, c->region, &u) != LP_OK)
      fprintf(stderr, "lazyprobe: process %d: unwind information of %s's copy not kept: %s\n", (int)p->pid,
              c->name, lp_error());
    reloc_unwind_free(&u);
    free(c->origins);
  }
  p->nlater = 0;
  if (core_gdbjit_flush(&p->gdbjit, &p->target) != LP_OK) p->gdbjit.descriptor = 0;
}

/* A break at the unwinder's lookup while registrations are pending (or copies
 * wait to be described): they are made by the first thread that unwinds,
 * before it looks anything up. */
lp_status process_arm_unwinder(process *p) {
  if (!p->find_fde || p->find_fde_armed || !p->unwind || (!core_unwind_pending(p->unwind) && !p->nlater))
    return LP_OK;
  LP_CHECK(core_mem_read(&p->target, p->find_fde, &p->find_fde_byte, 1));
  uint8_t brk = INT3;
  LP_CHECK(core_mem_write(&p->target, p->find_fde, &brk, 1));
  p->find_fde_armed = true;
  return LP_OK;
}

/* Thread TID stopped at the break at _Unwind_Find_FDE (its instruction
 * pointer already back there): the break goes, the pending information is
 * registered from this thread, which holds none of the unwinder's locks. */
/* First hits met by the registration's remote call (core_remote_hooks): the
 * unwinder may be the program's own (libgcc linked in), or call into an
 * instrumented library (libc's pthread_mutex_lock, under --include 'libc*'),
 * and a stub there would wait for the tracer for ever. */
typedef struct serving {
  core_session *s;
  process *p;
} serving;

static lp_status serve_stubs(void *ctx) {
  serving *sv = ctx;
  return stubs_serve(sv->s, sv->p);
}

static lp_status serve_trap(void *ctx, pid_t tid, bool *handled) {
  serving *sv = ctx;
  struct user_regs_struct regs;
  LP_CHECK(core_regs_get(tid, &regs));
  return breaks_on_trap(sv->s, sv->p, tid, &regs, handled);
}

/* The break stays while the registration runs: another thread that starts
 * to unwind meanwhile waits there (taken away first, it found no copy
 * registered yet and ended in std::terminate); it goes once nothing is
 * pending, or the thread meets it again for what the call added. */
static lp_status disarm_when_done(process *p) {
  if (!p->find_fde_armed || core_unwind_pending(p->unwind)) return LP_OK;
  p->find_fde_armed = false;
  return core_mem_write(&p->target, p->find_fde, &p->find_fde_byte, 1);
}

lp_status process_register_unwind(core_session *s, process *p, pid_t tid) {
  process_describe_copies(p);
  size_t need = core_unwind_flush_size(p->unwind);
  if (!need) return disarm_when_done(p);
  if (p->eh_data.size - p->eh_data.used < need) {
    uint64_t size = (need + EH_DATA_SIZE + PAGE - 1) & ~(PAGE - 1);
    int64_t at;
    LP_CHECK(remote(s, p, tid, p->scratch, SYS_mmap, 0, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                    (uint64_t)-1, 0, &at));
    p->eh_data = (shm_arena){(uint64_t)at, size, 0};
  }
  size_t used = 0;
  int deferred = 0;
  serving sv = {s, p};
  const core_remote_hooks hooks = {serve_stubs, serve_trap, &sv};
  lp_status st = core_unwind_flush(p->unwind, &p->target, tid, p->scratch, p->register_fn,
                                   p->eh_data.base + p->eh_data.used, p->eh_data.size - p->eh_data.used, &used,
                                   &deferred, &hooks);
  p->eh_data.used += (used + 15) & ~(size_t)15;
  if (deferred && !s->deferred_sig) {
    s->deferred_sig = deferred;
    s->deferred_tid = tid;
  }
  lp_status disarmed = disarm_when_done(p);
  return st != LP_OK ? st : disarmed;
}

/* At a detach (P's threads all stopped, TID among them): the unwind
 * information still pending is registered, or a throw through those copies
 * after the detach would find no handler.  From an arbitrary stop, so only
 * when the unwinder's lock is free: a thread stopped holding it would never
 * let the registration through.  Quiet when nothing is pending. */
void process_register_at_detach(core_session *s, process *p, pid_t tid) {
  process_describe_copies(p); /* a debugger may come */
  if (!p->find_fde || !p->unwind || !core_unwind_pending(p->unwind)) return;
  uint64_t lock = p->registry_lock;
  int32_t held = 1;
  if (lock && core_mem_read(&p->target, lock, &held, sizeof held) == LP_OK && held == 0) {
    if (process_register_unwind(s, p, tid) == LP_OK) return;
    fprintf(stderr, "lazyprobe: process %d: unwind information not registered at the detach: %s\n", (int)p->pid,
            lp_error());
    return;
  }
  fprintf(stderr,
          "lazyprobe: process %d: the unwind information of %zu copies is not registered at the detach (%s): a C++ "
          "exception thrown through them later ends the program\n",
          (int)p->pid, core_unwind_pending(p->unwind), lock ? "the unwinder was in use" : "unknown unwinder");
}

/* }=== */

/* {=== GDB's JIT interface (core/gdbjit.h) ===*/

#define GDBJIT_REGION (64ull << 20) /* reserved, not committed: ~1 KiB per copy */

static bool is_gdbjit_library(const char *path) {
  const char *base = strrchr(path, '/');
  return !strcmp(base ? base + 1 : path, "liblazyprobe-gdbjit.so");
}

/* Loads the JIT interface's library into P (stopped at its entry in TID, no
 * break written yet: dlopen must not meet one) through LIBC's dlopen, finds
 * its descriptor and reserves the region for the objects. */
static lp_status load_gdbjit(core_session *s, process *p, pid_t tid) {
  if (!p->dlopen_fn || !p->dlsym_fn) return lp_fail("no dlopen in libc.so.6");
  const char *lib = core_gdbjit_library(), sym[] = "__jit_debug_descriptor";
  uint64_t lib_at = p->scratch + 256, sym_at = p->scratch + 256 + strlen(lib) + 1;
  LP_CHECK(core_mem_write(&p->target, lib_at, lib, strlen(lib) + 1));
  LP_CHECK(core_mem_write(&p->target, sym_at, sym, sizeof sym));
  uint64_t handle, descriptor;
  int deferred = 0;
  lp_status st = core_remote_call(&p->target, tid, p->scratch, p->dlopen_fn,
                                  (const uint64_t[6]){lib_at, RTLD_NOW | RTLD_LOCAL}, &handle, &deferred, NULL);
  if (st == LP_OK && !handle) st = lp_fail("dlopen(%s) failed in the program", lib);
  if (st == LP_OK)
    st = core_remote_call(&p->target, tid, p->scratch, p->dlsym_fn, (const uint64_t[6]){handle, sym_at},
                          &descriptor, &deferred, NULL);
  if (st == LP_OK && !descriptor) st = lp_fail("%s: no %s", lib, sym);
  if (deferred && !s->deferred_sig) {
    s->deferred_sig = deferred;
    s->deferred_tid = tid;
  }
  LP_CHECK(st);
  int64_t region;
  LP_CHECK(remote(s, p, tid, p->scratch, SYS_mmap, 0, GDBJIT_REGION, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, (uint64_t)-1, 0, &region));
  p->gdbjit = (core_gdbjit){.descriptor = descriptor, .base = (uint64_t)region, .size = GDBJIT_REGION};
  return LP_OK;
}

lp_status process_load_gdbjit_attached(core_session *s, process *p, pid_t tid) {
  if (!p->libc) return lp_fail("libc is not there, or instrumented (dlopen would meet our breaks)");
  static const char *const allocators[] = {"malloc", "calloc", "realloc", "free", NULL};
  for (size_t k = 0; k < p->nmods; k++) /* the program's own malloc has our breaks too */
    for (const char *const *a = allocators; *a; a++)
      if (find_symbol(p->mods[k].file, *a))
        return lp_fail("%s defines %s (dlopen would meet our breaks)", p->mods[k].file->module->path, *a);
  uint8_t brk = INT3;
  if (p->r_brk) LP_CHECK(core_mem_write(&p->target, p->r_brk, &p->r_brk_byte, 1)); /* dlopen calls it */
  lp_status st = load_gdbjit(s, p, tid);
  if (p->r_brk && core_mem_write(&p->target, p->r_brk, &brk, 1) != LP_OK && st == LP_OK)
    st = lp_fail("the loader's hook could not be armed again");
  return st;
}

/* }=== */

/* {=== modules ===*/

pmodule *process_module_at(process *p, uint64_t addr, long *function) {
  *function = -1;
  for (size_t k = 0; k < p->nmods; k++) {
    pmodule *m = &p->mods[k];
    if (m->unloaded || addr < m->lo || addr >= m->hi) continue;
    const core_module *mod = m->file->module;
    uint64_t link = addr - m->bias;
    size_t lo = 0, hi = mod->nfunctions;
    while (lo < hi) {
      size_t mid = (lo + hi) / 2;
      if (mod->functions[mid].addr < link) lo = mid + 1;
      else hi = mid;
    }
    if (lo < mod->nfunctions && mod->functions[lo].addr == link) *function = (long)lo;
    return m;
  }
  return NULL;
}

/* Lists FILE, loaded at BIAS, in P's counters file and its state, if any of
 * its functions is selected; *added is NULL otherwise. */
static lp_status add_module(core_session *s, process *p, module_file *file, uint64_t bias, uint64_t link_map,
                            pmodule **added) {
  *added = NULL;
  bool is_main = link_map == 0;
  const core_module *mod = file->module;
  if (!core_select_module(&s->opt.select, file->path, is_main) || mod->nfunctions == 0) return LP_OK;
  if (!is_main && is_unwinder_library(file->path)) { /* its copies would unwind through themselves */
    if (!s->unwinder_said)
      fprintf(stderr, "lazyprobe: not instrumented: %s: the unwinder lazyprobe registers the copies' unwind "
                      "information with\n", file->path);
    s->unwinder_said = true;
    return LP_OK;
  }
  LP_CHECK(breaks_link_unnamed_parts(s, file, bias));
  size_t n = mod->nfunctions;
  uint64_t *addr = calloc(n, sizeof *addr), *size = calloc(n, sizeof *size);
  const char **name = calloc(n, sizeof *name);
  uint32_t *binding = calloc(n, sizeof *binding);
  uint8_t *excluded = calloc(n, 1);
  fn_state *fns = calloc(n, sizeof *fns);
  pmodule *grown = realloc(p->mods, (p->nmods + 1) * sizeof *grown);
  if (grown) p->mods = grown;
  lp_status st = addr && size && name && binding && excluded && fns && grown ? LP_OK : lp_fail("out of memory");
  size_t selected = 0, builtins = 0;
  for (size_t i = 0; st == LP_OK && i < n; i++) {
    const core_function *f = &mod->functions[i];
    addr[i] = f->addr;
    size[i] = f->size;
    name[i] = f->name;
    binding[i] = f->binding;
    excluded[i] = !core_select_function(&s->opt.select, file->path, is_main, f->name);
    /* V8's embedded builtins: its garbage collector maps the return addresses on the stack
     * to its own code objects, and one into a copy fails its check (node dies of SIGTRAP) */
    if (!excluded[i] && !strncmp(f->name, "Builtins_", 9)) excluded[i] = 1, builtins++;
    /* _Unwind_Find_FDE linked in: a copy of it would be called past the break where the copies'
     * unwind information is registered (breaks.c, "the unwinder's own functions") */
    bool lookup = f->addr + bias == p->find_fde;
    fns[i].state = excluded[i] ? SHM_EXCLUDED : lookup ? SHM_NATIVE : SHM_NOT_RUN;
    selected += !excluded[i];
  }
  uint32_t first = 0;
  if (st == LP_OK && selected) {
    shm_layout_module lm = {file->path, bias, n, addr, size, name, binding, excluded};
    st = shm_add_module(&p->counters, &lm, &first);
  }
  if (st == LP_OK && selected) {
    pmodule *m = &p->mods[p->nmods++];
    *m = (pmodule){.file = file,
                   .bias = bias,
                   .lo = mod->min_vaddr + bias,
                   .hi = mod->max_vaddr + bias,
                   .link_map = link_map,
                   .index = p->counters.header->nmodules - 1,
                   .first = first,
                   .fns = fns};
    fns = NULL;
    *added = m;
    for (size_t i = 0; i < n; i++)
      if (m->fns[i].state == SHM_NATIVE)
        shm_set_state(&p->counters, first + (uint32_t)i, SHM_NATIVE,
                      "the unwinder's lookup, where lazyprobe registers the copies' unwind information");
    file->images++;
    s->stats.modules++;
    if (builtins && file->images == 1)
      fprintf(stderr, "lazyprobe: %s: %zu functions Builtins_* not instrumented: V8 maps the return addresses "
                      "in them to its own code\n", file->path, builtins);
  }
  free(addr);
  free(size);
  free(name);
  free(binding);
  free(excluded);
  free(fns);
  return st;
}

/* Maps and arms the modules of P from index FROM on (just added). */
static lp_status arm_modules(core_session *s, process *p, pid_t tid, uint64_t scratch, size_t from) {
  if (from == p->nmods) return LP_OK;
  int64_t fd;
  LP_CHECK(open_counters_in_target(s, p, tid, scratch, &fd));
  lp_status st = LP_OK;
  for (size_t k = from; st == LP_OK && k < p->nmods; k++) st = map_module(s, p, tid, scratch, fd, &p->mods[k]);
  lp_status closed = close_in_target(s, p, tid, scratch, fd);
  LP_CHECK(st);
  LP_CHECK(closed);
  for (size_t k = from; k < p->nmods; k++) {
    if (stubs_arm(s, p, &p->mods[k]) != LP_OK)
      fprintf(stderr, "lazyprobe: %s: first hits trap: %s\n", p->mods[k].file->path, lp_error());
    LP_CHECK(breaks_write(p, &p->mods[k], 1u << SHM_NOT_RUN, false));
  }
  return LP_OK;
}

/* A library path as the loader gave it, made absolute against the target's
 * working directory when it is relative. */
static char *library_path(pid_t pid, const char *name) {
  if (name[0] == '/') return strdup(name);
  char link[64], cwd[PATH_MAX];
  snprintf(link, sizeof link, "/proc/%d/cwd", (int)pid);
  ssize_t n = readlink(link, cwd, sizeof cwd - 1);
  if (n < 0) return NULL;
  cwd[n] = '\0';
  return absolute_in(cwd, name);
}

/* Puts a break at the loader's hook, which is a bare return (optionally after
 * endbr64): the thread that hits it is sent back to its caller. */
static lp_status hook_loader(process *p) {
  core_rdebug r;
  LP_CHECK(core_rdebug_read(&p->target, p->r_debug, &r));
  uint8_t code[sizeof endbr_ret_insns];
  LP_CHECK(core_mem_read(&p->target, r.brk, code, sizeof code));
  if (memcmp(code, ret_insn, sizeof ret_insn) && memcmp(code, endbr_ret_insns, sizeof endbr_ret_insns)) {
    fprintf(stderr, "lazyprobe: %d: the loader's hook is not a plain return: libraries loaded later are not seen\n",
            (int)p->pid);
    return LP_OK;
  }
  p->r_brk = r.brk;
  p->r_brk_byte = code[0];
  uint8_t brk = INT3;
  return core_mem_write(&p->target, r.brk, &brk, 1);
}

lp_status process_sync_modules(core_session *s, process *p, pid_t tid) {
  if (!p->r_debug) return LP_OK;
  core_rdebug r;
  LP_CHECK(core_rdebug_read(&p->target, p->r_debug, &r));
  if (r.state != CORE_RT_CONSISTENT) return LP_OK;
  core_loaded *list;
  size_t n;
  LP_CHECK(core_link_map_read(&p->target, r.map, &list, &n));
  for (size_t k = 0; k < p->nmods; k++) { /* gone: its counts stay in the file */
    pmodule *m = &p->mods[k];
    if (!m->link_map || m->unloaded) continue;
    bool present = false;
    for (size_t j = 0; j < n && !present; j++) present = list[j].link_map == m->link_map && list[j].bias == m->bias;
    if (!present) {
      m->unloaded = true;
      shm_modules(&p->counters)[m->index].flags |= SHM_MODULE_UNLOADED;
    }
  }
  size_t from = p->nmods;
  lp_status st = LP_OK;
  for (size_t j = 0; st == LP_OK && j < n; j++) {
    bool known = false;
    for (size_t k = 0; k < p->nmods && !known; k++)
      known = !p->mods[k].unloaded && p->mods[k].link_map == list[j].link_map && p->mods[k].bias == list[j].bias;
    if (known) continue;
    char *path = library_path(p->pid, list[j].path);
    module_file *file;
    if (path && !p->find_fde && is_unwinder_library(path) && module_file_open(s, path, &file) == LP_OK)
      find_unwinder(p, file, list[j].bias);
    if (!path) {
      st = lp_fail("out of memory");
    } else if (!is_gdbjit_library(path) && core_select_module(&s->opt.select, path, false)) {
      pmodule *added;
      if (module_file_open(s, path, &file) == LP_OK) st = add_module(s, p, file, list[j].bias, list[j].link_map, &added);
      else fprintf(stderr, "lazyprobe: not instrumented: %s\n", lp_error());
    }
    free(path);
  }
  core_loaded_free(list, n);
  LP_CHECK(st);
  LP_CHECK(arm_modules(s, p, tid, p->scratch, from));
  return process_arm_unwinder(p);
}

/* }=== */

/* {=== process images ===*/

/* Is M built with AddressSanitizer's leak check: its runtime linked in
 * (clang: functions __lsan_*, __asan_init) or called through the PLT (gcc's
 * libasan)? */
static bool has_leak_sanitizer(const core_module *m) {
  for (size_t i = 0; i < m->nplt_slots; i++)
    if (!strncmp(m->plt_slots[i].name, "__asan_", 7) || !strncmp(m->plt_slots[i].name, "__lsan_", 7)) return true;
  for (size_t i = 0; i < m->nfunctions; i++)
    if (m->functions[i].name &&
        (!strncmp(m->functions[i].name, "__lsan_", 7) || !strcmp(m->functions[i].name, "__asan_init")))
      return true;
  return false;
}

/* Says once that PROGRAM's leak check will fail: LeakSanitizer stops the
 * world with ptrace at exit, which a traced process cannot, and then ends it
 * with status 1.  Not when ASAN_OPTIONS or LSAN_OPTIONS turn it off. */
static void say_leak_sanitizer(core_session *s, const module_file *program) {
  const char *asan = getenv("ASAN_OPTIONS"), *lsan = getenv("LSAN_OPTIONS");
  if (s->lsan_said || (asan && strstr(asan, "detect_leaks=0")) || (lsan && strstr(lsan, "detect_leaks=0")) ||
      !has_leak_sanitizer(program->module))
    return;
  s->lsan_said = true;
  fprintf(stderr, "lazyprobe: %s: built with AddressSanitizer, whose leak check cannot run under ptrace and "
                  "then ends the program with status 1; ASAN_OPTIONS=detect_leaks=0 turns it off\n",
          program->path);
}

/* Sets up P, stopped at its program's entry (P->entry) in thread TID: its
 * counters file, the main program and the libraries loaded so far, the
 * loader's hook.  SCRATCH: executable bytes for remote system calls until the
 * process has a scratch page of its own. */
lp_status process_setup(core_session *s, process *p, pid_t tid, uint64_t scratch) {
  char link[64], exe[PATH_MAX];
  snprintf(link, sizeof link, "/proc/%d/exe", (int)p->pid);
  ssize_t len = readlink(link, exe, sizeof exe - 1);
  if (len < 0) return lp_fail("%s: %s", link, strerror(errno));
  exe[len] = '\0';
  module_file *program;
  LP_CHECK(module_file_open(s, exe, &program));
  say_leak_sanitizer(s, program);
  uint64_t bias = p->entry - program->module->entry;

  core_loaded *libs = NULL;
  size_t nlibs = 0;
  if (program->module->dynamic) {
    LP_CHECK(core_rdebug_find(&p->target, program->module->dynamic + bias, &p->r_debug));
    core_rdebug r;
    if (p->r_debug && core_rdebug_read(&p->target, p->r_debug, &r) == LP_OK)
      LP_CHECK(core_link_map_read(&p->target, r.map, &libs, &nlibs));
  }
  module_file **files = calloc(nlibs + 1, sizeof *files);
  lp_status st = files ? LP_OK : lp_fail("out of memory");
  uint64_t code = LATER_CODE + code_size(program->module);
  const libc_exports *libc = NULL; /* when libc is not instrumented: dlopen must not meet our breaks in malloc */
  uint64_t libc_bias = 0;
  for (size_t j = 0; st == LP_OK && j < nlibs; j++) {
    char *path = library_path(p->pid, libs[j].path);
    module_file *unwinder;
    const char *base = path ? strrchr(path, '/') : NULL;
    if (base && !strcmp(base, "/libc.so.6") && !core_select_module(&s->opt.select, path, false) &&
        libc_exports_of(s, path, &libc) == LP_OK)
      libc_bias = libs[j].bias;
    if (!path) st = lp_fail("out of memory");
    else if (core_select_module(&s->opt.select, path, false) && module_file_open(s, path, &files[j]) != LP_OK)
      fprintf(stderr, "lazyprobe: not instrumented: %s\n", lp_error());
    if (path && is_unwinder_library(path) && module_file_open(s, path, &unwinder) == LP_OK)
      find_unwinder(p, unwinder, libs[j].bias);
    if (files[j]) code += code_size(files[j]->module);
    free(path);
  }
  shm_identity who = {p->pid, p->ppid, p->image, exe};
  if (st == LP_OK) st = shm_counters_create(s->opt.outdir_fd, s->opt.outdir, &who, code, s->opt.probes, &p->counters);
  pmodule *added;
  find_unwinder(p, program, bias); /* libgcc linked in statically */
  if (st == LP_OK) st = core_unwind_new(&p->unwind);
  if (st == LP_OK) st = core_perfmap_open(p->pid, NULL, &p->perfmap);
  if (st == LP_OK) st = add_module(s, p, program, bias, 0, &added);
  for (size_t j = 0; st == LP_OK && j < nlibs; j++)
    if (files[j]) st = add_module(s, p, files[j], libs[j].bias, libs[j].link_map, &added);
  free(files);
  core_loaded_free(libs, nlibs);
  LP_CHECK(st);

  int64_t page;
  LP_CHECK(remote(s, p, tid, scratch, SYS_mmap, 0, PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
                  (uint64_t)-1, 0, &page));
  p->scratch = (uint64_t)page;
  p->libc = libc != NULL;
  p->dlopen_fn = libc && libc->dlopen ? libc->dlopen + libc_bias : 0;
  p->dlsym_fn = libc && libc->dlsym ? libc->dlsym + libc_bias : 0;
  /* Stubs only where no thread may be inside a function's first bytes: a
   * launched image, one thread, at its entry. */
  p->stubs = s->stubs && p->refs == 1;
  p->bell_slot = SHM_NONE;
  if (p->libc && !s->opt.attach && load_gdbjit(s, p, tid) != LP_OK)
    fprintf(stderr, "lazyprobe: process %d: gdb will not see the copies: %s\n", (int)p->pid, lp_error());
  LP_CHECK(arm_modules(s, p, tid, p->scratch, 0));
  if (p->r_debug) LP_CHECK(hook_loader(p));
  s->stats.processes++;
  return LP_OK;
}

/* A fork child's unwinder (P, not run yet), as its memory has it: the room
 * for registered information exists if its parent had it at the fork, the
 * break at its lookup is there if its parent's was armed at the fork (the
 * parent may have disarmed it since), what its memory has not registered of
 * FROM's (its parent's registry) it registers when it first unwinds, and its
 * lock, taken by every lookup once objects are registered (a program that
 * registers none takes none), is released if a thread of the parent held it
 * at the fork: the child has no such thread, and its first throw would wait
 * for ever.  Fails only when out of memory (a target that does not answer
 * leaves the state its parent had, and one line says so). */
static lp_status child_unwinder(process *p, const core_unwind *from) {
  int32_t held = 0;
  uint8_t byte;
  if (p->eh_data.size && core_mem_read(&p->target, p->eh_data.base, &byte, 1) != LP_OK)
    p->eh_data = (shm_arena){0, 0, 0}; /* its parent mapped it after the fork */
  if (p->registry_lock && core_mem_read(&p->target, p->registry_lock, &held, sizeof held) != LP_OK) held = 1;
  LP_CHECK(from ? core_unwind_fork(from, &p->target, held != 0, &p->unwind) : core_unwind_new(&p->unwind));
  if (!p->find_fde) return LP_OK;
  static const uint8_t unlocked[sizeof(pthread_mutex_t)]; /* PTHREAD_MUTEX_INITIALIZER */
  lp_status st = core_mem_read(&p->target, p->find_fde, &byte, 1);
  if (st == LP_OK) p->find_fde_armed = byte == INT3; /* find_fde_byte is the parent's, set when it armed */
  if (st == LP_OK && held) st = core_mem_write(&p->target, p->registry_lock, unlocked, sizeof unlocked);
  if (st == LP_OK) st = process_arm_unwinder(p); /* for what it must register again */
  if (st != LP_OK) fprintf(stderr, "lazyprobe: process %d: its unwinder not set up: %s\n", (int)p->pid, lp_error());
  return LP_OK;
}

lp_status process_fork(core_session *s, const process *parent, pid_t pid, process **out) {
  process *p = calloc(1, sizeof *p);
  if (!p) return lp_fail("out of memory");
  *p = *parent;
  p->pid = pid;
  p->ppid = parent->pid;
  p->refs = 0;
  p->image = 1;
  p->remap = true;
  p->watched = false; /* its own bell, once its file is mapped */
  p->threaded = false; /* the forking thread alone */
  p->target.mem_fd = -1;
  p->counters.fd = -1;
  p->counters.base = NULL;
  p->unwind = NULL;
  p->perfmap = (core_perfmap){.fd = -1};
  p->gdbjit.staged = NULL; /* nothing is staged between stops */
  p->gdbjit.nstaged = p->gdbjit.capstaged = 0;
  p->mods = calloc(parent->nmods + 1, sizeof *p->mods);
  p->later = malloc((parent->nlater + 1) * sizeof *p->later);
  p->caplater = parent->nlater + 1;
  p->nlater = 0;
  for (size_t k = 0; p->later && k < parent->nlater; k++) { /* its memory has the same copies */
    const later_copy *c = &parent->later[k];
    if (process_describe_later(p, c->name, c->dest, c->size, c->region, c->has_cfi ? &c->cfi : NULL, c->origins,
                               c->norigins) != LP_OK)
      break;
  }
  p->pending = malloc((parent->npending + 1) * sizeof *p->pending);
  p->pending_slots = malloc((parent->npending + 1) * sizeof *p->pending_slots);
  p->removed = malloc((parent->nremoved + 1) * sizeof *p->removed);
  p->redirects = malloc((parent->nredirects + 1) * sizeof *p->redirects);
  p->homes = malloc((parent->nhomes + 1) * sizeof *p->homes); /* its memory has the same int3s */
  p->caphomes = parent->nhomes + 1;
  p->side_jumps = malloc((parent->nside_jumps + 1) * sizeof *p->side_jumps); /* and the same jmps */
  p->capside_jumps = parent->nside_jumps + 1;
  p->capredirects = parent->nredirects + 1;
  p->nmods = 0;
  lp_status st = p->mods && p->later && p->nlater == parent->nlater && p->pending && p->pending_slots && p->removed &&
                         p->redirects && p->homes && p->side_jumps
                     ? LP_OK
                     : lp_fail("out of memory");
  if (p->side_jumps) memcpy(p->side_jumps, parent->side_jumps, parent->nside_jumps * sizeof *p->side_jumps);
  if (p->redirects) memcpy(p->redirects, parent->redirects, parent->nredirects * sizeof *p->redirects);
  if (p->homes) memcpy(p->homes, parent->homes, parent->nhomes * sizeof *p->homes);
  for (size_t k = 0; st == LP_OK && k < parent->nmods; k++) {
    const pmodule *from = &parent->mods[k];
    size_t n = from->file->module->nfunctions;
    p->mods[k] = *from;
    if (!(p->mods[k].fns = malloc(n * sizeof *from->fns))) {
      st = lp_fail("out of memory");
      break;
    }
    memcpy(p->mods[k].fns, from->fns, n * sizeof *from->fns);
    for (size_t i = 0; i < n; i++) p->mods[k].fns[i].kept = NULL; /* the parent's */
    p->nmods++;
  }
  if (st == LP_OK) {
    memcpy(p->pending, parent->pending, parent->npending * sizeof *p->pending);
    memcpy(p->pending_slots, parent->pending_slots, parent->npending * sizeof *p->pending_slots);
    memcpy(p->removed, parent->removed, parent->nremoved * sizeof *p->removed);
    p->cappending = parent->npending + 1;
    st = core_target_open(pid, &p->target);
  }
  if (st == LP_OK) st = shm_counters_fork(&parent->counters, s->opt.outdir_fd, s->opt.outdir, pid, &p->counters);
  if (st == LP_OK) st = child_unwinder(p, parent->unwind);
  if (st == LP_OK) st = core_perfmap_open(pid, NULL, &p->perfmap);
  if (st == LP_OK) st = core_perfmap_inherit(&p->perfmap, parent->pid, NULL);
  if (st != LP_OK) {
    process_free(p);
    return LP_ERR;
  }
  s->stats.processes++;
  *out = p;
  return LP_OK;
}

lp_status process_remap(core_session *s, process *p, pid_t tid) {
  p->remap = false;
  int64_t fd, ret;
  LP_CHECK(open_counters_in_target(s, p, tid, p->scratch, &fd));
  lp_status st = LP_OK;
  for (size_t k = 0; st == LP_OK && k < p->nmods; k++) {
    st = remote(s, p, tid, p->scratch, SYS_mmap, p->mods[k].slots, shm_target_size(&p->counters),
                PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, (uint64_t)fd, shm_target_offset(&p->counters), &ret);
    if (st == LP_OK && (uint64_t)ret != p->mods[k].slots) st = lp_fail("counters moved in process %d", (int)p->pid);
    if (st == LP_OK)
      st = remote(s, p, tid, p->scratch, SYS_madvise, p->mods[k].slots, shm_target_size(&p->counters), MADV_RANDOM,
                  0, 0, 0, &ret);
  }
  lp_status closed = close_in_target(s, p, tid, p->scratch, fd);
  LP_CHECK(st);
  return closed;
}

void process_free(process *p) {
  if (!p) return;
  core_target_close(&p->target);
  shm_counters_close(&p->counters);
  if (p->unwind) core_unwind_free(p->unwind);
  core_perfmap_close(&p->perfmap);
  for (size_t k = 0; k < p->nmods; k++) {
    for (size_t i = 0; p->mods[k].fns && i < p->mods[k].file->module->nfunctions; i++)
      if (p->mods[k].fns[i].kept) {
        reloc_plan_free(p->mods[k].fns[i].kept->plan);
        free(p->mods[k].fns[i].kept);
      }
    free(p->mods[k].fns);
  }
  free(p->mods);
  for (size_t k = 0; k < p->nlater; k++) free(p->later[k].origins);
  free(p->later);
  free(p->pending);
  free(p->pending_slots);
  free(p->removed);
  free(p->redirects);
  free(p->homes);
  free(p->side_jumps);
  core_gdbjit_free(&p->gdbjit);
  free(p);
}

/* }=== */
