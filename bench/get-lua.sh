#!/bin/sh
# Fetch Lua 5.4 from Debian's source package into bench/work and build:
#   bench/work/lua/lua         gcc -O2 (native, also run under lazyprobe)
#   bench/work/lua/lua-gcov    gcc -O2 -fprofile-arcs (the gcov peer)
# Needs root for apt-get (enables deb-src, installs dpkg-dev).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work="$here/work"
out="$work/lua"
mkdir -p "$work" "$out"
CC=${CC:-gcc}

# Fetch (deb-src enabled as needed) and unpack with Debian's patches applied.
src="$(sh "$here/get-src.sh" lua5.4 | sed -n 's/^get-src: lua5.4 //p')/src"
echo "get-lua: source in $src"

# 4. Build: all core+lib objects plus lua.c; not luac.c.
files=$(ls "$src"/*.c | grep -v '/luac\.c$' | grep -v '/onelua\.c$')
build() { # out_name extra_cflags...
    name=$1; shift
    if [ -x "$out/$name" ] && [ "$out/$name" -nt "$0" ]; then
        echo "get-lua: $out/$name up to date"; return
    fi
    # shellcheck disable=SC2086
    $CC -std=gnu99 -O2 -g -Wall -DLUA_COMPAT_5_3 -DLUA_USE_LINUX "$@" -o "$out/$name.tmp" $files -lm -ldl
    mv "$out/$name.tmp" "$out/$name"
    echo "get-lua: built $out/$name"
}
build lua
build lua-gcov -fprofile-arcs -ftest-coverage
"$out/lua" -v
