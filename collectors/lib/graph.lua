-- graph.lua — shared helpers for the report writers (lcov, callgrind, fdata):
-- line-table lookups, a function index by module and address, and the edge
-- counts of one function's CFG (known, inferred, or unknown).
-- Pure functions of the run table; the line-table reader is passed in
-- (lazyprobe.lines in a collector, a mock in tests).
local graph = {}

-- Functions of the run in a stable order: by module, then address.
function graph.sorted_functions(run)
  local list = {}
  for i, f in ipairs(run.functions) do list[i] = f end
  table.sort(list, function(a, b)
    if a.module ~= b.module then return a.module < b.module end
    return a.address < b.address
  end)
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

-- The function a call record goes to: the function of the caller's module at
-- the call's target address, else the one named c.callee in that module.
-- by_name: optional cache table, filled on first use.
function graph.callee(index, f, c, by_name)
  local m = index[f.module]
  if not m then return nil end
  if c.target and c.target ~= 0 and m[c.target] then return m[c.target] end
  if c.callee then
    local names = by_name and by_name[f.module]
    if not names then
      names = {}
      for _, g in pairs(m) do
        if names[g.name] == nil then names[g.name] = g else names[g.name] = false end
      end
      if by_name then by_name[f.module] = names end
    end
    return names[c.callee] or nil
  end
  return nil
end

-- The end of a function: address + size, or the end of its last block when
-- the size is unknown (0).
function graph.function_end(f)
  local hi = f.address + (f.size or 0)
  if f.blocks then
    for _, b in ipairs(f.blocks) do
      if b.address + b.size > hi then hi = b.address + b.size end
    end
  end
  if hi == f.address then hi = f.address + 1 end
  return hi
end

-- The line rows of a function ([address, end)), or nil without line info.
-- Rows come as columns: rows.address[i], rows.file[i], rows.line[i].
function graph.rows(lines, f)
  if not lines then return nil end
  local rows = lines(f.module, f.address, graph.function_end(f))
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

-- A function's blocks in address order (they come in layout order, which is
-- address order but for the entry's block first).
function graph.blocks_by_address(f)
  local blocks, sorted = {}, true
  for k, b in ipairs(f.blocks) do
    blocks[k] = b
    if k > 1 and b.address < blocks[k - 1].address then sorted = false end
  end
  if not sorted then table.sort(blocks, function(a, b) return a.address < b.address end) end
  return blocks
end

-- The edge counts of a function, one per edge (same indices as f.edges):
-- a number when known, "-" when the edge's block never ran, nil when unknown.
-- Known: "-" from a block that never ran, else the edge's own count (arcs),
-- else the count of the successor block when this edge is its only way in
-- (block 1 also has the function's entry as a way in, so never qualifies).
function graph.edge_counts(f)
  local out = {}
  local edges, blocks = f.edges, f.blocks
  if not edges then return out end
  local preds = {}
  for _, e in ipairs(edges) do
    if e.to and e.to > 0 then preds[e.to] = (preds[e.to] or 0) + 1 end
  end
  for i, e in ipairs(edges) do
    local from = blocks and blocks[e.from]
    if from and from.count == 0 then
      out[i] = "-"
    elseif e.count ~= nil then
      out[i] = e.count
    elseif blocks and e.to and e.to > 1 and preds[e.to] == 1 and blocks[e.to] then
      out[i] = blocks[e.to].count
    end
  end
  return out
end

-- Conditional branch points of a function: blocks with two or more edges of
-- kind taken, fall or table. Returns a list of { block = index, branch =
-- address of the transferring instruction, edges = { edge indices } } in
-- block order.
function graph.branch_points(f)
  local edges = f.edges
  if not edges then return {} end
  -- per block, its taken/table edges and its fall-throughs, each in edge order
  local taken, fall, branch = {}, {}, {}
  for i, e in ipairs(edges) do
    local kind, from = e.kind, e.from
    if kind == "fall" then
      local l = fall[from]
      if not l then l = {} fall[from] = l end
      l[#l + 1] = i
      if not branch[from] then branch[from] = e.branch end
    elseif kind == "taken" or kind == "table" then
      local l = taken[from]
      if not l then l = {} taken[from] = l end
      l[#l + 1] = i
      if not taken[from].branch then taken[from].branch = e.branch end
    end
  end
  local blocks = {}
  for b in pairs(taken) do blocks[#blocks + 1] = b end
  for b in pairs(fall) do
    if not taken[b] then blocks[#blocks + 1] = b end
  end
  table.sort(blocks)
  local list = {}
  for _, b in ipairs(blocks) do
    local t, fl = taken[b], fall[b]
    local ids = {}
    if t then
      for k = 1, #t do ids[k] = t[k] end
    end
    if fl then
      for k = 1, #fl do ids[#ids + 1] = fl[k] end
    end
    if #ids >= 2 then
      list[#list + 1] = { block = b, branch = t and t.branch or branch[b], edges = ids }
    end
  end
  return list
end

return graph
