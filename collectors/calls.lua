-- calls.lua — function call counts: a table of the functions that ran, the
-- most called first (TABLE_ROWS of them, then a line that says how many more),
-- calls.json with every discovered function, and
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

-- Rows of the table printed with the program's stderr: a large program runs
-- thousands of functions (gcc -c: 7 149), which calls.json and callgrind.out
-- list in full.
local TABLE_ROWS = 40

local function by_count(a, b)
  if a.count ~= b.count then return a.count > b.count end
  if a.name ~= b.name then return a.name < b.name end
  return a.address < b.address
end

-- The functions by_count. Most never ran: those are put in order by keys
-- (name, address, module) that table.sort compares itself, without calling
-- back into Lua (one comparison through by_count for each of ten thousand
-- functions was a fifth of a report on python3).
local function sorted_by_count(functions)
  local ran, keys, of = {}, {}, {}
  for _, f in ipairs(functions) do
    if f.count > 0 then
      ran[#ran + 1] = f
    else
      local key = string.format("%s\0%016x\0%s", f.name, f.address, f.module)
      keys[#keys + 1] = key
      of[key] = f
    end
  end
  table.sort(ran, by_count)
  table.sort(keys)
  for _, key in ipairs(keys) do ran[#ran + 1] = of[key] end
  return ran
end

-- The process images of the run (one per program a process ran) and how
-- each ended; past LISTED of them, how many ended each way (a shell script's
-- run has dozens: calls.json lists every one).
local LISTED = 4

local function describe(processes)
  local parts = {}
  if #processes <= LISTED then
    for _, p in ipairs(processes) do parts[#parts + 1] = string.format("pid %d, %s", p.pid, p["end"]) end
    return table.concat(parts, "; ")
  end
  local ways, n = {}, {}
  for _, p in ipairs(processes) do
    if not n[p["end"]] then ways[#ways + 1] = p["end"] end
    n[p["end"]] = (n[p["end"]] or 0) + 1
  end
  table.sort(ways, function(a, b) return n[a] > n[b] or (n[a] == n[b] and a < b) end)
  for _, way in ipairs(ways) do parts[#parts + 1] = string.format("%d %s", n[way], way) end
  return string.format("%d process images: %s", #processes, table.concat(parts, ", "))
end

function calls.report(run)
  local all, ran, total = sorted_by_count(run.functions), {}, 0
  for _, f in ipairs(all) do
    if f.count > 0 then
      ran[#ran + 1] = f
      total = total + f.count
    end
  end

  lazyprobe.print(string.format("calls: %d functions ran, %d calls in all (%s)", #ran, total,
                                describe(run.processes)))
  lazyprobe.print(string.format("%14s  %-32s %s", "count", "function", "module"))
  for i = 1, math.min(#ran, TABLE_ROWS) do
    local f = ran[i]
    lazyprobe.print(string.format("%14d  %-32s %s", f.count, f.name, lazyprobe.basename(f.module)))
  end
  if #ran > TABLE_ROWS then
    lazyprobe.print(string.format("calls: %d more functions ran: calls.json and %s list every one", #ran - TABLE_ROWS,
                                  callgrind.filename(run)))
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
  -- the functions as json.encode writes them (an object on a line, its keys
  -- sorted), by format_rows: json.encode of gcc's 47 724 function tables
  -- was a third of its report
  if #all > 0 then
    local address, count, module, name, reason, state, sep = {}, {}, {}, {}, {}, {}, {}
    local quote = json.quote
    for i, f in ipairs(all) do
      address[i], count[i], module[i], name[i], state[i], sep[i] = f.address, f.count, quote(f.module),
                                                                 quote(f.name), quote(f.state), ","
      reason[i] = f.note ~= "" and ', "reason": ' .. quote(f.note) or ""
    end
    sep[#all] = ""
    doc.functions = json.raw("[\n" .. lazyprobe.format_rows(
      '    {"address": "0x%x", "count": %d, "module": %s, "name": %s%s, "state": %s}%s\n',
      address, count, module, name, reason, state, sep) .. "  ]")
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
