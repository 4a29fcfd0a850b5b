-- lcov.lua — the run's coverage as an lcov tracefile (the format of lcov 1.16
-- geninfo(1), "tracefile format": SF, FN/FNDA/FNF/FNH, BRDA/BRF/BRH,
-- DA/LF/LH, end_of_record), read by genhtml and `lcov --summary`.
--
-- lcov.tracefile(run, lines) -> text, stats
--   lines(module, lo, hi) is the line-table reader (lazyprobe.lines).
--   stats = { functions, functions_hit, lines, lines_hit, branches,
--             branches_hit, records, nolines = { functions without line
--             info }, native = { functions left uninstrumented } }
--
-- Rules:
--  * A function's record is the source file of the line row at its entry;
--    FN gives that row's line. Functions whose module has no line info (or
--    whose range has no row with a line) cannot be placed in a source file:
--    genhtml and lcov drop a file that has no DA line, so they are left out
--    of the tracefile and returned in stats.nolines (the collector writes
--    them to a separate summary). Functions left native are left out too
--    (their counts mean nothing).
--  * Lines: every row inside a block of the function; a line's count in one
--    function is the max of the counts of the blocks that hold one of its
--    addresses; counts of one line in several functions (inlined code) add
--    up. A function that never ran has no blocks: every row of its range
--    gets 0. A function that ran without block data gets its entry line only.
--    Rows with line 0 (no source line) are skipped.
--  * Branches (BRDA): every block with two or more out-edges of kind taken,
--    fall or table, at the line of its branch instruction; branch 0.. are the
--    taken/table edges in order, the fall-through last. Taken counts are
--    graph.edge_counts: "-" when the block never ran, the edge count when
--    known, the successor's count when the edge is its only way in; a branch
--    point with any edge still unknown is left out whole. The BRDA block
--    number is the branch point's ordinal on its line within the file.
local graph = require("graph")

local lcov = {}

local function file_entry(files, path)
  local e = files[path]
  if not e then
    e = { fns = {}, names = {}, lines = {}, brs = {}, brseq = {}, brhit = {} }
    files[path] = e
  end
  return e
end

-- A name unique within the source file: FN/FNDA are keyed by name, and
-- genhtml's regexes stop a name at a comma.
local function unique_name(entry, f)
  local name = f.name:gsub("[,\n\r]", "_")
  if entry.names[name] then name = name .. "@" .. f.module:match("[^/]*$") end
  local base, n = name, 1
  while entry.names[name] do
    n = n + 1
    name = base .. "#" .. n
  end
  entry.names[name] = true
  return name
end

function lcov.tracefile(run, lines)
  local files = {}
  local stats = { functions = 0, functions_hit = 0, lines = 0, lines_hit = 0, branches = 0,
                  branches_hit = 0, records = 0, nolines = {}, native = {} }
  for _, f in ipairs(graph.sorted_functions(run)) do
    if f.state == "native" then
      stats.native[#stats.native + 1] = f
      goto continue
    end
    local rows = graph.rows(lines, f)
    local entry = rows and graph.entry_row(rows, f)
    if not entry then
      stats.nolines[#stats.nolines + 1] = f
      goto continue
    end
    do
      local fe = file_entry(files, entry.file)
      fe.fns[#fe.fns + 1] = { line = entry.line, name = unique_name(fe, f), count = f.count }

      -- this function's line counts, by file then line: the max over its blocks
      local raddr, rfile, rline = rows.address, rows.file, rows.line
      local mine = {}
      local function put(file, line, count)
        if line <= 0 then return end
        local lines_of = mine[file]
        if not lines_of then
          lines_of = {}
          mine[file] = lines_of
        end
        local was = lines_of[line]
        if was == nil or count > was then lines_of[line] = count end
      end
      local n = #raddr
      if f.blocks then
        -- blocks by address, rows by address: one walk finds the rows that
        -- cover each block's [address, address + size)
        local i = 1
        for _, b in ipairs(graph.blocks_by_address(f)) do
          local lo, count = b.address, b.count
          local hi = lo + b.size
          while i < n and raddr[i + 1] <= lo do i = i + 1 end
          local j = i
          while j <= n and raddr[j] < hi do
            if raddr[j] >= lo or j == n or raddr[j + 1] > lo then put(rfile[j], rline[j], count) end
            j = j + 1
          end
        end
      elseif f.count == 0 then
        for j = 1, n do put(rfile[j], rline[j], 0) end
      end
      local at_entry = mine[entry.file] and mine[entry.file][entry.line]
      put(entry.file, entry.line, f.count > 0 and (at_entry or f.count) or 0)
      for file, lines_of in pairs(mine) do
        local e = file_entry(files, file)
        local el = e.lines
        for line, count in pairs(lines_of) do el[line] = (el[line] or 0) + count end
      end

      -- branch points
      if f.blocks and f.edges then
        local counts = graph.edge_counts(f)
        for _, p in ipairs(graph.branch_points(f)) do
          local known = true
          for _, k in ipairs(p.edges) do
            if counts[k] == nil then known = false end
          end
          local i = known and graph.row_at(rows, p.branch)
          local line = i and rline[i]
          if line and line > 0 then
            local e = file_entry(files, rfile[i])
            local seq = e.brseq[line] or 0
            e.brseq[line] = seq + 1
            local list = e.brs[line]
            if not list then list = {} e.brs[line] = list end
            local hit = e.brhit[line] or 0
            for k, ei in ipairs(p.edges) do
              local taken = counts[ei]
              list[#list + 1] = string.format("BRDA:%d,%d,%d,%s", line, seq, k - 1, taken)
              if taken ~= "-" and taken > 0 then hit = hit + 1 end
            end
            e.brhit[line] = hit
          end
        end
      end
    end
    ::continue::
  end

  -- write one record per source file, sorted by path
  local paths = {}
  for path in pairs(files) do paths[#paths + 1] = path end
  table.sort(paths)
  local out = {}
  local function emit(s) out[#out + 1] = s end
  for _, path in ipairs(paths) do
    local e = files[path]
    local lns = {}
    for ln in pairs(e.lines) do lns[#lns + 1] = ln end
    if #lns > 0 then
      table.sort(lns)
      stats.records = stats.records + 1
      emit("TN:")
      emit("SF:" .. path)
      table.sort(e.fns, function(a, b)
        if a.line ~= b.line then return a.line < b.line end
        return a.name < b.name
      end)
      local fnh = 0
      for _, fn in ipairs(e.fns) do emit(string.format("FN:%d,%s", fn.line, fn.name)) end
      for _, fn in ipairs(e.fns) do
        emit(string.format("FNDA:%d,%s", fn.count, fn.name))
        if fn.count > 0 then fnh = fnh + 1 end
      end
      emit("FNF:" .. #e.fns)
      emit("FNH:" .. fnh)
      stats.functions, stats.functions_hit = stats.functions + #e.fns, stats.functions_hit + fnh
      local brf, brh = 0, 0
      for _, ln in ipairs(lns) do
        local list = e.brs[ln]
        if list then
          for _, s in ipairs(list) do emit(s) end
          brf, brh = brf + #list, brh + e.brhit[ln]
        end
      end
      if brf > 0 then
        emit("BRF:" .. brf)
        emit("BRH:" .. brh)
      end
      stats.branches, stats.branches_hit = stats.branches + brf, stats.branches_hit + brh
      local lh = 0
      for _, ln in ipairs(lns) do
        emit(string.format("DA:%d,%d", ln, e.lines[ln]))
        if e.lines[ln] > 0 then lh = lh + 1 end
      end
      emit("LF:" .. #lns)
      emit("LH:" .. lh)
      stats.lines, stats.lines_hit = stats.lines + #lns, stats.lines_hit + lh
      emit("end_of_record")
    end
  end
  return #out > 0 and table.concat(out, "\n") .. "\n" or "", stats
end

-- The functions that have no line info, one per line: count, state, name,
-- module, address.
function lcov.nolines_summary(stats)
  local out = { "# lazyprobe coverage: functions without DWARF line info (not in coverage.info)",
                string.format("# %12s  %-10s %-32s %s", "entries", "state", "function", "module address") }
  for _, f in ipairs(stats.nolines) do
    out[#out + 1] = string.format("%14d  %-10s %-32s %s %s", f.count, f.state, f.name, f.module,
                                  f.address_hex)
  end
  return table.concat(out, "\n") .. "\n"
end

local function pct(a, b)
  if b == 0 then return "-" end
  return string.format("%.1f%%", 100 * a / b)
end

-- Summary lines for lazyprobe.print.
function lcov.summary_lines(stats)
  local nl_hit = 0
  for _, f in ipairs(stats.nolines) do
    if f.count > 0 then nl_hit = nl_hit + 1 end
  end
  local fns, fhit = stats.functions + #stats.nolines, stats.functions_hit + nl_hit
  local out = {
    string.format("coverage: functions %d/%d ran (%s), lines %d/%d (%s), branches %d/%d taken (%s)",
                  fhit, fns, pct(fhit, fns), stats.lines_hit, stats.lines, pct(stats.lines_hit, stats.lines),
                  stats.branches_hit, stats.branches, pct(stats.branches_hit, stats.branches)),
  }
  if #stats.nolines > 0 then
    out[#out + 1] = string.format("coverage: %d functions (%d ran) have no line info: listed in coverage-nolines.txt, not in coverage.info",
                                  #stats.nolines, nl_hit)
  end
  for _, f in ipairs(stats.native) do
    out[#out + 1] = string.format("coverage: not instrumented: %s: %s", f.name, f.note)
  end
  return out
end

return lcov
