/* perfmap.h — /tmp/perf-PID.map, where perf report finds names for code it
 * has no file for (the copies): one `START SIZE name` line per copy, START
 * and SIZE in hex without 0x (perf's map file convention).  Lines are queued
 * and written once per stop (core_perfmap_flush), before the copies run.
 *
 * The file is created owner-only and never through a symbolic link.  An
 * existing one is appended to (the target may write its own, as JITs do)
 * when it is a regular file of ours with one link; anything else is refused
 * (perf itself reads only files owned by the user running it). */
#ifndef CORE_PERFMAP_H
#define CORE_PERFMAP_H

#include <stdint.h>
#include <sys/types.h>

#include "lp_status.h"

typedef struct core_perfmap {
  int fd;        /* -1 when closed */
  char *pending; /* lines not written yet (malloc'd) */
  size_t npending, cappending;
} core_perfmap;

/* Opens /tmp/perf-PID.map for appending (DIR instead of /tmp when not NULL,
 * for tests). */
lp_status core_perfmap_open(pid_t pid, const char *dir, core_perfmap *m);

/* Queues one line naming [START, START + SIZE); line breaks in NAME become
 * spaces.  Written by core_perfmap_flush (and at close). */
lp_status core_perfmap_add(core_perfmap *m, uint64_t start, uint64_t size, const char *name);

/* Writes the queued lines: one write (O_APPEND). */
lp_status core_perfmap_flush(core_perfmap *m);

/* Appends the lines of the map of PARENT (a fork child has its parent's
 * copies at the same addresses); none when the parent has no map. */
lp_status core_perfmap_inherit(core_perfmap *m, pid_t parent, const char *dir);

/* Flushes and closes. */
void core_perfmap_close(core_perfmap *m);

#endif
