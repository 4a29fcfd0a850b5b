#!/bin/sh
# setup.sh — the README's two commands: installs what is missing (Debian 12),
# builds lazyprobe, then runs it on the bundled example or runs the whole
# test suite.
#   tools/setup.sh example   build, then `lazyprobe run -c calls` on tests/example
#   tools/setup.sh test      build, then unit tests, the collectors' writer tests and
#                            the integration suite (the last line is the suite's count)
#   tools/setup.sh compat    build, then the compatibility suite (bench/compat.py): Debian
#                            sources of lua5.4, sqlite3, xz-utils, zlib, libjsoncpp fetched
#                            with apt-get source, built, run natively and under lazyprobe;
#                            one PASS/FAIL line per program. COMPAT_ARGS is passed on, e.g.
#                            COMPAT_ARGS="--mode both" or COMPAT_ARGS="xz zlib".
set -eu
cd "$(dirname "$0")/.."

packages="gcc libc6-dev make pkg-config meson ninja-build python3 binutils valgrind
  libelf-dev libdw-dev libunwind-dev libzydis-dev libzycore-dev libcapstone-dev liblua5.4-dev
  lua5.4 lcov bolt-16 bc gdb libc6-i386 ripgrep fd-find clang"

missing=""
for p in $packages; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "setup: installing:$missing"
  as_root=""
  [ "$(id -u)" = 0 ] || as_root="sudo"
  $as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $as_root apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

if [ -f build/build.ninja ]; then
  meson configure build -Dwerror=true >/dev/null
else
  meson setup build -Dwerror=true >/dev/null
fi
ninja -C build >/dev/null

case "${1:-example}" in
example)
  mkdir -p build/example
  gcc -O2 -fno-inline -o build/example/wordfreq tests/example/wordfreq.c # keep its functions apart
  echo "setup: lazyprobe run -c calls -o build/example/out -- build/example/wordfreq < README.md"
  build/tools/lazyprobe run -c calls -o build/example/out -- build/example/wordfreq < README.md
  ;;
compat)
  # what the suite's builds need beyond the above (plain configure/make, no build-dep):
  # g++ (jsoncpp), tcl (sqlite3's amalgamation), dpkg-dev (apt-get source)
  missing=""
  for p in g++ tcl dpkg-dev xz-utils; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
  done
  if [ -n "$missing" ]; then
    echo "setup: installing:$missing"
    as_root=""
    [ "$(id -u)" = 0 ] || as_root="sudo"
    $as_root apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $as_root apt-get install -y -qq --no-install-recommends $missing >/dev/null
  fi
  # shellcheck disable=SC2086
  python3 bench/compat.py --lazyprobe build/tools/lazyprobe ${COMPAT_ARGS:-}
  ;;
test)
  unit_log=build/unit-tests.log
  if meson test -C build --print-errorlogs >"$unit_log" 2>&1; then unit_failed=0; else unit_failed=1; fi
  unit_passed=$(sed -n 's/^Ok: *\([0-9]*\).*/\1/p' "$unit_log")
  unit_failed_n=$(sed -n 's/^Fail: *\([0-9]*\).*/\1/p' "$unit_log")
  [ "$unit_failed" = 0 ] || cat "$unit_log"
  echo "unit tests: ${unit_passed:-0} passed, ${unit_failed_n:-0} failed"
  collectors_failed=0
  lua5.4 tests/collectors/run.lua || collectors_failed=1
  sh tests/collectors/consumers.sh || collectors_failed=1
  python3 tests/run_tests.py --lazyprobe build/tools/lazyprobe -j 2 && suite_failed=0 || suite_failed=1
  [ "$unit_failed" = 0 ] && [ "$collectors_failed" = 0 ] && [ "$suite_failed" = 0 ]
  ;;
*)
  echo "usage: tools/setup.sh example|test|compat" >&2
  exit 2
  ;;
esac
