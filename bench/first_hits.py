#!/usr/bin/env python3
"""What one first hit costs, asked for through a stub or taken as a trap (--no-stubs).

    bench/first_hits.py [--rounds 9] [--lazyprobe PATH] [-n 3000]

The program of bench/gen_many.py (N distinct functions, each called once from main through a
table: none is relocated as a callee of another) runs natively, under `lazyprobe run -c calls
--stats` and under the same with `--no-stubs`, interleaved round by round. Per variant and round:
the program's CPU time (`program_cpu_us`) minus native's, and the tracer's (`tracer_cpu_us`,
which includes relocating the functions: `instrument_us`), each divided by the first hits
(`trap_hits + stub_hits`); medians over the rounds. The report's time is not counted.
"""
import argparse
import os
import re
import resource
import statistics
import subprocess
import sys

BENCH = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(BENCH)
sys.path.insert(0, BENCH)
import run as R  # noqa: E402  (builds bench/work/many/manyN like bench/run.py)


def native_cpu(cmd):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime) * 1e6


def lazyprobe(lp, extra, cmd):
    out = os.path.join(R.WORK, "lp-out", "first-hits")
    os.makedirs(out, exist_ok=True)
    p = subprocess.run([lp, "run", "-c", "calls", "-o", out, "--stats", *extra, "--", *cmd],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    st = dict((k, int(v)) for k, v in re.findall(r"(\w+)=(\d+)", p.stderr.split("stats:")[-1]))
    if p.returncode != 0 or "program_cpu_us" not in st:
        sys.exit("first_hits.py: lazyprobe %s failed: %s" % (" ".join(extra), p.stderr[-500:]))
    return st


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--lazyprobe", default=os.path.join(ROOT, "build", "tools", "lazyprobe"))
    ap.add_argument("-n", type=int, default=3000, help="functions in the program")
    a = ap.parse_args()
    many, _ = R.build_many(a.n)
    variants = {"stubs": [], "--no-stubs": ["--no-stubs"]}
    rows = {v: {"program": [], "tracer": [], "instrument": [], "hits": []} for v in variants}
    for rnd in range(a.rounds):
        nat = native_cpu([many])
        for v in (list(variants) if rnd % 2 == 0 else list(variants)[::-1]):
            st = lazyprobe(a.lazyprobe, variants[v], [many])
            hits = st.get("trap_hits", 0) + st.get("stub_hits", 0)
            rows[v]["hits"].append(hits)
            rows[v]["program"].append((st["program_cpu_us"] - nat) / hits)
            rows[v]["tracer"].append(st["tracer_cpu_us"] / hits)
            rows[v]["instrument"].append(st["instrument_us"] / hits)
    print("| first hits | hits | program CPU us / hit | tracer CPU us / hit | of which instrument_us / hit |")
    print("|---|---|---|---|---|")
    for v, r in rows.items():
        print("| %s | %d | %.1f | %.1f | %.1f |" % (v, statistics.median(r["hits"]), statistics.median(r["program"]),
                                                   statistics.median(r["tracer"]), statistics.median(r["instrument"])))


if __name__ == "__main__":
    main()
