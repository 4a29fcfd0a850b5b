#!/usr/bin/env python3
"""lazyprobe's coverage and arcs collectors against their peers (benchmarks, not tests).

    bench/collectors.py [--rounds N] [--lazyprobe PATH] [--json FILE] [--timeout S] [--pin CPU] [only...]

Workloads (default: all), built by bench/build-collectors.sh from Debian's sources
(bench/get-src.sh) with gcc -O2 -g -fno-reorder-blocks-and-partition -Wl,--emit-relocs:
  lua     Lua 5.4 running bench/lua/bench.lua 2          (training input: bench.lua 1)
  sqlite  speedtest1 --memdb --verify --size 50          (training input: --size 25)
  xz      xz -6 -T1 -c on 1.5 MiB of bench/gen_text.py   (training input: another 1 MiB, seed 2)

Variants, interleaved round by round (native first, the others in an order rotated every round):
  native     the -O2 binary
  gcov       the same sources + -fprofile-arcs -ftest-coverage (GCOV_PREFIX=bench/work/gcda-c3)
  coverage   lazyprobe run -c coverage --stats -- native
  arcs       lazyprobe run -c arcs --stats -- native
  cover-probes, arcs-probes  the same probes with an empty report (bench/collectors/*-noreport.lua)
  bolt-instr llvm-bolt-16 native -instrument (profile written at exit into bench/work/c3/W/)
  bolt-arcs  llvm-bolt-16 native -data=arcs.fdata (from `lazyprobe run -c arcs` on the training input)
  bolt-own   llvm-bolt-16 native -data=own.fdata  (from bolt-instr on the same training input)
  both optimized with -reorder-blocks=ext-tsp -reorder-functions=hfsort -split-functions
  -split-all-cold -dyno-stats (+ -report-stale, which only prints).

The report's first line gives each vCPU's speed on one fixed loop, at the start and at the end:
on a shared virtual machine one vCPU can run half as fast as the other for minutes, and a variant
that landed on the slow one then looks that much worse. --pin CPU runs every variant on that one
CPU (lazyprobe's tracer then shares it with the program, which costs lazyprobe, not the peers).
CPU time = user+sys from wait4 (for lazyprobe: tracer + tracee). Per round a ratio
variant/native of the same round; the table gives the median with min and max, plus the medians
of the per-round ratios arcs/gcov and bolt-arcs/bolt-own. An untimed warm-up round checks every
variant's stdout (sqlite: with the timings masked) and exit status against native's. Probe counts
come from one extra untimed run `lazyprobe run -c arcs,bench/probecount.lua` on the test input.
Everything generated goes to bench/work/ (git-ignored).
"""
import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH)
import run as R  # noqa: E402  (bench/run.py: run(), parse_stats(), tail(), med())

ROOT = R.ROOT
WORK = R.WORK
C3 = os.path.join(WORK, "c3")
GCDA = os.path.join(WORK, "gcda-c3")
LPOUT = os.path.join(WORK, "lp-out")
BOLT = "llvm-bolt-16"
BOLT_RT = "llvm-16/lib/libbolt_rt_instr.a"   # llvm-bolt prepends /usr/lib/ itself
BOLT_OPT = ["-reorder-blocks=ext-tsp", "-reorder-functions=hfsort", "-split-functions",
            "-split-all-cold", "-dyno-stats", "-report-stale"]
ALL = ["lua", "sqlite", "xz"]
VARIANTS = ["native", "gcov", "coverage", "cover-probes", "arcs", "arcs-probes", "bolt-instr", "bolt-arcs",
            "bolt-own"]
# the probes of -c coverage / -c arcs with an empty report (bench/collectors/*-noreport.lua):
# separates the cost of the probes (and start-up, first hits) from the report writers'
NOREPORT = {"cover-probes": "cover-noreport.lua", "arcs-probes": "arcs-noreport.lua"}
log = R.log


def q(cmd):
    return " ".join(shlex.quote(c) for c in cmd)


def workloads(only):
    sh = [os.path.join(BENCH, "build-collectors.sh"), *only]
    R.sh(sh)
    W = {}
    if "lua" in only:
        d = os.path.join(C3, "lua")
        script = os.path.join(BENCH, "lua", "bench.lua")
        W["lua"] = dict(dir=d, exe=os.path.join(d, "lua"), gcov=os.path.join(d, "lua-gcov"),
                        test=[script, "2"], train=[script, "1"], norm=None)
    if "sqlite" in only:
        d = os.path.join(C3, "sqlite")
        W["sqlite"] = dict(dir=d, exe=os.path.join(d, "speedtest1"), gcov=os.path.join(d, "speedtest1-gcov"),
                           test=["--memdb", "--verify", "--size", "50"],
                           train=["--memdb", "--verify", "--size", "25"],
                           norm=lambda b: re.sub(rb" *[0-9]+\.[0-9]+s", b" Ts", b))  # padded to the width
    if "xz" in only:
        d = os.path.join(C3, "xz")
        test, train = os.path.join(d, "in-test.txt"), os.path.join(d, "in-train.txt")
        gen = os.path.join(BENCH, "gen_text.py")
        for path, seed, mib in ((test, 1, 1.5), (train, 2, 1.0)):
            if not R.newer(path, gen):
                R.sh([sys.executable, gen, "-s", str(seed), "-m", str(mib), "-o", path])
        W["xz"] = dict(dir=d, exe=os.path.join(d, "xz"), gcov=os.path.join(d, "xz-gcov"),
                       test=["-6", "-T1", "-c", test], train=["-6", "-T1", "-c", train], norm=None)
    return W


def bolt_log_lines(text):
    """The lines of llvm-bolt's output that say how the profile was taken."""
    keep = []
    for l in text.splitlines():
        if re.search(r"WARNING|ERROR|stale|profile|inconsistent|mismatch|invalid|Unable|ignored|"
                     r"functions in the binary", l, re.I):
            keep.append(l.rstrip())
    return keep


def bolt(cmd, logpath):
    log("+ " + q(cmd))
    r = subprocess.run(cmd, capture_output=True, text=True)
    with open(logpath, "w") as f:
        f.write("$ " + q(cmd) + "\n" + r.stdout + r.stderr)
    if r.returncode != 0:
        raise RuntimeError("%s failed (%d), log %s:\n%s" % (q(cmd), r.returncode, logpath,
                                                           "\n".join((r.stdout + r.stderr).splitlines()[-15:])))
    return bolt_log_lines(r.stdout + r.stderr)


def same(r, ref, norm):
    n = norm or (lambda b: b)
    why = []
    if r["timed_out"]:
        why.append("timed out")
    if r["status"] != ref["status"]:
        why.append("exit status %s (native %s)" % (r["status"], ref["status"]))
    if n(r["out"]) != n(ref["out"]):
        why.append("stdout differs from native's (%d vs %d bytes; first 200: %r vs %r)" % (
            len(r["out"]), len(ref["out"]), r["out"][:200], ref["out"][:200]))
    return why


def prepare(name, w, lp, failures, info, timeout):
    """BOLT-instrumented binary, training runs, the two BOLT-optimized binaries. Returns the
    variant list [(variant, cmd, env)]."""
    d, exe = w["dir"], w["exe"]
    genv = {"GCOV_PREFIX": GCDA, "GCOV_PREFIX_STRIP": "64"}
    vs = [("native", [exe, *w["test"]], None), ("gcov", [w["gcov"], *w["test"]], genv)]
    wi = info.setdefault(name, {})
    if lp:
        for c in ("coverage", "arcs"):
            out = os.path.join(LPOUT, "c3-%s-%s" % (name, c))
            os.makedirs(out, exist_ok=True)
            vs.append((c, [lp, "run", "-c", c, "-o", out, "--stats", "--", exe, *w["test"]], LPENV))
        for c, f in NOREPORT.items():
            out = os.path.join(LPOUT, "c3-%s-%s" % (name, c))
            os.makedirs(out, exist_ok=True)
            vs.append((c, [lp, "run", "-c", os.path.join(BENCH, "collectors", f), "-o", out, "--stats", "--",
                           exe, *w["test"]], LPENV))
    # BOLT instrumentation: one binary; its profile goes to instr.fdata (overwritten at every exit)
    instr = exe + ".bolt-instr"
    instr_fdata = os.path.join(d, "instr.fdata")
    try:
        wi["bolt_instrument_log"] = bolt([BOLT, exe, "-instrument", "-o", instr,
                                          "-runtime-instrumentation-lib=" + BOLT_RT,
                                          "-instrumentation-file=" + instr_fdata],
                                         os.path.join(d, "bolt-instrument.log"))
    except RuntimeError as e:
        failures[(name, "bolt-instr")] = str(e)
        return vs
    vs.append(("bolt-instr", [instr, *w["test"]], None))
    # training: native reference, then BOLT's own instrumentation and lazyprobe -c arcs
    ref = R.run([exe, *w["train"]], "c3-%s-train-native" % name, None, timeout)
    wi["train_cmd"] = q([exe, *w["train"]])
    if os.path.exists(instr_fdata):
        os.unlink(instr_fdata)
    r = R.run([instr, *w["train"]], "c3-%s-train-bolt-instr" % name, None, timeout)
    own = os.path.join(d, "own.fdata")
    why = same(r, ref, w["norm"])
    if why or not os.path.exists(instr_fdata):
        failures[(name, "bolt-own")] = "training run of the BOLT-instrumented binary: %s\n  command: %s" % (
            "; ".join(why) or "no profile written", q(r["cmd"]))
    else:
        shutil.copy(instr_fdata, own)
    arcs = None
    if lp:
        out = os.path.join(LPOUT, "c3-%s-train-arcs" % name)
        os.makedirs(out, exist_ok=True)
        fd = os.path.join(out, "arcs.fdata")
        if os.path.exists(fd):
            os.unlink(fd)
        cmd = [lp, "run", "-c", "arcs", "-o", out, "--stats", "--", exe, *w["train"]]
        r = R.run(cmd, "c3-%s-train-arcs" % name, LPENV, timeout)
        why = same(r, ref, w["norm"])
        if why or not os.path.exists(fd):
            failures[(name, "bolt-arcs")] = ("training run `lazyprobe -c arcs`: %s\n  command: %s\n  stderr:\n%s" % (
                "; ".join(why) or "no arcs.fdata written", q(cmd), R.tail(r["err"])))
        else:
            arcs = os.path.join(d, "arcs.fdata")
            shutil.copy(fd, arcs)
            wi["train_arcs_stderr"] = [l for l in r["err"].decode(errors="replace").splitlines()
                                       if l.startswith("lazyprobe:")]
    for variant, prof in (("bolt-arcs", arcs), ("bolt-own", own if (name, "bolt-own") not in failures else None)):
        if not prof:
            continue
        outexe = exe + "." + variant
        try:
            wi[variant + "_log"] = bolt([BOLT, exe, "-o", outexe, "-data=" + prof, *BOLT_OPT],
                                        os.path.join(d, variant + ".log"))
            vs.append((variant, [outexe, *w["test"]], None))
        except RuntimeError as e:
            failures[(name, variant)] = str(e)
    return vs


def probecount(name, w, lp, timeout):
    out = os.path.join(LPOUT, "c3-%s-probecount" % name)
    os.makedirs(out, exist_ok=True)
    cmd = [lp, "run", "-c", "arcs," + os.path.join(BENCH, "probecount.lua"), "-o", out, "--stats", "--",
           w["exe"], *w["test"]]
    r = R.run(cmd, "c3-%s-probecount" % name, LPENV, timeout)
    try:
        with open(os.path.join(out, "probecount.json")) as f:
            pc = json.load(f)
    except (OSError, ValueError):
        pc = {"error": "no probecount.json: " + R.tail(r["err"])}
    pc["command"] = q(cmd)
    pc["stats"] = R.parse_stats(r["err"])
    try:
        pc["plan"] = probeplan(name, w, pc)
    except (OSError, subprocess.CalledProcessError, ValueError) as e:
        pc["plan"] = {"error": str(e)}
    return pc


PROBEPLAN = os.path.join(WORK, "probeplan")
LPENV = None   # environment of the lazyprobe runs (--snapshot: LAZYPROBE_COLLECTORS)


def build_probeplan():
    """bench/probeplan.c linked against build/liblazyprobe.a (the relocator as lazyprobe uses it)."""
    src, lib = os.path.join(BENCH, "probeplan.c"), os.path.join(ROOT, "build", "liblazyprobe.a")
    if not os.path.exists(lib):
        return None
    if not R.newer(PROBEPLAN, src, lib):
        inc = [a for d in ("core", "relocate", "arch/x86_64", "shm", "lua") for a in ("-I", os.path.join(ROOT, d))]
        R.sh([R.CC, "-O2", "-g", *inc, "-o", PROBEPLAN, src, lib, "-lZydis", "-lelf", "-ldw", "-llua5.4", "-lm"])
    return PROBEPLAN


def probeplan(name, w, pc):
    """Sums of bench/probeplan over the functions the probecount run relocated / ran."""
    pp = build_probeplan()
    addrs = pc.get("addresses") or {}
    if not pp or not addrs.get("relocated"):
        return None
    res = {}
    for group in ("relocated", "ran"):
        lst = os.path.join(w["dir"], "addresses-%s.txt" % group)
        with open(lst, "w") as f:
            f.write("".join(a + "\n" for a in addrs.get(group, [])))
        r = subprocess.run([pp, w["exe"], lst], capture_output=True, text=True)
        keys = ("blocks", "edges", "counted", "calls", "saved_cover", "saved_arcs", "saved_count", "cover_probes")
        tot = dict.fromkeys(keys, 0)
        tot["functions"], tot["failed"] = 0, []
        for l in r.stdout.splitlines():
            f = l.split()
            if len(f) >= 3 and f[2] == "FAIL":
                tot["failed"].append(l)
                continue
            tot["functions"] += 1
            for k, v in zip(keys, f[2:]):
                tot[k] += int(v)
        res[group] = tot
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=11, help="timed rounds (default 11)")
    ap.add_argument("--lazyprobe", default=os.path.join(ROOT, "build", "tools", "lazyprobe"))
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--json", help="also write all measurements here")
    ap.add_argument("--snapshot", action="store_true",
                    help="run a copy of the lazyprobe binary and of collectors/ (bench/work/snap), so that a "
                         "rebuild during the run cannot mix two builds")
    ap.add_argument("--probes-only", action="store_true",
                    help="only build, count the probes (probecount + probeplan) and print that table")
    ap.add_argument("--pin", type=int, metavar="CPU",
                    help="run every variant on that one CPU (lazyprobe's tracer shares it with the "
                         "program): for a machine whose vCPUs run at different speeds (see the vCPU "
                         "line of the report)")
    ap.add_argument("only", nargs="*", help="workloads: %s (default all)" % " ".join(ALL))
    a = ap.parse_args()
    cpus = os.sched_getaffinity(0)
    speeds_all = R.vcpu_speeds(cpus)
    if a.pin is not None:
        os.sched_setaffinity(0, {a.pin})
    only = a.only or ALL
    if any(w not in ALL for w in only):
        ap.error("workloads: %s" % " ".join(ALL))
    lp = os.path.abspath(a.lazyprobe)
    if not os.access(lp, os.X_OK):
        log("collectors.py: WARNING: no lazyprobe at %s: its variants are skipped" % lp)
        lp = None

    commit = subprocess.run(["git", "-C", ROOT, "log", "-1", "--format=%h %s"], capture_output=True,
                            text=True).stdout.strip()
    if lp and a.snapshot:
        global LPENV
        snap = os.path.join(WORK, "snap")
        shutil.rmtree(snap, ignore_errors=True)
        os.makedirs(snap)
        built = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(os.path.getmtime(lp)))
        shutil.copy2(lp, os.path.join(snap, "lazyprobe"))
        shutil.copytree(os.path.join(ROOT, "collectors"), os.path.join(snap, "collectors"))
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--short", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.split()[1::2]
        commit += " (snapshot of %s built %s, collectors/ copied at %s%s)" % (
            lp, built, time.strftime("%H:%M:%S"), "; tree modified: " + " ".join(dirty) if dirty else "")
        build_probeplan()   # now, from the same build's liblazyprobe.a
        lp = os.path.join(snap, "lazyprobe")
        LPENV = {"LAZYPROBE_COLLECTORS": os.path.join(snap, "collectors")}

    def lp_id():
        st = os.stat(lp)
        return (st.st_mtime_ns, st.st_size)
    lp_at_start = lp_id() if lp else None
    t_start = time.time()

    os.makedirs(GCDA, exist_ok=True)
    for dp, _, fs in os.walk(GCDA):
        for f in fs:
            if f.endswith(".gcda"):
                os.unlink(os.path.join(dp, f))

    Wd = workloads(only)
    failures, info, W = {}, {}, {}
    if a.probes_only:
        for name, w in Wd.items():
            info[name] = {"probecount": probecount(name, w, lp, a.timeout)}
        probe_report(list(Wd), info)
        if a.json:
            with open(a.json, "w") as f:
                json.dump(info, f, indent=1)
        return
    for name, w in Wd.items():
        W[name] = prepare(name, w, lp, failures, info, a.timeout)

    # warm-up: outputs against native's
    refs = {}
    for name, vs in W.items():
        for variant, cmd, env in vs:
            r = R.run(cmd, "c3-%s-%s-warmup" % (name, variant), env, a.timeout)
            if variant == "native":
                refs[name] = r
                if r["status"] != 0 or r["timed_out"]:
                    sys.exit("collectors.py: native %s failed: %s\n%s" % (name, q(cmd), R.tail(r["err"])))
                continue
            why = same(r, refs[name], Wd[name]["norm"])
            if variant in ("coverage", "arcs", *NOREPORT):
                st = R.parse_stats(r["err"])
                if st is None:
                    why.append("no `lazyprobe: stats:` line")
                info[name].setdefault("lp_stderr", {})[variant] = [
                    l for l in r["err"].decode(errors="replace").splitlines() if l.startswith("lazyprobe:")]
            if why:
                failures[(name, variant)] = "%s / %s (warm-up): %s\n  command: %s\n  stderr (%s):\n%s" % (
                    name, variant, "; ".join(why), q(cmd), r["errfile"], R.tail(r["err"]))
                log("collectors.py: FAILED " + failures[(name, variant)])
        W[name] = [v for v in vs if (name, v[0]) not in failures]
    if lp:
        for name in W:
            info[name]["probecount"] = probecount(name, Wd[name], lp, a.timeout)

    res = {name: {v[0]: [] for v in vs} for name, vs in W.items()}
    for rnd in range(a.rounds):
        for name, vs in W.items():
            others = [v for v in vs if v[0] != "native"]
            k = rnd % len(others) if others else 0
            order = [vs[0]] + others[k:] + others[:k]
            row = {}
            for variant, cmd, env in order:
                if (name, variant) in failures:
                    continue
                r = R.run(cmd, "c3-%s-%s-%d" % (name, variant, rnd), env, a.timeout)
                why = same(r, refs[name], Wd[name]["norm"])
                if why:
                    failures[(name, variant)] = "%s / %s: failed in timed round %d: %s\n  command: %s\n  stderr (%s):\n%s" % (
                        name, variant, rnd + 1, "; ".join(why), q(cmd), r["errfile"], R.tail(r["err"]))
                    log("collectors.py: FAILED " + failures[(name, variant)])
                    if variant == "native":
                        sys.exit(1)
                    continue
                rec = {k2: r[k2] for k2 in ("cpu", "user", "sys", "wall")}
                if variant in ("coverage", "arcs", *NOREPORT):
                    rec["stats"] = R.parse_stats(r["err"]) or {}
                row[variant] = rec
            for variant, rec in row.items():
                if "native" in row:
                    res[name][variant].append(rec)
                    rec["round"] = rnd
        log("collectors.py: round %d/%d done (%.0f s)" % (rnd + 1, a.rounds, time.time() - t_start))

    if lp and lp_id() != lp_at_start:
        failures[("lazyprobe", "binary")] = "%s CHANGED during the run: the figures mix two builds; run again" % lp
        log("collectors.py: WARNING: " + failures[("lazyprobe", "binary")])
    info["vcpu"] = {"start": speeds_all, "end": R.vcpu_speeds(cpus), "pin": a.pin}
    report(a, lp, commit, Wd, res, failures, info, time.time() - t_start)


def ratio_list(res, name, v, base="native", key="cpu"):
    a = {r["round"]: r for r in res[name].get(base, [])}
    return [r[key] / a[r["round"]][key] for r in res[name].get(v, []) if r["round"] in a]


def probe_report(names, info):
    print("Probes (one untimed `lazyprobe run -c arcs,bench/probecount.lua` on the test input):")
    print()
    print("| workload | group | functions | blocks | edges | edges − blocks (lower bound of counted edges: the entry counter measures EXIT->entry) | call sites | "
          "entry + a probe per block | -c arcs probes with that bound (entry + counted) | same, every edge counted |")
    print("|---" * 10 + "|")
    for name in names:
        pc = info.get(name, {}).get("probecount", {})
        for g in ("relocated", "ran"):
            x = pc.get(g)
            if x:
                print("| %s | %s | %d | %d | %d | %d (%.0f %%) | %d | %d | %d | %d |" % (
                    name, g, x["functions"], x["blocks"], x["edges"], x["counted"],
                    100.0 * x["counted"] / max(1, x["edges"]), x["calls"], x["coverage_probes"],
                    x["arcs_probes"], x["arcs_probes_all_edges"]))
    print()
    print("Counter increments of `-c arcs` at run time (same run; bench/probecount.lua): the edges executed, the "
          "increments (entries + the counted edges' counts) and the increments a spanning tree chosen on the "
          "run's own counts would make (with the same virtual edges: the leaks; EXIT->entry is the entry counter's):")
    print()
    print("| workload | executed edges | increments | increments, tree from the counts | ratio |")
    print("|---" * 5 + "|")
    for name in names:
        x = info.get(name, {}).get("probecount", {}).get("ran")
        if x and "increments" in x:
            print("| %s | %.1f M | %.1f M | %.1f M | %.2f |" % (
                name, x["executed_edges"] / 1e6, x["increments"] / 1e6, x["increments_bound"] / 1e6,
                x["increments"] / max(1, x["increments_bound"])))
    print()
    for name in names:
        pc = info.get(name, {}).get("probecount", {})
        for k in ("native", "trapped", "flow_errors", "partial"):
            if pc.get(k):
                print("- %s %s: %s" % (name, k, ", ".join(pc[k])))
    print()

    print("Flags saves (bench/probeplan: the relocator's plan of the same functions; adjacent probes share one save):")
    print()
    print("| workload | group | functions | counted edges (exact: reloc_info.ncounted) | -c coverage probes (entry + blocks with a probe of their own) | -c coverage: saves | -c arcs: saves (of entry + counted probes) | blocks=count, for comparison: saves (of entry + blocks probes) |")
    print("|---" * 8 + "|")
    for name in names:
        plan = info.get(name, {}).get("probecount", {}).get("plan") or {}
        for g in ("relocated", "ran"):
            x = plan.get(g)
            if x and "functions" in x:
                print("| %s | %s | %d | %d | %d | %d | %d (of %d) | %d (of %d) |" % (
                    name, g, x["functions"], x["counted"], x["functions"] + x.get("cover_probes", 0),
                    x["saved_cover"], x["saved_arcs"],
                    x["functions"] + x["counted"], x["saved_count"], x["functions"] + x["blocks"]))
                for l in x["failed"]:
                    print("  - plan failed: %s" % l)
    print()


def report(a, lp, commit, Wd, res, failures, info, elapsed):
    cpu = ""
    for l in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
        if l.startswith("Model name:"):
            cpu = l.split(":", 1)[1].strip()
    print("# lazyprobe collectors vs peers, %s, %s (%d CPUs), %d rounds, %.0f s" % (
        time.strftime("%Y-%m-%d %H:%M"), cpu, os.cpu_count(), a.rounds, elapsed))
    print()
    if lp:
        print("lazyprobe: %s (built %s); tree at %s" % (
            lp, time.strftime("%Y-%m-%d %H:%M", time.localtime(os.path.getmtime(lp))), commit))
        print()
    v = info.get("vcpu")
    if v:
        print("vCPU speed, CPU s of one fixed loop: %s at the start, %s at the end; %s." % (
            R.vcpu_line(v["start"]), R.vcpu_line(v["end"]),
            "every variant ran on cpu%d (--pin)" % v["pin"] if v["pin"] is not None else "variants not pinned"))
        print()
    print("CPU time (user+sys) ratio to native, median of per-round ratios [min–max]; native median CPU s.")
    print()
    heads = {"gcov": "gcc -fprofile-arcs", "coverage": "lazyprobe -c coverage", "arcs": "lazyprobe -c arcs",
             "cover-probes": "coverage probes, no report", "arcs-probes": "arcs probes, no report",
             "bolt-instr": "llvm-bolt -instrument", "bolt-arcs": "BOLT-opt from arcs.fdata",
             "bolt-own": "BOLT-opt from own profile"}
    print("| workload | native CPU s | " + " | ".join(heads[v] for v in VARIANTS[1:]) +
          " | arcs / gcov | bolt-arcs / bolt-own |")
    print("|---" * (len(VARIANTS) + 3) + "|")

    def cell(xs, bold=False):
        if not xs:
            return "n/a"
        return "%.3f [%.3f–%.3f]" % (R.med(xs), min(xs), max(xs))

    out = {"date": time.strftime("%Y-%m-%d %H:%M:%S"), "cpu": cpu, "rounds": a.rounds, "lazyprobe": lp,
           "commit": commit, "elapsed_s": elapsed, "workloads": {}, "info": info,
           "failures": list(failures.values())}
    for name in res:
        nat = [r["cpu"] for r in res[name].get("native", [])]
        cells = []
        wl = {"native_cpu_s": nat, "commands": {}}
        for v in VARIANTS[1:]:
            if (name, v) in failures:
                cells.append("FAILED")
                continue
            rs = ratio_list(res, name, v)
            wl[v] = rs
            cells.append(cell(rs))
        ag = ratio_list(res, name, "arcs", "gcov")
        bb = ratio_list(res, name, "bolt-arcs", "bolt-own")
        wl["arcs_over_gcov"], wl["boltarcs_over_boltown"] = ag, bb
        wl["stats"] = {v: [r.get("stats") for r in res[name].get(v, [])] for v in ("coverage", "arcs")}
        out["workloads"][name] = wl
        print("| %s | %.3f | %s | %s | %s |" % (name, R.med(nat), " | ".join(cells), cell(ag), cell(bb)))
    print()

    print("lazyprobe --stats (last timed run): instrumented / functions, native, trapped_calls")
    print()
    for name in res:
        for v in ("coverage", "arcs"):
            st = [r.get("stats") for r in res[name].get(v, []) if r.get("stats")]
            if st:
                s = st[-1]
                print("- %s %s: %s / %s, native=%s, trapped_calls=%s, startup_us median %.0f, instrument_us median %.0f"
                      ", CPU ms medians: tracer %.0f, program %.0f, report %.0f" % (
                    name, v, s.get("instrumented"), s.get("functions"), s.get("native"), s.get("trapped_calls"),
                    R.med([x.get("startup_us", 0) for x in st]), R.med([x.get("instrument_us", 0) for x in st]),
                    R.med([x.get("tracer_cpu_us", 0) for x in st]) / 1000,
                    R.med([x.get("program_cpu_us", 0) for x in st]) / 1000,
                    R.med([x.get("report_cpu_us", 0) for x in st]) / 1000))
        for l in info.get(name, {}).get("lp_stderr", {}).get("coverage", []):
            if "stats:" not in l:
                print("  - coverage said: `%s`" % l)
    print()

    probe_report(list(res), info)

    print("llvm-bolt's messages about the profile (-report-stale on):")
    print()
    for name in res:
        for key in ("bolt-arcs_log", "bolt-own_log"):
            for l in info.get(name, {}).get(key, []):
                print("- %s %s: `%s`" % (name, key[:-4], l))
        if "train_cmd" in info.get(name, {}):
            print("- %s training input: `%s` (test input: `%s`)" % (name, info[name]["train_cmd"],
                                                                      q(Wd[name]["test"])))
    print()
    R.finish(failures, out, a.json)


if __name__ == "__main__":
    main()
