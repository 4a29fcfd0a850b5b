/* lp_columns.h — lazyprobe.graph_columns (lp_columns.c). */
#ifndef LP_COLUMNS_H
#define LP_COLUMNS_H

#include <lauxlib.h>

/* The functions lp_columns.c adds to the `lazyprobe` table. */
extern const luaL_Reg lp_columns_library[];

#endif
