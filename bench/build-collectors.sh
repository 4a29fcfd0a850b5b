#!/bin/sh
# Builds the workloads of bench/collectors.py from Debian's sources (bench/get-src.sh) into
# bench/work/c3/, each twice:
#   NAME        gcc -O2 -g -fno-reorder-blocks-and-partition -Wl,--emit-relocs
#               (native; also what lazyprobe runs and what llvm-bolt rewrites)
#   NAME-gcov   the same + -fprofile-arcs -ftest-coverage (the gcc peer)
# Workloads:
#   c3/lua/lua                   Lua 5.4 (src/*.c without luac.c), as bench/get-lua.sh
#   c3/sqlite/speedtest1         sqlite3's test/speedtest1.c + the amalgamation sqlite3.c made by
#                                `configure && make sqlite3.c` in the Debian tree
#   c3/xz/xz                     src/xz/xz of xz-utils, configure --disable-shared: liblzma is
#                                linked statically, so the hot code is in the main executable
# Usage: bench/build-collectors.sh [lua] [sqlite] [xz]   (default all; up-to-date outputs are kept)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work="$here/work"
out="$work/c3"
CC=${CC:-gcc}
BASE="-O2 -g -fno-reorder-blocks-and-partition"
LDBASE="-Wl,--emit-relocs"
GCOV="-fprofile-arcs -ftest-coverage"
JOBS=$(nproc 2>/dev/null || echo 2)
[ $# -gt 0 ] || set -- lua sqlite xz

srcof() { "$here/get-src.sh" "$1" | sed -n "s/^get-src: $1 //p"; }
uptodate() { [ -x "$1" ] && [ "$1" -nt "$0" ]; }

build_lua() {
    src=$(srcof lua5.4)/src
    mkdir -p "$out/lua"
    files=$(ls "$src"/*.c | grep -v '/luac\.c$' | grep -v '/onelua\.c$')
    for v in native gcov; do
        exe="$out/lua/lua"; extra=""
        [ $v = native ] || { exe="$out/lua/lua-gcov"; extra="$GCOV"; }
        if uptodate "$exe"; then echo "build: $exe up to date"; continue; fi
        # shellcheck disable=SC2086
        (cd "$out/lua" && $CC -std=gnu99 $BASE $extra -Wall -DLUA_COMPAT_5_3 -DLUA_USE_LINUX $LDBASE \
            -o "$exe.tmp" $files -lm -ldl)
        mv "$exe.tmp" "$exe"; echo "build: built $exe"
    done
}

build_sqlite() {
    src=$(srcof sqlite3)
    d="$out/sqlite"
    mkdir -p "$d/amalg"
    if [ ! -f "$d/amalg/sqlite3.c" ]; then
        # out-of-tree, so the Debian tree stays clean; needs tclsh
        command -v tclsh >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends tcl
        (cd "$d/amalg" && "$src/configure" >configure.log 2>&1 && make sqlite3.c >make.log 2>&1)
    fi
    for v in native gcov; do
        exe="$d/speedtest1"; extra=""
        [ $v = native ] || { exe="$d/speedtest1-gcov"; extra="$GCOV"; }
        if uptodate "$exe"; then echo "build: $exe up to date"; continue; fi
        # shellcheck disable=SC2086
        (cd "$d" && $CC $BASE $extra -I"$d/amalg" -DSQLITE_OMIT_LOAD_EXTENSION $LDBASE -o "$exe.tmp" \
            "$src/test/speedtest1.c" "$d/amalg/sqlite3.c" -lpthread -lm)
        mv "$exe.tmp" "$exe"; echo "build: built $exe"
    done
}

build_xz() {
    src=$(srcof xz-utils)
    for v in native gcov; do
        b="$out/xz/build-$v"; exe="$out/xz/xz"; extra=""
        [ $v = native ] || { exe="$out/xz/xz-gcov"; extra="$GCOV"; }
        if uptodate "$exe"; then echo "build: $exe up to date"; continue; fi
        mkdir -p "$b"
        (cd "$b" && [ -f Makefile ] || "$src/configure" --disable-shared --enable-static --disable-nls \
            --disable-doc --disable-scripts --disable-xzdec --disable-lzmadec --disable-lzmainfo \
            --disable-lzma-links CC="$CC" CFLAGS="$BASE $extra" LDFLAGS="$LDBASE $extra" >configure.log 2>&1)
        (cd "$b" && make -j"$JOBS" -C src/liblzma >make.log 2>&1 && make -j"$JOBS" -C src/xz >>make.log 2>&1)
        cp "$b/src/xz/xz" "$exe.tmp"; mv "$exe.tmp" "$exe"; echo "build: built $exe"
    done
}

for w in "$@"; do
    case $w in
        lua) build_lua ;;
        sqlite) build_sqlite ;;
        xz) build_xz ;;
        *) echo "build-collectors: unknown workload $w" >&2; exit 2 ;;
    esac
done
