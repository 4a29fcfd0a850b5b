-- fdata.lua — branch and call counts as a BOLT profile (.fdata, the format
-- of llvm-bolt's DataReader, as BOLT's own instrumentation writes it), for
-- `llvm-bolt PROG -o OUT -data=arcs.fdata`.
--
-- fdata.profiles(run) -> list of { module =, text =, stats = } (one per
--   module that ran), the run's program first.
--
-- One record per line, fields separated by one space, offsets in hex from the
-- function's start, no header line (a header "no_lbr" would mean samples,
-- "boltedcollection" a profile of a BOLTed binary; neither applies):
--   1 FROM_FN FROM_OFF 1 TO_FN TO_OFF MISPREDS COUNT
-- with MISPREDS always 0. "1" marks a symbol; "0 [unknown] 0" an unknown
-- place. What is written, as llvm-bolt -instrument's runtime writes it:
--  * branches inside a function, FROM = the transferring instruction (the
--    last instruction of the edge's block), TO = the target block, for edges
--    of kind taken, jump, table (one record per jump-table target), and fall
--    (FROM = the block's last instruction, TO = the next block) — a fall edge
--    only where BOLT's CFG has a block boundary: the block ends in a
--    conditional branch, or the next block is the target of a branch;
--    never after a call (BOLT does not end blocks at calls). Only edges with
--    a known count > 0 (arcs probes).
--  * calls: FROM = the call instruction, TO = the callee at offset 0, when
--    the callee is a function of the same module; "0 [unknown] 0" for
--    indirect calls and calls out of the module.
--  * entries not explained by those call records (calls from other modules,
--    callbacks, _start): "0 [unknown] 0 1 FN 0 0 COUNT" — BOLT's function
--    execution count is the sum of the records that reach offset 0.
--  * nothing for returns and escapes (tail calls leave with no target in the
--    run table): BOLT's format has no record for returns; a tail call would
--    need its target.
-- Names are the ones BOLT gives the symbols: a global symbol's name; a
-- local (static) function NAME is "NAME/N", N counting the local functions of
-- that name in the module by address from 1. This needs f.binding ("local");
-- without it every function is taken as global.
local graph = require("graph")

local fdata = {}

local fmt = string.format

local function escape(name)
  return (name:gsub("[ \\]", "\\%0"))
end

-- BOLT's names for the functions of one module (sorted by address).
local function bolt_names(funcs)
  local names, seen = {}, {}
  for _, f in ipairs(funcs) do
    if f.binding == "local" then
      local n = (seen[f.name] or 0) + 1
      seen[f.name] = n
      names[f] = escape(f.name .. "/" .. n)
    else
      names[f] = escape(f.name)
    end
  end
  return names
end

local function module_profile(funcs, index)
  local names = bolt_names(funcs)
  local by_name = {}
  local out = {}
  local stats = { functions = 0, branches = 0, calls = 0, entries = 0 }
  local explained = {}
  for _, f in ipairs(funcs) do
    for _, c in ipairs(f.calls or {}) do
      local g = c.count > 0 and graph.callee(index, f, c, by_name)
      if g then explained[g] = (explained[g] or 0) + c.count end
    end
  end
  for _, f in ipairs(funcs) do
    if f.count > 0 and f.state ~= "native" then
      local name = names[f]
      local before = #out
      local call_sites = {}
      for _, c in ipairs(f.calls or {}) do call_sites[c.site] = true end
      local records = {}
      if f.edges and f.blocks then
        -- block boundaries BOLT sees: branch targets and after conditional branches
        local target, outs = {}, {}
        for _, e in ipairs(f.edges) do
          outs[e.from] = (outs[e.from] or 0) + 1
          if e.kind ~= "fall" and e.to and e.to > 0 then target[e.to] = true end
        end
        for _, e in ipairs(f.edges) do
          local keep = e.count and e.count > 0 and e.to and e.to > 0 and f.blocks[e.to]
          if keep and e.kind == "fall" then
            keep = not call_sites[e.branch] and (outs[e.from] > 1 or target[e.to])
          elseif keep then
            keep = e.kind == "taken" or e.kind == "jump" or e.kind == "table"
          end
          if keep then
            local to = e.target ~= 0 and e.target or f.blocks[e.to].address
            records[#records + 1] = { e.branch - f.address, to - f.address, e.count }
          end
        end
        table.sort(records, function(a, b)
          if a[1] ~= b[1] then return a[1] < b[1] end
          return a[2] < b[2]
        end)
        for _, r in ipairs(records) do
          out[#out + 1] = fmt("1 %s %x 1 %s %x 0 %d", name, r[1], name, r[2], r[3])
        end
        stats.branches = stats.branches + #records
      end
      local sites = {}
      for i, c in ipairs(f.calls or {}) do sites[i] = c end
      table.sort(sites, function(a, b) return a.site < b.site end)
      for _, c in ipairs(sites) do
        if c.count > 0 then
          local g = graph.callee(index, f, c, by_name)
          local to = g and names[g] and fmt("1 %s 0", names[g]) or "0 [unknown] 0"
          out[#out + 1] = fmt("1 %s %x %s 0 %d", name, c.site - f.address, to, c.count)
          stats.calls = stats.calls + 1
        end
      end
      local rest = f.count - (explained[f] or 0)
      if rest > 0 then
        out[#out + 1] = fmt("0 [unknown] 0 1 %s 0 0 %d", name, rest)
        stats.entries = stats.entries + 1
      end
      if #out > before then stats.functions = stats.functions + 1 end
    end
  end
  return table.concat(out, "\n") .. (#out > 0 and "\n" or ""), stats
end

function fdata.profiles(run)
  local index = graph.index(run)
  local mods, order = {}, {}
  for _, f in ipairs(graph.sorted_functions(run)) do
    local m = mods[f.module]
    if not m then m = {} mods[f.module] = m order[#order + 1] = f.module end
    m[#m + 1] = f
  end
  -- the program's module first: the one named like the first process's program
  local prog = run.processes and run.processes[1] and run.processes[1].program
  local progbase = prog and prog:match("[^/]*$")
  table.sort(order, function(a, b)
    local pa = a == prog or (progbase ~= nil and a:match("[^/]*$") == progbase)
    local pb = b == prog or (progbase ~= nil and b:match("[^/]*$") == progbase)
    if pa ~= pb then return pa end
    return a < b
  end)
  local list = {}
  for _, m in ipairs(order) do
    local text, stats = module_profile(mods[m], index)
    if text ~= "" then list[#list + 1] = { module = m, text = text, stats = stats } end
  end
  return list
end

return fdata
