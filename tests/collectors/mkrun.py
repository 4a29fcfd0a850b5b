#!/usr/bin/env python3
"""mkrun.py — a run table for a real program, as lazyprobe's report(run)
receives it, derived without lazyprobe: functions from the symbol table
(readelf), basic blocks and CFG edges from the disassembly (objdump), counts
from one real run under valgrind's callgrind (--dump-instr=yes
--collect-jumps=yes: per-instruction execution counts, conditional and
indirect jump counts, call counts per call site), line rows from the DWARF
line table (objdump --dwarf=decodedline, the last row per address).

    mkrun.py PROGRAM CALLGRIND_OUT SOURCE_DIR PID > run.lua

Writes a Lua chunk returning { run = RUN, lines = { [module] = rows } }.
Non-PIE programs only (callgrind addresses are then link-time addresses).
Blocks end at branches, returns and before branch targets, not at calls (as
BOLT's CFG); nop-only blocks after a jump or return (padding) are dropped.
"""
import os
import re
import subprocess
import sys
from collections import defaultdict


def sh(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def functions(prog):
    out = []
    for line in sh('readelf', '-sW', prog).splitlines():
        p = line.split()
        if len(p) >= 8 and p[3] == 'FUNC' and p[6] != 'UND' and int(p[2]) > 0:
            out.append({'name': p[7].split('@')[0], 'address': int(p[1], 16), 'size': int(p[2]),
                        'binding': p[4].lower()})
    seen, uniq = set(), []
    for f in sorted(out, key=lambda f: f['address']):
        if f['address'] not in seen:
            seen.add(f['address'])
            uniq.append(f)
    return uniq


INSN = re.compile(r'^\s*([0-9a-f]+):\s+(.*)$')


def disassemble(prog):
    insns = []
    for line in sh('objdump', '-d', '--no-show-raw-insn', '-w', prog).splitlines():
        m = INSN.match(line)
        if not m:
            continue
        text = m.group(2).split('#')[0].strip()
        parts = text.split(None, 1)
        if not parts:
            continue
        mnem = parts[0]
        ops = parts[1] if len(parts) > 1 else ''
        if mnem in ('bnd', 'notrack', 'rep', 'repz', 'lock') and ops:
            sub = ops.split(None, 1)
            mnem, ops = sub[0], sub[1] if len(sub) > 1 else ''
        t = re.match(r'^([0-9a-f]+) <', ops)
        insns.append({'address': int(m.group(1), 16), 'mnem': mnem, 'ops': ops,
                      'target': int(t.group(1), 16) if t else None})
    for i, ins in enumerate(insns[:-1]):
        ins['next'] = insns[i + 1]['address']
    return insns


def callgrind(path):
    """exec counts per address, jumps {src: {target: count}}, conditional
    taken counts {src: count}, calls {site: {target: count}}"""
    execs = defaultdict(int)
    jumps = defaultdict(lambda: defaultdict(int))
    taken = defaultdict(int)
    calls = defaultdict(lambda: defaultdict(int))
    pending = None      # ('calls', target, count) or ('jump'/'jcnd', target, count)
    with open(path) as f:
        for line in f:
            line = line.rstrip('\n')
            if line.startswith('calls='):
                m = re.match(r'calls=(\d+) (0x[0-9a-f]+)', line)
                pending = ('calls', int(m.group(2), 16), int(m.group(1)))
            elif line.startswith('jcnd='):
                m = re.match(r'jcnd=(\d+)/(\d+) (0x[0-9a-f]+)', line)
                pending = ('jcnd', int(m.group(3), 16), int(m.group(1)))
            elif line.startswith('jump='):
                m = re.match(r'jump=(\d+) (0x[0-9a-f]+)', line)
                pending = ('jump', int(m.group(2), 16), int(m.group(1)))
            elif line.startswith('0x'):
                p = line.split()
                addr = int(p[0], 16)
                if pending:
                    kind, target, count = pending
                    if kind == 'calls':
                        calls[addr][target] += count
                    elif kind == 'jcnd':
                        taken[addr] += count
                        jumps[addr][target] += count
                    else:
                        jumps[addr][target] += count
                    pending = None
                elif len(p) >= 3:
                    execs[addr] += int(p[2])
    return execs, jumps, taken, calls


def line_rows(prog, srcdir):
    rows = {}
    cu_dir = None
    for line in sh('objdump', '--dwarf=decodedline', prog).splitlines():
        p = line.split()
        if len(p) >= 3 and re.match(r'^\d+$', p[1]) and p[2].startswith('0x'):
            path = os.path.join(srcdir, p[0])
            if os.path.exists(path):
                rows[int(p[2], 16)] = {'file': os.path.abspath(path), 'line': int(p[1])}
    return [dict(address=a, **rows[a]) for a in sorted(rows)]


def is_cond(m):
    return m.startswith('j') and m not in ('jmp', 'jmpq')


def build(prog, cgout, srcdir, pid):
    module = os.path.abspath(prog)
    funcs = functions(prog)
    insns = disassemble(prog)
    execs, jumps, taken, calls = callgrind(cgout)
    starts = {f['address']: f for f in funcs}
    out = []
    for f in funcs:
        lo, hi = f['address'], f['address'] + f['size']
        fi = [i for i in insns if lo <= i['address'] < hi]
        if not fi:
            continue
        leaders = {lo}
        for i in fi:
            m = i['mnem']
            if m.startswith('j') or m.startswith('ret') or m in ('hlt', 'ud2'):
                if i.get('next') is not None and i['next'] < hi:
                    leaders.add(i['next'])
                if i['target'] is not None and lo <= i['target'] < hi:
                    leaders.add(i['target'])
                for t in jumps.get(i['address'], {}):
                    if lo <= t < hi:
                        leaders.add(t)
        blocks, cur = [], None
        for i in fi:
            if i['address'] in leaders or cur is None:
                cur = {'address': i['address'], 'insns': []}
                blocks.append(cur)
            cur['insns'].append(i)
        # drop padding: nop-only blocks that nothing branches to
        targets = set()
        for i in fi:
            if i['target'] is not None:
                targets.add(i['target'])
            targets.update(jumps.get(i['address'], {}).keys())
        blocks = [b for b in blocks if not (all(i['mnem'].startswith('nop') or i['mnem'] in ('xchg', 'data16', 'cs')
                                                for i in b['insns']) and b['address'] not in targets
                                            and b['address'] != lo)]
        index = {b['address']: n + 1 for n, b in enumerate(blocks)}
        edges = []
        for n, b in enumerate(blocks):
            last = b['insns'][-1]
            m, a = last['mnem'], last['address']
            cnt = execs.get(a, 0)
            nxt = last.get('next')
            nxt_block = index.get(nxt) if nxt is not None and nxt < hi else None
            if is_cond(m):
                t = last['target']
                tk = taken.get(a, 0)
                if t is not None and t in index:
                    edges.append({'from': n + 1, 'to': index[t], 'kind': 'taken', 'branch': a, 'target': t, 'count': tk})
                else:
                    edges.append({'from': n + 1, 'to': 0, 'kind': 'escape', 'branch': a, 'target': 0, 'count': tk})
                if nxt_block:
                    edges.append({'from': n + 1, 'to': nxt_block, 'kind': 'fall', 'branch': a, 'target': nxt, 'count': cnt - tk})
            elif m in ('jmp', 'jmpq'):
                t = last['target']
                if t is not None:
                    if t in index:
                        edges.append({'from': n + 1, 'to': index[t], 'kind': 'jump', 'branch': a, 'target': t, 'count': cnt})
                    else:
                        edges.append({'from': n + 1, 'to': 0, 'kind': 'escape', 'branch': a, 'target': 0, 'count': cnt})
                else:
                    rest = cnt
                    for tt, c in sorted(jumps.get(a, {}).items()):
                        if tt in index:
                            edges.append({'from': n + 1, 'to': index[tt], 'kind': 'table', 'branch': a, 'target': tt, 'count': c})
                            rest -= c
                    if rest > 0:
                        edges.append({'from': n + 1, 'to': 0, 'kind': 'escape', 'branch': a, 'target': 0, 'count': rest})
            elif m.startswith('ret'):
                edges.append({'from': n + 1, 'to': 0, 'kind': 'return', 'branch': a, 'target': 0, 'count': cnt})
            elif m in ('hlt', 'ud2'):
                pass
            elif nxt_block:
                edges.append({'from': n + 1, 'to': nxt_block, 'kind': 'fall', 'branch': a, 'target': nxt, 'count': cnt})
        into_entry = sum(e['count'] for e in edges if e['to'] == 1)
        count = execs.get(lo, 0) - into_entry
        fn = {'name': f['name'], 'module': module, 'address': lo, 'address_hex': '0x%x' % lo,
              'size': f['size'], 'count': count, 'binding': f['binding'],
              'state': 'relocated' if count > 0 else 'not run', 'note': ''}
        if count > 0:
            fn['blocks'] = [{'address': b['address'], 'size': (b['insns'][-1].get('next', hi) or hi) - b['address'],
                             'instructions': len(b['insns']), 'count': execs.get(b['address'], 0)} for b in blocks]
            fn['edges'] = edges
            cl = []
            for i in fi:
                if i['mnem'].startswith('call'):
                    t = i['target'] if i['target'] is not None else 0
                    cl.append({'site': i['address'], 'target': t,
                               'callee': starts[t]['name'] if t in starts else None,
                               'count': execs.get(i['address'], 0)})
            fn['calls'] = cl
        out.append(fn)
    run = {'outdir': 'OUTDIR', 'processes': [{'pid': pid, 'program': module, 'end': 'exit 0'}],
           'functions': out, 'probes': {'entry': True, 'blocks': 'count', 'arcs': True, 'calls': True}}
    return run, {module: line_rows(prog, srcdir)}


def lua(v, ind=''):
    if v is None:
        return 'nil'
    if isinstance(v, bool):
        return 'true' if v else 'false'
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return '"' + v.replace('\\', '\\\\').replace('"', '\\"') + '"'
    if isinstance(v, list):
        return '{' + ', '.join(lua(x, ind) for x in v) + '}'
    if isinstance(v, dict):
        items = []
        for k, x in v.items():
            if x is None:
                continue
            key = k if re.match(r'^[A-Za-z_]\w*$', k) and k not in ('end',) else '[' + lua(k) + ']'
            items.append('%s = %s' % (key, lua(x, ind)))
        return '{' + ', '.join(items) + '}'
    raise TypeError(type(v))


def main():
    prog, cgout, srcdir, pid = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    run, lines = build(prog, cgout, srcdir, pid)
    sys.stdout.write('-- generated by tests/collectors/mkrun.py from %s\nreturn {\nrun = %s,\nlines = %s,\n}\n'
                     % (os.path.basename(prog), lua(run), lua(lines)))


if __name__ == '__main__':
    main()
