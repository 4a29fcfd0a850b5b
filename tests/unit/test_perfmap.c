/* test_perfmap.c — core/perfmap.c: the lines read back as perf parses them
 * (sscanf "%lx %lx %s", the rest of the line the name), the file owner-only,
 * appended to when reopened, a symbolic link or a non-regular file refused
 * without touching what it points to.  Works in a temporary directory.  No
 * arguments; exit status 0 when all pass. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perfmap.h"
#include "unit.h"

int main(void) {
  const char *name = "perfmap";
  char dir[] = "/tmp/test_perfmap.XXXXXX";
  if (!mkdtemp(dir)) return 1;
  core_perfmap m;
  CHECK(core_perfmap_open(4242, dir, &m) == LP_OK, "open: %s", lp_error());
  CHECK(core_perfmap_add(&m, 0x7f0000001000ull, 0x1a0, "main [lazyprobe copy]") == LP_OK, "add: %s", lp_error());
  CHECK(core_perfmap_add(&m, 0x7f00000011a0ull, 0x20, "odd\nname") == LP_OK, "add: %s", lp_error());
  core_perfmap_close(&m);
  CHECK(core_perfmap_open(4242, dir, &m) == LP_OK, "reopen: %s", lp_error());
  CHECK(core_perfmap_add(&m, 0x10, 0x8, "third") == LP_OK, "add: %s", lp_error());
  core_perfmap_close(&m);

  char *path = fmt("%s/perf-4242.map", dir);
  struct stat st;
  CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600, "mode %o", st.st_mode & 0777);
  FILE *f = fopen(path, "r");
  static const struct {
    uint64_t start, size;
    const char *name;
  } want[] = {{0x7f0000001000ull, 0x1a0, "main [lazyprobe copy]"}, {0x7f00000011a0ull, 0x20, "odd name"},
              {0x10, 0x8, "third"}};
  char line[256];
  size_t n = 0;
  while (f && fgets(line, sizeof line, f)) {
    unsigned long long start, size;
    int used = 0;
    bool ok = sscanf(line, "%llx %llx %n", &start, &size, &used) == 2 && n < 3; /* perf's parse */
    line[strcspn(line, "\n")] = 0;
    CHECK(ok && start == want[n].start && size == want[n].size && !strcmp(line + used, want[n].name),
          "line %zu: %s", n, line);
    n++;
  }
  if (f) fclose(f);
  CHECK(n == 3, "%zu lines", n);

  char *target = fmt("%s/elsewhere", dir), *link = fmt("%s/perf-4243.map", dir);
  CHECK(symlink(target, link) == 0, "symlink");
  CHECK(core_perfmap_open(4243, dir, &m) != LP_OK && access(target, F_OK) != 0,
        "a symbolic link was followed");
  char *sub = fmt("%s/perf-4244.map", dir);
  CHECK(mkdir(sub, 0700) == 0 && core_perfmap_open(4244, dir, &m) != LP_OK, "a directory was accepted");

  char *rm = fmt("rm -rf '%s'", dir);
  if (system(rm) != 0) printf("test_perfmap: could not remove %s\n", dir);
  free(rm), free(sub), free(link), free(target), free(path);
  if (failures) {
    printf("test_perfmap: %d of %d checks failed\n", failures, checks);
    return 1;
  }
  printf("test_perfmap: all %d checks passed\n", checks);
  return 0;
}
