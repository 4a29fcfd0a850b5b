-- run.lua — tests of the built-in collectors' report writers, without
-- lazyprobe: each collector is loaded with a mock `lazyprobe` library and fed
-- mock run tables (the data model of docs/COLLECTORS.md); the text it writes
-- is compared with exact expected files for tiny mocks, and checked
-- structurally (counts add up, formats parse).
--
--   lua5.4 tests/collectors/run.lua               the tests; PASS/FAIL lines,
--                                                 last line "N passed, M failed"
--   lua5.4 tests/collectors/run.lua --write RUN.lua DIR [--cover]
--                                                 run coverage, calls and arcs on
--                                                 the mock RUN.lua (a chunk that
--                                                 returns { run =, lines = }) and
--                                                 write their files into DIR
--                                                 (used by consumers.sh);
--                                                 --cover: block counts cut to
--                                                 0/1 and no edge counts, as
--                                                 with blocks="cover" probes
local here = arg[0]:match("^(.*)/[^/]*$") or "."
local root = here .. "/../.."
package.path = root .. "/collectors/lib/?.lua;" .. here .. "/?.lua;" .. package.path
local ref = require("source_ref")

-- {=== the mock library ===}

local function mock_library(outdir, line_tables, real_files)
  local lib = { outdir = outdir, printed = {}, files = {} }
  function lib.print(line)
    assert(type(line) == "string", "print: a string")
    lib.printed[#lib.printed + 1] = line
  end
  function lib.write(name, text)
    assert(type(name) == "string" and not name:find("/"), "write: a file name")
    if type(text) == "table" then -- an array of strings, written in order
      for i = 1, #text do assert(type(text[i]) == "string", "write: an array of strings") end
      text = table.concat(text)
    end
    assert(type(text) == "string", "write: text")
    lib.files[name] = text
    if real_files then
      local f = assert(io.open(outdir .. "/" .. name, "wb"))
      f:write(text)
      f:close()
    end
    return outdir .. "/" .. name
  end
  function lib.basename(path) return path:match("[^/]*$") end
  if line_tables then
    function lib.lines(module, lo, hi)
      local rows = line_tables[module]
      if not rows then return nil end
      local out = { address = {}, file = {}, line = {} }
      for _, r in ipairs(rows) do
        if r.address >= lo and r.address < hi then
          local n = #out.address + 1
          out.address[n], out.file[n], out.line[n] = r.address, r.file, r.line
        end
      end
      return out
    end
  end
  lib.lines = lib.lines or function() return nil, "no line table" end
  local lines = lib.lines
  function lib.line_counts(f) return ref.line_counts(lines, f) end
  -- a mock function's code: its conditional branches are those of its blocks with a taken edge
  function lib.conditional_branches(f)
    local at, seen = {}, {}
    for _, e in ipairs(f.edges or {}) do
      if e.kind == "taken" and not seen[e.branch] then at[#at + 1], seen[e.branch] = e.branch, true end
    end
    table.sort(at)
    return at
  end
  function lib.branch_counts(f) return ref.branch_counts(lines, f, lib.conditional_branches) end
  function lib.source_files() return ref.source_files(lines, lib.conditional_branches) end
  lib.format_rows = ref.format_rows
  lib.graph_columns = ref.graph_columns
  return lib
end

local function run_collector(name, run, lib)
  _G.lazyprobe = lib
  local chunk = assert(loadfile(root .. "/collectors/" .. name .. ".lua"))
  local c = chunk()
  c.report(run)
  _G.lazyprobe = nil
  return c
end

-- {=== write mode (consumers.sh) ===}

if arg[1] == "--write" then
  local mock = dofile(arg[2])
  local outdir = arg[3]
  mock.run.outdir = outdir
  if arg[4] == "--cover" then -- as with probes blocks="cover" only: 0/1, no edge counts
    mock.run.probes = { entry = true, blocks = "cover", calls = true }
    for _, f in ipairs(mock.run.functions) do
      for _, b in ipairs(f.blocks or {}) do b.count = math.min(b.count, 1) end
      for _, e in ipairs(f.edges or {}) do e.count = nil end
    end
  end
  for _, name in ipairs({ "coverage", "calls", "arcs" }) do
    local lib = mock_library(outdir, mock.lines, true)
    run_collector(name, mock.run, lib)
    for _, l in ipairs(lib.printed) do print(name .. "| " .. l) end
  end
  os.exit(0)
end

-- {=== tests ===}

local passed, failed = 0, 0
local function test(name, fn)
  local ok, err = pcall(fn)
  if ok then
    passed = passed + 1
    print("PASS " .. name)
  else
    failed = failed + 1
    print("FAIL " .. name .. ": " .. tostring(err))
  end
end

local function eq(got, want, what)
  if got ~= want then
    error(string.format("%s:\n--- got\n%s\n--- want\n%s", what or "mismatch", tostring(got), tostring(want)), 2)
  end
end

local function lines_of(text)
  local t = {}
  for l in text:gmatch("([^\n]*)\n") do t[#t + 1] = l end
  return t
end

-- A tiny program: /bin/tiny built from /src/t.c.
--   main (0x1000, 0x40 bytes): block 1 [0x1000,0x100c) ends in jcc at 0x100a
--     taken -> block 3 (0x1020), fall -> block 2 [0x100c,0x1020) which calls
--     helper at 0x1010 and jumps at 0x101c to block 3; block 3 [0x1020,0x1030)
--     returns at 0x102f.
--   helper (0x1100, 0x10 bytes, static): one block, also called from outside
--     (a callback: entries 5, 3 of them from main's call site).
--   unused (0x1200, 0x10): never ran.
--   stripped_fn (0x1300): a function without line rows.
local M = "/bin/tiny"
local function tiny_run(with_counts)
  local function c(n) if with_counts then return n end return nil end
  return {
    outdir = "/out",
    processes = { { pid = 42, program = M, ["end"] = "exit 0" } },
    probes = { entry = true, blocks = with_counts and "count" or "cover", arcs = with_counts or nil, calls = true },
    functions = {
      { name = "main", module = M, address = 0x1000, address_hex = "0x1000", size = 0x40, count = 1,
        state = "relocated", note = "", binding = "global",
        blocks = { { address = 0x1000, size = 12, instructions = 4, count = 1 },
                   { address = 0x100c, size = 20, instructions = 5, count = with_counts and 1 or 1 },
                   { address = 0x1020, size = 16, instructions = 3, count = 1 } },
        edges = { { from = 1, to = 3, kind = "taken", branch = 0x100a, target = 0x1020, count = c(0) },
                  { from = 1, to = 2, kind = "fall", branch = 0x100a, target = 0x100c, count = c(1) },
                  { from = 2, to = 3, kind = "jump", branch = 0x101c, target = 0x1020, count = c(1) },
                  { from = 3, to = 0, kind = "return", branch = 0x102f, target = 0, count = c(1) } },
        calls = { { site = 0x1010, target = 0x1100, callee = "helper", count = 3 } } },
      { name = "helper", module = M, address = 0x1100, address_hex = "0x1100", size = 0x10, count = 5,
        state = "relocated", note = "", binding = "local",
        blocks = { { address = 0x1100, size = 16, instructions = 4, count = with_counts and 5 or 1 } },
        edges = { { from = 1, to = 0, kind = "return", branch = 0x110f, target = 0, count = c(5) } },
        calls = {} },
      { name = "unused", module = M, address = 0x1200, address_hex = "0x1200", size = 0x10, count = 0,
        state = "not run", note = "" },
      { name = "stripped_fn", module = M, address = 0x1300, address_hex = "0x1300", size = 0x10, count = 2,
        state = "trapped", note = "entry too small", blocks = { { address = 0x1300, size = 16, instructions = 2, count = 1 } } },
      { name = "natfn", module = M, address = 0x1400, address_hex = "0x1400", size = 0x10, count = 0,
        state = "native", note = "cannot relocate" },
    },
  }
end
local tiny_lines = { [M] = {
  { address = 0x1000, file = "/src/t.c", line = 10 },
  { address = 0x1004, file = "/src/t.c", line = 11 },
  { address = 0x100c, file = "/src/t.c", line = 12 },
  { address = 0x1010, file = "/src/t.h", line = 3 },   -- inlined from a header
  { address = 0x1018, file = "/src/t.c", line = 12 },
  { address = 0x1020, file = "/src/t.c", line = 0 },    -- no source line
  { address = 0x1024, file = "/src/t.c", line = 14 },
  { address = 0x1100, file = "/src/t.c", line = 3 },
  { address = 0x1104, file = "/src/t.c", line = 4 },
  { address = 0x1200, file = "/src/t.c", line = 20 },
  { address = 0x1208, file = "/src/t.c", line = 21 },
} }

test("coverage/tiny-cover exact coverage.info", function()
  local lib = mock_library("/out", tiny_lines)
  run_collector("coverage", tiny_run(false), lib)
  -- cover mode: main's taken edge goes to block 3, which has two ways in, so
  -- its count cannot be known and the branch pair is left out
  eq(lib.files["coverage.info"], table.concat({
    "TN:", "SF:/src/t.c",
    "FN:3,helper", "FN:10,main", "FN:20,unused",
    "FNDA:5,helper", "FNDA:1,main", "FNDA:0,unused",
    "FNF:3", "FNH:2",
    "DA:3,1", "DA:4,1", "DA:10,1", "DA:11,1", "DA:12,1", "DA:14,1", "DA:20,0", "DA:21,0",
    "LF:8", "LH:6", "end_of_record",
    "TN:", "SF:/src/t.h", "FNF:0", "FNH:0", "DA:3,1", "LF:1", "LH:1", "end_of_record", "" }, "\n"),
    "coverage.info")
  eq(lib.printed[1], "coverage: functions 3/4 ran (75.0%), lines 7/9 (77.8%), branches 0/0 taken (-)")
  eq(lib.printed[2], "coverage: 1 functions (1 ran) have no line info: listed in coverage-nolines.txt, not in coverage.info")
  eq(lib.printed[3], "coverage: not instrumented: natfn: cannot relocate")
  assert(lib.files["coverage-nolines.txt"]:find("\n%s+2  trapped%s+stripped_fn%s+/bin/tiny 0x1300\n"),
         "stripped_fn in coverage-nolines.txt")
end)

test("coverage/tiny-count exact branches and counts", function()
  local lib = mock_library("/out", tiny_lines)
  run_collector("coverage", tiny_run(true), lib)
  local info = lib.files["coverage.info"]
  local want = table.concat({
    "TN:", "SF:/src/t.c",
    "FN:3,helper", "FN:10,main", "FN:20,unused",
    "FNDA:5,helper", "FNDA:1,main", "FNDA:0,unused",
    "FNF:3", "FNH:2",
    "BRDA:11,0,0,0", "BRDA:11,0,1,1", "BRF:2", "BRH:1",
    "DA:3,5", "DA:4,5", "DA:10,1", "DA:11,1", "DA:12,1", "DA:14,1", "DA:20,0", "DA:21,0",
    "LF:8", "LH:6", "end_of_record" }, "\n")
  eq(info:sub(1, #want), want, "coverage.info (t.c record)")
end)

test("coverage/branch inference in cover mode", function()
  -- a diamond: 1 -> 2 (taken), 1 -> 3 (fall); 2 -> 4, 3 -> 4; block 3 never ran
  local f = { name = "d", module = M, address = 0x2000, address_hex = "0x2000", size = 0x20, count = 1,
              state = "relocated", note = "",
              blocks = { { address = 0x2000, size = 8, instructions = 2, count = 1 },
                         { address = 0x2008, size = 8, instructions = 2, count = 1 },
                         { address = 0x2010, size = 8, instructions = 2, count = 0 },
                         { address = 0x2018, size = 8, instructions = 2, count = 1 } },
              edges = { { from = 1, to = 2, kind = "taken", branch = 0x2006, target = 0x2008 },
                        { from = 1, to = 3, kind = "fall", branch = 0x2006, target = 0x2010 },
                        { from = 2, to = 4, kind = "jump", branch = 0x200e, target = 0x2018 },
                        { from = 3, to = 4, kind = "fall", branch = 0x2016, target = 0x2018 },
                        { from = 4, to = 0, kind = "return", branch = 0x201f, target = 0 } } }
  -- and a conditional in block 3 (never ran): "-" for both sides
  f.edges[4] = { from = 3, to = 4, kind = "taken", branch = 0x2016, target = 0x2018 }
  f.edges[6] = { from = 3, to = 2, kind = "fall", branch = 0x2016, target = 0x2008 }
  local run = { outdir = "/out", processes = {}, functions = { f } }
  local lines = { [M] = { { address = 0x2000, file = "/src/d.c", line = 1 },
                          { address = 0x2008, file = "/src/d.c", line = 2 },
                          { address = 0x2010, file = "/src/d.c", line = 3 },
                          { address = 0x2018, file = "/src/d.c", line = 4 } } }
  local lib = mock_library("/out", lines)
  run_collector("coverage", run, lib)
  local info = lib.files["coverage.info"]
  -- block 2 now has two ways in (from 1 and from 3): unknown -> the pair at
  -- line 1 is left out; block 3's pair is "-"
  assert(not info:find("BRDA:1,"), "line 1 branch must be left out:\n" .. info)
  assert(info:find("BRDA:3,0,0,%-\nBRDA:3,0,1,%-\n"), "block 3's branches are '-':\n" .. info)
  assert(info:find("DA:3,0\n"), "line 3 not run")
  -- without the edge 3 -> 2 the fall edge 1 -> 3 is block 3's only way in: 0,
  -- and the taken edge 1 -> 2 is block 2's only way in: 1
  f.edges[6] = nil
  lib = mock_library("/out", lines)
  run_collector("coverage", run, lib)
  assert(lib.files["coverage.info"]:find("BRDA:1,0,0,1\nBRDA:1,0,1,0\n"), lib.files["coverage.info"])
end)

test("coverage/no line info at all", function()
  local lib = mock_library("/out", nil)
  run_collector("coverage", tiny_run(false), lib)
  eq(lib.files["coverage.info"], "")
  local n = 0
  for _ in lib.files["coverage-nolines.txt"]:gmatch("/bin/tiny") do n = n + 1 end
  eq(n, 4, "functions in coverage-nolines.txt")
  eq(lib.printed[#lib.printed], "coverage: no function has line info: coverage.info is empty")
end)

test("calls/callgrind tiny exact", function()
  local lib = mock_library("/out", tiny_lines)
  run_collector("calls", tiny_run(true), lib)
  eq(lib.files["callgrind.out.42"], table.concat({
    "# callgrind format",
    "# written by lazyprobe's calls collector: counts, not time.",
    "# Calls: self = entries of the function; on a call line = calls made at that site.",
    "# Ir: self = instructions executed (block count * instructions); 0 on call lines.",
    "# Entries no known call site explains are calls from \"(unknown)\".",
    "version: 1", "creator: lazyprobe", "pid: 42", "cmd: /bin/tiny", "part: 1",
    "desc: Calls: entries (self); calls made at a call site (call lines). Not inclusive time.",
    "desc: Ir: instructions executed, self only (call lines carry 0)",
    "positions: instr line",
    "event: Calls : function entries and calls", "event: Ir : instructions executed",
    "events: Calls Ir", "summary: 8 34", "",
    "ob=(1) /bin/tiny", "fl=(1) /src/t.c",
    "fn=(1) main", "0x1000 10 1 4", "0x100c 12 0 5", "0x1020 0 0 3",
    "cfn=(2) helper", "calls=3 0x1100 3", "0x1010 3 3 0", "",
    "fn=(2)", "0x1100 3 5 20", "",
    "fl=(2) ???", "fn=(3) stripped_fn", "0x1300 0 2 2", "",
    "ob=(2) ???", "fn=(4) (unknown)",
    "cob=(1)", "cfi=(1)", "cfn=(1)", "calls=1 0x1000 10", "0x0 0 1 0",
    "cob=(1)", "cfi=(1)", "cfn=(2)", "calls=2 0x1100 3", "0x0 0 2 0",
    "cob=(1)", "cfi=(2)", "cfn=(3)", "calls=2 0x1300 0", "0x0 0 2 0",
    "totals: 8 34", "" }, "\n"), "callgrind.out.42")
end)

test("calls/table and calls.json as before", function()
  -- the table lines and calls.json must be what the collector wrote before
  -- callgrind output was added (git HEAD's calls.lua, when git has it)
  local p = io.popen("git -C '" .. root .. "' show 5b61934:collectors/calls.lua 2>/dev/null")
  local old = p:read("a")
  p:close()
  local run = tiny_run(false)
  local lib = mock_library("/out", tiny_lines)
  run_collector("calls", run, lib)
  eq(lib.printed[1], "calls: 3 functions ran, 8 calls in all (pid 42, exit 0)")
  eq(#lib.printed, 2 + 3 + 1, "table lines")
  if old ~= "" then
    local olib = mock_library("/out", tiny_lines)
    _G.lazyprobe = olib
    local c = assert(load(old, "=old calls.lua"))()
    c.report(tiny_run(false))
    _G.lazyprobe = nil
    eq(table.concat(lib.printed, "\n"), table.concat(olib.printed, "\n"), "table")
    eq(lib.files["calls.json"], olib.files["calls.json"], "calls.json")
  end
end)

test("calls/functions by count, then name, then address", function()
  local run = tiny_run(false)
  local function fn(name, address, count)
    return { name = name, module = M, address = address, address_hex = string.format("0x%x", address),
             count = count, state = count > 0 and "trapped" or "not run", note = "" }
  end
  -- ties on count among the ones that ran and the ones that did not; one name twice
  for _, f in ipairs({ fn("zeta", 0x2100, 0), fn("beta", 0x2000, 5), fn("zeta", 0x900, 0), fn("alpha", 0x2300, 5),
                       fn("aaa", 0x2400, 0) }) do
    run.functions[#run.functions + 1] = f
  end
  local lib = mock_library("/out", tiny_lines)
  run_collector("calls", run, lib)
  local order = {}
  for address, name in lib.files["calls.json"]:gmatch('"address": "(0x%x+)".-"name": "([^"]+)"') do
    order[#order + 1] = address .. ":" .. name
  end
  eq(table.concat(order, " "), "0x2300:alpha 0x2000:beta 0x1100:helper 0x1300:stripped_fn 0x1000:main "
     .. "0x2400:aaa 0x1400:natfn 0x1200:unused 0x900:zeta 0x2100:zeta")
end)

test("calls/table of the 40 most called, then how many more", function()
  local run = tiny_run(false)
  for k = 1, 50 do -- 50 more that ran, counts 100..149 (6 225 calls): main (1), helper (5), stripped_fn (2) below them
    run.functions[#run.functions + 1] = { name = string.format("f%02d", k), module = M, address = 0x3000 + 16 * k,
                                          address_hex = string.format("0x%x", 0x3000 + 16 * k), count = 99 + k,
                                          state = "trapped", note = "" }
  end
  local lib = mock_library("/out", tiny_lines)
  run_collector("calls", run, lib)
  eq(lib.printed[1], "calls: 53 functions ran, 6233 calls in all (pid 42, exit 0)")
  eq(lib.printed[3]:match("^%s*(%d+)%s+(%S+)"), "149", "the most called first")
  eq(select(2, lib.printed[3]:match("^%s*(%d+)%s+(%S+)")), "f50")
  eq(select(2, lib.printed[42]:match("^%s*(%d+)%s+(%S+)")), "f11", "the 40th")
  eq(lib.printed[43], "calls: 13 more functions ran: calls.json and callgrind.out.42 list every one")
  eq(lib.printed[44], "not instrumented: natfn: cannot relocate")
  eq(#lib.printed, 44, "no other line")
  local listed = 0
  for _ in lib.files["calls.json"]:gmatch('"count": [1-9]') do listed = listed + 1 end
  eq(listed, 53, "calls.json lists every function that ran")
end)

test("calls/many process images summed up by how they ended", function()
  local run = tiny_run(false)
  local ends = { "exit 0", "exec", "exit 0", "exit 1", "exec", "exit 0" }
  run.processes = {}
  for k, e in ipairs(ends) do run.processes[k] = { pid = 40 + k, program = M, ["end"] = e } end
  local lib = mock_library("/out", tiny_lines)
  run_collector("calls", run, lib)
  eq(lib.printed[1], "calls: 3 functions ran, 8 calls in all (6 process images: 3 exit 0, 2 exec, 1 exit 1)")
  local listed = 0
  for _ in lib.files["calls.json"]:gmatch('"pid": ') do listed = listed + 1 end
  eq(listed, 6, "calls.json lists every one")
  run.processes = { run.processes[1], run.processes[2] }
  lib = mock_library("/out", tiny_lines)
  run_collector("calls", run, lib)
  eq(lib.printed[1], "calls: 3 functions ran, 8 calls in all (pid 41, exit 0; pid 42, exec)")
end)

test("arcs/functions whose arc counts do not add up are named", function()
  local run = tiny_run(true)
  run.functions[2].flow_error = "flow not conserved at block 1" -- helper: as lp_graph.c leaves it
  for _, e in ipairs(run.functions[2].edges) do e.count = nil end
  local lib = mock_library("/out", tiny_lines)
  run_collector("arcs", run, lib)
  eq(lib.printed[2], "arcs: 1 functions ran whose arc counts do not add up (flow_error): "
     .. "their branches are left out of the profile: helper")
  eq(#lib.printed, 2, "no other line")
  lib = mock_library("/out", tiny_lines)
  run_collector("arcs", tiny_run(true), lib)
  eq(#lib.printed, 1, "nothing said when every count adds up")
end)

test("calls/callgrind without Ir when blocks are cover-only", function()
  local lib = mock_library("/out", tiny_lines)
  run_collector("calls", tiny_run(false), lib)
  local text = lib.files["callgrind.out.42"]
  assert(text:find("\nevents: Calls\n"), "events: Calls only")
  assert(not text:find("Ir"), "no Ir")
  -- every callee's calls add up to its entries
  local into = {}
  local cur
  for l in text:gmatch("[^\n]+") do
    local name = l:match("^cfn=%(%d+%) (.*)$")
    if name then cur = name
    elseif l:match("^cfn=%((%d+)%)$") then cur = l:match("^cfn=(%(%d+%))$")
    end
    local n = l:match("^calls=(%d+) ")
    if n then into[cur] = (into[cur] or 0) + tonumber(n) end
  end
  eq(into["helper"], 3, "helper from main")
  eq(into["(2)"], 2, "helper from (unknown)")
end)

test("calls/no lines library (older lazyprobe)", function()
  local lib = mock_library("/out", nil)
  run_collector("calls", tiny_run(true), lib)
  local text = lib.files["callgrind.out.42"]
  assert(text:find("\nfl=%(1%) %?%?%?\nfn=%(1%) main\n0x1000 0 1 4\n"), text)
  assert(text:find("\nfn=%(2%)\n0x1100 0 5 20\n"), text)
end)

test("arcs/fdata tiny exact", function()
  local lib = mock_library("/out", tiny_lines)
  run_collector("arcs", tiny_run(true), lib)
  eq(lib.files["arcs.fdata"], table.concat({
    -- main: the fall edge 1 -> 2 ends a conditional block; the jump; no return
    "1 main a 1 main c 0 1",
    "1 main 1c 1 main 20 0 1",
    "1 main 10 1 helper/1 0 0 3",
    "0 [unknown] 0 1 main 0 0 1",
    "0 [unknown] 0 1 helper/1 0 0 2",
    "0 [unknown] 0 1 stripped_fn 0 0 2",
    "" }, "\n"), "arcs.fdata")
  eq(lib.printed[1], "arcs: arcs.fdata: 3 functions, 2 branch records, 1 call records, 3 entry records (tiny)")
end)

test("arcs/fall edges BOLT does not see are left out", function()
  local f = { name = "g", module = M, address = 0x3000, address_hex = "0x3000", size = 0x30, count = 2,
              state = "relocated", note = "", binding = "global",
              blocks = { { address = 0x3000, size = 0x10, instructions = 3, count = 2 },
                         { address = 0x3010, size = 0x10, instructions = 3, count = 2 },
                         { address = 0x3020, size = 0x10, instructions = 3, count = 2 } },
              edges = { { from = 1, to = 2, kind = "fall", branch = 0x300b, target = 0x3010, count = 2 },
                        { from = 2, to = 3, kind = "fall", branch = 0x301a, target = 0x3020, count = 2 },
                        { from = 3, to = 0, kind = "escape", branch = 0x302a, target = 0, count = 2 } },
              calls = { { site = 0x300b, target = 0x9999, count = 2 },
                        { site = 0x3018, target = 0, count = 0 } } }
  local run = { outdir = "/out", processes = { { pid = 1, program = M, ["end"] = "exit 0" } }, functions = { f } }
  local lib = mock_library("/out", nil)
  run_collector("arcs", run, lib)
  -- 1 -> 2 falls after a call; 2 -> 3 is no block boundary for BOLT
  eq(lib.files["arcs.fdata"], "1 g b 0 [unknown] 0 0 2\n0 [unknown] 0 1 g 0 0 2\n")
end)

test("arcs/branch records by from, then to, also when the edges come out of order", function()
  -- small: block 2 ends in a jcc whose taken edge goes back to block 1 and is listed after its
  -- fall-through; big: 40 blocks whose jumps are listed last first (past the insertion budget)
  local function block(base, k, count) return { address = base + 0x10 * (k - 1), size = 0x10, instructions = 3, count = count } end
  local small = { name = "small", module = M, address = 0x1000, address_hex = "0x1000", size = 0x30, count = 1,
                  state = "relocated", note = "", binding = "global",
                  blocks = { block(0x1000, 1, 3), block(0x1000, 2, 3), block(0x1000, 3, 1) },
                  edges = { { from = 1, to = 2, kind = "fall", branch = 0x100b, target = 0x1010, count = 3 },
                            { from = 2, to = 3, kind = "fall", branch = 0x101b, target = 0x1020, count = 1 },
                            { from = 2, to = 1, kind = "taken", branch = 0x101b, target = 0x1000, count = 2 },
                            { from = 3, to = 0, kind = "escape", branch = 0x102a, target = 0, count = 1 } },
                  calls = {} }
  local n = 40
  local big = { name = "big", module = M, address = 0x2000, address_hex = "0x2000", size = 0x10 * n, count = 1,
                state = "relocated", note = "", binding = "global", blocks = {}, edges = {}, calls = {} }
  for k = 1, n do big.blocks[k] = block(0x2000, k, 1) end
  for k = n - 1, 1, -1 do
    big.edges[#big.edges + 1] = { from = k, to = k + 1, kind = "jump", branch = 0x2000 + 0x10 * (k - 1) + 0xb,
                                  target = 0x2000 + 0x10 * k, count = k }
  end
  big.edges[#big.edges + 1] = { from = n, to = 0, kind = "escape", branch = 0x2000 + 0x10 * n - 5, target = 0, count = 1 }
  local run = { outdir = "/out", processes = { { pid = 1, program = M, ["end"] = "exit 0" } }, functions = { small, big } }
  local lib = mock_library("/out", nil)
  run_collector("arcs", run, lib)
  local want = { "1 small 1b 1 small 0 0 2", "1 small 1b 1 small 20 0 1", "0 [unknown] 0 1 small 0 0 1" }
  for k = 1, n - 1 do want[#want + 1] = string.format("1 big %x 1 big %x 0 %d", 0x10 * (k - 1) + 0xb, 0x10 * k, k) end
  want[#want + 1] = "0 [unknown] 0 1 big 0 0 1"
  want[#want + 1] = ""
  eq(lib.files["arcs.fdata"], table.concat(want, "\n"), "arcs.fdata")
end)

test("arcs/local names numbered by address; shared libraries apart", function()
  local L = "/lib/libx.so"
  local function fn(name, module, addr, binding, count)
    return { name = name, module = module, address = addr, address_hex = string.format("0x%x", addr),
             size = 16, count = count, state = count > 0 and "relocated" or "not run", note = "", binding = binding }
  end
  local run = { outdir = "/out", processes = { { pid = 7, program = "/usr/bin/prog", ["end"] = "exit 0" } },
                functions = { fn("h", L, 0x100, "global", 1), fn("s", "/usr/bin/prog", 0x2000, "local", 1),
                              fn("s", "/usr/bin/prog", 0x1000, "local", 0), fn("s", "/usr/bin/prog", 0x3000, "local", 4),
                              fn("a b", "/usr/bin/prog", 0x4000, "global", 1) } }
  local lib = mock_library("/out", nil)
  run_collector("arcs", run, lib)
  eq(lib.files["arcs.fdata"], "0 [unknown] 0 1 s/2 0 0 1\n0 [unknown] 0 1 s/3 0 0 4\n0 [unknown] 0 1 a\\ b 0 0 1\n")
  eq(lib.files["arcs.libx.so.fdata"], "0 [unknown] 0 1 h 0 0 1\n")
end)

test("lib/graph sorted_functions: by module path, then address", function()
  local graph = require("graph")
  local function f(module, address) return { module = module, address = address } end
  -- modules come in load order, not by path; one module's functions out of order
  local run = { functions = { f("/usr/lib/libz.so", 0x30), f("/usr/lib/libz.so", 0x10), f("/bin/prog", 0x500),
                              f("/usr/lib/libz.so", 0x20), f("/bin/prog", 0x900), f("/bin/a", 0x1) } }
  local got = {}
  for i, g in ipairs(graph.sorted_functions(run)) do got[i] = string.format("%s@%x", g.module, g.address) end
  eq(table.concat(got, " "), "/bin/a@1 /bin/prog@500 /bin/prog@900 /usr/lib/libz.so@10 /usr/lib/libz.so@20 /usr/lib/libz.so@30")
end)

test("lib/graph row_at", function()
  local graph = require("graph")
  local rows = { address = { 10, 20, 20, 30 }, line = { 1, 2, 3, 4 } }
  eq(graph.row_at(rows, 9), nil)
  eq(graph.row_at(rows, 10), 1)
  eq(graph.row_at(rows, 25), 3)
  eq(graph.row_at(rows, 99), 4)
end)

test("lib/lcov nolines_summary: rows in pieces, as string.format writes them", function()
  -- more functions than a piece holds: every row once, in order
  local lcov = require("lcov")
  local stats = { nolines = {}, runs = {} }
  local want = {}
  for i = 1, 9000 do
    local f = { name = "fn_" .. i, module = "/bin/big", address = 0x1000 + 16 * i, count = i % 3, state = "marked" }
    stats.nolines[i] = f
    want[i] = string.format("%14d  %-10s %-32s %s 0x%x\n", f.count, f.state, f.name, f.module, f.address)
  end
  stats.runs[stats.nolines[5]] = 7
  want[5] = string.format("%14d  %-10s %-32s %s 0x%x\n", 7, "marked", "fn_5", "/bin/big", 0x1000 + 16 * 5)
  _G.lazyprobe = mock_library("/out", tiny_lines)
  local pieces = lcov.nolines_summary(stats, true)
  _G.lazyprobe = nil
  assert(#pieces > 2, "one piece for the header, more than one for the rows")
  assert(pieces[1]:find("^# lazyprobe coverage"), "the header first")
  eq(table.concat(pieces, "", 2), table.concat(want))
end)

test("lib/json quote and raw", function()
  local json = require("json")
  eq(json.quote('a"b\\c\n'), '"a\\"b\\\\c\\n"', "escaped")
  eq(json.quote("plain"), '"plain"')
  -- a raw value is written as it is, where an encoded one would go
  eq(json.encode({ a = json.raw("[1, 2]"), b = 3 }), '{\n  "a": [1, 2],\n  "b": 3\n}\n')
  eq(json.encode({ json.raw("{}"), 1 }), "[\n  {},\n  1\n]\n")
end)

print(string.format("%d passed, %d failed", passed, failed))
os.exit(failed == 0 and 0 or 1)
