/* launch.h — starting a program under ptrace and stopping it at its entry
 * point, once the dynamic loader has mapped its libraries. */
#ifndef CORE_LAUNCH_H
#define CORE_LAUNCH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lp_status.h"

/* The ptrace options every traced process gets. */
#define CORE_PTRACE_OPTIONS                                                              \
  (PTRACE_O_EXITKILL | PTRACE_O_TRACEEXEC | PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | \
   PTRACE_O_TRACEVFORK)

/* For a process lazyprobe attaches to: it must outlive lazyprobe. */
#define CORE_ATTACH_OPTIONS (CORE_PTRACE_OPTIONS & ~PTRACE_O_EXITKILL)

/* Finds NAME as execvp would (PATH search when it has no slash) and checks
 * that it is an executable regular file.  *path is malloc'd. */
lp_status core_resolve_program(const char *name, char **path);

/* The ELF file the kernel runs for PATH: PATH itself, or, for a script, the
 * interpreter its "#!" line names (that one may be a script too: up to 4
 * levels, as the kernel).  Copied into IMAGE (SIZE bytes). */
lp_status core_program_image(const char *path, char *image, size_t size);

/* Starts a child (vfork, from a helper thread), seizes it (PTRACE_SEIZE
 * with exit-kill) and executes PATH with ARGV,
 * then runs it to AT_ENTRY.  On success the process is stopped with its
 * instruction pointer at the entry, which *entry holds. */
lp_status core_launch(const char *path, char *const argv[], pid_t *pid, uint64_t *entry);

#endif
