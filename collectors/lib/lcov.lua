-- lcov.lua — the run's coverage as an lcov tracefile (the format of lcov 1.16
-- geninfo(1), "tracefile format": SF, FN/FNDA/FNF/FNH, BRDA/BRF/BRH,
-- DA/LF/LH, end_of_record), read by genhtml and `lcov --summary`.
--
-- lcov.tracefile(run, source) -> pieces, stats
--   pieces: the tracefile's text as an array of strings, in order (what
--   lazyprobe.write takes as it is: sqlite's ~1 MB is never joined).
--   source has source_files() (whose files:lines and files:branches write
--   their rows given a format), format_rows and graph_columns (the
--   `lazyprobe` library; a mock in tests).
--   stats = { functions, functions_hit, lines, lines_hit, branches,
--             branches_hit, records, nolines = { functions without line
--             info }, runs = { [f] = how often such a function ran },
--             native = { functions left uninstrumented } }
--
--  * FNDA is a function's entries; a function entered only past its start
--    (gcc's NAME.cold part, jumped into by its other part) has none of its
--    own and gets the runs of its most run block (before session 26: 0,
--    though its lines ran).
--
-- Rules:
--  * A function's record is the source file of the line row at its entry;
--    FN gives that row's line. Functions whose module has no line info (or
--    whose range has no row with a line) cannot be placed in a source file:
--    genhtml and lcov drop a file that has no DA line, so they are left out
--    of the tracefile and returned in stats.nolines (the collector writes
--    them to a separate summary). Functions left native are left out too
--    (their counts mean nothing).
--  * Lines and branches: source.source_files() gathers each function's
--    lazyprobe.line_counts (a line's count in one function: the largest
--    count of the blocks that hold one of its addresses; every row at 0 for
--    a function that never ran; the entry line alone for one that ran
--    without block data) and lazyprobe.branch_counts (the branch points
--    whose ways out are all known, each way's taken count or "-" when its
--    block never ran) by source file (docs/COLLECTORS.md); counts of one
--    line in several functions (inlined code) add up. BRDA: branch 0.. are
--    the taken/table edges in order, the fall-through last; the block
--    number is the branch point's ordinal on its line within the file.
local graph = require("graph")

local lcov = {}
local format = string.format

local function file_entry(files, path)
  local e = files[path]
  if not e then
    e = { fns = {}, names = {} }
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

-- How often F ran: its entries, or, for one entered only past its start
-- (gcc's NAME.cold part, which its other part jumps into), which counts no
-- entry of its own, the runs of its most run block.
local function runs_of(f, source)
  if f.count > 0 or (f.state ~= "relocated" and f.state ~= "trapped") then return f.count end
  local g = source.graph_columns(f)
  local most = 0
  for _, c in ipairs(g and g.blocks.count or {}) do
    if c and c > most then most = c end
  end
  return most
end

function lcov.tracefile(run, source)
  local sources = source.source_files()
  local files = {} -- the functions of each source file
  local stats = { functions = 0, functions_hit = 0, lines = 0, lines_hit = 0, branches = 0,
                  branches_hit = 0, records = 0, nolines = {}, native = {}, runs = {} }
  local has_lines = {} -- by module, asked once: none of gcc's cc1's 45 000 functions has lines
  for _, f in ipairs(graph.sorted_functions(run)) do
    if f.state == "native" then
      stats.native[#stats.native + 1] = f
    else
      if has_lines[f.module] == nil then has_lines[f.module] = source.lines(f.module, 0, 0) ~= nil end
      local entry_file, entry_line
      if has_lines[f.module] then entry_file, entry_line = sources:add(f) end
      local runs = runs_of(f, source)
      if entry_file then
        local fe = file_entry(files, entry_file)
        fe.fns[#fe.fns + 1] = { line = entry_line, name = unique_name(fe, f), count = runs }
      else
        stats.nolines[#stats.nolines + 1] = f
        stats.runs[f] = runs
      end
    end
  end

  -- write one record per source file, sorted by path
  local paths = sources:paths()
  table.sort(paths)
  -- the rows are written in C (source.format_rows, and files:lines and
  -- files:branches straight from their counts): a string per line made in
  -- Lua was most of the report's time on a large program
  local format_rows = source.format_rows
  local out = {}
  local nout = 0 -- a counter: `#out` is a search on every call
  local function emit(s)
    nout = nout + 1
    out[nout] = s
  end
  for _, path in ipairs(paths) do
    local da, nlns, lh = sources:lines(path, "DA:%d,%d\n")
    if nlns > 0 then
      stats.records = stats.records + 1
      emit("TN:\nSF:" .. path .. "\n")
      local fns = file_entry(files, path).fns
      table.sort(fns, function(a, b)
        if a.line ~= b.line then return a.line < b.line end
        return a.name < b.name
      end)
      local fline, fname, fcount, fnh = {}, {}, {}, 0
      for i, fn in ipairs(fns) do
        fline[i], fname[i], fcount[i] = fn.line, fn.name, fn.count
        if fn.count > 0 then fnh = fnh + 1 end
      end
      emit(format_rows("FN:%d,%s\n", fline, fname))
      emit(format_rows("FNDA:%d,%s\n", fcount, fname))
      emit(format("FNF:%d\nFNH:%d\n", #fns, fnh))
      stats.functions, stats.functions_hit = stats.functions + #fns, stats.functions_hit + fnh
      local brda, brf, brh = sources:branches(path, "BRDA:%d,%d,%d,%s\n")
      if brf > 0 then
        emit(brda)
        emit(format("BRF:%d\nBRH:%d\n", brf, brh))
      end
      stats.branches, stats.branches_hit = stats.branches + brf, stats.branches_hit + brh
      emit(da)
      emit(format("LF:%d\nLH:%d\nend_of_record\n", nlns, lh))
      stats.lines, stats.lines_hit = stats.lines + nlns, stats.lines_hit + lh
    end
  end
  return out, stats
end

local ROWS_A_PIECE = 4096

-- The functions that have no line info, one per line: count, state, name,
-- module, address, as pieces for lazyprobe.write: gcc -c's 5 MB neither
-- joined nor made at once (format_rows' buffer of them all and the string
-- it is copied into were a quarter of its report's memory). marked: the
-- counts are 0/1 (run.probes.entry == "cover").
function lcov.nolines_summary(stats, marked)
  local head = { "# lazyprobe coverage: functions without DWARF line info (not in coverage.info)",
                 string.format("# %12s  %-10s %-32s %s", marked and "ran (0/1)" or "entries", "state", "function",
                               "module address"), "" }
  -- as columns, each ROWS_A_PIECE rows written at once: gcc's cc1 has 45 000
  -- (the address as an integer, in hex by format_rows: f.address_hex made a
  -- string of each)
  local pieces = { table.concat(head, "\n") }
  local count, state, name, module, address, n = {}, {}, {}, {}, {}, 0
  local function close_piece()
    if n > 0 then
      pieces[#pieces + 1] = lazyprobe.format_rows("%14d  %-10s %-32s %s 0x%x\n", count, state, name, module, address)
    end
    count, state, name, module, address, n = {}, {}, {}, {}, {}, 0
  end
  for _, f in ipairs(stats.nolines) do
    n = n + 1
    count[n], state[n], name[n], module[n], address[n] = stats.runs[f] or f.count, f.state, f.name, f.module, f.address
    if n == ROWS_A_PIECE then close_piece() end
  end
  close_piece()
  return pieces
end

local function pct(a, b)
  if b == 0 then return "-" end
  return string.format("%.1f%%", 100 * a / b)
end

-- Summary lines for lazyprobe.print.
function lcov.summary_lines(stats)
  local nl_hit = 0
  for _, f in ipairs(stats.nolines) do
    if (stats.runs[f] or f.count) > 0 then nl_hit = nl_hit + 1 end
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
