-- callgrind.lua — call counts and caller->callee edges in the Callgrind
-- profile format, version 1 (valgrind's "Callgrind Format Specification"),
-- read by callgrind_annotate and KCachegrind.
--
-- callgrind.profile(run, source, opts) -> text, stats
--   source: the `lazyprobe` library (a mock in tests): graph_columns, and
--   lines(module, lo, hi), the line-table reader (may be absent).
--   opts.ir: also write the Ir event (only when block counts are real
--   counts: probes blocks="count" or arcs, never "cover").
--
-- What the numbers mean (nothing here is time):
--   positions: instr line — link-time address, and the source line of the
--     row covering it (0 without line info; fl=??? then).
--   events: Calls [Ir]
--   Calls, self cost of a function = its entry count, on its entry address.
--   Calls, cost line of a call = the number of calls made at that call site
--     (the same number as calls=), so callgrind_annotate --inclusive=yes
--     shows, for a callee, the calls it received, and for a caller its
--     entries plus the calls it made. It is not an inclusive measurement.
--   Ir, self cost = sum over the function's blocks of count * instructions,
--     each block on its first address; Ir of a call line is 0: inclusive
--     instruction counts are not measured.
--   Only call sites with count > 0 whose target is a function of the same
--     module are edges (cfn=). Entries that those sites do not explain
--     (indirect calls, calls from other modules, callbacks from libc, the
--     kernel's entry to _start and signal handlers) are given to a caller
--     named "(unknown)" (ob=/fl= ???), so that the calls into each function
--     add up to its entry count.
local graph = require("graph")

local callgrind = {}

local fmt = string.format

-- name compression: "(id) name" the first time, "(id)" after
local function compressor()
  local ids, n = {}, 0
  return function(name)
    local id = ids[name]
    if id then return "(" .. id .. ")" end
    n = n + 1
    ids[name] = n
    return "(" .. n .. ") " .. name
  end
end

function callgrind.profile(run, source, opts)
  opts = opts or {}
  local lines = source.lines
  local index = graph.index(run)
  local by_name = {}
  local funcs = graph.sorted_functions(run)
  local stats = { functions = 0, edges = 0, unknown = 0, calls = 0 }

  local columns = {} -- function -> its graph as columns (source.graph_columns), or false
  for _, f in ipairs(funcs) do columns[f] = f.state ~= "native" and source.graph_columns(f) or false end

  -- where each function is: rows, file, entry line
  local where = {}
  local has_lines = {} -- by module, asked once: none of gcc's cc1's 45 000 functions has lines
  local function place(f)
    local w = where[f]
    if w then return w end
    if lines and has_lines[f.module] == nil then has_lines[f.module] = lines(f.module, 0, 0) ~= nil end
    local rows = has_lines[f.module] and graph.rows(lines, f, columns[f])
    local entry = rows and graph.entry_row(rows, f)
    w = { rows = rows, file = entry and entry.file or "???", line = entry and entry.line or 0 }
    where[f] = w
    return w
  end
  local function line_of(w, addr)
    if not w.rows then return 0 end
    local i = graph.row_at(w.rows, addr)
    return i and w.rows.line[i] or w.line
  end

  local explained = graph.explained_entries(index, funcs, columns, by_name)

  local out = {}
  local function emit(s) out[#out + 1] = s end
  local ob, fl, fn = compressor(), compressor(), compressor()
  local total_calls, total_ir = 0, 0
  local body = {}
  local function bemit(s) body[#body + 1] = s end
  local cur_ob, cur_fl
  local function set_ob(m)
    if m ~= cur_ob then bemit("ob=" .. ob(m)) cur_ob = m end
  end
  local function set_fl(p)
    if p ~= cur_fl then bemit("fl=" .. fl(p)) cur_fl = p end
  end
  local function cost(calls, ir)
    if opts.ir then return fmt("%d %d", calls, ir) end
    return tostring(calls)
  end

  for _, f in ipairs(funcs) do
    if f.count > 0 and f.state ~= "native" then
      local w = place(f)
      stats.functions = stats.functions + 1
      set_ob(f.module)
      set_fl(w.file)
      bemit("fn=" .. fn(f.name))
      -- self cost: Calls at the entry, Ir per block
      local ir_at = {}
      local ir_order = {}
      local g = columns[f]
      if opts.ir and g then
        local address, instructions, count = g.blocks.address, g.blocks.instructions, g.blocks.count
        for b = 1, #address do
          local n = count[b]
          if n and n > 0 then
            local a, ir = address[b], n * instructions[b]
            if not ir_at[a] then ir_order[#ir_order + 1] = a end
            ir_at[a] = (ir_at[a] or 0) + ir
            total_ir = total_ir + ir
          end
        end
      end
      bemit(fmt("0x%x %d %s", f.address, w.line, cost(f.count, ir_at[f.address] or 0)))
      total_calls = total_calls + f.count
      table.sort(ir_order)
      for _, a in ipairs(ir_order) do
        if a ~= f.address then bemit(fmt("0x%x %d %s", a, line_of(w, a), cost(0, ir_at[a]))) end
      end
      -- calls
      local calls = g and g.calls
      if calls then
        local site, target, callee, count = calls.site, calls.target, calls.callee, calls.count
        for _, i in ipairs(graph.call_order(calls)) do
          local h = count[i] > 0 and graph.callee(index, f, target[i], callee[i], by_name)
          if h then
            local hw = place(h)
            stats.edges = stats.edges + 1
            stats.calls = stats.calls + count[i]
            if hw.file ~= w.file then bemit("cfi=" .. fl(hw.file)) end
            bemit("cfn=" .. fn(h.name))
            bemit(fmt("calls=%d 0x%x %d", count[i], h.address, hw.line))
            bemit(fmt("0x%x %d %s", site[i], line_of(w, site[i]), cost(count[i], 0)))
          end
        end
      end
      bemit("")
    end
  end

  -- entries not explained by known call sites
  local first = true
  for _, g in ipairs(funcs) do
    local rest = g.count - (explained[g] or 0)
    if g.count > 0 and g.state ~= "native" and rest > 0 then
      if first then
        set_ob("???")
        set_fl("???")
        bemit("fn=" .. fn("(unknown)"))
        first = false
      end
      local gw = place(g)
      stats.unknown = stats.unknown + 1
      bemit("cob=" .. ob(g.module))
      bemit("cfi=" .. fl(gw.file))
      bemit("cfn=" .. fn(g.name))
      bemit(fmt("calls=%d 0x%x %d", rest, g.address, gw.line))
      bemit(fmt("0x0 0 %s", cost(rest, 0)))
    end
  end

  local pids, cmd = {}, nil
  for _, p in ipairs(run.processes or {}) do
    pids[#pids + 1] = tostring(p.pid)
    cmd = cmd or p.program
  end
  emit("# callgrind format")
  emit("# written by lazyprobe's calls collector: counts, not time.")
  emit("# Calls: self = entries of the function; on a call line = calls made at that site.")
  if opts.ir then emit("# Ir: self = instructions executed (block count * instructions); 0 on call lines.") end
  emit("# Entries no known call site explains are calls from \"(unknown)\".")
  if #pids > 1 then emit("# processes merged: " .. table.concat(pids, " ")) end
  emit("version: 1")
  emit("creator: lazyprobe")
  if pids[1] then emit("pid: " .. pids[1]) end
  if cmd then emit("cmd: " .. cmd) end
  emit("part: 1")
  emit("desc: Calls: entries (self); calls made at a call site (call lines). Not inclusive time.")
  if opts.ir then emit("desc: Ir: instructions executed, self only (call lines carry 0)") end
  emit("positions: instr line")
  emit("event: Calls : function entries and calls")
  if opts.ir then emit("event: Ir : instructions executed") end
  emit(opts.ir and "events: Calls Ir" or "events: Calls")
  emit("summary: " .. cost(total_calls, total_ir))
  emit("")
  bemit("totals: " .. cost(total_calls, total_ir))
  return table.concat(out, "\n") .. "\n" .. table.concat(body, "\n") .. "\n", stats -- the body not copied into out
end

-- The file name: callgrind.out.<first pid>.
function callgrind.filename(run)
  local p = run.processes and run.processes[1]
  return "callgrind.out." .. (p and p.pid or 0)
end

return callgrind
