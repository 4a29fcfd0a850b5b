/* perfmap.c — queueing the copies' names and appending them to /tmp/perf-PID.map (perfmap.h). */
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
  *m = (core_perfmap){.fd = -1};
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
  size_t need = strlen(name) + 2 * 16 + 4; /* two hex numbers, two spaces, a newline, the NUL */
  if (m->npending + need > m->cappending) {
    size_t cap = m->cappending ? 2 * m->cappending : 4096;
    while (cap < m->npending + need) cap *= 2;
    char *grown = realloc(m->pending, cap);
    if (!grown) return lp_fail("out of memory");
    m->pending = grown;
    m->cappending = cap;
  }
  char *line = m->pending + m->npending;
  int n = snprintf(line, need, "%" PRIx64 " %" PRIx64 " %s\n", start, size, name);
  for (int k = 0; k < n - 1; k++)
    if (line[k] == '\n' || line[k] == '\r') line[k] = ' ';
  m->npending += (size_t)n;
  return LP_OK;
}

lp_status core_perfmap_flush(core_perfmap *m) {
  if (!m->npending || m->fd < 0) return LP_OK;
  ssize_t put = write(m->fd, m->pending, m->npending);
  size_t n = m->npending;
  m->npending = 0;
  if (put != (ssize_t)n) return lp_fail("cannot write the perf map: %s", put < 0 ? strerror(errno) : "short write");
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
  core_perfmap_flush(m);
  if (m->fd >= 0) close(m->fd);
  m->fd = -1;
  free(m->pending);
  m->pending = NULL;
  m->npending = m->cappending = 0;
}
