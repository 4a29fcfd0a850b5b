#!/bin/sh
# consumers.sh — the collectors' outputs read by the real consumer tools.
# Builds tests/collectors/consumer_prog.c (gcc -O2 -g, non-PIE, with
# --emit-relocs for BOLT), runs it under valgrind's callgrind, turns that run
# into a lazyprobe run table (mkrun.py: blocks and edges from objdump, counts
# from callgrind, lines from DWARF), runs the coverage, calls and arcs
# collectors on it (run.lua --write), then checks:
#   genhtml (no warnings), lcov --summary (same totals as the collector),
#   callgrind_annotate (exact call counts, caller->callee edges),
#   llvm-bolt-16 -data=arcs.fdata (no stale/mismatch/invalid profile, the
#   BOLTed program prints the same), and arcs.fdata against the profile
#   BOLT's own instrumentation writes for the same program.
# Prints PASS/FAIL lines and ends with "N passed, M failed".
# Needs: gcc, binutils, valgrind, python3, lua5.4, lcov, bolt-16.
set -u
here=$(cd "$(dirname "$0")" && pwd)
work=${WORK:-$here/../work/collectors}
rm -rf "$work"
mkdir -p "$work/out"
passed=0
failed=0
pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }
finish() { echo "$passed passed, $failed failed"; [ "$failed" = 0 ]; exit $?; }

bolt=$(command -v llvm-bolt-16 || echo /usr/lib/llvm-16/bin/llvm-bolt)
for tool in gcc objdump readelf valgrind callgrind_annotate python3 lua5.4 genhtml lcov "$bolt"; do
  command -v "$tool" >/dev/null 2>&1 || { fail "tools" "$tool is not installed"; finish; }
done

cp "$here/consumer_prog.c" "$work/prog.c"
cd "$work" || exit 1
if ! gcc -O2 -g -no-pie -fno-reorder-blocks-and-partition -Wl,--emit-relocs -o prog prog.c 2>build.err; then
  fail "build" "$(cat build.err)"
  finish
fi
./prog >native.out
valgrind --tool=callgrind --dump-instr=yes --collect-jumps=yes --compress-strings=no \
  --compress-pos=no --callgrind-out-file=cg.out ./prog >cg.stdout 2>cg.err
pid=$(sed -n 's/^pid: *//p' cg.out)
if ! python3 "$here/mkrun.py" prog cg.out "$work" "$pid" >run.lua 2>mkrun.err; then
  fail "mkrun" "$(cat mkrun.err)"
  finish
fi
if lua5.4 "$here/run.lua" --write run.lua out >collectors.out 2>collectors.err; then
  pass "collectors wrote their files"
else
  fail "collectors wrote their files" "$(cat collectors.err)"
  finish
fi

# {=== coverage.info ===}
genhtml --branch-coverage -o html out/coverage.info >genhtml.out 2>genhtml.err
rc=$?
if [ $rc = 0 ] && ! grep -qi "warning\|error" genhtml.err genhtml.out; then
  pass "genhtml reads coverage.info without warnings"
else
  fail "genhtml reads coverage.info without warnings" "status $rc: $(grep -i 'warning\|error' genhtml.err genhtml.out | head -3)"
fi
lcov --summary --rc lcov_branch_coverage=1 out/coverage.info >lcov.out 2>&1
rc=$?
# lcov: "  lines......: 85.0% (34 of 40 lines)"; the collector: "lines 34/40"
want_lines=$(sed -n 's/.*lines \([0-9]*\)\/\([0-9]*\) .*/\1 of \2 lines/p' collectors.out | head -1)
want_br=$(sed -n 's/.*branches \([0-9]*\)\/\([0-9]*\) .*/\1 of \2 branches/p' collectors.out | head -1)
if [ $rc = 0 ] && grep -q "lines.*($want_lines)" lcov.out && grep -q "functions.*%" lcov.out \
   && grep -q "branches.*($want_br)" lcov.out; then
  pass "lcov --summary agrees with the collector ($want_lines, $want_br)"
else
  fail "lcov --summary agrees with the collector" "status $rc, want ($want_lines) ($want_br): $(tr '\n' ' ' <lcov.out)"
fi
# the line of never_called's body ran 0 times, classify's first line 29 times
nc_line=$(grep -n 'return x \* 2;' prog.c | cut -d: -f1)
cl_line=$(grep -n "if (c >= 'a' && c <= 'z')" prog.c | cut -d: -f1)
if grep -q "^DA:$nc_line,0$" out/coverage.info && grep -q "^DA:$cl_line,29$" out/coverage.info \
   && grep -q "^FNDA:0,never_called$" out/coverage.info && grep -q "^FNDA:29,classify$" out/coverage.info \
   && grep -q "^BRDA:$cl_line," out/coverage.info; then
  pass "coverage.info counts (never_called 0, classify 29, its branches)"
else
  fail "coverage.info counts" "DA:$nc_line,0 / DA:$cl_line,29 / FNDA / BRDA:$cl_line missing"
fi

# the same run as probes blocks="cover" give it: 0/1 block counts, no edge counts
mkdir -p out-cover
if lua5.4 "$here/run.lua" --write run.lua out-cover --cover >cover.out 2>cover.err \
   && genhtml --branch-coverage -o html-cover out-cover/coverage.info >genhtml-cover.out 2>&1 \
   && ! grep -qi "warning\|error" genhtml-cover.out \
   && lcov --summary --rc lcov_branch_coverage=1 out-cover/coverage.info >lcov-cover.out 2>&1 \
   && grep -q "^DA:$cl_line,1$" out-cover/coverage.info && grep -q "^BRDA:" out-cover/coverage.info \
   && ! grep -q "^BRDA:.*,[2-9][0-9]*$" out-cover/coverage.info; then
  pass "cover mode: genhtml and lcov read it, counts 0/1, inferred branches ($(grep -c '^BRDA:' out-cover/coverage.info))"
else
  fail "cover mode" "$(cat cover.err) $(grep -i 'warning\|error' genhtml-cover.out | head -3)"
fi

# {=== callgrind.out.PID ===}
cgf=out/callgrind.out.$pid
callgrind_annotate "$cgf" >cga.out 2>cga.err
rc=$?
if [ $rc = 0 ] && ! grep -qi "warning\|error" cga.err && grep -q "29 .*prog.c:classify" cga.out \
   && grep -q "987 .*prog.c:fib" cga.out; then
  pass "callgrind_annotate: exact entry counts (classify 29, fib 987)"
else
  fail "callgrind_annotate: exact entry counts" "status $rc: $(head -c 600 cga.err) $(grep -E 'classify|fib' cga.out | head -3)"
fi
callgrind_annotate --inclusive=yes --tree=caller "$cgf" >cgt.out 2>cgt.err
rc=$?
# a caller line: "29 (2.02%)  0  < prog.c:main (29x) [prog]"; fib calls itself
# 986 times (gcc turned the other recursive call into a loop); qsort's 318
# calls of cmp come from libc: from "(unknown)"
if [ $rc = 0 ] && ! grep -qi "warning\|error" cgt.err && grep -q "29 .*< .*prog.c:main (29x)" cgt.out \
   && grep -q "100 .*< .*prog.c:main (100x)" cgt.out && grep -q "986 .*< .*prog.c:fib (986x)" cgt.out \
   && grep -q "318 .*< ???:(unknown) (318x)" cgt.out; then
  pass "callgrind_annotate --tree=caller: caller->callee edges"
else
  fail "callgrind_annotate --tree=caller" "status $rc: $(grep '<' cgt.out | head -5 | tr '\n' '|')"
fi

# self Ir (block count * instructions) against valgrind's own per-function Ir
# (not main's: valgrind adds the PLT stubs run by main's calls to libc to it)
ir_of() { # FILE FUNCTION: self Ir of prog.c:FUNCTION, recursion levels ('2) added up
  callgrind_annotate --show=Ir --threshold=100 "$1" 2>/dev/null |
    awk -v f="$2" '$0 ~ ("prog.c:" f "(\047[0-9]+)? ") && $0 !~ /=>/ { gsub(",", "", $1); s += $1 } END { print s + 0 }'
}
bad=""
for f in classify fib dispatch cmp; do
  a=$(ir_of cg.out $f)
  b=$(ir_of "$cgf" $f)
  [ "$a" = "$b" ] && [ "$a" != 0 ] || bad="$bad $f:$b!=$a"
done
if [ -z "$bad" ]; then
  pass "callgrind.out Ir equals valgrind's Ir (classify, fib, dispatch, cmp)"
else
  fail "callgrind.out Ir equals valgrind's Ir" "$bad"
fi

# {=== arcs.fdata ===}
"$bolt" prog -o prog.bolt -data=out/arcs.fdata -reorder-blocks=ext-tsp -reorder-functions=hfsort \
  -report-stale -v=2 >bolt.out 2>&1
rc=$?
# -v=2 prints "profile branches match only N%" for a profile that does not fit
grep 'BOLT-WARNING\|BOLT-ERROR\|stale\|mismatch\|invalid\|corrupt\|match only' bolt.out \
  | grep -v 'debug info will be stripped\| 0 callsites with invalid profile, used perf data for 0 stale' >bolt.bad
if [ $rc = 0 ] && [ ! -s bolt.bad ] && grep -q "have non-empty execution profile" bolt.out; then
  pass "llvm-bolt-16 accepts arcs.fdata ($(grep -o '[0-9]* out of [0-9]* functions' bolt.out))"
else
  fail "llvm-bolt-16 accepts arcs.fdata" "status $rc: $(head -3 bolt.bad)"
fi
if [ -x prog.bolt ] && ./prog.bolt >bolt.run.out 2>&1 && cmp -s native.out bolt.run.out; then
  pass "the BOLTed program prints what the original does"
else
  fail "the BOLTed program prints what the original does" "$(head -c 300 bolt.run.out)"
fi
# BOLT's own instrumentation: the records between functions of the program
# and inside them must be the ones arcs.fdata has (PLT callees and [unknown]
# places aside: the run table does not name them; and the crt functions whose
# symbols have size 0, which mkrun.py does not see)
rt=/usr/lib/llvm-16/lib/libbolt_rt_instr.a
if [ -f "$rt" ]; then
  # llvm-bolt-16 looks for the runtime under /usr/lib/: give the path from there
  "$bolt" prog -instrument -runtime-instrumentation-lib=llvm-16/lib/libbolt_rt_instr.a \
    -instrumentation-file="$work/inst.fdata" -o prog.inst >inst.out 2>&1 && ./prog.inst >/dev/null 2>&1
  if [ -s inst.fdata ]; then
    crt='_init\|_fini\|tm_clones\|__do_global_dtors_aux\|frame_dummy'
    grep -v "\\[unknown\\]\\|@PLT\\|$crt" inst.fdata | sort >inst.sorted
    grep -v '\[unknown\]' out/arcs.fdata | sort >ours.sorted
    if cmp -s inst.sorted ours.sorted; then
      pass "arcs.fdata has the records of BOLT's instrumentation ($(wc -l <ours.sorted) records)"
    else
      fail "arcs.fdata has the records of BOLT's instrumentation" "$(diff inst.sorted ours.sorted | head -8 | tr '\n' '|')"
    fi
  else
    fail "BOLT instrumentation" "no profile written: $(tail -2 inst.out)"
  fi
fi
finish
