/* test_counters.c — shm/counters.c's writing of a file, read back through its
 * mapping: a module of 20 000 functions added (its entries and names written
 * by pwrite, not through the mapping) has every address, size, name and
 * state as given; one note set on every function (as "its first call went
 * on without waiting" is) takes the notes area once, and each function reads
 * it back; a different note after it is stored as its own.  No arguments;
 * exit status 0 when all pass. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "counters.h"
#include "unit.h"

#define NFN 20000

int main(void) {
  const char *name = "counters";
  char dir[] = "/tmp/lp-test-counters-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  int dirfd = open(dir, O_RDONLY | O_DIRECTORY);
  shm_identity who = {getpid(), getppid(), 1, "/bin/test"};
  shm_counters c;
  CHECK(shm_counters_create(dirfd, dir, &who, 64u << 20, 0, &c) == LP_OK, "create: %s", lp_error());
  static uint64_t addr[NFN], size[NFN];
  static char names[NFN][16];
  static const char *name_of[NFN];
  for (int i = 0; i < NFN; i++) {
    addr[i] = 0x401000 + 16 * (uint64_t)i;
    size[i] = 16;
    snprintf(names[i], sizeof names[i], "fn_%x", 0x401000 + 16 * i);
    name_of[i] = names[i];
  }
  shm_layout_module m = {"/bin/test", 0, NFN, addr, size, name_of, NULL, NULL};
  uint32_t first = 0;
  CHECK(shm_add_module(&c, &m, &first) == LP_OK, "add: %s", lp_error());
  const shm_function *fns = shm_functions(&c);
  int bad = 0;
  for (int i = 0; i < NFN && c.header; i++)
    bad += fns[first + i].addr != addr[i] || fns[first + i].size != size[i] ||
           strcmp(shm_string(&c, fns[first + i].name), names[i]) || fns[first + i].state != SHM_NOT_RUN;
  CHECK(c.header && c.header->nfunctions == first + NFN && bad == 0, "%d functions read back wrong", bad);

  const char *went_on = "its first call went on without waiting";
  uint64_t before = c.header->notes_used;
  for (int i = 0; i < NFN; i++) shm_set_state(&c, first + (uint32_t)i, SHM_MARKED, went_on);
  CHECK(c.header->notes_used - before == strlen(went_on) + 1, "one note on %d functions took %llu bytes", NFN,
        (unsigned long long)(c.header->notes_used - before));
  bad = 0;
  for (int i = 0; i < NFN; i++) bad += strcmp(shm_note(&c, &fns[first + i]), went_on) != 0;
  CHECK(bad == 0, "%d functions without their note", bad);
  shm_set_state(&c, first, SHM_NATIVE, "another reason");
  CHECK(!strcmp(shm_note(&c, &fns[first]), "another reason") && !strcmp(shm_note(&c, &fns[first + 1]), went_on),
        "a second note: %s / %s", shm_note(&c, &fns[first]), shm_note(&c, &fns[first + 1]));

  shm_counters_close(&c);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0) return 1;
  close(dirfd);
  printf("%s: %d checks, %d failures\n", name, checks, failures);
  return failures != 0;
}
