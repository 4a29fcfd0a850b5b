/* lp_sort.h — a stable merge sort made for one element type, its comparison
 * inline.
 *
 * qsort calls its comparison through a pointer and moves elements with
 * memcpy: on the tracer's and the reports' hot sorts (spanning trees, a
 * module's symbols and FDEs, source lines, blocks by address, edges by block)
 * that overhead was several times the work.
 * LP_MERGE_SORT(name, type, before) defines
 *
 *     static void name(type *v, type *tmp, size_t n)
 *
 * which sorts V[0..N) in place, TMP being room for N more, so that an
 * element X comes before Y when before(&X, &Y); equal elements keep their
 * order.  BEFORE is a function or macro taking two `const type *`.  Runs of
 * 16 are sorted by insertion first; two runs already in order are only
 * copied, and merging stops once every run is in order: input that comes
 * nearly sorted costs about one pass. */
#ifndef LP_SORT_H
#define LP_SORT_H

#include <stddef.h>
#include <string.h>

#define LP_MERGE_SORT(name, type, before)                                      \
  static void name(type *v, type *tmp, size_t n) {                             \
    enum { RUN = 16 };                                                         \
    for (size_t lo = 0; lo < n; lo += RUN) {                                   \
      size_t hi = lo + RUN < n ? lo + RUN : n;                                 \
      for (size_t i = lo + 1; i < hi; i++) {                                   \
        type x = v[i];                                                         \
        size_t j = i;                                                          \
        for (; j > lo && before(&x, &v[j - 1]); j--)                           \
          v[j] = v[j - 1];                                                     \
        v[j] = x;                                                              \
      }                                                                        \
    }                                                                          \
    type *from = v, *to = tmp;                                                 \
    for (size_t width = RUN; width < n; width *= 2) {                          \
      size_t at = width; /* every run in order after the one before: sorted */ \
      while (at < n && !before(&from[at], &from[at - 1]))                      \
        at += width;                                                           \
      if (at >= n)                                                             \
        break;                                                                 \
      for (size_t lo = 0; lo < n; lo += 2 * width) {                           \
        size_t mid = lo + width < n ? lo + width : n,                          \
               hi = lo + 2 * width < n ? lo + 2 * width : n;                   \
        size_t a = lo, b = mid, k = lo;                                        \
        if (mid == hi ||                                                       \
            !before(&from[mid], &from[mid - 1])) { /* already in order */      \
          memcpy(to + lo, from + lo, (hi - lo) * sizeof *to);                  \
          continue;                                                            \
        }                                                                      \
        while (a < mid && b < hi)                                              \
          to[k++] = before(&from[b], &from[a]) ? from[b++] : from[a++];        \
        while (a < mid)                                                        \
          to[k++] = from[a++];                                                 \
        while (b < hi)                                                         \
          to[k++] = from[b++];                                                 \
      }                                                                        \
      type *t = from;                                                          \
      from = to;                                                               \
      to = t;                                                                  \
    }                                                                          \
    if (from != v)                                                             \
      memcpy(v, from, n * sizeof *v);                                          \
  }

#endif
