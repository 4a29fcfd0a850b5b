-- dumplib.lua — shared by the test collectors dump_*.lua (tests/run_tests.py):
-- writes the run table as dump.json: run.probes, run.processes and every
-- function with its blocks, edges and calls as report(run) receives them,
-- and, for the functions of the program's own module, their line-table rows
-- (lazyprobe.lines) as "lines". Nothing is computed here: the tests compare
-- this raw data with independent references (callgrind, gcov, known counts).
local json = require("json")

local dumplib = {}

local function copy_list(list, fields)
  if not list then return nil end
  local out = json.array({})
  for i, x in ipairs(list) do
    local o = {}
    for _, k in ipairs(fields) do o[k] = x[k] end
    out[i] = o
  end
  return out
end

function dumplib.report(run)
  local prog = run.processes[1] and run.processes[1].program
  local doc = { probes = run.probes, processes = json.array({}), functions = json.array({}) }
  for i, p in ipairs(run.processes) do
    doc.processes[i] = { pid = p.pid, program = p.program, ["end"] = p["end"] }
  end
  for _, f in ipairs(run.functions) do
    local o = { name = f.name, module = f.module, address = f.address, size = f.size,
                count = f.count, state = f.state, note = f.note, binding = f.binding,
                flow_error = f.flow_error }
    o.blocks = copy_list(f.blocks, { "address", "size", "instructions", "count", "side_entries", "escapes" })
    o.edges = copy_list(f.edges, { "from", "to", "kind", "branch", "target", "count", "measured" })
    o.calls = copy_list(f.calls, { "site", "target", "callee", "count" })
    if prog and f.module == prog and lazyprobe.lines then
      local hi = f.address + math.max(f.size or 0, 1)
      for _, b in ipairs(f.blocks or {}) do
        if b.address + b.size > hi then hi = b.address + b.size end
      end
      local rows = lazyprobe.lines(f.module, f.address, hi)
      if rows then
        o.lines = json.array({})
        for i = 1, #rows.address do
          o.lines[i] = { address = rows.address[i], file = rows.file[i], line = rows.line[i] }
        end
      end
    end
    doc.functions[#doc.functions + 1] = o
  end
  local ok, err = lazyprobe.write("dump.json", json.encode(doc))
  if not ok then error(err, 0) end
end

-- A collector asking for PROBES that dumps the run.
function dumplib.collector(name, probes)
  return { name = name, outputs = "dump.json (tests)", probes = probes, report = dumplib.report }
end

-- dump_*.lua load this file with dofile from their own directory (tests/
-- collectors is not on package.path; collectors/lib is).
return dumplib
