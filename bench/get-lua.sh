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

src=$(ls -d "$work"/src/lua5.4-*/src 2>/dev/null | head -n 1 || true)
if [ -z "$src" ]; then
    # 1. Enable deb-src.
    need_update=0
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
        if grep -q '^Types:' /etc/apt/sources.list.d/debian.sources &&
           grep '^Types:' /etc/apt/sources.list.d/debian.sources | grep -vq 'deb-src'; then
            sed -i -e '/^Types:/{/deb-src/!s/$/ deb-src/}' /etc/apt/sources.list.d/debian.sources
            need_update=1
        fi
    fi
    if [ -f /etc/apt/sources.list ] && ! grep -q '^deb-src' /etc/apt/sources.list &&
       grep -q '^deb ' /etc/apt/sources.list; then
        sed -n 's/^deb \(.*\)/deb-src \1/p' /etc/apt/sources.list >> /etc/apt/sources.list
        need_update=1
    fi
    # 2. dpkg-dev provides dpkg-source, which apt-get source needs.
    if ! command -v dpkg-source >/dev/null 2>&1; then
        apt-get update
        need_update=0
        DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends dpkg-dev
    fi
    [ "$need_update" = 0 ] || apt-get update
    if ! apt-cache showsrc lua5.4 >/dev/null 2>&1 || [ -z "$(apt-cache showsrc lua5.4 2>/dev/null)" ]; then
        apt-get update
    fi
    # 3. Fetch and unpack (applies Debian's patches).
    mkdir -p "$work/src"
    (cd "$work/src" && apt-get source lua5.4)
    src=$(ls -d "$work"/src/lua5.4-*/src | head -n 1)
fi
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
