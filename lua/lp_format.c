/* lp_format.c — lazyprobe.format_rows(format, column, ...): one format applied
 * to every row of some columns, returned as one string.
 *
 * A report writes tens of thousands of lines like "DA:123,4": made one by one
 * with string.format, each line is a Lua string (interned, then collected)
 * and each integer goes through snprintf, which was most of a coverage
 * report's time.  Here each row is written straight into one buffer.
 *
 * Directives: %d (an integer, or a float with an integral value), %x (the
 * same in lowercase hex), %s (a string, or a number as tostring writes it)
 * and %%; each but %% may have a width, padded with spaces on the left
 * (%14d) or, with '-', on the right (%-32s), as string.format pads; no other
 * flags, no precisions.  Directive k reads column k; the rows are 1 ..
 * #column 1, and every column must have them all. */
#include "lp_format.h"

#include <lauxlib.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Splits FMT into literal texts each followed by a directive (the last by
 * none); raises a Lua error on a directive it does not know. */
void lp_format_parse(lua_State *L, const char *who, const char *fmt, size_t len, lp_format *f) {
  int n = 0;
  const char *lit = fmt, *end = fmt + len;
  f->ncols = 0;
  f->literals = 0;
  for (const char *c = fmt; c < end; c++) {
    if (*c != '%') continue;
    char d = c + 1 < end ? c[1] : 0;
    if (n == LP_FORMAT_MAX) luaL_error(L, "%s: more than %d directives", who, LP_FORMAT_MAX);
    if (d == '%') { /* "%%": the literal keeps one '%' and goes on after the other */
      f->pieces[n].text = lit, f->pieces[n].len = (size_t)(c + 1 - lit), f->pieces[n].width = 0;
      f->pieces[n++].directive = 0;
      lit = ++c + 1;
      continue;
    }
    const char *at = c + 1; /* [-]width */
    bool left = at < end && *at == '-';
    int width = 0;
    for (at += left; at < end && *at >= '0' && *at <= '9' && width < 1000; at++) width = width * 10 + (*at - '0');
    d = at < end ? *at : 0;
    if ((d != 'd' && d != 'x' && d != 's') || width >= 1000) {
      char spec[8];
      snprintf(spec, sizeof spec, "%.*s", (int)(at + (at < end) - c), c);
      luaL_error(L, "%s: '%s' is not a directive here (%%d, %%x, %%s, with a width: %%8d, %%-8s; %%%%)", who, spec);
    }
    f->pieces[n].text = lit, f->pieces[n].len = (size_t)(c - lit), f->pieces[n].directive = d;
    f->pieces[n++].width = left ? -width : width;
    f->ncols++;
    c = at;
    lit = c + 1;
  }
  f->pieces[n].text = lit, f->pieces[n].len = (size_t)(end - lit), f->pieces[n].width = 0;
  f->pieces[n++].directive = 0;
  f->npieces = n;
  for (int k = 0; k < n; k++) f->literals += f->pieces[k].len;
  if (f->ncols == 0) luaL_error(L, "%s: the format has no directive to say how many rows", who);
}

/* "00" "01" ... "99": two decimal digits a division. */
static const char pairs[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                            "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                            "8081828384858687888990919293949596979899";

/* V in base 10 or 16, into the end of BUF; returns where it starts. */
static char *digits(char *end, lua_Integer v, bool hex) {
  uint64_t u = v < 0 && !hex ? 0 - (uint64_t)v : (uint64_t)v;
  char *p = end;
  if (hex) {
    do *--p = "0123456789abcdef"[u & 15];
    while (u >>= 4);
    return p;
  }
  for (; u >= 100; u /= 100) {
    p -= 2;
    memcpy(p, pairs + 2 * (u % 100), 2);
  }
  if (u >= 10) {
    p -= 2;
    memcpy(p, pairs + 2 * u, 2);
  } else {
    *--p = (char)('0' + u);
  }
  if (v < 0) *--p = '-';
  return p;
}

void lp_format_int(lp_format_value *v, char directive, lua_Integer i) {
  char *end = v->digits + sizeof v->digits;
  v->s = digits(end, i, directive == 'x');
  v->len = (size_t)(end - v->s);
}

void lp_format_string(lp_format_value *v, const char *s, size_t len) {
  v->s = s;
  v->len = len;
}

/* N bytes of S to P; returns P + N.  A row's pieces and digits are a few
 * bytes each, and a call of memcpy for each was half of a row's time: up to 16
 * bytes go as two fixed-size copies that overlap, read and written within the
 * N bytes. */
static inline char *put(char *p, const char *s, size_t n) {
  if (n >= 8 && n <= 16) {
    memcpy(p, s, 8);
    memcpy(p + n - 8, s + n - 8, 8);
  } else if (n >= 4 && n < 8) {
    memcpy(p, s, 4);
    memcpy(p + n - 4, s + n - 4, 4);
  } else if (n > 0 && n < 4) {
    p[0] = s[0];
    p[n / 2] = s[n / 2];
    p[n - 1] = s[n - 1];
  } else if (n > 16) {
    memcpy(p, s, n);
  }
  return p + n;
}

/* The spaces that pad a value of LEN bytes to WIDTH (negative: on its right). */
static size_t padding(int width, size_t len) {
  size_t w = (size_t)(width < 0 ? -width : width);
  return w > len ? w - len : 0;
}

void lp_format_row(luaL_Buffer *b, const lp_format *f, const lp_format_value *v) {
  size_t need = f->literals;
  for (int k = 0, col = 0; k < f->npieces; k++)
    if (f->pieces[k].directive) need += v[col].len + padding(f->pieces[k].width, v[col].len), col++;
  char *p = luaL_prepbuffsize(b, need);
  for (int k = 0, col = 0; k < f->npieces; k++) {
    p = put(p, f->pieces[k].text, f->pieces[k].len);
    if (f->pieces[k].directive) {
      size_t pad = padding(f->pieces[k].width, v[col].len);
      if (f->pieces[k].width > 0) memset(p, ' ', pad), p += pad;
      p = put(p, v[col].s, v[col].len);
      if (f->pieces[k].width < 0) memset(p, ' ', pad), p += pad;
      col++;
    }
  }
  luaL_addsize(b, need);
}

/* Reads element ROW of the column at stack index COL for directive D. */
static void get(lua_State *L, int col, lua_Integer row, char d, lp_format_value *out) {
  int t = lua_rawgeti(L, col, row);
  int whole = 0; /* an integer to write in digits; %s takes a float as tostring does */
  lua_Integer v = 0;
  if (t == LUA_TNUMBER && (d != 's' || lua_isinteger(L, -1))) v = lua_tointegerx(L, -1, &whole);
  if (whole) {
    lp_format_int(out, d, v);
  } else if (d == 's' && t == LUA_TSTRING) {
    out->s = lua_tolstring(L, -1, &out->len); /* the column keeps it alive */
  } else if (d == 's' && t == LUA_TNUMBER) {
    size_t len;
    const char *s = luaL_tolstring(L, -1, &len);
    out->len = len < sizeof out->digits ? len : sizeof out->digits;
    memcpy(out->digits, s, out->len);
    out->s = out->digits;
    lua_pop(L, 1);
  } else {
    luaL_error(L, "format_rows: column %d, row %d: %s where %%%c wants %s", col - 1, (int)row,
               t == LUA_TNIL ? "no value" : lua_typename(L, t), d, d == 's' ? "a string or a number" : "an integer");
  }
  lua_pop(L, 1);
}

static int l_format_rows(lua_State *L) {
  size_t len;
  const char *fmt = luaL_checklstring(L, 1, &len);
  lp_format f;
  lp_format_parse(L, "format_rows", fmt, len, &f);
  int ncols = f.ncols;
  if (lua_gettop(L) - 1 < ncols) luaL_error(L, "format_rows: %d directives, %d columns given", ncols, lua_gettop(L) - 1);
  for (int c = 2; c <= ncols + 1; c++) luaL_checktype(L, c, LUA_TTABLE);
  lua_settop(L, ncols + 1);
  lua_Integer nrows = (lua_Integer)lua_rawlen(L, 2);
  lp_format_value v[LP_FORMAT_MAX];
  luaL_Buffer b;
  /* b sits on the stack above the columns; a row is read whole, then
   * written with one reservation.  A row's size guessed from its literals
   * and widths (4 bytes a value at least): a buffer grown by half at a time
   * copied gcc -c's 5 MB of coverage-nolines.txt five times over, and the
   * boxes it left were fresh memory */
  size_t row = f.literals;
  for (int k = 0; k < f.npieces; k++)
    if (f.pieces[k].directive) row += padding(f.pieces[k].width, 4) + 4;
  luaL_buffinitsize(L, &b, (size_t)nrows * row);
  for (lua_Integer row = 1; row <= nrows; row++) {
    for (int k = 0, col = 2; k < f.npieces; k++)
      if (f.pieces[k].directive) {
        get(L, col, row, f.pieces[k].directive, &v[col - 2]);
        col++;
      }
    lp_format_row(&b, &f, v);
  }
  luaL_pushresult(&b);
  return 1;
}

const luaL_Reg lp_format_library[] = {{"format_rows", l_format_rows}, {NULL, NULL}};
