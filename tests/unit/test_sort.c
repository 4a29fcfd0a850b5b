/* test_sort.c — LP_MERGE_SORT (core/lp_sort.h) against an oracle: the same
 * elements sorted by insertion, which is stable by construction.
 *
 * Elements are (key, position) pairs compared by key alone, so that every
 * position check also checks stability.  Inputs: empty, one element, sizes
 * around the insertion runs (15, 16, 17) and the merge widths, sorted,
 * reversed, all equal, sorted with a few elements moved (the nearly sorted
 * input the early stop is for), sorted runs concatenated, and random keys
 * from a small range (many ties) and a large one.  No arguments; exit status
 * 0 when all pass. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "lp_sort.h"
#include "unit.h"

typedef struct item {
  uint32_t key, pos;
} item;

static bool key_before(const item *a, const item *b) { return a->key < b->key; }
LP_MERGE_SORT(sort_items, item, key_before)

/* The oracle: a stable insertion sort. */
static void insertion(item *v, size_t n) {
  for (size_t i = 1; i < n; i++) {
    item x = v[i];
    size_t j = i;
    for (; j > 0 && v[j - 1].key > x.key; j--) v[j] = v[j - 1];
    v[j] = x;
  }
}

static uint64_t state = 0x9e3779b97f4a7c15ull;
static uint32_t next_random(void) { /* xorshift64* */
  state ^= state >> 12, state ^= state << 25, state ^= state >> 27;
  return (uint32_t)((state * 0x2545f4914f6cdd1dull) >> 32);
}

enum shape { RANDOM_FEW, RANDOM_MANY, SORTED, REVERSED, EQUAL, NEARLY, RUNS, NSHAPES };
static const char *const shape_names[] = {"random, many ties", "random", "sorted", "reversed",
                                          "all equal", "nearly sorted", "sorted runs"};

static uint32_t key_for(enum shape s, size_t i, size_t n) {
  switch (s) {
  case RANDOM_FEW: return next_random() % 8;
  case RANDOM_MANY: return next_random();
  case SORTED: return (uint32_t)i;
  case REVERSED: return (uint32_t)(n - i);
  case EQUAL: return 7;
  case NEARLY: return next_random() % 50 == 0 ? next_random() % (uint32_t)(n + 1) : (uint32_t)i;
  case RUNS: return (uint32_t)(i % 37);
  default: return 0;
  }
}

static void check_one(enum shape s, size_t n) {
  char *name = fmt("%s, %zu elements", shape_names[s], n);
  item *v = malloc((n + 1) * sizeof *v), *want = malloc((n + 1) * sizeof *want), *tmp = malloc((n + 1) * sizeof *tmp);
  if (!v || !want || !tmp) abort();
  for (size_t i = 0; i < n; i++) v[i] = want[i] = (item){key_for(s, i, n), (uint32_t)i};
  insertion(want, n);
  sort_items(v, tmp, n);
  size_t bad = n;
  for (size_t i = 0; i < n && bad == n; i++)
    if (v[i].key != want[i].key || v[i].pos != want[i].pos) bad = i;
  CHECK(bad == n, "element %zu is (%u, %u), the stable order has (%u, %u)", bad, bad < n ? v[bad].key : 0,
        bad < n ? v[bad].pos : 0, bad < n ? want[bad].key : 0, bad < n ? want[bad].pos : 0);
  free(v);
  free(want);
  free(tmp);
  free(name);
}

int main(void) {
  static const size_t sizes[] = {0, 1, 2, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 1000, 4096, 10007};
  for (int s = 0; s < NSHAPES; s++)
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) check_one((enum shape)s, sizes[k]);
  printf("test_sort: %d checks, %d failures\n", checks, failures);
  return failures ? 1 : 0;
}
