"""Integration tests for real programs (issue 4): threads, child processes,
shared libraries, attach/detach, C++ exceptions and unwinding, machine
details, faults.  Imported by run_tests.py, whose helpers it uses; jobs(ctx)
returns the jobs to append.  The programs are in tests/real/ (their counts by
construction are in their top comments); see tests/README.md.

As everywhere in this suite, expectations come from the programs' construction
and from native runs (and gdb/perf reading native runs), never from an
earlier lazyprobe run.
"""

import collections
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import threading
import time

import run_tests as rt

REAL = os.path.join(rt.HERE, 'real')
RUN_TIMEOUT = rt.RUN_TIMEOUT
SYSTEM_DIRS = ('/lib/', '/usr/lib/', '/lib64/', '/usr/lib64/')


# ----------------------------------------------------------------- build ---

def build(ctx, out_name, srcs, flags, cc='gcc', subdir='real'):
    """Builds SRCS (paths under tests/real unless absolute) with FLAGS into
    work/SUBDIR/OUT_NAME, cached on the command and the sources' mtimes.
    Returns (path, error)."""
    d = os.path.join(ctx.work, subdir)
    os.makedirs(d, exist_ok=True)
    out = os.path.join(d, out_name)
    srcs = [s if os.path.isabs(s) else os.path.join(REAL, s) for s in srcs]
    cmd = [cc] + list(flags) + ['-o', out] + srcs
    stamp = ' '.join(cmd)
    stampf = out + '.cmd'
    with ctx._lock:
        if (os.path.exists(out) and os.path.exists(stampf) and open(stampf).read() == stamp and
                all(os.path.getmtime(out) >= os.path.getmtime(s) for s in srcs)):
            return out, None
        r = subprocess.run(cmd, capture_output=True, text=True, cwd=d)
        if r.returncode != 0:
            return out, 'build failed: %s: %s' % (stamp, r.stderr.strip()[:400])
        with open(stampf, 'w') as f:
            f.write(stamp)
    return out, None


# --------------------------------------------------------------- helpers ---

def run_in(argv, cwd=None, timeout=RUN_TIMEOUT, stdin=None, core=False):
    """rt.run_proc with a working directory and a core size limit
    (unlimited with CORE, else 0, so that aborts leave no core files)."""
    def limits():
        lim = resource.RLIM_INFINITY if core else 0
        resource.setrlimit(resource.RLIMIT_CORE, (lim, lim))
    fin = open(stdin, 'rb') if stdin else subprocess.DEVNULL
    try:
        p = subprocess.Popen(argv, cwd=cwd, stdin=fin, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, start_new_session=True, preexec_fn=limits)
        try:
            out, err = p.communicate(timeout=timeout)
            return rt.status_of(p.returncode), out, err, False
        except subprocess.TimeoutExpired:
            rt.kill_group(p)
            out, err = p.communicate()
            return rt.status_of(p.returncode), out, err, True
    finally:
        if stdin:
            fin.close()


def same_as_native(nat, lp, what='', stderr=True):
    """Problems comparing (status, out, err, timed_out) of a native and a
    lazyprobe run (lazyprobe's own stderr lines dropped)."""
    nst, nout, nerr, nto = nat
    lst, lout, lerr, lto = lp
    probs = []
    if nto:
        probs.append('%snative run timed out' % what)
    if lto:
        probs.append('%slazyprobe run timed out' % what)
    if lout != nout:
        probs.append('%sstdout differs: %s' % (what, rt.first_diff(nout, lout)))
    if stderr and rt.non_lp_stderr(lerr) != nerr:
        probs.append('%sstderr differs: %s' % (what, rt.first_diff(nerr, rt.non_lp_stderr(lerr))))
    if lst != nst:
        probs.append('%sstatus %d, native %d (lazyprobe says %s)' %
                     (what, lst, nst, rt.short(b' | '.join(l.encode() for l in rt.lp_lines(lerr)[-3:]))))
    return probs


def repro(cmd):
    return '  [repro: %s]' % ' '.join(cmd)


def same_module(a, b):
    return os.path.realpath(str(a)) == os.path.realpath(str(b))


def module_counts(calls, module, syms, names):
    """{name: count} for NAMES of MODULE (a file), matched by address
    (st_value from SYMS) so that mangled, stripped or renamed entries all
    count; entries of the same function (several processes, several loads
    of a library) are added up.  Absent functions count 0."""
    want = {syms[n]: n for n in names if n in syms}
    got = {n: 0 for n in names}
    for f in calls.get('functions', []):
        if not same_module(f.get('module', ''), module):
            continue
        try:
            addr = int(str(f.get('address')), 16)
        except ValueError:
            continue
        if addr in want:
            got[want[addr]] += int(f.get('count') or 0)
    return got


def count_problems(got, expect, label=''):
    probs = []
    for n, c in expect.items():
        if got.get(n) != c:
            probs.append('%s%s: count %s, expected %s' % (label, n, got.get(n), c))
    return probs


def missing_syms(syms, names):
    return [n for n in names if n not in syms]


def load_calls_safe(outdir, probs, what='calls.json'):
    try:
        return rt.load_calls(outdir)
    except (OSError, ValueError) as e:
        probs.append('%s: %s' % (what, e))
        return None


def all_counters_files(outdir):
    """Every lazyprobe.*.counters in OUTDIR, whatever the naming of images
    after exec (lazyprobe.PID.counters, lazyprobe.PID-N.counters, ...)."""
    try:
        return sorted(f for f in os.listdir(outdir)
                      if f.startswith('lazyprobe.') and f.endswith('.counters'))
    except OSError:
        return []


SEALED_MAX = 8 << 20


def report_copy(ctx, src_files, dest, extra=(), load=None):
    """Copies counters files to DEST and runs `lazyprobe report [EXTRA] DEST`
    there (so that the run's own calls.json is left alone).  Returns
    (LOAD(DEST) or None, problem or None), LOAD by default reading calls.json.
    The processes have ended, so each file must have been cut to what it
    holds: a small program's file is far below SEALED_MAX (an unsealed one is
    hundreds of MB, sparse, and a copy fills the disk)."""
    shutil.rmtree(dest, ignore_errors=True)
    os.makedirs(dest)
    for f in src_files:
        size = os.path.getsize(f)
        if size > SEALED_MAX:
            return None, '%s is %d bytes after its process ended' % (f, size)
        shutil.copy(f, dest)
    cmd = [ctx.lp, 'report'] + list(extra) + [dest]
    st, out, err, to = rt.run_proc(cmd, timeout=60)
    if to or st != 0:
        return None, 'report failed (status %s, timeout %s): %s%s' % (st, to, rt.short(err),
                                                                      repro(cmd))
    try:
        return (load or rt.load_calls)(dest), None
    except (OSError, ValueError) as e:
        return None, 'report: %s%s' % (e, repro(cmd))


def proc_state(pid):
    """The State letter of /proc/PID/status, or None when gone."""
    try:
        with open('/proc/%d/status' % pid) as f:
            for line in f:
                if line.startswith('State:'):
                    return line.split()[1]
    except OSError:
        return None
    return None


def wait_gone(pid, seconds):
    """Waits until PID is gone or a zombie.  Returns the last state seen
    while alive ('T'/'t' is a stopped or traced-stopped process)."""
    deadline = time.time() + seconds
    last = None
    while time.time() < deadline:
        st = proc_state(pid)
        if st is None or st in ('Z', 'X'):
            return None
        last = st
        time.sleep(0.05)
    return last


class LineReader:
    """Reads a pipe line by line in a thread; wait_for(regex) with a timeout."""

    def __init__(self, pipe):
        self.lines = []
        self.cond = threading.Condition()
        self.done = False
        self.t = threading.Thread(target=self._run, args=(pipe,), daemon=True)
        self.t.start()

    def _run(self, pipe):
        for line in iter(pipe.readline, b''):
            with self.cond:
                self.lines.append(line)
                self.cond.notify_all()
        with self.cond:
            self.done = True
            self.cond.notify_all()

    def wait_for(self, regex, timeout):
        deadline = time.time() + timeout
        with self.cond:
            while True:
                for line in self.lines:
                    m = re.search(regex, line)
                    if m:
                        return m
                left = deadline - time.time()
                if self.done or left <= 0:
                    return None
                self.cond.wait(left)

    def text(self, timeout=30):
        self.t.join(timeout)
        with self.cond:
            return b''.join(self.lines)


# ---------------------------------------------------------- 1. threads ---

STORM_THREADS = 8


def storm_names():
    return ['f_%04d' % i for i in range(2000)] + ['worker', 'round_sum', 'main']


def storm_expect(rounds):
    e = {'f_%04d' % i: STORM_THREADS * rounds for i in range(2000)}
    e.update(worker=STORM_THREADS, round_sum=STORM_THREADS * rounds, main=1)
    return e


def test_storm(ctx, mode):
    """8 threads make thousands of first calls at once (2000 functions,
    released by a barrier).  atomic: 5 runs under -c calls --atomic, output
    and every count exact, every first hit asked for through a stub (--stats
    trap_hits 0, stub_hits >= 2000: threads racing on one stub, core/stubs.c).
    plain: 2 runs without --atomic (counts may be lost: output only), the
    second with --no-stubs (every first hit a trap).  coverage: -c coverage,calls --atomic, then -c
    coverage --atomic, with pauses between rounds so that probe-removal sweeps
    run while threads run: output identical, the entries in coverage-nolines.txt
    exact counts in the first run (calls wants them: copies, whose probes are
    removed) and 1 for every function in the second (coverage alone in a program
    without line info: each function marked run at its first call, which goes
    on through a copy of its first instructions (went_on >= 2000), racing
    threads in its stub, and its entry given its original bytes back: --stats
    marked >= 2000, no copy)."""
    name = 'threads/storm/' + mode
    binary, err = build(ctx, 'thread_storm', ['thread_storm.c'], ['-O2', '-Wall', '-pthread'])
    if err:
        return [(name, [err])]
    syms = ctx.syms(binary)
    miss = missing_syms(syms, storm_names())
    if miss:
        return [(name, ['not in symtab: %s' % miss[:5]])]
    args = ['20', '10000'] if mode == 'coverage' else []
    rounds = int(args[0]) if args else 3
    nat = rt.run_proc([binary] + args)
    runs = {'atomic': 5, 'plain': 2, 'coverage': 2}[mode]
    probs = []
    for k in range(runs):
        outdir = os.path.join(ctx.scratch('%s-%d' % (name, k)), 'out')
        if mode == 'coverage':
            opts = ['-c', 'coverage,calls' if k == 0 else 'coverage', '--atomic', '--stats']
        else:
            opts = ['-c', 'calls'] + (['--atomic', '--stats'] if mode == 'atomic' else
                                      ['--no-stubs', '--stats'] if k == 1 else [])
        cmd = [ctx.lp, 'run'] + opts + ['-o', outdir, '--', binary] + args
        lp = rt.run_proc(cmd, timeout=RUN_TIMEOUT)
        p = same_as_native(nat, lp, 'run %d: ' % k)
        if p:
            probs += [p[0] + repro(cmd)] + p[1:]
            break
        # 8 threads counting without --atomic get one line saying that counts may be lost
        if (b'ran several threads' in lp[2]) != (mode == 'plain'):
            probs.append('run %d: the warning about threads and --atomic %s%s' % (
                k, 'missing' if mode == 'plain' else 'printed', repro(cmd)))
            break
        if mode == 'atomic':
            calls = load_calls_safe(outdir, probs)
            if calls is None:
                break
            p = count_problems(module_counts(calls, binary, syms, storm_names()),
                               storm_expect(rounds), 'run %d: ' % k)
            if p:
                probs += ['%d wrong counts, first: %s' % (len(p), p[0]) + repro(cmd)] + p[1:3]
                break
            # every f_NNNN is first called through a pointer (never eager),
            # by racing threads: each a first hit asked for through its stub
            st = dict((k2.decode(), int(v)) for k2, v in re.findall(rb'(\w+)=(\d+)', lp[2]))
            if st.get('trap_hits') != 0 or st.get('stub_hits', 0) < 2000:
                probs.append('run %d: first hits trapped=%s, through stubs=%s (expected 0, >= 2000)%s'
                             % (k, st.get('trap_hits'), st.get('stub_hits'), repro(cmd)))
                break
        elif mode == 'plain' and k == 1:  # --no-stubs: every first hit traps
            st = dict((k2.decode(), int(v)) for k2, v in re.findall(rb'(\w+)=(\d+)', lp[2]))
            if st.get('stub_hits') != 0 or st.get('trap_hits', 0) < 2000:
                probs.append('run 1 --no-stubs: first hits trapped=%s, through stubs=%s (expected >= 2000, 0)%s'
                             % (st.get('trap_hits'), st.get('stub_hits'), repro(cmd)))
        elif mode == 'coverage':
            m = re.search(rb'cover_removed=(\d+)', lp[2])
            marked = re.search(rb'marked=(\d+)', lp[2])
            if k == 0 and (not m or int(m.group(1)) == 0):
                probs.append('run %d: no cover probe was removed (%s)' % (k, rt.short(lp[2])))
            if k == 1 and (not marked or int(marked.group(1)) < 2000):
                probs.append('run %d: %s functions marked, expected >= 2000 (%s)' %
                             (k, marked and int(marked.group(1)), rt.short(lp[2])))
            went_on = re.search(rb'went_on=(\d+)', lp[2])  # each f_NNNN begins mov; sar: its first call goes on
            if k == 1 and (not went_on or int(went_on.group(1)) < 2000):
                probs.append('run %d: %s first calls went on, expected >= 2000 (%s)' %
                             (k, went_on and int(went_on.group(1)), rt.short(lp[2])))
            if k == 1 and b'cannot write' in lp[2]:  # a ring served after the process ended: no error of ours
                probs.append('run %d: %s' % (k, rt.short(lp[2])))
            got = nolines_entries(os.path.join(outdir, 'coverage-nolines.txt'), binary)
            if got is None:
                probs.append('run %d: no coverage-nolines.txt' % k)
                break
            exp = storm_expect(rounds)
            if k > 0:
                exp = {n: 1 for n in exp}
            bad = [(n, got.get(n), c) for n, c in exp.items() if got.get(n) != c]
            if bad:
                probs.append('run %d: %d functions with wrong entries in coverage-nolines.txt, '
                             'first %s (got, expected)%s' % (k, len(bad), bad[0], repro(cmd)))
                break
    return [(name, probs[:5])]


def nolines_entries(path, module):
    """{function: entries} of MODULE from coverage-nolines.txt."""
    try:
        text = open(path).read()
    except OSError:
        return None
    got = {}
    for line in text.splitlines():
        parts = line.split()
        if line.startswith('#') or len(parts) < 5 or not parts[0].isdigit():
            continue
        if same_module(parts[3], module):
            got[parts[2]] = got.get(parts[2], 0) + int(parts[0])
    return got


# ---------------------------------------------------- 2. child processes ---

PROCS_NAMES = ['main', 'before', 'p_work', 'c_work', 'both', 'leaf_work', 'never', 'fork_child', 'fork_deep',
               'run_jumped', 'fork_or_jump']


def procs_expect(mode):
    """[(role, {function: count})]: one entry per process image, in the
    roles the program writes to its pid file."""
    z = {n: 0 for n in PROCS_NAMES}

    def img(**kw):
        d = dict(z)
        d.update(kw)
        return d
    leaf = img(main=1, leaf_work=13)
    return {
        'fork': [('parent', img(main=1, before=5, p_work=11, both=2)),
                 ('child', img(c_work=7, both=3))],
        'vfork': [('parent', img(main=1, before=5, p_work=4)), ('leaf', leaf)],
        'clone': [('parent', img(main=1, before=5, p_work=6, both=1)),
                  ('child', img(c_work=9, both=4))],
        'wrapped': [('parent', img(main=1, before=5, fork_child=1, p_work=5, both=2)),
                    ('child', img(c_work=8, both=1))],
        'deep': [('parent', img(main=1, before=5, fork_deep=1, fork_child=1, p_work=4, both=3)),
                 ('child', img(c_work=6, both=2))],
        'jumped': [('parent', img(main=1, before=5, run_jumped=2, fork_or_jump=2, fork_child=1, p_work=2, both=1)),
                   ('child', img(c_work=5, both=2))],
        'forkpty': [('parent', img(main=1, before=5, p_work=7, both=2)),
                    ('child', img(c_work=4, both=5))],
        'daemon': [('parent', img(main=1, before=5)), ('child', img(c_work=3, both=6))],
        'outlive': [('parent', img(main=1, before=5, p_work=1)), ('child', img(c_work=2))],
        'spawn': [('parent', img(main=1, before=5, p_work=3)), ('leaf', leaf)],
        'exec': [('exec', img(main=1, before=5)), ('leaf', leaf)],
    }[mode]


def per_image(ctx, outdir, scratch, binary, syms, names):
    """[(file, pid, {name: count})]: every counters file reported alone."""
    res = []
    probs = []
    for f in all_counters_files(outdir):
        calls, err = report_copy(ctx, [os.path.join(outdir, f)], os.path.join(scratch, 'img-' + f))
        if err:
            probs.append('%s: %s' % (f, err))
            continue
        procs = calls.get('processes') or []
        if len(procs) != 1:
            probs.append('%s: report of this file alone shows %d processes' % (f, len(procs)))
            continue
        res.append((f, procs[0].get('pid'), module_counts(calls, binary, syms, names)))
    return res, probs


def image_problems(images, expected):
    """EXPECTED: [(pid, counts)].  Each must be one file's exactly; other
    files may exist (a vfork child before its exec) only with all counts 0."""
    probs = []
    left = list(images)
    for pid, counts in expected:
        match = [im for im in left if im[1] == pid and im[2] == counts]
        if not match:
            same_pid = [(im[0], {k: v for k, v in im[2].items() if v}) for im in images
                        if im[1] == pid]
            probs.append('no counters file for pid %s with %s; files of that pid: %s' %
                         (pid, {k: v for k, v in counts.items() if v}, same_pid or 'none'))
        else:
            left.remove(match[0])
    for f, pid, counts in left:
        if any(counts.values()):
            probs.append('extra counters file %s (pid %s) with counts %s' %
                         (f, pid, {k: v for k, v in counts.items() if v}))
    return probs


def total_counts(expected_images):
    tot = {}
    for _, counts in expected_images:
        for k, v in counts.items():
            tot[k] = tot.get(k, 0) + v
    return tot


def test_procs_arcs(ctx, mode):
    """procs/arcs/MODE (fork, vfork, clone, wrapped, deep, jumped, forkpty,
    daemon): under
    -c dump_arcs.lua and -c dump_arcs_only.lua (the arcs collector's probes,
    whose spanning tree is another), output as natively and flow conserved at
    every block of every function of the program, in the report of all its
    process images and in each image's alone: fork, vfork,
    syscall(SYS_clone, SIGCHLD, ...), forkpty and the functions of the
    program that fork through any chain of calls (fork_child, fork_deep,
    fork_or_jump) return twice, into the parent and the child, and the block
    after them has the second return as a side entry; a longjmp out of such
    a call leaves that count one below (jumped), as daemon's parent, which
    exits inside it, does (before session 22 vfork's main was
    inconsistent: block 1 with 2 in and 1 out; before session 23 clone's and
    wrapped's main had a negative count derived; before session 32 deep's
    main, in the child's image under the arcs collector's probes; before
    session 33 forkpty's and daemon's child's main, the child's blocks read
    as never run in the report of all images)."""
    name = 'procs/arcs/' + mode
    binary, err = build(ctx, 'procs', ['procs.c'], ['-O2', '-Wall'])
    if err:
        return [(name, [err])]
    scratch = ctx.scratch(name)
    nat = run_in([binary, mode, os.path.join(scratch, 'native.pids')])
    probs = []
    for dump in (rt.DUMP_ARCS, rt.DUMP_ARCS_ONLY):
        tag = os.path.basename(dump)
        outdir = os.path.join(scratch, 'out-' + tag)
        cmd = [ctx.lp, 'run', '-c', dump, '-o', outdir, '--', binary, mode, os.path.join(scratch, 'lp.pids')]
        here = same_as_native(nat, run_in(cmd))
        try:
            funcs = rt.exe_functions(rt.load_dump(outdir), binary)
            here += rt.flow_problems(funcs, '%s: all images' % tag)
            if not any(f.get('edges') for f in funcs):
                here.append('%s: no function with edges' % tag)
            for f in all_counters_files(outdir):
                alone = os.path.join(scratch, 'alone-%s-%s' % (tag, f))
                got, err = report_copy(ctx, [os.path.join(outdir, f)], alone, ['-c', dump], rt.load_dump)
                if err:
                    here.append('%s: %s' % (f, err))
                    continue
                here += rt.flow_problems(rt.exe_functions(got, binary), '%s: %s alone' % (tag, f))
        except (OSError, ValueError) as e:
            here.append('%s: dump.json: %s' % (tag, e))
        if here:
            here[0] += repro(cmd)
        probs += here
    return [(name, probs)]


def asm_arcs_run(ctx, prog):
    """tests/real/PROG_main.c and PROG.S built -O2, run natively and under
    -c dump_arcs.lua: (problems: output unlike the native run's, flow
    conservation; the executable's functions by name; the command, None when
    the build failed)."""
    binary, err = build(ctx, prog, [prog + '_main.c', prog + '.S'], ['-O2', '-Wall'])
    if err:
        return [err], {}, None
    outdir = os.path.join(ctx.scratch('tables/' + prog), 'out')
    cmd = [ctx.lp, 'run', '-c', rt.DUMP_ARCS, '-o', outdir, '--', binary]
    probs = same_as_native(run_in([binary]), run_in(cmd))
    funcs = []
    try:
        funcs = rt.exe_functions(rt.load_dump(outdir), binary)
        probs += rt.flow_problems(funcs, 'arcs')
    except (OSError, ValueError) as e:
        probs.append('dump.json: %s' % e)
    return probs, {g['name']: g for g in funcs}, cmd


def table_edges(f, block):
    """The counts of F's table edges from BLOCK, sorted."""
    return sorted(e.get('count') for e in f.get('edges') or [] if e['from'] == block and e['kind'] == 'table')


def test_guard_escape(ctx):
    """tables/guard_escape: tests/real/guard_escape.S, a table of offsets
    that nothing bounds, whose entry 2 jumps into the middle of an instruction
    of case 0: its entries are decoded up to that one, and the copy's guard
    sends index 2 to the original load.  Under -c dump_arcs.lua: output as
    natively; dispatch's dispatch block 300 times, its table edges 100 and
    100, its `escapes` 100 (index 2, run in the original); flow conserved
    at every block; no note.  Before session 24 the dispatch left the copy
    (no table edges, "measured only up to an indirect jump")."""
    name = 'tables/guard_escape'
    probs, by_name, cmd = asm_arcs_run(ctx, 'guard_escape')
    f = by_name.get('dispatch', {})
    blocks = f.get('blocks') or [{}]
    got = (f.get('state'), f.get('note'), blocks[0].get('count'), table_edges(f, 1), blocks[0].get('escapes'))
    want = ('relocated', '', 300, [100, 100], 100)
    if cmd and got != want:
        probs.append('dispatch: state, note, count, table edges, escapes %s, want %s' % (got, want))
    if probs and cmd:
        probs[0] += repro(cmd)
    return [(name, probs)]


def test_shared_table(ctx):
    """tables/shared_table: tests/real/shared_table.S, one table of offsets
    read by two dispatches (the lea above both: Rust's Once::call).  Under
    -c dump_arcs.lua: output as natively; step's first dispatch's table
    edges 75 to each case, the second's 25 to cases 1-3 and none back to
    case 0 (counts known by construction); stepper's (its base register
    written again on the way out, a tail call through a register) 34, 67
    and 100; flow conserved; no note.  Before session 25 step's second
    dispatch and stepper's left the copy under arcs ("measured only up to an
    indirect jump", no table edges)."""
    name = 'tables/shared_table'
    probs, by_name, cmd = asm_arcs_run(ctx, 'shared_table')
    f = by_name.get('step', {})
    got = (f.get('state'), f.get('note'), (f.get('blocks') or [{}])[0].get('count'), [table_edges(f, 1), table_edges(f, 2)])
    want = ('relocated', '', 300, [[75, 75, 75, 75], [0, 25, 25, 25]])
    if cmd and got != want:
        probs.append('step: state, note, count, table edges %s, want %s' % (got, want))
    f = by_name.get('stepper', {})
    got = (f.get('state'), f.get('note'), f.get('count'),
           sorted(e.get('count') for e in f.get('edges') or [] if e['kind'] == 'table'))
    want = ('relocated', '', 100, [34, 67, 100])
    if cmd and got != want:
        probs.append('stepper: state, note, count, table edges %s, want %s' % (got, want))
    if probs and cmd:
        probs[0] += repro(cmd)
    return [(name, probs)]


def test_procs(ctx, mode):
    """fork / a function that forks / vfork+exec / clone(SIGCHLD) / forkpty / daemon / posix_spawn /
    exec of itself:
    one counters file per process image with that image's counts only;
    calls.json of the run and `report DIR` add all up; `report --pid PID DIR`
    shows the images of PID only."""
    name = 'procs/' + mode
    binary, err = build(ctx, 'procs', ['procs.c'], ['-O2', '-Wall'])
    if err:
        return [(name, [err])]
    syms = ctx.syms(binary)
    scratch = ctx.scratch(name)
    npid = os.path.join(scratch, 'native.pids')
    nat = run_in([binary, mode, npid])
    outdir = os.path.join(scratch, 'out')
    lpid = os.path.join(scratch, 'lp.pids')
    cmd = [ctx.lp, 'run', '-c', 'calls', '-o', outdir, '--', binary, mode, lpid]
    lp = run_in(cmd)
    probs = same_as_native(nat, lp)
    try:
        roles = [l.split() for l in open(lpid).read().splitlines()]
    except OSError as e:
        return [(name, probs + ['pid file: %s' % e] + [repro(cmd)])]
    pid_of = {}
    for role, pid in roles:
        pid_of.setdefault(role, int(pid))
    exp = procs_expect(mode)
    if sorted(r for r, _ in exp) != sorted(r for r, _ in roles):
        probs.append('pid file has roles %s, expected %s' % (roles, [r for r, _ in exp]))
        return [(name, probs + [repro(cmd)])]
    expected = [(pid_of[r], c) for r, c in exp]
    images, p = per_image(ctx, outdir, scratch, binary, syms, PROCS_NAMES)
    probs += p
    probs += image_problems(images, expected)
    total = total_counts(expected)
    calls = load_calls_safe(outdir, probs, 'run calls.json')
    if calls is not None:
        probs += count_problems(module_counts(calls, binary, syms, PROCS_NAMES), total,
                                'run calls.json (all processes): ')
    files = [os.path.join(outdir, f) for f in all_counters_files(outdir)]
    calls, err = report_copy(ctx, files, os.path.join(scratch, 'report-all'))
    if err:
        probs.append('report DIR: ' + err)
    else:
        probs += count_problems(module_counts(calls, binary, syms, PROCS_NAMES), total,
                                'report DIR: ')
    parent = pid_of.get('parent') or pid_of.get('exec')
    calls, err = report_copy(ctx, files, os.path.join(scratch, 'report-pid'),
                             ['--pid', str(parent)])
    if err:
        probs.append('report --pid: ' + err)
    else:
        pids = sorted(set(p.get('pid') for p in calls.get('processes') or []))
        if pids != [parent]:
            probs.append('report --pid %d: processes %s' % (parent, pids))
        probs += count_problems(module_counts(calls, binary, syms, PROCS_NAMES),
                                total_counts([e for e in expected if e[0] == parent]),
                                'report --pid %d: ' % parent)
    if probs:
        probs[0] += repro(cmd)
    return [(name, probs[:6])]


def test_procs_outlive(ctx):
    """procs/outlive: a child that outlives the program (tests/real/procs.c
    outlive: it waits for a signal once it has worked) is followed after the
    program has ended: lazyprobe is still running then; a SIGTERM to it
    lets the child go on (it is alive after lazyprobe's end) and gives the
    report: a line said that one process outlives the program, the
    program's output and status as natively, the child's image
    "detached" with its counts (before session 33 the run ended with the
    program and let the child go at once, whatever it did later)."""
    name = 'procs/outlive'
    binary, err = build(ctx, 'procs', ['procs.c'], ['-O2', '-Wall'])
    if err:
        return [(name, [err])]
    syms = ctx.syms(binary)
    scratch = ctx.scratch(name)

    def roles_of(pidfile):
        try:
            return dict(l.split()[:2] for l in open(pidfile).read().splitlines())
        except (OSError, ValueError):
            return {}

    def kill_child(pidfile):
        child = roles_of(pidfile).get('child')
        if child:
            try:
                os.kill(int(child), signal.SIGKILL)
            except OSError:
                pass

    npid = os.path.join(scratch, 'native.pids')
    nat = run_in([binary, 'outlive', npid])
    kill_child(npid)
    outdir = os.path.join(scratch, 'out')
    lpid = os.path.join(scratch, 'lp.pids')
    cmd = [ctx.lp, 'run', '-c', 'calls', '-o', outdir, '--', binary, 'outlive', lpid]
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True)
    probs = []
    try:
        deadline = time.time() + RUN_TIMEOUT
        roles = {}
        while time.time() < deadline and p.poll() is None:
            roles = roles_of(lpid)
            if 'child' in roles and 'parent' in roles and not os.path.exists('/proc/%s' % roles['parent']):
                break
            time.sleep(0.05)
        time.sleep(0.5)
        if p.poll() is not None:
            probs.append('lazyprobe ended with the program (status %s): the child was not followed' % p.returncode)
        else:
            p.send_signal(signal.SIGTERM)
        try:
            out, err = p.communicate(timeout=RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            rt.kill_group(p)
            out, err = p.communicate()
            probs.append('lazyprobe did not end after SIGTERM')
        probs += same_as_native(nat, (rt.status_of(p.returncode), out, err, False))
        if b'lazyprobe: the program ended; 1 process it started still runs' not in err:
            probs.append('no line saying that a process outlives the program')
        roles = roles_of(lpid)
        child = roles.get('child')
        alive = False
        if child:
            try:
                os.kill(int(child), 0)
                alive = True
            except OSError:
                pass
        if not alive:
            probs.append('the child %s is not alive after lazyprobe ended' % child)
        calls = load_calls_safe(outdir, probs, 'run calls.json')
        if calls is not None:
            ends = {str(q.get('pid')): q.get('end') for q in calls.get('processes') or []}
            want = {roles.get('parent'): 'exit 0', child: 'detached'}
            if ends != want:
                probs.append('processes ended %s, expected %s' % (ends, want))
            probs += count_problems(module_counts(calls, binary, syms, PROCS_NAMES),
                                    total_counts(procs_expect('outlive')), 'run calls.json: ')
    finally:
        kill_child(lpid)
        if p.poll() is None:
            rt.kill_group(p)
            p.communicate()
    if probs:
        probs[0] += repro(cmd)
    return [(name, probs)]


def test_many_procs(ctx):
    """132 child processes alive at once (tests/real/many_procs.c), each
    making its first call of work() after all exist: more than the 127
    bells the tracer sleeps on, so the last children's stubs become breaks.
    Output as natively; work counted 132 times over all processes (calls.json
    of the run), main once; --stats: first hits through stubs (parent and
    the watched children) and traps (the children past the limit: 5 at
    least)."""
    name = 'procs/many_procs'
    binary, err = build(ctx, 'many_procs', ['many_procs.c'], ['-O2', '-Wall'])
    if err:
        return [(name, [err])]
    syms = ctx.syms(binary)
    outdir = os.path.join(ctx.scratch(name), 'out')
    nat = run_in([binary])
    cmd = [ctx.lp, 'run', '-c', 'calls', '--stats', '-o', outdir, '--', binary]
    lp = run_in(cmd)
    probs = same_as_native(nat, lp)
    calls = load_calls_safe(outdir, probs, 'run calls.json')
    if calls is not None:
        probs += count_problems(module_counts(calls, binary, syms, ['work', 'main']), {'work': 132, 'main': 1},
                                'run calls.json (all processes): ')
    st = dict((k.decode(), int(v)) for k, v in re.findall(rb'(\w+)=(\d+)', lp[2]))
    if st.get('stub_hits', 0) < 126 or st.get('trap_hits', 0) < 5:
        probs.append('first hits through stubs %s, trapped %s (expected >= 126 and >= 5)'
                     % (st.get('stub_hits'), st.get('trap_hits')))
    return [(name, probs[:5] + ([repro(cmd)] if probs else []))]


def test_shell_script(ctx):
    """sh running fib 3 times and many twice: all five images counted, their
    counts summed in calls.json and in `report DIR`."""
    name = 'procs/shell_script'
    v = ('O2', 'pie', 'sym')
    progs = {}
    for pn, times in (('fib', 3), ('many', 2)):
        b, sym_path = ctx.binary(pn, v)
        _, out, _, _ = rt.run_proc([b])
        progs[pn] = (b, ctx.syms(sym_path),
                     {n: c * times for n, c in rt.resolve_expect(ctx.progs[pn], out)}, times)
    script = os.path.join(REAL, 'run_several.sh')
    argv = ['sh', script, progs['fib'][0], progs['many'][0]]
    nat = rt.run_proc(argv)
    scratch = ctx.scratch(name)
    outdir = os.path.join(scratch, 'out')
    cmd = [ctx.lp, 'run', '-c', 'calls', '-o', outdir, '--'] + argv
    lp = rt.run_proc(cmd, timeout=RUN_TIMEOUT)
    probs = same_as_native(nat, lp)
    sources = [('run calls.json', load_calls_safe(outdir, probs))]
    files = [os.path.join(outdir, f) for f in all_counters_files(outdir)]
    calls, err = report_copy(ctx, files, os.path.join(scratch, 'report-all'))
    if err:
        probs.append('report DIR: ' + err)
    sources.append(('report DIR', calls))
    for what, calls in sources:
        if calls is None:
            continue
        for pn, (b, syms, exp, times) in progs.items():
            probs += count_problems(module_counts(calls, b, syms, list(exp)), exp,
                                    '%s: %s: ' % (what, pn))[:2]
            n = sum(1 for p in calls.get('processes') or [] if same_module(p.get('program'), b))
            if n != times:
                probs.append('%s: %d processes of %s, expected %d' % (what, n, pn, times))
    if probs:
        probs[0] += repro(cmd)
    return [(name, probs[:6])]


def test_exec_32bit(ctx):
    """procs/exec_32bit: a 32-bit program exec'd inside a run (sh running
    the 32-bit loader, when the machine has one: `ldd` does so) is let go
    with one lazyprobe: line saying it is 32-bit (it said "/proc/N/auxv has
    no entry 9"), and runs as natively. On a kernel that cannot run 32-bit
    programs (the exec fails natively: "Exec format error") it fails the
    same way under lazyprobe, and lazyprobe says nothing of it."""
    name = 'procs/exec_32bit'
    loader = '/lib/ld-linux.so.2'
    if not os.path.exists(loader):
        return [(name, [])]  # nothing 32-bit to run on this machine
    argv = ['sh', '-c', loader + ' --version; echo done']
    nat = rt.run_proc(argv)
    cmd = [ctx.lp, 'run', '-c', 'calls', '-o', os.path.join(ctx.scratch(name), 'out'), '--'] + argv
    lp = rt.run_proc(cmd, timeout=RUN_TIMEOUT)
    probs = same_as_native(nat, lp)
    said = [l for l in lp[2].decode(errors='replace').splitlines() if 'not followed after exec' in l]
    if b'Exec format error' in nat[2]:
        # a kernel without 32-bit emulation: the exec fails natively, no 32-bit image exists
        if said:
            probs.append('lazyprobe said %r of an exec that failed' % said)
    elif not said or not all('is a 32-bit program' in l for l in said):
        probs.append('lazyprobe said %r, want a line naming a 32-bit program' % said)
    if probs:
        probs[0] += repro(cmd)
    return [(name, probs)]


def test_data_limit(ctx):
    """procs/data_limit: lazyprobe and tests/real/limits.c under a data size
    limit of 100 MB (`ulimit -d`, as some harnesses set): output and status
    as natively, the counts exact.  lazyprobe grows its heap by 128 MB at
    once for huge pages where no such limit stands; under one it said "out
    of memory" and ran nothing (session 19)."""
    name = 'procs/data_limit'
    binary, err = build(ctx, 'limits', ['limits.c'], ['-O2'])
    if err:
        return [(name, [err])]
    want = {'leaf': 300, 'mid': 100, 'main': 1}
    syms = ctx.syms(binary)
    if missing_syms(syms, want):
        return [(name, ['not in symtab: %s' % missing_syms(syms, want)])]
    limit = ['sh', '-c', 'ulimit -d 102400 && exec "$@"', 'sh']
    nat = rt.run_proc(limit + [binary])
    outdir = os.path.join(ctx.scratch(name), 'out')
    cmd = limit + [ctx.lp, 'run', '-c', 'calls', '-o', outdir, '--', binary]
    lp = rt.run_proc(cmd, timeout=RUN_TIMEOUT)
    probs = same_as_native(nat, lp)
    if nat[1] != b'sum 45750\n':
        probs.append('native output %r' % nat[1])
    calls = load_calls_safe(outdir, probs)
    if calls is not None:
        probs += count_problems(module_counts(calls, binary, syms, list(want)), want)
    if probs:
        probs[0] += repro(cmd)
    return [(name, probs)]


def test_loader_direct(ctx):
    """procs/loader_direct: `lazyprobe run -- /lib64/ld-linux-x86-64.so.2
    /usr/bin/echo hi` (the loader run as the program, loading another):
    output as natively, and one lazyprobe: line says that what the loader
    loads is not instrumented (it said nothing, and counted nothing)."""
    name = 'procs/loader_direct'
    argv = ['/lib64/ld-linux-x86-64.so.2', '/usr/bin/echo', 'hi']
    nat = rt.run_proc(argv)
    cmd = [ctx.lp, 'run', '-c', 'calls', '-o', os.path.join(ctx.scratch(name), 'out'), '--'] + argv
    lp = rt.run_proc(cmd, timeout=RUN_TIMEOUT)
    probs = same_as_native(nat, lp)
    if b'is the dynamic loader: what it loads is not instrumented' not in lp[2]:
        probs.append('no lazyprobe: line saying the loader runs another program uninstrumented')
    if probs:
        probs[0] += repro(cmd)
    return [(name, probs)]


def test_inherited_signals(ctx):
    """procs/inherited_signals: the program inherits the signal dispositions
    and mask its launcher had, as natively: started with SIGINT, SIGHUP,
    SIGQUIT, SIGTERM and SIGPIPE ignored (nohup, a shell's background job)
    and SIGUSR2 blocked, Debian's grep prints the same SigIgn and SigBlk of
    /proc/self/status under lazyprobe (before: lazyprobe's handlers for
    SIGINT, SIGTERM, SIGHUP and SIGQUIT took their SIG_IGN from it)."""
    name = 'procs/inherited_signals'

    def launcher():
        for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGTERM, signal.SIGPIPE):
            signal.signal(sig, signal.SIG_IGN)
        signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR2])
    argv = ['grep', '-E', '^Sig(Ign|Blk)', '/proc/self/status']
    outdir = os.path.join(ctx.scratch(name), 'out')
    runs = []
    for cmd in (argv, [ctx.lp, 'run', '-c', 'calls', '-o', outdir, '--'] + argv):
        p = subprocess.run(cmd, capture_output=True, timeout=RUN_TIMEOUT, preexec_fn=launcher)
        runs.append((rt.status_of(p.returncode), p.stdout, p.stderr, False))
    probs = same_as_native(runs[0], runs[1])
    if b'SigIgn:\t0000000000005007' not in runs[0][1]:
        probs.append('the native run does not show the five signals ignored: %s' % rt.short(runs[0][1]))
    return [(name, probs)]


def test_shell_script_coverage(ctx):
    """procs/shell_script/coverage: sh runs tests/real/home.c three times
    under -c coverage; from the third image on its functions are relocated
    from the plans the second made, moved to the new load address (--stats
    plans_reused >= 1).  Each image's own report (its counters file alone,
    `lazyprobe report -c coverage`) is the same coverage.info, @late covered
    and @never not: a plan moved wrong (a block, a branch) would show there."""
    name = 'procs/shell_script/coverage'
    binary, err = build(ctx, 'home', ['home.c'], ['-O2', '-g', '-Wall', '-pthread'])
    if err:
        return [(name, [err])]
    scratch = ctx.scratch(name)
    outdir = os.path.join(scratch, 'out')
    script = '"$0" run 30; "$0" run 30; "$0" run 30'
    argv = ['sh', '-c', script, binary]
    cmd = [ctx.lp, 'run', '-c', 'coverage', '--stats', '-o', outdir, '--'] + argv
    lp = rt.run_proc(cmd, timeout=RUN_TIMEOUT)
    probs = same_as_native(rt.run_proc(argv), lp)
    m = re.search(rb'plans_reused=(\d+)', lp[2])
    if not m or int(m.group(1)) < 1:
        probs.append('no plan was reused by the third image (%s)' % (m.group(0) if m else 'no stats'))
    labels = rt.source_labels(os.path.join(REAL, 'home.c'))
    infos = []
    for f in all_counters_files(outdir):
        d = os.path.join(scratch, 'one-' + f)
        os.makedirs(d, exist_ok=True)
        shutil.copy(os.path.join(outdir, f), d)
        st, _, err, to = rt.run_proc([ctx.lp, 'report', '-c', 'coverage', d], timeout=60)
        info = os.path.join(d, 'coverage.info')
        if st != 0 or to:
            probs.append('report of %s: status %s: %s' % (f, st, rt.short(err)))
        elif os.path.exists(info) and os.path.getsize(info) > 0:
            infos.append((f, open(info).read(), lcov_da(info)))
    if len(infos) != 3:
        probs.append('%d images with coverage.info, want 3 (home run three times)' % len(infos))
    for f, text, da in infos:
        if text != infos[0][1]:
            probs.append('%s: coverage.info differs from %s\'s' % (f, infos[0][0]))
        src = ([k[0] for k in da if k[0].endswith('home.c')] or [''])[0]
        if not da.get((src, labels['late'])) or da.get((src, labels['never'])) != 0:
            probs.append('%s: @late DA %s (want covered), @never DA %s (want 0)' %
                         (f, da.get((src, labels['late'])), da.get((src, labels['never']))))
    if probs:
        probs[0] += repro(cmd)
    return [(name, probs[:6])]


def test_rebuilt_in_place(ctx):
    """procs/rebuilt_in_place: sh runs a program, copies another program over
    its file (same path, same inode: cp writes in place) and runs it again,
    all under one lazyprobe run -c calls: the second image is relocated from
    the new bytes (a module file is the same only with the same size and
    mtime too), so both print as natively (the stale module crashed it)."""
    name = 'procs/rebuilt_in_place'
    v = ('O2', 'pie', 'sym')
    fib, _ = ctx.binary('fib', v)
    many, _ = ctx.binary('many', v)
    scratch = ctx.scratch(name)
    prog = os.path.join(scratch, 'prog')
    script = '"$0"; cp "$1" "$0"; "$0"'
    shutil.copy(fib, prog)
    nat = rt.run_proc(['sh', '-c', script, prog, many])
    shutil.copy(fib, prog)
    outdir = os.path.join(scratch, 'out')
    cmd = [ctx.lp, 'run', '-c', 'calls', '-o', outdir, '--', 'sh', '-c', script, prog, many]
    lp = rt.run_proc(cmd, timeout=RUN_TIMEOUT)
    probs = same_as_native(nat, lp)
    if probs:
        probs[0] += repro(['cp', fib, prog, ';'] + cmd)
    return [(name, probs[:4])]


def test_make(ctx):
    """`make -j2` of tests/real/makeproj (4 compiles, 1 link) under lazyprobe:
    the build succeeds, the program is byte-identical to a native make's and
    prints the same; calls.json shows the 4 cc1 and the 1 ld process images."""
    name = 'procs/make_j2'
    scratch = ctx.scratch(name)
    src = os.path.join(REAL, 'makeproj')
    nd, ld = os.path.join(scratch, 'native'), os.path.join(scratch, 'lp')
    shutil.copytree(src, nd)
    shutil.copytree(src, ld)
    nat = run_in(['make', '-s', '-j2'], cwd=nd, timeout=120)
    outdir = os.path.join(scratch, 'out')
    cmd = [ctx.lp, 'run', '-c', 'calls', '-o', outdir, '--', 'make', '-s', '-j2']
    lp = run_in(cmd, cwd=ld, timeout=300)
    probs = same_as_native(nat, lp)
    np_, lp_ = os.path.join(nd, 'proj'), os.path.join(ld, 'proj')
    if not os.path.exists(lp_):
        probs.append('no program built under lazyprobe')
    elif open(np_, 'rb').read() != open(lp_, 'rb').read():
        probs.append('the program built under lazyprobe differs from the native build')
    else:
        a, b = rt.run_proc([np_]), rt.run_proc([lp_])
        if a != b:
            probs.append('the built programs behave differently')
    calls = load_calls_safe(outdir, probs)
    if calls is not None:
        progs = [os.path.basename(str(p.get('program'))) for p in calls.get('processes') or []]
        # ld may be named by its link (/usr/bin/ld) or its target (x86_64-linux-gnu-ld.bfd)
        for what, pattern, n in (('cc1', r'cc1', 4), ('ld', r'(.*-)?ld(\.\w+)?', 1)):
            k = sum(1 for pr in progs if re.fullmatch(pattern, pr))
            if k != n:
                probs.append('calls.json: %d %s processes, expected %d (programs: %s)' %
                             (k, what, n, sorted(set(progs))))
    if probs:
        probs[0] += repro(['cd', ld, '&&'] + cmd)
    return [(name, probs[:6])]


# ---------------------------------------------------- 3. shared libraries ---

def build_shlib(ctx):
    """libfoo.so, libbar.so (needs libfoo) and shlib_main, all in work/shlib
    (not a system directory), found through RUNPATH $ORIGIN."""
    d = os.path.join(ctx.work, 'shlib')
    foo, err = build(ctx, 'libfoo.so', ['libfoo.c'], ['-O2', '-fpic', '-shared'], subdir='shlib')
    if err:
        return None, err
    bar, err = build(ctx, 'libbar.so', ['libbar.c'],
                     ['-O2', '-fpic', '-shared', '-L' + d, '-lfoo', '-Wl,-rpath,$ORIGIN'],
                     subdir='shlib')
    if err:
        return None, err
    # shlib_main.c after the flags, -lfoo after the source (link order)
    exe = os.path.join(d, 'shlib_main')
    cmd = ['gcc', '-O2', '-o', exe, os.path.join(REAL, 'shlib_main.c'), '-L' + d, '-lfoo',
           '-ldl', '-Wl,-rpath,$ORIGIN']
    with ctx._lock:
        stampf = exe + '.cmd'
        src = os.path.join(REAL, 'shlib_main.c')
        if not (os.path.exists(exe) and os.path.exists(stampf) and
                open(stampf).read() == ' '.join(cmd) and
                os.path.getmtime(exe) >= max(os.path.getmtime(src), os.path.getmtime(foo))):
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                return None, 'build failed: %s' % r.stderr.strip()[:400]
            with open(stampf, 'w') as f:
                f.write(' '.join(cmd))
    return {'exe': exe, 'foo': foo, 'bar': bar}, None


SHLIB_MAIN = {'main': 1, 'main_cb': 14, 'main_work': 100}
SHLIB_FOO = {'foo_add': 114, 'foo_helper': 114, 'foo_mul': 100, 'foo_apply': 7}
SHLIB_BAR = {'bar_fn': 14, 'bar_unused': 0}
SHLIB_ZERO_FOO = {k: 0 for k in SHLIB_FOO}


def test_shlib(ctx, mode):
    """A program linking libfoo.so and dlopen'ing libbar.so twice (calls in
    both directions between modules; by default at least one PLT slot is
    pointed straight at a copy, --stats plt_redirected).  Modes:
      default      main + both libraries (outside system directories) exact;
                   nothing of /lib, /usr/lib counted
      include      --include 'libfoo*' --include 'libbar*': the same counts
      include_libc --include 'libc.so*': strverscmp counted exactly (17)
      exclude      --exclude 'libbar*': libbar 0, the others exact
      exclude_func --exclude 'libfoo*:foo_add': foo_add 0, the rest exact
      last_rule    --exclude 'libfoo*' --include 'libfoo*:foo_mul': in
                   libfoo only foo_mul counted (the last matching rule wins)
      dlopen_only  --exclude 'shlib_main' --exclude 'libfoo*': nothing is
                   selected at the start (no stub bell yet), libbar, loaded
                   later, exact: its first calls come through stubs too"""
    name = 'shlib/' + mode
    b, err = build_shlib(ctx)
    if err:
        return [(name, [err])]
    exe, foo, bar = b['exe'], b['foo'], b['bar']
    opts = {'default': [], 'include': ['--include', 'libfoo*', '--include', 'libbar*'],
            'include_libc': ['--include', 'libc.so*'], 'exclude': ['--exclude', 'libbar*'],
            'exclude_func': ['--exclude', 'libfoo*:foo_add'],
            'last_rule': ['--exclude', 'libfoo*', '--include', 'libfoo*:foo_mul'],
            'dlopen_only': ['--exclude', 'shlib_main', '--exclude', 'libfoo*']}[mode]
    exp_main, exp_foo, exp_bar = dict(SHLIB_MAIN), dict(SHLIB_FOO), dict(SHLIB_BAR)
    if mode == 'exclude':
        exp_bar = {k: 0 for k in SHLIB_BAR}
    elif mode == 'exclude_func':
        exp_foo['foo_add'] = 0
    elif mode == 'last_rule':
        exp_foo = dict(SHLIB_ZERO_FOO, foo_mul=100)
    elif mode == 'dlopen_only':
        exp_main, exp_foo = {k: 0 for k in SHLIB_MAIN}, dict(SHLIB_ZERO_FOO)
    nat = rt.run_proc([exe, bar])
    outdir = os.path.join(ctx.scratch(name), 'out')
    cmd = [ctx.lp, 'run', '-c', 'calls', '--stats'] + opts + ['-o', outdir, '--', exe, bar]
    lp = rt.run_proc(cmd, timeout=RUN_TIMEOUT)
    probs = same_as_native(nat, lp)
    redirected = re.search(rb'plt_redirected=(\d+)', lp[2])
    if mode == 'default' and (not redirected or int(redirected.group(1)) < 1):
        probs.append('no PLT slot was pointed at a copy (--stats: %s): calls from main to libfoo '
                     'do not go straight to the copies' % (redirected and redirected.group(0)))
    calls = load_calls_safe(outdir, probs)
    if calls is not None:
        for mod, exp in ((exe, exp_main), (foo, exp_foo), (bar, exp_bar)):
            syms = ctx.syms(mod)
            miss = missing_syms(syms, exp)
            if miss:
                probs.append('%s: not in symtab: %s' % (mod, miss))
                continue
            probs += count_problems(module_counts(calls, mod, syms, list(exp)), exp,
                                    os.path.basename(mod) + ': ')
        if mode == 'include_libc':
            libc = {}       # address -> entry: strverscmp and its alias __strverscmp are one
            for f in calls.get('functions', []):
                if os.path.basename(str(f.get('module'))).startswith('libc.so') and \
                        str(f.get('name')).split('@')[0] in ('strverscmp', '__strverscmp'):
                    libc.setdefault(f.get('address'), f)
            n = sum(int(f.get('count') or 0) for f in libc.values())
            if n != 17:
                probs.append('libc strverscmp: count %d (%d entries), expected 17' % (n, len(libc)))
        elif mode in ('default', 'include'):
            sys_counted = [(f.get('name'), f.get('module')) for f in calls.get('functions', [])
                           if (f.get('count') or 0) > 0 and
                           os.path.realpath(str(f.get('module'))).startswith(SYSTEM_DIRS)]
            if sys_counted:
                probs.append('%d functions of system libraries counted by default, e.g. %s' %
                             (len(sys_counted), sys_counted[:2]))
    if probs:
        probs[0] += repro(cmd)
    return [(name, probs[:6])]


# ------------------------------------------------- 4. exceptions, unwinding ---

CXX_EXPECT = {'_Z6level0i': 20, '_Z6level1i': 20, '_Z6level2i': 20, '_Z6level3i': 20,
              '_Z7throweri': 5, '_Z11local_catchi': 5, '_Z4faili': 5, '_Z12guarded_faili': 5,
              '_Z12on_terminatev': 0, 'main': 1}


def test_cxx(ctx, opt, variant=''):
    """C++ exceptions thrown through three instrumented frames with guards
    whose destructors must run, caught, rethrown, caught again; a throw and
    catch inside one function; output and counts (destructors included)
    exact, std::terminate never reached.  VARIANT: 'static' (g++ -static: the
    unwinder is the program's own, instrumented but _Unwind_Find_FDE: the
    registration's call meets first hits, served meanwhile), the same with
    --no-stubs (first hits as traps), or 'include_libgcc'
    (--include 'libgcc*': libgcc_s, the unwinder, is left alone, one
    lazyprobe: line says so), or 'include_libc' (--include 'libc.so*': the
    registration's call meets libc's pthread_mutex_lock, relocated then, its
    stub served while the call runs), or 'include_libstdcxx' (--include
    'libstdc++*': copies in two arenas, the program's and libstdc++'s;
    __cxa_throw and __cxa_rethrow counted too, 30 and 20).  Before session
    17 the static program died of SIGABRT (no handler found: the copies were
    never registered) or SIGILL (a landing pad 1 byte into main.cold, whose
    entry held a jmp), and both --include runs hung (a first hit inside the
    registration); before session 18 include_libstdcxx reached
    std::terminate at its second throw (one registered object held copies
    of both arenas and hid __cxa_throw's copy from the unwinder)."""
    name = 'cxx/exceptions/' + opt + ('/' + variant if variant else '')
    flags = ['-' + opt, '-Wall'] + (['-static'] if variant.startswith('static') else [])
    binary, err = build(ctx, 'cxx_throw.' + opt + ('.static' if variant.startswith('static') else ''),
                        ['cxx_throw.cpp'], flags, cc='g++')
    if err:
        return [(name, [err])]
    syms = ctx.syms(binary)
    exp = dict(CXX_EXPECT)
    for base, n in (('_ZN5GuardC', 70), ('_ZN5GuardD', 70)):
        have = [s for s in (base + '1Ei', base + '2Ei', base + '1Ev', base + '2Ev') if s in syms]
        if not have:
            return [(name, ['no %s* in the symtab' % base])]
        exp[have[0]] = n
    miss = missing_syms(syms, exp)
    if miss:
        return [(name, ['not in symtab: %s' % miss])]
    nat = rt.run_proc([binary])
    outdir = os.path.join(ctx.scratch(name), 'out')
    extra = {'static/no_stubs': ['--no-stubs'], 'include_libgcc': ['--include', 'libgcc*'],
             'include_libc': ['--include', 'libc.so*'],
             'include_libstdcxx': ['--include', 'libstdc++*']}.get(variant, [])
    cmd = [ctx.lp, 'run', '-c', 'calls', '-o', outdir] + extra + ['--', binary]
    lp = rt.run_proc(cmd, timeout=RUN_TIMEOUT)
    probs = same_as_native(nat, lp)
    said = b'libgcc_s.so.1: the unwinder lazyprobe registers' in lp[2]
    if variant == 'include_libgcc' and not said:
        probs.append('no lazyprobe: line saying libgcc_s is left alone')
    calls = load_calls_safe(outdir, probs)
    if calls is not None:
        probs += count_problems(module_counts(calls, binary, syms, list(exp)), exp)
    if calls is not None and variant == 'include_libstdcxx':
        lib = os.path.realpath(LIBSTDCXX)
        want = {'__cxa_throw': 30, '__cxa_rethrow': 20}
        nm = subprocess.run(['nm', '-D', '--defined-only', lib], capture_output=True, text=True).stdout
        dynsyms = {m.group(2): int(m.group(1), 16) for m in re.finditer(r'^([0-9a-f]+) T (\w+)', nm, re.M)}
        probs += count_problems(module_counts(calls, lib, dynsyms, list(want)), want, 'libstdc++: ')
    if probs:
        probs[0] += repro(cmd)
    return [(name, probs[:6])]


LIBSTDCXX = '/usr/lib/x86_64-linux-gnu/libstdc++.so.6'

THREAD_EXIT_EXPECT = {'deep': 30, 'exiter': 5, 'victim': 5, 'spin': 5, 'cleanup': 10}


def test_thread_exit(ctx, variant):
    """unwind/thread_exit/{plain,fexceptions}: tests/real/thread_exit.c
    (-O2): threads leaving by pthread_exit from six copies deep and by
    pthread_cancel, glibc's forced unwinding through the copies (with
    -fexceptions their cleanup handlers are landing pads in the copies, run
    by the unwinder); output as natively (the handlers all ran: "cleanups
    55") and counts by construction."""
    name = 'unwind/thread_exit/' + variant
    flags = ['-O2', '-Wall', '-pthread'] + (['-fexceptions'] if variant == 'fexceptions' else [])
    binary, err = build(ctx, 'thread_exit.' + variant, ['thread_exit.c'], flags)
    if err:
        return [(name, [err])]
    return calls_by_construction(ctx, name, binary, {binary: THREAD_EXIT_EXPECT}, b'cleanups 55\n', ['--atomic'],
                                 ending=True)


def calls_by_construction(ctx, name, binary, expect, output, lp_args=(), ending=False):
    """BINARY run natively and under `lazyprobe run LP_ARGS -c calls`: its
    output and status as natively, its native output OUTPUT (or ending with
    it, when ENDING), and the counts of EXPECT ({module file: {symbol:
    count}}, symbols from each file's .symtab) exact.  Returns [(NAME,
    problems)]."""
    symbols = {module: ctx.syms(module) for module in expect}
    miss = [m for module, want in expect.items() for m in missing_syms(symbols[module], want)]
    if miss:
        return [(name, ['not in symtab: %s' % miss])]
    nat = rt.run_proc([binary])
    outdir = os.path.join(ctx.scratch(name), 'out')
    cmd = [ctx.lp, 'run'] + list(lp_args) + ['-c', 'calls', '-o', outdir, '--', binary]
    lp = rt.run_proc(cmd, timeout=RUN_TIMEOUT)
    probs = same_as_native(nat, lp)
    if not (nat[1].endswith(output) if ending else nat[1] == output):
        probs.append('native output %r, expected %s%r' % (nat[1][-60:], 'it to end with ' if ending else '', output))
    calls = load_calls_safe(outdir, probs)
    for module, want in expect.items():
        if calls is not None:
            probs += count_problems(module_counts(calls, module, symbols[module], list(want)), want)
    if probs:
        probs[0] += repro(cmd)
    return [(name, probs[:6])]


def test_fork_threads_throw(ctx):
    """unwind/fork_threads_throw: tests/real/fork_threads_throw.cpp (-O2):
    ten fork children, each throwing 1000 times, of a program whose three
    other threads throw all along: output as natively ("children ok 10")
    and child_work counted once in each child.  Before session 18 a child
    waited for ever on the unwinder's lock, held by a worker at the fork
    (lazyprobe's registered objects make every lookup take it), its first
    throw trapped for ever at a break its parent had taken away, or it
    ended in std::terminate (copies its parent registered after the fork,
    before the tracer saw the fork, or an object a worker was moving
    between the unwinder's lists at the fork)."""
    name = 'unwind/fork_threads_throw'
    binary, err = build(ctx, 'fork_threads_throw', ['fork_threads_throw.cpp'], ['-O2', '-Wall', '-pthread'], cc='g++')
    if err:
        return [(name, [err])]
    return calls_by_construction(ctx, name, binary, {binary: {'_Z10child_workv': 10}}, b'children ok 10\n')


THROW_THREADS_EXPECT = {'_Z4leafl': 8000, '_Z5leaf2l': 8000, '_Z3midl': 4000, '_Z5mid_bl': 4000,
                        '_Z4mid2l': 4000, '_Z6mid2_bl': 4000}


def test_cxx_threads(ctx):
    """cxx/exceptions/threads: tests/real/throw_threads.cpp (-O2), four
    threads throwing at once from their first iteration, in two phases of
    new copies: output as natively (5336 caught) and counts by construction
    (--atomic: the threads count into the same slots).
    Before session 18 it died of SIGTRAP (a thread that met the unwinder's
    break just as another thread's registration took it away: the trap was
    not recognised) or in std::terminate (a thread that passed the lookup
    while the registration was still running found no copy registered)."""
    name = 'cxx/exceptions/threads'
    binary, err = build(ctx, 'throw_threads', ['throw_threads.cpp'], ['-O2', '-Wall', '-pthread'], cc='g++')
    if err:
        return [(name, [err])]
    return calls_by_construction(ctx, name, binary, {binary: THROW_THREADS_EXPECT}, b'caught 5336\n', ['--atomic'])


def test_cxx_xlib(ctx):
    """cxx/exceptions/two_modules: tests/real/xlib_throw.cpp and its own
    library (instrumented by default, outside the system directories): C++
    exceptions thrown in, through and out of the library in three rounds,
    each round's first throw meeting copies of both modules made since the
    last registration.  Output as natively and counts by construction.
    Before session 18 the second round reached std::terminate: one object
    per registration spanned both modules' arenas and hid the copies of the
    one before from the unwinder."""
    name = 'cxx/exceptions/two_modules'
    lib, err = build(ctx, 'libxlib_throw.so', ['xlib_throw_lib.cpp'],
                     ['-O2', '-Wall', '-fpic', '-shared', '-Wl,-soname,libxlib_throw.so'], cc='g++')
    exe = None
    if not err:
        exe, err = build(ctx, 'xlib_throw', ['xlib_throw.cpp', lib], ['-O2', '-Wall', '-Wl,-rpath,$ORIGIN'], cc='g++')
    if err:
        return [(name, [err])]
    want_exe = {'_Z6round1i': 10, '_Z6round2i': 10, '_Z6round3i': 10, '_Z8callbacki': 10}
    want_lib = {'_Z9lib_throwi': 20, '_Z9lib_catchPFiiEi': 10, '_Z11lib_rethrowi': 10}
    return calls_by_construction(ctx, name, exe, {exe: want_exe, lib: want_lib}, b'10 -25 30\n')


def test_cxx_gcov(ctx):
    """cxx/exceptions/O0/gcov: the lines of tests/real/cxx_throw.cpp that
    -c coverage marks as run are gcov's (run_tests.gcov_compare): the catch
    blocks, entered only by the unwinder at their landing pads, run in the
    copies and are covered, and so are the lines after them (they ran in
    the original body before the pads were decoded)."""
    name = 'cxx/exceptions/O0/gcov'
    if not shutil.which('gcov'):
        return [(name, ['gcov not installed'])]
    plain, err = build(ctx, 'cxx_throw.O0g', ['cxx_throw.cpp'], ['-O0', '-g', '-Wall'], cc='g++')
    obj = None
    if not err:
        obj, err = build(ctx, 'cxx_throw-gcov.o', ['cxx_throw.cpp'], ['-O0', '-g', '--coverage', '-c'], cc='g++')
    if not err:
        covbin, err = build(ctx, 'cxx_throw-gcov', [obj], ['-O0', '-g', '--coverage'], cc='g++')
    if err:
        return [(name, [err])]
    return rt.gcov_compare(ctx, name, os.path.join(REAL, 'cxx_throw.cpp'), None, plain, covbin)


def side_arcs_problems(ctx, name, binary, counts, expect, min_entered, what):
    """The /arcs check of side_blocks_test: under arcs, flow conserved at
    every block with the entries from outside its graph (`side_entries`:
    the unwinder's into landing pads, a cold part's jumps back, each counted
    by a counter of its own), each block's count from the flow equal to
    callgrind's count of its first instruction, the entry counts known by
    construction (EXPECT: {name: count}), at least MIN_ENTERED entries
    from outside counted (WHAT they are), and no function that ran left
    uninstrumented (a cold part entered only past its start)."""
    outdir = os.path.join(ctx.scratch(name), 'out')
    cmd = [ctx.lp, 'run', '-c', rt.DUMP_ARCS, '-o', outdir, '--', binary]
    probs = same_as_native(rt.run_proc([binary]), rt.run_proc(cmd, timeout=RUN_TIMEOUT))
    try:
        funcs = rt.exe_functions(rt.load_dump(outdir), binary)
    except (OSError, ValueError) as e:
        return probs + ['dump.json: %s' % e + repro(cmd)]
    probs += rt.flow_problems(funcs, 'run')
    got = {f['name']: f.get('count') for f in funcs}
    for fn, n in expect.items():
        if got.get(fn) != n:
            probs.append('%s: count %s, want %d' % (fn, got.get(fn), n))
    entered = 0
    for f in funcs:
        lo, hi = f['address'], f['address'] + (f.get('size') or 0)
        if f.get('state') == 'not run' and any(n for a, n in counts.items() if lo <= a < hi):
            probs.append('%s ran (callgrind) but was never instrumented' % f['name'])
        if f.get('state') not in ('relocated', 'trapped'):
            continue
        for i, b in enumerate(f.get('blocks') or [], 1):
            entered += b.get('side_entries', 0)
            if 'count' in b and b['count'] != counts.get(b['address'], 0):
                probs.append('%s block %d at 0x%x: count %d, callgrind %d' %
                             (f['name'], i, b['address'], b['count'], counts.get(b['address'], 0)))
    if entered < min_entered:
        probs.append('%s: %d entries counted, want %d or more' % (what, entered, min_entered))
    if probs:
        probs[0] += repro(cmd)
    return probs


def side_blocks_test(ctx, prefix, out_name, srcs, flags, cc, expect, min_entered, what, stripped=False):
    """PREFIX/blocks, /cover and /arcs: run_tests.test_blocks on a program of
    tests/real built non-PIE: every block's count equals callgrind's count of
    its first instruction, the blocks entered from outside their graph
    (landing pads, where a cold part jumps back) and what follows them
    included, and nothing ran in a relocated function outside its blocks;
    and side_arcs_problems.  STRIPPED: the binary stripped, where gcc's cold
    parts are fn_ADDR like every function and are linked to their hot parts
    by the jumps between them (EXPECT's names found by the unstripped
    binary's addresses)."""
    names = ['%s/%s' % (prefix, kind) for kind in ('blocks', 'cover', 'arcs')]
    if not shutil.which('valgrind'):
        return [(n, ['valgrind not installed']) for n in names]
    binary, err = build(ctx, out_name, srcs, flags + ['-g', '-no-pie', '-Wall'], cc=cc)
    if err:
        return [(n, [err]) for n in names]
    if stripped:
        syms = ctx.syms(binary)
        if missing_syms(syms, expect):
            return [(n, ['not in symtab: %s' % missing_syms(syms, expect)]) for n in names]
        expect = {'fn_%x' % syms[n]: c for n, c in expect.items()}
        plain, binary = binary, binary + '.stripped'
        r = subprocess.run(['strip', '-o', binary, plain], capture_output=True, text=True)
        if r.returncode != 0:
            return [(n, ['strip failed: ' + r.stderr.strip()]) for n in names]
    cg, err = rt.run_callgrind_instr(binary, None, os.path.join(ctx.scratch(names[0]), 'callgrind.out'))
    if err:
        return [(n, [err]) for n in names]
    counts = rt.exe_instr_counts(cg, binary)
    nst, nout, _, _ = rt.run_proc([binary])
    prog = collections.namedtuple('prog', 'name stdin expect')(out_name, None, list(expect.items()))
    return [(name, rt.block_problems(ctx, prog, binary, counts, (nst, nout), collector, kind, name))
            for name, collector, kind in zip(names, (rt.DUMP_BLOCKS, rt.DUMP_BLOCKS_COVER), ('count', 'cover'))] + \
        [(names[2], side_arcs_problems(ctx, names[2], binary, counts, expect, min_entered, what)[:8])]


def test_cxx_blocks(ctx, opt, stripped=False):
    """cxx/exceptions/OPT/{blocks,cover,arcs} (side_blocks_test) on
    tests/real/cxx_throw.cpp at -O0 or -O2: landing pads' blocks (their probe
    runs first: the copy's LSDA sends the unwinder to the block's start;
    guarded_fail's pad comes right after a call of a [[noreturn]] function,
    where the decoder also runs into it) and the code after a catch counted;
    O2-stripped: the same binary stripped."""
    return side_blocks_test(ctx, 'cxx/exceptions/%s%s' % (opt, '-stripped' if stripped else ''),
                            'cxx_throw.%snopie' % opt, ['cxx_throw.cpp'], ['-' + opt], 'g++', CXX_EXPECT,
                            20 + 20 + 20 + 20 + 5 + 5,  # level0's catch, level1..3's guards, local_catch's, guarded_fail's
                            "the unwinder's entries into landing pads", stripped)


COLD_THREADS_EXPECT = {'work': 1000, 'always_cold': 5, 'rare': 15, 'spin': 1, 'main': 1}


def test_cold_threads(ctx, stripped):
    """cold/threads{,-stripped}/{blocks,cover,arcs} (side_blocks_test) on
    tests/real/cold_threads.c at -O2: work.cold jumps back into work at a
    block work's own edges reach too (its counter of those entries is in a
    stub of its own, not at the block's start, which counted every run:
    1990 for 1000 under arcs), and work's copy is made while a second thread
    runs, so the jump from work.cold's copy is pointed at it under an int3."""
    return side_blocks_test(ctx, 'cold/threads' + ('-stripped' if stripped else ''), 'cold_threads',
                            ['cold_threads.c'], ['-O2', '-pthread'], 'gcc', COLD_THREADS_EXPECT, 10,
                            "work.cold's jumps back into work", stripped)


COLD_SIDE_EXPECT = {'hot': 100, 'main': 1}


def test_cold_side(ctx, stripped):
    """cold/side_only{,-stripped}/{blocks,cover,arcs} (side_blocks_test) on
    tests/real/cold_side.S: hot.cold is entered only past its start (its
    first bytes, a branch never taken, do not run), along a path with no
    counter of its own, and its one counted edge stays 0; under arcs its
    counts come from its side entry alone (before session 23 the solver took
    a function whose entry and counted edges were all 0 as not run: every
    count of hot.cold 0, as in ~40 cold parts of Debian's python3)."""
    return side_blocks_test(ctx, 'cold/side_only' + ('-stripped' if stripped else ''), 'cold_side',
                            ['cold_side_main.c', 'cold_side.S'], ['-O2'], 'gcc', COLD_SIDE_EXPECT, 40,
                            "hot's jumps into the middle of hot.cold", stripped)


def test_cold_marked(ctx, stripped):
    """cold/marked{,-stripped}: tests/real/cold_side.S built without line info
    under -c coverage alone (run_tests.marked_problems): every function is
    marked run at its first call, no copy made, and hot.cold, which only hot's
    jumps enter past its start, is marked when a thread first meets the int3
    watching where hot jumps into it (core/breaks.c, breaks_watch_parts: put
    before anything runs, so that hot's first call goes on without waiting,
    its note says so): the functions counted run are exactly those callgrind
    ran, and hot.cold's row says 1, "marked".  Under relocation its count
    came from its entry alone: 0.  Stripped (the parts linked by their jumps),
    all but the C runtime's frame_dummy and its neighbours, which have no FDE
    and so lie in no function called at its start: they run unseen, marked or
    relocated alike."""
    name = 'cold/marked' + ('-stripped' if stripped else '')
    binary, err = build(ctx, 'cold_side_nolines', ['cold_side_main.c', 'cold_side.S'], ['-O2', '-no-pie', '-Wall'])
    if err:
        return [(name, [err])]
    if stripped:
        plain, binary = binary, binary + '.stripped'
        r = subprocess.run(['strip', '-o', binary, plain], capture_output=True, text=True)
        if r.returncode != 0:
            return [(name, ['strip failed: ' + r.stderr.strip()])]
    cg, err = rt.run_callgrind_instr(binary, None, os.path.join(ctx.scratch(name + '-cg'), 'callgrind.out'))
    if err:
        return [(name, [err])]
    counts = rt.exe_instr_counts(cg, binary)
    if stripped:  # what no FDE covers: from the symbol after the last FDE's function to the next one's
        syms = ctx.syms(plain)
        counts = {a: n for a, n in counts.items() if not syms['_dl_relocate_static_pie'] <= a < syms['hot']}
    nst, nout, _, _ = rt.run_proc([binary])
    workdir = ctx.scratch(name)
    probs = rt.marked_problems(ctx.lp, [binary], None, workdir, counts, RUN_TIMEOUT)
    try:
        with open(os.path.join(workdir, 'stdout'), 'rb') as f:
            if f.read() != nout:
                probs.append('stdout differs from the native run')
        cold = rt.nolines_rows(os.path.join(workdir, 'marked'), binary).get(ctx.syms(plain if stripped else binary)
                                                                             ['hot.cold'])
        if cold != (1, 'marked'):  # its count alone is the home probe's, the state the part's marking
            probs.append('hot.cold: %s in coverage-nolines.txt, expected (1, marked)' % (cold,))
    except (OSError, KeyError) as e:
        probs.append(str(e))
    marked = os.path.join(workdir, 'marked')
    subprocess.run([ctx.lp, 'report', '-c', os.path.join(rt.TEST_COLLECTORS, 'dump_cover.lua'), marked],
                   capture_output=True)
    try:
        hot = ctx.syms(plain if stripped else binary)['hot']
        note = {f.get('address'): f.get('note') for f in rt.exe_functions(rt.load_dump(marked), binary)}.get(hot)
        if note != 'its first call went on without waiting':  # hot.cold watched from the start
            probs.append("hot: note %r, expected its first call gone on (its part watched from the start)" % note)
    except (OSError, ValueError, KeyError) as e:
        probs.append('dump.json: %s' % e)
    return [(name, probs)]


def test_went_on(ctx, stripped):
    """marked/went_on{,-stripped}: tests/real/went_on.S without line info
    under -c coverage alone: sum3's and late's first calls go on through a
    copy of their first instructions without waiting for the tracer
    (core/stubs.c, x64_displace.h; --stats went_on >= 2; their note, read
    back by `lazyprobe report -c dump_cover.lua`, says so), and zero's, 3
    bytes (`xor eax, eax; ret`: its window ends with the ret), and masked's (an
    immediate whose bytes read as a jnz into its window: x64_displace.c,
    inside_first_run) and via_call's (its window ends with a call, whose
    callee must see its return address at home: stdout says so) go on too;
    loop_head's, whose
    loop jumps back 2 bytes past its entry, waits (its note is empty: had it
    gone on, its loop's first jump back would land inside the entry's jmp);
    output as natively; sum3, loop_head, main and late (whose only call is in
    a fork child that ends at once with _exit) counted 1 "marked", never 0.
    Then deref(NULL), whose first instruction loads through its argument: it
    faults in the copy of its window, and its SIGSEGV handler must see the
    fault at deref itself, as natively (the tracer moves it home first:
    stubs_fault_home), deref counted 1, "marked", its first call gone on."""
    name = 'marked/went_on' + ('-stripped' if stripped else '')
    binary, err = build(ctx, 'went_on', ['went_on_main.c', 'went_on.S'], ['-O2', '-no-pie', '-Wall'])
    if err:
        return [(name, [err])]
    plain = binary
    if stripped:
        binary = plain + '.stripped'
        r = subprocess.run(['strip', '-o', binary, plain], capture_output=True, text=True)
        if r.returncode != 0:
            return [(name, ['strip failed: ' + r.stderr.strip()])]
    nst, nout, _, _ = rt.run_proc([binary])
    outdir = ctx.scratch(name)
    cmd = [ctx.lp, 'run', '-c', 'coverage', '--stats', '-o', outdir, '--', binary]
    st, out, err, to = rt.run_proc(cmd, timeout=RUN_TIMEOUT)
    if to or st != nst or out != nout:
        return [(name, ['status %s (native %s), stdout %r (native %r)' % (st, nst, out, nout) + repro(cmd)])]
    probs = []
    m = re.search(rb'went_on=(\d+)', err)
    if not m or int(m.group(1)) < 2:
        probs.append('--stats went_on=%s, expected >= 2' % (m and m.group(1).decode()))
    try:
        rows = rt.nolines_rows(outdir, binary)
    except OSError as e:
        return [(name, probs + [str(e)])]
    syms = ctx.syms(plain)
    for fname, want in (('sum3', (1, 'marked')), ('loop_head', (1, 'marked')), ('main', (1, 'marked')),
                        ('late', (1, 'marked')), ('never', (0, 'not run')), ('deref', (0, 'not run'))):
        got = rows.get(syms.get(fname))
        if got != want:
            probs.append('%s: %s in coverage-nolines.txt, expected %s' % (fname, got, want))
    subprocess.run([ctx.lp, 'report', '-c', os.path.join(rt.TEST_COLLECTORS, 'dump_cover.lua'), outdir],
                   capture_output=True)
    try:
        notes = {f.get('name'): f.get('note') for f in rt.exe_functions(rt.load_dump(outdir), binary)}
    except (OSError, ValueError) as e:
        return [(name, probs + ['dump.json: %s' % e])]
    went_on = 'its first call went on without waiting'
    for fname, want in (('sum3', went_on), ('late', went_on), ('zero', went_on), ('masked', went_on),
                        ('via_call', went_on), ('loop_head', '')):
        if (notes.get(fname) if not stripped else notes.get('fn_%x' % syms[fname])) != want:
            probs.append('%s: note %r, expected %r' % (fname, notes.get(fname), want))
    # deref(NULL) at its first call: the fault, in the copy of its window, is moved home first
    nst, nout, _, _ = rt.run_proc([binary, 'fault'])
    fcmd = [ctx.lp, 'run', '-c', 'coverage', '-o', outdir + '-fault', '--', binary, 'fault']
    st, out, err, to = rt.run_proc(fcmd, timeout=RUN_TIMEOUT)
    if to or st != nst or out != nout or nout != b'fault at deref\n':
        probs.append('fault: status %s (native %s), stdout %r (native %r)' % (st, nst, out, nout) + repro(fcmd))
    else:
        subprocess.run([ctx.lp, 'report', '-c', os.path.join(rt.TEST_COLLECTORS, 'dump_cover.lua'), outdir + '-fault'],
                       capture_output=True)
        try:
            fns = {f.get('address'): f for f in rt.exe_functions(rt.load_dump(outdir + '-fault'), binary)}
            got = fns.get(syms['deref'], {})
            if (got.get('count'), got.get('state'), got.get('note')) != (1, 'marked', went_on):
                probs.append('fault: deref %s, expected 1, marked, %r' % (
                    (got.get('count'), got.get('state'), got.get('note')), went_on) + repro(fcmd))
        except (OSError, ValueError) as e:
            probs.append('fault: dump.json: %s' % e)
    return [(name, [p + repro(cmd) for p in probs])]


def test_never_run_branches(ctx):
    """coverage/never_run_branches: tests/real/never_run.c (-O0 -g), whose two
    functions never run: small_callee, relocated ahead of a call that never
    comes when caller() runs (with an argument), and big_unrun, never
    relocated.  In coverage.info their file has, in both runs, two ways "-"
    for each conditional jump objdump shows in them, the same records either
    way: what the report lists of a function that never ran does not depend
    on whether a copy was made of it (lua/lp_source.c; before, only the
    relocated one had branches, from its graph)."""
    name = 'coverage/never_run_branches'
    binary, err = build(ctx, 'never_run', ['never_run_main.c', 'never_run.c'], ['-O0', '-g', '-Wall'])
    if err:
        return [(name, [err])]
    dis = subprocess.run(['objdump', '-d', '--no-show-raw-insn', binary], capture_output=True, text=True).stdout
    jccs, inside = 0, False
    for line in dis.splitlines():
        if line.endswith('>:'):
            inside = line.endswith('<small_callee>:') or line.endswith('<big_unrun>:')
        elif inside and '\t' in line:
            mnem = line.split('\t')[1].split()[0] if len(line.split('\t')) > 1 else ''
            jccs += (mnem.startswith('j') and mnem != 'jmp') or mnem.startswith('loop')
    probs, seen = [], []
    for args, state in ((['x'], 'relocated'), ([], 'not run')):
        outdir = ctx.scratch(name + ('-called' if args else '-not'))
        nst, nout, _, _ = rt.run_proc([binary] + args)
        cmd = [ctx.lp, 'run', '-c', 'coverage', '-o', outdir, '--', binary] + args
        st, out, err, to = rt.run_proc(cmd, timeout=RUN_TIMEOUT)
        if to or st != nst or out != nout:
            probs.append('status %s (native %s), stdout %r (native %r)' % (st, nst, out, nout) + repro(cmd))
            continue
        brda, sf = [], None
        with open(os.path.join(outdir, 'coverage.info')) as f:
            for line in f:
                if line.startswith('SF:'):
                    sf = line[3:].strip()
                elif line.startswith('BRDA:') and sf and sf.endswith('never_run.c'):
                    brda.append(line.strip())
        if len(brda) != 2 * jccs or any(not b.endswith(',-') for b in brda):
            probs.append('never_run.c: %d BRDA records (%d not "-"), expected %d: 2 for each of objdump\'s %d '
                         'conditional jumps' % (len(brda), sum(not b.endswith(',-') for b in brda), 2 * jccs, jccs)
                         + repro(cmd))
        seen.append(brda)
        subprocess.run([ctx.lp, 'report', '-c', os.path.join(rt.TEST_COLLECTORS, 'dump_cover.lua'), outdir],
                       capture_output=True)
        try:
            states = {f.get('name'): f.get('state') for f in rt.exe_functions(rt.load_dump(outdir), binary)}
        except (OSError, ValueError) as e:
            probs.append('dump.json: %s' % e)
            continue
        if states.get('small_callee') != state:
            probs.append('small_callee: state %s, expected %s (the case this test is for)' %
                         (states.get('small_callee'), state) + repro(cmd))
    if len(seen) == 2 and seen[0] != seen[1]:
        probs.append('never_run.c: the BRDA records differ between the run that relocated small_callee and the one '
                     'that did not: %s / %s' % (seen[0][:4], seen[1][:4]))
    if jccs == 0:
        probs.append('objdump shows no conditional jump in small_callee and big_unrun')
    return [(name, probs)]


def test_cold_fnda(ctx):
    """cold/fnda: tests/real/cold_side.S with line info: hot.cold, entered
    only past its start by hot's jumps 40 times (cold_side_main.c), counts no
    entry of its own; coverage.info's FNDA gives it the runs of its most run
    block: 1 under -c coverage (0/1), 40 under -c coverage,arcs; hot 1 and
    100.  Before session 26: FNDA 0 although its lines ran."""
    name = 'cold/fnda'
    binary, err = build(ctx, 'cold_side_g', ['cold_side_main.c', 'cold_side.S'], ['-O2', '-g', '-no-pie', '-Wall'])
    if err:
        return [(name, [err])]
    probs = []
    for cols, want in (('coverage', {'hot': 1, 'hot.cold': 1}), ('coverage,arcs', {'hot': 100, 'hot.cold': 40})):
        out = os.path.join(ctx.scratch(name + '-' + cols.replace(',', '-')), 'out')
        cmd = [ctx.lp, 'run', '-c', cols, '-o', out, '--', binary]
        st, _, err, _ = rt.run_proc(cmd, timeout=RUN_TIMEOUT)
        try:
            with open(os.path.join(out, 'coverage.info')) as f:
                fnda = dict((n, int(c)) for c, n in re.findall(r'^FNDA:(\d+),(\S+)$', f.read(), re.M))
        except OSError as e:
            probs.append('-c %s: status %s, %s%s' % (cols, st, e, repro(cmd)))
            continue
        got = {n: fnda.get(n) for n in want}
        if got != want:
            probs.append('-c %s: FNDA %s, expected %s%s' % (cols, got, want, repro(cmd)))
    return [(name, probs)]


def test_catch_loop(ctx):
    """cold/catch_loop/{blocks,cover,arcs} (side_blocks_test) on
    tests/real/catch_loop.cpp at -O2: main.cold, entered only past its start
    (main's copy jumps there to throw), is relocated along with main (as a
    callee), and its entry keeps its break (never a jmp): its landing pad is
    1 byte in, where the unwinder would land in the original body."""
    results = side_blocks_test(ctx, 'cold/catch_loop', 'catch_loop', ['catch_loop.cpp'], ['-O2'], 'g++', {'main': 1}, 2,
                               "the unwinder's entries into main.cold's landing pad")
    name, probs = results[-1]
    try:
        with open(os.path.join(ctx.work, 'runs', 'cold_catch_loop_arcs', 'out', 'dump.json')) as f:
            states = {fn['name']: (fn.get('state'), fn.get('note', '')) for fn in json.load(f).get('functions', [])}
    except (OSError, ValueError) as e:
        return results[:-1] + [(name, probs + ['dump.json: %s' % e])]
    if states.get('main.cold', ('',))[0] != 'trapped':
        probs = probs + ['main.cold is %s, not trapped (its entry must keep its break)' % (states.get('main.cold'),)]
    return results[:-1] + [(name, probs)]


def backtrace_lines(out):
    """{round: [names]} from bt's 'round N: K frames: NAME ...' lines."""
    rounds = {}
    for line in out.decode(errors='replace').splitlines():
        m = re.match(r'round (\d+): (\d+) frames: (.*)$', line)
        if m:
            names = m.group(3).split()
            rounds[m.group(1)] = (int(m.group(2)), names)
    return rounds


def test_backtrace(ctx, opt):
    """glibc backtrace() + backtrace_symbols from nested instrumented calls
    (-rdynamic): the same frames as natively.  Frames in copies are named '?'
    by backtrace_symbols (dladdr knows no anonymous memory; the perf map names
    them): every other name must be the native one, the count the same."""
    name = 'unwind/backtrace/' + opt
    binary, err = build(ctx, 'bt.' + opt, ['bt.c'], ['-' + opt, '-rdynamic', '-Wall'])
    if err:
        return [(name, [err])]
    nat = rt.run_proc([binary])
    if b' show inner middle outer main' not in nat[1]:
        return [(name, ['native output lacks the call chain: %s' % rt.short(nat[1])])]
    outdir = os.path.join(ctx.scratch(name), 'out')
    cmd = [ctx.lp, 'run', '-c', 'calls', '-o', outdir, '--', binary]
    lp = rt.run_proc(cmd, timeout=RUN_TIMEOUT)
    probs = []
    if lp[0] != nat[0]:
        probs.append('status %s, native %s' % (lp[0], nat[0]))
    want, got = backtrace_lines(nat[1]), backtrace_lines(lp[1])
    if not want or set(want) != set(got):
        probs.append('rounds %s, native %s' % (sorted(got), sorted(want)))
    for r in sorted(set(want) & set(got)):
        (wn, wnames), (gn, gnames) = want[r], got[r]
        if wn != gn or len(wnames) != len(gnames) or \
                any(g != w and g != '?' for g, w in zip(gnames, wnames)):
            probs.append('round %s: %d frames %s, native %d frames %s' % (r, gn, gnames, wn, wnames))
            break
    if probs:
        probs[0] += repro(cmd)
    return [(name, probs[:4])]


FORK_THROW = {'_Z3runb': 2, '_Z6middleb': 2, '_Z4deepb': 2, 'main': 1}  # the child forks inside main


def test_fork_throw(ctx):
    """A fork child throws through copies its parent made before the fork and
    never unwound (tests/real/fork_throw.cpp): the child registers them
    itself and catches, output as natively; counts over both processes;
    the child's perf map names the parent's copies too."""
    name = 'unwind/fork_throw'
    binary, err = build(ctx, 'fork_throw', ['fork_throw.cpp'], ['-O2', '-Wall'], cc='g++')
    if err:
        return [(name, [err])]
    scratch = ctx.scratch(name)
    nat = run_in([binary, os.path.join(scratch, 'native.pid')])
    outdir, pidf = os.path.join(scratch, 'out'), os.path.join(scratch, 'lp.pid')
    cmd = [ctx.lp, 'run', '-c', 'calls', '-o', outdir, '--', binary, pidf]
    probs = same_as_native(nat, run_in(cmd))
    calls = load_calls_safe(outdir, probs)
    if calls is not None:
        probs += count_problems(module_counts(calls, binary, ctx.syms(binary), list(FORK_THROW)),
                                FORK_THROW)
    try:
        child_map = open('/tmp/perf-%d.map' % int(open(pidf).read())).read()
        names = set(l.split()[2] for l in child_map.splitlines() if len(l.split()) == 3)
        missing = [n for n in ('_Z3runb', '_Z6middleb', '_Z4deepb') if n not in names]
        if missing:
            probs.append("the child's perf map lacks the parent's copies %s" % missing)
    except (OSError, ValueError) as e:
        probs.append("child's perf map: %s" % e)
    if probs:
        probs[0] += repro(cmd)
    return [(name, probs[:6])]


def gdb_frames(binary, core):
    """Function names of `bt` on CORE, innermost first; a cold part
    (gdb shows FUNC.cold as "FUNC[cold]") is named as its function."""
    r = subprocess.run(['gdb', '-batch', '-nx', '-ex', 'bt', binary, core],
                       capture_output=True, text=True, timeout=120)
    names = []
    for line in r.stdout.splitlines():
        m = re.match(r'#\d+\s+(?:0x[0-9a-f]+ in )?(\S+) \(', line)
        if m:
            names.append(re.sub(r'(\.cold|\[cold\])$', '', m.group(1)))
        elif re.match(r'#\d+', line):
            names.append('?')
    return names, r.stdout


def find_core(d):
    cores = [f for f in os.listdir(d) if f == 'core' or f.startswith('core.')]
    return os.path.join(d, cores[0]) if cores else None


def test_gdb_core(ctx):
    """abort() inside main -> outer -> middle -> inner under lazyprobe, core
    dumped: gdb's `bt` on the core shows the same chain of the program's
    functions as on a native core (the copies are described to gdb through
    its JIT interface, core/gdbjit.h)."""
    name = 'unwind/gdb_core'
    if not shutil.which('gdb'):
        return [(name, ['gdb is not installed (tools/setup.sh installs it)'])]
    pattern = open('/proc/sys/kernel/core_pattern').read().strip()
    if pattern.startswith('|') or '/' in pattern:
        return [(name, [])]     # cores go elsewhere on this machine: nothing to test (as avx2)
    binary, err = build(ctx, 'core_abort', ['core_abort.c'], ['-O2', '-g', '-Wall'])
    if err:
        return [(name, [err])]
    scratch = ctx.scratch(name)
    ours = ('inner', 'middle', 'outer', 'main')
    chains = {}
    nd, ld = os.path.join(scratch, 'native'), os.path.join(scratch, 'lp')
    os.makedirs(nd)
    os.makedirs(ld)
    nat = run_in([binary], cwd=nd, core=True)
    cmd = [ctx.lp, 'run', '-c', 'calls', '-o', os.path.join(scratch, 'out'), '--', binary]
    lp = run_in(cmd, cwd=ld, core=True)
    probs = same_as_native(nat, lp)
    for what, d in (('native', nd), ('lazyprobe', ld)):
        core = find_core(d)
        if not core:
            probs.append('%s run left no core file in %s' % (what, d))
            continue
        names, text = gdb_frames(binary, core)
        chains[what] = ([n for n in names if n in ours], names)
    if 'native' in chains and chains['native'][0] != list(ours):
        probs.append('native bt: %s (expected %s)' % (chains['native'][1], list(ours)))
    elif 'native' in chains and 'lazyprobe' in chains and \
            chains['lazyprobe'][0] != chains['native'][0]:
        probs.append('gdb bt on the core under lazyprobe: %s; native: %s' %
                     (chains['lazyprobe'][1], chains['native'][1]))
    if probs:
        probs[0] += repro(['cd', ld, '&&', 'ulimit -c unlimited', '&&'] + cmd +
                          ['; gdb -batch -ex bt', binary, 'core'])
    return [(name, probs[:4])]


def test_attach_loader_busy(ctx):
    """lazyprobe attach --duration 1 while a thread of the target holds the
    loader's lock (blocked in a dl_iterate_phdr callback,
    tests/real/iterate_block.c): GDB's library must not be loaded (dlopen
    would wait for that lock for ever, and lazyprobe with it); lazyprobe says
    so, detaches, and the program ends as natively after SIGUSR1."""
    name = 'attach/loader_busy'
    binary, err = build(ctx, 'iterate_block', ['iterate_block.c'], ['-O2', '-Wall', '-pthread'])
    if err:
        return [(name, [err])]
    target, reader = start_target([binary])
    cmd = [ctx.lp, 'attach', '-c', 'calls', '--duration', '1', '-o',
           os.path.join(ctx.scratch(name), 'out'), str(target.pid)]
    probs = []
    try:
        if not reader.wait_for(rb'^ready$', 30):
            return [(name, ['the target printed no "ready"'])]
        st, out, err, to = rt.run_proc(cmd, timeout=30)
        if to:
            probs.append('lazyprobe attach hung (killed after 30 s)')
        elif st != 0:
            probs.append('lazyprobe attach: status %s: %s' % (st, rt.short(err)))
        if b'gdb will not see the copies: a thread is in the loader' not in err:
            probs.append('lazyprobe did not say why gdb will not see the copies: %s' % rt.short(err))
        release_target(target, reader, b'ready\ndone\n', probs)
    finally:
        stop_all(target)
    if probs:
        probs[0] += repro(['%s &' % binary, ';'] + cmd)
    return [(name, probs[:4])]


def test_attach_gdb_core(ctx):
    """lazyprobe attach to tests/real/attach_abort.c looping in outer ->
    middle -> inner; SIGUSR1 makes inner abort.  gdb's `bt` on the core shows
    the chain inner, middle, outer, main as on a native core: the copies made
    at the attach (main and outer moved into theirs) are described to gdb."""
    name = 'attach/gdb_core'
    if not shutil.which('gdb'):
        return [(name, ['gdb is not installed (tools/setup.sh installs it)'])]
    pattern = open('/proc/sys/kernel/core_pattern').read().strip()
    if pattern.startswith('|') or '/' in pattern:
        return [(name, [])]     # cores go elsewhere on this machine: nothing to test
    binary, err = build(ctx, 'attach_abort', ['attach_abort.c'], ['-O2', '-g', '-Wall'])
    if err:
        return [(name, [err])]
    scratch = ctx.scratch(name)
    ours = ['inner', 'middle', 'outer', 'main']
    probs, chains, cmd = [], {}, None
    for what in ('native', 'lazyprobe'):
        d = os.path.join(scratch, what)
        os.makedirs(d)

        def unlimited():
            resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        target, reader = start_target([binary], cwd=d, stderr=subprocess.DEVNULL, preexec_fn=unlimited)
        lpp = None
        try:
            if not reader.wait_for(rb'^ready$', 30):
                probs.append('%s: the target printed no "ready"' % what)
                continue
            if what == 'lazyprobe':
                cmd = [ctx.lp, 'attach', '-c', 'calls', '-o', os.path.join(scratch, 'out'), str(target.pid)]
                lpp = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       stdin=subprocess.DEVNULL, start_new_session=True)
                deadline = time.time() + 30
                while not all_counters_files(os.path.join(scratch, 'out')) and time.time() < deadline:
                    time.sleep(0.05)
                time.sleep(0.5)
            os.kill(target.pid, signal.SIGUSR1)
            target.wait(timeout=60)
            if lpp:
                lout, lerr = wait_attach(lpp, probs)
                if b'gdb will not see' in lerr:
                    probs.append('lazyprobe: %s' % rt.short(lerr))
        finally:
            stop_all(target, lpp)
        core = find_core(d)
        if not core:
            probs.append('%s run left no core file in %s' % (what, d))
            continue
        names, _ = gdb_frames(binary, core)
        chains[what] = ([n for n in names if n in ours], names)
    if 'native' in chains and chains['native'][0] != ours:
        probs.append('native bt: %s (expected %s)' % (chains['native'][1], ours))
    elif 'native' in chains and 'lazyprobe' in chains and chains['lazyprobe'][0] != chains['native'][0]:
        probs.append('gdb bt on the core under lazyprobe attach: %s; native: %s' %
                     (chains['lazyprobe'][1], chains['native'][1]))
    if probs and cmd:
        probs[0] += repro(['%s &' % binary, ';'] + cmd + ['; kill -USR1 PID; gdb -batch -ex bt', binary, 'core'])
    return [(name, probs[:4])]


def perf_share(data, comm, sym):
    """Percentage of COMM's cpu-clock samples whose symbol contains SYM."""
    r = subprocess.run(['perf', 'report', '-i', data, '--stdio', '--comm', comm, '--sort', 'sym'],
                       capture_output=True, text=True, timeout=120)
    share = 0.0
    top = []
    for line in r.stdout.splitlines():
        m = re.match(r'\s*([\d.]+)%\s+\[[.k]\]\s+(.*\S)', line)
        if m:
            top.append((m.group(2), float(m.group(1))))
            if sym in m.group(2):
                share += float(m.group(1))
    return share, top[:3], r


def test_perf(ctx):
    """perf record -e cpu-clock on a program that spends its time in
    hot_loop: natively perf names hot_loop; under lazyprobe the samples land
    in the copy and perf report must still name it (through
    /tmp/perf-PID.map) for at least half of the samples."""
    name = 'unwind/perf_map'
    if not shutil.which('perf'):
        return [(name, ['perf is not installed'])]
    binary, err = build(ctx, 'perf_hot', ['perf_hot.c'], ['-O2', '-Wall'])
    if err:
        return [(name, [err])]
    scratch = ctx.scratch(name)
    ndata, ldata = os.path.join(scratch, 'native.data'), os.path.join(scratch, 'lp.data')
    outdir = os.path.join(scratch, 'out')
    nat = rt.run_proc(['perf', 'record', '-q', '-e', 'cpu-clock', '-o', ndata, '--', binary],
                      timeout=120)
    nshare, ntop, r = perf_share(ndata, 'perf_hot', 'hot_loop')
    if nat[0] != 0 or nshare < 50:
        return [(name, ['perf does not work natively here (status %d, hot_loop %.1f%%, top %s): %s'
                        % (nat[0], nshare, ntop, rt.short(nat[2] + r.stderr.encode()))])]
    cmd = ['perf', 'record', '-q', '-e', 'cpu-clock', '-o', ldata, '--', ctx.lp, 'run', '-c',
           'calls', '-o', outdir, '--', binary]
    lp = rt.run_proc(cmd, timeout=RUN_TIMEOUT)
    probs = []
    if lp[0] != 0 or lp[1] != nat[1]:
        probs.append('status %d stdout %s (native %s)' % (lp[0], rt.short(lp[1]), rt.short(nat[1])))
    lshare, ltop, _ = perf_share(ldata, 'perf_hot', 'hot_loop')
    if lshare < 50:
        probs.append('perf report names hot_loop for %.1f%% of the samples (native %.1f%%); '
                     'top symbols %s' % (lshare, nshare, ltop))
    calls = load_calls_safe(outdir, probs)
    if calls is not None:
        for p in calls.get('processes') or []:     # the map of our target only
            try:
                os.unlink('/tmp/perf-%d.map' % int(p.get('pid')))
            except (OSError, TypeError, ValueError):
                pass
    if probs:
        probs[0] += repro(cmd + ['; perf report -i', ldata, '--comm perf_hot --sort sym'])
    return [(name, probs[:4])]


# ------------------------------------------------------- 5. attach/detach ---

LONGRUN_NAMES = ['tick', 'tock', 'run_loop', 'worker', 'main']
LONGRUN_TICKS = 2000


def read_progress(path):
    try:
        return int(open(path).read().strip() or 0)
    except (OSError, ValueError):
        return 0


def start_target(argv, **kw):
    """A test program in its own session, its stdout read line by line:
    (Popen, LineReader)."""
    kw.setdefault('stderr', subprocess.PIPE)
    target = subprocess.Popen(argv, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL,
                              start_new_session=True, **kw)
    return target, LineReader(target.stdout)


def stop_all(*procs):
    """Kills (their process groups) and reaps those of PROCS still running."""
    for p in procs:
        if p is not None and p.poll() is None:
            rt.kill_group(p)
            p.wait()


def release_target(target, reader, expected, probs):
    """Sends SIGUSR1 to a test program that loops until it, waits for its end
    and checks that it printed EXPECTED and exited 0."""
    os.kill(target.pid, signal.SIGUSR1)
    target.wait(timeout=60)
    if reader.text() != expected or target.returncode != 0:
        probs.append('target printed %r, status %s' % (reader.text(), target.returncode))


def wait_attach(lpp, probs):
    """Waits up to 60 s for the `lazyprobe attach` LPP (killed after that,
    with a problem added to PROBS); returns its (stdout, stderr)."""
    try:
        return lpp.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        rt.kill_group(lpp)
        probs.append('lazyprobe attach did not end within 60 s')
        return lpp.communicate()


def test_attach(ctx, how):
    """lazyprobe attach to a running program (3 threads, ~3 s), ended by
    --duration 1 (duration) or by SIGINT to lazyprobe once the program has
    gone on for two of its iterations attached (sigint).  The program goes on and ends as natively (output, status),
    is never left stopped; counts: 0 < tick, tock <= TICKS x iterations that
    ran during the window (from the program's progress file read before the
    attach and after lazyprobe ended); run_loop, worker and main, entered
    before the attach and on the stack, count 0."""
    name = 'attach/' + how
    binary, err = build(ctx, 'longrun', ['longrun.c'], ['-O2', '-Wall', '-pthread'])
    if err:
        return [(name, [err])]
    syms = ctx.syms(binary)
    scratch = ctx.scratch(name)
    outdir = os.path.join(scratch, 'out')
    nprog, lprog = os.path.join(scratch, 'native.progress'), os.path.join(scratch, 'target.progress')
    native = subprocess.Popen([binary, nprog], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              stdin=subprocess.DEVNULL, start_new_session=True)
    target, reader = start_target([binary, lprog])
    probs = []
    lpp = None
    cmd = [ctx.lp, 'attach', '-c', 'calls', '-o', outdir] + \
        (['--duration', '1'] if how == 'duration' else []) + [str(target.pid)]
    try:
        if not reader.wait_for(rb'^iteration 2$', 30):
            probs.append('the target printed no "iteration 2"')
            return [(name, probs)]
        p0 = read_progress(lprog)
        lpp = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               stdin=subprocess.DEVNULL, start_new_session=True)
        if how == 'sigint':  # once the program has gone on, attached, for two iterations
            deadline = time.time() + 30
            while not all_counters_files(outdir) and time.time() < deadline and lpp.poll() is None:
                time.sleep(0.01)
            p_att = read_progress(lprog)
            while read_progress(lprog) < p_att + 2 and time.time() < deadline and lpp.poll() is None:
                time.sleep(0.01)
            lpp.send_signal(signal.SIGINT)
        lout, lerr = wait_attach(lpp, probs)
        p1 = read_progress(lprog)
        st = proc_state(target.pid)
        if st in ('T', 't'):
            probs.append('target left stopped (State %s) after lazyprobe ended' % st)
        ok_status = (0,) if how == 'duration' else (0, 130)   # SIGINT is the way to end it
        if rt.status_of(lpp.returncode) not in ok_status:
            probs.append('lazyprobe attach: status %d: %s' % (rt.status_of(lpp.returncode),
                                                              rt.short(lerr)))
        try:
            target.wait(timeout=60)
        except subprocess.TimeoutExpired:
            probs.append('target did not finish (State %s)' % proc_state(target.pid))
        tout = reader.text()
        terr = target.stderr.read()
        nout, nerr = native.communicate(timeout=60)
        if tout != nout or terr != nerr:
            probs.append('target output differs from the native run: %s' % rt.first_diff(nout, tout))
        if rt.status_of(target.returncode) != rt.status_of(native.returncode):
            probs.append('target status %s, native %s' % (rt.status_of(target.returncode),
                                                          rt.status_of(native.returncode)))
        calls = load_calls_safe(outdir, probs)
        if calls is not None:
            got = module_counts(calls, binary, syms, LONGRUN_NAMES)
            bound = (p1 - p0 + 1) * LONGRUN_TICKS
            for fn in ('tick', 'tock'):
                if not 0 < got[fn] <= bound:
                    probs.append('%s: count %d, expected in (0, %d] (iterations %d..%d ran '
                                 'during the attach)' % (fn, got[fn], bound, p0, p1))
            probs += count_problems(got, {'run_loop': 0, 'worker': 0, 'main': 0},
                                    'on the stack at attach: ')
            pids = [p.get('pid') for p in calls.get('processes') or []]
            if pids != [target.pid]:
                probs.append('calls.json processes %s, expected [%d]' % (pids, target.pid))
    finally:
        stop_all(target, native, lpp)     # only what this test started
    if probs:
        probs[0] += repro(['%s %s &' % (binary, lprog), ';'] + cmd)
    return [(name, probs[:6])]


def wait_exec(pid, program, timeout=10):
    """Waits until process PID runs PROGRAM: a signal sent between the fork
    and the exec goes to Python's own handler in the child and is lost."""
    want = os.path.realpath(program)
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if os.path.realpath('/proc/%d/exe' % pid) == want:
                return
        except OSError:
            return
        time.sleep(0.0005)


def test_attach_early_sigint(ctx):
    """attach/early_sigint: lazyprobe attach gets SIGINT 2 to 40 ms after its
    exec, five times over one run of tests/real/longrun.c (~3 s): while
    it is still attaching, the Ctrl-C must end it once the session runs (it
    was dropped and lazyprobe stayed to the end of the program), or before
    it attached at all.  Each time lazyprobe ends before the program has
    done all its iterations, with status 0 or by the signal; the program is
    never left stopped and ends as natively."""
    name = 'attach/early_sigint'
    binary, err = build(ctx, 'longrun', ['longrun.c'], ['-O2', '-Wall', '-pthread'])
    if err:
        return [(name, [err])]
    scratch = ctx.scratch(name)
    nprog, lprog = os.path.join(scratch, 'native.progress'), os.path.join(scratch, 'target.progress')
    native = subprocess.Popen([binary, nprog], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              stdin=subprocess.DEVNULL, start_new_session=True)
    target, reader = start_target([binary, lprog])
    probs, cmd = [], None
    try:
        if not reader.wait_for(rb'^iteration 2$', 30):
            return [(name, ['the target printed no "iteration 2"'])]
        for k, delay in enumerate((0.002, 0.005, 0.01, 0.02, 0.04)):
            cmd = [ctx.lp, 'attach', '-c', 'calls', '-o', os.path.join(scratch, 'out%d' % k), str(target.pid)]
            lpp = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
            wait_exec(lpp.pid, ctx.lp)
            time.sleep(delay)
            lpp.send_signal(signal.SIGINT)
            lout, lerr = wait_attach(lpp, probs)
            done = read_progress(lprog)
            if rt.status_of(lpp.returncode) not in (0, 130):
                probs.append('SIGINT after %g s: lazyprobe status %d: %s' %
                             (delay, rt.status_of(lpp.returncode), rt.short(lerr)))
            if done >= 40:
                probs.append('SIGINT after %g s: lazyprobe stayed until the program had done all '
                             'its iterations' % delay)
                break
            st = proc_state(target.pid)
            if st in ('T', 't'):
                probs.append('SIGINT after %g s: target left stopped (State %s)' % (delay, st))
                break
        target.wait(timeout=60)
        nout, nerr = native.communicate(timeout=60)
        if reader.text() != nout or rt.status_of(target.returncode) != rt.status_of(native.returncode):
            probs.append('target output or status differ from the native run: %s' %
                         rt.first_diff(nout, reader.text()))
    finally:
        for p in (target, native):
            if p.poll() is None:
                rt.kill_group(p)
    if probs and cmd:
        probs[0] += repro(cmd)
    return [(name, probs[:6])]


def test_attach_stack(ctx):
    """lazyprobe attach while main -> outer -> spin are on the stack and spin
    loops calling work() (tests/real/onstack.c); SIGUSR1 ends the loop,
    outer then calls after() 5 times.  Those frames must go on in their
    copies (seed 002): spin's call site of work() counts what work's entry
    counts (> 0; one less when a call was in flight at the attach), outer's
    call site of after() counts 5, and the
    entries made before the attach count 0.  Output as natively."""
    name = 'attach/stack'
    binary, err = build(ctx, 'onstack', ['onstack.c'], ['-O2', '-Wall'])
    if err:
        return [(name, [err])]
    scratch = ctx.scratch(name)
    outdir = os.path.join(scratch, 'out')
    target, reader = start_target([binary])
    cmd = [ctx.lp, 'attach', '-c', rt.DUMP_ARCS + ',calls', '-o', outdir, str(target.pid)]
    probs, lpp = [], None
    try:
        if not reader.wait_for(rb'^ready$', 30):
            return [(name, ['the target printed no "ready"'])]
        lpp = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               stdin=subprocess.DEVNULL, start_new_session=True)
        deadline = time.time() + 30
        while not all_counters_files(outdir) and time.time() < deadline and lpp.poll() is None:
            time.sleep(0.05)
        # the attach done: work() relocated and spin() running its copy a while
        if not wait_entry_jumps(target.pid, binary, 'work') or not wait_running(target.pid):
            probs.append('work() never jumped to a copy, or the target did not run on after the attach')
        os.kill(target.pid, signal.SIGUSR1)
        lout, lerr = wait_attach(lpp, probs)
        if rt.status_of(lpp.returncode) != 0:
            probs.append('lazyprobe attach: status %d: %s' % (rt.status_of(lpp.returncode), rt.short(lerr)))
        target.wait(timeout=60)
        if reader.text() != b'ready\n15\n' or rt.status_of(target.returncode) != 0:
            probs.append('target printed %r, status %s (natively "ready", "15", 0)' %
                         (reader.text(), rt.status_of(target.returncode)))
        try:
            dump = json.load(open(os.path.join(outdir, 'dump.json')))
        except (OSError, ValueError) as e:
            return [(name, probs + ['dump.json: %s' % e, repro(cmd)])]
        fns = {f['name']: f for f in dump['functions'] if same_module(f.get('module', ''), binary)}

        def site_count(caller, callee):
            return sum(c.get('count') or 0 for c in (fns.get(caller) or {}).get('calls') or []
                       if c.get('callee') == callee)
        work = (fns.get('work') or {}).get('count')
        # one call may be in flight at the attach: made from the original spin
        # (no site probe), its entry into work counted (the thread stood there)
        if not work or work - site_count('spin', 'work') not in (0, 1):
            probs.append('spin -> work counted %d at the call site, work entered %s times: spin '
                         'did not go on in its copy' % (site_count('spin', 'work'), work))
        if site_count('outer', 'after') != 5 or (fns.get('after') or {}).get('count') != 5:
            probs.append('outer -> after counted %d at the call site, after entered %s times '
                         '(5 expected): outer did not return into its copy' %
                         (site_count('outer', 'after'), (fns.get('after') or {}).get('count')))
        for fn in ('spin', 'outer', 'main'):
            if (fns.get(fn) or {}).get('count') != 0:
                probs.append('%s: entered before the attach, counted %s' % (fn, (fns.get(fn) or {}).get('count')))
    finally:
        stop_all(target, lpp)
    if probs:
        probs[0] += repro(['%s &' % binary, ';'] + cmd)
    return [(name, probs[:6])]


def cpu_ticks(pid):
    """User + system clock ticks process PID has run (/proc/PID/stat)."""
    try:
        with open('/proc/%d/stat' % pid) as f:
            fields = f.read().rsplit(')', 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except (OSError, IndexError, ValueError):
        return None


def wait_running(pid, ticks=2, timeout=30):
    """Waits until process PID has run TICKS clock ticks more than now (it
    goes on after an attach, not only between its stops); False at TIMEOUT."""
    start, deadline = cpu_ticks(pid), time.time() + timeout
    while start is not None and time.time() < deadline:
        now = cpu_ticks(pid)
        if now is None or now - start >= ticks:
            return now is not None
        time.sleep(0.01)
    return False


def wait_entry_jumps(pid, binary, name, timeout=30):
    """Waits until function NAME of BINARY begins with a jmp (0xe9: to its
    copy) in process PID; False at TIMEOUT."""
    syms = elf_func_addrs(binary)
    if name not in syms:
        return False
    with open(binary, 'rb') as f:
        pie = f.read(18)[16] == 3                                  # e_type ET_DYN
    deadline = time.time() + timeout
    while time.time() < deadline:
        base = map_base(pid, binary) if pie else 0
        try:
            with open('/proc/%d/mem' % pid, 'rb') as mem:
                mem.seek(syms[name] + (base or 0))
                if mem.read(1) == b'\xe9':
                    return True
        except OSError:
            return False
        time.sleep(0.01)
    return False


def elf_func_addrs(binary):
    """{name: link-time address} of BINARY's function symbols (nm)."""
    out = subprocess.run(['nm', binary], capture_output=True, text=True).stdout
    return {f[2]: int(f[0], 16) for f in (l.split() for l in out.splitlines())
            if len(f) == 3 and f[1] in 'tTwW'}


def map_base(pid, path):
    """Start of PATH's mapping at file offset 0 in process PID."""
    real = os.path.realpath(path)
    for line in open('/proc/%d/maps' % pid):
        f = line.split()
        if len(f) >= 6 and f[2] == '00000000' and os.path.realpath(f[5]) == real:
            return int(f[0].split('-')[0], 16)
    return None


def plt_slot_of(binary, symbol):
    """Link-time address of BINARY's JUMP_SLOT slot for SYMBOL."""
    out = subprocess.run(['readelf', '-rW', binary], capture_output=True, text=True).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 5 and 'JUMP_SLO' in f[2] and f[4].split('@')[0] == symbol:
            return int(f[0], 16)
    return None


def test_attach_plt(ctx):
    """lazyprobe attach --duration 1 to a loop calling libfoo's foo_add
    through the PLT (tests/real/plt_loop.c): the slot is pointed at the
    copy (--stats plt_redirected >= 1, foo_add counted) and, after the
    detach, holds foo_add's own address again (read from /proc/PID/mem);
    the program then ends as natively."""
    name = 'attach/plt'
    b, err = build_shlib(ctx)
    if err:
        return [(name, [err])]
    d = os.path.dirname(b['foo'])
    binary, err = build(ctx, 'plt_loop', ['plt_loop.c', b['foo']], ['-O2', '-Wall', '-Wl,-rpath,' + d])
    if err:
        return [(name, [err])]
    slot_link = plt_slot_of(binary, 'foo_add')
    foo_sym = ctx.syms(b['foo']).get('foo_add')
    if slot_link is None or foo_sym is None:
        return [(name, ['no PLT slot or symbol for foo_add (slot %s, symbol %s)' % (slot_link, foo_sym)])]

    def check(lp, target, outdir, probs):
        redirected = re.search(rb'plt_redirected=(\d+)', lp[2])
        if not redirected or int(redirected.group(1)) < 1:
            probs.append('the slot was not pointed at the copy (--stats: %s)' %
                         (redirected and redirected.group(0)))
        exe_base, foo_base = map_base(target.pid, binary), map_base(target.pid, b['foo'])
        with open('/proc/%d/mem' % target.pid, 'rb') as mem:
            mem.seek(exe_base + slot_link)
            held = int.from_bytes(mem.read(8), 'little')
        if held != foo_base + foo_sym:
            probs.append('after the detach the slot holds 0x%x, not foo_add 0x%x' % (held, foo_base + foo_sym))
        calls = load_calls_safe(outdir, probs)
        if calls is not None and not module_counts(calls, b['foo'], ctx.syms(b['foo']), ['foo_add'])['foo_add']:
            probs.append('foo_add not counted while attached')

    return [(name, attach_for_a_second(ctx, name, binary, check, stats=True))]


def test_attach_cold(ctx):
    """attach/cold: lazyprobe attach --duration 1 to tests/real/cold_attach.cpp
    (-O2), whose main throws into its catch in main.cold (never run while
    attached: main jumps there past its start) only after SIGUSR1, sent once
    lazyprobe detached, while g throws and catches all along: after the
    detach the program, main still in the copy the attach moved it into,
    throws through copies and catches as natively (its throw and catch
    are both in main.cold, original code; attach/late_throw throws through
    copies)."""
    name = 'attach/cold'
    binary, err = build(ctx, 'cold_attach', ['cold_attach.cpp'], ['-O2', '-Wall'], cc='g++')
    if err:
        return [(name, [err])]

    def check(lp, target, outdir, probs):
        calls = load_calls_safe(outdir, probs)
        if calls is not None and not module_counts(calls, binary, ctx.syms(binary), ['_Z1gl'])['_Z1gl']:
            probs.append('g not counted while attached')

    return [(name, attach_for_a_second(ctx, name, binary, check))]


def test_attach_late_throw(ctx):
    """attach/late_throw: lazyprobe attach --duration 1 to
    tests/real/attach_throw.cpp (-O2), which throws for the first time only
    after SIGUSR1, sent once lazyprobe detached, through the copies of k, h
    and main made while attached: their unwind information, still pending
    at the detach, is registered then (before, the first throw ended in
    std::terminate: the unwinder found no frame information for the
    copies).  attach/late_throw/static: the same linked -static, the
    unwinder the program's own (its lock found in the program's symbols)."""
    results = []
    for name, exe, flags in (('attach/late_throw', 'attach_throw', []),
                             ('attach/late_throw/static', 'attach_throw_static', ['-static'])):
        binary, err = build(ctx, exe, ['attach_throw.cpp'], ['-O2', '-Wall'] + flags, cc='g++')
        if err:
            results.append((name, [err]))
            continue

        def check(lp, target, outdir, probs, binary=binary):
            calls = load_calls_safe(outdir, probs)
            if calls is None:
                return
            counts = module_counts(calls, binary, ctx.syms(binary), ['_Z1hl', '_Z1kl'])
            if not counts['_Z1hl'] or not counts['_Z1kl']:
                probs.append('h or k not counted while attached: %s' % counts)
            if b'not registered' in lp[2]:
                probs.append('unwind information not registered at the detach: %s' % rt.short(lp[2]))

        results.append((name, attach_for_a_second(ctx, name, binary, check)))
    return results


def native_after_usr1(binary):
    """What BINARY prints natively when sent SIGUSR1 once it printed "ready"."""
    target, reader = start_target([binary])
    try:
        if not reader.wait_for(rb'^ready$', 30):
            return None
        os.kill(target.pid, signal.SIGUSR1)
        target.wait(timeout=60)
        return reader.text()
    finally:
        stop_all(target)


def test_attach_late_backtrace(ctx):
    """attach/late_backtrace: lazyprobe attach --duration 1 to
    tests/real/attach_backtrace.c (-O2, C: no function has an LSDA), whose
    spin() runs in its copy from the attach on; after SIGUSR1, sent once
    lazyprobe detached, backtrace() from k() sees as many frames as natively
    (through spin's copy: its unwind information, made only when first
    needed, is made and registered at the detach; 3 frames instead of 8 when
    it is not)."""
    name = 'attach/late_backtrace'
    binary, err = build(ctx, 'attach_backtrace', ['attach_backtrace.c'], ['-O2', '-Wall'])
    if err:
        return [(name, [err])]
    expected = native_after_usr1(binary)
    if not expected or b'frames' not in expected:
        return [(name, ['the native run printed %r' % expected])]

    def check(lp, target, outdir, probs):
        calls = load_calls_safe(outdir, probs)
        if calls is not None and not module_counts(calls, binary, ctx.syms(binary), ['h'])['h']:
            probs.append('h not counted while attached')

    return [(name, attach_for_a_second(ctx, name, binary, check, expected=expected))]


def test_attach_threads_throw(ctx):
    """attach/threads_throw: lazyprobe attach --duration 1 to
    tests/real/throw_threads.cpp (-O2) with "loop": four threads throwing
    all along, before, while and after lazyprobe is attached; the program
    then ends as natively (before session 18 it died of SIGTRAP or in
    std::terminate in most runs, as cxx/exceptions/threads did)."""
    name = 'attach/threads_throw'
    binary, err = build(ctx, 'throw_threads', ['throw_threads.cpp'], ['-O2', '-Wall', '-pthread'], cc='g++')
    if err:
        return [(name, [err])]

    def check(lp, target, outdir, probs):
        calls = load_calls_safe(outdir, probs)
        if calls is not None and not module_counts(calls, binary, ctx.syms(binary), ['_Z4leafl'])['_Z4leafl']:
            probs.append('leaf not counted while attached')

    return [(name, attach_for_a_second(ctx, name, binary, check, args=['loop']))]


def attach_for_a_second(ctx, name, binary, check, stats=False, args=(), expected=b'ready\ndone\n'):
    """`lazyprobe attach [--stats] -c calls --duration 1` to BINARY ARGS, a
    program that prints "ready", loops until SIGUSR1, then prints "done"
    (all it prints: EXPECTED): CHECK(lp, target, outdir, probs) once
    lazyprobe is gone, the program still running, then the program's end as
    natively.  Returns the problems."""
    outdir = os.path.join(ctx.scratch(name), 'out')
    target, reader = start_target([binary] + list(args))
    cmd = [ctx.lp, 'attach'] + (['--stats'] if stats else []) + ['-c', 'calls', '--duration', '1', '-o', outdir,
                                                                 str(target.pid)]
    probs = []
    try:
        if not reader.wait_for(rb'^ready$', 30):
            return ['the target printed no "ready"']
        lp = rt.run_proc(cmd, timeout=60)
        if lp[0] != 0:
            probs.append('lazyprobe attach: status %s: %s' % (lp[0], rt.short(lp[2])))
        check(lp, target, outdir, probs)
        release_target(target, reader, expected, probs)
    finally:
        stop_all(target)
    if probs:
        probs[0] += repro(['%s &' % binary, ';'] + cmd)
    return probs[:6]


# ----------------------------------------------------- 6. machine details ---

ENDBR_PROGRAMS = ['fib', 'funcptr', 'jumptable', 'tailcall', 'tiny', 'qsort_cb']


def test_endbr(ctx, prog_name):
    """A corpus program built with -fcf-protection=full (every entry starts
    with endbr64): output and the corpus counts exact."""
    name = 'machine/endbr64/%s' % prog_name
    binary, err = rt.build_extra(ctx, prog_name, 'O2-cet', ['-O2', '-g0', '-fcf-protection=full',
                                                            '-fpie', '-pie'])
    if err:
        return [(name, [err])]
    dis = subprocess.run(['objdump', '-d', '--no-show-raw-insn', binary], capture_output=True,
                         text=True).stdout
    if not re.search(r'<main>:\n\s*[0-9a-f]+:\s*endbr64', dis):
        return [(name, ['main does not start with endbr64: the flag did nothing'])]
    return check_corpus_binary(ctx, name, prog_name, binary, binary)


def check_corpus_binary(ctx, name, prog_name, binary, sym_path, collectors='calls', opts=()):
    prog = ctx.progs[prog_name]
    scratch = ctx.scratch(name)
    outdir = os.path.join(scratch, 'out')
    args = [a.replace('{outdir}', outdir).replace('{scratch}', scratch) for a in prog.args]
    nat = rt.run_proc([binary] + args, prog.stdin)
    cmd = [ctx.lp, 'run', '-c', collectors] + list(opts) + ['-o', outdir, '--', binary] + args
    lp = rt.run_proc(cmd, prog.stdin, timeout=RUN_TIMEOUT)
    probs = same_as_native(nat, lp)
    calls = load_calls_safe(outdir, probs)
    if calls is not None:
        probs += rt.check_counts(calls, rt.resolve_expect(prog, nat[1]), ctx.syms(sym_path),
                                 binary, False)
    if probs:
        probs[0] += repro(cmd)
    return [(name, probs[:6])]


REAL_PROGRAMS = {
    # name: (sources, flags, {function: count}, args)
    'avx2': (['avx2.c'], ['-O3', '-mavx2', '-mfma', '-Wall'],
             {'vadd': 1000, 'vmul': 1000, 'dot': 50, 'saxpy': 50, 'combine': 1000, 'main': 1}, []),
    'redzone': (['redzone.c'], ['-O2', '-Wall'],
                {'rz_sum': 3000, 'rz_table': 3000, 'rz_swap': 3000, 'main': 1}, []),
    'altstack': (['altstack.c'], ['-O2', '-Wall'],
                 {'on_usr1': 20, 'nested_a': 20, 'nested_b': 20, 'raiser': 20, 'on_segv': 1,
                  'main': 1}, []),
}
# Branches into an entry's first bytes (jumpin.S): the entry must keep its
# break.  "cold": the part is found relocating hot's copy; with hot excluded,
# from the part's own frame description (its FDE starts inside hot's frame).
# "inside": leaf, already patched, gets its break back when jumper's copy is
# made.  The part has no symbol: only hot, leaf and jumper are counted.
REAL_PROGRAMS['jumpin_cold'] = (['jumpin_main.c', 'jumpin.S'], ['-O2', '-Wall'],
                                {'hot': 60, 'main': 1}, ['cold'])
REAL_PROGRAMS['jumpin_cold_native_hot'] = (['jumpin_main.c', 'jumpin.S'], ['-O2', '-Wall'],
                                           {'hot': 0, 'main': 1}, ['cold'], ['--exclude', '*:hot'])
REAL_PROGRAMS['jumpin_inside'] = (['jumpin_main.c', 'jumpin.S'], ['-O2', '-Wall'],
                                  {'leaf': 50, 'jumper': 15, 'main': 1}, ['inside'])
# A cold part whose data a linear decode reads as a jump into its hot part's
# first instruction: the hot part is planned without that side entry.
REAL_PROGRAMS['coldpart_bogus'] = (['coldpart_main.c', 'coldpart.S'], ['-O2', '-Wall'],
                                   {'hotfn': 1000, 'main': 1}, [])
# V8's builtins in miniature: Builtins_Walk's return addresses checked by the
# program itself; it is never instrumented (status 1 if it were: 0 found).
REAL_PROGRAMS['v8_builtins'] = (['v8_builtins.c'], ['-O2', '-Wall'], {'where_from': 1000, 'main': 1}, [])
# int3: the handler's own first call meets lazyprobe's int3 with SIGTRAP blocked,
# and the kernel resets the program's SIGTRAP action (process_keep_sigtrap_action).
for _m, _f in (('ud2', 'bad_op'), ('segv', 'bad_load'), ('int3', 'own_trap')):
    REAL_PROGRAMS['sigctx_' + _m] = (['sigctx.c'], ['-O2', '-Wall'],
                                     {'bad_op': 0, 'bad_load': 0, 'own_trap': 0, _f: 10,
                                      'on_signal': 10, 'main': 1}, [_m])


def test_real_program(ctx, key, collectors='calls'):
    """A tests/real program with its counts by construction (REAL_PROGRAMS):
    same output and status as natively, counts exact.  With arcs or coverage
    in COLLECTORS the copies carry block probes too; the counts are then
    checked from a calls collector run alongside."""
    srcs, flags, exp, args, *opts = REAL_PROGRAMS[key]
    opts = opts[0] if opts else []
    name = 'machine/%s%s' % (key.replace('_', '/'),
                             '' if collectors == 'calls' else '/' + collectors.replace(',', '+'))
    if key == 'avx2':
        flags_cpu = open('/proc/cpuinfo').read()
        if not re.search(r'^flags\s*:.*\bavx2\b', flags_cpu, re.M) or \
                not re.search(r'^flags\s*:.*\bfma\b', flags_cpu, re.M):
            return [(name, [])]          # no AVX2 here: nothing to test
    binary, err = build(ctx, key.split('_')[0], srcs, flags)
    if err:
        return [(name, [err])]
    syms = ctx.syms(binary)
    miss = missing_syms(syms, exp)
    if miss:
        return [(name, ['not in symtab: %s' % miss])]
    if key == 'redzone':
        dis = subprocess.run(['objdump', '-d', '--no-show-raw-insn', binary], capture_output=True,
                             text=True).stdout
        for fn in ('rz_sum', 'rz_table', 'rz_swap'):
            body = re.search(r'<%s>:\n(.*?)\n\n' % fn, dis, re.S)
            body = body.group(1) if body else ''
            if not re.search(r'-0x[0-9a-f]+\(%rsp', body) or re.search(r'sub\s+\$0x[0-9a-f]+,%rsp', body):
                return [(name, ['%s does not use the red zone in this build' % fn])]
    nat = rt.run_proc([binary] + args)
    outdir = os.path.join(ctx.scratch(name), 'out')
    cmd = [ctx.lp, 'run', '-c', collectors] + opts + ['-o', outdir, '--', binary] + args
    lp = rt.run_proc(cmd, timeout=RUN_TIMEOUT)
    probs = same_as_native(nat, lp)
    if 'calls' in collectors.split(','):
        calls = load_calls_safe(outdir, probs)
        if calls is not None:
            probs += count_problems(module_counts(calls, binary, syms, list(exp)), exp)
    if probs:
        probs[0] += repro(cmd)
    return [(name, probs[:6])]


# ---------------------------------------------------------------- 7. faults ---

TSLEEPER = {'t_work': 100, 'worker': 4, 'ready': 1, 'never': 0, 'main': 1}


def start_tsleeper(ctx, outdir, args):
    binary, err = build(ctx, 'tsleeper', ['tsleeper.c'], ['-O2', '-Wall', '-pthread'])
    if err:
        return None, None, None, None, err

    def nocore():
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    # --atomic: four threads call t_work at once, and plain increments of a
    # shared counter lose some of them (docs/PERFORMANCE.md, threads; seen once:
    # 91 of 100); the tests assert exact counts.
    cmd = [ctx.lp, 'run', '-c', 'calls', '--atomic', '-o', outdir, '--', binary] + args
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, start_new_session=True, preexec_fn=nocore)
    reader = LineReader(p.stdout)
    m = reader.wait_for(rb'^READY pid=(\d+)', RUN_TIMEOUT)
    if not m:
        rt.kill_group(p)
        p.wait()
        return None, None, None, cmd, 'no READY line: %s' % rt.short(reader.text(5))
    return p, reader, int(m.group(1)), cmd, binary


def test_fault(ctx, victim, sig, handled=False):
    """tsleeper (4 threads blocked, main in pause) under lazyprobe; VICTIM
    ('target' or 'lazyprobe') gets SIG.  lazyprobe ends with the target's
    status (128+SIG, or 3 when the target handles SIGINT/SIGTERM and exits),
    calls.json says how it ended and has the exact counts, and the target is
    gone, never left stopped."""
    signame = signal.Signals(sig).name
    name = 'faults/%s_%s/threads%s' % (victim, signame, '/handled' if handled else '')
    outdir = os.path.join(ctx.scratch(name), 'out')
    p, reader, pid, cmd, binary = start_tsleeper(ctx, outdir, ['handle'] if handled else [])
    if p is None:
        return [(name, [binary if cmd is None else binary + repro(cmd)])]
    probs = []
    try:
        os.kill(pid if victim == 'target' else p.pid, sig)
        try:
            p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            probs.append('lazyprobe did not end within 60 s after %s (target State %s)' %
                         (signame, proc_state(pid)))
            return [(name, probs + [repro(cmd)])]
        left = wait_gone(pid, 5)
        if left:
            probs.append('target still there 5 s after lazyprobe ended, State %s' % left)
        out = reader.text()
        err = p.stderr.read()
        want = 3 if handled else 128 + sig
        if rt.status_of(p.returncode) != want:
            probs.append('lazyprobe status %d, expected %d: %s' %
                         (rt.status_of(p.returncode), want, rt.short(err)))
        if handled and not out.endswith(b'bye\n'):
            probs.append('the target did not exit through its handler: stdout %s' % rt.short(out))
        calls = load_calls_safe(outdir, probs)
        if calls is not None:
            procs = calls.get('processes') or []
            want_end = 'exit 3' if handled else 'signal %d' % sig
            if [pr.get('end') for pr in procs] != [want_end]:
                probs.append('calls.json processes end %s, expected [%r]' %
                             ([pr.get('end') for pr in procs], want_end))
            exp = dict(TSLEEPER, on_quit=1 if handled else 0)
            probs += count_problems(module_counts(calls, binary, ctx.syms(binary), list(exp)), exp)
        if not os.path.isfile(os.path.join(outdir, 'lazyprobe.%d.counters' % pid)):
            probs.append('no lazyprobe.%d.counters' % pid)
    finally:
        if p.poll() is None:
            rt.kill_group(p)
            p.wait()
        if rt.pid_alive(pid):
            try:
                os.kill(pid, signal.SIGKILL)     # the target this test started
            except ProcessLookupError:
                pass
    if probs:
        probs[0] += repro(cmd + ['; kill -%s <%s> after READY' % (signame, victim)])
    return [(name, probs[:6])]


# ------------------------------------------------------------------- jobs ---

RETREE_ROUNDS = {1: 1 << 25, 2: 1 << 21}  # per thread: ~1 s under lazyprobe


def test_retree(ctx, threads, fork=False):
    """arcs/retree/Tthreads[/fork]: hot functions whose static arc estimate is
    wrong (tests/real/retree.c) get a second copy with their arcs placed on
    their own counts while T threads run them (with --atomic when T > 1, so
    that counts are exact; with FORK in two processes, each its own counters
    file): output as natively, --stats says retreed >= 1, entry counts and
    the @often branch's two ways equal the counts known by construction,
    flow conservation at every block (both copies' counts added, over the
    processes, main's too: fork returns twice), pick's own counters ran less than half as often as its hot
    edge (on the first tree the hot edge was counted on every call; the
    threads wait after an eighth of their rounds until pick's entry has moved
    on, so this does not hang on how soon a pass comes), and a report from
    the sealed counters files says the same."""
    name = 'arcs/retree/%dthreads%s' % (threads, '/fork' if fork else '')
    binary, err = build(ctx, 'retree', ['retree.c'], ['-O2', '-g', '-Wall', '-pthread'])
    if err:
        return [(name, [err])]
    scratch = ctx.scratch(name)
    outdir = os.path.join(scratch, 'out')
    cmd = [ctx.lp, 'run', '--stats', '-c', rt.DUMP_ARCS, '-o', outdir] + (['--atomic'] if threads > 1 else [])
    args = [str(threads), str(RETREE_ROUNDS[threads])] + (['fork'] if fork else [])
    cmd += ['--', binary] + args
    lp = run_in(cmd)
    probs = same_as_native(run_in([binary] + args), lp)
    m = re.search(rb'retreed=(\d+)', lp[2])
    if not m or int(m.group(1)) < 1:
        probs.append('no function got a second copy (%s)' % (m.group(0) if m else 'no stats'))
    calls = threads * RETREE_ROUNDS[threads] * (2 if fork else 1)
    often, seldom = calls // 64 * 63, calls // 64
    expect = {'work': threads * (2 if fork else 1), 'pick': calls, 'scan': calls, 'often': often, 'seldom': seldom}
    dumps = []
    try:
        dumps.append(('run', rt.exe_functions(rt.load_dump(outdir), binary)))
        files = all_counters_files(outdir)
        if len(files) != (2 if fork else 1):
            probs.append('counters files %s' % files)
        r = subprocess.run([ctx.lp, 'report', '-c', rt.DUMP_ARCS, outdir], capture_output=True, timeout=RUN_TIMEOUT)
        if r.returncode != 0:
            probs.append('report failed: %s' % rt.short(r.stderr))
        else:
            dumps.append(('report of %d file(s)' % len(files), rt.exe_functions(rt.load_dump(outdir), binary)))
    except (OSError, ValueError, subprocess.TimeoutExpired) as e:
        probs.append('dump.json: %s' % e)
    if fork and len(dumps) == 2:  # each process's report alone: the counters add up
        alone = 0
        for f in files:
            pid = f.split('.')[1]
            r = subprocess.run([ctx.lp, 'report', '-c', rt.DUMP_ARCS, '--pid', pid, outdir], capture_output=True,
                               timeout=RUN_TIMEOUT)
            if r.returncode != 0:
                probs.append('report --pid %s failed: %s' % (pid, rt.short(r.stderr)))
            pick = {g['name']: g for g in rt.exe_functions(rt.load_dump(outdir), binary)}.get('pick', {})
            alone += sum(e.get('measured') or 0 for e in pick.get('edges') or [])
        both = {g['name']: g for g in dumps[1][1]}.get('pick', {})
        if sum(e.get('measured') or 0 for e in both.get('edges') or []) != alone:
            probs.append("pick's edge counters over both processes are not the sum of each one's (%d)" % alone)
    for what, funcs in dumps:
        by_name = {f['name']: f for f in funcs}
        got = {n: by_name.get(n, {}).get('count') for n in expect}
        if got != expect:
            probs.append('%s: entry counts %s, want %s' % (what, got, expect))
        # main is on the stack at the fork: the child's file has the rest of its
        # flow without its entry (a child's counters start at 0), entered by
        # fork's return, the block after the call's side entry
        probs += rt.flow_problems(funcs, what)
        pick = by_name.get('pick', {})
        ways = sorted(e.get('count') for e in pick.get('edges') or [] if e['from'] == 1 and e['kind'] in ('fall', 'taken'))
        if ways != [seldom, often]:
            probs.append('%s: the @often branch went %s ways, want %s' % (what, ways, [seldom, often]))
        own = sum(e.get('measured') or 0 for e in pick.get('edges') or [])
        if not own or own >= often // 2:
            probs.append("%s: pick's edge counters ran %d times, want 1 .. %d" % (what, own, often // 2 - 1))
    if probs:
        probs[0] += repro(cmd)
    return [(name, probs[:8])]


def lcov_da(path):
    """{(source file, line): count} of the DA lines of an lcov tracefile."""
    da, src = {}, None
    with open(path) as f:
        for line in f:
            if line.startswith('SF:'):
                src = line[3:].strip()
            elif line.startswith('DA:'):
                ln, n = line[3:].split(',')[:2]
                da[(src, int(ln))] = int(n)
    return da


def late_and_never(outdir, source):
    """The problems of OUTDIR's coverage.info with tests/real/SOURCE's @late
    line (it must be covered) and its @never line (it must not)."""
    labels = rt.source_labels(os.path.join(REAL, source))
    try:
        da = lcov_da(os.path.join(outdir, 'coverage.info'))
    except (OSError, ValueError) as e:
        return ['coverage.info: %s' % e]
    src = next((k[0] for k in da if k[0].endswith(source)), '')
    late, never = da.get((src, labels['late'])), da.get((src, labels['never']))
    probs = []
    if not late:
        probs.append('the @late line (%d): DA %s, want covered' % (labels['late'], late))
    if never != 0:
        probs.append('the @never line (%d): DA %s, want 0' % (labels['never'], never))
    return probs


def test_strip(ctx, threads, collectors):
    """coverage/strip/Tthreads/COLLECTORS: a hot function's covered probes are
    left out of a second copy (tests/real/retree.c, last()): --stats says
    stripped >= 1 (under coverage alone, or homed >= 1: last() may go home to its
    original code first); the @late line, first run on each thread's last round,
    long after, is covered and the @never line is not (coverage.info); output
    as natively; with calls, the entry counts known by construction (with
    --atomic when T > 1)."""
    name = 'coverage/strip/%dthreads/%s' % (threads, collectors.replace(',', '+'))
    binary, err = build(ctx, 'retree', ['retree.c'], ['-O2', '-g', '-Wall', '-pthread'])
    if err:
        return [(name, [err])]
    outdir = os.path.join(ctx.scratch(name), 'out')
    atomic = ['--atomic'] if threads > 1 and 'calls' in collectors else []
    rounds = RETREE_ROUNDS[threads] if atomic else 1 << 25 - (threads - 1)  # ~1 s either way
    args = [str(threads), str(rounds)]
    cmd = [ctx.lp, 'run', '--stats', '-c', collectors, '-o', outdir] + atomic + ['--', binary] + args
    lp = run_in(cmd)
    probs = same_as_native(run_in([binary] + args), lp)
    m = re.search(rb'stripped=(\d+)', lp[2])
    home = home_stats(lp[2]).get('homed', 0) if 'calls' not in collectors else 0
    if not m or int(m.group(1)) + home < 1:  # coverage alone: last() may go home before a strip
        probs.append('no copy was stripped%s (%s)' % ('' if 'calls' in collectors else ' and none went home',
                                                      m.group(0) if m else 'no stats'))
    probs += late_and_never(outdir, 'retree.c')
    if 'calls' in collectors:
        calls = load_calls_safe(outdir, probs)
        n = threads * rounds
        expect = {'last': n, 'late': threads, 'nothing': 0, 'pick': n}
        if calls is not None:
            probs += count_problems(module_counts(calls, binary, ctx.syms(binary), list(expect)), expect)
    if probs:
        probs[0] += repro(cmd)
    return [(name, probs[:8])]


def test_strip_big(ctx):
    """coverage/strip/big: tests/real/strip_big.c's big(), ~1 750
    instructions, 256 blocks, called 2^20 times under -c coverage,calls: a
    copy without the cover probes that ran replaces its first (core/breaks.c,
    strip).  --stats says stripped >= 1; the @late line, first run on the
    last round, long after the strip, is covered, the @never line is not;
    big and late called as often as by construction; output as natively."""
    name = 'coverage/strip/big'
    binary, err = build(ctx, 'strip_big', ['strip_big.c'], ['-O2', '-g', '-Wall'])
    if err:
        return [(name, [err])]
    outdir = os.path.join(ctx.scratch(name), 'out')
    rounds = 1 << 20
    cmd = [ctx.lp, 'run', '--stats', '-c', 'coverage,calls', '-o', outdir, '--', binary, str(rounds)]
    lp = run_in(cmd)
    probs = same_as_native(run_in([binary, str(rounds)]), lp)
    m = re.search(rb'stripped=(\d+)', lp[2])
    if not m or int(m.group(1)) < 1:
        probs.append('no copy was stripped (%s)' % (m.group(0).decode() if m else 'no stats'))
    probs += late_and_never(outdir, 'strip_big.c') + cpu_problems(lp[2])
    calls = load_calls_safe(outdir, probs)
    expect = {'big': rounds, 'late': 1, 'nothing': 0}
    if calls is not None:
        probs += count_problems(module_counts(calls, binary, ctx.syms(binary), list(expect)), expect)
    if probs:
        probs[0] += repro(cmd)
    return [(name, probs[:8])]


def cpu_problems(err):
    """What is wrong with the CPU times of lazyprobe's --stats line: each
    present, the kernel's part of the tracer's and of the report's no more
    than the whole (a clock of ticks may give the kernel's part 0)."""
    cpu = {k.decode(): int(v) for k, v in re.findall(rb'\b(\w+_(?:cpu|sys)_us)=(\d+)', err)}
    want = ('tracer_cpu_us', 'program_cpu_us', 'report_cpu_us', 'tracer_sys_us', 'report_sys_us')
    if any(k not in cpu for k in want):
        return ['--stats lacks some of %s: %s' % (', '.join(want), cpu)]
    probs = []
    for part in ('tracer', 'report'):
        if cpu[part + '_sys_us'] > cpu[part + '_cpu_us']:
            probs.append('--stats %s_sys_us %d above %s_cpu_us %d' % (part, cpu[part + '_sys_us'], part,
                                                                     cpu[part + '_cpu_us']))
    return probs


def home_stats(err):
    """{name: int} of the homed= and home_hits= of lazyprobe's --stats line."""
    return {k.decode(): int(v) for k, v in re.findall(rb'\b(homed|home_hits)=(\d+)', err)}


def test_home(ctx, mode):
    """coverage/home/MODE: tests/real/home.c's hot() goes home under -c
    coverage (its original code, an int3 on each block not run yet) and
    blocks of it run first after that: --stats homed >= 1; MODE run: the
    @late line is covered through its int3 (home_hits >= 1); fork: a child
    forked after (same int3s in its memory) covers @late and the parent
    @parent (home_hits >= 2); threads: four threads call hot() while it goes
    home, then all run @late at once (home_hits >= 1); attach: lazyprobe attach,
    once hot() went home (the program sees its entry its own again and says
    so), gets SIGINT and lets the program go before those blocks run: it must
    not meet an int3 left behind.  @never is not covered; output and status as natively."""
    name = 'coverage/home/' + mode
    binary, err = build(ctx, 'home', ['home.c'], ['-O2', '-g', '-Wall', '-pthread'])
    if err:
        return [(name, [err])]
    outdir = os.path.join(ctx.scratch(name), 'out')
    probs, want_hits, covered = [], {'run': 1, 'fork': 2, 'threads': 1, 'attach': 0}[mode], {
        'run': ['late'], 'fork': ['late', 'parent'], 'threads': ['late'], 'attach': []}[mode]
    if mode == 'attach':
        target, reader = start_target([binary, 'signal'])
        cmd = [ctx.lp, 'attach', '--stats', '-c', 'coverage', '-o', outdir, str(target.pid)]
        lpp, lerr = None, b''
        try:
            if not reader.wait_for(rb'^ready$', 30):
                return [(name, ['the target printed no "ready"'])]
            lpp = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
            if not reader.wait_for(rb'^home$', 60):
                probs.append('hot() never went home under lazyprobe attach (the target printed no "home")')
            os.kill(lpp.pid, signal.SIGINT)  # lazyprobe lets the target go
            _, lerr = wait_attach(lpp, probs)
            if lpp.returncode != 0:
                probs.append('lazyprobe attach: status %s: %s' % (lpp.returncode, rt.short(lerr)))
            release_target(target, reader, b'ready\nhome\nlate=1501000\n', probs)
        finally:
            stop_all(target, lpp)
    else:
        cmd = [ctx.lp, 'run', '--stats', '-c', 'coverage', '-o', outdir, '--', binary, mode]
        lp = run_in(cmd)
        lerr = lp[2]
        probs += same_as_native(run_in([binary, mode]), lp)
    stats = home_stats(lerr)
    if stats.get('homed', 0) < 1 or stats.get('home_hits', 0) < want_hits:
        probs.append('hot() did not go home and meet its int3s: %s, want homed >= 1, home_hits >= %d' %
                     (stats or 'no stats', want_hits))
    labels = rt.source_labels(os.path.join(REAL, 'home.c'))
    try:
        da = lcov_da(os.path.join(outdir, 'coverage.info'))
        src = ([k[0] for k in da if k[0].endswith('home.c')] or [''])[0]
        for label in ('late', 'parent', 'never'):
            got, want = da.get((src, labels[label])), label in covered
            if got is None or bool(got) != want:
                probs.append('the @%s line (%d): DA %s, want %s' %
                             (label, labels[label], got, 'covered' if want else 'not covered'))
    except (OSError, ValueError, KeyError) as e:
        probs.append('coverage.info: %s' % e)
    if probs:
        probs[0] += repro(cmd)
    return [(name, probs[:8])]


def jobs(ctx):
    """[(filter-name, callable)] for run_tests.main()."""
    j = []
    # 1. threads
    for mode in ('atomic', 'plain', 'coverage'):
        j.append(('threads/storm/' + mode, lambda m=mode: test_storm(ctx, m)))
    # 2. child processes
    for mode in ('fork', 'vfork', 'clone', 'wrapped', 'deep', 'jumped', 'forkpty', 'daemon', 'spawn', 'exec'):
        j.append(('procs/' + mode, lambda m=mode: test_procs(ctx, m)))
        if mode in ('fork', 'vfork', 'clone', 'wrapped', 'deep', 'jumped', 'forkpty', 'daemon'):
            j.append(('procs/arcs/' + mode, lambda m=mode: test_procs_arcs(ctx, m)))
    j.append(('procs/outlive', lambda: test_procs_outlive(ctx)))
    j.append(('procs/many_procs', lambda: test_many_procs(ctx)))
    j.append(('procs/shell_script', lambda: test_shell_script(ctx)))
    j.append(('procs/inherited_signals', lambda: test_inherited_signals(ctx)))
    j.append(('procs/exec_32bit', lambda: test_exec_32bit(ctx)))
    j.append(('procs/loader_direct', lambda: test_loader_direct(ctx)))
    j.append(('procs/data_limit', lambda: test_data_limit(ctx)))
    j.append(('procs/shell_script/coverage', lambda: test_shell_script_coverage(ctx)))
    j.append(('procs/rebuilt_in_place', lambda: test_rebuilt_in_place(ctx)))
    j.append(('procs/make_j2', lambda: test_make(ctx)))
    # 3. shared libraries
    for mode in ('default', 'include', 'include_libc', 'exclude', 'exclude_func', 'last_rule', 'dlopen_only'):
        j.append(('shlib/' + mode, lambda m=mode: test_shlib(ctx, m)))
    # 4. exceptions, unwinding
    for o in ('O0', 'O2'):
        j.append(('cxx/exceptions/' + o, lambda o=o: test_cxx(ctx, o)))
        j.append(('unwind/backtrace/' + o, lambda o=o: test_backtrace(ctx, o)))
    for v in ('static', 'static/no_stubs', 'include_libgcc', 'include_libc', 'include_libstdcxx'):
        j.append(('cxx/exceptions/O2/' + v, lambda v=v: test_cxx(ctx, 'O2', v)))
    j.append(('cxx/exceptions/two_modules', lambda: test_cxx_xlib(ctx)))
    j.append(('cxx/exceptions/threads', lambda: test_cxx_threads(ctx)))
    j.append(('unwind/fork_threads_throw', lambda: test_fork_threads_throw(ctx)))
    for v in ('plain', 'fexceptions'):
        j.append(('unwind/thread_exit/' + v, lambda v=v: test_thread_exit(ctx, v)))
    j.append(('cxx/exceptions/O0/gcov', lambda: test_cxx_gcov(ctx)))
    for o in ('O0', 'O2'):
        j.append(('cxx/exceptions/%s/blocks' % o, lambda o=o: test_cxx_blocks(ctx, o)))
    j.append(('cxx/exceptions/O2-stripped/blocks', lambda: test_cxx_blocks(ctx, 'O2', True)))
    for stripped in (False, True):
        j.append(('cold/threads%s/blocks' % ('-stripped' if stripped else ''),
                  lambda st=stripped: test_cold_threads(ctx, st)))
        j.append(('cold/side_only' + ('-stripped' if stripped else ''),
                  lambda st=stripped: test_cold_side(ctx, st)))
    j.append(('cold/catch_loop/blocks', lambda: test_catch_loop(ctx)))
    for stripped in (False, True):
        j.append(('cold/marked' + ('-stripped' if stripped else ''), lambda st=stripped: test_cold_marked(ctx, st)))
    j.append(('cold/fnda', lambda: test_cold_fnda(ctx)))
    j.append(('coverage/never_run_branches', lambda: test_never_run_branches(ctx)))
    for stripped in (False, True):
        j.append(('marked/went_on' + ('-stripped' if stripped else ''), lambda st=stripped: test_went_on(ctx, st)))
    j.append(('tables/guard_escape', lambda: test_guard_escape(ctx)))
    j.append(('tables/shared_table', lambda: test_shared_table(ctx)))
    j.append(('unwind/perf_map', lambda: test_perf(ctx)))
    for t in (1, 2):
        j.append(('arcs/retree/%dthreads' % t, lambda t=t: test_retree(ctx, t)))
    j.append(('arcs/retree/1threads/fork', lambda: test_retree(ctx, 1, True)))
    for t, cols in ((1, 'coverage'), (2, 'coverage'), (2, 'coverage,calls')):
        j.append(('coverage/strip/%dthreads/%s' % (t, cols.replace(',', '+')),
                  lambda t=t, c=cols: test_strip(ctx, t, c)))
    j.append(('coverage/strip/big', lambda: test_strip_big(ctx)))
    for mode in ('run', 'fork', 'threads', 'attach'):
        j.append(('coverage/home/' + mode, lambda m=mode: test_home(ctx, m)))
    j.append(('unwind/gdb_core', lambda: test_gdb_core(ctx)))
    j.append(('unwind/fork_throw', lambda: test_fork_throw(ctx)))
    # 5. attach/detach
    for how in ('duration', 'sigint'):
        j.append(('attach/' + how, lambda h=how: test_attach(ctx, h)))
    j.append(('attach/early_sigint', lambda: test_attach_early_sigint(ctx)))
    j.append(('attach/stack', lambda: test_attach_stack(ctx)))
    j.append(('attach/plt', lambda: test_attach_plt(ctx)))
    j.append(('attach/cold', lambda: test_attach_cold(ctx)))
    j.append(('attach/late_throw', lambda: test_attach_late_throw(ctx)))
    j.append(('attach/late_backtrace', lambda: test_attach_late_backtrace(ctx)))
    j.append(('attach/threads_throw', lambda: test_attach_threads_throw(ctx)))
    j.append(('attach/gdb_core', lambda: test_attach_gdb_core(ctx)))
    j.append(('attach/loader_busy', lambda: test_attach_loader_busy(ctx)))
    # 6. machine details
    for pn in ENDBR_PROGRAMS:
        j.append(('machine/endbr64/' + pn, lambda pn=pn: test_endbr(ctx, pn)))
    for key in REAL_PROGRAMS:
        j.append(('machine/' + key.replace('_', '/'), lambda k=key: test_real_program(ctx, k)))
    for key in ('redzone', 'jumpin_cold', 'jumpin_inside'):
        for coll in ('coverage,calls', 'arcs,calls'):
            j.append(('machine/%s/%s' % (key.replace('_', '/'), coll.replace(',', '+')),
                      lambda k=key, c=coll: test_real_program(ctx, k, c)))
    # 7. faults
    for sig in (signal.SIGSEGV, signal.SIGABRT, signal.SIGTERM, signal.SIGKILL):
        j.append(('faults/target_%s/threads' % sig.name, lambda s=sig: test_fault(ctx, 'target', s)))
    for sig in (signal.SIGINT, signal.SIGTERM):
        j.append(('faults/lazyprobe_%s/threads' % sig.name,
                  lambda s=sig: test_fault(ctx, 'lazyprobe', s)))
        j.append(('faults/lazyprobe_%s/threads/handled' % sig.name,
                  lambda s=sig: test_fault(ctx, 'lazyprobe', s, True)))
    return j
