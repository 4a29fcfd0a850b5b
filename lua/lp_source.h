/* lp_source.h — lazyprobe.line_counts, branch_counts, conditional_branches and
 * source_files (lp_source.c), and the line tables and code images they share
 * with lazyprobe.lines (lp_lua.c). */
#ifndef LP_SOURCE_H
#define LP_SOURCE_H

#include <lauxlib.h>
#include <lua.h>

#include "image.h"
#include "lines.h"

/* The functions lp_source.c adds to the `lazyprobe` table. */
extern const luaL_Reg lp_source_library[];

/* The line table of the module at PATH, loaded on first use and kept, with
 * its file paths as a Lua table (file k at index k+1) pushed on L's stack;
 * NULL with a message pushed instead when the module has none. */
const core_lines *lp_lua_module_lines(lua_State *L, const char *path);

/* The code of the module at PATH laid out at its link-time addresses
 * (core/image.h), mapped on first use and kept; NULL when it cannot be. */
const core_image *lp_lua_module_image(lua_State *L, const char *path);

#endif
