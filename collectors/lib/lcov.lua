-- lcov.lua — the run's coverage as an lcov tracefile (the format of lcov 1.16
-- geninfo(1), "tracefile format": SF, FN/FNDA/FNF/FNH, BRDA/BRF/BRH,
-- DA/LF/LH, end_of_record), read by genhtml and `lcov --summary`.
--
-- lcov.tracefile(run, source) -> text, stats
--   source has line_counts(f), branch_counts(f) and format_rows (the
--   `lazyprobe` library; a mock in tests).
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
--  * Lines: source.line_counts(f), a line's count in one function (the
--    largest count of the blocks that hold one of its addresses; every row
--    at 0 for a function that never ran; the entry line alone for one that
--    ran without block data; docs/COLLECTORS.md); counts of one line in
--    several functions (inlined code) add up.
--  * Branches (BRDA): source.branch_counts(f), the branch points whose ways
--    out are all known, each way's taken count or "-" when its block never
--    ran (docs/COLLECTORS.md); branch 0.. are the taken/table edges in order,
--    the fall-through last. The BRDA block number is the branch point's
--    ordinal on its line within the file.
local graph = require("graph")

local lcov = {}
local format = string.format

local function file_entry(files, path)
  local e = files[path]
  if not e then
    -- brs[line]: its ways out, as rows of the columns seq, way, taken
    e = { fns = {}, names = {}, lines = {}, brs = {}, brseq = {}, brhit = {}, seq = {}, way = {}, taken = {}, nways = 0 }
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

-- The keys of LINES (line numbers) in increasing order, and how many.
-- Walking from the first line to the last is several times cheaper than
-- table.sort when the lines are dense, as a file's lines with code are.
local function sorted_lines(lines)
  local out, n, lo, hi = {}, 0, math.huge, 0
  for ln in pairs(lines) do
    n = n + 1
    out[n] = ln
    if ln < lo then lo = ln end
    if ln > hi then hi = ln end
  end
  if n > 0 and hi - lo < 8 * n then
    n = 0
    for ln = lo, hi do
      if lines[ln] then
        n = n + 1
        out[n] = ln
      end
    end
  else
    table.sort(out)
  end
  return out, n
end

function lcov.tracefile(run, source)
  local files = {}
  local stats = { functions = 0, functions_hit = 0, lines = 0, lines_hit = 0, branches = 0,
                  branches_hit = 0, records = 0, nolines = {}, native = {} }
  for _, f in ipairs(graph.sorted_functions(run)) do
    if f.state == "native" then
      stats.native[#stats.native + 1] = f
      goto continue
    end
    local lc = source.line_counts(f)
    if not lc then
      stats.nolines[#stats.nolines + 1] = f
      goto continue
    end
    do
      local fe = file_entry(files, lc.entry_file)
      fe.fns[#fe.fns + 1] = { line = lc.entry_line, name = unique_name(fe, f), count = f.count }
      -- counts of one line in several functions (inlined code) add up
      local lfile, lline, lcount = lc.file, lc.line, lc.count
      local e, el
      for k = 1, #lfile do
        if not e or lfile[k] ~= lfile[k - 1] then
          e = file_entry(files, lfile[k])
          el = e.lines
        end
        local line = lline[k]
        el[line] = (el[line] or 0) + lcount[k]
      end

      local br = source.branch_counts(f) -- no ways out without blocks and edges
      if br then
        local bfile, bline, bpoint, btaken = br.file, br.line, br.point, br.taken
        local k, n = 1, #bpoint
        while k <= n do
          local point, file, line = bpoint[k], bfile[k], bline[k]
          local be = file_entry(files, file)
          local seq = be.brseq[line] or 0
          be.brseq[line] = seq + 1
          local list = be.brs[line]
          if not list then list = {} be.brs[line] = list end
          local hit, way = be.brhit[line] or 0, 0
          local bseq, bway, btk, j = be.seq, be.way, be.taken, be.nways
          while k <= n and bpoint[k] == point do
            local taken = btaken[k]
            j = j + 1
            bseq[j], bway[j], btk[j] = seq, way, taken
            list[#list + 1] = j
            if taken ~= "-" and taken > 0 then hit = hit + 1 end
            way, k = way + 1, k + 1
          end
          be.nways = j
          be.brhit[line] = hit
        end
      end
    end
    ::continue::
  end

  -- write one record per source file, sorted by path
  local paths = {}
  for path in pairs(files) do paths[#paths + 1] = path end
  table.sort(paths)
  -- the rows are written by source.format_rows: a string per line made in
  -- Lua was most of the report's time on a large program
  local format_rows = source.format_rows
  local out = {}
  local nout = 0 -- a counter: `#out` is a search on every call
  local function emit(s)
    nout = nout + 1
    out[nout] = s
  end
  for _, path in ipairs(paths) do
    local e = files[path]
    local lns, nlns = sorted_lines(e.lines)
    if nlns > 0 then
      stats.records = stats.records + 1
      emit("TN:\nSF:" .. path .. "\n")
      table.sort(e.fns, function(a, b)
        if a.line ~= b.line then return a.line < b.line end
        return a.name < b.name
      end)
      local fline, fname, fcount, fnh = {}, {}, {}, 0
      for i, fn in ipairs(e.fns) do
        fline[i], fname[i], fcount[i] = fn.line, fn.name, fn.count
        if fn.count > 0 then fnh = fnh + 1 end
      end
      emit(format_rows("FN:%d,%s\n", fline, fname))
      emit(format_rows("FNDA:%d,%s\n", fcount, fname))
      emit(format("FNF:%d\nFNH:%d\n", #e.fns, fnh))
      stats.functions, stats.functions_hit = stats.functions + #e.fns, stats.functions_hit + fnh
      local bline, bseq, bway, btaken, brf, brh = {}, {}, {}, {}, 0, 0
      local seq, way, taken = e.seq, e.way, e.taken
      for _, ln in ipairs(lns) do
        local list = e.brs[ln]
        if list then
          for _, j in ipairs(list) do
            brf = brf + 1
            bline[brf], bseq[brf], bway[brf], btaken[brf] = ln, seq[j], way[j], taken[j]
          end
          brh = brh + e.brhit[ln]
        end
      end
      if brf > 0 then
        emit(format_rows("BRDA:%d,%d,%d,%s\n", bline, bseq, bway, btaken))
        emit(format("BRF:%d\nBRH:%d\n", brf, brh))
      end
      stats.branches, stats.branches_hit = stats.branches + brf, stats.branches_hit + brh
      local counts, lh = {}, 0
      local el = e.lines
      for i = 1, nlns do
        local n = el[lns[i]]
        counts[i] = n
        if n > 0 then lh = lh + 1 end
      end
      emit(format_rows("DA:%d,%d\n", lns, counts))
      emit(format("LF:%d\nLH:%d\nend_of_record\n", nlns, lh))
      stats.lines, stats.lines_hit = stats.lines + nlns, stats.lines_hit + lh
    end
  end
  return table.concat(out), stats
end

-- The functions that have no line info, one per line: count, state, name,
-- module, address. marked: the counts are 0/1 (run.probes.entry == "cover").
function lcov.nolines_summary(stats, marked)
  local out = { "# lazyprobe coverage: functions without DWARF line info (not in coverage.info)",
                string.format("# %12s  %-10s %-32s %s", marked and "ran (0/1)" or "entries", "state", "function",
                              "module address") }
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
