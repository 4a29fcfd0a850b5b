#!/usr/bin/env python3
"""Instructions lazyprobe itself executes, counted by callgrind: deterministic where CPU times are not.

    bench/instructions.py [--lazyprobe PATH] [--runs N] [--json FILE] [only...]

For each workload of bench/collectors.py (lua, sqlite, xz; built as it builds them) and each of
`coverage` and `arcs` (the tracer's count is the median of --runs runs, default 3):
  tracer  `valgrind --tool=callgrind lazyprobe run -c bench/collectors/{cover,arcs}-noreport.lua`:
          lazyprobe from start-up to the end of the program (relocation, sweeps, second copies,
          going home, sealing), its empty report and the run table included. The program runs
          natively, untraced by valgrind, which has no futex_waitv: first hits trap there
          instead of ringing a stub's bell (one stop per first hit; the relocations are the same).
  report  `valgrind --tool=callgrind lazyprobe report -c coverage|arcs DIR`, DIR written by a
          `lazyprobe run -c coverage|arcs` of the same program (outside valgrind).
Prints one table of millions of instructions (Ir), and when perf is installed a second one of
the page faults of the same commands run once outside valgrind (`perf stat -e page-faults
--no-inherit`: lazyprobe's own, not the program's), which callgrind does not see and which cost
10-15 us each on this project's virtual machines (docs/PERFORMANCE.md, session 19); they move
by a fifth between runs. The counts do not depend on the machine's
load; they move with lazyprobe's code, the program's input and, for the tracer, with where the
sweeps and second passes fall in time (how many blocks met a going-home int3, how many copies
were stripped): sqlite's moved 405-421 M between runs of one build, hence the median. The
report's counts are exact.
Everything generated goes to bench/work/instructions/.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH)
import collectors as C  # noqa: E402  (workloads(), the collectors' paths)
import run as R  # noqa: E402

OUT = os.path.join(R.WORK, "instructions")
COLLECTORS = {"coverage": "cover-noreport.lua", "arcs": "arcs-noreport.lua"}


def callgrind_ir(cmd, out):
    """Runs CMD under callgrind and returns its total instructions."""
    p = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out] + cmd,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    m = re.search(r"refs:\s+([0-9,]+)", p.stderr)
    if p.returncode != 0 or not m:
        sys.exit("instructions.py: %s failed (status %d): %s" % (cmd[0], p.returncode, p.stderr[-400:]))
    return int(m.group(1).replace(",", ""))


def page_faults(cmd):
    """Page faults of CMD's own process (not its children), from perf stat; None without perf."""
    if not shutil.which("perf"):
        return None
    p = subprocess.run(["perf", "stat", "-x,", "-e", "page-faults", "--no-inherit", "--"] + cmd,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    m = re.search(r"^([0-9]+),[^,]*,page-faults", p.stderr, re.M)
    return int(m.group(1)) if p.returncode == 0 and m else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lazyprobe", default=os.path.join(R.ROOT, "build", "tools", "lazyprobe"))
    ap.add_argument("--json")
    ap.add_argument("--runs", type=int, default=3, help="tracer runs per workload and collector (median)")
    ap.add_argument("only", nargs="*", help="workloads (default: %s)" % " ".join(C.ALL))
    a = ap.parse_args()
    only = a.only or C.ALL
    unknown = [w for w in only if w not in C.ALL]
    if unknown:
        sys.exit("instructions.py: unknown workload %s (%s)" % (", ".join(unknown), " ".join(C.ALL)))
    if not shutil.which("valgrind"):
        sys.exit("instructions.py: valgrind is not installed")
    W = C.workloads(only)
    os.makedirs(OUT, exist_ok=True)
    res = {}
    for name in only:
        w = W[name]
        prog = [w["exe"]] + w["test"]
        for coll, noreport in COLLECTORS.items():
            tag = "%s-%s" % (name, coll)
            d = os.path.join(OUT, tag)
            shutil.rmtree(d, ignore_errors=True)
            runs = []
            for _ in range(a.runs):
                runs.append(callgrind_ir([a.lazyprobe, "run", "-c", os.path.join(BENCH, "collectors", noreport), "-o",
                                          d + "-tracer", "--"] + prog, os.path.join(OUT, tag + ".tracer.callgrind")))
                shutil.rmtree(d + "-tracer", ignore_errors=True)
            tracer = sorted(runs)[len(runs) // 2]
            p = subprocess.run([a.lazyprobe, "run", "-c", coll, "-o", d, "--"] + prog,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            if p.returncode != 0:
                sys.exit("instructions.py: lazyprobe run -c %s failed: %s" % (coll, p.stderr[-400:]))
            report = callgrind_ir([a.lazyprobe, "report", "-c", coll, d], os.path.join(OUT, tag + ".report.callgrind"))
            res[tag] = {"tracer": tracer, "tracer_runs": runs, "report": report,
                        "tracer_faults": page_faults([a.lazyprobe, "run", "-c", os.path.join(BENCH, "collectors", noreport),
                                                      "-o", d + "-tracer", "--"] + prog),
                        "report_faults": page_faults([a.lazyprobe, "report", "-c", coll, d])}
            shutil.rmtree(d + "-tracer", ignore_errors=True)
            R.log("%s: tracer %.1f M, report %.1f M" % (tag, tracer / 1e6, report / 1e6))
    print("| workload | coverage: tracer M Ir | coverage: report M Ir | arcs: tracer M Ir | arcs: report M Ir |")
    print("|---|---|---|---|---|")
    for name in only:
        c, r = res[name + "-coverage"], res[name + "-arcs"]
        print("| %s | %.1f | %.1f | %.1f | %.1f |" % (name, c["tracer"] / 1e6, c["report"] / 1e6, r["tracer"] / 1e6,
                                                    r["report"] / 1e6))
    if all(res[t]["tracer_faults"] is not None and res[t]["report_faults"] is not None for t in res):
        print()
        print("| workload | coverage: tracer faults | coverage: report faults | arcs: tracer faults | arcs: report faults |")
        print("|---|---|---|---|---|")
        for name in only:
            c, r = res[name + "-coverage"], res[name + "-arcs"]
            print("| %s | %d | %d | %d | %d |" % (name, c["tracer_faults"], c["report_faults"], r["tracer_faults"],
                                                r["report_faults"]))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
