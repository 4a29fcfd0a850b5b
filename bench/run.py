#!/usr/bin/env python3
"""lazyprobe benchmarks (not timed tests): CPU-time ratios to native.

    bench/run.py [--rounds N] [--lazyprobe PATH] [--json FILE] [only...]

Workloads (default: all):
  fib   recursive fib(42) (bench/fib.c, gcc -O2 -g, PIE)
  sort  qsort() with a comparator of the executable + recursive tree build/walk (same binary)
  lua   Lua 5.4 from Debian's source (bench/get-lua.sh) running bench/lua/bench.lua
  many  lazy cost: ~3000 distinct functions each called once (bench/gen_many.py); also start-up

For fib, sort and lua three variants run interleaved, round by round (native, gcov, lazyprobe,
native, gcov, lazyprobe, ...): the native -O2 binary, the peer (the same source built
gcc -O2 -g -fprofile-arcs -ftest-coverage, with GCOV_PREFIX pointing into bench/work/gcda) and
`lazyprobe run -c calls --stats -o bench/work/lp-out/W -- <native binary>`.
CPU time = user+sys from os.wait4() on the spawned process, which for lazyprobe includes the
tracee (its waited-for child). Each round gives a ratio variant/native; the table shows the median
of the per-round ratios with min and max. An untimed warm-up round first checks that every variant
prints the same stdout and exit status as native; a variant that fails is reported and dropped.

Everything generated goes to bench/work/ (git-ignored).
"""
import argparse
import json
import os
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
WORK = os.path.join(BENCH, "work")
GCDA = os.path.join(WORK, "gcda")
LOGS = os.path.join(WORK, "logs")
CC = os.environ.get("CC", "gcc")
CFLAGS = ["-O2", "-g"]
GCOV_FLAGS = ["-fprofile-arcs", "-ftest-coverage"]

FIB_ARGS = ["42", "0"]          # ~0.6 s natively here
SORT_ARGS = ["20", "2000"]      # ~0.6 s natively here
LUA_SCALE = "2"                 # ~1.0 s natively here
MANY_N = 3000

ALL = ["fib", "sort", "lua", "many"]


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def sh(cmd, **kw):
    log("+ " + " ".join(shlex.quote(c) for c in cmd))
    subprocess.run(cmd, check=True, **kw)


def newer(target, *sources):
    if not os.path.exists(target):
        return False
    t = os.path.getmtime(target)
    return all(os.path.getmtime(s) <= t for s in sources)


def cc(out, srcs, extra=(), cwd=WORK):
    if newer(out, *srcs, __file__):
        return
    sh([CC, *CFLAGS, *extra, "-o", out + ".tmp", *srcs], cwd=cwd)
    os.replace(out + ".tmp", out)


# ---------------------------------------------------------------------------------------------
# Building the workloads

def build_fib():
    src = os.path.join(BENCH, "fib.c")
    d = os.path.join(WORK, "fib")
    os.makedirs(d, exist_ok=True)
    cc(os.path.join(d, "fib"), [src], cwd=d)
    cc(os.path.join(d, "fib-gcov"), [src], GCOV_FLAGS, cwd=d)
    return os.path.join(d, "fib"), os.path.join(d, "fib-gcov")


def build_lua():
    lua = os.path.join(WORK, "lua", "lua")
    gcov = os.path.join(WORK, "lua", "lua-gcov")
    if not (os.path.exists(lua) and os.path.exists(gcov)):
        sh([os.path.join(BENCH, "get-lua.sh")])
    return lua, gcov


def build_many(n):
    d = os.path.join(WORK, "many")
    os.makedirs(d, exist_ok=True)
    src = os.path.join(d, "many%d.c" % n)
    if not newer(src, os.path.join(BENCH, "gen_many.py")):
        sh([sys.executable, os.path.join(BENCH, "gen_many.py"), "-n", str(n), "-o", src])
    exe = os.path.join(d, "many%d" % n)
    cc(exe, [src], cwd=d)
    floor = os.path.join(d, "trap_floor")
    cc(floor, [os.path.join(BENCH, "trap_floor.c")], cwd=d)
    return exe, floor


# ---------------------------------------------------------------------------------------------
# Running

class Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise Timeout()


def run(cmd, tag, env=None, timeout=300):
    """Spawn cmd (stdout/stderr to files), wait4 it. Returns a dict with cpu/wall/status/out/err."""
    os.makedirs(LOGS, exist_ok=True)
    outp = os.path.join(LOGS, tag + ".out")
    errp = os.path.join(LOGS, tag + ".err")
    fa = [
        (os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, outp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644),
        (os.POSIX_SPAWN_OPEN, 2, errp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644),
    ]
    e = dict(os.environ)
    if env:
        e.update(env)
    t0 = time.perf_counter()
    pid = os.posix_spawnp(cmd[0], cmd, e, file_actions=fa, setpgroup=0)
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(timeout)
    timed_out = False
    try:
        _, status, ru = os.wait4(pid, 0)
    except Timeout:
        timed_out = True
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        _, status, ru = os.wait4(pid, 0)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    wall = time.perf_counter() - t0
    with open(outp, "rb") as f:
        out = f.read()
    with open(errp, "rb") as f:
        err = f.read()
    return {
        "cpu": ru.ru_utime + ru.ru_stime, "user": ru.ru_utime, "sys": ru.ru_stime, "wall": wall,
        "status": os.waitstatus_to_exitcode(status), "timed_out": timed_out,
        "out": out, "err": err, "cmd": cmd, "errfile": errp,
    }


def vcpu_speeds(cpus, loops=10_000_000):
    """CPU seconds of one fixed Python loop on each of CPUS, in order. The
    vCPUs of a shared virtual machine can differ by half at times (2026-11-27: 1.4 s against
    0.9 s for the same native Lua run): a ratio between runs that landed on different vCPUs
    then measures the host, not the variants."""
    out = []
    for c in sorted(cpus):
        pid = os.fork()
        if pid == 0:
            try:
                os.sched_setaffinity(0, {c})
                x = 0
                for i in range(loops):
                    x += i
            finally:
                os._exit(0)
        _, _, ru = os.wait4(pid, 0)
        out.append((c, ru.ru_utime + ru.ru_stime))
    return out


def vcpu_line(speeds):
    return ", ".join("cpu%d %.3f s" % (c, t) for c, t in speeds)


STATS_RE = re.compile(rb"lazyprobe: stats:(.*)")


def parse_stats(err):
    """Last `lazyprobe: stats: k=v ...` line as a dict (numbers when they parse)."""
    m = None
    for m in STATS_RE.finditer(err):
        pass
    if not m:
        return None
    d = {}
    for tok in m.group(1).decode(errors="replace").split():
        if "=" in tok:
            k, v = tok.split("=", 1)
            try:
                d[k] = float(v) if "." in v else int(v)
            except ValueError:
                d[k] = v
    return d


def lp_cmd(lp, name, cmd):
    out = os.path.join(WORK, "lp-out", name)
    os.makedirs(out, exist_ok=True)
    return [lp, "run", "-c", "calls", "-o", out, "--stats", "--", *cmd]


def describe_failure(r, ref):
    why = []
    if r["timed_out"]:
        why.append("timed out")
    if r["status"] != ref["status"]:
        why.append("exit status %s (native %s)" % (r["status"], ref["status"]))
    if r["out"] != ref["out"]:
        why.append("stdout differs from native (%r vs %r)" % (r["out"][:200], ref["out"][:200]))
    return why


def tail(b, n=15):
    lines = b.decode(errors="replace").rstrip("\n").split("\n")
    return "\n".join("    " + l for l in lines[-n:])


# ---------------------------------------------------------------------------------------------

def med(xs):
    return statistics.median(xs) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=7, help="timed rounds (default 7)")
    ap.add_argument("--lazyprobe", default=os.path.join(ROOT, "build", "tools", "lazyprobe"),
                    help="lazyprobe binary (default build/tools/lazyprobe)")
    ap.add_argument("--many", type=int, default=MANY_N, help="functions in the lazy-cost program")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per run before SIGKILL")
    ap.add_argument("--json", help="also write all measurements here")
    ap.add_argument("only", nargs="*", help="workloads: %s (default all)" % " ".join(ALL))
    a = ap.parse_args()
    only = a.only or ALL
    bad = [w for w in only if w not in ALL]
    if bad:
        ap.error("unknown workload(s) %s; choose from %s" % (" ".join(bad), " ".join(ALL)))

    lp = os.path.abspath(a.lazyprobe)
    have_lp = os.access(lp, os.X_OK)
    if not have_lp:
        log("run.py: WARNING: %s not found or not executable: lazyprobe variants skipped" % lp)

    os.makedirs(WORK, exist_ok=True)
    # gcov: keep .gcda files under bench/work/gcda; start each session from zero.
    os.makedirs(GCDA, exist_ok=True)
    for f in os.listdir(GCDA):
        if f.endswith(".gcda"):
            os.unlink(os.path.join(GCDA, f))
    genv = {"GCOV_PREFIX": GCDA, "GCOV_PREFIX_STRIP": "64"}

    # workload -> list of (variant, cmd, env)
    W = {}
    floor_cmds = {}
    if "fib" in only or "sort" in only:
        fib, fibg = build_fib()
        if "fib" in only:
            W["fib"] = [("native", [fib, *FIB_ARGS], None), ("gcov", [fibg, *FIB_ARGS], genv)]
        if "sort" in only:
            W["sort"] = [("native", [fib, *SORT_ARGS], None), ("gcov", [fibg, *SORT_ARGS], genv)]
    if "lua" in only:
        lua, luag = build_lua()
        script = os.path.join(BENCH, "lua", "bench.lua")
        W["lua"] = [("native", [lua, script, LUA_SCALE], None), ("gcov", [luag, script, LUA_SCALE], genv)]
    if "many" in only:
        many, floor = build_many(a.many)
        floor_cmds = {"cross-CPU": [floor, str(a.many)]}
        if shutil.which("taskset"):
            floor_cmds["pinned"] = ["taskset", "-c", "0", floor, str(a.many)]
        W["many"] = [("native", [many], None)]
        W["many0"] = [("native", [many, "0"], None)]   # same program, no function called
    if have_lp:
        for name, vs in W.items():
            vs.append(("lazyprobe", lp_cmd(lp, name, vs[0][1]), None))

    failures = {}   # (workload, variant) -> text
    refs = {}       # workload -> native warm-up run (reference stdout and status)
    # Warm-up round: untimed, checks outputs against native.
    for name, vs in W.items():
        ref = None
        for variant, cmd, env in vs:
            r = run(cmd, "%s-%s-warmup" % (name, variant), env, a.timeout)
            if ref is None:
                ref = refs[name] = r
                if r["status"] != 0 or r["timed_out"]:
                    sys.exit("run.py: native %s failed (status %s): %s\n%s" %
                             (name, r["status"], " ".join(cmd), tail(r["err"])))
                continue
            why = describe_failure(r, ref)
            if variant == "lazyprobe" and parse_stats(r["err"]) is None:
                why.append("no `lazyprobe: stats:` line on stderr")
            if why:
                txt = "%s / %s: %s\n  command: %s\n  stderr (%s, last lines):\n%s" % (
                    name, variant, "; ".join(why), " ".join(shlex.quote(c) for c in cmd),
                    r["errfile"], tail(r["err"]))
                failures[(name, variant)] = txt
                log("run.py: FAILED " + txt)
        W[name] = [v for v in vs if (name, v[0]) not in failures]

    def lp_id():
        try:
            st = os.stat(lp)
            return (st.st_mtime_ns, st.st_size)
        except OSError:
            return None
    lp_at_start = lp_id() if have_lp else None

    # Timed rounds, interleaved A B C A B C ...
    res = {name: {v[0]: [] for v in vs} for name, vs in W.items()}
    floors = {}     # trap_floor label -> [(wall_us, cpu_us) per round]
    for rnd in range(a.rounds):
        for name, vs in W.items():
            for variant, cmd, env in vs:
                if (name, variant) in failures:
                    continue
                r = run(cmd, "%s-%s-%d" % (name, variant, rnd), env, a.timeout)
                why = describe_failure(r, refs[name])
                if why:
                    failures[(name, variant)] = "%s / %s: failed in timed round %d: %s\n  command: %s\n  stderr (%s, last lines):\n%s" % (
                        name, variant, rnd + 1, "; ".join(why), " ".join(shlex.quote(c) for c in cmd),
                        r["errfile"], tail(r["err"]))
                    log("run.py: FAILED " + failures[(name, variant)])
                    if variant == "native":
                        sys.exit(1)
                    continue
                rec = {k: r[k] for k in ("cpu", "user", "sys", "wall", "status")}
                rec["out"] = r["out"]
                if variant == "lazyprobe":
                    rec["stats"] = parse_stats(r["err"]) or {}
                res[name][variant].append(rec)
        for label, cmd in floor_cmds.items():
            r = run(cmd, "trap_floor-%s-%d" % (label.replace(" ", "_"), rnd), None, a.timeout)
            m = re.search(rb"wall_us_per_trap=([0-9.]+) cpu_us_per_trap=([0-9.]+)", r["out"])
            if r["status"] == 0 and m:
                floors.setdefault(label, []).append((float(m.group(1)), float(m.group(2))))
        log("run.py: round %d/%d done" % (rnd + 1, a.rounds))

    if have_lp and lp_id() != lp_at_start:
        failures[("lazyprobe", "binary")] = (
            "%s CHANGED during the run (rebuilt?): the lazyprobe figures mix two builds; run again" % lp)
        log("run.py: WARNING: " + failures[("lazyprobe", "binary")])
    report(a, lp, have_lp, res, failures, floors)


def ratios(res, name, variant, key="cpu"):
    nat = res[name]["native"]
    var = res[name].get(variant, [])
    return [v[key] / n[key] for n, v in zip(nat, var)]


def report(a, lp, have_lp, res, failures, floors):
    cpu = ""
    try:
        for l in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
            if l.startswith("Model name:"):
                cpu = l.split(":", 1)[1].strip()
    except OSError:
        pass
    rev = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"],
                         capture_output=True, text=True).stdout.strip() or "?"
    print("# lazyprobe benchmarks, %s, %s (%d CPUs), %d rounds" %
          (time.strftime("%Y-%m-%d %H:%M"), cpu, os.cpu_count(), a.rounds))
    print()
    main_rows = [n for n in res if n not in ("many", "many0")]
    if have_lp:
        print("lazyprobe: %s (built %s; tree at %s)" % (
            lp, time.strftime("%Y-%m-%d %H:%M", time.localtime(os.path.getmtime(lp))), rev))
        print()
    if main_rows:
        print("CPU time (user+sys) ratio to native: median of per-round ratios [min–max]; native median in s.")
        print()
    if main_rows:
        print("| workload | native CPU s | gcc -fprofile-arcs | lazyprobe -c calls | lazyprobe instrumented / functions | trapped_calls |")
        print("|---|---|---|---|---|---|")
    out = {"date": time.strftime("%Y-%m-%d %H:%M:%S"), "cpu": cpu, "rounds": a.rounds,
           "lazyprobe": lp if have_lp else None, "workloads": {}, "failures": [v for v in failures.values()]}

    def cell(name, variant):
        if (name, variant) in failures:
            return "FAILED"
        rs = ratios(res, name, variant)
        if not rs:
            return "n/a"
        return "%.3f [%.3f–%.3f]" % (med(rs), min(rs), max(rs))

    for name, vs in res.items():
        nat = [r["cpu"] for r in vs["native"]]
        wl = {"native_cpu_s": nat}
        for variant in ("gcov", "lazyprobe"):
            if variant in vs:
                wl[variant + "_ratio"] = ratios(res, name, variant)
                wl[variant + "_wall_ratio"] = ratios(res, name, variant, "wall")
        st = [r["stats"] for r in vs.get("lazyprobe", [])]
        wl["lazyprobe_stats"] = st
        out["workloads"][name] = wl
        if name in ("many", "many0"):
            continue
        inst = "%s / %s" % (st[-1].get("instrumented", "?"), st[-1].get("functions", "?")) if st else "n/a"
        tc = str(st[-1].get("trapped_calls", "?")) if st else "n/a"
        print("| %s | %.3f | %s | %s | %s | %s |" % (name, med(nat), cell(name, "gcov"),
                                                     cell(name, "lazyprobe"), inst, tc))
    if main_rows:
        print()

    if "many" in res:
        vs = res["many"]
        print("Lazy cost (program with %d distinct functions, each called once), median [min–max]:" % a.many)
        print()
        nat = vs["native"]
        lps = vs.get("lazyprobe", [])
        if ("many", "lazyprobe") in failures:
            print("- lazyprobe FAILED (see below)")
        elif not lps:
            print("- lazyprobe not run")
        else:
            z = res.get("many0", {})
            nat0, lp0 = z.get("native", []), z.get("lazyprobe", [])
            gross_cpu, gross_wall, diff_cpu, diff_wall, per_stat, su = [], [], [], [], [], []
            for i, (n, l) in enumerate(zip(nat, lps)):
                s = l["stats"]
                k = s.get("instrumented") or 0
                if not k:
                    continue
                gross_cpu.append((l["cpu"] - n["cpu"]) / k * 1e6)
                gross_wall.append((l["wall"] - n["wall"]) / k * 1e6)
                if "instrument_us" in s:
                    per_stat.append(s["instrument_us"] / k)
                if "startup_us" in s:
                    su.append(s["startup_us"])
                if i < len(nat0) and i < len(lp0):
                    k0 = lp0[i]["stats"].get("instrumented") or 0
                    if k > k0:
                        diff_cpu.append(((l["cpu"] - n["cpu"]) - (lp0[i]["cpu"] - nat0[i]["cpu"])) / (k - k0) * 1e6)
                        diff_wall.append(((l["wall"] - n["wall"]) - (lp0[i]["wall"] - nat0[i]["wall"])) / (k - k0) * 1e6)
            s = lps[-1]["stats"]

            def mm(xs, fmt="%.1f"):
                if not xs:
                    return "n/a"
                return (fmt + " [" + fmt + "–" + fmt + "]") % (med(xs), min(xs), max(xs))

            def ms(rs):
                return "%.1f / %.1f" % (med([r["cpu"] for r in rs]) * 1e3, med([r["wall"] for r in rs]) * 1e3) if rs else "n/a"
            print("| measure | value |")
            print("|---|---|")
            print("| functions / instrumented / native / trapped_calls (all called) | %s / %s / %s / %s |" % (
                s.get("functions", "?"), s.get("instrumented", "?"), s.get("native", "?"), s.get("trapped_calls", "?")))
            if lp0:
                print("| instrumented when none is called (`many 0`: main, _start, ...) | %s |" % lp0[-1]["stats"].get("instrumented", "?"))
            print("| native, all called: CPU ms / wall ms | %s |" % ms(nat))
            print("| lazyprobe, all called: CPU ms / wall ms | %s |" % ms(lps))
            print("| native, none called: CPU ms / wall ms | %s |" % ms(nat0))
            print("| lazyprobe, none called: CPU ms / wall ms | %s |" % ms(lp0))
            print("| **µs per function, instrument_us / instrumented (--stats; tracer's trap-to-resume time)** | %s |" % mm(per_stat, "%.2f"))
            print("| µs per function, end to end, CPU: ((lp − native) − (lp − native)<sub>none called</sub>) / Δinstrumented | %s |" % mm(diff_cpu))
            print("| µs per function, end to end, wall: same with wall time | %s |" % mm(diff_wall))
            print("| µs per function, gross, CPU: (lp − native) / instrumented (includes start-up, exit, report) | %s |" % mm(gross_cpu))
            print("| µs per function, gross, wall: (lp − native) / instrumented | %s |" % mm(gross_wall))
            print("| startup_us (--stats) | %s |" % mm(su, "%.0f"))
            for label, xs in floors.items():
                print("| floor (bench/trap_floor.c, %s): bare int3 → ptrace stop → GETREGS → CONT, µs per trap, wall / CPU | %s / %s |" % (
                    label, mm([x[0] for x in xs]), mm([x[1] for x in xs])))
            out["trap_floor"] = floors
            out["workloads"]["many"].update(per_fn_gross_cpu_us=gross_cpu, per_fn_gross_wall_us=gross_wall,
                                            per_fn_diff_cpu_us=diff_cpu, per_fn_diff_wall_us=diff_wall,
                                            per_fn_stats_us=per_stat, startup_us=su)
        print()

    if have_lp:
        print("Start-up (startup_us from --stats: launch to first instruction with all entry breaks written), median [min–max]:")
        print()
        print("| program | functions | startup_us |")
        print("|---|---|---|")
        for name, vs in res.items():
            st = [r["stats"] for r in vs.get("lazyprobe", []) if "startup_us" in r["stats"]]
            if st:
                su = [x["startup_us"] for x in st]
                print("| %s | %s | %.0f [%.0f–%.0f] |" % (name, st[-1].get("functions", "?"), med(su), min(su), max(su)))
        print()

    finish(failures, out, a.json)


def finish(failures, out, json_path):
    """Prints the failures (markdown) and writes OUT as JSON to JSON_PATH if given."""
    if failures:
        print("Failures:")
        print()
        for t in failures.values():
            print("```\n" + t + "\n```")
        print()
    if json_path:
        def clean(o):
            if isinstance(o, bytes):
                return o.decode(errors="replace")
            if isinstance(o, dict):
                return {k: clean(v) for k, v in o.items()}
            if isinstance(o, list):
                return [clean(v) for v in o]
            return o
        with open(json_path, "w") as f:
            json.dump(clean(out), f, indent=1, default=str)


if __name__ == "__main__":
    main()
