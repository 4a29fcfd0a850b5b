#!/usr/bin/env python3
"""Integration tests for lazyprobe (python3, stdlib only).

    python3 tests/run_tests.py --lazyprobe build/tools/lazyprobe [--work DIR] [-k SUBSTR] [-j N]

Builds every tests/corpus/*.c in 12 variants (-O0/-O2/-O3 x PIE/non-PIE x
symbols/stripped), runs each natively and under `lazyprobe run -c calls`, and
compares output, exit status and the call counts in calls.json with the counts
each program declares in `/* expect: NAME COUNT */` comments.  Expectations
come only from the corpus sources (and, for the callgrind cross-check, from
valgrind), never from lazyprobe itself.  See tests/README.md.

Corpus directives (in C comments, one per line):
    /* expect: NAME COUNT */   exact number of entries of function NAME;
                               COUNT may be @KEY: the value of the line
                               "KEY=N" in the program's native stdout
    /* stdin: FILE */          file in tests/corpus fed to stdin
    /* args: A B ... */        arguments; {outdir} = lazyprobe's -o DIR,
                               {scratch} = the test's scratch directory
    /* expect-branch: LABEL A/B ... */  the conditional branches on the line
                               marked /* @LABEL */ go A and B times (one
                               unordered pair per branch)
    /* expect-case: LABEL N */ jump-table edges to the line marked /* @LABEL */
                               are taken N times in all

The probe tests (blocks/, arcs/, gcov/, outputs/) compare block, arc and
call-site counts and the collectors' files with valgrind's callgrind, gcov,
counts known by construction, and the consumer tools (tests/README.md).
"""

import argparse
import bisect
import collections
import concurrent.futures
import json
import os
import re
import shutil
import signal
import stat
import struct
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, 'corpus')
PREFIX = 'lazyprobe:'

OPTS = ['O0', 'O2', 'O3']
PIES = ['pie', 'nopie']
SYMS = ['sym', 'strip']
VARIANTS = [(o, p, s) for o in OPTS for p in PIES for s in SYMS]

RUN_TIMEOUT = 120       # seconds for one lazyprobe run (generous: 2 cores, -j2)
NATIVE_TIMEOUT = 30

# Programs used by the special tests, not by the generic run test as-is.
CALLGRIND_PROGRAMS = ['fib', 'jumptable', 'tailcall']


def vname(v):
    return '-'.join(v)


# ---------------------------------------------------------------- corpus ---

class Program:
    def __init__(self, path):
        self.path = path
        self.name = os.path.splitext(os.path.basename(path))[0]
        self.expect = []            # [(func, count-or-'@key')]
        self.stdin = None
        self.args = []
        with open(path) as f:
            text = f.read()
        for m in re.finditer(r'/\*\s*expect:\s*(\S+)\s+(\S+)\s*\*/', text):
            cnt = m.group(2)
            self.expect.append((m.group(1), cnt if cnt.startswith('@') else int(cnt)))
        # /* expect-branch: LABEL T/F ... */ and /* expect-case: LABEL N */
        self.expect_branch = []     # [(label, [(a, b), ...])]
        self.expect_case = []       # [(label, count)]
        for m in re.finditer(r'/\*\s*expect-branch:\s*(\S+)\s+(.*?)\s*\*/', text):
            pairs = [tuple(int(x) for x in p.split('/')) for p in m.group(2).split()]
            self.expect_branch.append((m.group(1), pairs))
        for m in re.finditer(r'/\*\s*expect-case:\s*(\S+)\s+(\d+)\s*\*/', text):
            self.expect_case.append((m.group(1), int(m.group(2))))
        m = re.search(r'/\*\s*stdin:\s*(\S+)\s*\*/', text)
        if m:
            self.stdin = os.path.join(CORPUS, m.group(1))
        m = re.search(r'/\*\s*args:\s*(.*?)\s*\*/', text)
        if m:
            self.args = m.group(1).split()
        self.threads = 'pthread_create' in text  # it runs several threads


def load_corpus():
    progs = []
    for fn in sorted(os.listdir(CORPUS)):
        if fn.endswith('.c'):
            progs.append(Program(os.path.join(CORPUS, fn)))
    return progs


# ------------------------------------------------------------------- ELF ---

def elf_func_symbols(path):
    """{name: st_value} of the STT_FUNC symbols of .symtab (stdlib parser)."""
    with open(path, 'rb') as f:
        data = f.read()
    if data[:4] != b'\x7fELF' or data[4] != 2:
        raise ValueError('not an ELF64 file: ' + path)
    e_shoff, = struct.unpack_from('<Q', data, 0x28)
    e_shentsize, e_shnum = struct.unpack_from('<HH', data, 0x3A)
    shdrs = []
    for i in range(e_shnum):
        off = e_shoff + i * e_shentsize
        (sh_name, sh_type, sh_flags, sh_addr, sh_offset, sh_size, sh_link,
         sh_info, sh_addralign, sh_entsize) = struct.unpack_from('<IIQQQQIIQQ', data, off)
        shdrs.append((sh_type, sh_offset, sh_size, sh_link, sh_entsize))
    syms = {}
    for sh_type, off, size, link, entsize in shdrs:
        if sh_type != 2:        # SHT_SYMTAB
            continue
        str_off = shdrs[link][1]
        for k in range(size // 24):
            st_name, st_info, st_other, st_shndx, st_value, st_size = \
                struct.unpack_from('<IBBHQQ', data, off + k * 24)
            if st_info & 0xf != 2 or st_shndx == 0:     # STT_FUNC, defined
                continue
            end = data.index(b'\0', str_off + st_name)
            name = data[str_off + st_name:end].decode()
            syms.setdefault(name, st_value)
    return syms


def make_elf32(path):
    """A minimal i386 executable that writes "RAN32\\n" and exits 0."""
    base = 0x08048000
    code_off = 52 + 32
    msg = b'RAN32\n'
    code_len = 31
    msg_addr = base + code_off + code_len
    code = (b'\xb8\x04\x00\x00\x00' + b'\xbb\x01\x00\x00\x00' +
            b'\xb9' + struct.pack('<I', msg_addr) + b'\xba\x06\x00\x00\x00' +
            b'\xcd\x80' + b'\xb8\x01\x00\x00\x00' + b'\x31\xdb' + b'\xcd\x80')
    assert len(code) == code_len
    size = code_off + code_len + len(msg)
    ehdr = (b'\x7fELF\x01\x01\x01' + b'\0' * 9 +
            struct.pack('<HHIIIIIHHHHHH', 2, 3, 1, base + code_off, 52, 0, 0,
                        52, 32, 1, 40, 0, 0))
    phdr = struct.pack('<IIIIIIII', 1, 0, base, base, size, size, 5, 0x1000)
    with open(path, 'wb') as f:
        f.write(ehdr + phdr + code + msg)
    os.chmod(path, 0o755)


# ----------------------------------------------------------------- build ---

def build_one(prog, v, bindir):
    o, p, s = v
    sym_path = os.path.join(bindir, '%s.%s-%s-sym' % (prog.name, o, p))
    out = os.path.join(bindir, '%s.%s' % (prog.name, vname(v)))
    flags = ['-%s' % o, '-g0', '-Wall', '-Wno-unused-result']
    flags += ['-fpie', '-pie'] if p == 'pie' else ['-fno-pie', '-no-pie']
    stamp = ' '.join(flags)
    if s == 'sym':
        stampf = out + '.flags'
        if (os.path.exists(out) and os.path.exists(stampf) and
                os.path.getmtime(out) >= os.path.getmtime(prog.path) and
                open(stampf).read() == stamp):
            return out, sym_path, None
        r = subprocess.run(['gcc'] + flags + ['-o', out, prog.path],
                           capture_output=True, text=True)
        if r.returncode != 0:
            return out, sym_path, 'gcc failed: ' + r.stderr.strip()[:500]
        with open(stampf, 'w') as f:
            f.write(stamp)
    else:
        if os.path.exists(out) and os.path.getmtime(out) >= os.path.getmtime(sym_path):
            return out, sym_path, None
        r = subprocess.run(['strip', '--strip-all', '-o', out, sym_path],
                           capture_output=True, text=True)
        if r.returncode != 0:
            return out, sym_path, 'strip failed: ' + r.stderr.strip()[:500]
    return out, sym_path, None


def build_all(progs, bindir, jobs):
    os.makedirs(bindir, exist_ok=True)
    built = {}
    errors = {}
    # sym first (strip needs them)
    for phase in ('sym', 'strip'):
        todo = [(pr, v) for pr in progs for v in VARIANTS if v[2] == phase]
        with concurrent.futures.ThreadPoolExecutor(max(1, jobs)) as ex:
            futs = {ex.submit(build_one, pr, v, bindir): (pr, v) for pr, v in todo}
            for fu in futs:
                pr, v = futs[fu]
                out, sym_path, err = fu.result()
                built[(pr.name, v)] = (out, sym_path)
                if err:
                    errors[(pr.name, v)] = err
    return built, errors


# --------------------------------------------------------------- helpers ---

def status_of(rc):
    """subprocess returncode -> shell-style status (128+N for signals)."""
    return 128 - rc if rc < 0 else rc


def run_proc(argv, stdin_path=None, timeout=NATIVE_TIMEOUT, umask=-1, cwd=None, env=None, stdout_path=None):
    """Run to completion in its own process group; kill the group on timeout.
    ENV is added to the environment; with STDOUT_PATH stdout goes to that
    file (a pipe's reader sets the pace of a writer that fills it: xz waits in
    io_wait as often as that happens) and comes back as b''.
    Returns (status, stdout bytes, stderr bytes, timed_out)."""
    fin = open(stdin_path, 'rb') if stdin_path else subprocess.DEVNULL
    fout = open(stdout_path, 'wb') if stdout_path else subprocess.PIPE
    try:
        p = subprocess.Popen(argv, stdin=fin, stdout=fout,
                             stderr=subprocess.PIPE, start_new_session=True,
                             umask=umask, cwd=cwd, env=dict(os.environ, **env) if env else None)
        try:
            out, err = p.communicate(timeout=timeout)
            return status_of(p.returncode), out or b'', err, False
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            out, err = p.communicate()
            return status_of(p.returncode), out or b'', err, True
    finally:
        if stdin_path:
            fin.close()
        if stdout_path:
            fout.close()


def lp_lines(err):
    return [l for l in err.decode(errors='replace').splitlines() if l.startswith(PREFIX)]


def non_lp_stderr(err):
    return b''.join(l for l in err.splitlines(keepends=True)
                    if not l.startswith(PREFIX.encode()))


def norm(line):
    return ' '.join(line.split())


def short(b, n=300):
    s = b.decode(errors='replace') if isinstance(b, bytes) else str(b)
    return repr(s[:n] + ('...' if len(s) > n else ''))


def first_diff(a, b):
    al, bl = a.splitlines(), b.splitlines()
    for i in range(max(len(al), len(bl))):
        x = al[i] if i < len(al) else b'<EOF>'
        y = bl[i] if i < len(bl) else b'<EOF>'
        if x != y:
            return 'line %d: native %s vs lazyprobe %s' % (i + 1, short(x, 120), short(y, 120))
    return 'differ (whitespace at end?)'


def load_calls(outdir):
    path = os.path.join(outdir, 'calls.json')
    with open(path) as f:
        return json.load(f)


def resolve_expect(prog, native_out):
    """[(name, count)] with @KEY looked up in native stdout."""
    res = []
    for name, cnt in prog.expect:
        if isinstance(cnt, str):
            m = re.search(rb'^' + re.escape(cnt[1:].encode()) + rb'=(\d+)$', native_out, re.M)
            if not m:
                raise ValueError('native stdout has no %s=N line' % cnt[1:])
            cnt = int(m.group(1))
        res.append((name, cnt))
    return res


def find_func(calls, name, addr, stripped, module):
    """The calls.json entry for NAME (unstripped) or ADDR (stripped)."""
    funcs = calls.get('functions', [])
    cands = []
    for f in funcs:
        try:
            fa = int(str(f.get('address')), 16)
        except ValueError:
            fa = None
        if stripped:
            if fa == addr:
                cands.append(f)
        elif f.get('name') == name:
            cands.append(f)
    if module:
        inmod = [f for f in cands if os.path.realpath(str(f.get('module', ''))) ==
                 os.path.realpath(module)]
        if inmod:
            cands = inmod
    return cands


def check_counts(calls, expect, syms, binary, stripped):
    """Problems (list of str) comparing calls.json with the expectations."""
    probs = []
    if not isinstance(calls, dict) or calls.get('lazyprobe') != 1:
        probs.append('calls.json: "lazyprobe" is not 1')
    for name, cnt in expect:
        addr = syms.get(name)
        if addr is None:
            probs.append('%s: not in the unstripped symtab (corpus bug?)' % name)
            continue
        cands = find_func(calls, name, addr, stripped, binary)
        label = '%s(0x%x)' % (name, addr)
        if not cands:
            probs.append('%s missing from calls.json' % label)
            continue
        if len(cands) > 1:
            probs.append('%s listed %d times' % (label, len(cands)))
        f = cands[0]
        if not stripped:
            try:
                fa = int(str(f.get('address')), 16)
            except ValueError:
                fa = None
            if fa != addr:
                probs.append('%s: address %s != st_value 0x%x' % (name, f.get('address'), addr))
        if f.get('state') == 'native':
            probs.append('%s: state native (%s)' % (label, f.get('reason', '')))
        if f.get('count') != cnt:
            probs.append('%s: count %s, expected %d (state %s)' %
                         (label, f.get('count'), cnt, f.get('state')))
    return probs


def check_report_table(lp, outdir_or_file, run_err):
    """`lazyprobe report X` prints the run's table (minus prefix) on stdout."""
    st, out, err, to = run_proc([lp, 'report', outdir_or_file], timeout=60)
    if to:
        return ['report: timeout']
    if st != 0:
        return ['report: status %d, stderr %s' % (st, short(err))]
    rep = [norm(l) for l in out.decode(errors='replace').splitlines() if norm(l)]
    if not rep:
        return ['report: empty stdout']
    bad = [l for l in rep if l.startswith(PREFIX)]
    if bad:
        return ['report: stdout line has the prefix: %s' % short(bad[0])]
    if run_err is None:
        return []
    runl = [norm(l[len(PREFIX):]) for l in lp_lines(run_err)]
    runl = [l for l in runl if l]
    n = len(rep)
    for i in range(len(runl) - n + 1):
        if runl[i:i + n] == rep:
            return []
    # find the first report line not in the run's lines for the message
    missing = [l for l in rep if l not in runl]
    if missing:
        return ['report table differs from run: %s not in the run\'s lazyprobe: lines' %
                short(missing[0], 150)]
    return ['report table (%d lines) is not a contiguous block of the run\'s lazyprobe: lines' % n]


def counters_files(outdir):
    try:
        return sorted(f for f in os.listdir(outdir) if re.fullmatch(r'lazyprobe\.\d+\.counters', f))
    except OSError:
        return []


# ------------------------------------------------------------------ tests ---

class Ctx:
    def __init__(self, args, progs, built, build_errors):
        self.lp = os.path.abspath(args.lazyprobe) if args.lazyprobe else None
        self.work = args.work
        self.progs = {p.name: p for p in progs}
        self.built = built
        self.build_errors = build_errors
        self.native_only = args.native_only
        self._syms = {}
        self._lock = threading.Lock()

    def binary(self, prog, v):
        return self.built[(prog, v)]

    def syms(self, sym_path):
        with self._lock:
            if sym_path not in self._syms:
                self._syms[sym_path] = elf_func_symbols(sym_path)
            return self._syms[sym_path]

    def scratch(self, name):
        d = os.path.join(self.work, 'runs', re.sub(r'[^A-Za-z0-9_.-]', '_', name))
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        return d


def native_corpus_run(ctx, prog_name, v, name):
    """The native half of test NAME on variant V of corpus program PROG_NAME:
    a dict of prog, binary, sym_path (its unstripped build), outdir (in the
    test's scratch directory, emptied again after the native run), args,
    status, out, err and expect (the expectations, @KEY resolved from its
    stdout); or a problem string."""
    if (prog_name, v) in ctx.build_errors:
        return 'build: ' + ctx.build_errors[(prog_name, v)]
    prog = ctx.progs[prog_name]
    binary, sym_path = ctx.binary(prog_name, v)
    scratch = ctx.scratch(name)
    outdir = os.path.join(scratch, 'out')
    args = [a.replace('{outdir}', outdir).replace('{scratch}', scratch) for a in prog.args]
    nst, nout, nerr, nto = run_proc([binary] + args, prog.stdin)
    if nto:
        return 'native run timed out'
    try:
        expect = resolve_expect(prog, nout)
    except ValueError as e:
        return 'native: %s' % e
    for f in os.listdir(scratch):  # its side effects go before the instrumented run
        p = os.path.join(scratch, f)
        shutil.rmtree(p) if os.path.isdir(p) else os.unlink(p)
    return dict(prog=prog, binary=binary, sym_path=sym_path, outdir=outdir, args=args, status=nst, out=nout,
                err=nerr, expect=expect)


def test_run(ctx, prog_name, v):
    """Generic test: native vs lazyprobe on one program variant.
    Returns [(name, problems)]."""
    name = 'run/%s/%s' % (prog_name, vname(v))
    rname = 'report/%s/%s' % (prog_name, vname(v))
    r = native_corpus_run(ctx, prog_name, v, name)
    if isinstance(r, str):
        return [(name, [r])]
    prog, binary, sym_path, outdir, args = r['prog'], r['binary'], r['sym_path'], r['outdir'], r['args']
    nst, nout, nerr, expect = r['status'], r['out'], r['err'], r['expect']
    syms = ctx.syms(sym_path)
    missing = [n for n, _ in expect if n not in syms]
    if missing:
        return [(name, ['expected functions not in symtab: %s' % ', '.join(missing)])]
    if ctx.native_only:
        return [(name, [])]
    cmd = [ctx.lp, 'run', '-c', 'calls', '-o', outdir, '--', binary] + args
    lst, lout, lerr, lto = run_proc(cmd, prog.stdin, timeout=RUN_TIMEOUT)
    probs = []
    repro = '  [repro: %s%s]' % (' '.join(cmd), ' < ' + prog.stdin if prog.stdin else '')
    if lto:
        return [(name, ['lazyprobe run timed out after %ds' % RUN_TIMEOUT + repro])]
    if lout != nout:
        probs.append('stdout differs: ' + first_diff(nout, lout))
    le = non_lp_stderr(lerr)
    if le != nerr:
        probs.append('stderr (without lazyprobe: lines) differs: ' + first_diff(nerr, le))
    if lst != nst:
        probs.append('status %d, native %d' % (lst, nst))
    # counts taken without --atomic: the run says so when, and only when, the program ran threads
    if (b'ran several threads' in lerr) != prog.threads:
        probs.append('the warning about threads and --atomic %s' % ('missing' if prog.threads else 'printed'))
    calls = None
    try:
        calls = load_calls(outdir)
    except (OSError, ValueError) as e:
        probs.append('calls.json: %s' % e)
    if calls is not None:
        probs += check_counts(calls, expect, syms, binary, v[2] == 'strip')
        procs = calls.get('processes') or []
        want_end = 'signal %d' % (nst - 128) if nst > 128 else 'exit %d' % nst
        if len(procs) != 1:
            probs.append('calls.json: %d processes, expected 1' % len(procs))
        else:
            pr = procs[0]
            if pr.get('end') != want_end:
                probs.append('calls.json: end %r, expected %r' % (pr.get('end'), want_end))
            if os.path.realpath(str(pr.get('program'))) != os.path.realpath(binary):
                probs.append('calls.json: program %r' % pr.get('program'))
            if not os.path.isfile(os.path.join(outdir, 'lazyprobe.%s.counters' % pr.get('pid'))):
                probs.append('no lazyprobe.%s.counters in DIR' % pr.get('pid'))
    res = [(name, [p + repro for p in probs[:1]] + probs[1:6])]
    # report half
    rprobs = check_report_table(ctx.lp, outdir, lerr) if os.path.isdir(outdir) else \
        ['no output directory']
    if not rprobs and calls is not None:
        # the rewritten calls.json must carry the run's counts (whatever
        # they are: the expectations are checked by the run test)
        try:
            calls2 = load_calls(outdir)
            key = lambda c: sorted((str(f.get('address')), str(f.get('module')), f.get('count'))
                                   for f in c.get('functions', []))
            if key(calls2) != key(calls):
                a, b = key(calls), key(calls2)
                d = [x for x in a if x not in b][:2] + [x for x in b if x not in a][:2]
                rprobs.append('calls.json rewritten by report differs from the run\'s: %s' % d)
        except (OSError, ValueError) as e:
            rprobs.append('calls.json after report: %s' % e)
    if rprobs:
        rprobs[0] += '  [repro: %s; %s report %s]' % (' '.join(cmd), ctx.lp, outdir)
    res.append((rname, rprobs[:4]))
    return res


def bad_input_check(ctx, name, argv, marker=None, want_text=None, stdout_empty=True, want_status=None):
    st, out, err, to = run_proc(argv, timeout=60)
    repro = '  [repro: %s]' % ' '.join(argv)
    if to:
        return [(name, ['timeout' + repro])]
    probs = []
    if want_status is not None and st != want_status:
        probs.append('status %d, want %d' % (st, want_status))
    lines = err.decode(errors='replace').splitlines()
    if st == 0:
        probs.append('status 0')
    if len(lines) != 1:
        probs.append('%d stderr lines, expected exactly 1: %s' % (len(lines), short(err)))
    elif not lines[0].startswith(PREFIX):
        probs.append('stderr line lacks prefix: %s' % short(lines[0]))
    elif want_text and want_text not in lines[0]:
        probs.append('message lacks %r: %s' % (want_text, short(lines[0])))
    if st >= 128:
        probs.append('status %d looks like a crash' % st)
    if stdout_empty and out:
        probs.append('program ran / stdout not empty: %s' % short(out))
    if marker and os.path.exists(marker):
        probs.append('program ran (marker file created)')
    if probs:
        probs[0] += repro
    return [(name, probs)]


def test_bad_inputs(ctx):
    res = []
    s = ctx.scratch('bad_input')
    lp = ctx.lp
    marker_bin, _ = ctx.binary('marker', ('O2', 'pie', 'sym'))
    good_out = os.path.join(s, 'out')
    # missing program: 127, as a shell says, by path or by a name not in PATH
    res += bad_input_check(ctx, 'bad_input/missing_program',
                           [lp, 'run', '-o', good_out, '--', os.path.join(s, 'no-such-prog')], want_status=127)
    res += bad_input_check(ctx, 'bad_input/missing_command',
                           [lp, 'run', '-o', good_out, '--', 'lazyprobe-no-such-command'], want_status=127,
                           want_text='command not found')
    # not executable (mode 0644 copy of an ELF; root cannot execve it either)
    ne = os.path.join(s, 'not-exec')
    shutil.copy(marker_bin, ne)
    os.chmod(ne, 0o644)
    mk = os.path.join(s, 'marker-noexec')
    res += bad_input_check(ctx, 'bad_input/not_executable',
                           [lp, 'run', '-o', good_out, '--', ne, mk], marker=mk, want_status=126)
    # a directory
    res += bad_input_check(ctx, 'bad_input/directory_as_program',
                           [lp, 'run', '-o', good_out, '--', s], want_status=126)
    # scripts whose interpreter is missing or not an ELF file: nothing runs
    for tag, interp in (('script_missing_interpreter', os.path.join(s, 'no-such-interpreter')),
                        ('script_interpreter_not_elf', '/etc/passwd')):
        sh = os.path.join(s, tag + '.sh')
        mk = os.path.join(s, 'marker-' + tag)
        with open(sh, 'w') as f:
            f.write('#!%s\necho script ran\ntouch %s\n' % (interp, mk))
        os.chmod(sh, 0o755)
        res += bad_input_check(ctx, 'bad_input/' + tag, [lp, 'run', '-o', good_out, '--', sh], marker=mk,
                               want_text='its interpreter')
    # non-ELF: random bytes, executable
    junk = os.path.join(s, 'junk')
    with open(junk, 'wb') as f:
        f.write(bytes(range(256)) * 4)
    os.chmod(junk, 0o755)
    res += bad_input_check(ctx, 'bad_input/non_elf_binary_junk',
                           [lp, 'run', '-o', good_out, '--', junk])
    # 32-bit ELF
    e32 = os.path.join(s, 'elf32')
    make_elf32(e32)
    res += bad_input_check(ctx, 'bad_input/elf32', [lp, 'run', '-o', good_out, '--', e32],
                           want_text='not supported')
    # an ELF file the kernel will not run: its PT_INTERP names no file (the
    # launched child's execve fails after lazyprobe read the file)
    noi = os.path.join(s, 'missing-loader')
    with open(marker_bin, 'rb') as f:
        data = f.read()
    loader = b'/lib64/ld-linux-x86-64.so.2'
    at = data.index(loader)
    with open(noi, 'wb') as f:
        f.write(data[:at] + b'/lib64/no-such-loader.so.22' + data[at + len(loader):])
    os.chmod(noi, 0o755)
    mk = os.path.join(s, 'marker-missing-loader')
    res += bad_input_check(ctx, 'bad_input/missing_loader', [lp, 'run', '-o', good_out, '--', noi, mk], marker=mk,
                           want_text='cannot run %s: No such file or directory' % noi)
    # unwritable output directory (we are root, so permissions do not stop
    # us; use paths that cannot be created or written by anyone)
    afile = os.path.join(s, 'a-regular-file')
    with open(afile, 'w') as f:
        f.write('x\n')
    for tag, od in (('outdir_is_file', afile),
                    ('outdir_under_file', os.path.join(afile, 'sub')),
                    ('outdir_in_proc', '/proc/lazyprobe-test-no-such-dir')):
        mk = os.path.join(s, 'marker-' + tag)
        res += bad_input_check(ctx, 'bad_input/' + tag,
                               [lp, 'run', '-o', od, '--', marker_bin, mk], marker=mk)
    if os.geteuid() != 0:
        ro = os.path.join(s, 'readonly')
        os.makedirs(ro)
        os.chmod(ro, 0o555)
        mk = os.path.join(s, 'marker-ro')
        res += bad_input_check(ctx, 'bad_input/outdir_readonly',
                               [lp, 'run', '-o', os.path.join(ro, 'out'), '--', marker_bin, mk],
                               marker=mk)
    return res


def start_sleeper(ctx, v, outdir):
    binary, sym_path = ctx.binary('sleeper', v)
    cmd = [ctx.lp, 'run', '-c', 'calls', '-o', outdir, '--', binary]
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, start_new_session=True)
    # read the marker line with a timeout
    box = {}

    def reader():
        box['line'] = p.stdout.readline()
    t = threading.Thread(target=reader, daemon=True)
    t.start()
    t.join(RUN_TIMEOUT)
    line = box.get('line', b'')
    m = re.match(rb'READY pid=(\d+) acc=(\d+)', line or b'')
    return p, cmd, (int(m.group(1)) if m else None), line


def kill_group(p):
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def pid_alive(pid):
    try:
        with open('/proc/%d/stat' % pid) as f:
            st = f.read().rsplit(')', 1)[1].split()[0]
        return st not in ('Z', 'X')
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


SLEEPER_EXPECT = None


def sleeper_expect(ctx):
    return [(n, c) for n, c in ctx.progs['sleeper'].expect]


def start_sleeper_to_kill(ctx, name, v, victim):
    """Starts the sleeper under lazyprobe and waits for READY.
    Returns (p, pid, outdir, repro, failure): failure is a result list or None."""
    outdir = os.path.join(ctx.scratch(name), 'out')
    p, cmd, pid, line = start_sleeper(ctx, v, outdir)
    repro = '  [repro: %s, then kill -9 %s after READY; %s report %s]' % (
        ' '.join(cmd), victim, ctx.lp, outdir)
    if pid is not None:
        return p, pid, outdir, repro, None
    kill_group(p)
    p.wait()
    return p, pid, outdir, repro, [(name, ['no READY line from the target (got %s)' % short(line)]
                                    + [repro])]


def check_sleeper_counts(ctx, v, outdir, what):
    binary, sym_path = ctx.binary('sleeper', v)
    try:
        calls = load_calls(outdir)
        return check_counts(calls, sleeper_expect(ctx), ctx.syms(sym_path), binary, v[2] == 'strip')
    except (OSError, ValueError) as e:
        return ['%s: calls.json: %s' % (what, e)]


def test_kill_target(ctx, v):
    name = 'sigkill_target/%s' % vname(v)
    p, pid, outdir, repro, failure = start_sleeper_to_kill(ctx, name, v, 'the target')
    if failure:
        return failure
    os.kill(pid, signal.SIGKILL)
    try:
        p.wait(timeout=60)
    except subprocess.TimeoutExpired:
        kill_group(p)
        p.wait()
        return [(name, ['lazyprobe did not exit within 60s after the target was killed' + repro])]
    err = p.stderr.read()
    p.stdout.close()
    p.stderr.close()
    probs = []
    st = status_of(p.returncode)
    if st != 137:
        probs.append('status %d, expected 137' % st)
    try:
        calls = load_calls(outdir)
        procs = calls.get('processes') or []
        if procs and procs[0].get('end') != 'signal 9':
            probs.append('calls.json: end %r, expected "signal 9"' % procs[0].get('end'))
    except (OSError, ValueError) as e:
        probs.append('after run: calls.json: %s' % e)
    if not os.path.isfile(os.path.join(outdir, 'lazyprobe.%d.counters' % pid)):
        probs.append('no lazyprobe.%d.counters' % pid)
    probs += check_report_table(ctx.lp, outdir, err)
    probs += check_sleeper_counts(ctx, v, outdir, 'after report')
    if probs:
        probs[0] += repro
    return [(name, probs[:5])]


def test_kill_lazyprobe(ctx, v):
    name = 'sigkill_lazyprobe/%s' % vname(v)
    p, pid, outdir, repro, failure = start_sleeper_to_kill(ctx, name, v, 'lazyprobe')
    if failure:
        return failure
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    p.stdout.close()
    p.stderr.close()
    probs = []
    deadline = time.time() + 5
    while pid_alive(pid) and time.time() < deadline:
        time.sleep(0.05)
    if pid_alive(pid):
        probs.append('target pid %d still running 5s after lazyprobe was killed (orphan)' % pid)
        try:
            os.kill(pid, signal.SIGKILL)     # the orphan we caused; by pid
        except ProcessLookupError:
            pass
    cf = os.path.join(outdir, 'lazyprobe.%d.counters' % pid)
    if not os.path.isfile(cf):
        probs.append('no counters file %s' % cf)
    else:
        probs += ['report FILE: ' + x for x in check_report_table(ctx.lp, cf, None)]
        probs += ['report DIR: ' + x for x in check_report_table(ctx.lp, outdir, None)]
        probs += check_sleeper_counts(ctx, v, outdir, 'after report DIR')
    if probs:
        probs[0] += repro
    return [(name, probs[:5])]


def test_counters_mode(ctx):
    name = 'security/counters_mode_0600'
    v = ('O2', 'pie', 'sym')
    binary, _ = ctx.binary('fib', v)
    s = ctx.scratch(name)
    outdir = os.path.join(s, 'out')
    cmd = [ctx.lp, 'run', '-c', 'calls', '-o', outdir, '--', binary]
    st, out, err, to = run_proc(cmd, timeout=RUN_TIMEOUT, umask=0)   # umask 0 on purpose
    repro = '  [repro: (umask 0; %s)]' % ' '.join(cmd)
    if to or st != 0:
        return [(name, ['run failed: status %d timeout %s stderr %s' % (st, to, short(err)) + repro])]
    files = counters_files(outdir)
    if not files:
        return [(name, ['no counters file in %s' % outdir + repro])]
    probs = []
    for f in files:
        sb = os.lstat(os.path.join(outdir, f))
        if not stat.S_ISREG(sb.st_mode):
            probs.append('%s is not a regular file' % f)
        elif stat.S_IMODE(sb.st_mode) != 0o600:
            probs.append('%s has mode %o, expected 600' % (f, stat.S_IMODE(sb.st_mode)))
    if probs:
        probs[0] += repro
    return [(name, probs)]


def test_symlink(ctx, dangling):
    name = 'security/planted_symlink_%s' % ('dangling' if dangling else 'existing')
    v = ('O2', 'pie', 'sym')
    binary, sym_path = ctx.binary('sleeper', v)
    s = ctx.scratch(name)
    outdir = os.path.join(s, 'out')
    os.makedirs(outdir)
    victim_dir = os.path.join(s, 'victim')
    os.makedirs(victim_dir)
    sentinel = os.path.join(victim_dir, 'sentinel')
    with open(sentinel, 'w') as f:
        f.write('sentinel: must stay untouched\n')
    os.chmod(sentinel, 0o644)
    before = os.stat(sentinel)
    # We cannot know the target's pid in advance: plant links for the next
    # 16000 pids (pids are allocated sequentially; other tests running at
    # the same time take some).
    with open('/proc/sys/kernel/ns_last_pid') as f:
        last = int(f.read())
    with open('/proc/sys/kernel/pid_max') as f:
        pid_max = int(f.read())
    planted = set()
    for k in range(1, 16001):
        pid = (last + k) % pid_max
        if pid < 2:
            continue
        planted.add(pid)
        tgt = os.path.join(victim_dir, 'nonexistent.%d' % pid) if dangling else sentinel
        os.symlink(tgt, os.path.join(outdir, 'lazyprobe.%d.counters' % pid))
    cmd = [ctx.lp, 'run', '-c', 'calls', '-o', outdir, '--', binary, 'x']
    st, out, err, to = run_proc(cmd, timeout=RUN_TIMEOUT)
    repro = '  [repro: %s with symlinks %s/lazyprobe.PID.counters -> %s]' % (
        ' '.join(cmd), outdir, 'a nonexistent file' if dangling else sentinel)
    probs = []
    if to:
        probs.append('timeout')
    after = os.stat(sentinel)
    with open(sentinel) as f:
        if f.read() != 'sentinel: must stay untouched\n':
            probs.append('symlink target was written')
    if (after.st_size, after.st_mtime_ns, stat.S_IMODE(after.st_mode)) != \
            (before.st_size, before.st_mtime_ns, stat.S_IMODE(before.st_mode)):
        probs.append('symlink target was modified (size/mtime/mode)')
    created = [f for f in os.listdir(victim_dir) if f != 'sentinel']
    if created:
        probs.append('file created through a dangling symlink: %s' % created[0])
    m = re.search(rb'READY acc=861', out)
    if st == 0:
        pid = None
        try:
            pid = int(load_calls(outdir)['processes'][0]['pid'])
        except (OSError, ValueError, KeyError, IndexError, TypeError) as e:
            probs.append('status 0 but no pid in calls.json: %r' % e)
        if not m:
            probs.append('status 0 but program output missing: %s' % short(out))
        elif pid is not None:
            if pid not in planted:
                probs.append('inconclusive: target pid %d outside the planted range' % pid)
            regular = [f for f in os.listdir(outdir) if 'counters' in f and
                       stat.S_ISREG(os.lstat(os.path.join(outdir, f)).st_mode)]
            if not regular:
                probs.append('status 0 but no regular counters file in DIR')
            try:
                calls = load_calls(outdir)
                probs += check_counts(calls, [('before_kill', 42), ('marker', 1)],
                                      ctx.syms(sym_path), binary, False)
            except (OSError, ValueError) as e:
                probs.append('calls.json: %s' % e)
    else:
        # failing clearly is allowed: a lazyprobe: line and a non-zero status
        if not lp_lines(err):
            probs.append('status %d without a lazyprobe: message' % st)
        if st >= 128 and not m:
            probs.append('lazyprobe crashed? status %d' % st)
    if probs:
        probs[0] += repro
    # clean up the planted links (thousands of files); keep what lazyprobe wrote
    for f in os.listdir(outdir):
        if os.path.islink(os.path.join(outdir, f)):
            os.unlink(os.path.join(outdir, f))
    return [(name, probs[:5])]


# ------------------------------------------------------- callgrind check ---

def parse_callgrind(path, exe):
    """Sum of calls= per callee function, restricted to callees in EXE."""
    names = {'fn': {}, 'ob': {}}
    calls = {}
    unknown = {}
    cur_ob = None
    cob = None
    cfn = None
    exe_real = os.path.realpath(exe)

    def decomp(kind, val):
        m = re.match(r'\((\d+)\)(?:\s+(.*))?$', val)
        if not m:
            return val
        table = names[kind]
        if m.group(2) is not None:
            table[m.group(1)] = m.group(2)
        return table.get(m.group(1), val)

    with open(path, errors='replace') as f:
        for line in f:
            line = line.rstrip('\n')
            if line.startswith('ob='):
                cur_ob = decomp('ob', line[3:])
                cob = None
            elif line.startswith('fn='):
                decomp('fn', line[3:])
                cob = None
            elif line.startswith('cob='):
                cob = decomp('ob', line[4:])
            elif line.startswith('cfn='):
                cfn = decomp('fn', line[4:])
            elif line.startswith('calls='):
                n = int(line[6:].split()[0])
                obj = cob if cob is not None else cur_ob
                if obj == '???' and re.fullmatch(r'0x[0-9a-fA-F]+', cfn or ''):
                    # no object: valgrind does not attribute .init/.fini
                    # (_init, _fini) to the executable; kept by address
                    unknown[cfn] = unknown.get(cfn, 0) + n
                elif obj and os.path.realpath(obj) == exe_real:
                    # "fib'2": callgrind's name for recursion level 2 of fib
                    base = re.sub(r"'\d+$", '', cfn)
                    calls[base] = calls.get(base, 0) + n
                cob = None
    return calls, unknown


# Functions excluded from the callgrind comparison, and why:
#   _start  entered by the kernel at exec (a jump to the entry point, not a
#           call), so callgrind records no call to it, while lazyprobe counts
#           its one entry.
#   register_tm_clones  entered by a tail jump from frame_dummy (crt code);
#           valgrind puts that code in no object ("???") and records no call
#           for it, so callgrind has no count to compare with.
CALLGRIND_EXCLUDE = {'_start', 'register_tm_clones'}


def test_callgrind(ctx, prog_name):
    name = 'callgrind/%s/O2-pie-sym' % prog_name
    v = ('O2', 'pie', 'sym')
    if not shutil.which('valgrind'):
        return [(name, ['valgrind not installed'])]
    binary, sym_path = ctx.binary(prog_name, v)
    prog = ctx.progs[prog_name]
    s = ctx.scratch(name)
    cgf = os.path.join(s, 'callgrind.out')
    st, out, err, to = run_proc(['valgrind', '--tool=callgrind', '--callgrind-out-file=' + cgf,
                                 binary], prog.stdin, timeout=180)
    if to or not os.path.exists(cgf):
        return [(name, ['callgrind failed: %s' % short(err)])]
    cg, unknown = parse_callgrind(cgf, binary)
    # valgrind leaves some functions unnamed (local symbols such as
    # frame_dummy, and _init/_fini) and names them by address: sometimes the
    # link-time address, sometimes the run-time one (valgrind maps a PIE at
    # 0x108000).  Map both back to the symtab name.
    by_addr = {a: n for n, a in ctx.syms(sym_path).items()}
    for k in list(cg):
        if re.fullmatch(r'0x[0-9a-fA-F]+', k):
            a = int(k, 16)
            n = by_addr.get(a) or by_addr.get(a - 0x108000)
            if n:
                cg[n] = cg.get(n, 0) + cg.pop(k)
    for k, cnt in unknown.items():
        a = int(k, 16)
        n = by_addr.get(a - 0x108000) if v[1] == 'pie' else by_addr.get(a)
        if n:
            cg[n] = cg.get(n, 0) + cnt
    if os.environ.get('LP_TEST_DEBUG'):
        print('callgrind %s: %s' % (prog_name, sorted(cg.items())), file=sys.stderr)
    # sanity: callgrind agrees with the corpus expectations
    probs = []
    for fn, cnt in prog.expect:
        if isinstance(cnt, int) and cg.get(fn, 0) != cnt:
            probs.append('corpus/callgrind disagree: %s callgrind %d, expect %d' %
                         (fn, cg.get(fn, 0), cnt))
    if ctx.native_only:
        return [(name, probs)]
    outdir = os.path.join(s, 'out')
    cmd = [ctx.lp, 'run', '-c', 'calls', '-o', outdir, '--', binary]
    lst, lout, lerr, lto = run_proc(cmd, prog.stdin, timeout=RUN_TIMEOUT)
    repro = '  [repro: %s; valgrind --tool=callgrind --callgrind-out-file=F %s]' % (
        ' '.join(cmd), binary)
    try:
        calls = load_calls(outdir)
    except (OSError, ValueError) as e:
        return [(name, ['calls.json: %s' % e + repro])]
    compared = 0
    for f in calls.get('functions', []):
        fn = f.get('name')
        if fn in CALLGRIND_EXCLUDE:
            continue
        if os.path.realpath(str(f.get('module'))) != os.path.realpath(binary):
            continue
        if f.get('state') == 'native':
            # its count is "not meaningful" by the contract; but the corpus
            # functions themselves must not be native (as in run/)
            if fn in dict(prog.expect) and cg.get(fn, 0) > 0:
                probs.append('%s: state native (%s), callgrind %d' %
                             (fn, f.get('reason', ''), cg.get(fn, 0)))
            continue
        compared += 1
        if f.get('count') != cg.get(fn, 0):
            probs.append('%s: lazyprobe %s, callgrind %d' % (fn, f.get('count'), cg.get(fn, 0)))
    if compared < len(prog.expect):
        probs.append('only %d functions compared' % compared)
    if probs:
        probs[0] += repro
    return [(name, probs[:6])]


# ------------------------------------------- probes: blocks, arcs, gcov ---
#
# Tests of the block, arc and call-site probes and of the collectors that use
# them (tests/README.md, "Probe tests").  References are independent of
# lazyprobe: valgrind's callgrind (per-instruction execution counts, call
# counts), gcov, counts known by construction (tests/corpus/branches.c), and
# the consumer tools (genhtml, lcov, callgrind_annotate, llvm-bolt-16).

TEST_COLLECTORS = os.path.join(HERE, 'collectors')
DUMP_BLOCKS = os.path.join(TEST_COLLECTORS, 'dump_blocks.lua')    # blocks="count"
DUMP_BLOCKS_COVER = os.path.join(TEST_COLLECTORS, 'dump_cover.lua')  # blocks="cover"
DUMP_ARCS = os.path.join(TEST_COLLECTORS, 'dump_arcs.lua')        # arcs=true, calls=true
DUMP_ARCS_ONLY = os.path.join(TEST_COLLECTORS, 'dump_arcs_only.lua')  # arcs=true: call counts solved

# Programs compared with callgrind block by block (blocks/) and checked for
# flow conservation (arcs/).  Not here: sigalrm (its busy loop runs until a
# timer fires: block counts depend on time, so two runs differ), sleeper
# (never ends), and the programs that need arguments (maps_check, marker).
PROBE_PROGRAMS = ['fib', 'jumptable', 'switchloop', 'bytetable', 'cgoto', 'tailcall', 'funcptr', 'qsort_cb', 'longjmp', 'segv',
                  'many', 'sigusr1', 'echo_stdin', 'tiny', 'exit_status', 'abort', 'branches',
                  'noreturn_callee', 'opentable', 'guardtable']

# Levels a program of PROBE_PROGRAMS is not compared at: at -O0 gcc sends
# every computed goto of cgoto to one shared `jmp *%rax` by a jmp, so the
# table load is not on the fall-through path back from it; the relocator does
# not follow jumps back and that dispatch leaves the copy.
PROBE_SKIP = {'cgoto': {'O0'}}

# The same programs compared with callgrind, and checked for flow conservation, in
# their PIE builds too (gcc's default, Debian's), where a switch's table holds
# offsets from a base register (tests/corpus/switchloop.c).
PIE_PROBE_PROGRAMS = [(pn, o) for pn in PROBE_PROGRAMS for o in OPTS if o not in PROBE_SKIP.get(pn, ())]

# The same programs built by clang -O2 (PIE), LLVM's code generation (Rust's
# too): the oracles of blocks/ and arcs/ on them.  The corpus marks its
# functions noipa, which clang does not know: noinline in its place.  Not
# tiny and switchloop: clang finds their noinline functions pure and
# computes their calls away (main prints a constant), so the counts they
# declare cannot be met.
CLANG = 'clang'
CLANG_FLAGS = ['-O2', '-g0', '-Wall', '-fpie', '-pie', '-Dnoipa=noinline', '-Wno-unknown-attributes']
CLANG_PROBE_PROGRAMS = [pn for pn in PROBE_PROGRAMS if pn not in ('tiny', 'switchloop')]



# Executions callgrind does not count: callgrind adds the cost of a
# superblock when it completes, so in a superblock that faults no instruction
# is counted, not even those before the faulting one.  segv's crash() faults
# in its entry block on every one of its 8 calls (the store through
# bad_ptr), so callgrind shows 0 for that block's first instruction where 8
# entries happened.  {program: {function: entries that faulted in block 1}}.
CALLGRIND_FAULTS = {'segv': {'crash': 8}}



def parse_callgrind_instr(path, jumps=None):
    """{object: {address: executions}} from a callgrind --dump-instr=yes
    profile; with JUMPS (a dict) and a profile made with --collect-jumps=yes,
    JUMPS[object][address] = (taken, executed) of the conditional jumps
    callgrind reports ("jcnd=TAKEN/EXECUTED target", the jump's own position
    on the next line; callgrind reports those that end one of its blocks,
    not every one).  With "positions: instr line" every cost line starts with the
    instruction's address and Ir is its number of executions.  Subposition
    compression (valgrind manual, "Callgrind Format Specification"): "+N" and
    "-N" are relative to the same subposition of the previous cost line, "*"
    repeats it.  The cost line after "calls=" is the call's inclusive cost,
    not executions of the call instruction (its own line carries those), so
    it is skipped; the target position on the calls= line itself does not
    change the previous position.  Names may be compressed ("(id) name" the
    first time, "(id)" after); cob= defines object names as ob= does."""
    names = {}
    res = {}
    ob = None
    last = [0, 0]
    npos = 2
    skip_next = False
    jcnd = None  # (taken, executed) of a jcnd= line, for the position on the next line

    def obname(val):
        m = re.match(r'\((\d+)\)(?:\s+(.*))?$', val)
        if not m:
            return val
        if m.group(2) is not None:
            names[m.group(1)] = m.group(2)
        return names.get(m.group(1), val)

    def subpos(tok, i):
        if tok == '*':
            return last[i]
        if tok[0] in '+-':
            return last[i] + int(tok)
        return int(tok, 16) if tok.lower().startswith('0x') else int(tok)

    with open(path, errors='replace') as f:
        for line in f:
            line = line.strip()
            if not line or line[0] == '#':
                continue
            c = line[0]
            if c.isdigit() or c in '+-*':
                toks = line.split()
                pos = [subpos(t, i) for i, t in enumerate(toks[:npos])]
                last[:len(pos)] = pos
                if jcnd:
                    if jumps is not None:
                        d = jumps.setdefault(ob, {})
                        t, e = d.get(pos[0], (0, 0))
                        d[pos[0]] = (t + jcnd[0], e + jcnd[1])
                    jcnd = None
                if skip_next:
                    skip_next = False
                    continue
                ir = int(toks[npos]) if len(toks) > npos else 0
                d = res.setdefault(ob, {})
                d[pos[0]] = d.get(pos[0], 0) + ir
            elif line.startswith('positions:'):
                npos = len(line.split()[1:])
                last = [0] * npos
            elif line.startswith('ob='):
                ob = obname(line[3:])
            elif line.startswith('cob='):
                obname(line[4:])
            elif line.startswith('calls='):
                skip_next = True
            elif line.startswith('jcnd='):
                taken, executed = line[5:].split()[0].split('/')
                jcnd = (int(taken), int(executed))
    return res


def exe_instr_counts(cg, exe, unknown=True):
    """Executions per address of the executable: its own object, and with
    UNKNOWN "???" (valgrind puts .init/.fini, i.e. _init and _fini, in no
    object), for non-PIE executables, whose addresses are link-time addresses
    in a range no other object is mapped in.  A PIE's "???" is at run-time
    addresses, which may fall on its link-time ones: not read."""
    counts = {}
    exe_real = os.path.realpath(exe)
    for obj, d in cg.items():
        if (unknown and obj == '???') or (obj and obj != '???' and os.path.realpath(obj) == exe_real):
            for a, n in d.items():
                counts[a] = counts.get(a, 0) + n
    return counts


def exe_object(per_object, exe):
    """The executable's own entry of a callgrind per-object dict ({} if none)."""
    exe_real = os.path.realpath(exe)
    for obj, d in per_object.items():
        if obj and obj != '???' and os.path.realpath(obj) == exe_real:
            return d
    return {}


def load_dump(outdir):
    with open(os.path.join(outdir, 'dump.json')) as f:
        return json.load(f)


def exe_functions(dump, exe):
    exe_real = os.path.realpath(exe)
    return [f for f in dump.get('functions', [])
            if os.path.realpath(str(f.get('module'))) == exe_real]


def build_extra(ctx, prog_name, tag, flags, link_flags=(), separate_compile=False, cc='gcc'):
    """Builds tests/corpus/PROG.c with CC and FLAGS into work/bin/PROG.TAG
    (cached on the flags and the source's mtime).  Returns (path, error)."""
    src = ctx.progs[prog_name].path
    bindir = os.path.join(ctx.work, 'bin')
    os.makedirs(bindir, exist_ok=True)
    out = os.path.join(bindir, '%s.%s' % (prog_name, tag))
    stamp = ' '.join([cc] + list(flags) + ['|'] + list(link_flags))
    stampf = out + '.flags'
    with ctx._lock:
        if (os.path.exists(out) and os.path.exists(stampf) and
                os.path.getmtime(out) >= os.path.getmtime(src) and open(stampf).read() == stamp):
            return out, None
        if separate_compile:        # gcov: PROG.TAG.gcno next to PROG.TAG.o
            steps = [[cc] + list(flags) + ['-c', '-o', out + '.o', src],
                     [cc] + list(flags) + list(link_flags) + ['-o', out, out + '.o']]
        else:
            steps = [[cc] + list(flags) + list(link_flags) + ['-o', out, src]]
        for cmd in steps:
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                return out, 'build failed: %s: %s' % (' '.join(cmd), r.stderr.strip()[:400])
        with open(stampf, 'w') as f:
            f.write(stamp)
    return out, None


def run_callgrind_instr(binary, stdin, out, jumps=None):
    """Per-instruction execution counts of one valgrind run (and, into JUMPS,
    its conditional jumps: parse_callgrind_instr).  --skip-plt=no:
    by default callgrind charges the instructions of PLT stubs to the
    instruction that jumped there (a "jmp printf@plt" shows 1 + the stub's
    instructions per execution)."""
    cmd = ['valgrind', '--tool=callgrind', '--dump-instr=yes', '--skip-plt=no', '--collect-jumps=yes',
           '--callgrind-out-file=' + out, binary]
    st, o, e, to = run_proc(cmd, stdin, timeout=180)
    if to or not os.path.exists(out):
        return None, 'callgrind failed (status %s): %s' % (st, short(e))
    return parse_callgrind_instr(out, jumps), None


def lp_dump(ctx, collector, binary, stdin, outdir, args=()):
    cmd = [ctx.lp, 'run', '-c', collector, '-o', outdir, '--', binary] + list(args)
    st, out, err, to = run_proc(cmd, stdin, timeout=RUN_TIMEOUT)
    repro = '  [repro: %s%s]' % (' '.join(cmd), ' < ' + stdin if stdin else '')
    if to:
        return None, st, out, err, repro, 'lazyprobe timed out'
    try:
        return load_dump(outdir), st, out, err, repro, None
    except (OSError, ValueError) as e:
        return None, st, out, err, repro, 'dump.json: %s; stderr %s' % (e, short(err))


def block_counts_problems(funcs, what):
    """Every relocated/trapped function that ran has blocks with counts."""
    probs = []
    for f in funcs:
        if f.get('flow_error'):
            continue        # reported by flow_problems
        if f.get('state') in ('relocated', 'trapped') and f.get('count', 0) > 0:
            bl = f.get('blocks')
            if not bl:
                probs.append('%s: %s ran (%s) but has no blocks' % (what, f['name'], f['state']))
            elif any('count' not in b for b in bl):
                probs.append('%s: %s: blocks without counts' % (what, f['name']))
    return probs


def probe_binary(ctx, prog_name, opt, link):
    """The build of PROG the probe tests compare: LINK 'nopie' or 'pie' (gcc,
    the generic builds), or 'clang' (clang -O2 PIE, CLANG_FLAGS).  Returns
    (path, error)."""
    if link == 'clang':
        if not shutil.which(CLANG):
            return None, '%s not installed' % CLANG
        return build_extra(ctx, prog_name, '%s-clang-sym' % opt, CLANG_FLAGS, cc=CLANG)
    return ctx.binary(prog_name, (opt, link, 'sym'))[0], None


def test_blocks(ctx, prog_name, opt, link='nopie'):
    """blocks/PROG/Ox-nopie-sym: every block's count (probes blocks="count")
    equals callgrind's execution count of the block's first instruction, and
    every instruction callgrind saw executed inside a relocated function lies
    in one of its blocks (no code ran outside the graph).
    cover/PROG/Ox-nopie-sym: with blocks="cover" (the probes of -c coverage:
    the entry's mark for block 1, none on the blocks known from the blocks
    they dominate), each block is 1 exactly when callgrind executed its first
    instruction.
    With LINK 'pie' (Ox-pie-sym): the same on the PIE build, whose switches
    dispatch through tables of 32-bit offsets from a base register (a lea
    that may lie far from the dispatch).  callgrind gives the executable's
    addresses at link time there too, but .init and .fini (valgrind puts them
    in no object) at run time: _init and _fini are left out.
    jumps/PROG/Ox-LINK-sym: with arcs = true, every conditional branch's
    taken edge has the count callgrind gives its jump (--collect-jumps=yes:
    callgrind reports the conditional jumps that end one of its blocks; the
    others are compared through the block counts only)."""
    variant = '%s-%s-sym' % (opt, link)
    names = ['%s/%s/%s' % (kind, prog_name, variant) for kind in ('blocks', 'cover', 'jumps')]
    if not shutil.which('valgrind'):
        return [(n, ['valgrind not installed']) for n in names]
    prog = ctx.progs[prog_name]
    binary, err = probe_binary(ctx, prog_name, opt, link)
    if err:
        return [(n, [err]) for n in names]
    s = ctx.scratch(names[0])
    jumps = {}
    cg, err = run_callgrind_instr(binary, prog.stdin, os.path.join(s, 'callgrind.out'), jumps)
    if err:
        return [(n, [err]) for n in names]
    counts = exe_instr_counts(cg, binary, unknown=link == 'nopie')
    nst, nout, _, _ = run_proc([binary], prog.stdin)
    skip = ('_init', '_fini') if link != 'nopie' else ()
    return [(name, block_problems(ctx, prog, binary, counts, (nst, nout), collector, kind, name, skip))
            for name, collector, kind in zip(names, (DUMP_BLOCKS, DUMP_BLOCKS_COVER), ('count', 'cover'))] + \
        [(names[2], jump_problems(ctx, prog, binary, exe_object(jumps, binary), names[2]))]


def jump_problems(ctx, prog, binary, jumps, name):
    """test_blocks' jumps/: the taken edges of a run with arcs against
    callgrind's conditional jumps, JUMPS {address: (taken, executed)}."""
    dump, _, _, _, repro, err = lp_dump(ctx, DUMP_ARCS, binary, prog.stdin, os.path.join(ctx.scratch(name), 'out'))
    if err:
        return [err + repro]
    probs, compared = [], 0
    for f in exe_functions(dump, binary):
        if f.get('flow_error') or f.get('state') not in ('relocated', 'trapped'):
            continue
        for e in f.get('edges') or []:
            if e['kind'] != 'taken' or 'count' not in e or e['branch'] not in jumps:
                continue
            compared += 1
            if e['count'] != jumps[e['branch']][0]:
                probs.append('%s: branch at 0x%x taken %d times, callgrind %d of %d' %
                             (f['name'], e['branch'], e['count'], jumps[e['branch']][0], jumps[e['branch']][1]))
    if not compared:
        probs.append('no conditional branch compared')
    if probs:
        probs[0] += repro
    return probs[:8]


def block_problems(ctx, prog, binary, counts, native, collector, kind, name, skip=()):
    """test_blocks' checks of one run of COLLECTOR (block probes KIND), the
    functions named in SKIP left out."""
    dump, lst, lout, lerr, repro, err = lp_dump(ctx, collector, binary, prog.stdin,
                                                os.path.join(ctx.scratch(name), 'out'))
    repro = repro[:-1] + '; valgrind --tool=callgrind --dump-instr=yes --skip-plt=no %s]' % binary
    if err:
        return [err + repro]
    probs = []
    if (lst, lout) != native:
        probs.append('status/stdout differ from the native run (%d vs %d)' % (lst, native[0]))
    if dump.get('probes', {}).get('blocks') != kind:
        probs.append('run.probes.blocks is %r, expected "%s"' % (dump.get('probes', {}).get('blocks'), kind))
    funcs = [f for f in exe_functions(dump, binary) if f['name'] not in skip]
    probs += block_counts_problems(funcs, 'lazyprobe')
    faults = CALLGRIND_FAULTS.get(prog.name, {})
    compared = nonzero = 0
    for f in funcs:
        blocks = f.get('blocks')
        if not blocks or f.get('state') not in ('relocated', 'trapped'):
            continue        # not relocated: no copy, no block probes
        for i, b in enumerate(blocks):
            if 'count' not in b:
                continue
            want = counts.get(b['address'], 0)
            if i == 0 and f['name'] in faults:
                want += faults[f['name']]
            if kind == 'cover':
                want = min(want, 1)
            compared += 1
            nonzero += b['count'] > 0
            if b['count'] != want:
                probs.append('%s block %d at 0x%x: count %d, callgrind %d' %
                             (f['name'], i + 1, b['address'], b['count'], want))
        # code that ran inside the function but in none of its blocks
        lo, hi = f['address'], f['address'] + (f.get('size') or 0)
        covered = [(b['address'], b['address'] + b['size']) for b in blocks]
        outside = sorted(a for a, n in counts.items() if lo <= a < hi and n > 0 and
                         not any(x <= a < y for x, y in covered))
        if outside:
            probs.append('%s: callgrind executed 0x%x (%d times) in no block of its graph%s' %
                         (f['name'], outside[0], counts[outside[0]],
                          ' (and %d more instructions)' % (len(outside) - 1) if len(outside) > 1 else ''))
    expected = {n for n, c in prog.expect if isinstance(c, int) and c > 0}
    with_blocks = {f['name'] for f in funcs if f.get('blocks')}
    missing = sorted(expected - with_blocks)
    if missing:
        probs.append('functions without blocks: %s' % ', '.join(missing[:5]))
    if nonzero < len(expected):
        probs.append('only %d blocks with a count > 0 compared' % nonzero)
    if probs:
        probs[0] += repro
    return probs[:8]


def flow_problems(funcs, what):
    """Flow conservation at every block: entries (block 1) + the entries from
    outside (`side_entries`: the unwinder's into a landing pad, the second
    returns of a setjmp into the block after its call) + in-edges == block
    count == out-edges, except that a block ending in a call may have less
    out-flow than its count: a call that does not return (exit, a longjmp
    out of the callee, _start's call of __libc_start_main) leaves the block
    without an edge.  Call sites come from the calls probe.  A block ending
    in a guarded table's dispatch has its `escapes` (the indexes past the
    entries the copy kept, sent to the original) as out-flow too.  A function
    whose counts the solver could not derive (flow_error) fails."""
    probs = []
    for f in funcs:
        blocks, edges = f.get('blocks'), f.get('edges')
        if not blocks or f.get('state') not in ('relocated', 'trapped'):
            continue
        if f.get('flow_error'):
            probs.append('%s: %s: flow_error %s' % (what, f['name'], f['flow_error']))
            continue
        if any('count' not in e for e in edges or []) or any('count' not in b for b in blocks):
            probs.append('%s: %s: edges or blocks without counts' % (what, f['name']))
            continue
        inn = [0] * (len(blocks) + 1)
        out = [0] * (len(blocks) + 1)
        inn[1] = f['count']
        for i, b in enumerate(blocks, 1):
            inn[i] += b.get('side_entries', 0)
            out[i] += b.get('escapes', 0)
        for e in edges:
            out[e['from']] += e['count']
            if e['to']:
                inn[e['to']] += e['count']
        sites = {c['site'] for c in f.get('calls') or []}
        ends_in_call = [False] * (len(blocks) + 1)
        for e in edges:
            if e['kind'] == 'fall' and e['branch'] in sites:
                ends_in_call[e['from']] = True
        for i, b in enumerate(blocks, 1):
            in_ok = inn[i] == b['count']
            if ends_in_call[i] and in_ok and b['count'] >= out[i]:
                continue
            if in_ok and b['count'] == out[i]:
                continue
            probs.append('%s: %s block %d at 0x%x: in %d, count %d, out %d' %
                         (what, f['name'], i, b['address'], inn[i], b['count'], out[i]))
            break
    return probs


def call_counts_problems(measured, derived, what):
    """The call sites' counts of MEASURED (call probes) against DERIVED (the
    counts of the blocks the calls end, from arcs or block counts)."""
    probs = []
    by_addr = {f['address']: f for f in derived}
    for f in measured:
        if f.get('state') not in ('relocated', 'trapped') or not f.get('calls') or f.get('flow_error'):
            continue
        g = by_addr.get(f['address'])
        want = [(c['site'], c.get('count')) for c in f['calls']]
        got = [(c['site'], c.get('count')) for c in (g or {}).get('calls') or []]
        if want != got:
            d = [(a, x, y) for (a, x), (_, y) in zip(want, got) if x != y][:1] or [(0, len(want), len(got))]
            probs.append('%s: call at 0x%x counted %s, %s gives %s' % ((f['name'], d[0][0], d[0][1], what, d[0][2])))
    return probs


def test_arcs(ctx, prog_name, opt, link='nopie'):
    """arcs/PROG/Ox-nopie-sym: with probes arcs=true, flow conservation at every
    block of every relocated function, and the block counts derived from the
    arcs equal the blocks' own counts (blocks="count") of a second run.  The
    call sites' counts of the first run (call probes) equal those a run
    without call probes gives from its arcs, and those the second run gives
    from its block counts.  With LINK 'pie': the same on the PIE build."""
    name = 'arcs/%s/%s-%s-sym' % (prog_name, opt, link)
    prog = ctx.progs[prog_name]
    binary, err = probe_binary(ctx, prog_name, opt, link)
    if err:
        return [(name, [err])]
    s = ctx.scratch(name)
    arcs, st1, out1, _, repro, err = lp_dump(ctx, DUMP_ARCS, binary, prog.stdin,
                                             os.path.join(s, 'arcs'))
    if err:
        return [(name, [err + repro])]
    cnt, st2, out2, _, repro2, err = lp_dump(ctx, DUMP_BLOCKS, binary, prog.stdin,
                                             os.path.join(s, 'count'))
    if err:
        return [(name, [err + repro2])]
    probs = []
    if (st1, out1) != (st2, out2):
        probs.append('the two runs differ in status/stdout')
    if arcs.get('probes', {}).get('arcs') is not True:
        probs.append('run.probes.arcs is not true')
    fa, fc = exe_functions(arcs, binary), exe_functions(cnt, binary)
    probs += block_counts_problems(fa, 'arcs')
    probs += flow_problems(fa, 'arcs')
    if not any(e.get('count', 0) > 0 for f in fa for e in f.get('edges') or []):
        probs.append('no edge with a count > 0')
    by_addr = {f['address']: f for f in fc}
    for f in fa:
        g = by_addr.get(f['address'])
        if not f.get('blocks') or f.get('state') not in ('relocated', 'trapped') or \
                f.get('flow_error'):
            continue
        if not g or not g.get('blocks'):
            probs.append('%s: blocks in the arcs run only' % f['name'])
            continue
        ab = [(b['address'], b.get('count')) for b in f['blocks']]
        cb = [(b['address'], b.get('count')) for b in g['blocks']]
        if [a for a, _ in ab] != [a for a, _ in cb]:
            probs.append('%s: the two runs have different blocks' % f['name'])
        elif ab != cb:
            d = [(a, x, y) for (a, x), (_, y) in zip(ab, cb) if x != y][0]
            probs.append('%s block at 0x%x: %s from arcs, %s counted' % ((f['name'],) + d))
    only, st3, out3, _, repro3, err = lp_dump(ctx, DUMP_ARCS_ONLY, binary, prog.stdin,
                                              os.path.join(s, 'arcs-only'))
    if err:
        probs.append(err + repro3)
    else:
        if (st3, out3) != (st1, out1):
            probs.append('the arcs-only run differs in status/stdout')
        probs += call_counts_problems(fa, exe_functions(only, binary), 'solved from its arcs')
        probs += call_counts_problems(fa, fc, 'its block counts')
    if probs:
        probs[0] += repro[:-1] + '; and -c %s, -c %s]' % (DUMP_BLOCKS, DUMP_ARCS_ONLY)
    return [(name, probs[:8])]


def source_labels(path):
    """{label: line} for the "@LABEL" comments of a corpus source."""
    labels = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            for m in re.finditer(r'/\*\s*@(\S+)\s*\*/', line):
                labels[m.group(1)] = n
    return labels


def row_line(rows, addr):
    """The line of the last row at or below ADDR (rows sorted by address)."""
    best = None
    for r in rows:
        if r['address'] <= addr:
            best = r
        else:
            break
    return best['line'] if best else None


def test_arcs_known(ctx, opt):
    """arcs/branches/Ox-nopie-g: edge counts of conditional branches and of a
    jump table equal the counts known by construction (tests/corpus/branches.c,
    "expect-branch" and "expect-case")."""
    name = 'arcs/branches/%s-nopie-g' % opt
    prog = ctx.progs['branches']
    binary, err = build_extra(ctx, 'branches', '%s-nopie-g' % opt,
                              ['-%s' % opt, '-g', '-fno-pie', '-no-pie'])
    if err:
        return [(name, [err])]
    s = ctx.scratch(name)
    dump, st, out, lerr, repro, err = lp_dump(ctx, DUMP_ARCS, binary, None, os.path.join(s, 'out'))
    if err:
        return [(name, [err + repro])]
    labels = source_labels(prog.path)
    funcs = exe_functions(dump, binary)
    probs = flow_problems(funcs, 'arcs')
    # every branch point (a block with a taken and a fall edge) by the line
    # of its branch instruction; every table edge by the line of its target
    points = {}         # line -> [sorted (count, count)]
    cases = {}          # line -> sum of table-edge counts
    for f in funcs:
        rows = sorted(f.get('lines') or [], key=lambda r: r['address'])
        per_block = {}
        for e in f.get('edges') or []:
            if e['kind'] in ('taken', 'fall'):
                per_block.setdefault(e['from'], []).append(e)
            elif e['kind'] == 'table' and e.get('to'):
                tgt = f['blocks'][e['to'] - 1]['address']
                ln = row_line(rows, tgt)
                cases[ln] = cases.get(ln, 0) + e.get('count', 0)
        for es in per_block.values():
            kinds = sorted(e['kind'] for e in es)
            if kinds == ['fall', 'taken']:
                ln = row_line(rows, es[0]['branch'])
                points.setdefault(ln, []).append(tuple(sorted(e.get('count', -1) for e in es)))
    for label, pairs in prog.expect_branch:
        ln = labels.get(label)
        if ln is None:
            probs.append('corpus: no @%s label' % label)
            continue
        want = sorted(tuple(sorted(p)) for p in pairs)
        got = sorted(points.get(ln, []))
        if got != want:
            probs.append('branch @%s (line %d): taken/fall counts %s, expected %s' %
                         (label, ln, got, want))
    for label, cnt in prog.expect_case:
        ln = labels.get(label)
        if ln is None:
            probs.append('corpus: no @%s label' % label)
            continue
        if cases.get(ln) != cnt:
            probs.append('case @%s (line %d): jump-table edges count %s, expected %d' %
                         (label, ln, cases.get(ln), cnt))
    if probs:
        probs[0] += repro
    return [(name, probs[:8])]


# Programs whose line coverage is compared with gcov's (gcov/), and at which
# levels.  At -O2 only lines that have code of their own in the plain build
# can be compared (rule 3 below), which is what optimisation changes.
GCOV_PROGRAMS = [('fib', 'O0'), ('branches', 'O0'), ('qsort_cb', 'O0'), ('longjmp', 'O0'),
                 ('fib', 'O2'), ('branches', 'O2'), ('cgoto', 'O2')]


def dwarf_code_lines(binary, src_base):
    """Lines of SRC_BASE that own at least one instruction in BINARY's line
    table (dwarf_rows: a row followed by a row at a higher address; a row
    followed by another at the same address, a location view, owns none)."""
    return {ln for ln, _, _ in dwarf_rows(binary, src_base)}


def read_lcov(path, src):
    """(DA {line: count}, FNDA {name: count}) of SRC's record in a tracefile."""
    da, fnda, cur = {}, {}, None
    with open(path) as f:
        for line in f:
            line = line.rstrip('\n')
            if line.startswith('SF:'):
                cur = os.path.realpath(line[3:])
            elif cur == os.path.realpath(src):
                if line.startswith('DA:'):
                    ln, cnt = line[3:].split(',')[:2]
                    da[int(ln)] = da.get(int(ln), 0) + int(cnt)
                elif line.startswith('FNDA:'):
                    cnt, fn = line[5:].split(',', 1)
                    fnda[fn] = int(cnt)
    return da, fnda


def test_gcov(ctx, prog_name, opt):
    """gcov/PROG/Ox: the lines lazyprobe's coverage collector marks as run are
    the ones gcov marks as run, for the same source built twice (plain and
    --coverage, both -OX -g).  Rules for lines only one of them reports
    (tests/README.md):
      1. gcov gives a function's entry to the line of its name (its
         start_line); DWARF gives the prologue to the line of "{" (a lone
         one, or the one that ends a signature of several lines).  Those
         lines are compared through the functions instead: a function ran
         for gcov iff its FNDA count > 0 in coverage.info, and such a line
         is hit iff its function ran for gcov.
      2. A line that is a lone "}" is not compared: the epilogue's row is
         there in DWARF; gcov gives that code to the last statement.
      3. A line gcov reports that owns no instruction in the plain build's
         line table (optimised away or merged into another line: -O2; a row
         followed by another at the same address) cannot be seen by a tool
         that counts instructions.
      4. C++: a function gcov names (a C2 constructor) may be in
         coverage.info under an alias at its address (C1); a line
         lazyprobe alone reports that is the FN line of functions gcov does
         not list, or has code in one (what the compiler made: a class's
         implicit destructors at the line of the class, the static
         initializers of globals), is not compared.
    Every other line must be reported by both, hit by both or by neither."""
    name = 'gcov/%s/%s' % (prog_name, opt)
    if not shutil.which('gcov'):
        return [(name, ['gcov not installed'])]
    prog = ctx.progs[prog_name]
    flags = ['-%s' % opt, '-g']
    plain, err = build_extra(ctx, prog_name, '%s-g' % opt, flags)
    if err:
        return [(name, [err])]
    covbin, err = build_extra(ctx, prog_name, '%s-gcov' % opt, flags + ['--coverage'],
                              separate_compile=True)
    if err:
        return [(name, [err])]
    return gcov_compare(ctx, name, prog.path, prog.stdin, plain, covbin)


def gcov_compare(ctx, name, src_path, stdin, plain, covbin):
    """test_gcov's comparison: PLAIN under `-c coverage` against COVBIN (the
    same source built with --coverage, its .gcno at COVBIN.gcno, its object
    COVBIN.o) run natively, for the lines of SRC_PATH; STDIN: a file fed to
    both, or None."""
    prog = collections.namedtuple('prog', 'path stdin')(src_path, stdin)
    s = ctx.scratch(name)
    outdir = os.path.join(s, 'out')
    cmd = [ctx.lp, 'run', '-c', 'coverage', '-o', outdir, '--', plain]
    st, out, lerr, to = run_proc(cmd, prog.stdin, timeout=RUN_TIMEOUT)
    repro = '  [repro: %s; gcov of %s]' % (' '.join(cmd), covbin)
    info = os.path.join(outdir, 'coverage.info')
    if to or not os.path.exists(info):
        return [(name, ['no coverage.info: status %d %s' % (st, short(lerr)) + repro])]
    # the --coverage build, natively; its .gcda goes under GCOV_PREFIX
    gdir = os.path.join(s, 'gcov')
    os.makedirs(gdir)
    env = dict(os.environ, GCOV_PREFIX=os.path.join(gdir, 'prefix'))
    fin = open(prog.stdin, 'rb') if prog.stdin else subprocess.DEVNULL
    try:
        subprocess.run([covbin], stdin=fin, env=env, capture_output=True, timeout=NATIVE_TIMEOUT)
    finally:
        if prog.stdin:
            fin.close()
    gcda = [os.path.join(d, f) for d, _, fs in os.walk(os.path.join(gdir, 'prefix'))
            for f in fs if f.endswith('.gcda')]
    if len(gcda) != 1:
        return [(name, ['expected one .gcda under GCOV_PREFIX, found %d' % len(gcda)])]
    base = os.path.basename(covbin)
    shutil.copy(gcda[0], os.path.join(gdir, base + '.gcda'))
    shutil.copy(covbin + '.gcno', os.path.join(gdir, base + '.gcno'))
    r = subprocess.run(['gcov', '--json-format', '--stdout', '-o', gdir, base + '.o'],
                       cwd=gdir, capture_output=True, text=True)
    try:
        gj = json.loads(r.stdout)
    except ValueError:
        return [(name, ['gcov --json-format: %s' % short(r.stderr)])]
    glines, gfuncs = {}, []
    for f in gj.get('files', []):
        if os.path.basename(f['file']) == os.path.basename(prog.path):
            for l in f['lines']:
                glines[l['line_number']] = glines.get(l['line_number'], 0) + l['count']
            gfuncs += f.get('functions', [])
    if not glines:
        return [(name, ['gcov reported no line of %s' % prog.path])]
    probs, _ = gcov_problems(info, prog.path, glines, gfuncs, plain)
    if probs:
        probs[0] += repro
    return [(name, probs[:8])]


def dwarf_rows(binary, src_base):
    """(line, address, end) of each row of SRC_BASE in BINARY's line table
    that owns instructions (objdump --dwarf=decodedline; end: the next row's
    address)."""
    r = subprocess.run(['objdump', '--dwarf=decodedline', binary], capture_output=True, text=True)
    rows, out = [], []
    for line in r.stdout.splitlines():
        p = line.split()
        if len(p) >= 3 and re.fullmatch(r'0x[0-9a-f]+', p[2]):
            rows.append((int(p[1]) if p[0] == src_base and p[1].isdigit() else None, int(p[2], 16)))
        elif not line.strip() or line.startswith('File name'):
            rows.append((None, None))       # sequence / table boundary
    for (ln, a), (_, b) in zip(rows, rows[1:] + [(None, None)]):
        if ln is not None and b is not None and b > a:
            out.append((ln, a, b))
    return out


def gcov_problems(info, src_path, glines, gfuncs, plain):
    """The lines of SRC_PATH where coverage.info INFO (of PLAIN under -c
    coverage) and gcov (GLINES {line: count}, GFUNCS: its functions, of the
    --coverage build) disagree, by test_gcov's rules; returns (problems,
    lines compared)."""
    da, fnda = read_lcov(info, src_path)
    with open(src_path) as f:
        text = f.read().split('\n')
    owned = dwarf_code_lines(plain, os.path.basename(src_path))
    starts = {g['start_line']: g for g in gfuncs}
    aliases, sized = {}, {}                                     # rule 4
    nm = subprocess.run(['nm', '-S', plain], capture_output=True, text=True).stdout.split('\n')
    for f in (l.split() for l in nm):
        if len(f) == 4:
            aliases.setdefault(f[0], []).append(f[3])
            sized.setdefault(f[3], []).append((int(f[0], 16), int(f[0], 16) + int(f[1], 16)))  # local: several
    alias_of = {n: ns for ns in aliases.values() for n in ns}
    gnames = {a for g in gfuncs for a in alias_of.get(g['name'], [g['name']])}
    fn_lines, made = {}, set()
    with open(info) as f:
        cur = None
        for line in f:
            if line.startswith('SF:'):
                cur = os.path.realpath(line[3:].strip())
            elif cur == os.path.realpath(src_path) and line.startswith('FN:'):
                ln, fn = line[3:].strip().split(',', 1)
                fn_lines.setdefault(int(ln), set()).add(fn)
                if fn not in gnames:
                    made.update(sized.get(fn, []))
    unlisted = {ln for ln, fns in fn_lines.items() if not fns & gnames}
    unlisted |= {ln for ln, a, _ in dwarf_rows(plain, os.path.basename(src_path))
                 if any(lo <= a < hi for lo, hi in made)}

    def func_of(ln):
        for g in gfuncs:
            if g['start_line'] <= ln <= g['end_line']:
                return g
        return None

    def opens_body(ln, g):
        """LN ends the signature of G, which began at its start_line."""
        if not g or not text[ln - 1].rstrip().endswith('{'):
            return False
        return not any('{' in t or ';' in t for t in text[g['start_line'] - 1:ln - 1])
    probs = []
    for g in gfuncs:
        lp = fnda.get(g['name'])
        for a in alias_of.get(g['name'], []):
            lp = fnda.get(a) if lp is None else lp
        if lp is None:
            probs.append('function %s (line %d) not in coverage.info' % (g['name'], g['start_line']))
        elif (lp > 0) != (g['execution_count'] > 0):
            probs.append('function %s: FNDA %d, gcov %d' % (g['name'], lp, g['execution_count']))
    compared = 0
    for ln in sorted(set(glines) | set(da)):
        src = text[ln - 1].strip() if 0 < ln <= len(text) else ''
        g, l = glines.get(ln), da.get(ln)
        if src == '}':
            continue                                            # rule 2
        if l is not None and g is None and (src == '{' or opens_body(ln, func_of(ln))):  # rule 1
            fn = func_of(ln)
            if fn is None:
                probs.append('line %d "{" outside every gcov function' % ln)
            elif (l > 0) != (fn['execution_count'] > 0):
                probs.append('line %d "{" of %s: lazyprobe %d, gcov function count %d' %
                             (ln, fn['name'], l, fn['execution_count']))
            continue
        if g is not None and l is None and (ln in starts or ln not in owned):
            continue                                            # rules 1 and 3
        if g is None and ln in unlisted:
            continue                                            # rule 4
        if g is None or l is None:
            probs.append('line %d only in %s (%s): %r' % (ln, 'gcov' if l is None else 'lazyprobe',
                                                          g if l is None else l, src[:50]))
            continue
        compared += 1
        if (g > 0) != (l > 0):
            probs.append('line %d: lazyprobe %d, gcov %d: %r' % (ln, l, g, src[:50]))
    if compared < 5:
        probs.append('only %d lines compared' % compared)
    return probs, compared


def bad_lines(text, pattern):
    return [l for l in text.splitlines() if re.search(pattern, l, re.I)]


def test_out_genhtml(ctx, prog_name, opt):
    """outputs/genhtml/PROG/Ox: coverage.info of a real run (-g program) is read by
    genhtml without a warning and by lcov --summary."""
    name = 'outputs/genhtml/%s/%s' % (prog_name, opt)
    for tool in ('genhtml', 'lcov'):
        if not shutil.which(tool):
            return [(name, ['%s not installed (apt-get install lcov)' % tool])]
    binary, err = build_extra(ctx, prog_name, '%s-g' % opt, ['-%s' % opt, '-g'])
    if err:
        return [(name, [err])]
    s = ctx.scratch(name)
    outdir = os.path.join(s, 'out')
    cmd = [ctx.lp, 'run', '-c', 'coverage', '-o', outdir, '--', binary]
    st, out, lerr, to = run_proc(cmd, ctx.progs[prog_name].stdin, timeout=RUN_TIMEOUT)
    info = os.path.join(outdir, 'coverage.info')
    repro = '  [repro: %s; genhtml --branch-coverage -o DIR %s]' % (' '.join(cmd), info)
    if not os.path.exists(info) or os.path.getsize(info) == 0:
        return [(name, ['coverage.info missing or empty' + repro])]
    probs = []
    r = subprocess.run(['genhtml', '--branch-coverage', '-o', os.path.join(s, 'html'), info],
                       capture_output=True, text=True, timeout=120)
    warn = bad_lines(r.stdout + r.stderr, r'warning|error')
    if r.returncode != 0 or warn:
        probs.append('genhtml: status %d: %s' % (r.returncode, short('\n'.join(warn) or r.stderr)))
    r = subprocess.run(['lcov', '--summary', '--rc', 'lcov_branch_coverage=1', info],
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 0 or bad_lines(r.stdout + r.stderr, r'warning|error'):
        probs.append('lcov --summary: status %d: %s' % (r.returncode, short(r.stdout + r.stderr)))
    elif not re.search(r'lines\.*:\s*[\d.]+%', r.stdout + r.stderr):
        probs.append('lcov --summary printed no line rate: %s' % short(r.stdout + r.stderr))
    if probs:
        probs[0] += repro
    return [(name, probs)]


CHECK_SOURCE = os.path.join(TEST_COLLECTORS, 'check_source.lua')
# longjmp: no branch known there; inlined: one line in two functions, its counts added up;
# jumptable: lines and branch ways that never ran (the others run all of theirs)
SOURCE_COUNT_PROGRAMS = [(pn, o) for pn, o in GCOV_PROGRAMS if pn != 'longjmp'] + [('inlined', 'O2'), ('jumptable', 'O2')]


def oracle_problems(lp, argv, stdin, env, workdir, timeout):
    """The oracles of the suite on one run of a program nobody here wrote
    (ARGV, its executable argv[0]; STDIN a path or None; ENV added to the
    environment), in WORKDIR (emptied): every block's count under
    blocks="count" equals valgrind callgrind's count of its first instruction
    and no instruction ran outside the blocks; blocks="cover" gives 1 exactly
    where that count is not 0; under arcs flow is conserved at every block
    and every conditional branch callgrind reports (--collect-jumps=yes: those
    that end one of its blocks) is taken as often as it says; and
    tests/collectors/check_source.lua (the report's C helpers against their
    plain-Lua statement) agrees on the cover and the arcs runs.  For PIEs
    callgrind gives the executable's addresses at link time, but valgrind's
    object "???" (.init and .fini among it) at run time: _init and _fini are
    left out and "???" is not read.  Returns a dict: problems (strings),
    blocks and branches compared, functions check_source checked, and
    callgrind's instruction counts of the executable (counts, by address)."""
    shutil.rmtree(workdir, ignore_errors=True)
    os.makedirs(workdir)
    res = {'problems': [], 'blocks': 0, 'branches': 0, 'checked': 0}
    probs = res['problems']
    cg_out = os.path.join(workdir, 'callgrind.out')
    sink = os.path.join(workdir, 'stdout')
    st, _, err, _ = run_proc(['valgrind', '--tool=callgrind', '--dump-instr=yes', '--skip-plt=no', '--collect-jumps=yes',
                              '--callgrind-out-file=' + cg_out] + argv, stdin, timeout * 10, cwd=workdir, env=env,
                             stdout_path=sink)
    if not os.path.exists(cg_out):
        probs.append('callgrind failed (status %s): %s' % (st, short(err)))
        return res
    jumps = {}
    counts = res['counts'] = exe_instr_counts(parse_callgrind_instr(cg_out, jumps), argv[0], unknown=False)
    jumps = exe_object(jumps, argv[0])
    runs = {}
    for kind, coll in (('count', DUMP_BLOCKS), ('cover', DUMP_BLOCKS_COVER), ('arcs', DUMP_ARCS)):
        out = os.path.join(workdir, kind)
        st, _, err, _ = run_proc([lp, 'run', '-c', coll, '-o', out, '--'] + argv, stdin, timeout, cwd=workdir, env=env,
                                 stdout_path=sink)
        try:
            runs[kind] = [f for f in exe_functions(load_dump(out), argv[0]) if f['name'] not in ('_init', '_fini')]
        except (OSError, ValueError) as e:
            probs.append('-c %s: no dump (status %s): %s' % (kind, st, e))
    for kind, funcs in runs.items():
        for f in funcs:
            bl = f.get('blocks')
            if not bl or f.get('state') not in ('relocated', 'trapped'):
                continue
            for i, b in enumerate(bl, 1):
                if 'count' not in b:
                    continue
                want = counts.get(b['address'], 0)
                want = min(want, 1) if kind == 'cover' else want
                res['blocks'] += kind == 'count'
                if b['count'] != want:
                    probs.append('-c %s: %s block %d at 0x%x: %d, callgrind %d' % (
                        kind, f['name'], i, b['address'], b['count'], want))
            lo, hi = f['address'], f['address'] + (f.get('size') or 0)
            ranges = [(b['address'], b['address'] + b['size']) for b in bl]
            outside = [a for a, n in counts.items() if lo <= a < hi and n and not any(x <= a < y for x, y in ranges)]
            if outside and kind == 'count':
                probs.append('%s: callgrind ran 0x%x in no block of its graph' % (f['name'], min(outside)))
    if 'arcs' in runs:
        probs += flow_problems(runs['arcs'], 'arcs')
        for f in runs['arcs']:
            for e in f.get('edges') or [] if not f.get('flow_error') else []:
                if e['kind'] == 'taken' and 'count' in e and e['branch'] in jumps:
                    res['branches'] += 1
                    if e['count'] != jumps[e['branch']][0]:
                        probs.append('%s: branch at 0x%x taken %d times, callgrind %d' % (
                            f['name'], e['branch'], e['count'], jumps[e['branch']][0]))
    for kind in ('cover', 'arcs'):
        st, out, err, _ = run_proc([lp, 'report', '-c', CHECK_SOURCE, os.path.join(workdir, kind)],
                                   timeout=timeout * 4)
        m = re.search(rb'check_source: (\d+) functions', out)
        if st != 0 or not m:
            probs.append('check_source on -c %s: %s' % (kind, short(err or out)))
        else:
            res['checked'] += int(m.group(1))
    return res


def test_out_source_counts(ctx, prog_name, opt):
    """outputs/source_counts/PROG/Ox: lazyprobe.line_counts and
    lazyprobe.branch_counts (lua/lp_source.c, what lcov.lua writes DA and
    BRDA lines from) equal their rules stated again in plain Lua
    (tests/collectors/source_ref.lua) for every function of a real run, with
    0/1 block counts (-c coverage) and with counts solved from the arcs
    (-c coverage,arcs); lazyprobe.format_rows (lua/lp_format.c) writes
    their columns as string.format does row by row; lazyprobe.graph_columns
    (lua/lp_columns.c) holds what f.blocks, f.edges and f.calls hold;
    lazyprobe.source_files (lua/lp_source.c, what lcov.lua gathers files
    with) holds what the reference's does, and writes it, given a format, as
    the reference's format_rows does."""
    name = 'outputs/source_counts/%s/%s' % (prog_name, opt)
    binary, err = build_extra(ctx, prog_name, '%s-g' % opt, ['-%s' % opt, '-g'])
    if err:
        return [(name, [err])]
    s = ctx.scratch(name)
    probs, ways = [], 0
    for cols in ('coverage', 'coverage,arcs'):
        outdir = os.path.join(s, cols.replace(',', '+'))
        cmd = [ctx.lp, 'run', '-c', cols, '-o', outdir, '--', binary]
        st, out, lerr, to = run_proc(cmd, ctx.progs[prog_name].stdin, timeout=RUN_TIMEOUT)
        rcmd = [ctx.lp, 'report', '-c', CHECK_SOURCE, outdir]
        r = subprocess.run(rcmd, capture_output=True, text=True, timeout=120)
        m = re.search(r'check_source: (\d+) functions, (\d+) lines, (\d+) branch ways agree, '
                      r'(\d+) rows formatted alike, (\d+) graph elements alike, (\d+) source file rows alike',
                      r.stdout)
        repro = '  [repro: %s; %s]' % (' '.join(cmd), ' '.join(rcmd))
        if r.returncode != 0 or not m:
            probs.append('-c %s: status %d: %s' % (cols, r.returncode, short(r.stdout + r.stderr)) + repro)
        elif int(m.group(2)) == 0 or int(m.group(4)) == 0 or int(m.group(5)) == 0 or int(m.group(6)) == 0:
            probs.append('-c %s: no line compared: %s' % (cols, m.group(0)) + repro)
        else:
            ways += int(m.group(3))
    if not probs and ways == 0:
        probs.append('no branch way compared in either run')
    return [(name, probs)]


def test_out_report_elsewhere(ctx, prog_name):
    """outputs/report_elsewhere/PROG: a program started by a relative path
    (`./PROG` in its own directory) is recorded by its absolute path, so that
    `lazyprobe report -c coverage DIR` made from another directory still finds
    its line table: the same coverage.info as the run wrote, with DA lines."""
    name = 'outputs/report_elsewhere/%s' % prog_name
    binary, err = build_extra(ctx, prog_name, 'O2-g', ['-O2', '-g'])
    if err:
        return [(name, [err])]
    s = ctx.scratch(name)
    outdir = os.path.join(s, 'out')
    cmd = [ctx.lp, 'run', '-c', 'coverage', '-o', outdir, '--', './' + os.path.basename(binary)]
    r = subprocess.run(cmd, cwd=os.path.dirname(binary), stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=RUN_TIMEOUT)
    info = os.path.join(outdir, 'coverage.info')
    repro = '  [repro: cd %s && %s]' % (os.path.dirname(binary), ' '.join(cmd))
    if r.returncode != 0 or not os.path.exists(info):
        return [(name, ['run: status %d, no coverage.info: %s' % (r.returncode, short(r.stderr)) + repro])]
    with open(info) as f:
        ran = f.read()
    os.rename(info, info + '.run')
    elsewhere = os.path.join(s, 'elsewhere')
    os.makedirs(elsewhere, exist_ok=True)
    r = subprocess.run([ctx.lp, 'report', '-c', 'coverage', outdir], cwd=elsewhere,
                       capture_output=True, text=True, timeout=120)
    probs = []
    if 'DA:' not in ran:
        probs.append('the run wrote no DA line')
    if r.returncode != 0 or not os.path.exists(info):
        probs.append('report: status %d: %s' % (r.returncode, short(r.stderr)))
    else:
        with open(info) as f:
            again = f.read()
        if again != ran:
            probs.append('report from %s: coverage.info differs from the run\'s (%d against %d DA lines)'
                         % (elsewhere, again.count('DA:'), ran.count('DA:')))
    if probs:
        probs[0] += repro
    return [(name, probs)]


def test_out_partial_note(ctx, opt):
    """outputs/partial_note/Ox: the coverage collector names the functions measured
    only up to an indirect jump (tests/corpus/tailptr.c): writable_dispatch, whose
    computed-goto table is in writable memory, and not via_pointer, whose `jmp
    *%rax` through a struct's function pointer comes after its frame is gone (a
    tail call: nothing of it runs unmeasured), nor via_offset, the same through a
    pointer loaded from a byte offset (`mov (%rbp,%rbx,1),%rax`, no table), nor
    via_default, the same through a pointer or its default (`cmove %rdx,%rax`),
    nor via_choice, to one of two functions (`lea f(%rip)`, `cmovne`), nor via_table, the same through a table of function pointers, nor the C
    runtime's deregister_tm_clones and register_tm_clones (`jmp *%rax` with
    no call frame information, in a function that never moves rsp)."""
    name = 'outputs/partial_note/%s' % opt
    binary, err = build_extra(ctx, 'tailptr', '%s-g' % opt, ['-%s' % opt, '-g'])
    if err:
        return [(name, [err])]
    s = ctx.scratch(name)
    cmd = [ctx.lp, 'run', '-c', 'coverage', '-o', os.path.join(s, 'out'), '--', binary]
    st, out, lerr, to = run_proc(cmd, timeout=RUN_TIMEOUT)
    nst, nout, _, _ = run_proc([binary])
    note = [l for l in lerr.decode(errors='replace').splitlines() if 'measured only up to' in l]
    probs = []
    if (st, out) != (nst, nout):
        probs.append('status/stdout differ from the native run (%d vs %d)' % (st, nst))
    named = set(note[0].rsplit(': ', 1)[1].split(', ')) if note else set()
    if 'writable_dispatch' not in named:
        probs.append('writable_dispatch not named as measured in part: %r' % (note or lerr[-300:]))
    for fn in ('via_pointer', 'via_offset', 'via_default', 'via_choice', 'via_table', 'deregister_tm_clones',
               'register_tm_clones'):
        if fn in named:
            probs.append('%s (a tail call through a pointer) named as measured in part: %r' % (fn, note))
    if probs:
        probs[0] += '  [repro: %s]' % ' '.join(cmd)
    return [(name, probs)]


def annotate_edges(path, exe, threshold_args=('--threshold=100',)):
    """{(caller, callee): calls} of callgrind_annotate --tree=calling, for
    callers and callees in EXE.  Function lines: "COST  *  file:fn [obj]";
    their callees follow as "COST  >   file:fn (Nx) [obj]"; COST and N may
    have thousands separators, COST is "." when zero."""
    r = subprocess.run(['callgrind_annotate', '--tree=calling'] + list(threshold_args) + [path],
                       capture_output=True, text=True, timeout=120)
    edges = {}
    caller = None
    exe_real = os.path.realpath(exe)
    for line in r.stdout.splitlines():
        m = re.match(r'^\s*(?:[\d,]+|\.)\s+(?:\([^)]*\)\s+)?([*>])\s+(\S+?)'
                     r'(?: \(([\d,]+)x\))?(?: \[(.*)\])?\s*$', line)
        if not m:
            continue
        kind, where, n, obj = m.groups()
        fn = where.rsplit(':', 1)[-1]
        inexe = obj is not None and os.path.realpath(obj) == exe_real
        if kind == '*':
            caller = fn if inexe else None
        elif caller and inexe and n:
            edges[(caller, fn)] = edges.get((caller, fn), 0) + int(n.replace(',', ''))
    return r.returncode, edges, r.stderr


def test_out_callgrind(ctx, prog_name, opt):
    """outputs/callgrind_annotate/PROG/Ox: callgrind.out.PID of `-c calls` is read by
    callgrind_annotate, and its caller->callee call counts between the
    program's own functions (those the corpus counts) equal valgrind
    callgrind's.  -O0: every call between them is a direct call instruction
    (no tail calls, no inlining), which is what call-site probes count;
    --separate-recs=1 keeps callgrind from splitting fib into fib'2..."""
    name = 'outputs/callgrind_annotate/%s/%s' % (prog_name, opt)
    for tool in ('valgrind', 'callgrind_annotate'):
        if not shutil.which(tool):
            return [(name, ['%s not installed' % tool])]
    prog = ctx.progs[prog_name]
    binary, err = build_extra(ctx, prog_name, '%s-nopie-g' % opt, ['-%s' % opt, '-g', '-fno-pie', '-no-pie'])
    if err:
        return [(name, [err])]
    s = ctx.scratch(name)
    outdir = os.path.join(s, 'out')
    cmd = [ctx.lp, 'run', '-c', 'calls', '-o', outdir, '--', binary]
    st, out, lerr, to = run_proc(cmd, prog.stdin, timeout=RUN_TIMEOUT)
    files = sorted(f for f in os.listdir(outdir) if f.startswith('callgrind.out.')) \
        if os.path.isdir(outdir) else []
    repro = '  [repro: %s; callgrind_annotate --tree=calling --threshold=100 %s/callgrind.out.*]' % (
        ' '.join(cmd), outdir)
    if len(files) != 1:
        return [(name, ['expected one callgrind.out.PID, found %s' % files + repro])]
    rc, lp_edges, aerr = annotate_edges(os.path.join(outdir, files[0]), binary)
    probs = []
    if rc != 0:
        probs.append('callgrind_annotate: status %d: %s' % (rc, short(aerr)))
    ref = os.path.join(s, 'valgrind.out')
    run_proc(['valgrind', '--tool=callgrind', '--separate-recs=1', '--callgrind-out-file=' + ref,
              binary], prog.stdin, timeout=180)
    rc2, vg_edges, aerr2 = annotate_edges(ref, binary)
    if rc2 != 0 or not vg_edges:
        return [(name, ['callgrind_annotate on valgrind\'s profile: %s' % short(aerr2)])]
    mine = {n for n, _ in prog.expect}
    want = {k: v for k, v in vg_edges.items() if k[0] in mine and k[1] in mine}
    got = {k: v for k, v in lp_edges.items() if k[0] in mine and k[1] in mine}
    for k in sorted(set(want) | set(got)):
        if want.get(k) != got.get(k):
            probs.append('%s -> %s: lazyprobe %s, valgrind %s' % (k[0], k[1], got.get(k), want.get(k)))
    if len(want) < 2:
        probs.append('only %d caller->callee edges to compare' % len(want))
    if probs:
        probs[0] += repro
    return [(name, probs[:8])]


BOLT = '/usr/bin/llvm-bolt-16'


def test_out_bolt(ctx, prog_name):
    """outputs/bolt/PROG: arcs.fdata of a real run is taken by llvm-bolt-16
    (no stale, mismatched or invalid profile) and the optimised program
    behaves as the original."""
    name = 'outputs/bolt/%s' % prog_name
    bolt = BOLT if os.path.exists(BOLT) else shutil.which('llvm-bolt-16')
    if not bolt:
        return [(name, ['llvm-bolt-16 not installed (apt-get install bolt-16)'])]
    prog = ctx.progs[prog_name]
    binary, err = build_extra(ctx, prog_name, 'O2-bolt',
                              ['-O2', '-g', '-fno-reorder-blocks-and-partition', '-fno-pie'],
                              ['-no-pie', '-Wl,--emit-relocs'])
    if err:
        return [(name, [err])]
    s = ctx.scratch(name)
    outdir = os.path.join(s, 'out')
    cmd = [ctx.lp, 'run', '-c', 'arcs', '-o', outdir, '--', binary]
    st, out, lerr, to = run_proc(cmd, prog.stdin, timeout=RUN_TIMEOUT)
    fdata = os.path.join(outdir, 'arcs.fdata')
    bolted = os.path.join(s, 'prog.bolt')
    bcmd = [bolt, binary, '-o', bolted, '-data=' + fdata, '-reorder-blocks=ext-tsp',
            '-reorder-functions=hfsort']
    repro = '  [repro: %s; %s]' % (' '.join(cmd), ' '.join(bcmd))
    if not os.path.exists(fdata):
        return [(name, ['no arcs.fdata: %s' % short(lerr) + repro])]
    r = subprocess.run(bcmd, capture_output=True, text=True, timeout=180)
    probs = []
    bad = bad_lines(r.stdout + r.stderr, r'stale|mismatch|invalid')
    if r.returncode != 0:
        probs.append('llvm-bolt: status %d: %s' % (r.returncode, short(r.stderr)))
    if bad:
        probs.append('llvm-bolt: %s' % short('\n'.join(bad[:3])))
    m = re.search(r'BOLT-INFO: (\d+) out of (\d+) functions in the binary \(\S+\) have non-empty '
                  r'execution profile', r.stdout)
    if not m or int(m.group(1)) == 0:
        probs.append('llvm-bolt used no profile: %s' % short(r.stdout[-400:]))
    if not probs:
        nst, nout, nerr, _ = run_proc([binary], prog.stdin)
        bst, bout, berr, _ = run_proc([bolted], prog.stdin)
        if (nst, nout) != (bst, bout):
            probs.append('prog.bolt: status %d stdout %s, original %d %s' %
                         (bst, short(bout, 80), nst, short(nout, 80)))
    if probs:
        probs[0] += repro
    return [(name, probs)]


def lcov_same_meaning(alone, together):
    """Problems where two lcov tracefiles disagree on what ran: every DA line
    hit or not, every function hit or not, and every BRDA branch of ALONE
    taken or not in TOGETHER (which may know more branches and real counts)."""
    def parse(text):
        da, fn, br, sf = {}, {}, {}, None
        for line in text.decode(errors='replace').splitlines():
            key, _, val = line.partition(':')
            if key == 'SF':
                sf = val
            elif key == 'DA':
                ln, cnt = val.split(',')[:2]
                da[(sf, int(ln))] = int(cnt) > 0
            elif key == 'FNDA':
                cnt, nm = val.split(',', 1)
                fn[(sf, nm)] = int(cnt) > 0
            elif key == 'BRDA':
                ln, blk, brn, taken = val.split(',')
                br[(sf, int(ln), blk, brn)] = taken not in ('-', '0')
        return da, fn, br
    a, b = parse(alone), parse(together)
    probs = []
    for what, x, y in (('line', a[0], b[0]), ('function', a[1], b[1])):
        if x.keys() != y.keys():
            probs.append('coverage.info: %ss differ: %s' % (what, sorted(set(x) ^ set(y))[:3]))
        bad = [k for k in x if k in y and x[k] != y[k]]
        if bad:
            probs.append('coverage.info: %s hit differs at %s' % (what, bad[:3]))
    for k, taken in a[2].items():
        if k not in b[2]:
            probs.append('coverage.info: branch %s missing when run together' % (k,))
        elif b[2][k] != taken:
            probs.append('coverage.info: branch %s taken=%s alone, %s together' % (k, taken, b[2][k]))
    return probs[:5]


def nolines_ran(text):
    """coverage-nolines.txt with each count cut to 0/1 and the count column's
    heading dropped: what two runs must agree on whether entries were counted or
    only marked."""
    out = []
    for line in text.splitlines():
        if line.startswith(b'#'):
            if b'state' not in line:
                out.append(line)
            continue
        count, _, rest = line.strip().partition(b' ')
        out.append(b'%d %s' % (int(count) > 0, rest.strip()))
    return b'\n'.join(out)


def test_out_together(ctx, prog_name):
    """outputs/together/PROG: coverage,calls,arcs in one run write what each
    collector writes alone; shared probes may only make an output more
    precise (docs/COLLECTORS.md): coverage.info says the same about every
    function, line and branch (hit or not, taken or not) and may carry real
    counts where the coverage-only run has 0/1, and so does
    coverage-nolines.txt; arcs.fdata and calls.json are identical; the
    counters file records the union of the probes (lazyprobe report -c
    dump_blocks.lua reads run.probes), the coverage-only one entry="cover"."""
    name = 'outputs/together/%s' % prog_name
    prog = ctx.progs[prog_name]
    binary, err = build_extra(ctx, prog_name, 'O2-nopie-g', ['-O2', '-g', '-fno-pie', '-no-pie'])
    if err:
        return [(name, [err])]
    s = ctx.scratch(name)
    dirs = {}
    for tag, cols in (('all', 'coverage,calls,arcs'), ('coverage', 'coverage'),
                      ('calls', 'calls'), ('arcs', 'arcs')):
        dirs[tag] = os.path.join(s, tag)
        st, out, lerr, to = run_proc([ctx.lp, 'run', '-c', cols, '-o', dirs[tag], '--', binary],
                                     prog.stdin, timeout=RUN_TIMEOUT)
        if to or st != 0:
            return [(name, ['-c %s: status %d %s' % (cols, st, short(lerr))])]
    repro = '  [repro: %s run -c coverage,calls,arcs -o A -- %s; and each alone]' % (ctx.lp, binary)

    def read(d, fn):
        with open(os.path.join(d, fn), 'rb') as f:
            return f.read()

    def pid_of(d):
        return [f.split('.')[1] for f in counters_files(d)][0]
    probs = []
    try:
        probs += lcov_same_meaning(read(dirs['coverage'], 'coverage.info'),
                                   read(dirs['all'], 'coverage.info'))
    except OSError as e:
        probs.append(str(e))
    for tag, fn in (('coverage', 'coverage-nolines.txt'), ('arcs', 'arcs.fdata'),
                    ('calls', 'calls.json')):
        try:
            a, b = read(dirs['all'], fn), read(dirs[tag], fn)
        except OSError as e:
            probs.append(str(e))
            continue
        if fn == 'calls.json':      # the pid differs between the runs
            a = re.sub(rb'"pid": *\d+', b'"pid": 0', a)
            b = re.sub(rb'"pid": *\d+', b'"pid": 0', b)
        if fn == 'coverage-nolines.txt':    # alone it marks entries (0/1), together it counts them
            a, b = nolines_ran(a), nolines_ran(b)
        if a != b:
            al, bl = b.splitlines(), a.splitlines()
            k = next((i for i in range(min(len(al), len(bl))) if al[i] != bl[i]),
                     min(len(al), len(bl)))
            probs.append('%s differs from the %s-only run at line %d: alone %s, together %s' %
                         (fn, tag, k + 1, short(al[k] if k < len(al) else b'<EOF>', 80),
                          short(bl[k] if k < len(bl) else b'<EOF>', 80)))
    # callgrind.out: same calls; Ir is added when arcs ran (documented in
    # calls.lua: Ir only when block counts are real counts)
    try:
        ca = read(dirs['all'], 'callgrind.out.' + pid_of(dirs['all'])).decode()
        cb = read(dirs['calls'], 'callgrind.out.' + pid_of(dirs['calls'])).decode()
        calls_a = sorted(re.findall(r'^calls=.*$', ca, re.M))
        calls_b = sorted(re.findall(r'^calls=.*$', cb, re.M))
        if calls_a != calls_b:
            probs.append('callgrind.out calls= lines differ from the calls-only run')
    except (OSError, IndexError) as e:
        probs.append('callgrind.out: %s' % e)
    # the union of the probes, as recorded in the counters file
    r = subprocess.run([ctx.lp, 'report', '-c', DUMP_BLOCKS, dirs['all']], capture_output=True,
                       text=True, timeout=60)
    try:
        probes = load_dump(dirs['all']).get('probes')
    except (OSError, ValueError) as e:
        probes = 'report: %s %s' % (e, short(r.stderr))
    want = {'entry': True, 'blocks': 'cover', 'arcs': True, 'calls': True}
    if probes != want:
        probs.append('counters file records probes %s, expected %s' % (probes, want))
    # coverage alone marks entries (FNDA 0/1, as its DA): the others count them
    r = subprocess.run([ctx.lp, 'report', '-c', DUMP_BLOCKS, dirs['coverage']], capture_output=True,
                       text=True, timeout=60)
    try:
        dump = load_dump(dirs['coverage'])
    except (OSError, ValueError) as e:
        dump = {'report': '%s %s' % (e, short(r.stderr))}
    want = {'entry': 'cover', 'blocks': 'cover', 'arcs': False, 'calls': False}
    if dump.get('probes') != want:
        probs.append('-c coverage records probes %s, expected %s' % (dump.get('probes'), want))
    counts = sorted({f.get('count') for f in dump.get('functions', [])})
    if counts != [0, 1]:
        probs.append('-c coverage: function counts %s, expected 0 and 1' % counts[:6])
    if probs:
        probs[0] += repro
    return [(name, probs[:6])]


# ------------------------------------------------------------------ main ---

# Debian's own binaries, written by nobody here, under every built-in collector
# (entry, block cover, arc and call-site probes in every copy): same stdout,
# stderr and status with and without lazyprobe, and a real share of their
# functions instrumented.
DEBIAN_COMMANDS = [
    ('ls', ['ls', '-lan', '--time-style=+', '/usr/include/linux'], None),
    ('grep', ['grep', '-c', '7', '{nums}'], None),
    ('sed', ['sed', 's/1/x/g', '{nums}'], None),
    ('sort', ['sort', '-r', '{nums}'], None),
    ('gzip', ['gzip', '-c', '-n', '{nums}'], None),
    ('gunzip', ['gzip', '-dc'], '{nums_gz}'),
    ('tar', ['tar', '-cf', '-', '--sort=name', '--mtime=@0', '-C', '{here}', 'corpus'], None),
    ('find', ['find', '/usr/include/linux', '-name', '*.h'], None),
    ('diff', ['diff', '{nums}', '{nums_rev}'], None),
    ('awk', ['awk', '{s += $1} END {print s}', '{nums}'], None),
    ('md5sum', ['md5sum', '{nums}'], None),
    ('wc', ['wc', '{nums}'], None),
    ('perl', ['perl', '-e', 'my %h; $h{$_ % 97}++ for 1..200000; print join(",", map {$h{$_}} sort {$a <=> $b} keys %h), "\n"'], None),
    ('bash', ['bash', '-c', 'f() { [ $1 -le 1 ] && echo 1 || echo $(( $1 * $(f $(( $1 - 1 ))) )); }; f 15'], None),
    # subshells left by exit and by an error (bash's jump_to_top_level, a longjmp out of
    # calls of functions that fork through make_child: test_debian_flow)
    ('bash_exits', ['bash', '-c', 'f() { local a=$(echo abc); echo ${#a}; }; for i in 1 2 3; do f; done; '
                    'x=$( (exit 3) ); echo "st $?"; g() { echo in-g; exit 5; }; y=$(g); echo "g $? $y"; '
                    'h() { return 2; }; h || echo h-failed; if ! (set -e; false; echo no); then echo sub-failed; fi; '
                    'z=$(echo $(echo $(echo nested))); echo $z; '
                    '( echo ${undefined_thing?unset} ) 2>/dev/null || echo unset-caught; echo done'], None),
    ('sha256sum', ['sha256sum', '{nums}'], None),
    ('uniq', ['uniq', '-c', '{nums}'], None),
    ('xargs', ['xargs', '-n', '100', 'echo'], '{nums}'),
    ('od', ['od', '-c', '{nums_gz}'], None),
    ('bc', ['bc', '-l'], '{bc_input}'),
    ('factor', ['factor', '1234567', '99991', '600851475143', '18446744073709551557'], None),
    ('tac', ['tac', '{nums}'], None),
    ('nl', ['nl', '-ba', '{nums_rev}'], None),
    ('pr', ['pr', '-3', '-t', '{nums_rev}'], None),
    ('fmt', ['fmt', '-w', '40', '{nums_rev}'], None),
    ('cut', ['cut', '-c', '1-3', '{nums}'], None),
    ('tr', ['tr', '0-9', 'a-j'], '{nums}'),
    ('base64', ['base64', '{nums_gz}'], None),
    ('tail', ['tail', '-n', '5', '{nums}'], None),
    ('expr', ['expr', '123', '*', '456'], None),
    ('seq', ['seq', '1', '3', '20000'], None),
    # gnulib's regex, compiled in: a switch on a byte whose table only the byte bounds
    ('csplit', ['csplit', '-f', '{split}', '{nums}', '/5/', '{3}'], None),
    # Rust programs, built by LLVM (Debian's ripgrep and fd-find, one thread each: their
    # output in one order; fd sorts what it found only when the search ends within
    # --max-buffer-time, 100 ms unless told): enums' discriminants index tables nothing
    # bounds, tables of offsets are read by several dispatches, and laid out back to back.
    # No oracles: Rust's HashMap seeds itself from getrandom, its counts differ from run to run
    ('rg', ['rg', '-j1', '-n', '--sort', 'path', 'static', '{here}/corpus'], None),
    ('fdfind', ['fdfind', '-j1', '--max-buffer-time', '60000', '-e', 'c', '.', '{here}/corpus'], None),
    # Debian's interpreter, not a shim found first on PATH: non-PIE, stripped, with gcc's
    # .cold parts (hot parts jump into them past their first bytes)
    ('python3', ['/usr/bin/python3', '-c', 'import json, re, collections; '
                 'c = collections.Counter(re.findall(r"[0-9]{2}", open("{nums}").read())); '
                 'print(json.dumps(sorted(c.items())[:20]))'], None),
]


def make_debian_inputs(ctx):
    """Made once, before the tests run in parallel."""
    d = ctx.scratch('debian-inputs')
    nums = os.path.join(d, 'nums.txt')
    with open(nums, 'w') as f:
        f.write(''.join('%d\n' % i for i in range(1, 30001)))
    with open(os.path.join(d, 'nums_rev.txt'), 'w') as f:
        f.write(''.join('%d\n' % i for i in range(30000, 0, -7)))
    with open(os.path.join(d, 'nums.gz'), 'wb') as f:
        subprocess.run(['gzip', '-c', '-n', nums], stdout=f, check=True)
    with open(os.path.join(d, 'bc.in'), 'w') as f:   # arbitrary precision: loops and calls
        f.write('scale=200\n4*a(1)\ne(1)\nsqrt(2)\n')
    os.makedirs(os.path.join(d, 'split'), exist_ok=True)
    ctx.debian_inputs = {'{nums}': nums, '{nums_rev}': os.path.join(d, 'nums_rev.txt'),
                         '{split}': os.path.join(d, 'split', 'part-'),
                         '{nums_gz}': os.path.join(d, 'nums.gz'), '{here}': HERE,
                         '{bc_input}': os.path.join(d, 'bc.in')}


def fill(arg, inputs):
    for key, value in inputs.items():
        arg = arg.replace(key, value)
    return arg


# The oracles on Debian's own binaries (oracle_problems: callgrind's block and
# branch counts, cover, flow, check_source): those whose runs execute the same
# blocks under valgrind as natively.  Not grep (its buffers' alignment follows
# the heap's addresses), find (as much), diff (reads /proc/self/maps, which
# valgrind fills with its own mappings), perl, bash and python3 (they copy the
# environment, where valgrind adds LD_PRELOAD), xargs (its children are
# counted under lazyprobe, not under callgrind).
DEBIAN_ORACLE = ['ls', 'sed', 'sort', 'gzip', 'gunzip', 'tar', 'awk', 'md5sum', 'wc', 'sha256sum', 'uniq', 'od', 'bc',
                 'factor', 'tac', 'nl', 'pr', 'fmt', 'cut', 'tr', 'base64', 'tail', 'expr', 'seq', 'csplit']


def debian_command(ctx, argv, stdin):
    """ARGV and STDIN of a line of DEBIAN_COMMANDS with its inputs filled in,
    and the path of its executable (None when it is not installed)."""
    argv = [fill(a, ctx.debian_inputs) for a in argv]
    return argv, fill(stdin, ctx.debian_inputs) if stdin else None, shutil.which(argv[0])


def marked_problems(lp, argv, stdin, workdir, counts, timeout):
    """-c coverage alone on ARGV, a program without line info: its functions
    are marked run at their first call, no copy made (--stats marked > 0), and
    the executable's functions coverage-nolines.txt counts as run are exactly
    those callgrind ran an instruction of (COUNTS, oracle_problems'; an
    instruction is its function's when it lies between its start and the next
    function's).  Problems (strings)."""
    out = os.path.join(workdir, 'marked')
    st, _, err, _ = run_proc([lp, 'run', '-c', 'coverage', '--stats', '-o', out, '--'] + argv, stdin, timeout,
                             cwd=workdir, stdout_path=os.path.join(workdir, 'stdout'))
    m = re.search(rb'marked=(\d+)', err)
    if not m or int(m.group(1)) == 0:
        return ['-c coverage: --stats marked=%s (status %s): %s' % (m and m.group(1), st, short(err))]
    try:
        rows = {a: count for a, (count, _) in nolines_rows(out, argv[0]).items()}
    except OSError as e:
        return ['-c coverage: %s' % e]
    starts = sorted(rows)
    ran_cg = set()
    for a, n in counts.items():
        i = bisect.bisect_right(starts, a) - 1
        if n and i >= 0:
            ran_cg.add(starts[i])
    ran_lp = {a for a, n in rows.items() if n > 0}
    probs = []
    if ran_lp - ran_cg:
        probs.append('-c coverage: %d functions run that callgrind did not run, first 0x%x' %
                     (len(ran_lp - ran_cg), min(ran_lp - ran_cg)))
    if ran_cg - ran_lp:
        probs.append('-c coverage: %d functions callgrind ran not run, first 0x%x' %
                     (len(ran_cg - ran_lp), min(ran_cg - ran_lp)))
    return probs


def test_debian_oracle(ctx, name, argv, stdin):
    """debian/oracle/NAME: oracle_problems on a command of DEBIAN_COMMANDS,
    and marked_problems: Debian's binaries have no line info."""
    tname = 'debian/oracle/' + name
    argv, stdin, exe = debian_command(ctx, argv, stdin)
    if not exe:
        return [(tname, ['%s is not installed' % argv[0]])]
    argv = [os.path.realpath(exe)] + argv[1:]
    r = oracle_problems(ctx.lp, argv, stdin, None, ctx.scratch(tname), RUN_TIMEOUT)
    probs = r['problems']
    if 'counts' in r:
        probs += marked_problems(ctx.lp, argv, stdin, ctx.scratch(tname), r['counts'], RUN_TIMEOUT)
    # blocks of the functions relocated, most of which ran: callees of more than
    # 256 bytes are relocated only when they run (core/breaks.c, EAGER_MAX_SIZE)
    if not probs and (r['blocks'] < 250 or r['checked'] < 100):
        probs.append('only %d blocks compared, %d functions checked' % (r['blocks'], r['checked']))
    return [(tname, probs[:8])]


# Flow conservation under arcs on the commands that cannot be oracles (see
# DEBIAN_ORACLE): nothing to compare the counts with, but every block's in-flow
# must equal its out-flow, over all the process images.
DEBIAN_FLOW = ['grep', 'find', 'diff', 'perl', 'bash', 'bash_exits', 'python3', 'rg', 'fdfind']


def flow_run(ctx, tname, argv, stdin, module, opts=()):
    """ARGV run natively and under -c dump_arcs.lua (OPTS before its --):
    (problems, the functions of MODULE in its dump.json, the command).  The
    problems: a timeout, output or status unlike the native run's, and
    flow_problems."""
    outdir = ctx.scratch(tname.replace('/', '-'))
    nst, nout, nerr, _ = run_proc(argv, stdin)
    cmd = [ctx.lp, 'run', '-c', DUMP_ARCS, '-o', outdir] + list(opts) + ['--'] + argv
    lst, lout, lerr, timed_out = run_proc(cmd, stdin, timeout=RUN_TIMEOUT)
    probs, funcs = ['timed out'] if timed_out else [], []
    if (nst, nout, nerr) != (lst, lout, non_lp_stderr(lerr)):
        probs.append('output or status differs from the native run: %s' % first_diff(nout + nerr, lout + non_lp_stderr(lerr)))
    if not probs:
        try:
            funcs = exe_functions(load_dump(outdir), module)
            probs += flow_problems(funcs, 'arcs')
        except (OSError, ValueError) as e:
            probs.append('dump.json: %s' % e)
    return probs, funcs, cmd


def test_debian_flow(ctx, name, argv, stdin):
    """debian/flow/NAME: under -c dump_arcs.lua, output and status as
    natively and flow conserved at every block of the executable's functions
    (flow_run).  bash (its command substitutions fork in make_child, a
    function of its own) and python3 (~40 cold parts entered only past their
    start) fail on the build before session 23; bash_exits (functions that
    fork through make_child two calls deep or more, whose calls its
    subshells leave by a longjmp at their exit: the count of second returns
    is then negative) with four functions whose counts do not add up when
    such chains are followed but a negative count is not taken as one
    (session 32)."""
    tname = 'debian/flow/' + name
    argv, stdin, exe = debian_command(ctx, argv, stdin)
    if not exe:
        return [(tname, ['%s is not installed' % argv[0]])]
    probs, funcs, cmd = flow_run(ctx, tname, argv, stdin, os.path.realpath(exe))
    if not probs and sum(1 for f in funcs if f.get('edges')) < 10:
        probs.append('fewer than 10 functions with edges')
    if probs:
        probs[0] += '  [repro: %s]' % ' '.join(cmd)
    return [(tname, probs[:8])]


LIBPYTHON = '/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0'
GDB_PYTHON = ['gdb', '-nx', '-batch', '-ex',
              'python import re, json; print(json.dumps([re.sub(r"(a+)(b)", r"\\2\\1", "aab ab"), '
              're.findall(r"\\d+|[a-z]{2,}", "a1bc22def333"), sorted({"x": 1, "y": [2, 3]}.items())]))']


def test_libpython(ctx):
    """debian/libpython/gdb: Debian's libpython3.11 (PIC, stripped of its
    local symbols; gdb, which the set-up installs, embeds it) instrumented
    (--include 'libpython3*') running a re/json one-liner (flow_run): output
    and status as natively, flow conserved at every block, no function of
    the library that ran measured only up to an indirect jump, and
    _PyEval_EvalFrameDefault's copy counting its table edges.  Its eval loop
    and regex engine keep their computed-goto tables' addresses in stack
    slots and other registers (`mov 0x10(%rsp), %rdi; jmp *(%rdi,%rdx,8)`):
    before session 24 both left their copies at the first dispatch."""
    tname = 'debian/libpython/gdb'
    if not shutil.which('gdb') or not os.path.exists(LIBPYTHON):
        return [(tname, ['gdb or %s is not installed' % LIBPYTHON])]
    probs, funcs, cmd = flow_run(ctx, tname, GDB_PYTHON, None, LIBPYTHON, ['--include', 'libpython3*'])
    partial = [f['name'] for f in funcs if f.get('count') and 'indirect jump' in (f.get('note') or '')]
    if partial:
        probs.append('measured only up to an indirect jump: %s' % ', '.join(partial[:5]))
    ev = {f['name']: f for f in funcs}.get('_PyEval_EvalFrameDefault', {})
    if not probs and sum(1 for e in ev.get('edges') or [] if e['kind'] == 'table' and e.get('count')) < 20:
        probs.append('_PyEval_EvalFrameDefault: fewer than 20 table edges run')
    if probs:
        probs[0] += '  [repro: %s]' % ' '.join(cmd)
    return [(tname, probs[:8])]


# Run again with libc itself instrumented (--include 'libc*'): its hand-written
# assembly branches into other functions' first bytes and shares code.  Not
# xargs: its 600 process images would each leave a ~0.75 MB file (libc's 3000
# functions listed in each), 450 MB on a disk that may be small.
DEBIAN_WITH_LIBC = ['ls', 'sort', 'grep', 'gzip', 'tar', 'python3', 'bash']


def test_script(ctx):
    """A shell script run as the program: its interpreter (/bin/sh) is the
    image instrumented and the commands it runs are followed; output and
    status as natively, a counters file for sh and one for each command."""
    name = 'scripts/shell'
    s = ctx.scratch(name)
    script = os.path.join(s, 'script.sh')
    with open(script, 'w') as f:
        f.write('#!/bin/sh\necho "args: $*"\nseq 3 | sort -r\nexit 3\n')
    os.chmod(script, 0o755)
    outdir = os.path.join(s, 'out')
    nat = run_proc([script, 'a', 'b'])
    cmd = [ctx.lp, 'run', '-c', 'calls', '-o', outdir, '--', script, 'a', 'b']
    lp = run_proc(cmd, timeout=RUN_TIMEOUT)
    probs = []
    if (lp[0], lp[1], non_lp_stderr(lp[2])) != (nat[0], nat[1], nat[2]):
        probs.append('status/output differ: native %s %r, lazyprobe %s %r' % (nat[0], nat[1], lp[0], lp[1]))
    try:
        programs = sorted(os.path.basename(p.get('program') or '') for p in load_calls(outdir).get('processes') or [])
    except (OSError, ValueError) as e:
        programs = []
        probs.append('calls.json: %s' % e)
    if 'dash' not in programs and 'sh' not in programs or 'seq' not in programs or 'sort' not in programs:
        probs.append('processes in calls.json: %s (expected sh/dash, seq, sort)' % programs)
    if probs:
        probs[0] += '  [repro: %s]' % ' '.join(cmd)
    return [(name, probs)]


def test_debian(ctx, name, argv, stdin, libc=False):
    """Output and status as natively under -c coverage,calls,arcs; with LIBC,
    libc.so.6 is instrumented too and at least 50 of its functions must have
    run in copies (the few it refuses, e.g. for overlapping instructions,
    may stay native)."""
    tname = 'debian/' + ('libc/' if libc else '') + name
    argv, stdin, exe = debian_command(ctx, argv, stdin)
    if not exe:
        return [(tname, ['%s is not installed' % argv[0]])]
    outdir = ctx.scratch(tname.replace('/', '-'))
    nst, nout, nerr, _ = run_proc(argv, stdin)
    opts = ['--include', 'libc*'] if libc else []
    lst, lout, lerr, timed_out = run_proc([ctx.lp, 'run', '-c', 'coverage,calls,arcs', '-o', outdir] + opts +
                                          ['--'] + argv, stdin, timeout=RUN_TIMEOUT)
    probs = []
    if timed_out:
        probs.append('timed out')
    if nst != lst:
        probs.append('status native %s vs lazyprobe %s' % (nst, lst))
    if nout != lout:
        probs.append('stdout differs: ' + first_diff(nout, lout))
    if nerr != non_lp_stderr(lerr):
        probs.append('stderr differs: ' + first_diff(nerr, non_lp_stderr(lerr)))
    if not probs:
        calls = load_calls(outdir)
        ran = [f for f in calls['functions'] if f['count'] > 0]
        native = [f['name'] for f in calls['functions'] if f['state'] == 'native']
        if len(ran) < 10:
            probs.append('only %d functions counted' % len(ran))
        in_libc = [f for f in ran if os.path.basename(f['module']).startswith('libc.so')]
        if libc and len(in_libc) < 50:
            probs.append('only %d functions of libc counted' % len(in_libc))
        if native and not libc:
            probs.append('left native: %s' % ', '.join(native[:5]))
    return [(tname, probs)]


# Collectors written by the user: errors are reported with file:line, the
# program still runs to its end, the other collectors still report.
COLLECTOR_SOURCES = {
    'runtime_error.lua': 'return { name = "broken",\n  report = function(run)\n    local t = nil\n    return t.field\n  end }\n',
    'syntax_error.lua': 'return { report = function(run)\n  this is not lua\nend }\n',
    'bad_probes.lua': 'return { probes = { blocks = "everything" }, report = function() end }\n',
    'bad_entry.lua': 'return { probes = { entry = "count" }, report = function() end }\n',
    'writer.lua': ('return { report = function(run)\n'
                   '  assert(lazyprobe.write("text.txt", "one string\\n"))\n'
                   '  assert(lazyprobe.write("pieces.txt", { "a", "bc", "", "d\\n", ("x"):rep(70000) }))\n'
                   '  local ok, err = pcall(lazyprobe.write, "bad.txt", { "x", 1 })\n'
                   '  lazyprobe.print("pieces with a number: " .. tostring(ok) .. " " .. tostring(err))\n'
                   '  ok, err = pcall(lazyprobe.write, "a/b", "x")\n'
                   '  lazyprobe.print("a path: " .. tostring(ok) .. " " .. tostring(err))\n'
                   'end }\n'),
    'sampler.lua': ('local last = -1\nreturn { interval = 0.05, sample = function(run)\n'
                    '  local n = 0\n  for _, f in ipairs(run.functions) do n = n + f.count end\n'
                    '  assert(n >= last, "counts went down")\n  last = n\n'
                    '  lazyprobe.print("sample " .. n)\nend }\n'),
}


def write_collectors(ctx):
    d = ctx.scratch('collector-sources')
    for name, text in COLLECTOR_SOURCES.items():
        with open(os.path.join(d, name), 'w') as f:
            f.write(text)
    return d


def test_asan(ctx):
    """programs/asan: tests/corpus/fib.c built with gcc -fsanitize=address
    (its leak check stops the world with ptrace at exit, which a traced
    process cannot: it ends the program with status 1).  lazyprobe says so in
    one `lazyprobe:` line naming ASAN_OPTIONS=detect_leaks=0; with that set,
    output and status as natively, the counts exact, and no such line.  No
    line before session 25."""
    name = 'programs/asan'
    binary, err = build_extra(ctx, 'fib', 'O1-asan', ['-O1', '-g', '-fsanitize=address'])
    if err:
        return [(name, [err])]
    probs = []
    outdir = ctx.scratch(name)
    cmd = [ctx.lp, 'run', '-c', 'calls', '-o', os.path.join(outdir, 'leaks'), '--', binary]
    _, _, err1, _ = run_proc(cmd, env={'ASAN_OPTIONS': ''})
    said = [l for l in lp_lines(err1) if 'AddressSanitizer' in l]
    if len(said) != 1 or 'detect_leaks=0' not in said[0]:
        probs.append('with the leak check on: %d lazyprobe: lines about AddressSanitizer, want 1 naming '
                     'detect_leaks=0: %s' % (len(said), short(err1)))
    env = {'ASAN_OPTIONS': 'detect_leaks=0'}
    nst, nout, nerr, _ = run_proc([binary], env=env)
    cmd = [ctx.lp, 'run', '-c', 'calls', '-o', os.path.join(outdir, 'quiet'), '--', binary]
    lst, lout, lerr, _ = run_proc(cmd, env=env)
    if (nst, nout, nerr) != (lst, lout, non_lp_stderr(lerr)):
        probs.append('with detect_leaks=0: output or status differs from the native run: %s' %
                     first_diff(nout + nerr, lout + non_lp_stderr(lerr)))
    if any('AddressSanitizer' in l for l in lp_lines(lerr)):
        probs.append('with detect_leaks=0: lazyprobe still speaks of the leak check')
    try:
        counts = {fn.get('name'): fn.get('count') for fn in load_calls(os.path.join(outdir, 'quiet'))['functions']
                  if os.path.realpath(str(fn.get('module'))) == os.path.realpath(binary)}
        want = {n: c for n, c in ctx.progs['fib'].expect if isinstance(c, int)}
        wrong = {n: (counts.get(n), c) for n, c in want.items() if counts.get(n) != c}
        if wrong:
            probs.append('counts (got, want): %s' % wrong)
    except (OSError, ValueError, KeyError) as e:
        probs.append('calls.json: %s' % e)
    if probs:
        probs[0] += '  [repro: %s]' % ' '.join(cmd)
    return [(name, probs)]


def test_cover_sweep(ctx):
    """collectors/cover_sweep: covered probes are replaced by NOPs while four
    threads run hot loops through them: the output stays the same (three runs),
    probes were removed (--stats cover_removed), and the blocks still count as
    covered afterwards (run.functions via dump_blocks: every block of step() ran).
    Built with -g: without line info -c coverage marks functions run and makes
    no copies (core/breaks.c, marks_alone)."""
    name = 'collectors/cover_sweep'
    binary, err = build_extra(ctx, 'hotthreads', 'O2-g', ['-O2', '-g'])
    if err:
        return [(name, [err])]
    nst, nout, _, _ = run_proc([binary], timeout=RUN_TIMEOUT)
    probs = []
    for k in range(3):
        outdir = ctx.scratch('%s-%d' % (name, k))
        cmd = [ctx.lp, 'run', '-c', 'coverage', '--stats', '-o', outdir, '--', binary]
        st, out, err, to = run_proc(cmd, timeout=RUN_TIMEOUT)
        m = re.search(rb'cover_removed=(\d+)', err)
        if to or st != nst or out != nout:
            probs.append('run %d: status %s, stdout %s (native %s)  [repro: %s]' %
                         (k, st, short(out), short(nout), ' '.join(cmd)))
        elif not m or int(m.group(1)) == 0:
            probs.append('run %d: no cover probe was removed: %s' % (k, short(err)))
    outdir = ctx.scratch(name + '-blocks')
    st, out, err, to = run_proc([ctx.lp, 'run', '-c', DUMP_BLOCKS_COVER, '-o', outdir,
                                 '--', binary], timeout=RUN_TIMEOUT)
    try:
        fns = {f['name']: f for f in load_dump(outdir)['functions']}
        blocks = fns['step'].get('blocks') or []
        if not blocks or any(b.get('count') != 1 for b in blocks):
            probs.append('step(): blocks not all covered after the sweeps: %s' % blocks)
    except (OSError, ValueError, KeyError) as e:
        probs.append('dump: %s %s' % (e, short(err)))
    return [(name, probs)]


NOLINES_ROW = re.compile(rb'^\s*(\d+)\s+(not run|relocated|trapped|native|marked)\s+(\S+)\s+(\S+)\s+0x([0-9a-f]+)$')


def nolines_rows(outdir, module):
    """{link-time address: (count, state)} of MODULE's functions in OUTDIR's
    coverage-nolines.txt (OSError when there is none)."""
    rows = {}
    with open(os.path.join(outdir, 'coverage-nolines.txt'), 'rb') as f:
        for line in f:
            r = NOLINES_ROW.match(line.rstrip(b'\n'))
            if r and os.path.realpath(r.group(4)) == os.path.realpath(module).encode():
                rows[int(r.group(5), 16)] = (int(r.group(1)), r.group(2).decode())
    return rows


def test_marked(ctx, prog_name, v):
    """marked/PROG/VARIANT: -c coverage on a corpus build without line info (no
    -g): the report gives its functions as a whole, so each is marked run at its
    first call and runs natively from then on, no copy made (core/breaks.c,
    marks_alone).  Output and status as natively; in coverage-nolines.txt every
    function the corpus expects to run has 1 and state "marked", every one it
    expects not to run 0; --stats marked > 0.  Functions found by address, so
    stripped builds are checked by the same rows."""
    name = 'marked/%s/%s' % (prog_name, vname(v))
    r = native_corpus_run(ctx, prog_name, v, name)
    if isinstance(r, str):
        return [(name, [r])]
    prog, binary, sym_path, outdir, args = r['prog'], r['binary'], r['sym_path'], r['outdir'], r['args']
    nst, nout, expect = r['status'], r['out'], r['expect']
    cmd = [ctx.lp, 'run', '-c', 'coverage', '--stats', '-o', outdir, '--', binary] + args
    st, out, err, to = run_proc(cmd, prog.stdin, timeout=RUN_TIMEOUT)
    repro = '  [repro: %s%s]' % (' '.join(cmd), ' < ' + prog.stdin if prog.stdin else '')
    if to or st != nst or out != nout:
        return [(name, ['status %s (native %s), stdout %s' % (st, nst, first_diff(nout, out)) + repro])]
    m = re.search(rb'marked=(\d+)', err)
    probs = [] if m and int(m.group(1)) > 0 else ['--stats marked=%s' % (m and m.group(1))]
    try:
        rows = nolines_rows(outdir, binary)
    except OSError as e:
        return [(name, ['coverage-nolines.txt: %s' % e + repro])]
    syms = ctx.syms(sym_path)
    for fname, cnt in expect:
        got = rows.get(syms.get(fname))
        want = ((1, 'marked'),) if cnt > 0 else ((0, 'not run'),)
        if got not in want:
            probs.append('%s: %s, expected %s' % (fname, got, ' or '.join(map(str, want))))
    return [(name, [p + repro for p in probs[:1]] + probs[1:6])]


def build_slow(d):
    """A program of 0.4 s whose step() runs 20 times, spread out (with line info)."""
    slow = os.path.join(d, 'slow')
    with open(slow + '.c', 'w') as f:
        f.write('#include <unistd.h>\n__attribute__((noipa)) void step(void) { usleep(20000); }\n'
                'int main(void) { for (int i = 0; i < 20; i++) step(); return 0; }\n')
    subprocess.run(['gcc', '-O2', '-g', '-o', slow, slow + '.c'], check=True)
    return slow


def test_lazy_graph(ctx):
    """collectors/lazy_graph: graphs computed and made Lua tables on first
    read behave as ones made at once (tests/collectors/lazy_graph.lua and
    lazy_graph_later.lua say how)."""
    name = 'collectors/lazy_graph'
    slow = build_slow(ctx.scratch(name + '-src'))
    outdir = ctx.scratch(name)
    cmd = [ctx.lp, 'run', '-c', ','.join(os.path.join(TEST_COLLECTORS, c) for c in
                                         ('lazy_graph.lua', 'lazy_graph_later.lua')), '-o', outdir, '--', slow]
    st, out, err, to = run_proc(cmd, timeout=RUN_TIMEOUT)
    lines = err.decode(errors='replace').splitlines()
    probs = []
    if to or st != 0 or 'lazyprobe: lazy_graph: ok' not in lines or \
            not any(x.startswith('lazyprobe: lazy_graph_later: ok') for x in lines):
        probs.append('status %s: %s  [repro: %s]' % (st, short(err), ' '.join(cmd)))
    return [(name, probs)]


def test_collector_errors(ctx):
    results = []
    src = write_collectors(ctx)
    binary, _ = ctx.binary('fib', ('O2', 'pie', 'sym'))
    nst, nout, nerr, _ = run_proc([binary])
    for name, line_no in (('runtime_error.lua', 4), ('syntax_error.lua', 2)):
        tname = 'collectors/' + name[:-4]
        outdir = ctx.scratch(tname)
        path = os.path.join(src, name)
        cmd = [ctx.lp, 'run', '-c', path + ',calls', '-o', outdir, '--', binary]
        st, out, err, _ = run_proc(cmd, timeout=RUN_TIMEOUT)
        probs = []
        text = err.decode(errors='replace')
        if st != nst or out != nout:
            probs.append('program not run as natively: status %d vs %d' % (st, nst))
        if not re.search(r'^lazyprobe: collector .*%s:%d: ' % (re.escape(name), line_no), text, re.M):
            probs.append('no "lazyprobe: collector ...%s:%d:" line in %s' % (name, line_no, short(err)))
        if 'calls:' not in text or not os.path.exists(os.path.join(outdir, 'calls.json')):
            probs.append('the calls collector did not report')
        results.append((tname, probs + (['  [repro: %s]' % ' '.join(cmd)] if probs else [])))

    for tname, script, field in (('collectors/bad_probes', 'bad_probes.lua', 'probes.blocks'),
                                 ('collectors/bad_entry', 'bad_entry.lua', 'probes.entry')):
        outdir = ctx.scratch(tname)
        cmd = [ctx.lp, 'run', '-c', os.path.join(src, script), '-o', outdir, '--', binary]
        st, out, err, _ = run_proc(cmd, timeout=RUN_TIMEOUT)
        lines = err.decode(errors='replace').splitlines()
        probs = []
        if st == 0 or out:
            probs.append('status %d, stdout %s: the program must not run' % (st, short(out)))
        if len(lines) != 1 or not lines[0].startswith(PREFIX) or field not in lines[0]:
            probs.append('expected one lazyprobe: line naming %s, got %s' % (field, short(err)))
        results.append((tname, probs))

    tname = 'collectors/write'
    outdir = ctx.scratch(tname)
    cmd = [ctx.lp, 'run', '-c', os.path.join(src, 'writer.lua'), '-o', outdir, '--', binary]
    st, out, err, _ = run_proc(cmd, timeout=RUN_TIMEOUT)
    text = err.decode(errors='replace') + out.decode(errors='replace')
    probs = []
    def content(name):
        try:
            with open(os.path.join(outdir, name), 'rb') as f:
                return f.read()
        except OSError:
            return None
    if st != nst:
        probs.append('status %d vs %d natively: %s' % (st, nst, short(err)))
    if content('text.txt') != b'one string\n':
        probs.append('text.txt: %s' % short(content('text.txt') or b'(none)'))
    if content('pieces.txt') != b'abcd\n' + b'x' * 70000:
        probs.append('pieces.txt is not its pieces in order: %s' % short(content('pieces.txt') or b'(none)'))
    if content('bad.txt') is not None:
        probs.append('bad.txt written from a table holding a number')
    if not re.search(r'pieces with a number: false .*array of strings', text):
        probs.append('no error for a table holding a number: %s' % short(err))
    if not re.search(r'a path: false .*a file name, not a path', text):
        probs.append('no error for a path: %s' % short(err))
    results.append((tname, probs + (['  [repro: %s]' % ' '.join(cmd)] if probs else [])))

    tname = 'collectors/sample'
    outdir = ctx.scratch(tname)
    slow = build_slow(src)
    cmd = [ctx.lp, 'run', '-c', os.path.join(src, 'sampler.lua'), '-o', outdir, '--', slow]
    st, out, err, _ = run_proc(cmd, timeout=RUN_TIMEOUT)
    samples = [int(m) for m in re.findall(r'^lazyprobe: sample (\d+)$', err.decode(errors='replace'), re.M)]
    probs = []
    if st != 0:
        probs.append('status %d: %s' % (st, short(err)))
    if not samples:
        probs.append('no sample line while the program ran')
    elif samples != sorted(samples):
        probs.append('live counts went down: %s' % samples)
    results.append((tname, probs))
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--lazyprobe', help='path to the lazyprobe binary')
    ap.add_argument('--work', default=os.path.join(HERE, 'work'))
    ap.add_argument('-k', dest='filter', default=None, help='run tests whose name contains this')
    ap.add_argument('-j', dest='jobs', type=int, default=2)
    ap.add_argument('--native-only', action='store_true',
                    help='check the corpus and the native half only (no lazyprobe needed)')
    args = ap.parse_args()
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        # run as a background job of a shell without job control: SIGINT ignored, which
        # every lazyprobe started would inherit, and keep (as a tool started so should);
        # the tests that send lazyprobe SIGINT are about a lazyprobe that heeds it
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if not args.native_only:
        if not args.lazyprobe or not os.access(args.lazyprobe, os.X_OK):
            print('run_tests.py: --lazyprobe PATH (an executable) is required', file=sys.stderr)
            return 2
    args.work = os.path.abspath(args.work)
    os.makedirs(args.work, exist_ok=True)
    progs = load_corpus()
    built, errs = build_all(progs, os.path.join(args.work, 'bin'), args.jobs)
    ctx = Ctx(args, progs, built, errs)

    jobs = []       # (name-for-filtering, callable)
    for pr in progs:
        for v in VARIANTS:
            jobs.append(('run/%s/%s report/%s/%s' % (pr.name, vname(v), pr.name, vname(v)),
                         lambda pr=pr, v=v: test_run(ctx, pr.name, v)))
    for pn in CALLGRIND_PROGRAMS:
        jobs.append(('callgrind/%s/O2-pie-sym' % pn, lambda pn=pn: test_callgrind(ctx, pn)))
    if not args.native_only:
        jobs.append(('bad_input/', lambda: test_bad_inputs(ctx)))
        for v in [('O2', 'pie', 'sym'), ('O0', 'nopie', 'strip')]:
            jobs.append(('sigkill_target/' + vname(v), lambda v=v: test_kill_target(ctx, v)))
            jobs.append(('sigkill_lazyprobe/' + vname(v), lambda v=v: test_kill_lazyprobe(ctx, v)))
        jobs.append(('security/counters_mode_0600', lambda: test_counters_mode(ctx)))
        jobs.append(('security/planted_symlink_existing', lambda: test_symlink(ctx, False)))
        jobs.append(('security/planted_symlink_dangling', lambda: test_symlink(ctx, True)))
        jobs.append(('collectors/', lambda: test_collector_errors(ctx)))
        jobs.append(('collectors/cover_sweep', lambda: test_cover_sweep(ctx)))
        jobs.append(('programs/asan', lambda: test_asan(ctx)))
        jobs.append(('collectors/lazy_graph', lambda: test_lazy_graph(ctx)))
        for pn in sorted(ctx.progs):
            if ctx.progs[pn].expect:
                for v in (('O2', 'pie', 'strip'), ('O0', 'nopie', 'sym')):
                    jobs.append(('marked/%s/%s' % (pn, vname(v)), lambda pn=pn, v=v: test_marked(ctx, pn, v)))
        for pn in PROBE_PROGRAMS:
            for o in OPTS:
                if o in PROBE_SKIP.get(pn, ()):
                    continue
                jobs.append(('blocks/%s/%s-nopie-sym' % (pn, o),
                             lambda pn=pn, o=o: test_blocks(ctx, pn, o)))
                jobs.append(('arcs/%s/%s-nopie-sym' % (pn, o),
                             lambda pn=pn, o=o: test_arcs(ctx, pn, o)))
        for pn, o in PIE_PROBE_PROGRAMS:
            jobs.append(('blocks/%s/%s-pie-sym' % (pn, o), lambda pn=pn, o=o: test_blocks(ctx, pn, o, 'pie')))
            jobs.append(('arcs/%s/%s-pie-sym' % (pn, o), lambda pn=pn, o=o: test_arcs(ctx, pn, o, 'pie')))
        for pn in CLANG_PROBE_PROGRAMS:
            jobs.append(('blocks/%s/O2-clang-sym' % pn, lambda pn=pn: test_blocks(ctx, pn, 'O2', 'clang')))
            jobs.append(('arcs/%s/O2-clang-sym' % pn, lambda pn=pn: test_arcs(ctx, pn, 'O2', 'clang')))
        for o in OPTS:
            jobs.append(('arcs/branches/%s-nopie-g' % o, lambda o=o: test_arcs_known(ctx, o)))
        for pn, o in GCOV_PROGRAMS:
            jobs.append(('gcov/%s/%s' % (pn, o), lambda pn=pn, o=o: test_gcov(ctx, pn, o)))
        for pn, o in (('fib', 'O2'), ('branches', 'O0')):
            jobs.append(('outputs/genhtml/%s/%s' % (pn, o),
                         lambda pn=pn, o=o: test_out_genhtml(ctx, pn, o)))
        for pn, o in SOURCE_COUNT_PROGRAMS:
            jobs.append(('outputs/source_counts/%s/%s' % (pn, o),
                         lambda pn=pn, o=o: test_out_source_counts(ctx, pn, o)))
        for pn in ('fib', 'branches'):
            jobs.append(('outputs/callgrind_annotate/%s/O0' % pn,
                         lambda pn=pn: test_out_callgrind(ctx, pn, 'O0')))
            jobs.append(('outputs/bolt/%s' % pn, lambda pn=pn: test_out_bolt(ctx, pn)))
            jobs.append(('outputs/together/%s' % pn, lambda pn=pn: test_out_together(ctx, pn)))
        jobs.append(('outputs/report_elsewhere/fib', lambda: test_out_report_elsewhere(ctx, 'fib')))
        for o in ('O2', 'O3'):
            jobs.append(('outputs/partial_note/%s' % o, lambda o=o: test_out_partial_note(ctx, o)))
        make_debian_inputs(ctx)
        jobs.append(('scripts/shell', lambda: test_script(ctx)))
        jobs.append(('debian/libpython/gdb', lambda: test_libpython(ctx)))
        for name, argv, stdin in DEBIAN_COMMANDS:
            jobs.append(('debian/' + name, lambda n=name, a=argv, i=stdin: test_debian(ctx, n, a, i)))
            if name in DEBIAN_ORACLE:
                jobs.append(('debian/oracle/' + name, lambda n=name, a=argv, i=stdin: test_debian_oracle(ctx, n, a, i)))
            if name in DEBIAN_FLOW:
                jobs.append(('debian/flow/' + name, lambda n=name, a=argv, i=stdin: test_debian_flow(ctx, n, a, i)))
            if name in DEBIAN_WITH_LIBC:
                jobs.append(('debian/libc/' + name,
                             lambda n=name, a=argv, i=stdin: test_debian(ctx, n, a, i, True)))
        import real_tests   # tests/real_tests.py: threads, processes, libraries, attach, ...
        jobs += real_tests.jobs(ctx)
    if args.filter:
        jobs = [j for j in jobs if args.filter in j[0]]

    passed = failed = 0
    out_lock = threading.Lock()

    def run_job(job):
        try:
            return job[1]()
        except Exception as e:      # a harness error is a failure, not a crash
            import traceback
            where = traceback.extract_tb(e.__traceback__)[-1]
            return [(job[0].split()[0], ['harness exception: %r at %s:%d' %
                                         (e, os.path.basename(where.filename), where.lineno)])]

    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as ex:
        for res in ex.map(run_job, jobs):
            for name, probs in res:
                if args.filter and args.filter not in name and not name.startswith('bad_input'):
                    continue
                with out_lock:
                    if probs:
                        failed += 1
                        print('FAIL %s: %s' % (name, '; '.join(probs)), flush=True)
                    else:
                        passed += 1
                        print('PASS %s' % name, flush=True)
    print('%d passed, %d failed' % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == '__main__':
    sys.exit(main())
