-- fdata.lua — branch and call counts as a BOLT profile (.fdata, the format
-- of llvm-bolt's DataReader, as BOLT's own instrumentation writes it), for
-- `llvm-bolt PROG -o OUT -data=arcs.fdata`.
--
-- fdata.profiles(run, source) -> list of { module =, text =, stats = } (one
--   per module that ran), the run's program first; stats counts the records
--   and lists in `unsolved` the functions that ran whose arc counts do not add
--   up (flow_error: no branch record of theirs). source has graph_columns
--   and format_rows (the `lazyprobe` library; a mock in tests).
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

-- Sorts the N records (columns FROM, TO, COUNT) by from, then to, in place.
-- They come by block, so a few are out of place (a taken branch back before
-- its fall-through): an insertion sort with comparisons inline (table.sort
-- with a comparator was a tenth of sqlite's arcs report).  Past a budget of
-- moves (a graph out of order), the rest goes to table.sort.
local function sort_records(from, to, count, n)
  local budget = 8 * n + 64
  for i = 2, n do
    local f, t, c = from[i], to[i], count[i]
    local j = i - 1
    while j >= 1 and (from[j] > f or (from[j] == f and to[j] > t)) do
      from[j + 1], to[j + 1], count[j + 1] = from[j], to[j], count[j]
      j = j - 1
    end
    from[j + 1], to[j + 1], count[j + 1] = f, t, c
    budget = budget - (i - 1 - j)
    if budget < 0 then
      local order, f2, t2, c2 = {}, {}, {}, {}
      for r = 1, n do order[r] = r end
      table.sort(order, function(a, b)
        if from[a] ~= from[b] then return from[a] < from[b] end
        return to[a] < to[b]
      end)
      for k = 1, n do f2[k], t2[k], c2[k] = from[order[k]], to[order[k]], count[order[k]] end
      for k = 1, n do from[k], to[k], count[k] = f2[k], t2[k], c2[k] end
      return
    end
  end
end

-- The records of one module, as columns of the format below: the caller
-- (kind 1 and a name, or 0 [unknown]), its offset, the callee likewise, the
-- count.
local RECORD = "%d %s %x %d %s %x 0 %d\n"

local function module_profile(funcs, index, source)
  local names = bolt_names(funcs)
  local by_name = {}
  local stats = { functions = 0, branches = 0, calls = 0, entries = 0, unsolved = {} }
  local fk, fname, foff, tk, tname, toff, rcount, n = {}, {}, {}, {}, {}, {}, {}, 0
  local function record(from_kind, from_name, from_off, to_kind, to_name, to_off, count)
    n = n + 1
    fk[n], fname[n], foff[n], tk[n], tname[n], toff[n], rcount[n] =
      from_kind, from_name, from_off, to_kind, to_name, to_off, count
  end
  local columns = {}
  for _, f in ipairs(funcs) do -- a function that never ran has nothing to write or explain
    columns[f] = f.count > 0 and source.graph_columns(f) or false
  end
  local explained = graph.explained_entries(index, funcs, columns, by_name)
  for _, f in ipairs(funcs) do
    if f.count > 0 and f.state ~= "native" then
      local name, base = names[f], f.address
      local before = n
      local g = columns[f]
      local calls = g and g.calls
      local call_sites = {}
      if calls then
        for _, site in ipairs(calls.site) do call_sites[site] = true end
      end
      local edges = g and g.edges
      if edges and #edges.count > 0 and edges.count[1] == false then
        -- its arcs' counts do not add up (flow_error): no branch record can be told
        stats.unsolved[#stats.unsolved + 1] = f.name
        edges = nil
      end
      if edges then
        -- block boundaries BOLT sees: branch targets and after conditional branches
        local from, to, kind, branch, target, count = edges.from, edges.to, edges.kind, edges.branch, edges.target,
                                                      edges.count
        local block_address = g.blocks.address
        local nblocks = #block_address
        local is_target, outs = {}, {}
        for e = 1, #from do
          local b, t = from[e], to[e]
          outs[b] = (outs[b] or 0) + 1
          if t > 0 and kind[e] ~= "fall" then is_target[t] = true end
        end
        -- the records kept, as columns: from offset, to offset, count (an
        -- edge that never ran is passed over at its count: most are)
        local from_off, to_off, kept_count, nkept, in_order = {}, {}, {}, 0, true
        for e = 1, #from do
          local c, t = count[e], to[e]
          local keep = c and c > 0 and t > 0 and t <= nblocks
          if keep then
            local k = kind[e]
            if k == "fall" then
              keep = not call_sites[branch[e]] and (outs[from[e]] > 1 or is_target[t])
            else
              keep = k == "taken" or k == "jump" or k == "table"
            end
          end
          if keep then
            local fo, to = branch[e] - base, (target[e] ~= 0 and target[e] or block_address[t]) - base
            if nkept > 0 and (from_off[nkept] > fo or (from_off[nkept] == fo and to_off[nkept] > to)) then
              in_order = false
            end
            nkept = nkept + 1
            from_off[nkept], to_off[nkept], kept_count[nkept] = fo, to, c
          end
        end
        if not in_order then sort_records(from_off, to_off, kept_count, nkept) end
        for r = 1, nkept do -- record(...) written out: this is most of the records
          n = n + 1
          fk[n], fname[n], foff[n], tk[n], tname[n], toff[n], rcount[n] = 1, name, from_off[r], 1, name, to_off[r],
                                                                          kept_count[r]
        end
        stats.branches = stats.branches + nkept
      end
      if calls then
        local site, target, callee, count = calls.site, calls.target, calls.callee, calls.count
        for _, i in ipairs(graph.call_order(calls)) do
          if count[i] > 0 then
            local h = graph.callee(index, f, target[i], callee[i], by_name)
            if h and names[h] then record(1, name, site[i] - base, 1, names[h], 0, count[i])
            else record(1, name, site[i] - base, 0, "[unknown]", 0, count[i]) end
            stats.calls = stats.calls + 1
          end
        end
      end
      local rest = f.count - (explained[f] or 0)
      if rest > 0 then
        record(0, "[unknown]", 0, 1, name, 0, rest)
        stats.entries = stats.entries + 1
      end
      if n > before then stats.functions = stats.functions + 1 end
    end
  end
  return source.format_rows(RECORD, fk, fname, foff, tk, tname, toff, rcount), stats
end

function fdata.profiles(run, source)
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
    local text, stats = module_profile(mods[m], index, source)
    if text ~= "" then list[#list + 1] = { module = m, text = text, stats = stats } end
  end
  return list
end

return fdata
