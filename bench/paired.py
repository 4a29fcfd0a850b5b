#!/usr/bin/env python3
"""Two lazyprobe builds on one workload, alternated run by run (benchmarks, not tests).

    bench/paired.py OLD NEW [--collector C] [--rounds N] [--pin CPU] [--native] [lua|sqlite|xz]
    bench/paired.py OLD NEW [...] --command 'gcc -O2 -c tests/corpus/fib.c -o /tmp/fib.o' [--old-collectors DIR]

Each round runs `OLD run -c C --stats` and `NEW run -c C --stats` on the workload's test input
(bench/collectors.py builds and names them), the order swapped every round, and prints the
medians of `--stats`' tracer_cpu_us, report_cpu_us and program_cpu_us for each build (and the
kernel's part of the first two, tracer_sys_us and report_sys_us, for a build that gives them). For a
change smaller than this machine's swings between runs (docs/PERFORMANCE.md, session 19):
both builds meet the same phases of the machine. C may be a built-in collector or a path
(bench/collectors/cover-noreport.lua: the probes without a report). --pin runs both on one CPU.
--command runs that command line (split as a shell would, no shell) instead of a workload: a large
program that runs briefly (docs/PERFORMANCE.md, session 26). --old-collectors gives OLD the
collectors/ of its own time (LAZYPROBE_COLLECTORS), when today's ask for probes it does not know.
--native runs the program natively too, in the same alternation, and prints each build's program and
whole CPU time as ratios to it: the program's own share of the cost (its copies, probes, stops)
apart from the tracer's and the report's (docs/PERFORMANCE.md, session 31).
"""
import argparse
import os
import resource
import shlex
import statistics
import subprocess
import sys

BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH)
import collectors as C  # noqa: E402  (workloads())
import run as R  # noqa: E402


def stats(lp, collector, prog, outdir, collectors_dir=None):
    env = dict(os.environ, LAZYPROBE_COLLECTORS=collectors_dir) if collectors_dir else None
    p = subprocess.run([lp, "run", "-c", collector, "--stats", "-o", outdir, "--"] + prog,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    st = R.parse_stats(p.stderr)
    if p.returncode != 0 or not st:
        sys.exit("paired.py: %s failed (status %d): %s" % (lp, p.returncode, R.tail(p.stderr)))
    return st


def native_ms(prog):
    """CPU ms of one native run of PROG (all its processes)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(prog, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit("paired.py: %s failed natively (status %d)" % (prog[0], p.returncode))
    return (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--collector", default="coverage")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--pin", type=int, metavar="CPU")
    ap.add_argument("--command", metavar="CMDLINE")
    ap.add_argument("--old-collectors", metavar="DIR")
    ap.add_argument("--native", action="store_true")
    ap.add_argument("workload", nargs="?", default="sqlite", choices=C.ALL)
    a = ap.parse_intermixed_args()
    if a.pin is not None:
        os.sched_setaffinity(0, {a.pin})
    if a.command:
        prog, a.workload = shlex.split(a.command), a.command
    else:
        w = C.workloads([a.workload])[a.workload]
        prog = [w["exe"]] + w["test"]
    builds = [os.path.abspath(a.old), os.path.abspath(a.new)]
    own = {builds[0]: a.old_collectors and os.path.abspath(a.old_collectors)}
    res = {b: [] for b in builds}
    outdir = os.path.join(R.WORK, "paired")
    native = []
    order = builds + (["native"] if a.native else [])
    for rnd in range(a.rounds):
        for b in (order if rnd % 2 == 0 else order[::-1]):
            if b == "native":
                native.append(native_ms(prog))
            else:
                res[b].append(stats(b, a.collector, prog, outdir, own.get(b)))
    print("%s, -c %s, %d rounds%s: medians, CPU ms" % (a.workload, a.collector, a.rounds,
                                                       ", on cpu%d" % a.pin if a.pin is not None else ""))
    nat = statistics.median(native) if native else None
    if nat:
        print("  native: %.1f" % nat)
    for b in builds:
        med = {k: statistics.median(s[k] for s in res[b]) / 1000
               for k in ("tracer_cpu_us", "report_cpu_us", "program_cpu_us")}
        sys_part = ""
        if all("tracer_sys_us" in s for s in res[b]):  # builds before --stats gave it lack it
            sys_part = " (kernel %.1f / %.1f)" % tuple(statistics.median(s[k] for s in res[b]) / 1000
                                                       for k in ("tracer_sys_us", "report_sys_us"))
        whole = statistics.median(sum(s[k] for k in ("tracer_cpu_us", "report_cpu_us", "program_cpu_us"))
                                  for s in res[b]) / 1000
        ratios = " [program %.3f, all %.3f of native]" % (med["program_cpu_us"] / nat, whole / nat) if nat else ""
        print("  %s: tracer %.1f, report %.1f, program %.1f, all %.1f%s%s" % (
            b, med["tracer_cpu_us"], med["report_cpu_us"], med["program_cpu_us"], whole, sys_part, ratios))


if __name__ == "__main__":
    main()
