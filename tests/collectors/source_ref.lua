-- source_ref.lua — lazyprobe.line_counts(f), lazyprobe.branch_counts(f)
-- (lua/lp_source.c), lazyprobe.format_rows (lua/lp_format.c) and
-- lazyprobe.graph_columns (lua/lp_columns.c) stated again in plain Lua, from the rules of
-- docs/COLLECTORS.md, as the oracle the C versions are checked against:
-- the mock library of run.lua uses these, and check_source.lua compares both
-- on real runs. Written for clarity, not speed.
--
--   ref.line_counts(lines, f), ref.branch_counts(lines, f, conditional_branches): lines is the
--   line-table reader (lazyprobe.lines, or run.lua's mock), conditional_branches
--   what lazyprobe.conditional_branches gives (or run.lua's mock); same results as
--   the C functions: columns sorted by file then line (line_counts), ways out
--   in branch-point order (branch_counts), or nil, message.
--   ref.source_files(lines, conditional_branches): what lazyprobe.source_files() is, built on the
--   two above: add(f), paths(), lines(path), branches(path).
--   ref.format_rows(format, column, ...): string.format row by row.
--   ref.graph_columns(f): f.blocks, f.edges, f.calls turned into columns.
local ref = {}

local function function_end(f)
  local hi = f.address + (f.size or 0)
  for _, b in ipairs(f.blocks or {}) do
    if b.address + b.size > hi then hi = b.address + b.size end
  end
  if hi == f.address then hi = f.address + 1 end
  return hi
end

-- The rows of f's range as a list of { address, file, line }.
local function rows_of(lines, f)
  local cols, err = lines(f.module, f.address, function_end(f))
  if not cols then return nil, err end
  local rows = {}
  for i = 1, #cols.address do
    rows[i] = { address = cols.address[i], file = cols.file[i], line = cols.line[i] }
  end
  if #rows == 0 then return nil, "no line rows" end
  return rows
end

-- The row at or below addr: the last whose address is <= addr.
local function row_at(rows, addr)
  local at
  for i, r in ipairs(rows) do
    if r.address <= addr then at = i end
  end
  return at
end

-- Does row i of rows hold an address of [lo, hi)? A row covers up to the
-- next row (the last one: to the end of the range).
local function row_in(rows, i, lo, hi)
  local start = rows[i].address
  local stop = rows[i + 1] and rows[i + 1].address or math.huge
  return start < hi and stop > lo
end

function ref.line_counts(lines, f)
  local rows, err = rows_of(lines, f)
  if not rows then return nil, err end
  local entry = row_at(rows, f.address)
  if not (entry and rows[entry].line > 0) then
    entry = nil
    for i, r in ipairs(rows) do
      if r.line > 0 then entry = i break end
    end
  end
  if not entry then return nil, "no line row with a line number" end
  local counts = {} -- "file\0line" -> { file, line, count }
  local function put(r, count)
    if r.line == 0 then return end
    local key = r.file .. "\0" .. r.line
    local c = counts[key]
    if not c then
      counts[key] = { file = r.file, line = r.line, count = count }
    elseif count > c.count then
      c.count = count
    end
  end
  if f.blocks then
    for _, b in ipairs(f.blocks) do
      if b.count ~= nil then
        for i = 1, #rows do
          if row_in(rows, i, b.address, b.address + b.size) then put(rows[i], b.count) end
        end
      end
    end
  elseif f.count == 0 then
    for _, r in ipairs(rows) do put(r, 0) end
  end
  local er = rows[entry]
  if not counts[er.file .. "\0" .. er.line] then put(er, f.count > 0 and f.count or 0) end
  local list = {}
  for _, c in pairs(counts) do list[#list + 1] = c end
  table.sort(list, function(a, b)
    if a.file ~= b.file then return a.file < b.file end
    return a.line < b.line
  end)
  local out = { file = {}, line = {}, count = {}, entry_file = er.file, entry_line = er.line }
  for i, c in ipairs(list) do
    out.file[i], out.line[i], out.count[i] = c.file, c.line, c.count
  end
  return out
end

-- How often edge e (index i) was taken: "-" when its block never ran, its own
-- count, else its target's count when it is the target's only way in (not
-- block 1: the entry comes in too); nil when not known.
local function taken(f, e)
  local from = f.blocks[e.from]
  if from and from.count == 0 then return "-" end
  if e.count ~= nil then return e.count end
  if e.to and e.to > 1 and f.blocks[e.to] then
    local ways_in = 0
    for _, o in ipairs(f.edges) do
      if o.to == e.to then ways_in = ways_in + 1 end
    end
    if ways_in == 1 then return f.blocks[e.to].count end
  end
  return nil
end

function ref.branch_counts(lines, f, conditional_branches)
  local rows, err = rows_of(lines, f)
  if not rows then return nil, err end
  local out = { file = {}, line = {}, point = {}, taken = {} }
  local ran = f.count ~= 0
  for _, b in ipairs(f.blocks or {}) do
    if b.count and b.count > 0 then ran = true end
  end
  if not ran then -- its conditional branches, read from its code, two ways "-" each
    local point = 0
    for _, at in ipairs(conditional_branches and conditional_branches(f) or {}) do
      local r = row_at(rows, at)
      if r and rows[r].line > 0 then
        point = point + 1
        for _ = 1, 2 do
          local n = #out.file + 1
          out.file[n], out.line[n], out.point[n], out.taken[n] = rows[r].file, rows[r].line, point, "-"
        end
      end
    end
    return out
  end
  if not (f.blocks and f.edges) then return out end
  local point = 0
  for b = 1, #f.blocks do
    local ways = {}
    for _, e in ipairs(f.edges) do -- taken and table edges in edge order
      if e.from == b and (e.kind == "taken" or e.kind == "table") then ways[#ways + 1] = e end
    end
    for _, e in ipairs(f.edges) do -- then the fall-throughs
      if e.from == b and e.kind == "fall" then ways[#ways + 1] = e end
    end
    local known = #ways >= 2
    for _, e in ipairs(ways) do
      if taken(f, e) == nil then known = false end
    end
    local r = known and row_at(rows, ways[1].branch)
    if r and rows[r].line > 0 then
      point = point + 1
      for _, e in ipairs(ways) do
        local n = #out.file + 1
        out.file[n], out.line[n], out.point[n], out.taken[n] = rows[r].file, rows[r].line, point, taken(f, e)
      end
    end
  end
  return out
end

-- The run's counts gathered per source file: files:add(f) adds f's
-- line_counts and branch_counts (returns entry_file, entry_line, or nil,
-- message); files:paths() the paths in the order they came;
-- files:lines(path) the columns line, count, lines increasing, counts of a
-- line added over functions; files:branches(path) the columns line, block,
-- way, taken of the ways out on lines that lines(path) has, by line, then in
-- the order they came, block numbering a line's points from 0 and way a
-- point's ways from 0; with a format (both), the rows formatted by
-- format_rows, how many there are and how many counts are > 0.
function ref.source_files(lines, conditional_branches)
  local files, order = {}, {}
  local function file(path)
    if not files[path] then
      files[path] = { count = {}, ways = {}, points = {} }
      order[#order + 1] = path
    end
    return files[path]
  end
  local t = {}
  function t:add(f)
    local lc, err = ref.line_counts(lines, f)
    if not lc then return nil, err end
    for i = 1, #lc.file do
      local e = file(lc.file[i])
      e.count[lc.line[i]] = (e.count[lc.line[i]] or 0) + lc.count[i]
    end
    local br = ref.branch_counts(lines, f, conditional_branches)
    local last_point, seq, way
    for i = 1, #br.file do
      local e = file(br.file[i])
      local line = br.line[i]
      if br.point[i] ~= last_point then -- a new point: the next block number of its line
        last_point = br.point[i]
        seq = e.points[line] or 0
        e.points[line] = seq + 1
        way = 0
      end
      e.ways[line] = e.ways[line] or {}
      table.insert(e.ways[line], { block = seq, way = way, taken = br.taken[i] })
      way = way + 1
    end
    return lc.entry_file, lc.entry_line
  end
  function t:paths() return { table.unpack(order) } end
  local function sorted_lines(e)
    local ls = {}
    for line in pairs(e.count) do ls[#ls + 1] = line end
    table.sort(ls)
    return ls
  end
  function t:lines(path, format)
    local line, count = {}, {}
    local e = files[path]
    if e then
      for i, l in ipairs(sorted_lines(e)) do line[i], count[i] = l, e.count[l] end
    end
    if not format then return line, count end
    local hit = 0
    for i = 1, #count do
      if count[i] > 0 then hit = hit + 1 end
    end
    return #line > 0 and ref.format_rows(format, line, count) or "", #line, hit
  end
  function t:branches(path, format)
    local line, block, way, taken = {}, {}, {}, {}
    local e = files[path]
    if e then
      for _, l in ipairs(sorted_lines(e)) do
        for _, w in ipairs(e.ways[l] or {}) do
          local n = #line + 1
          line[n], block[n], way[n], taken[n] = l, w.block, w.way, w.taken
        end
      end
    end
    if not format then return line, block, way, taken end
    local hit = 0
    for i = 1, #taken do
      if taken[i] ~= "-" and taken[i] > 0 then hit = hit + 1 end
    end
    return #line > 0 and ref.format_rows(format, line, block, way, taken) or "", #line, hit
  end
  return t
end

-- string.format(format, c1[i], c2[i], ...) for i = 1 .. #c1, concatenated;
-- only the directives %d, %x, %s, with or without a width (%8d, %-8s), and %%
-- (an error names any other).
function ref.format_rows(format, ...)
  local cols = { ... }
  local n = 0
  for d in format:gsub("%%%%", ""):gmatch("%%(%-?%d*.?)") do
    assert(d:match("^%-?%d*[dxs]$"), "format_rows: not a directive here: %" .. d)
    n = n + 1
  end
  assert(n > 0 and #cols >= n, "format_rows: a directive per column")
  local out = {}
  for i = 1, #cols[1] do
    local row = {}
    for k = 1, n do
      row[k] = cols[k][i]
      assert(row[k] ~= nil, "format_rows: column " .. k .. " has no row " .. i)
    end
    out[i] = string.format(format, table.unpack(row, 1, n))
  end
  return table.concat(out)
end

local graph_fields = {
  blocks = { "address", "size", "instructions", "count", "side_entries", "escapes" },
  edges = { "from", "to", "kind", "branch", "target", "count", "measured" },
  calls = { "site", "target", "callee", "count" },
}

-- { blocks =, edges =, calls = }: each list of f as one array per field (a
-- nil field false), calls only when f.calls exists; nil without f.blocks.
function ref.graph_columns(f)
  if not f.blocks then return nil end
  local out = {}
  for list, fields in pairs(graph_fields) do
    if f[list] then
      local cols = {}
      for _, name in ipairs(fields) do
        local col = {}
        for i, element in ipairs(f[list]) do
          local v = element[name]
          if v == nil then v = false end
          col[i] = v
        end
        cols[name] = col
      end
      out[list] = cols
    end
  end
  return out
end

return ref
