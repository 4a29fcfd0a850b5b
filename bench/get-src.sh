#!/bin/sh
# Fetch Debian source packages into bench/work/src (generalises get-lua.sh):
#   bench/get-src.sh lua5.4 sqlite3 xz-utils
# Enables deb-src and installs dpkg-dev when needed (root, apt-get). Idempotent: a
# package whose unpacked tree (bench/work/src/PKG-*/) exists is not fetched again.
# Prints one line "get-src: PKG DIR" per package.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work="$here/work"
mkdir -p "$work/src"
[ $# -gt 0 ] || set -- lua5.4 sqlite3 xz-utils

srcdir() { # the unpacked tree of source package $1 (dpkg-source names it PKG-UPSTREAMVERSION)
    ls -d "$work/src/$1"-[0-9]*/ 2>/dev/null | head -n 1 | sed 's,/$,,'
}

enabled=0
enable_deb_src() {
    [ "$enabled" = 0 ] || return 0
    enabled=1
    need_update=0
    f=/etc/apt/sources.list.d/debian.sources
    if [ -f $f ] && grep -q '^Types:' $f && grep '^Types:' $f | grep -vq 'deb-src'; then
        sed -i -e '/^Types:/{/deb-src/!s/$/ deb-src/}' $f
        need_update=1
    fi
    if [ -f /etc/apt/sources.list ] && ! grep -q '^deb-src' /etc/apt/sources.list &&
       grep -q '^deb ' /etc/apt/sources.list; then
        sed -n 's/^deb \(.*\)/deb-src \1/p' /etc/apt/sources.list >> /etc/apt/sources.list
        need_update=1
    fi
    if ! command -v dpkg-source >/dev/null 2>&1; then
        apt-get update
        need_update=0
        DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends dpkg-dev
    fi
    [ "$need_update" = 0 ] || apt-get update
}

for pkg in "$@"; do
    d=$(srcdir "$pkg")
    if [ -z "$d" ]; then
        enable_deb_src
        if [ -z "$(apt-cache showsrc "$pkg" 2>/dev/null)" ]; then apt-get update; fi
        (cd "$work/src" && apt-get source "$pkg")   # unpacks and applies Debian's patches
        d=$(srcdir "$pkg")
        [ -n "$d" ] || { echo "get-src: $pkg: no tree after apt-get source" >&2; exit 1; }
    fi
    echo "get-src: $pkg $d"
done
