/* lp_format.h — lazyprobe.format_rows (lp_format.c), and its engine for the
 * C functions that format rows of their own (lp_source.c). */
#ifndef LP_FORMAT_H
#define LP_FORMAT_H

#include <lauxlib.h>
#include <stdbool.h>
#include <stddef.h>

/* The functions lp_format.c adds to the `lazyprobe` table. */
extern const luaL_Reg lp_format_library[];

#define LP_FORMAT_MAX 16 /* directives in one format */

/* A format: literal texts, each followed by a directive ('d', 'x', 's'; 0
 * after the last text) and its width (0: none; negative: padded on the
 * right). */
typedef struct lp_format {
  struct {
    const char *text;
    size_t len;
    char directive;
    int width;
  } pieces[LP_FORMAT_MAX + 1];
  int npieces, ncols;
  size_t literals; /* bytes of text in a row */
} lp_format;

/* What one directive writes in one row: digits, or a string's bytes. */
typedef struct lp_format_value {
  char digits[48];
  const char *s;
  size_t len;
} lp_format_value;

/* Parses FMT (LEN bytes: format_rows' directives %d %x %s, with widths, and
 * %%) into F, which points into FMT; raises a Lua error, named WHO, on
 * another directive or none at all. */
void lp_format_parse(lua_State *L, const char *who, const char *fmt, size_t len, lp_format *f);

/* V: the integer I for DIRECTIVE (hex for 'x'), or the string S (LEN bytes,
 * kept alive by the caller; for 's' only). */
void lp_format_int(lp_format_value *v, char directive, lua_Integer i);
void lp_format_string(lp_format_value *v, const char *s, size_t len);

/* Appends one row of F to B, V holding its F->ncols values. */
void lp_format_row(luaL_Buffer *b, const lp_format *f, const lp_format_value *v);

#endif
