#!/usr/bin/env python3
"""What the copies alone cost: lazyprobe relocating every function that runs, with no probe.

    bench/copies.py [--rounds N] [--pin CPU] [--lazyprobe PATH] [--json FILE] [only...]

Workloads (default: all that are built):
  dispatch  bench/dispatch.c (gcc -O2 -g), a switch-based bytecode loop, 20000 passes
  lua, sqlite, xz  the binaries of bench/collectors.py (bench/work/c3, built by
            bench/build-collectors.sh) on their test inputs

Variants, interleaved round by round (the order rotated every round): native, and
`lazyprobe run -c bench/collectors/none.lua --stats` (no probe, no report). Per round a ratio to
native of the program's CPU time (user+sys of the tracee: program_cpu_us) and of program plus
tracer; the table gives medians with min and max. --pin CPU runs everything on that CPU
(taskset). On this 2-vCPU VM single rounds of sqlite and lua swing by +-30 % pinned or not, and
medians of one build move by 5-10 % between batches: only dispatch, small and steady, shows a
few percent reliably.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH)
import run as R  # noqa: E402

C3 = os.path.join(R.WORK, "c3")
NONE = os.path.join(BENCH, "collectors", "none.lua")


def workloads():
    W = {}
    exe = os.path.join(R.WORK, "dispatch")
    src = os.path.join(BENCH, "dispatch.c")
    if not os.path.exists(exe) or os.path.getmtime(exe) < os.path.getmtime(src):
        R.sh([R.CC, "-O2", "-g", src, "-o", exe])
    W["dispatch"] = [exe, "20000"]
    lua = os.path.join(C3, "lua", "lua")
    if os.path.exists(lua):
        W["lua"] = [lua, os.path.join(BENCH, "lua", "bench.lua"), "2"]
    sq = os.path.join(C3, "sqlite", "speedtest1")
    if os.path.exists(sq):
        W["sqlite"] = [sq, "--memdb", "--verify", "--size", "50"]
    xz = os.path.join(C3, "xz", "xz")
    if os.path.exists(xz):
        W["xz"] = [xz, "-6", "-T1", "-c", os.path.join(C3, "xz", "in-test.txt")]
    return W


def native_ms(cmd, pin):
    p = subprocess.Popen(pin + cmd, stdout=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    if status != 0:
        sys.exit("native %s failed" % cmd[0])
    return (ru.ru_utime + ru.ru_stime) * 1000


def copies_ms(lp, cmd, pin):
    out = os.path.join(R.WORK, "copies-out")
    p = subprocess.run(pin + [lp, "run", "-o", out, "--stats", "-c", NONE, "--"] + cmd,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    m = re.search(r"tracer_cpu_us=(\d+) program_cpu_us=(\d+)", p.stderr)
    if p.returncode != 0 or not m:
        sys.exit("lazyprobe on %s failed: %s" % (cmd[0], p.stderr[-500:]))
    return int(m.group(2)) / 1000, (int(m.group(1)) + int(m.group(2))) / 1000


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--pin", type=int)
    ap.add_argument("--lazyprobe", default=os.path.join(R.ROOT, "build", "tools", "lazyprobe"))
    ap.add_argument("--json")
    ap.add_argument("only", nargs="*")
    a = ap.parse_args()
    pin = ["taskset", "-c", str(a.pin)] if a.pin is not None else []
    W = workloads()
    names = [w for w in W if not a.only or w in a.only]
    rows = {}
    for w in names:
        cmd = W[w]
        nat, prog, total = [], [], []
        for r in range(a.rounds):
            for v in (["native", "copies"] if r % 2 == 0 else ["copies", "native"]):
                if v == "native":
                    nat.append(native_ms(cmd, pin))
                else:
                    pm, tm = copies_ms(a.lazyprobe, cmd, pin)
                    prog.append(pm)
                    total.append(tm)
        rp = [b / n for n, b in zip(nat, prog)]
        rt = [b / n for n, b in zip(nat, total)]
        rows[w] = {"native_ms": statistics.median(nat), "program": statistics.median(rp), "program_min": min(rp),
                   "program_max": max(rp), "with_tracer": statistics.median(rt)}
        R.log("%s: native %.0f ms, copies program %.3f [%.3f-%.3f], with tracer %.3f" %
              (w, rows[w]["native_ms"], rows[w]["program"], min(rp), max(rp), rows[w]["with_tracer"]))
    print("| workload | native CPU ms | program under copies / native | + tracer / native |")
    print("|---|---|---|---|")
    for w in names:
        r = rows[w]
        print("| %s | %.0f | %.3f [%.3f-%.3f] | %.3f |" % (w, r["native_ms"], r["program"], r["program_min"],
                                                       r["program_max"], r["with_tracer"]))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"pin": a.pin, "rounds": a.rounds, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
