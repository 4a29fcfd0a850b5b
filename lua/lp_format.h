/* lp_format.h — lazyprobe.format_rows (lp_format.c). */
#ifndef LP_FORMAT_H
#define LP_FORMAT_H

#include <lauxlib.h>

/* The functions lp_format.c adds to the `lazyprobe` table. */
extern const luaL_Reg lp_format_library[];

#endif
