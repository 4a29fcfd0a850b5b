-- check_source.lua — test collector (no probes of its own: `lazyprobe report
-- -c check_source.lua DIR` on a run's counters): for every function of the
-- run, lazyprobe.line_counts(f) and lazyprobe.branch_counts(f) (C) must equal
-- the plain-Lua statement of their rules in source_ref.lua,
-- lazyprobe.format_rows (C) must write their columns as string.format does,
-- row by row, and lazyprobe.graph_columns(f) must hold what f.blocks, f.edges
-- and f.calls hold, both while the graph is only in C and once it is tables.
-- Prints one line "check_source: F functions, L lines, B branch ways agree,
-- R rows formatted alike, E graph elements alike" and fails (a Lua error,
-- exit status 125) at the first difference, naming the function.
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "."
local ref = dofile(here .. "/source_ref.lua")

local function same(what, f, a, b)
  if (a == nil) ~= (b == nil) then
    error(string.format("%s %s: C says %s, reference says %s", what, f.name, a and "a table" or "nil",
                        b and "a table" or "nil"), 0)
  end
  if not a then return 0 end
  for k, col in pairs(b) do
    if type(col) ~= "table" then
      if a[k] ~= col then error(string.format("%s %s: %s %s, reference %s", what, f.name, k, a[k], col), 0) end
    else
      if #a[k] ~= #col then
        error(string.format("%s %s: %d %s, reference %d", what, f.name, #a[k], k, #col), 0)
      end
      for i = 1, #col do
        if a[k][i] ~= col[i] then
          error(string.format("%s %s: %s[%d] = %s, reference %s", what, f.name, k, i, a[k][i], col[i]), 0)
        end
      end
    end
  end
  return #b.file
end

-- The formats the report writers use, and every directive with a string, a
-- negative and a float: format_rows and string.format row by row must agree.
local function same_format(f, lines, branches)
  local function check(fmt, first, ...)
    local a, b = lazyprobe.format_rows(fmt, first, ...), ref.format_rows(fmt, first, ...)
    if a ~= b then
      error(string.format("format_rows %q %s: C wrote\n%s\nreference\n%s", fmt, f.name, a, b), 0)
    end
    return #first
  end
  -- the writer's own digits and short copies: every digit count either side of
  -- its boundary, both signs, the extremes, and texts of 0 to 40 bytes
  local ints, texts = { 0, math.maxinteger, math.mininteger }, {}
  for p = 1, 18 do
    local ten = 10 ^ p // 1
    for _, v in ipairs({ ten - 1, ten, ten + 1 }) do ints[#ints + 1], ints[#ints + 2] = v, -v end
  end
  for i = 1, #ints do texts[i] = string.rep("x", (i - 1) % 41) end
  check("%d|%x|%s|%d\n", ints, ints, texts, ints)
  check("%s%s%d\n", texts, texts, ints)
  -- widths, right- and left-aligned, narrower and wider than the values (coverage-nolines.txt's row)
  check("%14d  %-10s %-32s %s %x|%3s|%-3d|%1d\n", ints, texts, texts, texts, ints, texts, ints, ints)
  if not lines then return 0 end
  local negative, float = {}, {}
  for i, c in ipairs(lines.count) do negative[i], float[i] = -c - i, c + 0.5 end
  local n = check("DA:%d,%d\n", lines.line, lines.count)
  check("%s:%x %%d%s|%s\n", lines.file, negative, lines.file, float)
  check("%d,%s\n", negative, negative)
  if branches then
    n = n + check("BRDA:%d,%d,%d,%s\n", branches.line, branches.point, branches.point, branches.taken)
  end
  for _, bad in ipairs({ { "%q", lines.line }, { "%-5q", lines.line }, { "%5", lines.line }, { "%d", lines.file },
                         { "%d %d", lines.line }, { "%d", float } }) do
    if pcall(lazyprobe.format_rows, table.unpack(bad)) and #bad[2] > 0 then
      error(string.format("format_rows %q %s: no error", bad[1], f.name), 0)
    end
  end
  return n
end

-- graph_columns A and B hold the same lists and columns; the elements compared.
local function same_columns(what, f, a, b)
  if (a == nil) ~= (b == nil) then
    error(string.format("%s %s: C says %s, reference says %s", what, f.name, a and "columns" or "nil",
                        b and "columns" or "nil"), 0)
  end
  local n = 0
  for list, cols in pairs(b or {}) do
    if not a[list] then error(string.format("%s %s: no %s", what, f.name, list), 0) end
    for field, col in pairs(cols) do
      local got = a[list][field]
      if not got or #got ~= #col then
        error(string.format("%s %s: %s.%s has %s elements, reference %d", what, f.name, list, field,
                            got and #got or "no", #col), 0)
      end
      for i = 1, #col do
        if got[i] ~= col[i] then
          error(string.format("%s %s: %s.%s[%d] = %s, reference %s", what, f.name, list, field, i,
                              tostring(got[i]), tostring(col[i])), 0)
        end
      end
      n = n + #col
    end
  end
  for list in pairs(a or {}) do
    if not b[list] then error(string.format("%s %s: %s the reference has not", what, f.name, list), 0) end
  end
  return n
end

-- pairs over each list of graph_columns A, before anything read a column (C
-- makes them when read), gives the fields of the reference B, no other.
local function same_fields(what, f, a, b)
  for list, cols in pairs(b or {}) do
    local seen, want = 0, 0
    for _ in pairs(cols) do want = want + 1 end
    for field in pairs(a[list] or {}) do
      if cols[field] == nil then
        error(string.format("%s %s: %s.%s the reference has not", what, f.name, list, field), 0)
      end
      seen = seen + 1
    end
    if seen ~= want then
      error(string.format("%s %s: pairs gives %d fields of %s, the reference %d", what, f.name, seen, list, want), 0)
    end
  end
end

-- Every file of FILES (C) and REF (the reference) alike: paths in the same
-- order, then each one's lines and branches columns.  Returns how many rows.
local function same_files(files, ref_files)
  local paths, ref_paths = files:paths(), ref_files:paths()
  local rows = 0
  local function columns(what, a, b)
    for c = 1, #b do
      if #a[c] ~= #b[c] then error(string.format("%s: %d rows, reference %d", what, #a[c], #b[c]), 0) end
      for i = 1, #b[c] do
        if a[c][i] ~= b[c][i] then
          error(string.format("%s: column %d row %d = %s, reference %s", what, c, i, a[c][i], b[c][i]), 0)
        end
      end
    end
    return #b[1]
  end
  columns("source_files paths", { paths }, { ref_paths })
  for _, path in ipairs(ref_paths) do
    rows = rows + columns("source_files lines " .. path, { files:lines(path) }, { ref_files:lines(path) })
    rows = rows + columns("source_files branches " .. path, { files:branches(path) }, { ref_files:branches(path) })
    for _, t in ipairs({ { "lines", "DA:%d,%d\n" }, { "branches", "BRDA:%d,%x,%d,%s;" } }) do
      local a = { files[t[1]](files, path, t[2]) }
      local b = { ref_files[t[1]](ref_files, path, t[2]) }
      if a[1] ~= b[1] or a[2] ~= b[2] or a[3] ~= b[3] then
        error(string.format("source_files %s %s with a format: %s rows, %s > 0, reference %s, %s%s", t[1], path,
                            a[2], a[3], b[2], b[3], a[1] ~= b[1] and " (texts differ)" or ""), 0)
      end
    end
  end
  return rows
end

return {
  name = "check_source",
  outputs = "one line: how many functions, lines and branch ways agree",
  probes = { entry = true },
  report = function(run)
    local nf, nl, nb, nr, ng = 0, 0, 0, 0, 0
    local files, ref_files = lazyprobe.source_files(), ref.source_files(lazyprobe.lines, lazyprobe.conditional_branches)
    for _, f in ipairs(run.functions) do
      if f.state ~= "native" then
        -- first from the graph in C (not read yet): the reference's reads
        -- make the tables, which the second calls below read
        local file, line = files:add(f)
        local columns = lazyprobe.graph_columns(f) -- its columns made when read, from C still
        local lines, branches = lazyprobe.line_counts(f), lazyprobe.branch_counts(f)
        local ref_file, ref_line = ref_files:add(f)
        if file ~= ref_file or (ref_file and line ~= ref_line) then
          error(string.format("source_files add %s: %s:%s, reference %s:%s", f.name, file, line, ref_file, ref_line), 0)
        end
        local ref_lines, ref_branches = ref.line_counts(lazyprobe.lines, f), ref.branch_counts(lazyprobe.lines, f, lazyprobe.conditional_branches)
        nl = nl + same("line_counts", f, lines, ref_lines)
        nb = nb + same("branch_counts", f, branches, ref_branches)
        same("line_counts from tables", f, lazyprobe.line_counts(f), ref_lines)
        same("branch_counts from tables", f, lazyprobe.branch_counts(f), ref_branches)
        nr = nr + same_format(f, lines, branches)
        local ref_columns = ref.graph_columns(f)
        same_fields("graph_columns", f, columns, ref_columns)
        ng = ng + same_columns("graph_columns", f, columns, ref_columns)
        same_columns("graph_columns from tables", f, lazyprobe.graph_columns(f), ref_columns)
        nf = nf + 1
      end
    end
    local ns = same_files(files, ref_files)
    lazyprobe.print(string.format("check_source: %d functions, %d lines, %d branch ways agree, %d rows formatted alike, "
                                  .. "%d graph elements alike, %d source file rows alike", nf, nl, nb, nr, ng, ns))
  end,
}
