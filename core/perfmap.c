/* perfmap.c — appending the copies' names to /tmp/perf-PID.map (perfmap.h). */
#include "perfmap.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

lp_status core_perfmap_open(pid_t pid, const char *dir, core_perfmap *m) {
  char path[4096];
  snprintf(path, sizeof path, "%s/perf-%d.map", dir ? dir : "/tmp", (int)pid);
  m->fd = -1;
  int flags = O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC;
  int fd = open(path, flags | O_CREAT | O_EXCL, 0600);
  if (fd < 0 && errno == EEXIST) fd = open(path, flags); /* O_NOFOLLOW: a link fails with ELOOP */
  if (fd < 0) return lp_fail("cannot create %s: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || st.st_nlink != 1) {
    close(fd);
    return lp_fail("%s exists and is not a regular file of ours: not written", path);
  }
  m->fd = fd;
  return LP_OK;
}

lp_status core_perfmap_add(core_perfmap *m, uint64_t start, uint64_t size, const char *name) {
  char *line = NULL;
  int n = asprintf(&line, "%" PRIx64 " %" PRIx64 " %s\n", start, size, name);
  if (n < 0) return lp_fail("out of memory");
  for (int k = 0; k < n - 1; k++)
    if (line[k] == '\n' || line[k] == '\r') line[k] = ' ';
  ssize_t put = write(m->fd, line, (size_t)n);
  free(line);
  if (put != n) return lp_fail("cannot write the perf map: %s", put < 0 ? strerror(errno) : "short write");
  return LP_OK;
}

lp_status core_perfmap_inherit(core_perfmap *m, pid_t parent, const char *dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/perf-%d.map", dir ? dir : "/tmp", (int)parent);
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT ? LP_OK : lp_fail("cannot read %s: %s", path, strerror(errno));
  char buf[65536];
  ssize_t n;
  lp_status st = LP_OK;
  while (st == LP_OK && (n = read(fd, buf, sizeof buf)) > 0)
    if (write(m->fd, buf, (size_t)n) != n) st = lp_fail("cannot write the perf map: %s", strerror(errno));
  close(fd);
  return st;
}

void core_perfmap_close(core_perfmap *m) {
  if (m->fd >= 0) close(m->fd);
  m->fd = -1;
}
