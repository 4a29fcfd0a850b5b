-- graph.lua — shared helpers for the report writers (callgrind, fdata):
-- line-table lookups, a function index by module and address, and the
-- entries that counted call sites explain.  (Line and
-- branch counts per function are lazyprobe.line_counts/branch_counts.)
-- Pure functions of the run table; the line-table reader is passed in
-- (lazyprobe.lines in a collector, a mock in tests).
local graph = {}

local function by_address(a, b) return a.address < b.address end

-- Functions of the run in a stable order: by module, then address (one
-- function per module and address). They come module by module, mostly by
-- address already: the modules are sorted, and a module's functions only
-- when out of order (a sort of all with a Lua comparison was a fifth of a
-- calls report).
function graph.sorted_functions(run)
  local of, modules = {}, {}
  for _, f in ipairs(run.functions) do
    local l = of[f.module]
    if not l then
      l = {}
      of[f.module] = l
      modules[#modules + 1] = f.module
    end
    l[#l + 1] = f
  end
  table.sort(modules)
  local list, n = {}, 0
  for _, m in ipairs(modules) do
    local l = of[m]
    for i = 2, #l do
      if l[i - 1].address > l[i].address then
        table.sort(l, by_address)
        break
      end
    end
    for i = 1, #l do list[n + i] = l[i] end
    n = n + #l
  end
  return list
end

-- index[module][address] = function
function graph.index(run)
  local index = {}
  for _, f in ipairs(run.functions) do
    local m = index[f.module]
    if not m then m = {} index[f.module] = m end
    m[f.address] = f
  end
  return index
end

-- The function a call of f goes to: the function of f's module at the
-- call's target address, else the one named callee in that module (target 0
-- and callee false or nil when unknown). by_name: optional cache table,
-- filled on first use.
function graph.callee(index, f, target, callee, by_name)
  local m = index[f.module]
  if not m then return nil end
  if target and target ~= 0 and m[target] then return m[target] end
  if callee then
    local names = by_name and by_name[f.module]
    if not names then
      names = {}
      for _, g in pairs(m) do
        if names[g.name] == nil then names[g.name] = g else names[g.name] = false end
      end
      if by_name then by_name[f.module] = names end
    end
    return names[callee] or nil
  end
  return nil
end

-- How many entries of each function the call sites of FUNCS explain: the
-- calls counted at sites whose callee (graph.callee) is a function of the
-- caller's module, as explained[callee] = calls. columns[f]: f's graph as
-- lazyprobe.graph_columns gives it, or false (no call sites read).
function graph.explained_entries(index, funcs, columns, by_name)
  local explained = {}
  for _, f in ipairs(funcs) do
    local calls = columns[f] and columns[f].calls
    if calls then
      -- the counts first: the other columns of a function whose sites never
      -- ran are never made (graph_columns makes a column when it is read)
      local count, target, callee = calls.count
      for i = 1, #count do
        if count[i] > 0 then
          if not target then target, callee = calls.target, calls.callee end
          local h = graph.callee(index, f, target[i], callee[i], by_name)
          if h then explained[h] = (explained[h] or 0) + count[i] end
        end
      end
    end
  end
  return explained
end

-- The indices of a function's call sites (graph_columns(f).calls) in
-- address order; they mostly come in that order already.
function graph.call_order(calls)
  local site, order, in_order = calls.site, {}, true
  for i = 1, #site do
    order[i] = i
    if i > 1 and site[i - 1] > site[i] then in_order = false end
  end
  if not in_order then table.sort(order, function(a, b) return site[a] < site[b] end) end
  return order
end

-- The end of a function: address + size, or the end of its last block when
-- it lies beyond (the size unknown: 0). columns: f's graph as
-- lazyprobe.graph_columns gives it, or nil (no blocks).
function graph.function_end(f, columns)
  local hi = f.address + (f.size or 0)
  if columns then
    local address, size = columns.blocks.address, columns.blocks.size
    for b = 1, #address do
      if address[b] + size[b] > hi then hi = address[b] + size[b] end
    end
  end
  if hi == f.address then hi = f.address + 1 end
  return hi
end

-- The line rows of a function ([address, end)), or nil without line info.
-- Rows come as columns: rows.address[i], rows.file[i], rows.line[i].
-- columns: as for function_end.
function graph.rows(lines, f, columns)
  if not lines then return nil end
  local rows = lines(f.module, f.address, graph.function_end(f, columns))
  if not rows or #rows.address == 0 then return nil end
  return rows
end

-- Index of the last row whose address is <= addr (binary search), or nil.
function graph.row_at(rows, addr)
  local address = rows.address
  local lo, hi = 1, #address
  if hi == 0 or address[1] > addr then return nil end
  while lo < hi do
    local mid = (lo + hi + 1) // 2
    if address[mid] <= addr then lo = mid else hi = mid - 1 end
  end
  return lo
end

-- The row (with a non-zero line) that a function's entry belongs to: the row
-- covering the entry, else the first row with a line; as { address, file,
-- line }, or nil.
function graph.entry_row(rows, f)
  local line = rows.line
  local i = graph.row_at(rows, f.address)
  if not (i and line[i] > 0) then
    i = nil
    for k = 1, #line do
      if line[k] > 0 then i = k break end
    end
  end
  return i and { address = rows.address[i], file = rows.file[i], line = line[i] }
end

return graph
