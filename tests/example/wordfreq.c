/* wordfreq.c — the bundled example: counts the words of its input with a
 * small hash table and prints the ten most frequent.  Enough distinct
 * functions and calls to make a readable lazyprobe report. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUCKETS 1024

typedef struct word {
  char *text;
  int count;
  struct word *next;
} word;

static word *table[BUCKETS];

static unsigned hash(const char *s) {
  unsigned h = 2166136261u;
  while (*s) h = (h ^ (unsigned char)*s++) * 16777619u;
  return h % BUCKETS;
}

static word *lookup(const char *s) {
  unsigned h = hash(s);
  for (word *w = table[h]; w; w = w->next)
    if (strcmp(w->text, s) == 0) return w;
  word *w = calloc(1, sizeof *w);
  w->text = strdup(s);
  w->next = table[h];
  table[h] = w;
  return w;
}

static int read_word(FILE *in, char *buf, size_t size) {
  int c;
  size_t n = 0;
  while ((c = getc(in)) != EOF && !isalpha(c)) continue;
  if (c == EOF) return 0;
  do {
    if (n + 1 < size) buf[n++] = (char)tolower(c);
  } while ((c = getc(in)) != EOF && isalpha(c));
  buf[n] = 0;
  return 1;
}

static int by_count(const void *a, const void *b) {
  const word *x = *(const word *const *)a, *y = *(const word *const *)b;
  if (x->count != y->count) return y->count - x->count;
  return strcmp(x->text, y->text);
}

int main(void) {
  char buf[64];
  size_t n = 0;
  while (read_word(stdin, buf, sizeof buf)) {
    word *w = lookup(buf);
    if (w->count++ == 0) n++;
  }
  word **all = malloc((n ? n : 1) * sizeof *all);
  size_t k = 0;
  for (int i = 0; i < BUCKETS; i++)
    for (word *w = table[i]; w; w = w->next) all[k++] = w;
  qsort(all, n, sizeof *all, by_count);
  for (size_t i = 0; i < n && i < 10; i++) printf("%6d %s\n", all[i]->count, all[i]->text);
  return 0;
}
