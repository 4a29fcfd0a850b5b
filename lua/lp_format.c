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
 * and %%; no flags, widths or precisions.  Directive k reads column k; the
 * rows are 1 .. #column 1, and every column must have them all. */
#include "lp_format.h"

#include <lauxlib.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define MAX_DIRECTIVES 16

typedef struct piece {
  const char *text; /* the literal text before the directive */
  size_t len;
  char directive; /* 'd', 'x', 's', or 0 after the last literal */
} piece;

/* Splits FMT into literal texts each followed by a directive (the last by
 * none); raises a Lua error on a directive it does not know. */
static int parse(lua_State *L, const char *fmt, size_t len, piece *out) {
  int n = 0;
  const char *lit = fmt, *end = fmt + len;
  for (const char *c = fmt; c < end; c++) {
    if (*c != '%') continue;
    char d = c + 1 < end ? c[1] : 0;
    if (d == '%') { /* "%%": the literal keeps one '%' and goes on after the other */
      if (n == MAX_DIRECTIVES) luaL_error(L, "format_rows: more than %d directives", MAX_DIRECTIVES);
      out[n++] = (piece){lit, (size_t)(c + 1 - lit), 0};
      lit = ++c + 1;
      continue;
    }
    if (d != 'd' && d != 'x' && d != 's')
      luaL_error(L, "format_rows: '%%%c' is not a directive here (%%d, %%x, %%s, %%%%)", d ? d : ' ');
    if (n == MAX_DIRECTIVES) luaL_error(L, "format_rows: more than %d directives", MAX_DIRECTIVES);
    out[n++] = (piece){lit, (size_t)(c - lit), d};
    lit = ++c + 1;
  }
  out[n++] = (piece){lit, (size_t)(end - lit), 0};
  return n;
}

/* V in base 10 or 16, into the end of BUF; returns where it starts. */
static char *digits(char *end, lua_Integer v, bool hex) {
  uint64_t u = v < 0 && !hex ? 0 - (uint64_t)v : (uint64_t)v;
  char *p = end;
  do {
    *--p = "0123456789abcdef"[hex ? u & 15 : u % 10];
    u = hex ? u >> 4 : u / 10;
  } while (u);
  if (v < 0 && !hex) *--p = '-';
  return p;
}

/* One row's element for a directive: digits, or a string's bytes. */
typedef struct value {
  char digits[48]; /* an integer's digits, or a float's tostring (%s) */
  const char *s;   /* what to write: into digits, or a string the column holds */
  size_t len;
} value;

/* Reads element ROW of the column at stack index COL for directive D. */
static void get(lua_State *L, int col, lua_Integer row, char d, value *out) {
  int t = lua_rawgeti(L, col, row);
  int whole = 0; /* an integer to write in digits; %s takes a float as tostring does */
  lua_Integer v = 0;
  if (t == LUA_TNUMBER && (d != 's' || lua_isinteger(L, -1))) v = lua_tointegerx(L, -1, &whole);
  if (whole) {
    char *end = out->digits + sizeof out->digits;
    out->s = digits(end, v, d == 'x');
    out->len = (size_t)(end - out->s);
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
  piece pieces[MAX_DIRECTIVES + 1];
  int npieces = parse(L, fmt, len, pieces);
  int ncols = 0;
  size_t literals = 0;
  for (int k = 0; k < npieces; k++) {
    ncols += pieces[k].directive != 0;
    literals += pieces[k].len;
  }
  if (ncols == 0) luaL_error(L, "format_rows: the format has no directive to say how many rows");
  if (lua_gettop(L) - 1 < ncols) luaL_error(L, "format_rows: %d directives, %d columns given", ncols, lua_gettop(L) - 1);
  for (int c = 2; c <= ncols + 1; c++) luaL_checktype(L, c, LUA_TTABLE);
  lua_settop(L, ncols + 1);
  lua_Integer nrows = (lua_Integer)lua_rawlen(L, 2);
  value v[MAX_DIRECTIVES];
  luaL_Buffer b;
  /* b sits on the stack above the columns; a row is read whole, then
   * written with one reservation */
  luaL_buffinitsize(L, &b, (size_t)nrows * (literals + (size_t)ncols * 4));
  for (lua_Integer row = 1; row <= nrows; row++) {
    size_t need = literals;
    for (int k = 0, col = 2; k < npieces; k++) {
      if (!pieces[k].directive) continue;
      get(L, col, row, pieces[k].directive, &v[col - 2]);
      need += v[col - 2].len;
      col++;
    }
    char *p = luaL_prepbuffsize(&b, need);
    for (int k = 0, col = 0; k < npieces; k++) {
      memcpy(p, pieces[k].text, pieces[k].len);
      p += pieces[k].len;
      if (pieces[k].directive) {
        memcpy(p, v[col].s, v[col].len);
        p += v[col++].len;
      }
    }
    luaL_addsize(&b, need);
  }
  luaL_pushresult(&b);
  return 1;
}

const luaL_Reg lp_format_library[] = {{"format_rows", l_format_rows}, {NULL, NULL}};
