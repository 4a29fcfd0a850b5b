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
"""

import argparse
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
        m = re.search(r'/\*\s*stdin:\s*(\S+)\s*\*/', text)
        if m:
            self.stdin = os.path.join(CORPUS, m.group(1))
        m = re.search(r'/\*\s*args:\s*(.*?)\s*\*/', text)
        if m:
            self.args = m.group(1).split()


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


def run_proc(argv, stdin_path=None, timeout=NATIVE_TIMEOUT, umask=-1):
    """Run to completion in its own process group; kill the group on timeout.
    Returns (status, stdout bytes, stderr bytes, timed_out)."""
    fin = open(stdin_path, 'rb') if stdin_path else subprocess.DEVNULL
    try:
        p = subprocess.Popen(argv, stdin=fin, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, start_new_session=True,
                             umask=umask)
        try:
            out, err = p.communicate(timeout=timeout)
            return status_of(p.returncode), out, err, False
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            out, err = p.communicate()
            return status_of(p.returncode), out, err, True
    finally:
        if stdin_path:
            fin.close()


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


def test_run(ctx, prog_name, v):
    """Generic test: native vs lazyprobe on one program variant.
    Returns [(name, problems)]."""
    name = 'run/%s/%s' % (prog_name, vname(v))
    rname = 'report/%s/%s' % (prog_name, vname(v))
    if (prog_name, v) in ctx.build_errors:
        return [(name, ['build: ' + ctx.build_errors[(prog_name, v)]])]
    prog = ctx.progs[prog_name]
    binary, sym_path = ctx.binary(prog_name, v)
    scratch = ctx.scratch(name)
    outdir = os.path.join(scratch, 'out')
    args = [a.replace('{outdir}', outdir).replace('{scratch}', scratch) for a in prog.args]
    nst, nout, nerr, nto = run_proc([binary] + args, prog.stdin)
    if nto:
        return [(name, ['native run timed out'])]
    try:
        expect = resolve_expect(prog, nout)
    except ValueError as e:
        return [(name, ['native: %s' % e])]
    syms = ctx.syms(sym_path)
    missing = [n for n, _ in expect if n not in syms]
    if missing:
        return [(name, ['expected functions not in symtab: %s' % ', '.join(missing)])]
    if ctx.native_only:
        return [(name, [])]
    # remove the native run's side effects before the instrumented run
    for f in os.listdir(scratch):
        p = os.path.join(scratch, f)
        shutil.rmtree(p) if os.path.isdir(p) else os.unlink(p)
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


def bad_input_check(ctx, name, argv, marker=None, want_text=None, stdout_empty=True):
    st, out, err, to = run_proc(argv, timeout=60)
    repro = '  [repro: %s]' % ' '.join(argv)
    if to:
        return [(name, ['timeout' + repro])]
    probs = []
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
    # missing program
    res += bad_input_check(ctx, 'bad_input/missing_program',
                           [lp, 'run', '-o', good_out, '--', os.path.join(s, 'no-such-prog')])
    # not executable (mode 0644 copy of an ELF; root cannot execve it either)
    ne = os.path.join(s, 'not-exec')
    shutil.copy(marker_bin, ne)
    os.chmod(ne, 0o644)
    mk = os.path.join(s, 'marker-noexec')
    res += bad_input_check(ctx, 'bad_input/not_executable',
                           [lp, 'run', '-o', good_out, '--', ne, mk], marker=mk)
    # a directory
    res += bad_input_check(ctx, 'bad_input/directory_as_program',
                           [lp, 'run', '-o', good_out, '--', s])
    # non-ELF: an executable shell script that would leave a marker if run
    sh = os.path.join(s, 'script.sh')
    mk = os.path.join(s, 'marker-script')
    with open(sh, 'w') as f:
        f.write('#!/bin/sh\necho script ran\ntouch %s\n' % mk)
    os.chmod(sh, 0o755)
    res += bad_input_check(ctx, 'bad_input/non_elf_script',
                           [lp, 'run', '-o', good_out, '--', sh], marker=mk)
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
    # few thousand pids (pids are allocated sequentially).
    with open('/proc/sys/kernel/ns_last_pid') as f:
        last = int(f.read())
    with open('/proc/sys/kernel/pid_max') as f:
        pid_max = int(f.read())
    planted = set()
    for k in range(1, 4001):
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
    pending = None
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


# ------------------------------------------------------------------ main ---

# Debian's own binaries, written by nobody here: same stdout, stderr and status
# with and without lazyprobe, and a real share of their functions instrumented.
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
    ctx.debian_inputs = {'{nums}': nums, '{nums_rev}': os.path.join(d, 'nums_rev.txt'),
                         '{nums_gz}': os.path.join(d, 'nums.gz'), '{here}': HERE}


def fill(arg, inputs):
    for key, value in inputs.items():
        arg = arg.replace(key, value)
    return arg


def test_debian(ctx, name, argv, stdin):
    tname = 'debian/' + name
    argv = [fill(a, ctx.debian_inputs) for a in argv]
    stdin = fill(stdin, ctx.debian_inputs) if stdin else None
    if not shutil.which(argv[0]):
        return [(tname, ['%s is not installed' % argv[0]])]
    outdir = ctx.scratch('debian-' + name)
    nst, nout, nerr, _ = run_proc(argv, stdin)
    lst, lout, lerr, timed_out = run_proc([ctx.lp, 'run', '-c', 'calls', '-o', outdir,
                                           '--'] + argv, stdin, timeout=RUN_TIMEOUT)
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
        if native:
            probs.append('left native: %s' % ', '.join(native[:5]))
    return [(tname, probs)]


# Collectors written by the user: errors are reported with file:line, the
# program still runs to its end, the other collectors still report.
COLLECTOR_SOURCES = {
    'runtime_error.lua': 'return { name = "broken",\n  report = function(run)\n    local t = nil\n    return t.field\n  end }\n',
    'syntax_error.lua': 'return { report = function(run)\n  this is not lua\nend }\n',
    'bad_probes.lua': 'return { probes = { blocks = "everything" }, report = function() end }\n',
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

    tname = 'collectors/bad_probes'
    outdir = ctx.scratch(tname)
    cmd = [ctx.lp, 'run', '-c', os.path.join(src, 'bad_probes.lua'), '-o', outdir, '--', binary]
    st, out, err, _ = run_proc(cmd, timeout=RUN_TIMEOUT)
    lines = err.decode(errors='replace').splitlines()
    probs = []
    if st == 0 or out:
        probs.append('status %d, stdout %s: the program must not run' % (st, short(out)))
    if len(lines) != 1 or not lines[0].startswith(PREFIX) or 'probes.blocks' not in lines[0]:
        probs.append('expected one lazyprobe: line naming probes.blocks, got %s' % short(err))
    results.append((tname, probs))

    tname = 'collectors/sample'
    outdir = ctx.scratch(tname)
    slow = os.path.join(src, 'slow')
    with open(slow + '.c', 'w') as f:   # 0.4 s of calls, spread out
        f.write('#include <unistd.h>\n__attribute__((noipa)) void step(void) { usleep(20000); }\n'
                'int main(void) { for (int i = 0; i < 20; i++) step(); return 0; }\n')
    subprocess.run(['gcc', '-O2', '-o', slow, slow + '.c'], check=True)
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
        make_debian_inputs(ctx)
        for name, argv, stdin in DEBIAN_COMMANDS:
            jobs.append(('debian/' + name, lambda n=name, a=argv, i=stdin: test_debian(ctx, n, a, i)))
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

    results = []
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
