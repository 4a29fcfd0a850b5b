#!/usr/bin/env python3
"""Processes and threads under lazyprobe (benchmarks of issue 4, not tests).

    bench/procs.py [--rounds N] [--lazyprobe PATH] [--json FILE] [--timeout S] [only...]

Workloads (default: all):
  forkexec  per-process cost of following children: bench/procs/forkexec.c fork()s and execv()s
            bench/procs/tiny.c (3 small functions, 11 calls) 1000 times, waiting for each.
            Variants: native; `lazyprobe run -c calls -- forkexec 1000 tiny`. Printed: the ratio
            to native and (lazyprobe − native) / 1000 per child, wall and CPU, and how many
            children were instrumented (counters files in -o DIR besides the driver's, and
            whether calls.json names tiny's functions): until lazyprobe follows exec, the children
            run natively and the figure is only the cost of tracing the fork/exec/exit events.
            Reference: `lazyprobe run -c calls -- tiny` run by forkexec 100 times (a fresh tracer per
            process), per process.
  threads   multithreaded slowdown: bench/procs/threads.c, T = 1, 2, 4 threads sharing 80 M
            iterations of a loop that calls mid() which calls leaf() twice (240 M calls in all,
            whatever T). Variants: native; `lazyprobe run -c calls`; `lazyprobe run -c calls
            --atomic`. Also the leaf count each lazyprobe run reported against the exact 160 M
            (without --atomic, threads that increment one counter at once lose updates).
  xzmt      a real threaded program: xz -T2 --block-size=256KiB -6 on Lua's tarball (bench/compat.py
            builds it: run `bench/compat.py xz-mt` first), same three variants.
  attach    attach latency on a process with ~10000 functions (bench/gen_many.py -n 10000 linked
            with bench/procs/attach_target.c, every function called once before attaching):
            time from starting `lazyprobe attach -c calls --stats -o DIR PID` to (1) the first line
            on its stderr that mentions attaching, (2) the first counters file in DIR; startup_us
            of its --stats line when it ends (SIGINT, then SIGTERM). Skipped, with a message, when
            this lazyprobe has no `attach` command.

Measurements as bench/run.py: CPU = user+sys from wait4 (for lazyprobe: tracer + tracee), wall
from perf_counter; variants interleaved round by round after an untimed warm-up round that checks
stdout and exit status against native; the tables give the median of per-round ratios
variant/native with min and max. JSON through bench/run.py's finish(). Builds go to bench/work/procs.
"""
import argparse
import glob
import json
import os
import re
import signal
import shutil
import subprocess
import sys
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH)
import run as R  # noqa: E402

ROOT = R.ROOT
WORK = os.path.join(R.WORK, "procs")
SRC = os.path.join(BENCH, "procs")
ALL = ["forkexec", "threads", "xzmt", "attach"]
N_CHILDREN = 1000
N_EACH = 100
THREAD_ITERS = 80000000
THREADS = [1, 2, 4]
ATTACH_FUNCS = 10000
XZ = os.path.join(R.WORK, "compat", "xz", "build", "src", "xz", "xz")
XZ_IN = os.path.join(R.WORK, "compat", "input.tar")
log = R.log
med = R.med


def cc(out, srcs, extra=()):
    if R.newer(out, *srcs, __file__):
        return out
    R.sh([R.CC, "-O2", "-g", "-Wall", *extra, "-o", out + ".tmp", *srcs])
    os.replace(out + ".tmp", out)
    return out


def lp_out(name):
    d = os.path.join(WORK, "out", name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def has_attach(lp):
    r = subprocess.run([lp], capture_output=True, text=True)
    r2 = subprocess.run([lp, "attach", "--help"], capture_output=True, text=True)
    usage = (r.stdout + r.stderr).strip()
    return re.search(r"lazyprobe attach", usage + r2.stdout + r2.stderr) is not None, usage


def leaf_count(outdir):
    try:
        with open(os.path.join(outdir, "calls.json")) as f:
            j = json.load(f)
    except (OSError, ValueError):
        return None
    return sum(fn.get("count", 0) for fn in j.get("functions", []) if fn.get("name") == "leaf")


def children_instrumented(outdir, driver_pid=None):
    """(counters files, calls.json files naming tiny's functions) in OUTDIR, recursively."""
    counters, named = 0, 0
    for dp, _, fs in os.walk(outdir):
        for f in fs:
            p = os.path.join(dp, f)
            if f.endswith(".counters"):
                counters += 1
            elif f.endswith(".json") and f.startswith("calls"):
                try:
                    with open(p) as fh:
                        j = json.load(fh)
                    if any(fn.get("name") == "sum_sq" and fn.get("count") for fn in j.get("functions", [])):
                        named += 1
                except (OSError, ValueError):
                    pass
    return counters, named


def variants(lp, a, only):
    """workload -> [(variant, cmd, outdir or None)]"""
    os.makedirs(WORK, exist_ok=True)
    W = {}
    if "forkexec" in only:
        fe = cc(os.path.join(WORK, "forkexec"), [os.path.join(SRC, "forkexec.c")])
        tiny = cc(os.path.join(WORK, "tiny"), [os.path.join(SRC, "tiny.c")])
        d = os.path.join(WORK, "out", "forkexec")
        W["forkexec"] = [("native", [fe, str(N_CHILDREN), tiny], None),
                         ("lazyprobe", [lp, "run", "-c", "calls", "--stats", "-o", d, "--", fe, str(N_CHILDREN), tiny], d)]
        d2 = os.path.join(WORK, "out", "each")
        W["each"] = [("native", [fe, str(N_EACH), tiny], None),
                     ("lazyprobe", [fe, str(N_EACH), lp, "run", "-c", "calls", "-o", d2, "--", tiny], d2)]
    if "threads" in only:
        thr = cc(os.path.join(WORK, "threads"), [os.path.join(SRC, "threads.c")], ["-pthread"])
        for t in THREADS:
            name = "threads%d" % t
            cmd = [thr, str(t), str(THREAD_ITERS)]
            d, d2 = os.path.join(WORK, "out", name), os.path.join(WORK, "out", name + "-atomic")
            W[name] = [("native", cmd, None),
                       ("lazyprobe", [lp, "run", "-c", "calls", "--stats", "-o", d, "--", *cmd], d),
                       ("atomic", [lp, "run", "-c", "calls", "--atomic", "--stats", "-o", d2, "--", *cmd], d2)]
    if "xzmt" in only:
        if not (os.access(XZ, os.X_OK) and os.path.exists(XZ_IN)):
            log("procs.py: xzmt skipped: %s or %s missing; run `bench/compat.py xz-mt` first" % (XZ, XZ_IN))
        else:
            cmd = [XZ, "-T2", "--block-size=256KiB", "-6", "-c", XZ_IN]
            d, d2 = os.path.join(WORK, "out", "xzmt"), os.path.join(WORK, "out", "xzmt-atomic")
            W["xzmt"] = [("native", cmd, None),
                         ("lazyprobe", [lp, "run", "-c", "calls", "--stats", "-o", d, "--", *cmd], d),
                         ("atomic", [lp, "run", "-c", "calls", "--atomic", "--stats", "-o", d2, "--", *cmd], d2)]
    return W


def attach_bench(lp, rounds, timeout):
    ok, usage = has_attach(lp)
    if not ok:
        return {"skipped": "this lazyprobe has no `attach` command yet (%s: %s)" % (lp, " / ".join(usage.splitlines()[:3]))}
    src = os.path.join(WORK, "many%d.c" % ATTACH_FUNCS)
    if not R.newer(src, os.path.join(BENCH, "gen_many.py")):
        R.sh([sys.executable, os.path.join(BENCH, "gen_many.py"), "-n", str(ATTACH_FUNCS), "-o", src])
    # -Dmain=many_main for the generated program only: compiled apart from attach_target.c
    objm = os.path.join(WORK, "many_attach.o")
    if not R.newer(objm, src, __file__):
        R.sh([R.CC, "-O2", "-g", "-Dmain=many_main", "-c", "-o", objm, src])
    exe = cc(os.path.join(WORK, "attach_target"), [objm, os.path.join(SRC, "attach_target.c")])
    res = []
    for rnd in range(rounds):
        tgt = subprocess.Popen([exe], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        line = tgt.stderr.readline()
        if not line.startswith(b"ready"):
            tgt.kill()
            return {"error": "target did not start: %r" % line}
        outdir = lp_out("attach-%d" % rnd)
        errp = os.path.join(WORK, "attach-%d.err" % rnd)
        t0 = time.perf_counter()
        with open(errp, "wb") as ef:
            p = subprocess.Popen([lp, "attach", "-c", "calls", "--stats", "-o", outdir, str(tgt.pid)],
                                 stdout=subprocess.DEVNULL, stderr=ef)
            t_line = t_file = None
            # until both are seen, or 1 s after the counters file if no line mentions attaching
            while time.perf_counter() - t0 < timeout and (t_line is None or t_file is None) and \
                    not (t_file is not None and time.perf_counter() - t0 > t_file + 1.0):
                if t_file is None and glob.glob(os.path.join(outdir, "*.counters")):
                    t_file = time.perf_counter() - t0
                if t_line is None:
                    with open(errp, "rb") as f:
                        if re.search(rb"attach", f.read(), re.I):
                            t_line = time.perf_counter() - t0
                if p.poll() is not None:
                    break
                time.sleep(0.0005)
            time.sleep(0.2)     # let it see some first hits
            t_sig = time.perf_counter()
            for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
                if p.poll() is not None:
                    break
                p.send_signal(sig)
                try:
                    p.wait(5)
                except subprocess.TimeoutExpired:
                    pass
            t_end = time.perf_counter() - t_sig
        alive = tgt.poll() is None
        tgt.kill()
        tgt.wait()
        with open(errp, "rb") as f:
            err = f.read()
        st = R.parse_stats(err) or {}
        res.append({"to_attach_line_s": t_line, "to_counters_file_s": t_file, "status": p.returncode, "sigint_to_exit_s": t_end,
                    "target_alive_after_detach": alive, "stats": st,
                    "stderr": err.decode(errors="replace")[-800:]})
        log("procs.py: attach round %d: line %s s, counters file %s s, stats %s" % (rnd + 1, t_line, t_file, st))
    return {"rounds": res, "functions_in_target": ATTACH_FUNCS}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--lazyprobe", default=os.path.join(ROOT, "build", "tools", "lazyprobe"))
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--json")
    ap.add_argument("only", nargs="*", help="workloads: %s (default all)" % " ".join(ALL))
    a = ap.parse_args()
    only = a.only or ALL
    if any(w not in ALL for w in only):
        ap.error("workloads: %s" % " ".join(ALL))
    lp = os.path.abspath(a.lazyprobe)
    if not os.access(lp, os.X_OK):
        sys.exit("procs.py: no lazyprobe at %s" % lp)
    lp_id = os.stat(lp).st_mtime_ns
    W = variants(lp, a, only)
    failures, refs = {}, {}
    t_start = time.time()

    def check(name, variant, r, rnd):
        ref = refs[name]
        why = R.describe_failure(r, ref)
        if why:
            failures[(name, variant)] = "%s / %s (round %s): %s\n  command: %s\n  stderr (%s):\n%s" % (
                name, variant, rnd, "; ".join(why), " ".join(r["cmd"]), r["errfile"], R.tail(r["err"]))
            log("procs.py: FAILED " + failures[(name, variant)])
            return False
        return True

    for name, vs in W.items():
        for variant, cmd, d in vs:
            if d:
                lp_out(os.path.relpath(d, os.path.join(WORK, "out")))
            r = R.run(cmd, "procs-%s-%s-warmup" % (name, variant), None, a.timeout)
            if variant == "native":
                refs[name] = r
                if r["status"] != 0:
                    sys.exit("procs.py: native %s failed: %s" % (name, R.tail(r["err"])))
            else:
                check(name, variant, r, "warm-up")
    res = {name: {v[0]: [] for v in vs} for name, vs in W.items()}
    extra = {}
    for rnd in range(a.rounds):
        for name, vs in W.items():
            others = vs[1:]
            k = rnd % len(others) if others else 0
            for variant, cmd, d in [vs[0]] + others[k:] + others[:k]:
                if (name, variant) in failures:
                    continue
                if d:
                    lp_out(os.path.relpath(d, os.path.join(WORK, "out")))
                r = R.run(cmd, "procs-%s-%s-%d" % (name, variant, rnd), None, a.timeout)
                if variant != "native" and not check(name, variant, r, rnd + 1):
                    continue
                rec = {k2: r[k2] for k2 in ("cpu", "user", "sys", "wall")}
                rec["stats"] = R.parse_stats(r["err"]) or {}
                if d and name.startswith("threads"):
                    rec["leaf"] = leaf_count(d)
                if d and name in ("forkexec", "each"):
                    rec["counters_files"], rec["calls_naming_tiny"] = children_instrumented(d)
                res[name][variant].append(rec)
        log("procs.py: round %d/%d done (%.0f s)" % (rnd + 1, a.rounds, time.time() - t_start))
    if "attach" in only:
        extra["attach"] = attach_bench(lp, a.rounds, 30)
    if os.stat(lp).st_mtime_ns != lp_id:
        failures[("lazyprobe", "binary")] = "%s CHANGED during the run: the figures mix two builds" % lp
    report(a, lp, res, extra, failures, time.time() - t_start)


def ratios(res, name, v, key="cpu"):
    return [x[key] / n[key] for n, x in zip(res[name]["native"], res[name].get(v, []))]


def mm(xs, fmt="%.3f"):
    if not xs:
        return "n/a"
    return (fmt + " [" + fmt + "–" + fmt + "]") % (med(xs), min(xs), max(xs))


def report(a, lp, res, extra, failures, elapsed):
    cpu = ""
    for l in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
        if l.startswith("Model name:"):
            cpu = l.split(":", 1)[1].strip()
    rev = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"], capture_output=True,
                         text=True).stdout.strip()
    print("# lazyprobe processes and threads, %s, %s (%d CPUs), %d rounds, %.0f s" % (
        time.strftime("%Y-%m-%d %H:%M"), cpu, os.cpu_count(), a.rounds, elapsed))
    print()
    print("lazyprobe: %s (built %s; bench/ at %s)" % (
        lp, time.strftime("%Y-%m-%d %H:%M", time.localtime(os.path.getmtime(lp))), rev))
    print()
    out = {"date": time.strftime("%Y-%m-%d %H:%M:%S"), "cpu": cpu, "rounds": a.rounds, "lazyprobe": lp,
           "tree": rev, "workloads": res, "extra": extra, "failures": list(failures.values())}
    if "forkexec" in res:
        print("Following children: `forkexec %d tiny` (fork + execv + wait, %d times); per child = "
              "(lazyprobe − native) / %d; median [min–max]:" % (N_CHILDREN, N_CHILDREN, N_CHILDREN))
        print()
        print("| variant | native wall s | CPU ratio | wall ratio | µs per child, CPU | µs per child, wall | counters files / calls.json naming tiny's functions (last run) |")
        print("|---|---|---|---|---|---|---|")
        for name, n in (("forkexec", N_CHILDREN), ("each", N_EACH)):
            if name not in res:
                continue
            nat, lps = res[name]["native"], res[name].get("lazyprobe", [])
            pc = [(x["cpu"] - y["cpu"]) / n * 1e6 for y, x in zip(nat, lps)]
            pw = [(x["wall"] - y["wall"]) / n * 1e6 for y, x in zip(nat, lps)]
            label = ("`lazyprobe run -c calls -- forkexec %d tiny`" % n if name == "forkexec" else
                     "reference: `forkexec %d lazyprobe run -c calls -- tiny` (a tracer per process)" % n)
            inst = "%s / %s" % (lps[-1].get("counters_files"), lps[-1].get("calls_naming_tiny")) if lps else "n/a"
            print("| %s | %.3f | %s | %s | %s | %s | %s |" % (
                label, med([x["wall"] for x in nat]), "FAILED" if (name, "lazyprobe") in failures else mm(ratios(res, name, "lazyprobe")),
                mm(ratios(res, name, "lazyprobe", "wall")), mm(pc, "%.0f"), mm(pw, "%.0f"), inst))
        print()
    trows = [n for n in res if n.startswith("threads") or n == "xzmt"]
    if trows:
        print("Threads: CPU (user+sys) and wall ratio to native, median of per-round ratios [min–max]; "
              "leaf count reported / exact (threadsT: %d M iterations, %d M leaf calls):" % (
                  THREAD_ITERS // 1000000, 2 * THREAD_ITERS // 1000000))
        print()
        print("| workload | native CPU s / wall s | -c calls: CPU | wall | -c calls --atomic: CPU | wall | leaf counted, -c calls (min–max of runs) | leaf counted, --atomic |")
        print("|---|---|---|---|---|---|---|---|")
        for name in trows:
            nat = res[name]["native"]

            def leaves(v):
                xs = [x.get("leaf") for x in res[name].get(v, []) if x.get("leaf") is not None]
                if not xs:
                    return "n/a"
                exact = 2 * THREAD_ITERS
                return "%.4f–%.4f of exact" % (min(xs) / exact, max(xs) / exact)
            cells = []
            for v in ("lazyprobe", "atomic"):
                if (name, v) in failures:
                    cells += ["FAILED", "FAILED"]
                else:
                    cells += [mm(ratios(res, name, v)), mm(ratios(res, name, v, "wall"))]
            print("| %s | %.3f / %.3f | %s | %s | %s |" % (
                name, med([x["cpu"] for x in nat]), med([x["wall"] for x in nat]), " | ".join(cells),
                leaves("lazyprobe") if name != "xzmt" else "—", leaves("atomic") if name != "xzmt" else "—"))
        print()
    if "attach" in extra:
        x = extra["attach"]
        print("Attach latency (%d functions):" % ATTACH_FUNCS)
        print()
        if "skipped" in x:
            print("- skipped: " + x["skipped"])
        elif "error" in x:
            print("- error: " + x["error"])
        else:
            rs = x["rounds"]
            tl = [r["to_attach_line_s"] * 1e3 for r in rs if r["to_attach_line_s"] is not None]
            tf = [r["to_counters_file_s"] * 1e3 for r in rs if r["to_counters_file_s"] is not None]
            su = [r["stats"].get("startup_us", 0) / 1e3 for r in rs if r["stats"]]
            print("| measure | ms, median [min–max] |")
            print("|---|---|")
            print("| start of `lazyprobe attach` → first stderr line mentioning attach | %s (%d of %d rounds) |" % (mm(tl, "%.1f"), len(tl), len(rs)))
            print("| start of `lazyprobe attach` → first counters file in -o DIR | %s (%d of %d rounds) |" % (mm(tf, "%.1f"), len(tf), len(rs)))
            print("| startup_us of its --stats line | %s (%d of %d rounds) |" % (mm(su, "%.1f"), len(su), len(rs)))
            te = [r["sigint_to_exit_s"] * 1e3 for r in rs]
            print("| SIGINT to `lazyprobe attach` → it exits (detach and report) | %s |" % mm(te, "%.1f"))
            print()
            print("- target alive after lazyprobe ended: %s; last stats: %s" % (
                [r["target_alive_after_detach"] for r in rs], rs[-1]["stats"]))
        print()
    R.finish(failures, out, a.json)


if __name__ == "__main__":
    main()
