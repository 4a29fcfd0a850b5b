#!/usr/bin/env python3
"""Compatibility suite: real programs nobody here wrote, natively and under lazyprobe.

    bench/compat.py [--lazyprobe PATH] [--mode direct|make-check|both] [--json FILE]
                    [--timeout S] [--jobs N] [--collectors C] [only...]

Programs (default: all), fetched with `apt-get source` (bench/get-src.sh, which enables
deb-src) and built into bench/work/compat/ with Debian 12's normal flags (dpkg-buildflags
without its -ffile-prefix-map: CFLAGS/CXXFLAGS "-g -O2 -fstack-protector-strong -Wformat
-Werror=format-security", CPPFLAGS "-Wdate-time -D_FORTIFY_SOURCE=2", LDFLAGS "-Wl,-z,relro";
gcc's default PIE). Libraries are linked statically into the programs that test them, because
lazyprobe instruments only the main executable:
  lua      lua5.4: src/*.c (not luac.c) with -DLUA_COMPAT_5_3 -DLUA_USE_LINUX as Debian's
           Makefile; runs bench/compat/workload.lua (errors, coroutines, GC; exits 3),
           bench/lua/bench.lua 1, and `lua -e` raising an error (status 1, traceback)
  sqlite3  sqlite3: the amalgamation (`configure && make sqlite3.c shell.c`, needs tclsh)
           with the SQLITE_* defines of debian/rules; speedtest1 --memdb --verify --size 10,
           speedtest1 --threads 2 on a file database, and the sqlite3 shell reading
           bench/compat/shell.sql (which ends in an error: status 1)
  xz       xz-utils: configure --disable-shared (liblzma static in every program), the
           tests/test_* programs of its `make check` each run directly (srcdir set as
           automake does), `xz -t` over tests/files/good-* and bad-* (what test_files.sh
           checks), compress/decompress a real file (Lua's orig tarball) at -6 -T1
  xz-mt    the same xz, multithreaded: `xz -T2 --block-size=256KiB` compress (its -vv says
           "Using up to 2 threads") and `xz -T2 -d`, with and without lazyprobe --atomic
  zlib     zlib (Debian's 1.2.13.dfsg): configure --static; `example` and `minigzip` as
           zlib's `make test` runs them, plus minigzip -9 / -d on the real file
  jsoncpp  libjsoncpp (C++): src/lib_json + src/test_lib_json -> jsoncpp_test (its unit
           tests, many of which throw and catch Json::LogicError / RuntimeError), and
           src/jsontestrunner on every test/data/*.json (as runjsontests.py does; in a copy of
           test/data, since it writes NAME.actual next to its input: both runs' files must match);
           also each unit test alone (`jsoncpp_test --test NAME`); and the line coverage
           check below
  python3  not built: Debian's own /usr/bin/python3.11 (non-PIE, stripped), `-S -c pass` and a
           one-liner; it is the interpreter of jsoncpp's runjsontests.py in --mode make-check

--mode direct (default): every test program is run directly, natively and under
`lazyprobe run -c coverage,calls,arcs -o DIR --stats`, because lazyprobe does not follow
exec'd children yet. A program PASSes when every one of its cases gives
  - the same exit status, the same stdout and the same stderr as the native run, after
    normalising only: lines starting with "lazyprobe:" removed from stderr (lazyprobe's own
    report); speedtest1's timings ("1.234s") masked; xz -vv's speed and elapsed time, which
    it prints only once a run took a second, masked; nothing else;
  - coverage.info that exists and that `lcov --summary` reads without error or warning;
  - calls.json that parses as JSON;
  - arcs.fdata, and for the first run of each executable, `llvm-bolt-16 EXE
    -data=arcs.fdata -o X` exits 0 without stale/mismatch/invalid-profile messages
    (the program is built without --emit-relocs, so BOLT works in its non-relocation mode).
--mode make-check: the package's own test driver under one lazyprobe run:
`lazyprobe run -c coverage,calls,arcs -- make check` (xz), `make test` (zlib) and
`python3 test/runjsontests.py jsontestrunner test/data` (jsoncpp). PASS needs the same
status and output as natively AND coverage.info naming a source file of the package (the
exec'd test programs were instrumented); until lazyprobe follows exec, the last fails.

With jsoncpp (direct mode), one more line: its line coverage against gcov's. jsoncpp_test built
again at -O0 -g, plainly and with --coverage: the plain one run under `lazyprobe run -c
coverage`, the other natively and read by `gcov --json-format`; every line of src/lib_json's
three sources must be run by both or by neither (tests/run_tests.py gcov_problems' rules:
function entries compared through the functions, lone "}" lines skipped, what the compiler
made itself left out). -O0 because inlining makes gcov count code by the function it came
from (docs/COMPAT.md says what -O2 changes).

With lua, sqlite3, xz, zlib and jsoncpp (direct mode), one more line each: the suite's oracles
(tests/run_tests.py) on small deterministic cases of the program (workload.lua same-blocks and
bench.lua 0.1, speedtest1 --memdb --size 1, xz -6 of the real file, minigzip -9 of it,
jsoncpp_test): every block's count under
blocks="count" probes equals callgrind's count of its first instruction and nothing ran outside
the blocks, blocks="cover" gives 1 exactly where that count is not 0, flow is conserved under
arcs, and tests/collectors/check_source.lua (the C report helpers against their plain-Lua
statement) agrees on every function of the cover and the arcs runs. Lua's line runs a twin of
its build, lua-seeded, with two of Lua's own configuration macros set: luai_makeseed(L) 0 (the
string hashes are seeded from addresses and the time) and STRCACHE_N 1 (its API's string cache
is indexed by the C string's address, which differs under valgrind); workload.lua's argument
"same-blocks" keeps its weak table's tables as values, not keys (hashed by address).

Prints one "PASS name" / "FAIL name: reasons" line per program (and mode), a summary line,
and with --json all measurements (bench/run.py's finish()). Everything goes to
bench/work/compat/ (git-ignored); builds are kept and reused.
"""
import argparse
import concurrent.futures
import glob
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH)
import run as R  # noqa: E402  (bench/run.py: finish(), log())

ROOT = R.ROOT
WORK = os.path.join(R.WORK, "compat")
SRC = os.path.join(R.WORK, "src")
CC = os.environ.get("CC", "gcc")
CXX = os.environ.get("CXX", "g++")
CFLAGS = ["-g", "-O2", "-fstack-protector-strong", "-Wformat", "-Werror=format-security"]
CPPFLAGS = ["-Wdate-time", "-D_FORTIFY_SOURCE=2"]
LDFLAGS = ["-Wl,-z,relro"]
COLLECTORS = "coverage,calls,arcs"
BOLT = shutil.which("llvm-bolt-16") or "/usr/lib/llvm-16/bin/llvm-bolt"
ALL = ["lua", "sqlite3", "xz", "xz-mt", "zlib", "jsoncpp", "python3"]
PKG = {"lua": "lua5.4", "sqlite3": "sqlite3", "xz": "xz-utils", "xz-mt": "xz-utils", "zlib": "zlib",
       "jsoncpp": "libjsoncpp", "python3": "python3.11 (Debian's binary)"}
JOBS = 2
PYTHON3 = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable   # an ELF file, not a shim
log = R.log


def q(cmd):
    return " ".join(shlex.quote(str(c)) for c in cmd)


def sh(cmd, cwd=None, logfile=None, env=None):
    log("+ " + (("cd %s && " % cwd) if cwd else "") + q(cmd))
    e = dict(os.environ)
    if env:
        e.update(env)
    if logfile:
        with open(logfile, "a") as f:
            r = subprocess.run(cmd, cwd=cwd, stdout=f, stderr=subprocess.STDOUT, env=e)
        if r.returncode != 0:
            with open(logfile) as f:
                tail = f.read()[-3000:]
            raise RuntimeError("%s failed (status %d), log %s:\n%s" % (q(cmd), r.returncode, logfile, tail))
    else:
        subprocess.run(cmd, cwd=cwd, check=True, env=e)


def srcdir(pkg):
    """The unpacked Debian tree of source package PKG (fetched by bench/get-src.sh if needed)."""
    out = subprocess.run(["sh", os.path.join(BENCH, "get-src.sh"), pkg], check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    m = re.search(r"^get-src: %s (.*)$" % re.escape(pkg), out, re.M)
    if not m:
        raise RuntimeError("get-src.sh %s printed no tree" % pkg)
    return m.group(1)


def stamp_ok(path):
    return os.path.exists(path) and os.path.getmtime(path) >= os.path.getmtime(__file__)


def compile_many(jobs, cwd):
    """[(cmd, output)]: runs the compilers JOBS at a time, skips outputs that exist."""
    todo = [(c, o) for c, o in jobs if not os.path.exists(o)]

    def one(co):
        c, o = co
        r = subprocess.run(c + ["-o", o + ".tmp"], cwd=cwd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("%s failed:\n%s" % (q(c), r.stderr[-3000:]))
        os.replace(o + ".tmp", o)
    if todo:
        log("compat: compiling %d files in %s" % (len(todo), cwd))
    with concurrent.futures.ThreadPoolExecutor(JOBS) as ex:
        list(ex.map(one, todo))


def real_input():
    """A real file: Lua's upstream tarball (gunzipped), ~1.4 MB."""
    p = os.path.join(WORK, "input.tar")
    if not os.path.exists(p):
        srcdir("lua5.4")
        gz = glob.glob(os.path.join(SRC, "lua5.4_*.orig.tar.gz"))[0]
        with open(p + ".tmp", "wb") as f:
            subprocess.run(["gzip", "-dc", gz], stdout=f, check=True)
        os.replace(p + ".tmp", p)
    return p


# ---------------------------------------------------------------------------------------------
# Builds. Each returns a dict of paths; the build is skipped when its stamp is newer than this file.

def build_lua():
    """Debian's lua, and for the oracles its twin seeded with 0 (Lua's own configuration
    point luai_makeseed, lstate.c): the string hashes of Debian's build mix in the time and
    addresses, so that a run under valgrind does not run the blocks a native run does."""
    d = os.path.join(WORK, "lua")
    exe, seeded = os.path.join(d, "lua"), os.path.join(d, "lua-seeded")
    if stamp_ok(exe) and stamp_ok(seeded):
        return {"lua": exe, "seeded": seeded}
    src = os.path.join(srcdir("lua5.4"), "src")
    files = sorted(f for f in glob.glob(os.path.join(src, "*.c")) if os.path.basename(f) not in ("luac.c", "onelua.c"))
    for out, obj, extra in ((exe, "obj", []), (seeded, "obj-seeded", ["-Dluai_makeseed(L)=0u", "-DSTRCACHE_N=1", "-DSTRCACHE_M=2"])):
        os.makedirs(os.path.join(d, obj), exist_ok=True)
        jobs = [([CC, "-std=gnu99", *CFLAGS, *CPPFLAGS, "-Wall", "-DLUA_COMPAT_5_3", "-DLUA_USE_LINUX", *extra, "-c", f],
                 os.path.join(d, obj, os.path.basename(f)[:-2] + ".o")) for f in files]
        compile_many(jobs, d)
        sh([CC, *LDFLAGS, "-o", out, *[o for _, o in jobs], "-lm", "-ldl"], cwd=d)
    return {"lua": exe, "seeded": seeded}


SQLITE_DEFS = ["-fno-strict-aliasing", "-DSQLITE_SECURE_DELETE", "-DSQLITE_ENABLE_COLUMN_METADATA",
               "-DSQLITE_ENABLE_FTS3", "-DSQLITE_ENABLE_FTS3_PARENTHESIS", "-DSQLITE_ENABLE_RTREE=1",
               "-DSQLITE_SOUNDEX=1", "-DSQLITE_ENABLE_UNLOCK_NOTIFY", "-DSQLITE_OMIT_LOOKASIDE=1",
               "-DSQLITE_ENABLE_DBSTAT_VTAB", "-DSQLITE_ALLOW_ROWID_IN_VIEW",
               "-DSQLITE_ENABLE_UPDATE_DELETE_LIMIT=1", "-DSQLITE_ENABLE_LOAD_EXTENSION",
               "-DSQLITE_ENABLE_JSON1", "-DSQLITE_LIKE_DOESNT_MATCH_BLOBS", "-DSQLITE_THREADSAFE=1",
               "-DSQLITE_ENABLE_FTS3_TOKENIZER=1", "-DSQLITE_USE_URI=1", "-DSQLITE_MAX_SCHEMA_RETRY=25",
               "-DSQLITE_ENABLE_PREUPDATE_HOOK", "-DSQLITE_ENABLE_SESSION", "-DSQLITE_ENABLE_STMTVTAB",
               "-DSQLITE_MAX_VARIABLE_NUMBER=250000"]   # debian/rules of sqlite3 3.40.1-2


def build_sqlite3():
    d = os.path.join(WORK, "sqlite3")
    paths = {"speedtest1": os.path.join(d, "speedtest1"), "shell": os.path.join(d, "sqlite3")}
    if all(stamp_ok(p) for p in paths.values()):
        return paths
    src = srcdir("sqlite3")
    am = os.path.join(d, "amalg")
    os.makedirs(am, exist_ok=True)
    if not (os.path.exists(os.path.join(am, "sqlite3.c")) and os.path.exists(os.path.join(am, "shell.c"))):
        lg = os.path.join(d, "amalg.log")
        sh([os.path.join(src, "configure")], cwd=am, logfile=lg)   # out of tree: Debian's tree stays clean
        sh(["make", "sqlite3.c", "shell.c"], cwd=am, logfile=lg)
    base = [CC, *CFLAGS, *CPPFLAGS, *SQLITE_DEFS, "-I", am]
    jobs = [(base + ["-c", os.path.join(am, "sqlite3.c")], os.path.join(d, "sqlite3.o")),
            (base + ["-c", os.path.join(src, "test", "speedtest1.c")], os.path.join(d, "speedtest1.o")),
            (base + ["-c", os.path.join(am, "shell.c")], os.path.join(d, "shell.o"))]
    compile_many(jobs, d)
    libs = ["-lpthread", "-lm", "-ldl"]
    sh([CC, *LDFLAGS, "-o", paths["speedtest1"], jobs[1][1], jobs[0][1], *libs], cwd=d)
    sh([CC, *LDFLAGS, "-o", paths["shell"], jobs[2][1], jobs[0][1], *libs], cwd=d)
    return paths


XZ_TESTS = ["test_check", "test_hardware", "test_stream_flags", "test_filter_flags", "test_block_header",
            "test_index", "test_index_hash", "test_bcj_exact_size", "test_memlimit", "test_lzip_decoder",
            "test_vli"]


def build_xz():
    d = os.path.join(WORK, "xz")
    b = os.path.join(d, "build")
    src = srcdir("xz-utils")
    paths = {"xz": os.path.join(b, "src", "xz", "xz"), "build": b, "src": src,
             "tests": {t: os.path.join(b, "tests", t) for t in XZ_TESTS},
             "create_compress_files": os.path.join(b, "tests", "create_compress_files")}
    stamp = os.path.join(d, "built")
    if stamp_ok(stamp):
        return paths
    os.makedirs(b, exist_ok=True)
    lg = os.path.join(d, "build.log")
    if not os.path.exists(os.path.join(b, "Makefile")):
        sh([os.path.join(src, "configure"), "--disable-shared", "--enable-static", "--disable-nls",
            "--disable-doc", "CC=" + CC, "CFLAGS=" + " ".join(CFLAGS), "CPPFLAGS=" + " ".join(CPPFLAGS),
            "LDFLAGS=" + " ".join(LDFLAGS)], cwd=b, logfile=lg)
    sh(["make", "-j%d" % JOBS], cwd=b, logfile=lg)
    sh(["make", "-j%d" % JOBS, "-C", "tests", "check", "TESTS="], cwd=b, logfile=lg)   # build, do not run
    open(stamp, "w").close()
    return paths


def build_zlib():
    d = os.path.join(WORK, "zlib")
    b = os.path.join(d, "src")
    paths = {"example": os.path.join(b, "example"), "minigzip": os.path.join(b, "minigzip"), "dir": b}
    stamp = os.path.join(d, "built")
    if stamp_ok(stamp):
        return paths
    if os.path.exists(b):
        shutil.rmtree(b)
    shutil.copytree(srcdir("zlib"), b, symlinks=True)   # zlib builds in its tree
    lg = os.path.join(d, "build.log")
    env = {"CC": CC, "CFLAGS": " ".join(CFLAGS + CPPFLAGS), "LDFLAGS": " ".join(LDFLAGS)}
    sh(["./configure", "--static"], cwd=b, logfile=lg, env=env)
    sh(["make", "-j%d" % JOBS, "example", "minigzip"], cwd=b, logfile=lg)
    sh(["make", "-j%d" % JOBS, "all"], cwd=b, logfile=lg)    # what `make test` needs, so it compiles nothing later
    open(stamp, "w").close()
    return paths


def build_jsoncpp():
    d = os.path.join(WORK, "jsoncpp")
    src = srcdir("libjsoncpp")
    paths = {"test": os.path.join(d, "jsoncpp_test"), "runner": os.path.join(d, "jsontestrunner"),
             "src": src, "data": os.path.join(src, "test", "data")}
    if all(stamp_ok(p) for p in (paths["test"], paths["runner"])):
        return paths
    os.makedirs(os.path.join(d, "obj"), exist_ok=True)
    base = [CXX, "-std=c++11", *CFLAGS, *CPPFLAGS, "-I", os.path.join(src, "include"),
            "-I", os.path.join(src, "src", "lib_json")]
    lib = [os.path.join(src, "src", "lib_json", f) for f in ("json_reader.cpp", "json_value.cpp", "json_writer.cpp")]
    tst = [os.path.join(src, "src", "test_lib_json", f) for f in ("jsontest.cpp", "fuzz.cpp", "main.cpp")]
    run = [os.path.join(src, "src", "jsontestrunner", "main.cpp")]

    def obj(f):
        return os.path.join(d, "obj", os.path.basename(os.path.dirname(f)) + "-" + os.path.basename(f)[:-4] + ".o")
    compile_many([(base + ["-c", f], obj(f)) for f in lib + tst + run], d)
    sh([CXX, *LDFLAGS, "-o", paths["test"], *map(obj, tst + lib)], cwd=d)
    sh([CXX, *LDFLAGS, "-o", paths["runner"], *map(obj, run + lib)], cwd=d)
    return paths


def build_python3():
    """Nothing to build: Debian's own /usr/bin/python3 (non-PIE, stripped), the interpreter of
    jsoncpp's runjsontests.py in --mode make-check."""
    if not os.path.exists("/usr/bin/python3"):
        raise RuntimeError("/usr/bin/python3 is not installed")
    return {"python3": os.path.realpath("/usr/bin/python3")}


BUILDERS = {"lua": build_lua, "sqlite3": build_sqlite3, "xz": build_xz, "xz-mt": build_xz, "zlib": build_zlib,
            "jsoncpp": build_jsoncpp, "python3": build_python3}


# ---------------------------------------------------------------------------------------------
# Cases: what each program runs. A case is a dict: name, cmd, cwd, stdin (path or None), env,
# norm (bytes -> bytes for stdout), exe (the instrumented executable), atomic (bool),
# expect (native exit status that is not a failure of the native run itself; default 0).

def mask_times(b):
    """Times (speedtest1's `0.115s`), with the spaces that pad them to a width: a run of 10 s
    or more takes one of them."""
    return re.sub(rb" *[0-9]+\.[0-9]+s", b" T.TTTs", b)


def mask_xz_elapsed(b):
    """xz -vv ends its summary with the speed and the elapsed time once it took a second or
    more (", 1.2 MiB/s, 0:01"): a run under lazyprobe on a slow machine may, natively not."""
    return re.sub(rb"(, [0-9.,]+ [KMGT]?i?B/s)?, [0-9]+:[0-9]{2}(:[0-9]{2})?$", b"", b, flags=re.M)


def case(name, cmd, exe, **kw):
    c = {"name": name, "cmd": [str(x) for x in cmd], "exe": exe, "cwd": None, "stdin": None, "env": None,
         "norm": None, "atomic": False, "expect": 0}
    c.update(kw)
    return c


def cases_lua(p):
    lua = p["lua"]
    return [case("workload.lua", [lua, os.path.join(BENCH, "compat", "workload.lua")], lua, expect=3),
            case("bench.lua 1", [lua, os.path.join(BENCH, "lua", "bench.lua"), "1"], lua),
            case("lua -e error", [lua, "-e", "local function f() error('boom') end f()"], lua, expect=1)]


def cases_sqlite3(p):
    st, shell = p["speedtest1"], p["shell"]
    tmp = os.path.join(WORK, "sqlite3", "run")
    os.makedirs(tmp, exist_ok=True)
    return [case("speedtest1 --memdb --verify --size 10", [st, "--memdb", "--verify", "--size", "10"], st,
                 norm=mask_times),
            case("speedtest1 --threads 2 --size 5 (file db)", [st, "--threads", "2", "--size", "5", "--nosync",
                                                               "speedtest.db"], st, cwd=tmp, norm=mask_times,
                 pre=lambda: [os.unlink(f) for f in glob.glob(os.path.join(tmp, "speedtest.db*"))]),
            case("sqlite3 shell < shell.sql", [shell, "-batch", ":memory:"], shell,
                 stdin=os.path.join(BENCH, "compat", "shell.sql"), expect=1)]


def cases_xz(p):
    xz, b, src = p["xz"], p["build"], p["src"]
    tests_b = os.path.join(b, "tests")
    env = {"srcdir": os.path.join(src, "tests")}     # what automake's test driver sets
    cs = [case(t, [exe], exe, cwd=tests_b, env=env) for t, exe in p["tests"].items()]
    files = os.path.join(src, "tests", "files")
    good = sorted(glob.glob(os.path.join(files, "good-*.xz")) + glob.glob(os.path.join(files, "good-*.lzma")))
    bad = sorted(glob.glob(os.path.join(files, "bad-*.xz")) + glob.glob(os.path.join(files, "bad-*.lzma")))
    cs.append(case("xz -t good-* (%d files)" % len(good), [xz, "-t", *good], xz))
    cs.append(case("xz -t bad-* (%d files, status 1)" % len(bad), [xz, "-t", *bad], xz, expect=1))
    gen = os.path.join(WORK, "xz", "gen")
    os.makedirs(gen, exist_ok=True)
    ccf = p["create_compress_files"]
    cs.append(case("create_compress_files", [ccf], ccf, cwd=gen))
    inp = real_input()
    xzed = os.path.join(WORK, "xz", "input.tar.xz")
    cs.append(case("xz -6 -T1 real file", [xz, "-6", "-T1", "-c", inp], xz))
    cs.append(case("xz -9e --check=sha256 generated text", [xz, "-9e", "--check=sha256", "-c",
                                                            os.path.join(tests_b, "compress_generated_text")], xz,
                   pre=lambda: os.path.exists(os.path.join(tests_b, "compress_generated_text")) or
                   subprocess.run([ccf], cwd=tests_b, check=True)))
    cs.append(case("xz --x86 --lzma2 on the xz binary", [xz, "--x86", "--lzma2=preset=6", "-c", xz], xz))
    cs.append(case("xz -dc real file", [xz, "-dc", xzed], xz,
                   pre=lambda: os.path.exists(xzed) or sh_to([xz, "-6", "-T1", "-c", inp], xzed)))
    return cs


def sh_to(cmd, path):
    with open(path + ".tmp", "wb") as f:
        subprocess.run(cmd, stdout=f, check=True)
    os.replace(path + ".tmp", path)


def cases_xz_mt(p):
    xz = p["xz"]
    inp = real_input()
    xzed = os.path.join(WORK, "xz", "input-mt.tar.xz")
    pre = lambda: os.path.exists(xzed) or sh_to([xz, "-T2", "--block-size=256KiB", "-6", "-c", inp], xzed)  # noqa: E731
    cs = []
    for atomic in (False, True):
        sfx = " (--atomic)" if atomic else ""
        cs.append(case("xz -T2 --block-size=256KiB -6 compress" + sfx,
                       [xz, "-T2", "--block-size=256KiB", "-6", "-c", inp], xz, atomic=atomic))
        cs.append(case("xz -T2 -d" + sfx, [xz, "-T2", "-dc", xzed], xz, atomic=atomic, pre=pre))
        cs.append(case("xz -T2 -vv compress, stderr says 2 threads" + sfx,
                       [xz, "-T2", "-vv", "--block-size=256KiB", "-6", "-c", inp], xz, atomic=atomic,
                       want_err=b"Using up to 2 threads", norm_err=mask_xz_elapsed))
    return cs


def cases_zlib(p):
    ex, mg = p["example"], p["minigzip"]
    hello = os.path.join(WORK, "zlib", "hello.txt")
    with open(hello, "w") as f:
        f.write("hello world\n")
    hz = os.path.join(WORK, "zlib", "hello.gz")
    inp = real_input()
    gz = os.path.join(WORK, "zlib", "input.tar.gz")
    run_dir = os.path.join(WORK, "zlib", "run")
    os.makedirs(run_dir, exist_ok=True)
    return [case("example", [ex], ex, cwd=run_dir),           # writes foo.gz in its cwd
            case("minigzip (hello world)", [mg], mg, stdin=hello,
                 pre=lambda: sh_to_in([mg], hello, hz)),
            case("minigzip -d (hello world)", [mg, "-d"], mg, stdin=hz),
            case("minigzip -9 real file", [mg, "-9"], mg, stdin=inp),
            case("minigzip -d real file", [mg, "-d"], mg, stdin=gz,
                 pre=lambda: os.path.exists(gz) or sh_to_in([mg, "-9"], inp, gz))]


def sh_to_in(cmd, stdin, path):
    with open(stdin, "rb") as i, open(path + ".tmp", "wb") as f:
        subprocess.run(cmd, stdin=i, stdout=f, check=True)
    os.replace(path + ".tmp", path)


def jsoncpp_data(p):
    """A copy of test/data: jsontestrunner writes NAME.actual and NAME.actual-rewrite next to its input."""
    d = os.path.join(WORK, "jsoncpp", "data")
    if not os.path.isdir(d):
        shutil.copytree(p["data"], d)
    return d


def cases_jsoncpp(p):
    t, r = p["test"], p["runner"]
    cs = [case("jsoncpp_test (all unit tests)", [t], t)]
    # each unit test alone too (jsoncpp_test --test NAME), so that one that aborts does not hide the rest
    names = subprocess.run([t, "--list-tests"], capture_output=True, text=True).stdout.split()
    cs += [case("jsoncpp_test --test %s" % n, [t, "--test", n], t) for n in names]
    data = jsoncpp_data(p)
    # what runjsontests.py does: every input, its .actual compared with .expected by the script;
    # here both runs' .actual and .actual-rewrite files must be the same
    for f in sorted(glob.glob(os.path.join(data, "*.json"))):
        base = f[:-5]
        name = os.path.basename(f)
        cs.append(case("jsontestrunner %s" % name, [r, f], r, expect=1 if name.startswith("fail") else 0,
                       files=[base + ".actual", base + ".actual-rewrite"]))
    return cs


JSONCPP_LIB = ("json_reader", "json_value", "json_writer")


def gcov_check_jsoncpp(lp, timeout):
    """jsoncpp's -O0 line coverage under lazyprobe against gcov's (the module
    docstring); returns (PASS/FAIL line, measurements)."""
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    import run_tests as T  # noqa: E402  (gcov_problems, the suite's rules)
    src = srcdir("libjsoncpp")
    d = os.path.join(WORK, "jsoncpp-O0")
    units = [os.path.join(src, "src", "lib_json", u + ".cpp") for u in JSONCPP_LIB] + \
        [os.path.join(src, "src", "test_lib_json", u + ".cpp") for u in ("jsontest", "fuzz", "main")]
    exes = {}
    for kind, extra in (("plain", []), ("gcov", ["--coverage"])):
        os.makedirs(os.path.join(d, kind), exist_ok=True)
        base = [CXX, "-std=c++11", "-g", "-O0", *extra, "-I", os.path.join(src, "include"),
                "-I", os.path.join(src, "src", "lib_json")]
        objs = [os.path.join(d, kind, os.path.basename(u)[:-4] + ".o") for u in units]
        compile_many([(base + ["-c", u], o) for u, o in zip(units, objs)], d)
        exes[kind] = os.path.join(d, kind, "jsoncpp_test")
        if not stamp_ok(exes[kind]):
            sh([CXX, *extra, "-o", exes[kind], *objs], cwd=d)
    for f in glob.glob(os.path.join(d, "gcov", "*.gcda")):
        os.remove(f)
    outdir = os.path.join(d, "out")
    shutil.rmtree(outdir, ignore_errors=True)
    cmd = [lp, "run", "-c", "coverage", "-o", outdir, "--", exes["plain"]]
    lpr = run_once(cmd, timeout=timeout)
    nat = run_once([exes["gcov"]], cwd=os.path.join(d, "gcov"), timeout=timeout)
    probs, compared = [], 0
    if (lpr["status"], lpr["out"]) != (nat["status"], nat["out"]):
        probs.append("status or stdout differ from the --coverage build's (%s / %s)" % (lpr["status"], nat["status"]))
    for u in JSONCPP_LIB:  # compile_many's X.o.tmp: gcc named the notes X.o.gcno, the data X.o.gcda
        r = subprocess.run(["gcov", "--json-format", "--stdout", "-o", ".", u + ".o.gcda"], cwd=os.path.join(d, "gcov"),
                           capture_output=True, text=True)
        glines, gfuncs = {}, []
        try:
            for f in json.loads(r.stdout).get("files", []):
                if os.path.basename(f["file"]) == u + ".cpp":
                    for ln in f["lines"]:
                        glines[ln["line_number"]] = glines.get(ln["line_number"], 0) + ln["count"]
                    gfuncs += f.get("functions", [])
        except ValueError:
            probs.append("gcov %s.o: %s" % (u, short(r.stderr.encode())))
            continue
        try:
            p, n = T.gcov_problems(os.path.join(outdir, "coverage.info"), os.path.join(src, "src", "lib_json", u + ".cpp"),
                                   glines, gfuncs, exes["plain"])
        except OSError as e:
            p, n = ["%s: %s" % (u, e)], 0
        probs += ["%s.cpp %s" % (u, x) for x in p]
        compared += n
    res = {"compared": compared, "problems": probs, "command": q(cmd)}
    if probs:
        return "FAIL jsoncpp -O0 line coverage = gcov's: %d of %d lines: %s" % (
            len(probs), compared, "; ".join(probs[:4])), res
    return "PASS jsoncpp -O0 line coverage = gcov's (%d lines of src/lib_json compared)" % compared, res


# {=== the oracles on real programs ===
#
# The suite's oracles (tests/run_tests.py) are run on the corpus; here the same on
# programs nobody here wrote, small deterministic cases of each (Lua's seeded twin:
# build_lua).
# Returns (PASS/FAIL line, measurements).

def oracle_cases(p, prog):
    """[(label, argv, stdin[, env])]: runs whose every block count callgrind gives again."""
    inp = real_input()
    if prog == "sqlite3":
        return [("speedtest1 --memdb --size 1", [p["speedtest1"], "--memdb", "--size", "1"], None),
                ("sqlite3 shell < shell.sql", [p["shell"], "-batch", ":memory:"],
                 os.path.join(BENCH, "compat", "shell.sql"))]
    if prog == "xz":
        xzed = os.path.join(WORK, "xz", "input.tar.xz")
        return [("xz -6 -T1 real file", [p["xz"], "-6", "-T1", "-c", inp], None),
                ("xz -dc real file", [p["xz"], "-dc", xzed], None)] if os.path.exists(xzed) else \
            [("xz -6 -T1 real file", [p["xz"], "-6", "-T1", "-c", inp], None)]
    if prog == "zlib":
        return [("minigzip -9 real file", [p["minigzip"], "-9"], inp), ("example", [p["example"]], None)]
    if prog == "lua":
        lua = p["seeded"]
        return [("lua-seeded workload.lua same-blocks", [lua, os.path.join(BENCH, "compat", "workload.lua"), "same-blocks"], None),
                ("lua-seeded bench.lua 0.1", [lua, os.path.join(BENCH, "lua", "bench.lua"), "0.1"], None)]
    if prog == "jsoncpp":
        data = sorted(glob.glob(os.path.join(srcdir("libjsoncpp"), "test", "data", "*.json")))
        return [("jsoncpp_test", [p["test"]], None)] + \
            [("jsontestrunner " + os.path.basename(d), [p["runner"], d], None) for d in data[:3]]
    return []


def oracle_check(lp, prog, p, timeout):
    """tests/run_tests.py oracle_problems on every case of oracle_cases."""
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    import run_tests as T  # noqa: E402  (the suite's oracles)
    probs, res = [], {"cases": []}
    blocks = checked = branches = 0
    for label, argv, stdin, *env in oracle_cases(p, prog):
        r = T.oracle_problems(lp, argv, stdin, env[0] if env else None, os.path.join(WORK, "oracles", prog), timeout)
        probs += ["%s: %s" % (label, x) for x in r["problems"]]
        blocks, branches, checked = blocks + r["blocks"], branches + r["branches"], checked + r["checked"]
        res["cases"].append(label)
    res.update(blocks=blocks, branches=branches, checked=checked, problems=probs)
    if probs:
        return "FAIL %s oracles: %d problems: %s" % (prog, len(probs), "; ".join(probs[:4])), res
    return ("PASS %s oracles (%s: %d blocks = callgrind's, counts and cover; flow conserved; %d conditional "
            "branches taken as often as callgrind says; check_source agrees on %d functions)" % (
                prog, ", ".join(res["cases"]), blocks, branches, checked)), res

# }===


def cases_python3(p):
    py = p["python3"]
    return [case("python3 -S -c pass", [py, "-S", "-c", "pass"], py),
            case("python3 -c json/os.popen", [py, "-c", "import json, os; print(json.dumps({'a': [1, 2]})); "
                                              "print(os.popen('echo hi').read().strip())"], py)]


CASES = {"python3": cases_python3, "lua": cases_lua, "sqlite3": cases_sqlite3, "xz": cases_xz, "xz-mt": cases_xz_mt, "zlib": cases_zlib,
         "jsoncpp": cases_jsoncpp}


# make-check mode: (program, command, cwd, source tree whose files must appear in coverage.info)
def make_check(name, p):
    if name == "xz":
        return [("make check", ["make", "check"], os.path.join(p["build"], "tests"), p["src"], None)]
    if name == "zlib":
        return [("make test", ["make", "test"], p["dir"], p["dir"], None)]
    if name == "jsoncpp":
        return [("runjsontests.py", [PYTHON3, os.path.join(p["src"], "test", "runjsontests.py"), p["runner"],
                                     jsoncpp_data(p)], os.path.join(WORK, "jsoncpp"), p["src"], None)]
    return []


# ---------------------------------------------------------------------------------------------
# Running and checking

def run_once(cmd, cwd=None, stdin=None, env=None, timeout=120, stdout=None):
    """Runs CMD in its own process group (killed as a whole on time-out); stdout/stderr captured,
    or stdout written to the file STDOUT (a pipe's reader sets the pace of a writer that fills it:
    xz waits in io_wait as often as that happens)."""
    e = dict(os.environ)
    if env:
        e.update(env)
    t0 = time.perf_counter()
    fin = open(stdin, "rb") if stdin else subprocess.DEVNULL
    fout = open(stdout, "wb") if stdout else subprocess.PIPE
    try:
        p = subprocess.Popen(cmd, cwd=cwd, stdin=fin, stdout=fout, stderr=subprocess.PIPE, env=e,
                             start_new_session=True)
        try:
            out, err = p.communicate(timeout=timeout)
            st, to = p.returncode, False
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            out, err = p.communicate()
            st, to = None, True
    finally:
        if stdin:
            fin.close()
        if stdout:
            fout.close()
    return {"status": st, "out": out or b"", "err": err, "timed_out": to, "wall": time.perf_counter() - t0}


LP_LINE = re.compile(rb"^lazyprobe:[^\n]*\n?", re.M)


def lp_lines(err):
    return [l.decode(errors="replace") for l in err.splitlines() if l.startswith(b"lazyprobe:")]


def short(b, n=160):
    s = b.decode(errors="replace") if isinstance(b, bytes) else str(b)
    s = s.replace("\n", "\\n")
    return s if len(s) <= n else s[:n] + "..."


def first_diff(a, b):
    la, lb = a.splitlines(), b.splitlines()
    for i, (x, y) in enumerate(zip(la, lb)):
        if x != y:
            return "line %d: native %s, lazyprobe %s" % (i + 1, short(x, 90), short(y, 90))
    n = min(len(la), len(lb))
    more = ("lazyprobe's has %s" % short(b"\n".join(lb[n:n + 2]), 200)) if len(lb) > n else \
        ("native's has %s" % short(b"\n".join(la[n:n + 2]), 200))
    return "native %d lines, lazyprobe %d lines; %s" % (len(la), len(lb), more)


_SYMS = {}


def symbols_and_lines(exe):
    """(has .symtab, has .debug_line): a stripped program has no line info, so its coverage.info
    is empty (the collector says so), and llvm-bolt cannot match our fn_ADDRESS names."""
    if exe not in _SYMS:
        out = subprocess.run(["readelf", "-S", "-W", exe], capture_output=True, text=True).stdout
        _SYMS[exe] = (" .symtab " in out, " .debug_line " in out)
    return _SYMS[exe]


def check_outputs(outdir, exe, bolted, timeout):
    """Problems with the collectors' files in OUTDIR; BOLT only once per executable."""
    probs, info = [], {}
    cov = os.path.join(outdir, "coverage.info")
    symtab, lines = symbols_and_lines(exe)
    if not lines:
        info["coverage.info"] = "not checked: %s has no line info" % os.path.basename(exe)
    elif not os.path.exists(cov) or os.path.getsize(cov) == 0:
        probs.append("coverage.info missing or empty")
    elif shutil.which("lcov"):
        r = subprocess.run(["lcov", "--summary", "--rc", "lcov_branch_coverage=1", cov], capture_output=True,
                           text=True, timeout=timeout)
        txt = r.stdout + r.stderr
        m = re.search(r"lines\.*:\s*([\d.]+%.*)", txt)
        if r.returncode != 0 or re.search(r"warning|error", txt, re.I) or not m:
            probs.append("lcov --summary: status %d: %s" % (r.returncode, short(txt.encode())))
        else:
            info["lcov_lines"] = m.group(1).strip()
    else:
        probs.append("lcov not installed")
    asked = COLLECTORS.split(",")
    cj = os.path.join(outdir, "calls.json")
    try:
        if "calls" in asked:
            with open(cj) as f:
                json.load(f)
            info["calls_json_bytes"] = os.path.getsize(cj)
    except (OSError, ValueError) as e:
        probs.append("calls.json: %s" % e)
    fd = os.path.join(outdir, "arcs.fdata")
    if "arcs" not in asked:
        return probs, info
    if not os.path.exists(fd):
        probs.append("arcs.fdata missing")
    elif not symtab:
        info["bolt"] = "not run: %s has no symbol table" % os.path.basename(exe)
    elif exe not in bolted and os.path.getsize(fd) > 0:
        bolted.add(exe)
        if not os.path.exists(BOLT):
            probs.append("llvm-bolt-16 not installed")
        else:
            out = os.path.join(outdir, "bolted")
            cmd = [BOLT, exe, "-o", out, "-data=" + fd]
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=max(timeout, 300))
            txt = r.stdout + r.stderr
            bad = [l for l in txt.splitlines() if re.search(r"stale|mismatch|invalid|BOLT-ERROR", l, re.I)
                   and not re.search(r"\b0 (stale|callsites with invalid)", l)]
            m = re.search(r"BOLT-INFO: (\d+) out of (\d+) functions in the binary \(\S+\) have non-empty", txt)
            info["bolt"] = m.group(0)[11:] if m else None
            if r.returncode != 0 or bad:
                probs.append("llvm-bolt-16 -data=arcs.fdata: status %d: %s  [%s]" % (
                    r.returncode, short("\n".join(bad[:2]) or txt[-300:]), q(cmd)))
            elif not m or int(m.group(1)) == 0:
                probs.append("llvm-bolt-16 used no profile  [%s]" % q(cmd))
            try:
                os.unlink(out)
            except OSError:
                pass
    return probs, info


def rm_f(path):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def read_or_none(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def run_case(lp, prog, c, idx, bolted, timeout):
    if c.get("pre"):
        c["pre"]()
    outdir = os.path.join(WORK, "out", prog, "%02d" % idx)
    shutil.rmtree(outdir, ignore_errors=True)
    os.makedirs(outdir)
    for f in c.get("files", []):
        rm_f(f)
    nat = run_once(c["cmd"], c["cwd"], c["stdin"], c["env"], timeout)
    nat_files = {f: read_or_none(f) for f in c.get("files", [])}
    for f in c.get("files", []):
        rm_f(f)
    if c.get("pre"):
        c["pre"]()
    lpcmd = [lp, "run", "-c", COLLECTORS, "-o", outdir, "--stats"] + (["--atomic"] if c["atomic"] else []) + \
        ["--", *c["cmd"]]
    lpr = run_once(lpcmd, c["cwd"], c["stdin"], c["env"], timeout)
    probs = []
    if nat["timed_out"] or nat["status"] != c["expect"]:
        probs.append("the native run itself failed: status %s (expected %s): %s" % (
            nat["status"], c["expect"], short(nat["err"][-300:])))
    norm = c["norm"] or (lambda b: b)
    norm_err = c.get("norm_err") or (lambda b: b)
    if lpr["timed_out"]:
        probs.append("timed out after %d s" % timeout)
    if lpr["status"] != nat["status"]:
        probs.append("exit status %s, native %s" % (lpr["status"], nat["status"]))
    if norm(lpr["out"]) != norm(nat["out"]):
        probs.append("stdout differs (%s)" % first_diff(norm(nat["out"]), norm(lpr["out"])))
    e_nat, e_lp = norm_err(nat["err"]), norm_err(LP_LINE.sub(b"", lpr["err"]))
    if e_lp != e_nat:
        probs.append("stderr differs (%s)" % first_diff(e_nat, e_lp))
    if c.get("want_err") and c["want_err"] not in nat["err"]:
        probs.append("native stderr lacks %r" % c["want_err"])
    for f in c.get("files", []):    # files the program writes: the same from both runs
        if nat_files.get(f) != read_or_none(f):
            probs.append("%s differs from the native run's" % os.path.basename(f))
    if not lpr["timed_out"]:
        p2, info = check_outputs(outdir, c["exe"], bolted, timeout)
        probs += p2
    else:
        info = {}
    stats = R.parse_stats(lpr["err"]) or {}
    if not stats:
        probs.append("no `lazyprobe: stats:` line")
    notes = [l for l in lp_lines(lpr["err"]) if re.search(r"native|refus|trapped|indirect jump|error|warning|several threads", l, re.I)
             and "stats:" not in l and not re.match(r"lazyprobe:\s+\d+\s", l)]   # not the calls table
    return {"name": c["name"], "command": q(lpcmd), "cwd": c["cwd"], "stdin": c["stdin"], "problems": probs,
            "native_status": nat["status"], "lp_status": lpr["status"], "native_wall": nat["wall"],
            "lp_wall": lpr["wall"], "stats": stats, "outputs": info, "notes": notes[:6], "outdir": outdir}


def run_make_check(lp, prog, label, cmd, cwd, srctree, timeout):
    outdir = os.path.join(WORK, "out", prog, "make-check")
    shutil.rmtree(outdir, ignore_errors=True)
    os.makedirs(outdir)
    nat = run_once(cmd, cwd, None, None, timeout)
    lpcmd = [lp, "run", "-c", COLLECTORS, "-o", outdir, "--stats", "--", *cmd]
    lpr = run_once(lpcmd, cwd, None, None, timeout)
    probs = []
    if nat["status"] != 0:
        probs.append("the native run itself failed: status %s: %s" % (nat["status"], short(nat["err"][-300:])))
    if lpr["timed_out"]:
        probs.append("timed out after %d s" % timeout)
    if lpr["status"] != nat["status"]:
        probs.append("exit status %s, native %s" % (lpr["status"], nat["status"]))
    if lpr["out"] != nat["out"]:
        probs.append("stdout differs (%s)" % first_diff(nat["out"], lpr["out"]))
    if LP_LINE.sub(b"", lpr["err"]) != nat["err"]:
        probs.append("stderr differs (%s)" % first_diff(nat["err"], LP_LINE.sub(b"", lpr["err"])))
    files = sorted(os.path.relpath(os.path.join(dp, f), outdir) for dp, _, fs in os.walk(outdir) for f in fs)
    sfs = set()
    for f in files:
        if f.endswith(".info"):    # coverage.info, wherever the per-process reports go
            with open(os.path.join(outdir, f), errors="replace") as fh:
                sfs |= {l[3:].strip() for l in fh if l.startswith("SF:")}
    real = os.path.realpath(srctree)
    mine = [s for s in sfs if os.path.realpath(s).startswith(real + os.sep)]
    counters = [f for f in files if f.endswith(".counters")]
    if not mine:
        probs.append("the exec'd test programs were not instrumented: no source file of %s in coverage.info "
                     "(%d counters file(s): %s)" % (PKG.get(prog, prog), len(counters),
                                                    ", ".join(counters[:3])))
    return {"name": label, "command": q(lpcmd), "cwd": cwd, "problems": probs, "native_status": nat["status"],
            "lp_status": lpr["status"], "native_wall": nat["wall"], "lp_wall": lpr["wall"],
            "counters_files": len(counters), "package_sources_in_coverage": len(mine),
            "stats": R.parse_stats(lpr["err"]) or {}, "outdir": outdir}


def main():
    global JOBS, COLLECTORS
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lazyprobe", default=os.path.join(ROOT, "build", "tools", "lazyprobe"))
    ap.add_argument("--mode", choices=("direct", "make-check", "both"), default="direct")
    ap.add_argument("--timeout", type=int, default=180, help="seconds per run")
    ap.add_argument("--jobs", type=int, default=2, help="parallel compiler jobs while building (default 2)")
    ap.add_argument("--collectors", default=COLLECTORS,
                    help="lazyprobe's -c (default %s; `coverage` alone lets hot functions go home, "
                         "and only coverage.info is checked)" % COLLECTORS)
    ap.add_argument("--build-only", action="store_true")
    ap.add_argument("--json", help="write all results here")
    ap.add_argument("only", nargs="*", help="programs: %s (default all)" % " ".join(ALL))
    a = ap.parse_args()
    JOBS = a.jobs
    COLLECTORS = a.collectors
    only = a.only or ALL
    bad = [p for p in only if p not in ALL]
    if bad:
        ap.error("unknown program(s) %s; choose from %s" % (" ".join(bad), " ".join(ALL)))
    lp = os.path.abspath(a.lazyprobe)
    if not a.build_only and not os.access(lp, os.X_OK):
        sys.exit("compat.py: no lazyprobe at %s (build it, or give --lazyprobe)" % lp)
    os.makedirs(WORK, exist_ok=True)
    t_start = time.time()
    built, build_err, build_s = {}, {}, {}
    for prog in only:
        t0 = time.time()
        try:
            built[prog] = BUILDERS[prog]()
        except (RuntimeError, OSError, subprocess.CalledProcessError, IndexError) as e:
            build_err[prog] = str(e)
            log("compat.py: build of %s failed: %s" % (prog, e))
        build_s[prog] = time.time() - t0
    if a.build_only:
        for prog in only:
            print("%s %s" % ("BUILT" if prog in built else "FAILED", prog))
        sys.exit(1 if build_err else 0)
    t_runs = time.time()

    rev = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"], capture_output=True,
                         text=True).stdout.strip()
    results, failures, lines, gcov_res, oracle_res = {}, {}, [], None, {}
    modes = ["direct", "make-check"] if a.mode == "both" else [a.mode]
    for mode in modes:
        for prog in only:
            key = prog if mode == "direct" else prog + " (make check)"
            if prog in build_err:
                failures[key] = "%s: build failed: %s" % (key, build_err[prog])
                lines.append("FAIL %s: build failed: %s" % (key, short(build_err[prog], 300)))
                continue
            t0 = time.time()
            bolted = set()
            if mode == "direct":
                rs = [run_case(lp, prog, c, i, bolted, a.timeout) for i, c in enumerate(CASES[prog](built[prog]))]
            else:
                mc = make_check(prog, built[prog])
                if not mc:
                    continue
                rs = [run_make_check(lp, prog, label, cmd, cwd, tree, a.timeout) for label, cmd, cwd, tree, _ in mc]
            results[key] = {"mode": mode, "package": PKG[prog], "cases": rs, "seconds": time.time() - t0,
                            "build_seconds": build_s.get(prog)}
            badc = [r for r in rs if r["problems"]]
            st = [r["stats"] for r in rs if r.get("stats")]
            summary = "%d case%s" % (len(rs), "s" if len(rs) != 1 else "")
            if st:
                summary += ", instrumented %d-%d functions, native=%d, trapped_calls=%d" % (
                    min(s.get("instrumented", 0) for s in st), max(s.get("instrumented", 0) for s in st),
                    max(s.get("native", 0) for s in st), max(s.get("trapped_calls", 0) for s in st))
                if any(s.get("homed") for s in st):
                    summary += ", homed %d functions, %d one-shot breaks met" % (
                        sum(s.get("homed", 0) for s in st), sum(s.get("home_hits", 0) for s in st))
            if badc:
                why = "; ".join("%s: %s" % (r["name"], " / ".join(r["problems"])) for r in badc[:4])
                if len(badc) > 4:
                    why += "; and %d more case(s)" % (len(badc) - 4)
                line = "FAIL %s: %d of %d cases: %s" % (key, len(badc), len(rs), why)
                failures[key] = "\n".join("%s / %s: %s\n  command: %s (cwd %s)\n  outputs: %s" % (
                    key, r["name"], "\n    ".join(r["problems"]), r["command"], r["cwd"], r["outdir"]) for r in badc)
            else:
                line = "PASS %s (%s)" % (key, summary)
            log("compat.py: " + line)
            lines.append(line)
            if prog == "jsoncpp" and mode == "direct":
                line, gcov_res = gcov_check_jsoncpp(lp, a.timeout)
                log("compat.py: " + line)
                lines.append(line)
            if mode == "direct" and oracle_cases(built[prog], prog):
                line, oracle_res[prog] = oracle_check(lp, prog, built[prog], a.timeout)
                log("compat.py: " + line)
                lines.append(line)
    print("# lazyprobe compatibility suite, %s, lazyprobe %s (tree %s), -c %s" % (
        time.strftime("%Y-%m-%d %H:%M"), lp, rev, COLLECTORS))
    print()
    for prog, res in results.items():
        print("## %s (%s), %.0f s" % (prog, res["package"], res["seconds"]))
        for r in res["cases"]:
            s = r.get("stats") or {}
            print("- %s %s: status %s/%s, %.2f s native, %.2f s lazyprobe, instrumented %s/%s native=%s "
                  "trapped_calls=%s%s%s" % (
                      "FAIL" if r["problems"] else "ok", r["name"], r["native_status"], r["lp_status"],
                      r["native_wall"], r["lp_wall"], s.get("instrumented", "?"), s.get("functions", "?"),
                      s.get("native", "?"), s.get("trapped_calls", "?"),
                      (", " + ", ".join("%s %s" % kv for kv in r.get("outputs", {}).items())) if r.get("outputs") else "",
                      ("\n  - " + "\n  - ".join(r["problems"])) if r["problems"] else ""))
            for n in r.get("notes", []):
                print("  - said: `%s`" % n)
        print()
    for l in lines:
        print(l)
    npass = sum(1 for l in lines if l.startswith("PASS"))
    print("%d passed, %d failed (runs %.0f s, builds %.0f s)" % (npass, len(lines) - npass, time.time() - t_runs,
                                                                 t_runs - t_start))
    out = {"date": time.strftime("%Y-%m-%d %H:%M:%S"), "lazyprobe": lp, "tree": rev, "collectors": COLLECTORS,
           "results": results, "lines": lines, "build_seconds": build_s, "failures": list(failures.values()),
           "jsoncpp_gcov": gcov_res, "oracles": oracle_res}
    for res in out["results"].values():
        for r in res["cases"]:
            r.pop("pre", None)
    R.finish({}, out, a.json)
    sys.exit(1 if len(lines) != npass else 0)


if __name__ == "__main__":
    main()
