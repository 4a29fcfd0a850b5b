-- calls.lua — function call counts: a table of every function that ran,
-- sorted by count, calls.json with every discovered function, and
-- callgrind.out.<pid> (call counts and caller->callee edges from the call-site
-- counters, for callgrind_annotate and KCachegrind; lib/callgrind.lua).
-- Uses only the documented collector API (docs/COLLECTORS.md).
local json = require("json")
local callgrind = require("callgrind")

local calls = {
  name = "calls",
  outputs = "call counts table; calls.json; callgrind.out.PID",
  probes = { entry = true, calls = true },
}

local function by_count(a, b)
  if a.count ~= b.count then return a.count > b.count end
  if a.name ~= b.name then return a.name < b.name end
  return a.address < b.address
end

local function describe(processes)
  local parts = {}
  for _, p in ipairs(processes) do parts[#parts + 1] = string.format("pid %d, %s", p.pid, p["end"]) end
  return table.concat(parts, "; ")
end

function calls.report(run)
  local all, ran, total = {}, {}, 0
  for i, f in ipairs(run.functions) do all[i] = f end
  table.sort(all, by_count)
  for _, f in ipairs(all) do
    if f.count > 0 then
      ran[#ran + 1] = f
      total = total + f.count
    end
  end

  lazyprobe.print(string.format("calls: %d functions ran, %d calls in all (%s)", #ran, total,
                                describe(run.processes)))
  lazyprobe.print(string.format("%14s  %-32s %s", "count", "function", "module"))
  for _, f in ipairs(ran) do
    lazyprobe.print(string.format("%14d  %-32s %s", f.count, f.name, lazyprobe.basename(f.module)))
  end
  for _, f in ipairs(all) do
    if f.state == "native" then
      lazyprobe.print(string.format("not instrumented: %s: %s", f.name, f.note))
    end
  end

  local doc = { lazyprobe = 1, processes = json.array({}), functions = json.array({}) }
  for _, p in ipairs(run.processes) do
    doc.processes[#doc.processes + 1] = { pid = p.pid, program = p.program, ["end"] = p["end"] }
  end
  for _, f in ipairs(all) do
    local entry = { name = f.name, module = f.module, address = f.address_hex, count = f.count,
                    state = f.state }
    if f.note ~= "" then entry.reason = f.note end
    doc.functions[#doc.functions + 1] = entry
  end
  local ok, err = lazyprobe.write("calls.json", json.encode(doc))
  if not ok then error(err, 0) end

  -- Ir only when block counts are real counts (never from "cover" probes)
  local probes = run.probes or {}
  local ir = probes.blocks == "count" or probes.arcs == true
  local text = callgrind.profile(run, lazyprobe, { ir = ir })
  ok, err = lazyprobe.write(callgrind.filename(run), text)
  if not ok then error(err, 0) end
end

return calls
